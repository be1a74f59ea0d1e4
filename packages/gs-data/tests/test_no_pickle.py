"""Issue 34: no data file runs code when gs reads it.

Each format gs reads that is (or contains) a pickle gets a crafted file whose unpickling would
run ``os.system`` (writing a marker file); it must be refused with one error naming the file,
and the marker must not exist. The published files in the shared data folder must still load to
the arrays the old ``pickle.load`` / ``np.load(allow_pickle=True)`` gave (checksums computed with
the old loaders before the change, written below).
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from gs_data._io import CorruptRawFileError
from gs_data._readers import read_planetoid
from gs_data._safe_pickle import UnsafePickleError, read_npz
from gs_data.edgewise import EdgewiseSplit, _read_split, load_edgewise_splits, save_edgewise_split


class _Payload:
    """Unpickling this runs ``os.system('touch <marker>')``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _payload_bytes(marker: Path, protocol: int = 2) -> bytes:
    return pickle.dumps(_Payload(marker), protocol=protocol)


def _npy_object_member(payload: bytes) -> bytes:
    """A .npy member claiming an object array of 1 element, followed by ``payload``."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "|O", "fortran_order": False, "shape": (1,)})
    return buf.getvalue() + payload  # the header writer writes the magic too


# ------------------------------------------------------------------------ edgewise split files
def test_crafted_edgewise_split_is_refused_and_runs_nothing(tmp_path):
    marker = tmp_path / "PWNED"
    path = tmp_path / "edgewise-splits" / "Cora" / "cora_split_0.npz"
    path.parent.mkdir(parents=True)
    with zipfile.ZipFile(path, "w") as zf:
        buf = io.BytesIO()
        np.lib.format.write_array(buf, np.arange(5, dtype=np.int64))
        zf.writestr("test_indices.npy", buf.getvalue())
        zf.writestr("k_fold_indices.npy", _npy_object_member(_payload_bytes(marker, 3)))
    with pytest.raises(UnsafePickleError) as err:
        load_edgewise_splits("cora", tmp_path, num_splits=1)
    msg = str(err.value)
    assert str(path) in msg and "posix.system" in msg and "\n" not in msg
    assert not marker.exists()


def test_unequal_folds_are_written_without_objects_and_read_back(tmp_path):
    split = EdgewiseSplit(np.arange(10, 20), (np.arange(0, 4), np.arange(4, 7), np.arange(7, 10)))
    path = save_edgewise_split(split, tmp_path / "s.npz")
    with np.load(path, allow_pickle=False) as z:  # would raise on an object array
        assert sorted(z.files) == ["k_fold_indices_0", "k_fold_indices_1", "k_fold_indices_2", "test_indices"]
    back = _read_split(path)
    assert [f.tolist() for f in back.k_fold_indices] == [f.tolist() for f in split.k_fold_indices]
    np.testing.assert_array_equal(back.test_indices, split.test_indices)
    equal = EdgewiseSplit(np.arange(9, 12), (np.arange(0, 3), np.arange(3, 6), np.arange(6, 9)))
    with np.load(save_edgewise_split(equal, tmp_path / "e.npz"), allow_pickle=False) as z:
        assert z["k_fold_indices"].shape == (3, 3)


def test_object_array_of_arrays_still_reads_like_np_load(tmp_path):
    """The authors' layout (folds as an object array), written by numpy itself."""
    folds = np.empty(3, dtype=object)
    for i, n in enumerate((4, 3, 3)):
        folds[i] = np.arange(n, dtype=np.int64) + 10 * i
    np.savez(tmp_path / "a.npz", test_indices=np.arange(3), k_fold_indices=folds)
    got = read_npz(tmp_path / "a.npz")
    with np.load(tmp_path / "a.npz", allow_pickle=True) as z:
        ref = z["k_fold_indices"]
    assert [f.tolist() for f in got["k_fold_indices"]] == [f.tolist() for f in ref]


def test_a_damaged_split_file_names_itself(tmp_path):
    path = tmp_path / "edgewise-splits" / "Cora" / "cora_split_0.npz"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"PK\x03\x04 not really")
    with pytest.raises(CorruptRawFileError, match=str(path)):
        load_edgewise_splits("cora", tmp_path, num_splits=1)


# ------------------------------------------------------------------------ Planetoid raw files
def _write_planetoid(folder: Path, prefix: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    objs = {
        "x": sp.csr_matrix(np.eye(2, 3, dtype=np.float32)),
        "allx": sp.csr_matrix(np.eye(2, 3, dtype=np.float32)),
        "tx": sp.csr_matrix(np.ones((1, 3), dtype=np.float32)),
        "y": np.eye(2, dtype=np.int64),
        "ally": np.eye(2, dtype=np.int64),
        "ty": np.eye(1, 2, dtype=np.int64),
    }
    from collections import defaultdict

    graph = defaultdict(list)
    graph[0].append(1)
    graph[1].extend([0, 2])
    graph[2].append(1)
    objs["graph"] = graph
    for suf, obj in objs.items():
        (folder / f"ind.{prefix}.{suf}").write_bytes(pickle.dumps(obj, protocol=2))
    (folder / f"ind.{prefix}.test.index").write_text("2\n")


def test_planetoid_files_of_the_published_types_load(tmp_path):
    _write_planetoid(tmp_path, "toy")
    g = read_planetoid(tmp_path, "toy")
    assert g.num_nodes == 3 and g.y.tolist() == [0, 1, 0]


def test_crafted_planetoid_file_is_refused_and_runs_nothing(tmp_path):
    _write_planetoid(tmp_path, "toy")
    marker = tmp_path / "PWNED"
    bad = tmp_path / "ind.toy.graph"
    bad.write_bytes(_payload_bytes(marker, 2))
    with pytest.raises(UnsafePickleError) as err:
        read_planetoid(tmp_path, "toy")
    msg = str(err.value)
    assert str(bad) in msg and "posix.system" in msg and "\n" not in msg
    assert not marker.exists()


# ------------------------------------------------------------------------ GeSS raw Track files
def test_crafted_gess_raw_file_is_refused_and_runs_nothing(tmp_path):
    pytest.importorskip("pandas", reason="pandas (needed by the GeSS raw loader) not installed")
    from gs_data.track.raw import load_gess_raw

    marker = tmp_path / "PWNED"
    path = tmp_path / "bkg_events_2T_pileups_10.pkl"
    path.write_bytes(_payload_bytes(marker, 4))
    with pytest.raises(UnsafePickleError) as err:
        load_gess_raw(path)
    assert str(path) in str(err.value) and "posix.system" in str(err.value)
    assert not marker.exists()
    # a payload hidden inside an otherwise valid list of events is refused as well
    path.write_bytes(pickle.dumps([(_Payload(marker), 1.0)], protocol=4))
    with pytest.raises(UnsafePickleError, match="GeSS raw Track pickle"):
        load_gess_raw(path)
    assert not marker.exists()


# ------------------------------------------------------------------------ authors' .pth split
def test_crafted_authors_split_pth_is_refused_naming_the_file(tmp_path):
    import torch

    from gs_data.splits import authors_split_path, load_authors_split

    marker = tmp_path / "PWNED"
    path = authors_split_path("cora-ml", "popularity", tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"train": _Payload(marker)}, path)
    with pytest.raises(CorruptRawFileError) as err:
        load_authors_split("cora-ml", "popularity", root=tmp_path)
    msg = str(err.value)
    assert str(path) in msg and "weights_only=False" not in msg and "\n" not in msg
    assert not marker.exists()


# ------------------------------------------------------------------------ the published files
def _digest(obj) -> str:
    """SHA-256 (16 hex) over dtype, shape and bytes of arrays, CSR parts, dicts and lists."""
    h = hashlib.sha256()

    def feed(o):
        if sp.issparse(o):
            o = o.tocsr()
            h.update(b"csr")
            h.update(repr(o.shape).encode())
            for a in (o.data, o.indices, o.indptr):
                feed(np.asarray(a))
        elif isinstance(o, np.ndarray):
            h.update(o.dtype.str.encode())
            h.update(repr(o.shape).encode())
            h.update(np.ascontiguousarray(o).tobytes())
        elif isinstance(o, dict):
            for k in sorted(o):
                h.update(repr(k).encode())
                feed(o[k])
        elif isinstance(o, (list, tuple)):
            h.update(b"[%d" % len(o))
            for x in o:
                feed(x)
        else:
            h.update(repr(o).encode())

    feed(obj)
    return h.hexdigest()[:16]


# computed with the loaders before issue 34 (np.load(allow_pickle=True), pickle.load)
EDGEWISE_DIGESTS = {
    "cora": ["1f0c9cfe861c15d6", "ff0ec7390d0b809c", "a734277aadb10604", "6e0ce1c9e2e17320", "7ce4a9003f59cb17"],
    "citeseer": ["ec3924233db1f2e9", "986523f907f9e215", "0df10734abf30fd9", "4b0f96ef82079307", "fe647d4f68e1808b"],
}
PLANETOID_DIGESTS = {
    ("Cora", "cora"): {
        "graph": "8677c5da7f94a051",
        "x": "72229760500836f3", "tx": "714b18e614736f36", "allx": "bfd0b1f3a8344287",
        "y": "4ce16cb5d293c54c", "ty": "783bf32eb44fa970", "ally": "0469004dd2f16ad9",
        "ind.graph": "35fcfa61bd341b38",
    },
    ("CiteSeer", "citeseer"): {
        "graph": "5e9ab7a6ba9439f5",
        "x": "beb2ee18e595044f", "tx": "7fb06cec5b4eea42", "allx": "33e74c356505536d",
        "y": "3e8ecdcbe8e62d26", "ty": "40d9f4cf6b70b607", "ally": "d811f9ee80bd5cae",
        "ind.graph": "66490ff5d247edee",
    },
}


def test_published_edgewise_splits_load_to_the_same_arrays(shared_datasets):
    if not (shared_datasets / "edgewise-splits").is_dir():
        pytest.skip(f"no edgewise-splits folder in {shared_datasets}")
    for name, digests in EDGEWISE_DIGESTS.items():
        splits = load_edgewise_splits(name, shared_datasets)
        got = [_digest([s.test_indices, list(s.k_fold_indices)]) for s in splits]
        assert got == digests, name


def test_published_planetoid_files_load_to_the_same_arrays(shared_datasets):
    from gs_data._readers import PLANETOID_PICKLE_GLOBALS
    from gs_data._safe_pickle import restricted_load

    for (folder, prefix), digests in PLANETOID_DIGESTS.items():
        raw = shared_datasets / "planetoid" / folder / "raw"
        if not raw.is_dir():
            pytest.skip(f"no Planetoid raw files in {raw}")
        g = read_planetoid(raw, prefix)
        assert _digest([g.edge_index, g.x, g.y]) == digests["graph"], prefix
        for suf in ("x", "tx", "allx", "y", "ty", "ally", "graph"):
            with open(raw / f"ind.{prefix}.{suf}", "rb") as fh:
                obj = restricted_load(fh, PLANETOID_PICKLE_GLOBALS, path=fh.name, what="t", encoding="latin1")
            key = "ind.graph" if suf == "graph" else suf
            assert _digest(dict(obj) if isinstance(obj, dict) else obj) == digests[key], (prefix, suf)
