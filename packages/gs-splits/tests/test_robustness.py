"""Bad inputs give one clear line, never a silently wrong split (issue 19): ties, reports
without matplotlib, the wrong graph, truncated files, unwritable outputs, sparse ids,
comments, extra columns, invalid counts, ``seed=None``, the umask of written files."""

from __future__ import annotations

import json
import logging
import os
import re
import stat
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.io import savemat

from gs_splits import Split, structural_split
from gs_splits.cli import main
from gs_splits.io import load_graph
from gs_splits.scientific import scientific_split
from gs_splits.split import TIE_WARNING_FRACTION, TiedPropertyError


def _ring(n: int = 60, chords: int = 40, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    ring = np.stack([np.arange(n), (np.arange(n) + 1) % n])
    extra = rng.integers(0, n, size=(2, chords))
    return np.concatenate([ring, extra], axis=1)


def _write_edges(path, edges, sep=" ", header="# u v\n"):
    path.write_text(header + "\n".join(f"{u}{sep}{v}" for u, v in edges.T) + "\n")
    return path


def _error_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.startswith("gs-splits")]
    assert len(lines) == 1, err
    return lines[0]


# ------------------------------------------------------------------------------ ties
def test_a_property_that_is_mostly_ties_warns_records_and_can_fail(caplog):
    left, right = np.meshgrid(np.arange(10), np.arange(10, 30))
    bipartite = np.stack([left.ravel(), right.ravel()])  # clustering is 0 on every node
    with caplog.at_level(logging.WARNING, logger="gs_splits"):
        split = structural_split(bipartite, "density", seed=0)
    ties = split.metadata["ties"]
    assert ties["largest_group_size"] == 30 and ties["largest_group_fraction"] == 1.0
    assert ties["largest_group_value"] == 0.0 and ties["spans_id_ood_boundary"]
    assert ties["warning_fraction"] == TIE_WARNING_FRACTION == 0.5
    assert any("have the same density value 0" in r.getMessage() for r in caplog.records)
    with pytest.raises(TiedPropertyError, match=r"100\.0% of the nodes \(30 of 30\)"):
        structural_split(bipartite, "density", seed=0, on_ties="raise")
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="gs_splits"):
        ok = structural_split(_ring(), "popularity", seed=0, on_ties="raise")
    assert ok.metadata["ties"]["largest_group_fraction"] <= 0.5
    assert not any("same popularity value" in r.getMessage() for r in caplog.records)


def test_fail_on_ties_on_the_command_line(tmp_path, capsys):
    left, right = np.meshgrid(np.arange(10), np.arange(10, 30))
    path = _write_edges(tmp_path / "bip.txt", np.stack([left.ravel(), right.ravel()]))
    assert main(["make", str(path), "-s", "density", "--fail-on-ties", "--out", str(tmp_path / "s")]) == 2
    line = _error_line(capsys)
    assert str(path) in line and "seeded random tie-break" in line
    assert not (tmp_path / "s.npz").exists()
    assert main(["make", str(path), "-s", "density", "--out", str(tmp_path / "s")]) == 0
    assert Split.load(tmp_path / "s").metadata["ties"]["largest_group_size"] == 30


# ------------------------------------------------------------------------------ report
def _made(tmp_path, capsys, name="g.txt", seed=0):
    graph = _write_edges(tmp_path / name, _ring(seed=seed))
    assert main(["make", str(graph), "--out", str(tmp_path / f"split-{seed}")]) == 0
    capsys.readouterr()
    return graph, tmp_path / f"split-{seed}.npz"


def test_report_without_matplotlib_writes_markdown_and_says_how_to_get_figures(tmp_path, capsys, monkeypatch):
    graph, split = _made(tmp_path, capsys)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    out = tmp_path / "rep"
    assert main(["report", str(split), "--graph", str(graph), "--out-dir", str(out), "--distance-sources", "4"]) == 0
    captured = capsys.readouterr()
    assert "pip install 'matplotlib>=3.7' 'scikit-learn>=1.3'" in captured.err
    md = (out / "report.md").read_text()
    assert "Part sizes" in md and "Not drawn: matplotlib is not installed" in md
    assert not list(out.glob("*.png"))


def test_report_with_another_graph_is_an_error_unless_overridden(tmp_path, capsys):
    _, split = _made(tmp_path, capsys)
    other = _write_edges(tmp_path / "other.txt", _ring(seed=1))
    out = tmp_path / "rep"
    assert main(["report", str(split), "-g", str(other), "-o", str(out), "--no-figures"]) == 2
    line = _error_line(capsys)
    assert str(other) in line and "fingerprint differs" in line and "--allow-other-graph" in line
    assert not (out / "report.md").exists()
    assert main(["report", str(split), "-g", str(other), "-o", str(out), "--no-figures",
                 "--allow-other-graph", "--distance-sources", "4"]) == 0
    assert "not the graph the split was made from" in capsys.readouterr().err
    assert (out / "report.md").exists()


# ------------------------------------------------------------------------------ bad files
@pytest.mark.parametrize("kind", ["npz", "mat", "npy", "split"])
def test_truncated_inputs_give_one_line_naming_the_file(tmp_path, capsys, kind):
    e = _ring()
    if kind == "mat":
        path = tmp_path / "g.mat"
        savemat(path, {"edges": e, "labels": np.zeros(60)})
    elif kind == "npy":
        path = tmp_path / "g.npy"
        np.save(path, e)
    else:
        path = tmp_path / "g.npz"
        np.savez(path, edge_index=e)
    if kind == "split":
        graph = _write_edges(tmp_path / "g.txt", e)
        assert main(["make", str(graph), "--out", str(tmp_path / "s")]) == 0
        path = tmp_path / "s.npz"
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])
    if kind == "split":
        args = ["report", str(path), "-g", str(tmp_path / "g.txt"), "-o", str(tmp_path / "r"), "--no-figures"]
    else:
        args = ["make", str(path), "--out", str(tmp_path / "x")]
    capsys.readouterr()
    assert main(args) == 2
    line = _error_line(capsys)
    assert str(path) in line and ("truncated" in line or "cannot read" in line), line


def test_unwritable_output_gives_one_line_naming_it(tmp_path, capsys):
    graph = _write_edges(tmp_path / "g.txt", _ring())
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    assert main(["make", str(graph), "--out", str(blocker / "split")]) == 2
    line = _error_line(capsys)
    assert str(blocker) in line
    _, split = _made(tmp_path, capsys)
    assert main(["report", str(split), "-g", str(graph), "-o", str(blocker), "--no-figures",
                 "--distance-sources", "4"]) == 2
    assert str(blocker) in _error_line(capsys)


# ------------------------------------------------------------------------------ ids and columns
def test_sparse_ids_are_refused_with_a_hint_and_relabelled_on_request(tmp_path, capsys):
    path = tmp_path / "sparse.txt"
    path.write_text("0 1\n1 2\n2 0\n2 1000000000\n7 1000000000\n0 7\n")
    assert main(["make", str(path), "--out", str(tmp_path / "s")]) == 2
    line = _error_line(capsys)
    assert str(path) in line and "--relabel" in line and "1000000001 nodes" in line
    assert main(["make", str(path), "--relabel", "--out", str(tmp_path / "s")]) == 0
    split = Split.load(tmp_path / "s")
    ids = np.load(tmp_path / "s.node_ids.npy")
    assert ids.tolist() == [0, 1, 2, 7, 1_000_000_000]
    assert split.num_nodes == 5 and split.metadata["relabel"]["node_ids_file"] == "s.node_ids.npy"
    # the same graph, numbered densely by hand, gives the same split
    dense = _write_edges(tmp_path / "dense.txt", np.array([[0, 1, 2, 2, 3, 0], [1, 2, 0, 4, 4, 3]]))
    assert main(["make", str(dense), "--out", str(tmp_path / "d")]) == 0
    assert Split.load(tmp_path / "d").masks.keys() == split.masks.keys()
    for k, m in Split.load(tmp_path / "d").masks.items():
        assert np.array_equal(m, split.masks[k]), k
    # the report reads the graph with the same relabelling
    assert main(["report", str(tmp_path / "s.npz"), "-g", str(path), "-o", str(tmp_path / "r"),
                 "--no-figures", "--distance-sources", "2"]) == 0


def test_commas_inside_comments_do_not_switch_the_delimiter(tmp_path):
    e = _ring(20, 5)
    body = "\n".join(f"{u} {v}  # weight 1,5" if i % 3 == 0 else f"{u}\t{v}" for i, (u, v) in enumerate(e.T))
    spaced = tmp_path / "spaced.txt"
    spaced.write_text("# source, target\n" + body + "\n")
    comma = tmp_path / "comma.csv"
    comma.write_text("# source target\n" + "\n".join(f"{u}, {v} # a,b" for u, v in e.T) + "\n")
    assert np.array_equal(load_graph(spaced).graph, e)
    assert np.array_equal(load_graph(comma).graph, e)


def test_extra_columns_follow_one_documented_policy(tmp_path, caplog):
    e = _ring(20, 5)
    ints = tmp_path / "ints.txt"
    ints.write_text("\n".join(f"{u} {v} 3" for u, v in e.T))
    floats = tmp_path / "floats.txt"
    floats.write_text("\n".join(f"{u} {v} 0.25" for u, v in e.T))
    with caplog.at_level(logging.WARNING, logger="gs_splits"):
        a, b = load_graph(ints).graph, load_graph(floats).graph
    assert np.array_equal(a, e) and np.array_equal(b, e)
    assert sum("ignored 1 extra column(s)" in r.getMessage() for r in caplog.records) == 2
    ragged = tmp_path / "ragged.txt"
    ragged.write_text("0 1 0.5\n1 2\n")
    with pytest.raises(ValueError, match=r"ragged\.txt: line 2 has 2 column\(s\), the first data line has 3"):
        load_graph(ragged)
    bad = tmp_path / "bad.txt"
    bad.write_text("0 1\n1 2.0\n")
    with pytest.raises(ValueError, match=r"bad\.txt: line 2: node id '2\.0' is not a non-negative integer"):
        load_graph(bad)


# ------------------------------------------------------------------------------ counts and seeds
@pytest.mark.parametrize("args", [["--domains", "0"], ["--domains", "-3"], ["--num-nodes", "0"], ["--num-nodes", "-1"],
                                  ["--num-nodes", str(10**12)], ["--num-nodes", str(2**31)]])
def test_invalid_counts_are_rejected_in_one_line(tmp_path, capsys, args):
    graph = _write_edges(tmp_path / "g.txt", _ring())
    with pytest.raises(SystemExit) as exc:
        main(["make", str(graph), *args, "--out", str(tmp_path / "s")])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    want = "must be from 1 to 2**31 - 1" if args[0] == "--num-nodes" else "must be >= 1"
    assert len(err.splitlines()) == 1 and want in err and args[0] in err, err
    assert not (tmp_path / "s.npz").exists()


def test_invalid_counts_in_the_api():
    with pytest.raises(ValueError, match="num_domains must be an integer >= 1, got 0"):
        structural_split(_ring(), num_domains=0)
    with pytest.raises(ValueError, match="num_nodes must be a positive integer"):
        structural_split(_ring(), num_nodes=0)
    with pytest.raises(ValueError, match="num_nodes must be a positive integer"):
        structural_split(_ring(), num_nodes=-5)


def test_more_domains_than_nodes_is_refused(tmp_path, capsys):
    """Issue 56: --domains 1000000000 on a 40-node graph was accepted (most domains empty)."""
    n = int(_ring().max()) + 1
    with pytest.raises(ValueError, match=rf"num_domains must be at most the graph's {n} node\(s\).*got {n + 1}"):
        structural_split(_ring(), num_domains=n + 1)
    assert structural_split(_ring(), num_domains=n).domains.max() < n  # n itself is accepted
    graph = _write_edges(tmp_path / "g.txt", _ring())
    assert main(["make", str(graph), "--domains", "1000000000", "--out", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "argument --domains" in err and "1000000000" in err, err
    assert not (tmp_path / "s.npz").exists()


@pytest.mark.parametrize("value", ["-0.1,0.2,0.2,0.3,0.4", "-.5,0.5,0.5,0.25,0.25"])
@pytest.mark.parametrize("joined", [False, True])
def test_negative_sizes_are_named_with_or_without_equals(tmp_path, capsys, value, joined):
    """Issue 56: '--sizes -0.1,...' (a space, not '=') got argparse's "expected one argument"."""
    graph = _write_edges(tmp_path / "g.txt", _ring())
    opt = [f"--sizes={value}"] if joined else ["--sizes", value]
    with pytest.raises(SystemExit) as exc:
        main(["make", str(graph), *opt, "--out", str(tmp_path / "s")])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "argument --sizes" in err and "non-negative" in err, err


def test_seed_none_records_the_drawn_seed_and_reproduces_the_split():
    e = _ring()
    a = structural_split(e, "random", seed=None)
    b = structural_split(e, "random", seed=None)
    assert isinstance(a.metadata["seed"], int) and a.metadata["seed"] != b.metadata["seed"]
    again = structural_split(e, "random", seed=a.metadata["seed"])
    assert again == a
    json.dumps(a.metadata)  # the drawn seed is stored as it is
    domains = np.repeat(np.array(["a", "b", "c", "d"]), 25)
    s = scientific_split(domains, source=["a", "b"], seed=None)
    assert scientific_split(domains, source=["a", "b"], seed=s.metadata["seed"]) == s


# ------------------------------------------------------------------------------ umask
@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_split_files_follow_the_umask(tmp_path, mask):
    split = structural_split(_ring(), seed=0)
    old = os.umask(mask)
    try:
        path = split.save(tmp_path / "s")
    finally:
        os.umask(old)
    for p in (path, path.with_suffix(".json")):
        assert stat.S_IMODE(p.stat().st_mode) == 0o666 & ~mask


# ------------------------------------------------------------------ no writable numba cache (issue 34)
def test_make_runs_without_any_writable_numba_cache(tmp_path, shared_datasets):
    """``HOME`` unwritable, ``NUMBA_CACHE_DIR`` unwritable, the package folder read-only (a copy
    of gs_splits whose ``__pycache__`` is a file, so nothing can be written beside the kernels,
    even by root): ``gs-splits --help`` and ``make`` on CoraML exit 0 with one log line saying
    where the kernels are cached instead. Before issue 34, numba's ``RuntimeError: cannot cache
    function`` stopped both at import."""
    import shutil
    import subprocess

    import gs_splits

    mat = shared_datasets / "structural-shifts" / "cora-ml" / "data.mat"
    if not mat.is_file():
        pytest.skip(f"CoraML is not in {shared_datasets} (structural-shifts/cora-ml/data.mat)")
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file: nothing can be created below it")
    pkg = tmp_path / "ro" / "gs_splits"
    shutil.copytree(Path(gs_splits.__file__).parent, pkg,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    (pkg / "__pycache__").write_text("a file where numba's in-tree cache folder would go")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env.update(
        HOME=str(blocker / "home"), XDG_CACHE_HOME=str(blocker / "cache"),
        NUMBA_CACHE_DIR=str(blocker / "numba"), PYTHONDONTWRITEBYTECODE="1", TMPDIR=str(tmp),
        PYTHONPATH=os.pathsep.join([str(pkg.parent), env.get("PYTHONPATH", "")]),
    )
    cmd = [sys.executable, "-m", "gs_splits.cli"]
    helped = subprocess.run(cmd + ["--help"], env=env, capture_output=True, text=True, timeout=300)
    assert helped.returncode == 0, helped.stderr[-2000:]
    out = tmp_path / "split"
    made = subprocess.run(cmd + ["make", str(mat), "--strategy", "popularity", "--out", str(out)],
                          env=env, capture_output=True, text=True, timeout=600)
    assert made.returncode == 0, made.stderr[-2000:]
    assert "Traceback" not in made.stderr
    notes = [ln for ln in made.stderr.splitlines() if "numba finds no writable cache folder" in ln]
    assert len(notes) == 1, made.stderr
    assert str(tmp) in notes[0]
    assert list(tmp_path.glob("split*.npz")), sorted(p.name for p in tmp_path.iterdir())


# ------------------------------------------------------ issue 34: messages that misled
def test_a_huge_sparse_adjacency_with_few_edges_is_refused_up_front_naming_the_file(tmp_path, capsys):
    """A scipy.sparse adjacency of shape 3e8 with 5 edges: a generic "out of memory" after
    1.3 GB before issue 34; now refused before any per-node array, naming the file and the
    counts. A COO file holds no ``indptr``, so the test itself allocates nothing large; the
    CSR file's size check reads only its ``shape`` and the header of ``indices``."""
    import scipy.sparse as sp

    n = 300_000_000
    r, c = np.arange(5), (np.arange(5) + 1) % 5
    coo = tmp_path / "huge.npz"
    sp.save_npz(coo, sp.coo_array((np.ones(5), (r, c)), shape=(n, n)), compressed=True)
    with pytest.raises(ValueError, match=r"huge\.npz: a scipy\.sparse adjacency of shape 300000000 x "
                                         r"300000000 with 5 stored entries: at most 10 of its 300000000"):
        load_graph(coo)
    assert main(["make", str(coo), "--out", str(tmp_path / "s")]) == 2
    line = _error_line(capsys)
    assert "huge.npz" in line and "--num-nodes 300000000" in line and "out of memory" not in line
    # CSR written by hand with a short indptr: the check must answer from shape + indices alone
    csr = tmp_path / "huge-csr.npz"
    np.savez(csr, indices=c.astype(np.int32), indptr=np.array([0, 1, 2, 3, 4, 5], dtype=np.int32),
             format=np.array("csr"), shape=np.array([n, n]), data=np.ones(5))
    with pytest.raises(ValueError, match=r"huge-csr\.npz: a scipy\.sparse adjacency of shape 300000000"):
        load_graph(csr)
    load_graph(coo, num_nodes=n)  # --num-nodes says the isolated nodes are real: accepted


def test_an_output_name_that_is_a_directory_is_named_not_the_temporary_file(tmp_path, capsys):
    g = _write_edges(tmp_path / "g.txt", _ring())
    (tmp_path / "out.npz").mkdir()
    assert main(["make", str(g), "--out", str(tmp_path / "out")]) == 2
    line = _error_line(capsys)
    assert f"{tmp_path / 'out.npz'}: is a directory" in line and ".tmp" not in line


def test_out_with_a_trailing_slash_writes_into_that_folder(tmp_path, capsys):
    g = _write_edges(tmp_path / "g.txt", _ring())
    assert main(["make", str(g), "--strategy", "density", "--out", f"{tmp_path / 'o'}/"]) == 0
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["g-density.json", "g-density.npz"]
    assert not (tmp_path / "o.npz").exists()
    assert f"wrote {tmp_path / 'o' / 'g-density.npz'}" in capsys.readouterr().out


def test_sizes_that_do_not_sum_to_one_print_the_actual_sum(tmp_path, capsys):
    """``(sum 1)`` for a sum of 1.00000001 before issue 34."""
    g = _write_edges(tmp_path / "g.txt", _ring())
    with pytest.raises(SystemExit) as exc:  # checked while parsing, by the library's rule
        main(["make", str(g), "--sizes", "0.3,0.1,0.1,0.1,0.40000001", "--out", str(tmp_path / "s")])
    assert exc.value.code == 2
    line = _error_line(capsys)
    assert "(sum 1.00000001, +1e-08 from 1)" in line and "(sum 1)" not in line


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX owners and modes")
def test_a_numba_cache_folder_others_can_write_or_a_link_is_not_reused(tmp_path, monkeypatch):
    """QA of issue 34: the fallback cache folder ``<tmp>/gs-splits-numba-<uid>`` has a
    predictable name, and one that someone else made (world-writable) or a link to one was
    reused; numba unpickles its index files from there, so a planted cache would run code."""
    import tempfile

    from gs_splits import _kernels

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    planted = tmp_path / f"gs-splits-numba-{os.getuid()}"
    planted.mkdir()
    planted.chmod(0o777)
    got = _kernels._temporary_cache_dir()
    assert got is not None and Path(got) != planted and Path(got).parent == tmp_path
    assert stat.S_IMODE(os.stat(got).st_mode) == 0o700
    planted.rmdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    planted.symlink_to(elsewhere)
    got = _kernels._temporary_cache_dir()
    assert got is not None and Path(got) not in (planted, elsewhere)
    planted.unlink()
    assert _kernels._temporary_cache_dir() == str(planted)  # a private folder of ours is reused


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX owners and modes")
def test_the_numba_fallback_cache_is_one_reused_folder_not_one_per_run(tmp_path, monkeypatch):
    """Issue 56: where <tmp>/gs-splits-numba-<uid> was not ours alone, every run made a new
    mkdtemp folder, never reused or removed, while the log said "first run only"."""
    import tempfile

    from gs_splits import _compile_log, _kernels

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setitem(_kernels._cache_state, "throwaway", False)
    base = tmp_path / f"gs-splits-numba-{os.getuid()}"
    base.mkdir()
    base.chmod(0o777)  # taken: not ours alone
    first = _kernels._temporary_cache_dir()
    assert first == f"{base}-1" and _kernels._temporary_cache_dir() == first  # reused, run after run
    assert sorted(p.name for p in tmp_path.iterdir()) == [base.name, f"{base.name}-1"]  # no litter
    for k in range(1, _kernels.CACHE_DIR_ALTERNATIVES + 1):  # all nine names taken
        alt = Path(f"{base}-{k}")
        alt.mkdir(exist_ok=True)
        alt.chmod(0o777)
    registered = []
    monkeypatch.setattr(_kernels.atexit, "register", lambda f, *a, **k: registered.append((f, a)))
    last = _kernels._temporary_cache_dir()
    assert Path(last).parent == tmp_path and not last.startswith(str(base))
    assert registered == [(_kernels.shutil.rmtree, (last,))] and _kernels._cache_state["throwaway"]
    assert "every run compiles" in _compile_log.MESSAGE_EVERY_RUN


# ------------------------------------------------------------------------------ node-id text
@pytest.mark.parametrize("tok", ["1_0", "+5", "\u0661\u0662", "\uff11\uff12", "-0", " 5x"])
def test_text_node_ids_are_ascii_digits_only(tmp_path, tok):
    """Issue 56: Python's int() reads '1_0' as 10, '+5' as 5 and Arabic-Indic / full-width digits
    as 12; both readers (in memory and the on-disk convert) refuse them, naming line and id."""
    from gs_splits.ondisk import convert_edges

    f = tmp_path / "ids.txt"
    f.write_text(f"0 1\n{tok.strip()} 2\n", encoding="utf-8")
    want = rf"ids\.txt: line 2: node id '{re.escape(tok.strip())}' is not a non-negative integer \(ASCII digits"
    with pytest.raises(ValueError, match=want):
        load_graph(f)
    with pytest.raises(ValueError, match=want):
        convert_edges(f, tmp_path / "csr")


@pytest.mark.parametrize("tok", [str(2**64), str(2**63), "1" + "0" * 18])
def test_text_node_id_past_the_limit_is_called_too_large(tmp_path, tok):
    from gs_splits.ondisk import convert_edges

    f = tmp_path / "ids.txt"
    f.write_text(f"0 1\n1 {tok}\n")
    want = rf"line 2: node id '{tok}' is too large \(at most 18 digits"
    with pytest.raises(ValueError, match=want):
        load_graph(f)
    with pytest.raises(ValueError, match=want):
        convert_edges(f, tmp_path / "csr")
    # the largest accepted id still reads (relabelled: it is one of three ids)
    f.write_text(f"0 1\n1 {'9' * 18}\n")
    assert load_graph(f, relabel=True).node_ids[-1] == 10**18 - 1


@pytest.mark.parametrize("args", [["make", "G", "--out", ""], ["make", "G", "--out", " "], ["convert", "G", ""],
                                  ["make", "G", "--path", "ondisk", "--workdir", "", "--out", "x"],
                                  ["report", "S", "--graph", "G", "--out-dir", ""]])
def test_an_empty_or_blank_output_path_is_refused(tmp_path, capsys, monkeypatch, args):
    """Issue 56 QA: --out '' failed "PosixPath('.') has an empty name" and --out ' ' wrote ' .npz'."""
    graph = _write_edges(tmp_path / "g.txt", _ring())
    monkeypatch.chdir(tmp_path)
    argv = [str(graph) if a == "G" else str(tmp_path / "s.npz") if a == "S" else a for a in args]
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "an empty or blank path" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.txt"]


@pytest.mark.parametrize(("kind", "command"), [("dev-zero", "make"), ("dev-zero", "convert"), ("fifo", "convert")])
def test_a_graph_path_that_is_not_a_regular_file_is_named(tmp_path, capsys, kind, command):
    """Issue 56 QA D14-D15: make of /dev/zero ran out of memory, convert of it hung; convert
    seeks in its input, so a FIFO is named too (make reads one: the next test)."""
    g = tmp_path / "g.txt"
    if kind == "fifo":
        os.mkfifo(g)
    else:
        g.symlink_to("/dev/zero")
    argv = ["make", str(g), "--out", str(tmp_path / "s")] if command == "make" else ["convert", str(g), str(tmp_path / "c")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    what = "a FIFO (named pipe)" if kind == "fifo" else "a character device"
    assert len(err.splitlines()) == 1 and f"{g}: is {what}, not a regular file" in err, err
    assert not (tmp_path / "c").exists()


def test_a_csr_folder_whose_meta_json_is_nested_deep_is_one_line(tmp_path, capsys):
    """Issue 56 QA H19: RecursionError from an on-disk CSR folder's 100000-deep meta.json."""
    from gs_splits.ondisk import convert_edges

    g = _write_edges(tmp_path / "g.txt", _ring())
    convert_edges(g, tmp_path / "csr")
    (tmp_path / "csr" / "meta.json").write_text("[" * 100000 + "]" * 100000)
    assert main(["make", str(tmp_path / "csr"), "--out", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "meta.json: not readable JSON" in err and "internal" not in err, err


def test_the_default_memory_budget_respects_the_address_space_limit(monkeypatch):
    """Issue 56 QA H23: under ulimit -v 3 GB a 40-node conversion asked for a 14 GiB buffer."""
    import resource

    from gs_splits.ondisk import default_memory

    monkeypatch.setattr(resource, "getrlimit", lambda what: (3 * 2**30, resource.RLIM_INFINITY))
    assert default_memory() == int(3 * 2**30 * 0.6)
    monkeypatch.setattr(resource, "getrlimit", lambda what: (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    unlimited = default_memory()
    monkeypatch.setattr(resource, "getrlimit", lambda what: (2**62, resource.RLIM_INFINITY))
    assert default_memory() == unlimited  # a limit above the RAM changes nothing


def test_make_reads_an_edge_list_from_a_pipe(tmp_path, capsys):
    """Issue 56 QA D16: `gs-splits make <(zcat edges.txt.gz)` (a FIFO with a writer) keeps working."""
    import threading

    text = "".join(f"{u} {v}\n" for u, v in _ring().T)
    fifo = tmp_path / "edges.txt"
    os.mkfifo(fifo)

    def write():
        with open(fifo, "w") as fh:
            fh.write(text)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    assert main(["make", str(fifo), "--out", str(tmp_path / "s")]) == 0
    writer.join(timeout=10)
    assert (tmp_path / "s.npz").is_file()
