"""GeSS's findings checked on a run's records (:func:`orderings`), each judged only where ERM
learned more than the strongest trivial baseline (:func:`learned`); from the records only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gs_bench.report import Table, group_records
from gs_bench.runners.gess.baselines import baseline_values
from gs_bench.runners.gess.spec import DATASETS, tl_size

__all__ = ["FINDINGS", "GUARD_POINTS", "GUARD_MAE_RATIO", "learned", "orderings"]

#: GeSS's findings that a run can check: (id, statement, where in the paper)
FINDINGS = (
    ("shift-hurts", "ERM does worse on Test-OOD than on Test-ID (every shift is a shift)",
     "sections 3-4, table 3"),
    ("no-info-rarely-helps", "No-Info OOD methods (VREx, GroupDRO, DIR, LRI, Mixup) rarely beat ERM "
     "on Test-OOD: at most half of those run do", "section 4.2, appendix H1"),
    ("da-pileup-close", "DA (DANN, DeepCoral) stays close to ERM under the pileup shift (within 3 points)",
     "section 4.3, conclusion 1, fig. 4"),
    ("da-signal-helps", "DA (DANN) beats ERM under the signal shift", "section 4.3, conclusion 1, fig. 4"),
    ("tl-grows-with-n", "Par-Label TL improves with N (more labelled OOD samples)", "section 4.2, fig. 2"),
    ("tl-concept", "Par-Label TL beats ERM on Test-OOD under the fidelity (concept) shift",
     "section 4.3, conclusion 2, fig. 3a"),
)


#: The guard of every finding (:func:`learned`): ERM beats the strongest trivial baseline on
#: Test-ID by at least this many points (ACC / AUC, in %) ...
GUARD_POINTS = 10.0
#: ... or, for MAE, reaches at most this fraction of the strongest baseline's Test-ID MAE.
GUARD_MAE_RATIO = 0.8


def _ood(recs: Sequence[dict[str, Any]]) -> float:
    """Mean over seeds of Test-OOD at the best Val-OOD epoch: GeSS's Test-OOD column
    (``result_ood.txt`` of its code, ``GESS/utils/metrics.py`` ``update_ood_metrics``)."""
    return float(np.mean([r["metrics"]["ood_sel_test_ood"] for r in recs]))


def _id(recs: Sequence[dict[str, Any]]) -> float:
    """Mean over seeds of Test-ID at the best Val-ID epoch: GeSS's Test-ID column
    (``result.txt``, ``update_id_metrics``; its code keeps no Test-ID at the Val-OOD epoch)."""
    return float(np.mean([r["metrics"]["id_sel_test_id"] for r in recs]))


def learned(erm_test_id: float, baseline_test_id: float, lower_is_better: bool) -> bool:
    """Whether ERM learned more than a trivial baseline, judged on Test-ID: ACC / AUC
    (fractions) at least :data:`GUARD_POINTS` points above it; MAE at most
    :data:`GUARD_MAE_RATIO` times its MAE (20 % lower). Rounding noise of the stored values
    (1e-9) does not decide it."""
    if lower_is_better:
        return erm_test_id <= GUARD_MAE_RATIO * baseline_test_id + 1e-9
    return 100.0 * (erm_test_id - baseline_test_id) >= GUARD_POINTS - 1e-9


def _guard(erm: Sequence[dict[str, Any]], lower: bool, f) -> str | None:
    """``None`` when a (dataset, backbone)'s findings can be judged, else the verdict that
    replaces theirs: ERM (GeSS's Test-ID, at the best Val-ID epoch; mean over seeds) against the strongest trivial
    baseline of its records (:func:`learned`)."""
    base = {name: float(np.mean(v["test_id"])) for name, v in baseline_values(erm).items() if v["test_id"]}
    if not base:
        return "not decided: no baseline in the records"
    name = (min if lower else max)(base, key=base.__getitem__)
    erm_id = _id(erm)
    if learned(erm_id, base[name], lower):
        return None
    return f"not decided: ERM did not learn (ERM Test-ID {f(erm_id)} vs {name} {f(base[name])})"


def orderings(records: Sequence[dict[str, Any]]) -> Table:
    """GeSS's findings (:data:`FINDINGS`) checked on the records: one row per (finding,
    dataset, backbone) that the run can check, with the values it rests on and whether it
    holds. Values are GeSS's columns (Test-OOD at the best Val-OOD epoch, Test-ID at the best
    Val-ID epoch), means over seeds; ACC/AUC in
    %, MAE in eV (lower is better). A finding is judged only where ERM learned more than the
    strongest trivial baseline (:func:`learned`); elsewhere its verdict is "not decided" with
    the two values. With one seed, differences of a point or two are within noise."""
    groups = group_records(records, ("dataset", "backbone", "algorithm"))
    rows: list[list[str]] = []
    by_point: dict[tuple[str, str], dict[str, list]] = {}
    for (ds, bb, algo), recs in groups.items():
        by_point.setdefault((ds, bb), {})[algo] = recs
    text = {f[0]: (f[1], f[2]) for f in FINDINGS}

    for (ds, bb), algos in sorted(by_point.items()):
        case = DATASETS.get(ds)
        if "erm" not in algos or case is None:
            continue
        metric = algos["erm"][0]["metrics"]["metric"]
        lower = metric == "mae"
        scale = 1.0 if lower else 100.0
        f = (lambda v: f"{v:.3f}") if lower else (lambda v, s=scale: f"{v * s:.2f}")

        def better(a: float, b: float, lower: bool = lower) -> bool:
            return a < b if lower else a > b

        erm_ood, erm_id = _ood(algos["erm"]), _id(algos["erm"])
        undecided = _guard(algos["erm"], lower, f)

        def row(fid: str, evidence: str, holds: bool, where: str = f"{ds} / {bb}",
                undecided: str | None = undecided) -> None:
            verdict = undecided or ("holds" if holds else "does not hold")
            rows.append([text[fid][0], text[fid][1], where, evidence, verdict])

        row("shift-hurts", f"ERM Test-ID {f(erm_id)}, Test-OOD {f(erm_ood)}", better(erm_id, erm_ood))
        no_info = [a for a in ("vrex", "groupdro", "dir", "lri", "mixup") if a in algos]
        if no_info:
            wins = [a for a in no_info if better(_ood(algos[a]), erm_ood)]
            ev = ", ".join(f"{a} {f(_ood(algos[a]))}" for a in no_info) + f" vs ERM {f(erm_ood)}"
            row("no-info-rarely-helps", ev + f" ({len(wins)} of {len(no_info)} better)",
                2 * len(wins) <= len(no_info))
        da = [a for a in ("dann", "coral") if a in algos]
        if da and case.family == "track" and case.shift == "pileup":
            gaps = {a: abs(_ood(algos[a]) - erm_ood) * scale for a in da}
            ev = ", ".join(f"{a} {f(_ood(algos[a]))}" for a in da) + f" vs ERM {f(erm_ood)}"
            row("da-pileup-close", ev, max(gaps.values()) <= 3.0)
        if "dann" in algos and case.family == "track" and case.shift == "signal":
            row("da-signal-helps", f"DANN {f(_ood(algos['dann']))} vs ERM {f(erm_ood)}",
                better(_ood(algos["dann"]), erm_ood))
        tls = sorted((n, a) for a in algos if (n := tl_size(a)) is not None)
        if len(tls) >= 2:
            vals = [_ood(algos[a]) for _, a in tls]
            ev = ", ".join(f"TL-{n} {f(v)}" for (n, _), v in zip(tls, vals, strict=True))
            row("tl-grows-with-n", ev, all(better(b, a) for a, b in zip(vals, vals[1:], strict=False)))
        if tls and case.shift == "fidelity":
            vals = [_ood(algos[a]) for _, a in tls]
            best = min(vals) if lower else max(vals)
            row("tl-concept", f"best TL {f(best)} vs ERM {f(erm_ood)}", better(best, erm_ood))
    return Table(
        "GeSS findings checked on this run (GeSS's columns: Test-OOD selected on Val-OOD unless named)",
        ["finding", "GeSS", "case", "ours", "on our data"],
        rows,
        note="ACC/AUC in %, MAE in eV (lower is better); Test-OOD selected on Val-OOD and Test-ID "
             "on Val-ID, as GeSS's code reports them; means over seeds. One row per case the run can check; a finding whose algorithms were not run "
             "is not listed. A finding is judged only where ERM learned: its Test-ID beats the "
             f"strongest trivial baseline of the dataset table by at least {GUARD_POINTS:g} points "
             f"(ACC/AUC), or its MAE is at most {GUARD_MAE_RATIO:g} x the train-mean predictor's; "
             "elsewhere \"not decided\" gives the two values. With one seed, differences of a "
             "point or two are within seed noise (GeSS reports means of 3 seeds).",
    )
