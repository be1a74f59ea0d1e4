"""On-disk symmetric CSR (issue 32): bit-identical to as_csr_graph, resumable, one-line errors.

All graphs are small; tiny memory budgets force many run files and (with the default
fan-in for such a budget) several merge passes, or (with a lowered minimum buffer) one wide
merge. Interruptions are placed with the converter's pause hook, so they are deterministic.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from gs_splits import as_csr_graph
from gs_splits.cli import main
from gs_splits.ondisk import convert_edges, open_ondisk
from gs_splits.ondisk import csr as ondisk

pytestmark = pytest.mark.slow  # out-of-core: `nox -s tests-gs_splits-slow` runs these

TINY = "64K"


def _edges(seed: int = 0, n: int = 400, m: int = 12_000) -> np.ndarray:
    """(2, E) int64 with duplicates, self-loops, pairs given in one and in both directions."""
    rng = np.random.default_rng(seed)
    e = rng.integers(0, n, size=(2, m))
    reverse = e[::-1, : m // 10]  # reciprocal pairs
    dups = e[:, m // 10 : m // 10 + m // 20]  # repeated pairs
    loops = np.stack([np.arange(0, n, 37)] * 2)
    out = np.concatenate([e, reverse, dups, loops], axis=1)
    return out[:, rng.permutation(out.shape[1])]


def _assert_same(result, edges: np.ndarray, num_nodes: int | None) -> None:
    g = as_csr_graph(edges, num_nodes=num_nodes)
    assert result.num_nodes == g.num_nodes
    assert result.stats == g.stats
    assert result.indptr.dtype == np.int64 and result.indices.dtype == g.indices.dtype == np.int32
    np.testing.assert_array_equal(result.indptr, g.indptr)
    np.testing.assert_array_equal(result.indices, g.indices)
    assert result.checksum == g.fingerprint()


def _write_raw(path: Path, edges: np.ndarray, dtype: str, layout: str = "2xE", sidecar: bool = True, **extra) -> None:
    arr = edges.astype(dtype)
    (arr if layout == "2xE" else arr.T).tofile(path)
    if sidecar:
        meta = {"format": ondisk.RAW_FORMAT, "dtype": dtype, "layout": layout, "num_edges": edges.shape[1], **extra}
        path.with_name(path.name + ".json").write_text(json.dumps(meta))


def _write_text(path: Path, edges: np.ndarray, comma: bool) -> None:
    rng = np.random.default_rng(1)
    lines = ["# a comment line, with a comma", ""]
    for k, (u, v) in enumerate(edges.T):
        w = f"{rng.random():.3f}"
        if comma:
            lines.append(f" {u} ,{v}, {w}" + ("  # note" if k % 97 == 0 else ""))
        else:
            lines.append(f"{u}\t {v} {w}" + (" # note, with comma" if k % 97 == 0 else ""))
        if k % 501 == 0:
            lines.append("   # indented comment")
    path.write_text("\n".join(lines))  # no newline after the last line


FORMATS = {
    "npy (2, E) int64": lambda p, e: (np.save(p.with_suffix(".npy"), e), p.with_suffix(".npy"), {}),
    "npy (E, 2) int32": lambda p, e: (np.save(p.with_suffix(".npy"), e.T.astype(np.int32).copy()), p.with_suffix(".npy"), {}),
    "npy (2, E) Fortran uint16": lambda p, e: (np.save(p.with_suffix(".npy"), np.asfortranarray(e.astype(np.uint16))),
                                               p.with_suffix(".npy"), {}),
    "npy (E, 2) big-endian float": lambda p, e: (np.save(p.with_suffix(".npy"), e.T.astype(">f8")), p.with_suffix(".npy"), {}),
    "npz stored": lambda p, e: (np.savez(p.with_suffix(".npz"), edge_index=e), p.with_suffix(".npz"), {}),
    "npz compressed (2, E)": lambda p, e: (np.savez_compressed(p.with_suffix(".npz"), edges=e.astype(np.int32)),
                                           p.with_suffix(".npz"), {}),
    "npz compressed (E, 2)": lambda p, e: (np.savez_compressed(p.with_suffix(".npz"), edges=e.T.copy()), p.with_suffix(".npz"), {}),
    "raw int32 sidecar": lambda p, e: (_write_raw(p.with_suffix(".bin"), e, "int32"), p.with_suffix(".bin"), {}),
    "raw int64 pairs sidecar": lambda p, e: (_write_raw(p.with_suffix(".i64"), e, "int64", "Ex2"), p.with_suffix(".i64"), {}),
    "raw int64 dtype option": lambda p, e: (_write_raw(p.with_suffix(".raw"), e, "int64", sidecar=False),
                                            p.with_suffix(".raw"), {"dtype": "int64"}),
    "text whitespace": lambda p, e: (_write_text(p.with_suffix(".txt"), e, False), p.with_suffix(".txt"), {}),
    "text comma": lambda p, e: (_write_text(p.with_suffix(".csv"), e, True), p.with_suffix(".csv"), {}),
}


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_every_format_gives_the_arrays_and_stats_of_as_csr_graph(fmt, tmp_path):
    """Many runs (tiny budget) merged in several passes (fan-in 2 at this budget)."""
    e = _edges(seed=len(fmt))
    n = int(e.max()) + 1 + 7  # trailing isolated nodes
    _, path, kw = FORMATS[fmt](tmp_path / "g", e)
    r = convert_edges(path, tmp_path / "out", num_nodes=n, memory=TINY, **kw)
    _assert_same(r, e, n)
    meta = json.loads((tmp_path / "out" / "meta.json").read_text())
    assert meta["conversion"]["chunks"] > 3 and meta["conversion"]["premerges"] >= 1
    assert not (tmp_path / "out" / ".partial").exists()  # run files removed
    assert r.verify()
    again = open_ondisk(tmp_path / "out")
    assert again.checksum == r.checksum and again.stats == r.stats


@pytest.mark.parametrize("text", [
    "0 1\r\n1 2\r\n\r\n3\t4 \r\n",  # CRLF, tabs, trailing blanks
    "# c\n  \n5 6 x y\n6 7 1.5 z # c, comma in a comment\n7 5 - -",  # extra columns of any type, no last newline
    "1, 2,a\n 2 ,3,w\n\n3,1 , 9 #x\n",  # comma separated, fields stripped
    "4 4\n4 5\n5 4\n4 5\n",  # a loop, a pair in both directions, a duplicate
])
def test_text_rules_match_read_edge_list(text, tmp_path):
    from gs_splits.io import read_edge_list

    path = tmp_path / "e.txt"
    path.write_bytes(text.encode())
    e = read_edge_list(path)
    r = convert_edges(path, tmp_path / "out", memory=TINY)
    _assert_same(r, e, None)


def test_one_wide_merge_and_parallel_sorted_parts(tmp_path, monkeypatch):
    monkeypatch.setattr(ondisk, "_MIN_MERGE_BUF", 64)  # fan-in 64 at this budget
    monkeypatch.setattr(ondisk, "_PARALLEL_SORT_MIN", 1000)  # one run per CPU per chunk
    monkeypatch.setattr(ondisk, "_cpus", lambda: 3)  # as many runs on any machine
    e = _edges(seed=3, n=1500, m=30_000)
    np.save(tmp_path / "e.npy", e)
    r = convert_edges(tmp_path / "e.npy", tmp_path / "out", memory=TINY)
    _assert_same(r, e, None)
    assert r.meta["conversion"]["premerges"] == 0 and r.meta["conversion"]["final_merge_runs"] > 10


def test_budget_sized_chunks_and_special_graphs(tmp_path):
    # a roomy budget: one chunk, no intermediate merge
    e = _edges(seed=5)
    np.save(tmp_path / "e.npy", e)
    r = convert_edges(tmp_path / "e.npy", tmp_path / "a", memory="256M")
    _assert_same(r, e, None)
    assert r.meta["conversion"]["chunks"] == 1
    # no edges at all, num_nodes given: every node isolated
    np.save(tmp_path / "empty.npy", np.zeros((2, 0), np.int64))
    r = convert_edges(tmp_path / "empty.npy", tmp_path / "b", num_nodes=4)
    _assert_same(r, np.zeros((2, 0), np.int64), 4)
    # only self-loops; num_nodes from an .npz member
    loops = np.array([[0, 3, 3], [0, 3, 3]])
    np.savez(tmp_path / "loops.npz", edge_index=loops, num_nodes=np.array(6))
    r = convert_edges(tmp_path / "loops.npz", tmp_path / "c")
    _assert_same(r, loops, 6)
    assert r.stats["self_loops"] == 3 and r.stats["isolated_nodes"] == 6
    # gaps of rows without edges longer than a block of indptr, before edges and at the end
    gaps = np.array([[0, 150_000, 150_001, 3], [1, 150_001, 0, 150_000]])
    np.save(tmp_path / "gaps.npy", gaps)
    r = convert_edges(tmp_path / "gaps.npy", tmp_path / "d", num_nodes=400_000, memory=TINY)
    _assert_same(r, gaps, 400_000)


def test_the_on_disk_graph_runs_the_in_memory_kernels(tmp_path):
    import gs_splits as gs

    e = _edges(seed=7, n=300, m=3000)
    np.save(tmp_path / "e.npy", e)
    r = convert_edges(tmp_path / "e.npy", tmp_path / "out", memory=TINY)
    g_disk = as_csr_graph(r)
    assert isinstance(g_disk.indices, np.memmap)
    g_mem = as_csr_graph(e)
    assert g_disk.fingerprint() == g_mem.fingerprint() == r.checksum
    np.testing.assert_array_equal(gs.pagerank(g_disk), gs.pagerank(g_mem))
    np.testing.assert_array_equal(gs.clustering_coefficient(g_disk), gs.clustering_coefficient(g_mem))
    with pytest.raises(ValueError, match="disagrees"):
        as_csr_graph(r, num_nodes=5)


# --------------------------------------------------------------------------- errors
def test_bad_inputs_are_one_line_errors_naming_the_file(tmp_path):
    def err(path, **kw) -> str:
        with pytest.raises(ValueError) as info:
            convert_edges(path, tmp_path / "out", **kw)
        msg = str(info.value)
        assert "\n" not in msg and str(path) in msg
        assert not (tmp_path / "out").exists()  # a failed conversion leaves nothing behind
        return msg

    np.save(tmp_path / "e.npy", np.array([[0, 1, 2], [1, 2, 9]]))
    assert "edge 2 (2, 9) has a node id outside [0, 5)" in err(tmp_path / "e.npy", num_nodes=5)
    np.save(tmp_path / "neg.npy", np.array([[0, -1], [1, 2]]))
    assert "edge 1 (-1, 2) has a negative node id" in err(tmp_path / "neg.npy")
    _write_raw(tmp_path / "big.bin", np.array([[0, 2**31], [1, 2]]), "int64")
    assert "below 2**31" in err(tmp_path / "big.bin")
    np.save(tmp_path / "frac.npy", np.array([[0.0, 1.5], [1.0, 2.0]]))
    assert "edge 1 (1.5, 2.0): a node id is not an integer" in err(tmp_path / "frac.npy")
    np.save(tmp_path / "three.npy", np.zeros((3, 4), np.int64))
    assert "shape (2, E) or (E, 2), got shape (3, 4)" in err(tmp_path / "three.npy")
    (tmp_path / "t.txt").write_text("# header\n0 1\n1 x2\n")
    assert "line 3: node id 'x2' is not a non-negative integer" in err(tmp_path / "t.txt")
    (tmp_path / "c.txt").write_text("0 1 5\n\n1 2\n")
    assert "line 3 has 2 column(s), the first data line has 3" in err(tmp_path / "c.txt")
    (tmp_path / "one.txt").write_text("# x\n7\n")
    assert "line 2: each line needs two node ids" in err(tmp_path / "one.txt")
    (tmp_path / "r.txt").write_text("0 1\n\n# gap\n4 9\n")
    assert "edge 1 (4, 9) on line 4 has a node id outside [0, 6)" in err(tmp_path / "r.txt", num_nodes=6)
    (tmp_path / "empty.txt").write_text("# nothing\n\n")
    assert "the edge list is empty" in err(tmp_path / "empty.txt")
    (tmp_path / "x.bin").write_bytes(b"\0" * 16)
    assert "needs its id type" in err(tmp_path / "x.bin")
    (tmp_path / "odd.raw").write_bytes(b"\0" * 12)
    assert "not a whole number of int32 (u, v) pairs" in err(tmp_path / "odd.raw", dtype="int32")
    assert "dtype applies to raw binary" in err(tmp_path / "e.npy", dtype="int32")
    import scipy.sparse as sp

    sp.save_npz(tmp_path / "adj.npz", sp.csr_array(np.eye(3)))
    assert "scipy.sparse adjacency" in err(tmp_path / "adj.npz")
    with pytest.raises(FileNotFoundError, match="not found"):
        convert_edges(tmp_path / "nope.npy", tmp_path / "out")
    with pytest.raises(ValueError, match="smallest budget"):
        convert_edges(tmp_path / "e.npy", tmp_path / "out", memory="1K")
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="not empty and not an on-disk CSR folder"):
        convert_edges(tmp_path / "e.npy", tmp_path / "busy")


def test_parse_memory():
    assert ondisk.parse_memory("16G") == 16 * 2**30
    assert ondisk.parse_memory("1.5GiB") == 3 * 2**29
    assert ondisk.parse_memory("512m") == 512 * 2**20
    assert ondisk.parse_memory(10**6) == 10**6
    assert ondisk.default_memory() >= ondisk.MIN_MEMORY
    for bad in ("lots", "16X", "-1G", True):
        with pytest.raises(ValueError, match="memory"):
            ondisk.parse_memory(bad)


# --------------------------------------------------------------------------- resume
def _convert_cmd(edges: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "gs_splits.cli", "convert", str(edges), str(out), "--memory", TINY, "--no-progress"]


def _start_paused(cmd: list[str], point: str, out: Path) -> subprocess.Popen:
    env = {**os.environ, ondisk.PAUSE_ENV: point}
    # SIG_DFL in the child: a test run started in the background by a non-interactive shell
    # inherits an ignored SIGINT, and Python then installs no KeyboardInterrupt handler
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    marker = out / ".partial" / "paused"
    deadline = time.monotonic() + 120
    while not marker.exists():
        if proc.poll() is not None:
            raise AssertionError(f"the conversion ended before {point}: {proc.communicate()}")
        assert time.monotonic() < deadline, f"never reached {point}"
        time.sleep(0.05)
    assert marker.read_text() == point
    return proc


def _state(out: Path) -> dict:
    return json.loads((out / ".partial" / "state.json").read_text())


def test_sigint_in_the_run_phase_then_resume_gives_the_same_csr(tmp_path):
    e = _edges(seed=11)
    path = tmp_path / "e.bin"
    _write_raw(path, e, "int32")
    whole = convert_edges(path, tmp_path / "whole", memory=TINY)
    out = tmp_path / "out"
    proc = _start_paused(_convert_cmd(path, out), "run:3", out)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted; run the same command again to resume" in err
    state = _state(out)
    assert state["phase"] == "runs" and state["chunks"] == 2
    recorded = {r["file"] for r in state["runs"]}
    assert {x.name for x in (out / ".partial").glob("run-*.keys")} > recorded  # chunk 3 written, not recorded
    r = convert_edges(path, out, memory="128K")  # resumes (another budget is fine)
    _assert_same(r, e, None)
    assert r.checksum == whole.checksum
    assert not (out / ".partial").exists()


def test_kill_9_in_the_merge_then_resume_gives_the_same_csr(tmp_path):
    e = _edges(seed=12)
    path = tmp_path / "e.txt"
    _write_text(path, e, comma=False)
    whole = convert_edges(path, tmp_path / "whole", memory=TINY)
    out = tmp_path / "out"
    proc = _start_paused(_convert_cmd(path, out), "merge:3", out)
    proc.kill()
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    state = _state(out)
    assert state["phase"] == "merge" and state["merge"]["checkpoints"] == 2
    # output of checkpoint 3 was written but not recorded: the resume cuts it off
    assert (out / ".partial" / "indices.npy").stat().st_size > state["merge"]["indices_bytes"]
    r = convert_edges(path, out, memory=TINY)
    _assert_same(r, e, None)
    assert r.checksum == whole.checksum
    for name in ("indptr.npy", "indices.npy"):
        assert (out / name).read_bytes() == (tmp_path / "whole" / name).read_bytes()


def test_a_changed_input_is_refused_until_restart_and_a_finished_folder_is_reused(tmp_path):
    e = _edges(seed=13)
    path = tmp_path / "e.npy"
    np.save(path, e)
    out = tmp_path / "out"
    proc = _start_paused(_convert_cmd(path, out), "run:2", out)
    proc.kill()
    proc.communicate(timeout=60)
    e2 = _edges(seed=14)
    np.save(path, e2)  # another graph under the same name
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 10**9))
    with pytest.raises(ValueError, match="partial conversion of another input.*restart"):
        convert_edges(path, out, memory=TINY)
    with pytest.raises(ValueError, match="other options.*num_nodes_option"):
        convert_edges(path, out, memory=TINY, num_nodes=10**6)
    r = convert_edges(path, out, memory=TINY, restart=True)
    _assert_same(r, e2, None)
    # the same input again: the finished folder is returned, nothing is rewritten
    stamp = (out / "meta.json").stat().st_mtime_ns
    assert convert_edges(path, out).checksum == r.checksum
    assert (out / "meta.json").stat().st_mtime_ns == stamp
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 2 * 10**9))
    with pytest.raises(ValueError, match="finished conversion of another input"):
        convert_edges(path, out)


def test_open_ondisk_refuses_partial_and_damaged_folders(tmp_path):
    e = _edges(seed=15, n=100, m=500)
    np.save(tmp_path / "e.npy", e)
    out = tmp_path / "out"
    proc = _start_paused(_convert_cmd(tmp_path / "e.npy", out), "merge:1", out)
    proc.kill()
    proc.communicate(timeout=60)
    with pytest.raises(ValueError, match="partial conversion"):
        open_ondisk(out)
    convert_edges(tmp_path / "e.npy", out, memory=TINY)
    np.save(out / "indices.npy", np.zeros(3, np.int32))
    with pytest.raises(ValueError, match="damaged"):
        open_ondisk(out)


# --------------------------------------------------------------------------- CLI
def test_cli_convert_help_success_and_errors(tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        main(["convert", "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    assert "resumes" in text and "--memory" in text and "--dtype" in text
    e = _edges(seed=16, n=50, m=300)
    np.save(tmp_path / "e.npy", e)
    assert main(["convert", str(tmp_path / "e.npy"), str(tmp_path / "out"), "--memory", TINY]) == 0
    cap = capsys.readouterr()
    g = as_csr_graph(e)
    assert f"{g.num_nodes} nodes, {g.num_edges} undirected edges" in cap.out and g.fingerprint() in cap.out
    for argv, needle in (
        (["convert", str(tmp_path / "nope.txt"), str(tmp_path / "o2")], "not found"),
        (["convert", str(tmp_path / "e.npy"), str(tmp_path / "o3"), "--num-nodes", "3"], "outside [0, 3)"),
        (["convert", str(tmp_path / "e.npy"), str(tmp_path / "o4"), "--memory", "lots"], "--memory"),
        (["convert", str(tmp_path / "e.npy"), str(tmp_path / "o5"), "--dtype", "int8"], "--dtype"),
        (["convert", str(tmp_path / "e.npy"), str(tmp_path / "out"), "--num-nodes", "999"], "--restart"),
    ):
        rc = _cli(argv)
        err = capsys.readouterr().err
        assert rc == 2 and needle in err and err.count("\n") == 1, (argv, err)


def _cli(argv: list[str]) -> int:
    """``main(argv)``'s exit status, also when argparse exits."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code)


# --------------------------------------------------------------------------- generator
def test_the_synthetic_generator_is_deterministic_and_converts(tmp_path, monkeypatch, load_benchmark):
    gen = load_benchmark("synthetic_papers100m")
    monkeypatch.setattr(gen, "BLOCK", 4096)  # several random blocks
    meta = gen.generate(tmp_path / "a.bin", 3000, 20_000, seed=1, max_degree=500)
    gen.generate(tmp_path / "b.bin", 3000, 20_000, seed=1, max_degree=500)
    gen.generate(tmp_path / "c.bin", 3000, 20_000, seed=2, max_degree=500)
    a = (tmp_path / "a.bin").read_bytes()
    assert a == (tmp_path / "b.bin").read_bytes() and a != (tmp_path / "c.bin").read_bytes()
    assert meta["num_edges"] == 20_000 and meta["generator"]["kind"] == "SYNTHETIC"
    e = np.frombuffer(a, dtype="<i4").reshape(2, -1)
    assert e.min() >= 0 and e.max() < 3000
    deg = np.bincount(e.ravel(), minlength=3000)
    assert 400 < deg.max() < 600 and np.median(deg) < deg.mean()  # the top node's expected degree; a heavy tail
    r = convert_edges(tmp_path / "a.bin", tmp_path / "out", memory=TINY)  # dtype and num_nodes from the sidecar
    _assert_same(r, e.astype(np.int64), 3000)
    assert main_generator(gen, tmp_path) == 0


def main_generator(gen, tmp_path: Path) -> int:
    rc = gen.main([str(tmp_path / "d.bin"), "--nodes", "500", "--edges", "4000", "--seed", "3"])
    side = json.loads((tmp_path / "d.bin.json").read_text())
    assert side["num_nodes"] == 500 and (tmp_path / "d.bin").stat().st_size == 2 * 4 * 4000
    return rc


def test_zip_members_are_streamed_not_loaded(tmp_path):
    """A stored .npz member is read in place; a compressed one through the zip stream."""
    e = _edges(seed=17, n=200, m=2000)
    np.savez(tmp_path / "s.npz", edge_index=e)
    with zipfile.ZipFile(tmp_path / "s.npz") as z:
        assert z.getinfo("edge_index.npy").compress_type == zipfile.ZIP_STORED
    src = ondisk._open_source(tmp_path / "s.npz", None)
    try:
        u, v = src.read(5, 10, np.empty(20, src.dtype))
        np.testing.assert_array_equal(u, e[0, 5:15])
        np.testing.assert_array_equal(v, e[1, 5:15])
    finally:
        src.close()
