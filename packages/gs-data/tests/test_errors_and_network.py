"""Missing, truncated, corrupted raw files; downloads; proof that tests have no network."""

from __future__ import annotations

import hashlib
import re
import shutil
import socket
import threading
from functools import partial
from http.server import HTTPServer, SimpleHTTPRequestHandler

import pytest

import gs_data
from gs_data._io import ChecksumError, CorruptRawFileError, MissingRawFileError, download_file


def test_socket_connection_to_the_internet_is_refused():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        with pytest.raises(RuntimeError, match="network access is not allowed"):
            s.connect(("93.184.216.34", 80))
    finally:
        s.close()


def test_a_download_attempt_during_tests_is_refused(tmp_path, monkeypatch):
    # planetoid-cora has a standard URL: with an empty root, load() tries to download it. Name
    # resolution is faked to a public address (machines without DNS would stop earlier), so
    # the attempt reaches socket.connect, which the test-suite guard refuses.
    public = [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", 443))]
    monkeypatch.setattr(socket, "getaddrinfo", lambda *a, **k: public)
    with pytest.raises(RuntimeError, match="network access is not allowed"):
        gs_data.load("planetoid-cora", root=tmp_path / "empty")
    with pytest.raises(RuntimeError, match="network access is not allowed"):
        download_file("http://93.184.216.34/ind.cora.x", tmp_path / "x")
    assert not any(p.is_file() and p.suffix != ".tmp" for p in (tmp_path / "empty").rglob("*"))


def test_missing_file_names_file_and_place(tmp_path):
    with pytest.raises(MissingRawFileError) as err:
        gs_data.load("cora-ml", root=tmp_path)
    msg = str(err.value)
    assert str(tmp_path / "structural-shifts" / "cora-ml" / "data.mat") in msg
    assert "Place the file at exactly this path" in msg
    with pytest.raises(MissingRawFileError, match=r"acdne/acmv9\.mat.*download=False"):
        gs_data.load("acmv9", root=tmp_path, download=False)


def _copy_fixture(fixtures_root, tmp_path, rel):
    dst = tmp_path / "root"
    shutil.copytree(fixtures_root / rel.split("/")[0], dst / rel.split("/")[0])
    return dst, dst / rel


@pytest.mark.parametrize(
    "name, rel",
    [
        ("pubmed", "structural-shifts/pubmed/data.mat"),
        ("planetoid-pubmed", "planetoid/PubMed/raw/ind.pubmed.graph"),
        ("planetoid-pubmed", "planetoid/PubMed/raw/ind.pubmed.allx"),
        ("shchur-amazon-photo", "shchur/amazon_electronics_photo.npz"),
        ("ogbn-arxiv", "ogb/arxiv/raw/edge.csv.gz"),
        ("ogbn-arxiv", "ogb/arxiv/raw/node-feat.csv.gz"),
        ("dblpv8", "udagcn/dblpv8/raw/dblp_docs.txt"),
    ],
)
@pytest.mark.parametrize("damage", ["truncate", "garbage"])
def test_corrupted_or_truncated_file_raises_naming_it(fixtures_root, tmp_path, name, rel, damage):
    root, target = _copy_fixture(fixtures_root, tmp_path, rel)
    raw = target.read_bytes()
    if damage == "truncate":
        target.write_bytes(raw[: max(1, len(raw) // 3)])
    else:
        target.write_bytes(b"\x00garbage,\x01\x02" * 7)
    with pytest.raises(CorruptRawFileError) as err:
        gs_data.load(name, root=root, download=False, use_cache=False)
    assert str(target) in str(err.value)


def test_edgelist_pointing_outside_the_graph(fixtures_root, tmp_path):
    root, target = _copy_fixture(fixtures_root, tmp_path, "udagcn/dblpv8/raw/dblp_edgelist.txt")
    target.write_text(target.read_text() + "0,99\n")
    with pytest.raises(CorruptRawFileError, match="dblp_edgelist.txt.*outside"):
        gs_data.load("dblpv8", root=root, download=False, use_cache=False)


def test_checksum_mismatch_names_file(shared_datasets, tmp_path):
    root = tmp_path / "root"
    (root / "structural-shifts" / "cora-ml").mkdir(parents=True)
    bad = root / "structural-shifts" / "cora-ml" / "data.mat"
    shutil.copy(shared_datasets / "structural-shifts" / "citeseer" / "data.mat", bad)  # wrong file
    with pytest.raises(ChecksumError, match=str(bad)):
        gs_data.load("cora-ml", root=root, download=False, verify_checksums=True)


@pytest.fixture()
def local_server(tmp_path):
    """An HTTP server on the loopback interface (allowed by the network guard)."""
    served = tmp_path / "served"
    served.mkdir()
    handler = partial(SimpleHTTPRequestHandler, directory=str(served))
    handler.log_message = lambda *a, **k: None
    httpd = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield served, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_download_progress_and_checksum(local_server, tmp_path):
    served, url = local_server
    payload = bytes(range(256)) * 1000
    (served / "file.bin").write_bytes(payload)
    calls = []
    dest = download_file(
        f"{url}/file.bin", tmp_path / "out" / "file.bin",
        sha256=hashlib.sha256(payload).hexdigest(), progress=lambda done, total: calls.append((done, total)),
    )
    assert dest.read_bytes() == payload
    assert calls[-1] == (len(payload), len(payload)) and len(calls) >= 2
    with pytest.raises(ChecksumError, match="expected 0000"):
        download_file(f"{url}/file.bin", tmp_path / "out" / "other.bin", sha256="0" * 64)
    assert not (tmp_path / "out" / "other.bin").exists()
    assert not list((tmp_path / "out").glob("*.tmp"))


# ------------------------------------------------------------------ archives (issue 56)
def _zip(path, entries: dict[str, bytes]) -> None:
    import zipfile

    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in entries.items():
            zf.writestr(zipfile.ZipInfo(name), data)


def _ogb_arxiv():
    from gs_data._registry import resolve_name

    return resolve_name("ogbn-arxiv")


def test_an_archive_touches_only_its_own_datasets_folder(tmp_path):
    """A crafted ogb/arxiv.zip holding another dataset's folder, '../' and absolute entries:
    only arxiv/ is written, the neighbour's files stay as they were, nothing lands elsewhere,
    no temporary folder is left, and an arxiv file the archive lacks is kept."""
    from gs_data.datasets import _ensure_raw

    root = tmp_path / "data"
    other = root / "ogb" / "products" / "raw" / "edge.csv.gz"
    other.parent.mkdir(parents=True)
    other.write_bytes(b"products, keep me")
    mine = root / "ogb" / "arxiv" / "split" / "time" / "train.csv.gz"
    mine.parent.mkdir(parents=True)
    mine.write_bytes(b"arxiv split, keep me")
    raw = {f"arxiv/raw/{f}": f.encode() for f in ("edge.csv.gz", "node-feat.csv.gz", "node-label.csv.gz")}
    _zip(root / "ogb" / "arxiv.zip", {**raw, "products/raw/edge.csv.gz": b"evil", "products/raw/new.csv": b"evil",
                                      "../escape.txt": b"evil", "/abs.txt": b"evil", "arxiv/../../up.txt": b"evil"})
    before = {p for p in tmp_path.rglob("*")}
    paths = _ensure_raw(_ogb_arxiv(), root, download=True, progress=None, verify=False)
    assert [p.read_bytes() for p in paths] == [b"edge.csv.gz", b"node-feat.csv.gz", b"node-label.csv.gz"]
    assert other.read_bytes() == b"products, keep me" and mine.read_bytes() == b"arxiv split, keep me"
    new = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")} - {p.relative_to(tmp_path).as_posix() for p in before}
    # zipfile drops the '..' of 'arxiv/../../up.txt': it lands inside arxiv/, its own folder
    assert new == {"data/ogb/arxiv/raw", "data/ogb/arxiv/up.txt", *(f"data/ogb/{k}" for k in raw)}, new


def test_an_archive_does_not_write_through_a_link_that_leaves_the_dataset_folder(tmp_path):
    """Issue 56 item 1: ogb/arxiv/raw a symbolic link to another folder: extracting arxiv.zip
    would have replaced that folder's files; it is refused by name and nothing there changes.
    A zip entry stored as a symbolic link lands as a plain file, never as a link."""
    import stat
    import zipfile

    from gs_data._io import extract_zip

    root = tmp_path / "data"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "edge.csv.gz").write_bytes(b"not arxiv's, keep me")
    (root / "ogb" / "arxiv").mkdir(parents=True)
    (root / "ogb" / "arxiv" / "raw").symlink_to(outside)
    _zip(root / "ogb" / "arxiv.zip", {"arxiv/raw/edge.csv.gz": b"evil"})
    with pytest.raises(ValueError, match=r"arxiv/raw is a symbolic link to .*outside, outside the dataset's folder"):
        extract_zip(root / "ogb" / "arxiv.zip", root / "ogb", keep="arxiv")
    assert sorted(p.name for p in outside.iterdir()) == ["edge.csv.gz"]
    assert (outside / "edge.csv.gz").read_bytes() == b"not arxiv's, keep me"
    assert sorted(p.name for p in (root / "ogb" / "arxiv").iterdir()) == ["raw"]  # no temporary folder left
    # a link entry in the archive
    (root / "ogb" / "arxiv" / "raw").unlink()
    with zipfile.ZipFile(root / "ogb" / "link.zip", "w") as zf:
        info = zipfile.ZipInfo("arxiv/raw/edge.csv.gz")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(info, str(outside / "edge.csv.gz"))
    extract_zip(root / "ogb" / "link.zip", root / "ogb", keep="arxiv")
    got = root / "ogb" / "arxiv" / "raw" / "edge.csv.gz"
    assert not got.is_symlink() and got.is_file()


@pytest.mark.parametrize("case", ["method99", "encrypted", "no-own-folder", "own-is-file"])
def test_an_unreadable_or_foreign_archive_names_itself_and_leaves_no_folder(tmp_path, case):
    """Issue 56 QA A10-A13: an unknown compression method or an encrypted member raised a bare
    NotImplementedError / RuntimeError, and an archive without the dataset's folder (or with a
    file in its place) left an empty ogb/arxiv/ behind."""
    import zipfile

    from gs_data._io import extract_zip

    root = tmp_path / "data" / "ogb"
    root.mkdir(parents=True)
    arch = root / "arxiv.zip"
    if case in ("method99", "encrypted"):
        with zipfile.ZipFile(arch, "w") as zf:
            zf.writestr("arxiv/raw/edge.csv.gz", b"x" * 100)
        raw = bytearray(arch.read_bytes())
        if case == "method99":  # compression method field of the local header and the central entry
            raw[8:10] = (99).to_bytes(2, "little")
            cd = raw.rindex(b"PK\x01\x02")
            raw[cd + 10:cd + 12] = (99).to_bytes(2, "little")
        else:  # general-purpose flag bit 0: encrypted
            raw[6] |= 1
            cd = raw.rindex(b"PK\x01\x02")
            raw[cd + 8] |= 1
        arch.write_bytes(bytes(raw))
        with pytest.raises(CorruptRawFileError, match=rf"{re.escape(str(arch))}: cannot extract this zip archive"):
            extract_zip(arch, root, keep="arxiv")
    else:
        _zip(arch, {"products/raw/edge.csv.gz": b"x"} if case == "no-own-folder" else {"arxiv": b"a file"})
        extract_zip(arch, root, keep="arxiv")
    assert sorted(p.name for p in root.iterdir()) == ["arxiv.zip"]  # no arxiv/, no temporary folder


def test_a_failed_extraction_leaves_nothing_behind(tmp_path):
    from gs_data.datasets import _ensure_raw

    root = tmp_path / "data"
    (root / "ogb").mkdir(parents=True)
    (root / "ogb" / "arxiv.zip").write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(CorruptRawFileError, match="not a valid zip archive"):
        _ensure_raw(_ogb_arxiv(), root, download=True, progress=None, verify=False)
    assert sorted(p.name for p in (root / "ogb").iterdir()) == ["arxiv.zip"]  # no arxiv/, no temporary folder
    with pytest.raises(ValueError, match="one folder name"):
        from gs_data._io import extract_zip

        extract_zip(root / "ogb" / "arxiv.zip", root / "ogb", keep="../x")
