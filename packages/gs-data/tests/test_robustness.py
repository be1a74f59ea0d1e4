"""Missing raw files offline, the file that is actually bad, the umask of written files
(issue 19)."""

from __future__ import annotations

import os
import re
import shutil
import stat
import urllib.error

import numpy as np
import pytest

import gs_data
from gs_data import _io
from gs_data._io import CorruptRawFileError, MissingRawFileError, atomic_write


def test_offline_missing_raw_file_names_dataset_path_and_url(tmp_path, monkeypatch):
    def offline(*args, **kwargs):
        raise urllib.error.URLError(OSError(-3, "Temporary failure in name resolution"))

    monkeypatch.setattr(_io.urllib.request, "urlopen", offline)
    root = tmp_path / "root"
    with pytest.raises(MissingRawFileError) as err:
        gs_data.load("planetoid-cora", root=root)
    msg = str(err.value)
    spec = gs_data.dataset_info("planetoid-cora")
    first = spec.raw_files[0]
    assert "'planetoid-cora'" in msg
    assert str(root / first.relpath) in msg
    assert first.url and first.url in msg
    assert "offline" in msg and "Temporary failure in name resolution" in msg
    assert isinstance(err.value, FileNotFoundError)  # old `except FileNotFoundError` still catches it
    assert not [p for p in root.rglob("*") if p.is_file()], "nothing half-written is left"


@pytest.mark.parametrize("cut", ["half", "lines"])
def test_truncated_planetoid_test_index_is_reported_against_itself(fixtures_root, tmp_path, cut):
    root = tmp_path / "root"
    shutil.copytree(fixtures_root / "planetoid", root / "planetoid")
    raw = root / "planetoid" / "PubMed" / "raw"
    index = raw / "ind.pubmed.test.index"
    text = index.read_text()
    index.write_text(text[: len(text) // 2] if cut == "half" else "\n".join(text.split()[:-1]) + "\n")
    with pytest.raises(CorruptRawFileError) as err:
        gs_data.load("planetoid-pubmed", root=root, download=False, use_cache=False)
    msg = str(err.value)
    assert msg.startswith(str(index)), msg
    assert "ind.pubmed.graph" not in msg


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_atomic_write_follows_the_umask(tmp_path, mask):
    old = os.umask(mask)
    try:
        with atomic_write(tmp_path / "a.bin") as fh:
            fh.write(b"x")
        from gs_data.track.store import atomic_write_text

        atomic_write_text(tmp_path / "b.txt", "y")
    finally:
        os.umask(old)
    for name in ("a.bin", "b.txt"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o666 & ~mask


def test_atomic_path_renames_on_success_and_leaves_nothing_on_failure(tmp_path):
    """``atomic_path`` (for writers that want a file name, e.g. PYTHIA's tables) is what
    ``atomic_write`` is built on: the old file stays until the new one is complete."""
    from gs_data._io import atomic_path

    target = tmp_path / "sub" / "t.dat"
    with atomic_path(target) as tmp:
        assert tmp.parent == target.parent and not tmp.exists()
        tmp.write_text("first")
    assert target.read_text() == "first"
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("writer died")
    assert target.read_text() == "first"
    assert sorted(p.name for p in target.parent.iterdir()) == ["t.dat"]
    with atomic_write(target, "w", encoding="utf-8") as fh:
        fh.write("zweite Fassung")
    assert target.read_text(encoding="utf-8") == "zweite Fassung"


def test_build_once_builds_a_cache_entry_once_for_concurrent_callers(tmp_path):
    """Issue 34: processed datasets and split caches go through ``build_once``: callers that
    miss the same entry together build it once (flock on ``<entry>.lock``; two threads hold
    two open file descriptions, so they exclude each other as two processes do)."""
    import json
    import threading
    import time

    from gs_data._io import atomic_write, build_once

    path = tmp_path / "entry.json"
    built = []

    def build():
        built.append(1)
        time.sleep(0.3)
        return {"value": 42}

    def save(p, v):
        with atomic_write(p, "w", encoding="utf-8") as fh:
            json.dump(v, fh)

    def load(p):
        return json.loads(p.read_text(encoding="utf-8"))

    got = []
    threads = [threading.Thread(target=lambda: got.append(build_once(path, load, build, save)))
               for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert got == [{"value": 42}] * 3 and len(built) == 1
    # an unreadable entry is rebuilt; a failed write is only a warning
    path.write_text("{not json")
    assert build_once(path, load, build, save) == {"value": 42} and len(built) == 2

    def fail(p, v):
        raise OSError(28, "No space left on device")

    assert build_once(tmp_path / "other.json", load, build, fail) == {"value": 42}


@pytest.mark.parametrize("kind", ["fifo", "dev-zero-link", "dangling-link", "folder"])
def test_a_raw_path_that_is_not_a_regular_file_is_named_as_such(tmp_path, kind):
    """Issue 56: a FIFO hung the reader and a link to /dev/zero was called "missing" by the suite
    check; each kind of non-regular path is named, before anything opens it."""
    p = gs_data.raw_paths("cora-ml", tmp_path)[0]
    p.parent.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(p)
        want = "is a FIFO (named pipe), not a regular file"
    elif kind == "dev-zero-link":
        p.symlink_to("/dev/zero")
        want = "(a symbolic link to /dev/zero) is a character device, not a regular file"
    elif kind == "dangling-link":
        p.symlink_to(tmp_path / "gone.mat")
        want = "which does not exist"
    else:
        p.mkdir()
        want = "is a folder, not a regular file"
    assert want in (gs_data.not_a_regular_file(p) or "")
    with pytest.raises(CorruptRawFileError, match=rf"dataset 'cora-ml': {p}.*{re.escape(want)}"):
        gs_data.load("cora-ml", root=tmp_path, download=False, cache_dir=tmp_path / "cache")


def test_a_regular_file_or_a_link_to_one_is_not_flagged(tmp_path):
    f = tmp_path / "f.mat"
    f.write_bytes(b"x")
    (tmp_path / "link.mat").symlink_to(f)
    assert gs_data.not_a_regular_file(f) is None
    assert gs_data.not_a_regular_file(tmp_path / "link.mat") is None
    assert gs_data.not_a_regular_file(tmp_path / "absent.mat") is None  # missing: the caller's message



@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("sparse", [True, False])
def test_nan_or_inf_features_name_the_file_and_the_first_bad_entry(fixtures_root, tmp_path, bad, sparse):
    """Issue 56: NaN / inf in a data file's features made every job fail "training loss became
    nan at epoch 0" without naming the file; the read names it, with the first bad entry."""
    import scipy.io
    import scipy.sparse as sps

    src = fixtures_root / "structural-shifts" / "pubmed" / "data.mat"
    mat = scipy.io.loadmat(src)
    x = np.asarray(sps.csr_matrix(mat["features"]).toarray(), dtype=np.float64)
    x[7, 3], x[9, 0] = bad, bad
    dst = gs_data.raw_paths("pubmed", tmp_path)[0]
    dst.parent.mkdir(parents=True)
    scipy.io.savemat(dst, {**{k: v for k, v in mat.items() if not k.startswith("__")},
                           "features": sps.csc_matrix(x) if sparse else x})
    with pytest.raises(CorruptRawFileError, match=rf"^{re.escape(str(dst))}: the node features hold 2 NaN / inf "
                                                  rf"value\(s\), the first at node 7, feature 3 \({bad}\)"):
        gs_data.load("pubmed", root=tmp_path, download=False, cache_dir=tmp_path / "cache")
