"""``gs-bench report`` on a finished run folder works with the data root removed (issue 20):
the jobs store what the report shows of their splits, the report loads no data and computes
no split."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

MEASURED = Path(__file__).resolve().parents[1] / "measured"


SPLITS = ("popularity", "density")


def _no_data_env(tmp: Path) -> dict[str, str]:
    """Every place gs-data / gs-bench look for data or caches points to a missing folder."""
    gone = tmp / "no-such-folder"
    return dict(os.environ, GS_DATA_ROOT=str(gone / "data-root"), GS_SHARED_DATA=str(gone / "shared"),
                XDG_CACHE_HOME=str(gone / "cache"), MPLCONFIGDIR=str(tmp / "matplotlib"))


def _cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "gs_bench.cli", *args], capture_output=True, text=True,
                          timeout=900, env=env)


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory, tiny_suite):
    """A finished tiny run; its data root (split caches) is deleted afterwards."""
    d = tmp_path_factory.mktemp("offline")
    (d / "tiny.toml").write_text(tiny_suite(seeds=1, max_epochs=2))
    data_root = d / "data-root"
    env = dict(os.environ, GS_DATA_ROOT=str(data_root))
    res = _cli("run", str(d / "tiny.toml"), "--out", str(d / "out"), "--no-progress", env=env)
    assert res.returncode == 0, res.stderr
    assert (data_root / "processed" / "splits").is_dir()  # the run did cache its splits there ...
    shutil.rmtree(data_root)  # ... and now they are gone
    shutil.rmtree(d / "out" / "report")
    return d / "out"


def _records(out: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((out / "results").glob("*.json"))]


def test_each_job_stores_its_split_statistics_and_one_layout_per_split(finished_run):
    recs = _records(finished_run)
    assert sorted(r["job"]["params"]["strategy"] for r in recs) == sorted(SPLITS)
    for r in recs:
        block = r["metrics"]["split"]
        st = block["statistics"]
        # the stored statistics describe the job's own split
        assert {k: st["sizes"][k] for k in r["metrics"]["sizes"]} == r["metrics"]["sizes"]
        assert st["sizes"]["ID"] + st["sizes"]["OOD"] == block["num_nodes"] == 3008
        assert set(st["class_balance"]) == set(st["degree_hist"]) == {"ID", "OOD"}
        assert sum(st["property_hist"]["ID"]) + sum(st["property_hist"]["OOD"]) > 0
        assert st["distances"]["ID"] and st["distances"]["OOD"]
        assert block["picture"].startswith("split-pictures/") and (finished_run / block["picture"]).is_file()
    assert len(list((finished_run / "split-pictures").glob("*.json"))) == len(SPLITS)


def _guard_data_and_splits(monkeypatch):
    """Make every way of loading data or computing a split fail loudly, in this process."""
    import gs_data
    import gs_data.datasets
    import gs_data.splits
    import gs_splits
    import gs_splits.diagnostics
    import gs_splits.plot
    import gs_splits.split

    def forbidden(*args, **kwargs):
        raise AssertionError("the report loaded data or computed a split")

    for module, names in (
        (gs_data, ("load", "make_split", "authors_split", "load_authors_split")),
        (gs_data.datasets, ("load",)),
        (gs_data.splits, ("make_split", "authors_split", "load_authors_split")),
        (gs_splits, ("structural_split", "split_statistics")),
        (gs_splits.split, ("structural_split",)),
        (gs_splits.diagnostics, ("split_statistics",)),
        (gs_splits.plot, ("graph_picture", "split_statistics")),
    ):
        for name in names:
            monkeypatch.setattr(module, name, forbidden)


def test_report_draws_the_split_figures_from_the_records_without_data(finished_run, tmp_path, monkeypatch):
    from gs_bench.report import build_report

    out = tmp_path / "copy"
    shutil.copytree(finished_run, out)  # a run folder moved to another machine
    for key, value in _no_data_env(tmp_path).items():
        monkeypatch.setenv(key, value)
    _guard_data_and_splits(monkeypatch)
    text = Path(build_report(out, "md")).read_text()
    assert "OOD robustness on synthetic-default (ID:OOD 50:50)" in text
    assert "### Splits used by the jobs: nodes per part" in text
    assert "| synthetic-default | popularity | 50:50 | seeded | 902 | 300 | 302 | 300 | 1204 |" in text
    for strategy in SPLITS:  # appendix A and H, as before, now from the stored numbers
        for kind in ("distributions", "graph"):
            name = f"split_synthetic-default_{strategy}_{kind}.png"
            assert (out / "report" / name).is_file() and f"]({name})" in text
    assert "1504 ID and 1504 OOD nodes" in text
    assert "not drawn" not in text
    assert not (tmp_path / "no-such-folder").exists()


def test_cli_report_with_the_data_root_removed(finished_run, tmp_path):
    out = tmp_path / "copy"
    shutil.copytree(finished_run, out)
    res = _cli("report", str(out), env=_no_data_env(tmp_path))
    assert res.returncode == 0, res.stderr
    text = (out / "report" / "report.md").read_text()
    assert "OOD robustness on synthetic-default" in text and "OOD detection on synthetic-default" in text
    assert "split_synthetic-default_density_graph.png" in text
    assert not (tmp_path / "no-such-folder").exists()  # no cache or data folder was created


def test_a_run_folder_without_its_split_pictures_says_what_is_missing(finished_run, tmp_path, monkeypatch):
    from gs_bench.report import build_report

    out = tmp_path / "copy"
    shutil.copytree(finished_run, out, ignore=shutil.ignore_patterns("split-pictures"))
    _guard_data_and_splits(monkeypatch)
    text = Path(build_report(out, "md")).read_text()
    assert "split_synthetic-default_popularity_distributions.png" in text
    assert "_graph.png" not in text and not list((out / "report").glob("*_graph.png"))
    assert ("Split on the graph (appendix H) not drawn for synthetic-default / density, "
            "synthetic-default / popularity: its layout is not in split-pictures/") in text


def _copy_committed(name: str, tmp_path: Path) -> Path:
    """The records and run file of ``measured/<name>`` in a fresh folder (no report)."""
    out = tmp_path / name
    out.mkdir()
    for f in [MEASURED / name / "results.jsonl", *(MEASURED / name).glob("run-*.json")]:
        shutil.copy(f, out / f.name)
    return out


def test_committed_ci_structural_shifts_run_reports_without_data(tmp_path):
    """The committed ci records (written before jobs stored their split statistics): every
    table, the split sizes from the records, and a note instead of the split figures."""
    out = _copy_committed("ci-structural-shifts", tmp_path)
    res = _cli("report", str(out), env=_no_data_env(tmp_path))
    assert res.returncode == 0, res.stderr
    text = (out / "report" / "report.md").read_text()
    assert "120 job records (0 failed)" in text
    for ds in ("cora-ml", "citeseer"):
        assert f"### OOD robustness on {ds} (ID:OOD 50:50)" in text
        assert f"### OOD detection on {ds} (ID:OOD 50:50)" in text
    # the README's list of off cells: 11 of the 108 cells with a paper value
    assert "### Cells more than 5 points from the paper (11 of 108 cells with a paper value)" in text
    assert "| cora-ml | popularity | 50:50 | authors | 898 | 299 | 300 | 299 | 1199 |" in text
    assert "| citeseer | density | 50:50 | authors | 998 | 332 | 333 | 332 | 1332 |" in text
    assert "Split figures not drawn for citeseer / density," in text
    assert "written before the jobs stored their split statistics" in text
    assert (out / "report" / "structural_id_ood_accuracy.png").is_file()
    assert not list((out / "report").glob("split_*.png"))
    assert not (tmp_path / "no-such-folder").exists()


def test_committed_ci_edgewise_run_reports_without_data(tmp_path):
    out = _copy_committed("ci-edgewise", tmp_path)
    res = _cli("report", str(out), env=_no_data_env(tmp_path))
    assert res.returncode == 0, res.stderr
    text = (out / "report" / "report.md").read_text()
    assert "600 job records (0 failed)" in text
    assert "### Edgewise calibration, Table 1 layout" in text
    for ds in ("planetoid-cora", "planetoid-citeseer"):
        assert (out / "report" / f"edgewise_reliability_{ds}.png").is_file()


def test_an_archive_line_that_is_not_a_record_is_skipped_with_a_warning(tmp_path, caplog):
    from gs_bench.report import archived_records

    good = json.loads((MEASURED / "ci-structural-shifts" / "results.jsonl").read_text().splitlines()[0])
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(good) + "\n{not json\n" + json.dumps({"key": "x"}) + "\n\n")
    assert [r["key"] for r in archived_records(path)] == [good["key"]]
    assert f"{path} line 2 skipped" in caplog.text and f"{path} line 3 skipped" in caplog.text


def test_an_unwritable_run_folder_costs_the_picture_not_the_job(tmp_path, caplog):
    from gs_bench.runners import structural

    settings = {"domains": 10}
    params = {"dataset": "synthetic-default", "strategy": "popularity", "ratio": "50:50", "method": "erm"}
    data = structural._split(structural._load("synthetic-default", settings), params, settings)
    blocker = tmp_path / "run"
    blocker.mkdir()
    (blocker / "split-pictures").write_text("a file where the folder should be")
    block = structural.split_record(data, params, settings, str(blocker))
    assert block["picture"] is None and "could not write the split picture" in caplog.text
    assert block["statistics"]["sizes"]["in_train"] == 902
    assert structural.split_record(data, params, settings, None)["picture"] is None


def test_edgewise_reliability_figure_takes_the_records_bins_and_draws_with_gs_metrics(tmp_path, monkeypatch):
    """The runner's reliability figure is gs-metrics' plot (issue 20: one reliability plot)
    and its caption says the records' number of bins, not a hard-coded 15."""
    import gs_metrics
    from gs_bench.runners import edgewise

    drawn = []
    real = gs_metrics.plot_reliability_diagram

    def spy(bins, *args, **kwargs):
        drawn.append(len(bins.counts))
        return real(bins, *args, **kwargs)

    monkeypatch.setattr(gs_metrics, "plot_reliability_diagram", spy)
    bins = {"confidence": [0.05 + 0.1 * k for k in range(10)], "accuracy": [0.1 * k for k in range(10)],
            "count": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]}
    recs = [{"status": "ok", "job": {"params": {"dataset": "toy", "model": "gcn"}},
             "metrics": {"reliability": {k: bins for k in ("node", "all", "agree", "disagree")}}}
            for _ in range(2)]
    figs = edgewise.figures(recs, tmp_path)
    assert drawn == [10, 10, 10, 10]
    assert len(figs) == 1 and "(10 bins," in figs[0].caption and "15" not in figs[0].caption
    assert (tmp_path / "edgewise_reliability_toy.png").is_file()
    assert edgewise._bins_text(recs) == "10"


def test_report_out_writes_elsewhere_and_leaves_the_results_folder_as_it_is(tmp_path):
    """`gs-bench report DIR --out FOLDER`: a committed run folder gains no report/."""
    src = MEASURED / "ci-edgewise"
    run = _copy_committed("ci-edgewise", tmp_path)
    before = sorted(p.name for p in run.iterdir())
    dest = tmp_path / "elsewhere"
    res = _cli("report", str(run), "--out", str(dest), env=_no_data_env(tmp_path))
    assert res.returncode == 0, res.stderr
    assert f"report written to {dest / 'report.md'}" in res.stdout
    assert sorted(p.name for p in run.iterdir()) == before
    assert (dest / "report.md").read_bytes() == (src / "report.md").read_bytes()
    assert (dest / "edgewise_reliability_planetoid-cora.png").is_file()


def test_report_out_elsewhere_still_draws_the_split_pictures_of_the_run(finished_run, tmp_path, monkeypatch):
    """The stored layouts live in the run folder, not beside the report: --out elsewhere
    draws the same appendix-H pictures."""
    from gs_bench.report import build_report

    _guard_data_and_splits(monkeypatch)
    dest = tmp_path / "elsewhere" / "rep"
    text = Path(build_report(finished_run, "md", report_dir=dest)).read_text()
    for strategy in SPLITS:
        name = f"split_synthetic-default_{strategy}_graph.png"
        assert (dest / name).is_file() and f"]({name})" in text
    assert "not drawn" not in text


def test_edgewise_report_names_an_under_confident_model_and_leaves_a_calibrated_one_alone():
    """A SYNTHETIC record whose confidences sit 30 points under its accuracy gets the sentence
    (with the paper's GAT values beside it); one within 10 points gets none."""
    from gs_bench.runners.edgewise import report as ew

    def rec(model, conf, acc):
        node = {"confidence": [conf, float("nan")], "count": [100, 0], "accuracy": [acc, float("nan")]}
        return {"job": {"params": {"dataset": "toy", "model": model}},
                "metrics": {"node_acc": acc, "reliability": {"node": node}}}

    assert ew.mean_confidence(rec("gat", 0.5, 0.8)) == pytest.approx(50.0)
    note = ew._confidence_note({("toy", "gat"): [rec("gat", 0.5, 0.8)], ("toy", "gcn"): [rec("gcn", 0.75, 0.8)]})
    assert "GAT on toy is under-confident: mean confidence 50.0 % against a nodewise accuracy of 80.0 %" in note
    assert "GCN" not in note.split("GAT 15.27")[0] and "Table 1, nodewise ECE" in note
    assert "over-confident" in ew._confidence_note({("toy", "gcn"): [rec("gcn", 0.95, 0.6)]})


def test_lebed_report_explains_baselines_that_are_all_negative_only_then():
    from gs_bench.runners.lebed import report as lb

    rows = [[lb.LABELS[k], "-0.40 (n=1)", "—", "0.1", "—"] for k in lb.BASELINES]
    rows.append([lb.LABELS["lebed"], "0.50 (n=1)", "—", "0.2", "—"])
    note = lb._negative_baselines_note(rows, ["gcn"], "feature")
    assert "Every baseline's ρ is below 0 here: not a sign error" in note and "ConfScore -0.46" in note
    rows[0][1] = "0.10 (n=1)"
    assert lb._negative_baselines_note(rows, ["gcn"], "feature") == ""
    assert lb._negative_baselines_note(rows, ["gcn"], "domain") == ""
