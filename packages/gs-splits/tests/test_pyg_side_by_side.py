"""The PyG side-by-side benchmark (``benchmarks/pyg_side_by_side.py``, issue 32 line 3).

Its comparison, sizes and prediction are numpy only and tested here always; the run of PyG's
``NodePropertySplit`` itself only where torch_geometric is installed (never a dependency of
gs-splits).
"""

from __future__ import annotations

import json

import numpy as np
import pytest


@pytest.fixture(scope="module")
def bench(load_benchmark):
    return load_benchmark("pyg_side_by_side")


def test_sizes_are_parsed_sorted_and_bad_ones_fail_in_one_line(bench, capsys):
    assert bench.parse_sizes("200k:1M, 50_000:250000") == [(50_000, 250_000), (200_000, 1_000_000)]
    for bad, says in [("2000", "is not NODES:EDGES"), ("3:3", "number of nodes"), ("2k:x", "'x' is not a count"),
                      ("100:5000", "at most one per pair"), ("1.5k:2.5", "not a whole number")]:
        assert bench.main(["--sizes", bad]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and says in err and err.startswith("pyg_side_by_side: error: --sizes"), err
    assert bench.main(["--sizes", "2k:10k", "--ratios", "9:1"]) == 2
    assert "unknown '9:1'" in capsys.readouterr().err
    assert bench.main([]) == 2 and "--sizes is required" in capsys.readouterr().err


def test_a_preset_is_refused_exactly_when_this_python_makes_its_sum_differ_from_one(bench):
    """PyG checks ``sum(ratios) != 1.0``; Python 3.12's float ``sum`` is compensated, so 90:10
    sums to 1.0 there and to 0.9999999999999999 before it. The script follows this Python."""
    from gs_splits.names import PAPER_SIZES

    for name, fractions in PAPER_SIZES.items():
        if sum(fractions) == 1.0:
            assert bench.ratios_of(name) == list(fractions)
        else:
            with pytest.raises(bench.UsageError, match=f"refuses {name}"):
                bench.ratios_of(name)
    import sys
    assert (sum(PAPER_SIZES["90:10"]) == 1.0) == (sys.version_info >= (3, 12))


def test_prediction_fits_the_last_two_sizes_within_1_and_2(bench):
    assert bench.predict_seconds([], 10) is None
    assert bench.predict_seconds([(100, 2.0)], 200) == pytest.approx(2.0 * 2**bench.DEFAULT_EXPONENT)
    assert bench.predict_seconds([(100, 1.0), (200, 3.0)], 400) == pytest.approx(3.0 * 2 ** np.log2(3))
    assert bench.predict_seconds([(100, 1.0), (200, 1.0)], 400) == pytest.approx(2.0)  # clamped to 1
    assert bench.predict_seconds([(100, 1.0), (200, 8.0)], 400) == pytest.approx(32.0)  # clamped to 2


def test_ties_at_the_boundary_are_named_and_left_out_of_the_untied_agreement(bench):
    # 10 nodes, ID = the 4 largest values; values 0.5 (nodes 3-6) straddle the cut
    prop = np.array([0.9, 0.8, 0.7, 0.5, 0.5, 0.5, 0.5, 0.2, 0.1, 0.0])
    pyg_id = np.zeros(10, bool)
    pyg_id[[0, 1, 2, 3]] = True
    gs_id = np.zeros(10, bool)
    gs_id[[0, 1, 2, 6]] = True
    tie = bench.boundary_tie(prop, pyg_id)
    assert (tie["straddles"], tie["value"], tie["tied"], tie["tied_id"]) == (True, 0.5, 4, 1)
    out = bench.compare(prop, pyg_id, prop, gs_id)
    assert out["agreement"] == 0.75 and out["symmetric_difference"] == 2
    assert out["untied_nodes"] == 6 and out["untied_differ"] == 0 and out["agreement_untied"] == 1.0
    assert out["tied_fraction_pyg"] == 0.4 and out["pyg_property_vs_converged"]["max_abs_diff"] == 0.0
    # no tie: a node moved by PyG's property error, inside the band of that error
    pyg_prop = prop.copy()
    pyg_prop[[3, 4, 5, 6]] = [0.53, 0.52, 0.51, 0.55]
    gs_prop = pyg_prop.copy()
    gs_prop[6] = 0.50
    pyg_id = pyg_prop >= 0.55
    gs_id = gs_prop >= 0.53
    out = bench.compare(pyg_prop, pyg_id, gs_prop, gs_id)
    assert not out["ties_pyg"]["straddles"] and not out["ties_gs"]["straddles"]
    assert out["untied_differ"] == 2 and out["differ_outside_error_band"] == 0
    assert out["error_band_delta"] == pytest.approx(0.05)


def _needs_pyg():
    pytest.importorskip("torch_geometric", reason="torch_geometric (benchmark only, never a gs-splits dependency) not installed")
    pytest.importorskip("networkx", reason="networkx (PyG's NodePropertySplit computes with it) not installed")


def test_pyg_and_gs_splits_side_by_side_on_a_small_synthetic_graph(bench, tmp_path):
    """Runs PyG's NodePropertySplit beside gs-splits on a 600-node SYNTHETIC graph, end to end
    (JSON and table); every node on which they differ is a boundary tie or within PyG's
    PageRank error of the cut."""
    _needs_pyg()
    out = tmp_path / "side.json"
    assert bench.main(["--sizes", "600:3000", "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["graphs_kind"] == "SYNTHETIC" and len(res["machine"]["load_after"]) == 3
    assert {"torch_geometric", "networkx", "gs_splits"} <= set(res["versions"])
    (graph,) = res["graphs"]
    assert [r["strategy"] for r in graph["rows"]] == list(bench.STRATEGIES)
    for row in graph["rows"]:
        a = row["agreement"]
        assert row["pyg"]["status"] == "ok" and row["pyg"]["property_dtype"] == "float32"
        assert a["id_size_pyg"] == a["id_size_gs"] == 300
        assert a["differ_outside_error_band"] == 0, row
        assert a["same_top_node"]
        if row["strategy"] == "density":  # exact in both tools: only a boundary tie may differ
            assert a["untied_differ"] == 0 and a["ties_pyg"]["tied"] == a["ties_gs"]["tied"]
        else:
            assert a["agreement"] > 0.95 and a["pyg_property_vs_converged"]["spearman"] > 0.99
    table = bench.render([str(out)])
    assert "SYNTHETIC 600 /" in table and table.count("| SYNTHETIC") == 3


def test_a_failing_pyg_step_is_recorded_and_the_run_goes_on(bench, tmp_path, monkeypatch):
    _needs_pyg()

    def fail(*args):
        raise MemoryError("no room for the networkx graph")

    monkeypatch.setattr(bench, "run_pyg", fail)
    out = tmp_path / "failed.json"
    assert bench.main(["--sizes", "50:200", "--strategies", "popularity,density", "--out", str(out)]) == 0
    rows = json.loads(out.read_text())["graphs"][0]["rows"]
    assert [r["pyg"]["status"] for r in rows] == ["failed", "failed"] and all(r["gs"]["seconds"] > 0 for r in rows)
    assert "failed: MemoryError: no room for the networkx graph | " in bench.render([str(out)])
