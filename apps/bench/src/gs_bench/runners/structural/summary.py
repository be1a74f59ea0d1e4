"""The ``structural-shifts`` report's summary tables, drawn from the records only: the paper's
Tables 2 / 5 / 7 (average ranks) and Table 3 (win / tie / loss of the "+mod" architecture)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gs_bench.report import Table, group_records, mean_std
from gs_bench.runners.structural.spec import algo_name, canonical_method, method_label

__all__ = ["RANK_ROBUST", "RANK_DETECT", "MOD_ALPHA", "ood_auroc", "cell_values", "rank_values",
           "average_ranks", "mod_counts", "summary_tables"]

def ood_auroc(rec: dict[str, Any], method: str) -> float:
    """The OOD-detection AUROC of a record by the authors' measure: the knowledge
    uncertainty (mutual information) for single GPN / NatPN (records made before gs-algos
    scored them that way hold it as ``ood_auroc_knowledge``), the method's own score
    otherwise."""
    m = rec["metrics"]
    if algo_name(method) in ("gpn", "natpn") and "ood_auroc_knowledge" in m:
        return m["ood_auroc_knowledge"]
    return m["ood_auroc"]


# -- Tables 2 / 5 / 7 (average ranks) and Table 3 (win / tie / loss of "+mod") --------------
#: rows of the paper's rank tables: accuracy (left) and OOD detection (right)
RANK_ROBUST = ("erm", "mixup", "eerm", "dann", "coral", "de")
RANK_DETECT = ("se", "gpn", "natpn", "de", "gpe", "natpe")
#: significance level of the win / tie / loss test (ours: the paper does not name its test)
MOD_ALPHA = 0.05


def cell_values(groups, ds: str, ratio: str, method: str, shift: str, metric: str) -> list[float]:
    recs = groups.get((ds, ratio, method, shift), [])
    if metric == "ood_auroc":
        return [ood_auroc(r, method) for r in recs]
    return [r["metrics"][metric] for r in recs]


def rank_values(values: dict[str, float]) -> dict[str, float]:
    """Rank 1 = highest value; ties share their average rank."""
    from scipy.stats import rankdata

    names = list(values)
    ranks = rankdata([-values[n] for n in names], method="average")
    return dict(zip(names, (float(r) for r in ranks), strict=True))


def average_ranks(records: Sequence[dict[str, Any]], ratio: str) -> tuple[dict, dict, list[str]]:
    """Tables 2 / 5 / 7 for one ratio over the datasets the records cover completely:
    ``(accuracy ranks {method: [6 values]}, detection ranks {method: [3 values]}, datasets)``.
    Per dataset and column the methods are ranked by their mean (1 = best, ties averaged),
    then the ranks are averaged over the datasets. A dataset enters a column only if every
    method of that side has records there."""
    groups = group_records(records, ("dataset", "ratio", "method", "strategy"))
    datasets = sorted({k[0] for k in groups if k[1] == ratio})
    shifts = ("popularity", "locality", "density")
    acc: dict[str, list[list[float]]] = {m: [[] for _ in range(6)] for m in RANK_ROBUST}
    det: dict[str, list[list[float]]] = {m: [[] for _ in range(3)] for m in RANK_DETECT}
    used: set[str] = set()
    for ds in datasets:
        for si, sh in enumerate(shifts):
            for pi, metric in enumerate(("id_acc", "ood_acc")):
                vals = {m: mean_std(cell_values(groups, ds, ratio, m, sh, metric)) for m in RANK_ROBUST}
                if all(v[2] for v in vals.values()):
                    used.add(ds)
                    for m, r in rank_values({m: v[0] for m, v in vals.items()}).items():
                        acc[m][2 * si + pi].append(r)
            vals = {m: mean_std(cell_values(groups, ds, ratio, "erm" if m == "se" else m, sh, "ood_auroc"))
                    for m in RANK_DETECT}
            if all(v[2] for v in vals.values()):
                used.add(ds)
                for m, r in rank_values({m: v[0] for m, v in vals.items()}).items():
                    det[m][si].append(r)
    mean = lambda xs: float(np.mean(xs)) if xs else float("nan")  # noqa: E731
    return ({m: [mean(c) for c in cols] for m, cols in acc.items()},
            {m: [mean(c) for c in cols] for m, cols in det.items()}, sorted(used))


def mod_counts(records: Sequence[dict[str, Any]], ratio: str = "50:50",
               alpha: float = MOD_ALPHA) -> tuple[dict[str, list[tuple[int, int, int]]], list[str]]:
    """Table 3: win / tie / loss of the "+mod" architecture against the base one over the
    datasets, ``{"erm+mod": [6 x (w, t, l)], "se+mod": [3 x (w, t, l)]}``, and the datasets.

    A *win* (loss): the +mod runs' mean is higher (lower) and Welch's t-test on the two sets
    of runs gives p < ``alpha``; otherwise a tie. The paper counts "statistically
    insignificant" differences as ties without naming its test; Welch's test at 0.05 is ours.
    With fewer than 2 runs on a side no test can be made: the cell is a tie unless the means
    differ (then a win / loss by the means alone)."""
    from scipy.stats import ttest_ind

    groups = group_records(records, ("dataset", "ratio", "method", "strategy"))
    datasets = sorted({k[0] for k in groups if k[1] == ratio and canonical_method(k[2]) == "erm+mod"})
    shifts = ("popularity", "locality", "density")
    out = {"erm+mod": [[0, 0, 0] for _ in range(6)], "se+mod": [[0, 0, 0] for _ in range(3)]}

    def verdict(mod: list[float], base: list[float]) -> int | None:
        if not mod or not base:
            return None
        diff = float(np.mean(mod) - np.mean(base))
        if len(mod) >= 2 and len(base) >= 2:
            p = float(ttest_ind(mod, base, equal_var=False).pvalue)
            if not np.isfinite(p) or p >= alpha:
                return 1
        elif diff == 0:
            return 1
        return 0 if diff > 0 else 2

    used = set()
    for ds in datasets:
        for si, sh in enumerate(shifts):
            for pi, metric in enumerate(("id_acc", "ood_acc")):
                v = verdict(cell_values(groups, ds, ratio, "erm+mod", sh, metric),
                            cell_values(groups, ds, ratio, "erm", sh, metric))
                if v is not None:
                    out["erm+mod"][2 * si + pi][v] += 1
                    used.add(ds)
            v = verdict(cell_values(groups, ds, ratio, "erm+mod", sh, "ood_auroc"),
                        cell_values(groups, ds, ratio, "erm", sh, "ood_auroc"))
            if v is not None:
                out["se+mod"][si][v] += 1
                used.add(ds)
    return {k: [tuple(c) for c in v] for k, v in out.items()}, sorted(used)


#: the columns of the accuracy tables (ID and OOD per shift) and of the AUROC tables (a shift each)
ACC_COLUMNS = ["pop ID", "pop OOD", "loc ID", "loc OOD", "den ID", "den OOD"]
DET_COLUMNS = ["popularity", "locality", "density"]


def summary_tables(records: Sequence[dict[str, Any]]) -> list[Table]:
    """The paper's Tables 2 / 5 / 7 (average ranks, per ratio present) and 3 (win / tie /
    loss of +mod at 50:50), ours beside the paper's, labelled with the datasets they cover."""
    from gs_bench.published import SS_PAPER_DATASETS, structural_mod_counts, structural_ranks

    out = []
    ratios = sorted({r["job"]["params"].get("ratio") for r in records if r.get("status") == "ok"} - {None})
    for ratio in ratios:
        pub = structural_ranks(ratio)
        acc, det, used = average_ranks(records, ratio)
        if not used:
            continue
        acc_rows = [[method_label(m)] + [
            "—" if np.isnan(v) else f"{v:.1f}" + (f" ({pub[1][m][i]:.1f})" if pub else "")
            for i, v in enumerate(acc[m])] for m in RANK_ROBUST if not all(np.isnan(acc[m]))]
        det_rows = [[{"se": "SE"}.get(m, method_label(m))] + [
            "—" if np.isnan(v) else f"{v:.1f}" + (f" ({pub[2][m][i]:.1f})" if pub else "")
            for i, v in enumerate(det[m])] for m in RANK_DETECT if not all(np.isnan(det[m]))]
        where = pub[0] if pub else "no paper table"
        over = (f"over {len(used)} of the paper's {SS_PAPER_DATASETS} datasets ({', '.join(used)}), "
                f"ID:OOD {ratio} (paper {where}, its value in brackets; lower is better)")
        partial = ("The paper averages over its 7 datasets, so a rank over fewer datasets is a "
                   "partial view.")
        if acc_rows:
            out.append(Table(f"Average ranks of OOD robustness (accuracy) {over}", ["method", *ACC_COLUMNS], acc_rows,
                             note="ERM, Mixup, EERM, DANN, CORAL and DE ranked per dataset and "
                                  "column. " + partial))
        if det_rows:
            out.append(Table(f"Average ranks of OOD detection (AUROC) {over}", ["method", *DET_COLUMNS], det_rows,
                             note="SE, GPN, NatPN, DE, GPE and NatPE ranked per dataset and "
                                  "shift. " + partial))
    counts, used = mod_counts(records)
    if used:
        pub = structural_mod_counts()
        fmt = lambda c: "/".join(str(x) for x in c)  # noqa: E731
        title = (f"win/tie/loss over {len(used)} of the paper's {SS_PAPER_DATASETS} datasets "
                 f"({', '.join(used)}), 50:50 (paper Table 3 in brackets)")
        test = (f"Win / loss: Welch's t-test over the runs, p < {MOD_ALPHA:g} (ours: the paper does "
                "not name its test); otherwise a tie.")
        out.append(Table(
            f"+mod architecture against the base one, accuracy: {title}", ["row", *ACC_COLUMNS],
            [["ERM + mod"] + [f"{fmt(c)} ({fmt(p)})" for c, p in zip(counts["erm+mod"], pub["erm+mod"], strict=True)]],
            note=test))
        out.append(Table(
            f"+mod architecture against the base one, OOD detection (AUROC): {title}", ["row", *DET_COLUMNS],
            [["SE + mod"] + [f"{fmt(c)} ({fmt(p)})" for c, p in zip(counts["se+mod"], pub["se+mod"], strict=True)]],
            note=test))
    return out
