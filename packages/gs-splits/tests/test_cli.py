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
    assert main(["make", str(path), "--sizes", "0.5,0.5,0.1,0.1,0.1", "--out", str(tmp_path / "x")]) == 2
    assert "sum to 1" in capsys.readouterr().err
    assert main(["make", str(tmp_path / "nope.txt"), "--out", str(tmp_path / "x")]) == 2
    with pytest.raises(SystemExit):
        main(["make", "--help"])
    assert "in-distribution" in capsys.readouterr().out
