"""``gs-bench compare``: paper cells beside ours, the paper's spread, the per-paper summary
(SYNTHETIC records built from the published values, shifted by known amounts), and the
README's generated block against the committed runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gs_bench import compare as C
from gs_bench.published import published, published_spread

MEASURED = Path(__file__).resolve().parents[1] / "measured"
README = Path(__file__).resolve().parents[1] / "README.md"


def _rec(params, metrics, seed=0, suite="structural-shifts"):
    return {"status": "ok", "key": f"{suite}-{seed}-{sorted(params.items())}",
            "job": {"suite": suite, "params": params, "seed": seed, "settings": {}},
            "metrics": metrics}


def _erm_records(shift_by: float, seeds=3):
    """ERM on CoraML popularity at 50:50 whose ID / OOD accuracy and AUROC sit ``shift_by``
    points from Tables 9 / 16, and whose drop sits ``shift_by`` from Table 1."""
    pid = published("structural-shifts", "cora-ml", "popularity", "erm", "id_acc")[0]
    pood = published("structural-shifts", "cora-ml", "popularity", "erm", "ood_acc")[0]
    pauc = published("structural-shifts", "cora-ml", "popularity", "se", "ood_auroc")[0]
    pdrop = published("structural-shifts", "cora-ml", "50:50", "popularity", "erm", "drop")[0]
    params = {"dataset": "cora-ml", "strategy": "popularity", "ratio": "50:50", "method": "erm"}
    return [_rec(params, {"id_acc": (pid + shift_by) / 100, "ood_acc": (pood + shift_by) / 100,
                          "ood_auroc": (pauc + shift_by) / 100, "drop": (pdrop + shift_by) / 100}, s)
            for s in range(seeds)]


def test_cells_match_the_paper_when_the_records_do():
    cs = C.cells(_erm_records(0.0))
    assert {c.table for c in cs} == {"Table 9", "Table 16", "Table 1"}
    # Table 9 ID + OOD, Table 16 SE, Table 1 drop + SE AUROC (the 50:50 SE value again)
    assert len(cs) == 5 and all(c.within and not c.beyond and c.n == 3 for c in cs)
    assert all(abs(c.delta) < 1e-6 for c in cs)
    [summ] = C.summary(cs)
    # 3 cells print a spread over the authors' 3 runs (ERM ID / OOD, SE): 0.65 each expected
    assert summ == {"paper": "structural-shifts", "label": C.PAPERS["structural-shifts"],
                    "cells": 5, "within": 5, "beyond": 0, "unit": "%",
                    "expected": pytest.approx(3 * C.p_within_if_exact(3, 3)), "expected_of": 3,
                    "within_known": 3}


def test_cells_far_from_the_paper_are_counted_beyond():
    cs = C.cells(_erm_records(-6.0))
    assert all(not c.within and c.beyond and c.delta == pytest.approx(-6.0) for c in cs)
    line = C.summary_lines(cs)[0]
    assert "5 cells, 0 within the paper's spread (0 %), 5 beyond 5 points" in line


def test_expected_within_rate_of_a_faithful_rerun_matches_a_simulation():
    """P(|mean of n - mean of m| <= sample std of the m) for one normal distribution: the
    closed form against a seeded Monte Carlo of 200,000 draws (independent reference)."""
    rng = np.random.default_rng(0)
    for n, m in ((3, 3), (5, 5), (1, 3), (3, 75)):
        ours = rng.standard_normal((200_000, n)).mean(1)
        theirs = rng.standard_normal((200_000, m))
        sim = np.mean(np.abs(ours - theirs.mean(1)) <= theirs.std(1, ddof=1))
        assert C.p_within_if_exact(n, m) == pytest.approx(sim, abs=0.005)
    assert C.p_within_if_exact(3, 3) == pytest.approx(0.6547, abs=1e-4)
    with pytest.raises(ValueError, match="n_paper >= 2"):
        C.p_within_if_exact(3, 1)
    # no spread printed (Table 1's drop, DE's 0.00) or no known run count: no expectation
    assert C.Cell("structural-shifts", "Table 9", "x", 3, 87.0, 85.5, 0.0, paper_n=3).expected_within is None
    assert C.Cell("gess", "Table 3", "x", 3, 87.0, 85.5, 1.0).expected_within is None


def test_summary_line_names_the_expected_within_count_both_ways():
    """All cells on the paper's value: 3 of 3 within against 2 expected; all 6 points off:
    0 of 3 within, the expectation unchanged (it depends on the run counts only)."""
    line = C.summary_lines(C.cells(_erm_records(0.0)))[0]
    assert "of the 3 cells with the paper's ± s over a known run count, 3 within" in line
    assert "expects 2 (65 %)" in line
    line = C.summary_lines(C.cells(_erm_records(-6.0)))[0]
    assert "known run count, 0 within, a faithful rerun at these run counts expects 2 (65 %)" in line


def test_the_papers_spread_decides_within():
    """ERM CoraML popularity ID prints 85.80 ± 1.10: 1.0 off is within, 1.2 is not; Table 1
    prints no spread, so the 2-point default applies to the drop."""
    assert published_spread("structural-shifts", "cora-ml", "popularity", "erm", "id_acc") == 1.10
    by = {c.what: c for c in C.cells(_erm_records(1.2))}
    idc, drop = by["cora-ml popularity erm id_acc"], by["cora-ml 50:50 popularity erm drop"]
    assert not idc.within and drop.within and drop.spread is None
    by = {c.what: c for c in C.cells(_erm_records(1.0))}
    assert by["cora-ml popularity erm id_acc"].within and by["cora-ml popularity erm id_acc"].tolerance == 1.10
    assert not by["cora-ml popularity erm ood_acc"].within  # 82.42 ± 0.79
    # DE's 0.00 (one ensemble) counts as no spread
    assert C.Cell("structural-shifts", "Table 9", "x", 1, 87.0, 85.5, 0.0).within
    # Spearman rho: 0.02 without a spread, 0.05 for "beyond"
    rho = C.Cell("lebed", "Table 2", "x", 1, 0.80, 0.82, None, "rho")
    assert rho.within and not rho.beyond
    rho = C.Cell("lebed", "Table 2", "x", 1, 0.70, 0.82, None, "rho")
    assert not rho.within and rho.beyond


def test_gess_track_cells_use_gess_columns():
    # GeSS's code: Test-ID at the best Val-ID epoch, Test-OOD at the best Val-OOD epoch; the
    # crossed values (0.10) would miss both published cells
    recs = [_rec({"dataset": "track-pileup-pu50", "backbone": "egnn", "algorithm": "erm"},
                 {"id_sel_test_id": 0.9575, "ood_sel_test_ood": 0.70,
                  "ood_sel_test_id": 0.10, "id_sel_test_ood": 0.10}, suite="gess")]
    cs = C.cells(recs)
    assert [(c.what, c.within, c.beyond) for c in cs] == [
        ("track-pileup-pu50 egnn erm Test-ID", True, False),
        ("track-pileup-pu50 egnn erm Test-OOD", False, True)]


def test_cli_prints_the_summary_and_rejects_a_missing_folder(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _erm_records(-6.0)))
    cmd = [sys.executable, "-c", "import sys; from gs_bench.cli import main; sys.exit(main())", "compare"]
    p = subprocess.run([*cmd, str(run), "--summary"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "5 cells, 0 within" in p.stdout
    p = subprocess.run([*cmd, str(tmp_path / "nope")], capture_output=True, text=True)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "does not exist" in p.stderr
    # two runs: each its own summary and tables, the cells never pooled
    other = tmp_path / "other"
    other.mkdir()
    (other / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _erm_records(0.0)))
    p = subprocess.run([*cmd, str(run), str(other), "--summary"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0] == f"{run}:" and f"{other}:" in p.stdout.splitlines()
    assert "5 cells, 0 within" in p.stdout and "5 cells, 5 within" in p.stdout
    assert "10 cells" not in p.stdout
    # an unfinished run: its note after the path, in the summary and the tables' Runs line
    (other / "run-structural-shifts.json").write_text(json.dumps({"jobs": 7}))
    p = subprocess.run([*cmd, str(other), "--summary"], capture_output=True, text=True)
    assert p.stdout.splitlines()[0] == f"{other} (3 of 7 planned jobs recorded: the run is not finished):"
    p = subprocess.run([*cmd, str(other)], capture_output=True, text=True)
    assert f"Runs: `{other}` (3 of 7 planned jobs recorded" in p.stdout
    (other / "run-structural-shifts.json").unlink()
    p = subprocess.run([*cmd, str(run), str(other)], capture_output=True, text=True)
    assert p.stdout.count("# Paper comparison: `") == 2 and p.stdout.count("| Table 9 | cora-ml popularity erm id_acc |") == 2
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{C.BEGIN}\nold\n{C.END}\nend\n")
    p = subprocess.run([*cmd, str(run), "--summary", "--readme", str(readme)], capture_output=True, text=True)
    assert p.returncode == 0 and "rewritten" in p.stdout
    text = readme.read_text()
    assert text.startswith("intro\n") and text.endswith("end\n") and "old" not in text
    assert "5 cells, 0 within" in text
    p = subprocess.run([*cmd, str(run), "--summary", "--readme", str(readme)], capture_output=True, text=True)
    assert "already current" in p.stdout
    (tmp_path / "plain.md").write_text("no markers\n")
    p = subprocess.run([*cmd, str(run), "--readme", str(tmp_path / "plain.md")], capture_output=True, text=True)
    assert p.returncode == 2 and "no generated block" in p.stderr


@pytest.mark.skipif(not MEASURED.is_dir(), reason="apps/bench/measured is not in this checkout")
def test_readme_figures_are_the_generated_ones():
    """The README's comparison block is what `gs-bench compare --readme` writes from the
    committed runs: regenerate `gs-bench compare apps/bench/measured/ci-* apps/bench/measured/paper-*
    --summary --readme apps/bench/README.md` after committing a run."""
    runs = sorted(p for p in [*MEASURED.glob("ci-*"), *MEASURED.glob("paper-*")] if (p / "results.jsonl").is_file())
    block = C.readme_block([(f"apps/bench/measured/{p.name}", C.cells(C.run_records(p))) for p in runs])
    text = README.read_text(encoding="utf-8")
    assert C.BEGIN in text, "apps/bench/README.md lost its generated comparison block"
    assert text.split(C.BEGIN, 1)[1].split(C.END, 1)[0] == block.split(C.BEGIN, 1)[1].split(C.END, 1)[0]


def test_per_method_counts_show_which_method_misses_both_ways():
    """ERM on the paper's values and DANN 6 points off (SYNTHETIC records): the per-method
    line puts all of ERM's cells within and none of DANN's, each against the same expectation."""
    recs = _erm_records(0.0)
    params = {"dataset": "cora-ml", "strategy": "popularity", "ratio": "50:50", "method": "dann"}
    pid = published("structural-shifts", "cora-ml", "popularity", "dann", "id_acc")[0]
    pood = published("structural-shifts", "cora-ml", "popularity", "dann", "ood_acc")[0]
    recs += [_rec(params, {"id_acc": (pid - 6) / 100, "ood_acc": (pood - 6) / 100}, s) for s in range(3)]
    cs = C.cells(recs)
    counts = C.method_counts(cs, "structural-shifts")
    e = 2 * C.p_within_if_exact(3, 3)
    assert counts["erm"] == (3, 3, 2, pytest.approx(e), 2)  # ID, OOD, Table 1 drop
    assert counts["se"] == (2, 2, 1, pytest.approx(e / 2), 1)  # Table 16, Table 1 AUROC
    assert counts["dann"] == (2, 0, 0, pytest.approx(e), 2)
    line = C.method_line(cs, "structural-shifts")
    assert "erm 3 of 3 (of the 2 with the paper's ± s: 2 within, a faithful rerun would have 1.3)" in line
    assert "dann 0 of 2 (of the 2 with the paper's ± s: 0 within, a faithful rerun would have 1.3)" in line
    # the other way round: DANN on the paper's values, ERM off
    recs = _erm_records(-6.0) + [_rec(params, {"id_acc": pid / 100, "ood_acc": pood / 100}, s)
                                 for s in range(3)]
    counts = C.method_counts(C.cells(recs), "structural-shifts")
    assert counts["erm"][:3] == (3, 0, 0) and counts["dann"][:3] == (2, 2, 2)
    assert "Within the spread per method: " in C.render(C.cells(recs))


def test_tables_in_number_order_off_view_of_a_run_without_off_cells_and_an_unfinished_run(tmp_path):
    """SYNTHETIC records on the paper's values: the per-table counts run 1, 9, 16 (not as
    first met); ``--off`` says no cell is outside instead of printing nothing; a run whose
    run-*.json plans more jobs than it holds is labelled unfinished."""
    cs = C.cells(_erm_records(0.0))
    counts = C.table_counts(cs, "structural-shifts")
    numbers = [int(t.split()[-1]) for t in counts]
    assert numbers == sorted(numbers) and len(numbers) > 1
    text = C.render(cs, only_off=True)
    assert "No cell of this paper is outside the paper's spread." in text and "| table |" not in text
    assert "| table |" in C.render(C.cells(_erm_records(-6.0)), only_off=True)
    run = tmp_path / "run"
    run.mkdir()
    recs = _erm_records(0.0)
    (run / "run-structural-shifts.json").write_text(json.dumps({"jobs": len(recs) + 2}))
    note = C.run_note(run, recs)
    assert note == f"{len(recs)} of {len(recs) + 2} planned jobs recorded: the run is not finished"
    assert f"Runs: `{run}` ({len(recs)} of" in C.render(cs, [(str(run), note)])
    # a path with " (" in it stays whole inside the code span (the note is never parsed back)
    assert "Runs: `runs (old)/x` (1 of 2 planned" in C.render(cs, [("runs (old)/x", "1 of 2 planned")])
    assert "Runs: `runs (old)/x`\n" in C.render(cs, ["runs (old)/x"])
    (run / "run-structural-shifts.json").write_text(json.dumps({"jobs": len(recs)}))
    assert C.run_note(run, recs) == ""
    recs[0]["status"] = "failed"  # a failed job is recorded too: the run is finished
    assert C.run_note(run, recs) == ""
