"""The gs-splits command line on the real CoraML .mat and on a plain edge list."""

from __future__ import annotations

import numpy as np
import pytest

from gs_splits import Split
from gs_splits.cli import main


def test_make_and_report_on_coraml(coraml, tmp_path, capsys):
    out = tmp_path / "coraml-loc"
    assert main(["make", str(coraml["path"]), "--strategy", "locality", "--seed", "0", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "2995 nodes, 8158 undirected edges" in text and "in_train 898" in text
    s = Split.load(out.with_suffix(".npz"))
    assert s.metadata["strategy"] == "locality" and s.sizes()["out_test"] == 1199
    rep = tmp_path / "report"
    assert main(["report", str(out) + ".npz", "--graph", str(coraml["path"]), "--out-dir", str(rep), "--distance-sources", "16", "--tsne-max-nodes", "150"]) == 0
    md = (rep / "report.md").read_text()
    for section in ("Part sizes", "Class balance", "Degree distribution", "Pairwise graph distances", "graph.png", "features_tsne.png"):
        assert section in md
    for png in ("statistics.png", "graph.png", "features_tsne.png"):
        assert (rep / png).stat().st_size > 10_000


def test_make_and_report_on_edge_list(tmp_path, capsys):
    rng = np.random.default_rng(0)
    e = rng.integers(0, 120, size=(400, 2))
    path = tmp_path / "edges.txt"
    path.write_text("# u v\n" + "\n".join(f"{u} {v}" for u, v in e))
    out = tmp_path / "s"
    assert main(["make", str(path), "-s", "density", "--sizes", "70:30", "--out", str(out)]) == 0
    assert "symmetrised" in capsys.readouterr().out
    s = Split.load(out)
    assert s.in_distribution.sum() == int(0.7 * s.num_nodes)
    rep = tmp_path / "r"
    assert main(["report", str(out) + ".npz", "-g", str(path), "-o", str(rep)]) == 0
    assert (rep / "graph.png").exists() and (rep / "statistics.png").exists()
    assert not (rep / "features_tsne.png").exists()


def test_cli_errors_are_messages(tmp_path, capsys):
    path = tmp_path / "edges.csv"
    path.write_text("0,1\n1,2\n")
    with pytest.raises(SystemExit) as exc:  # checked while parsing: names --sizes
        main(["make", str(path), "--sizes", "0.5,0.5,0.1,0.1,0.1", "--out", str(tmp_path / "x")])
    assert exc.value.code == 2 and "--sizes" in (err := capsys.readouterr().err) and "must sum to 1" in err
    assert main(["make", str(tmp_path / "nope.txt"), "--out", str(tmp_path / "x")]) == 2
    with pytest.raises(SystemExit):
        main(["make", "--help"])
    assert "in-distribution" in capsys.readouterr().out


def _fails(argv, capsys):
    """The one-line error of a command that must fail with exit status 2 (argparse's or ours)."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, (code, err)
    return err


def test_option_errors_name_the_file_or_option_they_come_from(tmp_path, capsys):
    """From a new-user trial: errors about --property-file / --labels named the graph file, a
    wrong --sizes / --seed surfaced late as the graph's error, --distance-sources 0 wrote a
    broken table, and the graph file given as the split read 'split file not found: X.npz'."""
    edges = tmp_path / "edges.txt"
    edges.write_text("0 1\n1 2\n2 3\n3 0\n0 2\n4 5\n5 6\n6 4\n7 4\n8 9\n9 0\n")  # 10 nodes
    out = str(tmp_path / "s")
    short = tmp_path / "short.npy"
    np.save(short, np.arange(4.0))
    err = _fails(["make", str(edges), "--property-file", str(short), "--out", out], capsys)
    assert err.startswith(f"gs-splits make: error: {short}: ") and "one value per node, shape (10,), got (4,)" in err
    err = _fails(["make", str(edges), "--property-file", str(edges), "--out", out], capsys)
    assert f"{edges}: not a .npy file" in err and "allow_pickle" not in err
    nan = tmp_path / "nan.npy"
    np.save(nan, np.array([1.0, np.nan, *range(8)]))
    assert f"{nan}: property contains 1 NaN" in _fails(
        ["make", str(edges), "--property-file", str(nan), "--out", out], capsys)
    err = _fails(["make", str(edges), "--strategy", "density", "--property-file", str(short), "--out", out], capsys)
    assert "--property-file" in err and "--strategy" in err
    assert "--sizes" in _fails(["make", str(edges), "--sizes", "0.5,0.5", "--out", out], capsys)
    assert "--sizes" in _fails(["make", str(edges), "--sizes=-0.1,0.3,0.1,0.3,0.4", "--out", out], capsys)
    assert "--sizes" in _fails(["make", str(edges), "--sizes", "60:40", "--out", out], capsys)
    # the library's tolerance (1e-9), not a looser one of the CLI's
    assert "--sizes" in _fails(["make", str(edges), "--sizes", "0.3,0.1,0.1,0.1,0.4000001", "--out", out], capsys)
    assert "--seed" in _fails(["make", str(edges), "--seed", "-1", "--out", out], capsys)
    good = tmp_path / "prop.npy"
    np.save(good, np.arange(10.0))
    assert main(["make", str(edges), "--property-file", str(good), "--out", out, "-v"]) == 0  # -v after too
    from gs_splits.cli import _parser

    for argv in (["-v", "make", "g", "-o", "x"], ["make", "g", "-o", "x", "-v"], ["make", "g", "-o", "x"]):
        assert _parser().parse_args(argv).verbose is ("-v" in argv), argv  # before, after, neither
    assert f"split (property of {good}, seed 0)" in capsys.readouterr().out
    rep = str(tmp_path / "rep")
    assert "--distance-sources" in _fails(
        ["report", out + ".npz", "-g", str(edges), "-o", rep, "--distance-sources", "0"], capsys)
    assert f"{edges}: not a split file" in _fails(["report", str(edges), "-g", str(edges), "-o", rep], capsys)
    for bad, says in ((np.linspace(0, 1, 10), "non-integer"), (np.zeros((10, 3)), "argmax(1)"),
                      (np.zeros(20, int), "one entry per node (10), got 20")):
        labels = tmp_path / "labels.npy"
        np.save(labels, bad)
        err = _fails(["report", out + ".npz", "-g", str(edges), "-o", rep, "--labels", str(labels),
                      "--no-figures"], capsys)
        assert f"{labels}: labels must" in err and says in err, err
    # a negative label is an unlabelled node (PyG's -1): left out of the class balance, counted
    np.save(labels, np.array([0, 1, -1, 0, 1, 0, -1, 1, 0, 1]))
    assert main(["report", out + ".npz", "-g", str(edges), "-o", rep, "--labels", str(labels),
                 "--no-figures"]) == 0
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "2 node(s) with a negative label (unlabelled) left out" in md
    header = next(line for line in md.splitlines() if line.startswith("| part | 0 |"))
    assert header == "| part | 0 | 1 |"


def test_compiling_the_kernels_is_logged_once_and_only_for_ours(caplog, monkeypatch):
    """numba compiles a kernel at its first call (seconds, on a new machine): one INFO line
    says so, once per process; compiling someone else's numba function says nothing."""
    import logging

    import numba

    from gs_splits import _compile_log

    monkeypatch.setattr(_compile_log.LISTENER, "told", False)

    def ours(x):
        return x + 1

    def theirs(x):
        return x + 2

    ours.__module__ = "gs_splits._kernels"  # as if it were one of our kernels
    theirs.__module__ = "somebody_else"
    with caplog.at_level(logging.INFO, logger="gs_splits.kernels"):
        assert numba.njit(theirs)(1) == 3
        assert [r.message for r in caplog.records] == []
        assert numba.njit(ours)(1) == 2
        ours2 = numba.njit(ours)
        assert ours2(1.5) == 2.5  # a second compilation: no second line
    assert [r.message for r in caplog.records] == [_compile_log.MESSAGE]
    assert "compiling kernels (first run only" in _compile_log.MESSAGE


def test_the_cli_shows_the_compile_line_without_verbose(tmp_path, capsys):
    """``gs-splits`` sets the kernels' logger to INFO, so the line shows at the default level."""
    import logging

    from gs_splits.cli import main

    logger = logging.getLogger("gs_splits.kernels")
    saved = logger.level
    try:
        missing = str(tmp_path / "missing.npz")
        assert main(["report", missing, "-g", missing, "-o", str(tmp_path / "o")]) == 2
        assert logger.getEffectiveLevel() == logging.INFO
    finally:
        logger.setLevel(saved)


def test_every_default_is_shown_in_help(options_without_shown_default):
    """An option whose default is a value (not None / False) says it in its help text."""
    from gs_splits.cli import _parser

    assert options_without_shown_default(_parser()) == []


def test_a_split_whose_npz_is_missing_is_not_found_even_by_its_json(tmp_path, capsys):
    from gs_splits import structural_split

    structural_split(np.array([[0, 1, 2, 3], [1, 2, 3, 4]]), "popularity", seed=0).save(tmp_path / "s")
    (tmp_path / "s.npz").unlink()
    err = _fails(["report", str(tmp_path / "s.json"), "-g", str(tmp_path / "none.txt"), "-o", str(tmp_path / "r")], capsys)
    assert "split file not found" in err and "not a split file" not in err


def test_an_out_folder_names_the_split_after_the_default_strategy(tmp_path):
    """--strategy defaults to None (so argparse can tell it from --property-file); the default
    popularity is filled in once, before the output name is made from it."""
    edges = tmp_path / "edges.txt"
    edges.write_text("0 1\n1 2\n2 3\n3 0\n0 2\n4 5\n5 6\n6 4\n7 4\n8 9\n9 0\n")
    assert main(["make", str(edges), "--out", f"{tmp_path}/out/"]) == 0
    assert (tmp_path / "out" / "edges-popularity.npz").is_file()
    assert Split.load(tmp_path / "out" / "edges-popularity.npz").metadata["strategy"] == "popularity"
