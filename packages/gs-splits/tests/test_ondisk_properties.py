"""Out-of-core properties and splits (issue 32, second slice): equal bit for bit to the
in-memory path, whatever the memory budget (a tiny one forces many chunks and blocks).

Graphs are random power-law graphs with isolated nodes; the larger one crosses
``PARALLEL_MIN_NNZ`` so that the parallel kernels run too. No timed assertions.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import numpy as np
import pytest

from gs_splits import (
    _kernels,
    as_csr_graph,
    clustering_coefficient,
    pagerank,
    personalized_pagerank,
    structural_split,
    triangles,
)
from gs_splits.cli import main
from gs_splits.ondisk import open_ondisk
from gs_splits.ondisk import properties as oc

pytestmark = pytest.mark.slow  # out-of-core: `nox -s tests-gs_splits-slow` runs these

TINY = "64K"
BUDGETS = [TINY, "400K", "1G"]  # many chunks, a few chunks, everything held in memory


def _power_law(seed: int, n: int, m: int, isolated: int = 25):
    rng = np.random.default_rng(seed)
    w = rng.pareto(1.3, n) + 1
    w /= w.sum()
    e = np.stack([rng.choice(n, m, p=w), rng.choice(n, m, p=w)])
    return e, n + isolated


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    e, n = _power_law(0, 2500, 25_000)
    g = as_csr_graph(e, num_nodes=n)
    d = tmp_path_factory.mktemp("small")
    return e, n, g, oc.save_ondisk(g, d / "csr")


@pytest.fixture(scope="module")
def large(tmp_path_factory):
    e, n = _power_law(1, 20_000, 130_000)
    g = as_csr_graph(e, num_nodes=n)
    assert g.indices.size >= _kernels.PARALLEL_MIN_NNZ
    d = tmp_path_factory.mktemp("large")
    return e, n, g, oc.save_ondisk(g, d / "csr")


def _fresh_order(csr, tmp_path: Path, memory: str):
    """Build the degree-ordered copy under ``memory`` (and make it the CSR's own copy)."""
    folder = oc._default_folder(csr)
    import shutil

    shutil.rmtree(folder, ignore_errors=True)
    return oc.degree_ordered_ondisk(csr, memory)


@pytest.mark.parametrize("memory", BUDGETS)
def test_degree_ordered_copy_equals_the_in_memory_one(small, tmp_path, memory):
    _, _, g, csr = small
    dg = _fresh_order(csr, tmp_path, memory)
    ref = g.degree_ordered()
    assert np.array_equal(np.load(dg.path / "nind.npy"), ref.nind)
    assert np.array_equal(dg.outdeg(), ref.outdeg)
    assert np.array_equal(dg.order(), ref.order)
    assert np.array_equal(dg.nptr(), ref.nptr)
    assert np.array_equal(dg.bounds(dg.nptr()), ref.bounds)
    oind = np.load(dg.path / "oind.npy")
    expect = np.concatenate([ref.nind[a:a + k] for a, k in zip(ref.nptr[:-1], ref.outdeg, strict=True)])
    assert np.array_equal(oind, expect)


@pytest.mark.parametrize("memory", BUDGETS)
def test_pagerank_and_ppr_equal_bit_for_bit(small, tmp_path, memory):
    _, _, g, csr = small
    _fresh_order(csr, tmp_path, memory)
    assert np.array_equal(oc.pagerank_ondisk(csr, memory=memory), pagerank(g))
    assert np.array_equal(oc.personalized_pagerank_ondisk(csr, memory=memory), personalized_pagerank(g))
    p = np.random.default_rng(3).random(g.num_nodes)
    assert np.array_equal(oc.pagerank_ondisk(csr, 0.3, personalization=p, tol=1e-8, memory=memory),
                          pagerank(g, 0.3, personalization=p, tol=1e-8))
    assert np.array_equal(oc.personalized_pagerank_ondisk(csr, source=7, memory=memory),
                          personalized_pagerank(g, source=7))


@pytest.mark.parametrize("memory", BUDGETS)
def test_triangles_and_clustering_equal(small, tmp_path, memory):
    _, _, g, csr = small
    _fresh_order(csr, tmp_path, memory)
    t = oc.triangles_ondisk(csr, memory=memory)
    assert t.dtype == np.int64 and np.array_equal(t, triangles(g))
    assert np.array_equal(oc.clustering_coefficient_ondisk(csr, memory=memory), clustering_coefficient(g))


@pytest.mark.parametrize("memory", ["1700K", "3500K", "1G"])  # blocks, chunks, held; threads on
def test_parallel_kernels_equal_too(large, tmp_path, memory):
    _, _, g, csr = large
    _fresh_order(csr, tmp_path, memory)
    assert np.array_equal(oc.pagerank_ondisk(csr, memory=memory), pagerank(g))
    assert np.array_equal(oc.triangles_ondisk(csr, memory=memory), triangles(g))


def test_logs_say_streamed_or_held(small, tmp_path, caplog):
    _, _, _, csr = small
    _fresh_order(csr, tmp_path, "1G")
    p = np.ones(csr.num_nodes)  # not the uniform default: computed each time, never kept
    with caplog.at_level(logging.INFO, logger="gs_splits.ondisk.properties"):
        oc.pagerank_ondisk(csr, personalization=p, memory=TINY)
        oc.triangles_ondisk(csr, memory=TINY)
        oc.pagerank_ondisk(csr, personalization=p, memory="1G")
        oc.triangles_ondisk(csr, memory="1G")
    text = caplog.text
    assert "streamed" in text and "block(s) of middle nodes" in text
    assert "adjacency held in memory" in text and "oriented graph" in text and "held in memory" in text


def test_degree_ordered_copy_is_reused_and_rebuilt_when_stale(small, tmp_path):
    _, _, _, csr = small
    dg = _fresh_order(csr, tmp_path, "1G")
    stamp = (dg.path / "nind.npy").stat().st_mtime_ns
    assert oc.degree_ordered_ondisk(csr, TINY).path == dg.path
    assert (dg.path / "nind.npy").stat().st_mtime_ns == stamp  # reused, not rebuilt
    meta = json.loads((dg.path / "meta.json").read_text())
    meta["source_checksum"] = "0" * 64
    (dg.path / "meta.json").write_text(json.dumps(meta))
    again = oc.degree_ordered_ondisk(csr, TINY)
    assert again.meta["source_checksum"] == csr.checksum
    assert np.array_equal(np.load(again.path / "nind.npy"), csr.to_csr_graph().degree_ordered().nind)


# ----------------------------------------------------------------------------------- splits
@pytest.mark.parametrize("strategy", ["popularity", "locality", "density"])
@pytest.mark.parametrize("seed", [0, 1])
def test_split_files_are_byte_identical(small, tmp_path, strategy, seed):
    e, n, _, _ = small
    mem = structural_split(e, strategy, seed=seed, num_nodes=n, path="memory")
    ooc = structural_split(e, strategy, seed=seed, num_nodes=n, path="ondisk", memory=TINY,
                           workdir=tmp_path)
    assert list(tmp_path.iterdir()) == []  # the temporary on-disk CSR is removed
    a = mem.save(tmp_path / "mem")
    b = ooc.save(tmp_path / "ooc")
    assert a.read_bytes() == b.read_bytes()
    assert (tmp_path / "mem.json").read_bytes() == (tmp_path / "ooc.json").read_bytes()


def test_auto_picks_the_path_by_the_budget_and_logs_it(small, caplog):
    e, n, g, csr = small
    with caplog.at_level(logging.INFO, logger="gs_splits.split"):
        a = structural_split(e, "popularity", num_nodes=n, memory=TINY)
        assert "out-of-core path: the in-memory path needs about" in caplog.text
        caplog.clear()
        b = structural_split(e, "popularity", num_nodes=n, memory="8G")
        assert "in-memory path: the in-memory path needs about" in caplog.text
        caplog.clear()
        c = structural_split(csr, "popularity", memory=TINY)  # an on-disk CSR, too big
        assert "out-of-core path" in caplog.text
        caplog.clear()
        d = structural_split(str(csr.path), "popularity", memory="8G")  # its folder
        assert "in-memory path" in caplog.text
    assert a == b == c == d


def test_other_strategies_run_on_the_mapped_csr(small, caplog):
    e, n, _, csr = small
    with caplog.at_level(logging.INFO, logger="gs_splits.split"):
        k = structural_split(csr, "kcore", path="ondisk", memory=TINY)
    assert "no out-of-core kernel" in caplog.text
    assert k == structural_split(e, "kcore", num_nodes=n, path="memory")
    for name in ("random", "degree"):
        assert structural_split(csr, name, seed=4, path="ondisk") == structural_split(
            e, name, seed=4, num_nodes=n, path="memory")


def test_bad_path_and_memory_are_refused(small):
    e, n, _, csr = small
    with pytest.raises(ValueError, match="path must be"):
        structural_split(e, "popularity", num_nodes=n, path="disk")
    with pytest.raises(ValueError, match="memory"):
        structural_split(e, "popularity", num_nodes=n, memory="lots")
    with pytest.raises(ValueError, match="num_nodes"):
        structural_split(csr, "popularity", num_nodes=n + 1)


def test_in_memory_estimate_and_choice():
    assert oc.in_memory_bytes(10, 100) == 2 * 4 * 100 + 136 * 10
    assert oc.choose_path(10**6, 10**7, "16G")[0] == "memory"
    which, why = oc.choose_path(111_059_956, 3_231_371_744, "16G")  # ogbn-papers100M
    assert which == "ondisk" and "more than the memory budget of 16 GiB" in why
    assert oc.choose_path(10, 10, TINY, "memory") == ("memory", "path='memory' asked for")


# ----------------------------------------------------------------------------------- CLI
def _make(args, capsys):
    rc = main(["make", *map(str, args)])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_cli_make_on_a_folder_and_on_an_edge_file(small, tmp_path, capsys):
    e, n, _, csr = small
    np.save(tmp_path / "g.npy", e)
    rc, out, _ = _make([tmp_path / "g.npy", "-s", "density", "--num-nodes", n, "--out", tmp_path / "mem",
                        "--path", "memory"], capsys)
    assert rc == 0 and "path: in-memory (path='memory' asked for)" in out
    rc, out, _ = _make([tmp_path / "g.npy", "-s", "density", "--num-nodes", n, "--out", tmp_path / "edge",
                        "--memory", TINY], capsys)
    assert rc == 0 and "path: out-of-core (the in-memory path needs about" in out
    assert open_ondisk(tmp_path / "g.npy.csr").checksum == csr.checksum  # converted, kept for reuse
    rc, out, _ = _make([tmp_path / "g.npy", "-s", "locality", "--num-nodes", n, "--out", tmp_path / "again",
                        "--memory", TINY], capsys)
    assert rc == 0 and "converting" not in out  # the next strategy reuses it
    rc, out, _ = _make([csr.path, "-s", "density", "--out", tmp_path / "dir", "--memory", TINY], capsys)
    assert rc == 0 and "path: out-of-core" in out
    rc, out, _ = _make([csr.path, "-s", "density", "--out", tmp_path / "dirmem", "--memory", "4G"], capsys)
    assert rc == 0 and "path: in-memory (the in-memory path needs about" in out
    ref = (tmp_path / "mem.npz").read_bytes()
    for name in ("edge", "dir", "dirmem"):
        assert (tmp_path / f"{name}.npz").read_bytes() == ref, name


def test_cli_text_file_with_workdir(small, tmp_path, capsys):
    e, n, _, _ = small
    np.savetxt(tmp_path / "g.txt", e.T, fmt="%d")
    np.save(tmp_path / "g.npy", e)
    rc, out, _ = _make([tmp_path / "g.txt", "-s", "popularity", "--num-nodes", n, "--out", tmp_path / "t",
                        "--path", "ondisk", "--workdir", tmp_path / "work"], capsys)
    assert rc == 0 and "path: out-of-core (path='ondisk' asked for)" in out
    assert (tmp_path / "work" / "meta.json").is_file()
    rc, _, _ = _make([tmp_path / "g.npy", "-s", "popularity", "--num-nodes", n, "--out", tmp_path / "m"], capsys)
    assert rc == 0 and (tmp_path / "t.npz").read_bytes() == (tmp_path / "m.npz").read_bytes()


@pytest.mark.parametrize("memory", ["12Q", "1K", "-3G", ""])
def test_cli_bad_memory_is_one_line_exit_2(small, tmp_path, capsys, memory):
    e, _, _, _ = small
    np.save(tmp_path / "g.npy", e)
    with pytest.raises(SystemExit) as exc:
        main(["make", str(tmp_path / "g.npy"), "--out", str(tmp_path / "x"), "--memory", memory])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--memory" in err
    assert not (tmp_path / "x.npz").exists()


def test_cli_refusals(small, tmp_path, capsys):
    e, _, _, csr = small
    np.save(tmp_path / "g.npy", e)
    rc, _, err = _make([csr.path, "--relabel", "--out", tmp_path / "x"], capsys)
    assert rc == 2 and "--relabel" in err and err.count("\n") == 1
    rc, _, err = _make([tmp_path / "g.npy", "--relabel", "--memory", TINY, "--out", tmp_path / "x"], capsys)
    assert rc == 2 and "--relabel works on the in-memory path only" in err
    mat = Path(__file__).parent / "data"
    mats = sorted(mat.glob("*.mat")) if mat.is_dir() else []
    if mats:
        rc, _, err = _make([mats[0], "--path", "ondisk", "--out", tmp_path / "x"], capsys)
        assert rc == 2 and "--path memory" in err


def test_read_only_csr_folder_gets_its_copy_elsewhere(small, tmp_path, monkeypatch):
    import shutil

    _, _, g, _ = small
    csr = oc.save_ondisk(g, tmp_path / "ro")
    monkeypatch.setattr(oc.os, "access", lambda path, mode: False)  # as for a read-only folder
    folder = oc._default_folder(csr)
    assert folder.parent != csr.path and csr.checksum[:16] in folder.name
    shutil.rmtree(folder, ignore_errors=True)
    try:
        assert np.array_equal(oc.pagerank_ondisk(csr, memory=TINY), pagerank(g))
        assert (folder / "meta.json").is_file() and not (csr.path / "degree_ordered").exists()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# ------------------------------------------------------------------ sampled appendix-A statistics
def test_statistics_sampled_above_max_nodes(small):
    from gs_splits.diagnostics import SplitStatistics, split_statistics, summarize_split

    e, n, g, _ = small
    split = structural_split(e, "popularity", num_nodes=n)
    labels = np.arange(n) % 3
    full = split_statistics(split, g, labels, num_sources=4)
    assert full.sample_size == 0
    st = split_statistics(split, g, labels, num_sources=4, max_nodes=500)
    assert st.sample_size == 500 and st.sizes == full.sizes  # part sizes count every node
    assert sum(st.degree_hist["ID"]) + sum(st.degree_hist["OOD"]) == 500
    assert sum(st.property_hist["ID"]) + sum(st.property_hist["OOD"]) + st.property_hist["not_shown"] == 500
    assert st == split_statistics(split, g, labels, num_sources=4, max_nodes=500)  # seeded
    assert SplitStatistics.from_dict(json.loads(json.dumps(st.to_dict()))).sample_size == 500
    assert f"seeded uniform sample of 500 of the {n} nodes" in summarize_split(split, g, stats=st)


def test_cli_report_on_a_folder_with_max_nodes(small, tmp_path, capsys):
    _, _, _, csr = small
    rc, _, _ = _make([csr.path, "--out", tmp_path / "s", "--memory", TINY], capsys)
    assert rc == 0
    rc = main(["report", str(tmp_path / "s.npz"), "--graph", str(csr.path), "--out-dir", str(tmp_path / "r"),
               "--no-figures", "--max-nodes", "300", "--distance-sources", "2"])
    assert rc == 0
    md = (tmp_path / "r" / "report.md").read_text()
    assert "seeded uniform sample of 300 of the" in md and "## Degree distribution" in md


def test_graphs_without_edges_and_with_one(tmp_path):
    for e, n in ((np.zeros((2, 0), dtype=np.int64), 5), (np.array([[0], [3]]), 6)):
        g = as_csr_graph(e, num_nodes=n)
        csr = oc.save_ondisk(g, tmp_path / f"g{n}")
        assert np.array_equal(oc.pagerank_ondisk(csr, memory=TINY), pagerank(g))
        assert np.array_equal(oc.clustering_coefficient_ondisk(csr, memory=TINY), clustering_coefficient(g))
        a = structural_split(e, "density", num_nodes=n, path="memory", on_ties="ignore",
                             sizes=(0.2, 0.2, 0.2, 0.2, 0.2))
        b = structural_split(csr, "density", path="ondisk", on_ties="ignore", sizes=(0.2, 0.2, 0.2, 0.2, 0.2))
        assert a == b


def test_cli_missing_graph_is_one_line(tmp_path, capsys):
    rc, out, err = _make([tmp_path / "nope.npy", "--out", tmp_path / "x"], capsys)
    assert rc == 2 and "graph file not found" in err and out == ""


def test_convert_keeps_and_restart_clears_the_derived_copy(small, tmp_path):
    from gs_splits.ondisk import convert_edges

    e, n, g, _ = small
    np.save(tmp_path / "g.npy", e)
    csr = convert_edges(tmp_path / "g.npy", tmp_path / "c", num_nodes=n)
    oc.pagerank_ondisk(csr, memory=TINY)
    assert (tmp_path / "c" / "degree_ordered" / "meta.json").is_file()
    again = convert_edges(tmp_path / "g.npy", tmp_path / "c", num_nodes=n)  # finished: as it is
    assert again.checksum == csr.checksum and (tmp_path / "c" / "degree_ordered").is_dir()
    convert_edges(tmp_path / "g.npy", tmp_path / "c", num_nodes=n, restart=True)
    assert not (tmp_path / "c" / "degree_ordered").exists()


def test_cli_raw_binary_is_converted_on_either_path(small, tmp_path, capsys):
    from gs_splits.ondisk import csr as ondisk

    e, n, _, _ = small
    raw = tmp_path / "g.bin"
    e.astype(np.int32).tofile(raw)
    raw.with_name("g.bin.json").write_text(json.dumps(
        {"format": ondisk.RAW_FORMAT, "dtype": "int32", "layout": "2xE", "num_edges": e.shape[1]}))
    np.save(tmp_path / "g.npy", e)
    rc, out, _ = _make([raw, "--num-nodes", n, "--out", tmp_path / "m", "--path", "memory"], capsys)
    assert rc == 0 and "path: in-memory" in out and (tmp_path / "g.bin.csr" / "meta.json").is_file()
    rc, out, _ = _make([raw, "--num-nodes", n, "--out", tmp_path / "o", "--path", "ondisk"], capsys)
    assert rc == 0 and "using the on-disk CSR" in out
    rc, _, _ = _make([tmp_path / "g.npy", "--num-nodes", n, "--out", tmp_path / "ref"], capsys)
    ref = (tmp_path / "ref.npz").read_bytes()
    assert (tmp_path / "m.npz").read_bytes() == ref == (tmp_path / "o.npz").read_bytes()


def test_pagerank_is_kept_for_locality(small, tmp_path, caplog):
    _, _, g, csr = small
    dg = _fresh_order(csr, tmp_path, TINY)
    first = oc.pagerank_ondisk(csr, memory=TINY)
    kept = list(dg.path.glob("pagerank-*.npy"))
    assert len(kept) == 1 and np.array_equal(np.load(kept[0]), first)
    with caplog.at_level(logging.INFO, logger="gs_splits.ondisk.properties"):
        ppr = oc.personalized_pagerank_ondisk(csr, memory=TINY)
    assert "reusing" in caplog.text and np.array_equal(ppr, personalized_pagerank(g))
    assert np.array_equal(oc.pagerank_ondisk(csr, 0.2, memory=TINY), pagerank(g, 0.2))  # other alpha
    assert len(list(dg.path.glob("pagerank-*.npy"))) == 2


def test_two_processes_building_the_copy_at_once(small, tmp_path):
    import subprocess
    import sys

    _, _, g, _ = small
    csr = oc.save_ondisk(g, tmp_path / "c")
    code = ("import sys; from gs_splits.ondisk import degree_ordered_ondisk as d; "
            "print(d(sys.argv[1], '64K').path)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [subprocess.Popen([sys.executable, "-c", code, str(csr.path)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    assert sorted(x.name for x in csr.path.iterdir()) == ["degree_ordered", "indices.npy", "indptr.npy", "meta.json"]
    assert np.array_equal(np.load(csr.path / "degree_ordered" / "nind.npy"), g.degree_ordered().nind)
