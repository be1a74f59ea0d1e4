"""GeSS's findings checked on a run's records (:func:`orderings`), each judged only where ERM
learned more than the strongest trivial baseline (:func:`learned`); from the records only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gs_bench.report import Table, group_records
from gs_bench.runners.gess.baselines import baseline_values
from gs_bench.runners.gess.spec import DATASETS, tl_size

__all__ = ["FINDINGS", "GUARD_POINTS", "GUARD_MAE_RATIO", "NOISE_Z", "learned", "column_learned", "events_needed",
           "metric_variance", "orderings"]

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


#: A comparison of two values is decided only where they differ by more than this many standard
#: errors of the difference (about 95 %); within it the verdict is "not decided: within noise".
NOISE_Z = 2.0


def metric_variance(metric: str, value: float, n: int | None) -> float | None:
    """Sampling variance of one test metric on ``n`` test samples: accuracy (a fraction)
    binomial, ``p (1 - p) / n``; AUROC Hanley and McNeil's (1982), with the ``n`` samples taken
    as two equal classes (the records do not keep the class counts); ``None`` for MAE (no
    per-sample spread in the records) or without ``n``."""
    if not n or n < 2:
        return None
    if metric == "accuracy":
        return value * (1.0 - value) / n
    if metric == "auroc":
        a, n1 = value, n / 2.0
        q1, q2 = a / (2.0 - a), 2.0 * a * a / (1.0 + a)
        return (a * (1.0 - a) + (n1 - 1.0) * (q1 - a * a) + (n1 - 1.0) * (q2 - a * a)) / (n1 * n1)
    return None


def _variance(recs: Sequence[dict[str, Any]], key: str, part: str) -> float | None:
    """Variance of the mean over seeds of ``metrics[key]`` (a value measured on test part
    ``part``): the test set's sampling variance (:func:`metric_variance`) plus, with two or
    more seeds, their variance over the seed count. ``None`` where neither is known (MAE, one
    seed)."""
    vals = np.array([r["metrics"][key] for r in recs], float)
    metric = recs[0]["metrics"].get("metric", "")
    n = (recs[0]["metrics"].get("sizes") or {}).get(part)
    test = metric_variance(metric, float(vals.mean()), n)
    seeds = float(vals.var(ddof=1)) / len(vals) if len(vals) >= 2 else None
    if test is None and seeds is None:
        return None
    return (test or 0.0) + (seeds or 0.0)


def _margin(a: Sequence[dict[str, Any]], a_col: tuple[str, str],
            b: Sequence[dict[str, Any]], b_col: tuple[str, str]) -> float | None:
    """:data:`NOISE_Z` standard errors of the difference of two means over seeds (each
    ``(metrics key, test part)``), taken as independent; ``None`` without a noise estimate."""
    va, vb = _variance(a, *a_col), _variance(b, *b_col)
    return None if va is None or vb is None else NOISE_Z * float(np.sqrt(va + vb))


def events_needed(a: Sequence[dict[str, Any]], a_col: tuple[str, str],
                  b: Sequence[dict[str, Any]], b_col: tuple[str, str], gap: float) -> str:
    """How many test events per part would decide a comparison that is within noise: the
    test-set sampling variance shrinks as 1 / n and the seeds' spread does not, so a
    difference ``gap`` (fraction) clears :data:`NOISE_Z` standard errors when
    ``n > NOISE_Z^2 (v_a n_a + v_b n_b) / (gap^2 - NOISE_Z^2 s)`` (``v n`` the per-event binomial
    variance at the part sizes ``n`` the records ran on, ``s`` the seeds' variance of the two
    means). A phrase for the verdict: "needs about N test events per part, now n", or that more
    seeds are needed where the seeds' spread alone exceeds the gap, or that no size decides a
    gap of 0; ``""`` where the records give no noise estimate (MAE)."""
    if abs(gap) < 1e-12:
        return "; no measured difference, so no test size decides it"
    test_n, seeds = 0.0, 0.0
    now = []
    for recs, (key, part) in ((a, a_col), (b, b_col)):
        m = recs[0]["metrics"]
        n = (m.get("sizes") or {}).get(part)
        vals = np.array([r["metrics"][key] for r in recs], float)
        v = metric_variance(m.get("metric", ""), float(vals.mean()), n)
        if v is None:
            return ""
        test_n += v * n
        now.append(n)
        if len(vals) >= 2:
            seeds += float(vals.var(ddof=1)) / len(vals)
    room = gap * gap - NOISE_Z ** 2 * seeds
    if room <= 0:
        return "; the seeds' spread alone exceeds the gap: more seeds, not more events, would decide it"
    need = int(np.ceil(NOISE_Z ** 2 * test_n / room))
    return f"; needs about {need:,} test events per part, now {max(now):,}"


#: (metrics key, test part) of GeSS's two headline columns
_COLS = {"ood": ("ood_sel_test_ood", "ood_test"), "id": ("id_sel_test_id", "iid_test")}


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


#: The records' key of each column's trivial baseline values and the column's name.
_BASE_KEY = {"id": ("test_id", "Test-ID"), "ood": ("test_ood", "Test-OOD")}


def column_learned(erm: Sequence[dict[str, Any]], col: str, base_value: float) -> tuple[bool, float | None]:
    """Whether ERM's mean in column ``col`` (``"id"``: Test-ID at the best Val-ID epoch;
    ``"ood"``: Test-OOD at the best Val-OOD epoch) beats a trivial baseline's value there
    beyond noise, and the margin it had to clear (fraction; ``None`` for MAE): :func:`learned`
    (at least :data:`GUARD_POINTS` points, or :data:`GUARD_MAE_RATIO` of the MAE) and, for ACC /
    AUC, more than :data:`NOISE_Z` standard errors of the difference (ERM's test-set and seed
    variance plus the baseline's binomial variance on the same part size)."""
    metrics = erm[0]["metrics"]
    metric = metrics.get("metric", "")
    lower = metric == "mae"
    v = _id(erm) if col == "id" else _ood(erm)
    if lower:
        return learned(v, base_value, True), None
    key, part = _COLS[col]
    n = (metrics.get("sizes") or {}).get(part)
    var_erm = _variance(erm, key, part) or 0.0
    var_base = metric_variance(metric, base_value, n) or 0.0
    margin = max(GUARD_POINTS / 100.0, NOISE_Z * float(np.sqrt(var_erm + var_base)))
    return v - base_value > margin - 1e-9, margin


def _guard(erm: Sequence[dict[str, Any]], lower: bool, f, cols: Sequence[str] = ("id",)) -> str | None:
    """``None`` when a finding that rests on the columns ``cols`` (``"id"``, ``"ood"``) can be
    judged on a (dataset, backbone), else the verdict that replaces its own: in each column,
    ERM's mean over seeds against the strongest trivial baseline of its records in that same
    column (:func:`column_learned`; issue 53: a Test-OOD verdict needs ERM above the trivial rows
    on Test-OOD, not only on Test-ID)."""
    for col in cols:
        key, label = _BASE_KEY[col]
        base = {name: float(np.mean(v[key])) for name, v in baseline_values(erm).items() if v[key]}
        if not base:
            return "not decided: no baseline in the records"
        name = (min if lower else max)(base, key=base.__getitem__)
        ok, margin = column_learned(erm, col, base[name])
        if not ok:
            erm_v = _id(erm) if col == "id" else _ood(erm)
            need = "" if margin is None else f"; needs more than {margin * 100:.2f} points"
            return (f"not decided: ERM did not learn on {label} (ERM {f(erm_v)} vs {name} "
                    f"{f(base[name])}{need})")
    return None


def orderings(records: Sequence[dict[str, Any]]) -> Table:
    """GeSS's findings (:data:`FINDINGS`) checked on the records: one row per (finding,
    dataset, backbone) that the run can check, with the values it rests on and whether it
    holds. Values are GeSS's columns (Test-OOD at the best Val-OOD epoch, Test-ID at the best
    Val-ID epoch), means over seeds; ACC/AUC in
    %, MAE in eV (lower is better). A finding is judged only where ERM learned more than the
    strongest trivial baseline (:func:`learned`); elsewhere its verdict is "not decided" with
    the two values. A comparison is decided only beyond :data:`NOISE_Z` standard errors of the
    difference (test-set sampling error, :func:`metric_variance`, plus the seeds' spread);
    within it the verdict is "not decided: within noise" (the evidence gives Δ and 2 SE)."""
    groups = group_records(records, ("dataset", "backbone", "algorithm"))
    rows: list[list[str]] = []
    by_point: dict[tuple[str, str], dict[str, list]] = {}
    for (ds, bb, algo), recs in groups.items():
        by_point.setdefault((ds, bb), {})[algo] = recs
    for (ds, bb), algos in sorted(by_point.items()):
        case = DATASETS.get(ds)
        if "erm" not in algos or case is None:
            continue
        rows += _Point(ds, bb, algos, case).rows()
    return Table(
        "GeSS findings checked on this run (GeSS's columns: Test-OOD selected on Val-OOD unless named)",
        ["finding", "GeSS", "case", "ours", "on our data"],
        rows,
        note=_orderings_note(),
    )


def _orderings_note() -> str:
    """The note under :func:`orderings`' table: the columns, the guard and the noise rule."""
    return ("ACC/AUC in %, MAE in eV (lower is better); Test-OOD selected on Val-OOD and Test-ID "
            "on Val-ID, as GeSS's code reports them; means over seeds. One row per case the run can check; a finding whose algorithms were not run "
            "is not listed. A finding is judged only where ERM learned in each column it rests on "
            "(every finding here rests on Test-OOD, and ERM must also have learned Test-ID): in that "
            "column ERM beats the strongest trivial baseline of the dataset table (same column) by "
            f"at least {GUARD_POINTS:g} points and by more than {NOISE_Z:g} standard errors of the "
            f"difference (ACC/AUC), or its MAE is at most {GUARD_MAE_RATIO:g} x the train-mean "
            "predictor's; elsewhere \"not decided\" gives the two values. A comparison is decided only "
            f"where the two values differ by more than {NOISE_Z:g} standard errors of the "
            "difference: the test set's sampling error (accuracy binomial, AUROC Hanley-McNeil "
            "with two equal classes; taken as independent, which overstates it for one shared "
            "test set) plus the seeds' spread where there are two or more; MAE with one seed has "
            "no noise estimate and says so.")


def _decide(sign: int, note: str = "") -> str:
    """The verdict of one comparison; within noise, with what would decide it (the part of
    ``note`` after the 2 SE: :func:`events_needed`)."""
    need = f" ({note.split('; ', 1)[1]})" if "; " in note else ""
    return {1: "holds", -1: "does not hold"}.get(sign, "not decided: within noise" + need)


class _Point:
    """One (dataset, backbone) of a run, its records by algorithm: the rows of
    :func:`orderings` for the findings it can check, each behind ERM's guard (:func:`_guard`)."""

    def __init__(self, ds: str, bb: str, algos: dict[str, list], case: Any) -> None:
        self.ds, self.bb, self.algos, self.case = ds, bb, algos, case
        self.lower = algos["erm"][0]["metrics"]["metric"] == "mae"
        self.scale = 1.0 if self.lower else 100.0
        self.erm_ood, self.erm_id = _ood(algos["erm"]), _id(algos["erm"])
        self.guard = _guard(algos["erm"], self.lower, self.f, ("id", "ood"))
        self.tls = sorted((n, a) for a in algos if (n := tl_size(a)) is not None)
        self.out: list[list[str]] = []

    def f(self, v: float) -> str:
        """A value as the table prints it: MAE in eV, else percent."""
        return f"{v:.3f}" if self.lower else f"{v * self.scale:.2f}"

    def compare(self, a: Sequence[dict[str, Any]], b: Sequence[dict[str, Any]],
                a_side: str = "ood", b_side: str = "ood") -> tuple[int, str]:
        """+1 where ``a`` is better than ``b`` by more than NOISE_Z standard errors of the
        difference, -1 where worse, 0 within; and the evidence ``(Δ ..., 2 SE ...)``. The
        two are taken as independent samples (conservative for one shared test set); with
        no noise estimate (MAE, one seed) the plain ordering decides, and says so."""
        lower, scale = self.lower, self.scale
        margin = _margin(a, _COLS[a_side], b, _COLS[b_side])
        ma = _ood(a) if a_side == "ood" else _id(a)
        mb = _ood(b) if b_side == "ood" else _id(b)
        gain = (mb - ma) if lower else (ma - mb)
        if margin is None:
            return (1 if gain > 0 else -1), f"Δ {gain * scale:+.{3 if lower else 2}f}, no noise estimate"
        sign = 0 if abs(gain) <= margin else (1 if gain > 0 else -1)
        need = events_needed(a, _COLS[a_side], b, _COLS[b_side], gain) if sign == 0 else ""
        return sign, (f"Δ {gain * scale:+.{3 if lower else 2}f}, {NOISE_Z:g} SE "
                      f"{margin * scale:.{3 if lower else 2}f}{need}")

    def row(self, fid: str, evidence: str, verdict: str) -> None:
        """A row of finding ``fid``; its verdict is the guard's where ERM did not learn."""
        statement, where = next((f[1], f[2]) for f in FINDINGS if f[0] == fid)
        self.out.append([statement, where, f"{self.ds} / {self.bb}", evidence, self.guard or verdict])

    def rows(self) -> list[list[str]]:
        """The rows of every finding this point can check, in :data:`FINDINGS`' order."""
        algos, f = self.algos, self.f
        sign, note = self.compare(algos["erm"], algos["erm"], "id", "ood")
        self.row("shift-hurts", f"ERM Test-ID {f(self.erm_id)}, Test-OOD {f(self.erm_ood)} ({note})",
                 _decide(sign, note))
        self.no_info_rarely_helps()
        self.da_pileup_close()
        if "dann" in algos and self.case.family == "track" and self.case.shift == "signal":
            sign, note = self.compare(algos["dann"], algos["erm"])
            self.row("da-signal-helps", f"DANN {f(_ood(algos['dann']))} vs ERM {f(self.erm_ood)} ({note})",
                     _decide(sign, note))
        self.tl_grows_with_n()
        if self.tls and self.case.shift == "fidelity":
            best_a = (min if self.lower else max)((a for _, a in self.tls), key=lambda a: _ood(algos[a]))
            sign, note = self.compare(algos[best_a], algos["erm"])
            self.row("tl-concept", f"best TL {f(_ood(algos[best_a]))} vs ERM {f(self.erm_ood)} ({note})",
                     _decide(sign, note))
        return self.out

    def no_info_rarely_helps(self) -> None:
        """At most half of the No-Info methods run beat ERM beyond noise."""
        algos, f, erm_ood = self.algos, self.f, self.erm_ood
        no_info = [a for a in ("vrex", "groupdro", "dir", "lri", "mixup") if a in algos]
        if not no_info:
            return
        signs = {a: self.compare(algos[a], algos["erm"])[0] for a in no_info}
        wins = [a for a in no_info if signs[a] > 0]
        ties = [a for a in no_info if signs[a] == 0]
        ev = ", ".join(f"{a} {f(_ood(algos[a]))}" for a in no_info) + f" vs ERM {f(erm_ood)}"
        if 2 * (len(wins) + len(ties)) <= len(no_info):
            verdict = "holds"
        elif 2 * len(wins) > len(no_info):
            verdict = "does not hold"
        else:
            needs = [events_needed(algos[a], _COLS["ood"], algos["erm"], _COLS["ood"],
                                   _ood(algos[a]) - erm_ood) for a in ties]
            verdict = (f"not decided: within noise ({len(ties)} of {len(no_info)} within {NOISE_Z:g} "
                       f"SE of ERM" + "".join(f"; {a} {n[2:]}" for a, n in zip(ties, needs, strict=True) if n) + ")")
        self.row("no-info-rarely-helps", ev + f" ({len(wins)} of {len(no_info)} better beyond noise, "
                 f"{len(ties)} within)", verdict)

    def da_pileup_close(self) -> None:
        """Under the pileup shift DANN / DeepCoral stay within 3 points of ERM (the 2-SE interval
        of each gap)."""
        algos, f, erm_ood = self.algos, self.f, self.erm_ood
        da = [a for a in ("dann", "coral") if a in algos]
        if not (da and self.case.family == "track" and self.case.shift == "pileup"):
            return
        ev = ", ".join(f"{a} {f(_ood(algos[a]))}" for a in da) + f" vs ERM {f(erm_ood)}"
        lo_hi = []
        for a in da:
            m = _margin(algos[a], _COLS["ood"], algos["erm"], _COLS["ood"]) or 0.0
            gap = abs(_ood(algos[a]) - erm_ood)
            lo_hi.append(((gap - m) * self.scale, (gap + m) * self.scale))
        if all(hi <= 3.0 for _, hi in lo_hi):
            verdict = "holds"
        elif any(lo > 3.0 for lo, _ in lo_hi):
            verdict = "does not hold"
        else:
            # the size at which the 2-SE interval of the gap clears the 3-point line
            needs = [events_needed(algos[a], _COLS["ood"], algos["erm"], _COLS["ood"],
                                   abs(_ood(algos[a]) - erm_ood) - 0.03) for a in da]
            verdict = ("not decided: within noise (gap " + ", ".join(
                f"{max(lo, 0.0):.2f}-{hi:.2f}" for lo, hi in lo_hi) + f" points at {NOISE_Z:g} SE"
                + "".join(f"; {a} {n[2:]}" for a, n in zip(da, needs, strict=True) if n) + ")")
        self.row("da-pileup-close", ev, verdict)

    def tl_grows_with_n(self) -> None:
        """Par-Label TL improves at each step to a larger N."""
        algos, tls = self.algos, self.tls
        if len(tls) < 2:
            return
        vals = [_ood(algos[a]) for _, a in tls]
        ev = ", ".join(f"TL-{n} {self.f(v)}" for (n, _), v in zip(tls, vals, strict=True))
        cmp = [self.compare(algos[b], algos[a]) for (_, a), (_, b) in zip(tls, tls[1:], strict=False)]
        steps = [c[0] for c in cmp]
        within = "".join(f"; {c[1].split('; ', 1)[1]}" for c in cmp if c[0] == 0 and "; " in c[1])
        verdict = ("holds" if all(x > 0 for x in steps) else
                   "does not hold" if any(x < 0 for x in steps) else
                   f"not decided: within noise ({steps.count(0)} of {len(steps)} steps within "
                   f"{NOISE_Z:g} SE{within})")
        self.row("tl-grows-with-n", ev, verdict)
