"""The report of the ``edgewise`` suite: Tables 1, 3 and 4 layouts beside the paper, the
released-code bin convention, the cells off the paper, the differences from the paper's setup
and the reliability diagrams, drawn from the records only (no dataset is loaded)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gs_bench.published import published
from gs_bench.report import Figure, Table, fmt_mean_std, group_records, has_paper_values, mean_std
from gs_bench.runners.edgewise.spec import Settings
from gs_bench.runners.paper import OFF_THRESHOLD, cell_against_paper, cells_off, off_cells_table

__all__ = ["ORDER", "OFF_THRESHOLD", "tables", "paper_cells", "off_cells", "differences", "figures",
           "bins_label", "unpack_bins"]

ORDER = {"gcn": 0, "gat": 1, "gmnn": 2, "epfgnn": 3}


def paper_cell(vals: list[float], pub: tuple[float, str] | None) -> str:
    from gs_bench.report import fmt_mean_std

    cell = fmt_mean_std(vals)
    if pub is not None and vals:
        cell += f" (paper {pub[0]:.2f}, Δ {mean_std(vals)[0] * 100 - pub[0]:+.2f})"
    return cell


def metric_values(recs, metric: str, variant: str | None = None) -> list[float]:
    out = []
    for r in recs:
        m = r["metrics"] if variant is None else r["metrics"].get(variant)
        if m is not None and metric in m:
            out.append(m[metric])
    return out


def table_rows(groups, metrics, *, extra=None, variants=((None, ""),)) -> list[list[str]]:
    rows = []
    for key in sorted(groups, key=lambda k: (k[0], ORDER.get(k[1], 9), k[1])):
        ds, model = key
        recs = groups[key]
        for variant, label in variants:
            if variant is not None and not any(variant in r["metrics"] for r in recs):
                continue
            pub_model = model if variant != "mean_field" else "epfgnn-mean-field"
            row = [ds, model.upper() + label, str(len(recs))]
            for metric in metrics:
                pub = published("edgewise", ds, pub_model, metric) if variant != "product" else None
                row.append(paper_cell(metric_values(recs, metric, variant), pub))
            if extra:
                row += [fmt_mean_std(metric_values(recs, m, variant)) for m in extra]
            rows.append(row)
    return rows


STRUCT_VARIANTS = (
    (None, ""),
    ("product", " (released code: product of node marginals)"),
    ("mean_field", " (naive mean field at test time)"),
)


#: how far (points) the mean confidence must sit from the accuracy for the note to name it
CONFIDENCE_GAP = 10.0


def mean_confidence(record: dict[str, Any]) -> float | None:
    """The mean top-class confidence on the test nodes (percent), from the record's nodewise
    reliability bins (their confidences weighted by their counts); None without bins."""
    node = (record["metrics"].get("reliability") or {}).get("node") or {}
    conf, count = node.get("confidence"), node.get("count")
    if not conf or not count:
        return None
    pairs = [(c, n) for c, n in zip(conf, count, strict=False) if n and c == c]  # c == c: not NaN
    total = sum(n for _, n in pairs)
    return 100.0 * sum(c * n for c, n in pairs) / total if total else None


def _confidence_note(groups: dict[tuple, list[dict[str, Any]]]) -> str:
    """One sentence per model whose mean confidence is more than :data:`CONFIDENCE_GAP` points
    below (under-confident) or above (over-confident) its nodewise accuracy: a large ECE that
    a reader could take for a bug is the model's calibration, shown by the reliability diagram."""
    out = []
    for (ds, model), recs in sorted(groups.items()):
        confs = [c for c in map(mean_confidence, recs) if c is not None]
        accs = metric_values(recs, "node_acc")
        if not confs or not accs:
            continue
        conf, acc = sum(confs) / len(confs), 100.0 * sum(accs) / len(accs)
        if abs(acc - conf) <= CONFIDENCE_GAP:
            continue
        kind = "under-confident" if conf < acc else "over-confident"
        out.append(f" {model.upper()} on {ds} is {kind}: mean confidence {conf:.1f} % against a "
                   f"nodewise accuracy of {acc:.1f} %, so its ECE is that gap (the reliability "
                   f"diagram's bars sit {'above' if conf < acc else 'below'} the diagonal), not a fault of the metric.")
        if model == "gat":
            gat = [published("edgewise", d, "gat", "nodewise_ece") for d in
                   ("planetoid-cora", "planetoid-citeseer", "planetoid-pubmed")]
            gcn = [published("edgewise", d, "gcn", "nodewise_ece") for d in
                   ("planetoid-cora", "planetoid-citeseer", "planetoid-pubmed")]
            out.append(" The paper's GAT is its worst-calibrated node model too (Table 1, nodewise ECE on "
                       "Cora / Citeseer / Pubmed: GAT " + " / ".join(f"{v[0]:.2f}" for v in gat) +
                       ", GCN " + " / ".join(f"{v[0]:.2f}" for v in gcn) + ").")
    return "".join(out)


def tables(records: Sequence[dict[str, Any]]) -> list[Table]:
    """Tables 1, 3 and 4 layouts, the paper's value beside ours where it has one (percent, mean ±
    std over runs, Δ = ours - paper; a table without any says so in its note).

    GMNN / EPFGNN rows: the paper's text definition (edge joints of the structured model) first,
    then the released code's (``src/evaluation.py`` scores every model on node
    log-probabilities, i.e. the product of the structured node marginals), and for EPFGNN
    naive mean-field test-time inference (Table 4).
    """
    from gs_bench.published import EW_ACC_METRICS, EW_ECE_METRICS

    groups = group_records(records, ("dataset", "model"))
    if not groups:
        return []
    paper_runs = "paper: 5 splits x 3 folds x 5 initialisations = 75 runs per cell"
    m = bins_label(records)
    datasets = ", ".join(sorted({k[0] for k in groups}))

    def paper(rows: list[list[str]], text: str) -> str:  # promise only the values printed
        return (f"Paper values beside ours: {text}." if has_paper_values(rows) else
                f"No paper value in this table: the paper reports none for {datasets}.")

    rows1 = table_rows(groups, EW_ECE_METRICS, extra=("node_acc", "homophily"), variants=STRUCT_VARIANTS[:2])
    t1 = Table(
        "Edgewise calibration, Table 1 layout: ECE (%) on the test nodes, mean ± std over splits x folds x initialisations",
        ["dataset", "model", "runs", "nodewise ECE", "edgewise ECE", "agree ECE", "disagree ECE", "node acc.", "homophily"],
        rows1,
        note=f"{paper(rows1, f'Table 1 ({paper_runs})')} Bins: the paper's eq. 1 (k-1)/m < c <= k/m, m = {m}.",
    )
    t1.note += _confidence_note(groups)
    rows3 = table_rows(groups, EW_ACC_METRICS, variants=STRUCT_VARIANTS[:2])
    t3 = Table(
        "Table 3 layout: nodewise, edgewise, agree and disagree accuracy (%) on the test nodes",
        ["dataset", "model", "runs", "nodewise acc.", "edgewise acc.", "agree acc.", "disagree acc."],
        rows3,
        note=paper(rows3, f"Table 3 ({paper_runs})"),
    )
    epf = {k: v for k, v in groups.items() if k[1] == "epfgnn"}
    out = [t1, t3]
    if epf:
        rows4 = table_rows(epf, EW_ACC_METRICS + EW_ECE_METRICS, variants=(("mean_field", " (mean field)"),))
        out.append(Table(
            "Table 4 layout: EPFGNN with naive mean-field test-time inference (%)",
            ["dataset", "model", "runs", "nodewise acc.", "edgewise acc.", "agree acc.", "disagree acc.",
             "nodewise ECE", "edgewise ECE", "agree ECE", "disagree ECE"],
            rows4,
            note=paper(rows4, "Table 4"),
        ))
    floor_rows = []
    for key in sorted(groups, key=lambda k: (k[0], ORDER.get(k[1], 9))):
        recs = groups[key]
        row = [key[0], key[1].upper(), str(len(recs))]
        for metric in EW_ECE_METRICS:
            diff = [r["metrics"][metric + "_floor"] - r["metrics"][metric] for r in recs
                    if metric + "_floor" in r["metrics"]]
            row.append(f"{fmt_mean_std(metric_values(recs, metric + '_floor'))} (max abs. Δ {max(map(abs, diff), default=0) * 100:.2f})")
        floor_rows.append(row)
    out.append(Table(
        "ECE (%) with the authors' released bin convention floor(c·m) (src/calibloss.py) instead of eq. 1",
        ["dataset", "model", "runs", "nodewise ECE", "edgewise ECE", "agree ECE", "disagree ECE"],
        floor_rows,
        note="max abs. Δ: the largest difference to the eq. 1 bins over the runs (they differ only for "
             f"confidences exactly on a bin edge k/m, m = {m}).",
    ))
    off = off_cells_table(paper_cells(records), "cells of Tables 1, 3 and 4",
                          ["table", "dataset", "model", "metric", "runs", "ours", "paper", "Δ"],
                          ("table", "dataset", "model", "metric"))
    if off is not None:
        out.append(off)
    out.append(Table("Differences from the paper's setup (generated from the run's settings)",
                     ["", "setting"], [[str(i + 1), d] for i, d in enumerate(differences(records))]))
    return out


def paper_cells(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every cell of the paper's Tables 1 (ECE), 3 (accuracy) and 4 (EPFGNN, naive mean field)
    that the records fill: ``{table, dataset, model, metric, n, ours, paper, delta}`` in
    percent (``ours`` = mean over the runs), GMNN / EPFGNN with the paper's text definition."""
    from gs_bench.published import EW_ACC_METRICS, EW_ECE_METRICS

    groups = group_records(records, ("dataset", "model"))
    cells = []
    for key in sorted(groups, key=lambda k: (k[0], ORDER.get(k[1], 9), k[1])):
        ds, model = key
        recs = groups[key]
        parts = [("Table 1", None, model, EW_ECE_METRICS), ("Table 3", None, model, EW_ACC_METRICS)]
        if model == "epfgnn":
            parts.append(("Table 4", "mean_field", "epfgnn-mean-field", EW_ACC_METRICS + EW_ECE_METRICS))
        for table, variant, pub_model, metrics in parts:
            for metric in metrics:
                pub = published("edgewise", ds, pub_model, metric)
                cell = None if pub is None else cell_against_paper(
                    {"table": table, "dataset": ds, "model": pub_model, "metric": metric},
                    metric_values(recs, metric, variant), pub[0])
                if cell is not None:
                    cells.append(cell)
    return cells


def off_cells(records: Sequence[dict[str, Any]], threshold: float = OFF_THRESHOLD) -> list[dict[str, Any]]:
    """The cells of :func:`paper_cells` more than ``threshold`` points from the paper."""
    return cells_off(paper_cells(records), threshold)


def differences(records: Sequence[dict[str, Any]]) -> list[str]:
    """One sentence per place where this run's setup differs from the paper's text or from the
    authors' released code (hans66hsu/structured_uncertainty_metrics), from the records' settings."""
    st = Settings.from_record(records[0]) if records else Settings()
    cells = group_records(records, ("dataset", "model"))
    runs = sorted(len(v) for v in cells.values()) or [0]
    seeds = sorted({int(r["job"]["seed"]) for r in records})
    out = []
    if st.normalize_features:
        out.append(
            "Features are row-normalised (gs_data.load(normalize_features=True)), as the authors' "
            "src/data/data_utils.py declares with NormalizeFeatures; their training scripts read "
            "dataset.data, which bypasses the transform, so the released code trains on raw "
            "bag-of-words features in practice."
        )
    else:
        out.append("Features are raw bag-of-words (normalize_features = false); the authors' "
                   "data code declares row-normalisation (NormalizeFeatures).")
    if st.stopping == "acc_or_nll":
        out.append(
            "Early stopping is the released code's (src/train.py): patience resets when validation "
            "accuracy >= best or NLL <= best, the checkpoint is kept when both hold; the paper only "
            f"says patience {st.patience}."
        )
    else:
        out.append("Early stopping keeps the best validation accuracy (ours, stopping = 'patience'); "
                   "the released code resets patience on accuracy or NLL (src/train.py).")
    span = f"{runs[0]}" if runs[0] == runs[-1] else f"{runs[0]} to {runs[-1]}"
    out.append(
        f"{span} runs per model and dataset in this report (initialisation seeds "
        f"{', '.join(map(str, seeds))}); the paper: 5 splits x 3 folds x 5 initialisations = 75."
    )
    if st.structured_variant == "released":
        out.append(
            "GMNN and EPFGNN follow the released code (structured_variant = 'released'): GMNN's p "
            "is a 2-layer GCN with self-loops whose logits are averaged over 32 label samples, its "
            "edge joints the products of its node marginals (src/evaluation.py); EPFGNN runs up to "
            "100 EM rounds of <= 50-epoch M-steps (EM patience 5) on the star-piece objective with "
            "degree-redistributed unaries and ReZero edge weights, and max-product loopy BP. Left: "
            "q's pre-training optimiser state is not carried into GMNN's E-step (the released "
            "train_gmnn.py reuses it)."
        )
    else:
        out.append(
            "GMNN (structured_variant = 'ours-v1'): our p network propagates the neighbours' labels "
            "once without self-loops and the structured marginals are Rao-Blackwellised averages "
            "over 32 label samples; the released model.py uses a 2-layer GCN with self-loops for p "
            "and averages its logits over the samples."
        )
        out.append(
            "EPFGNN (structured_variant = 'ours-v1'): one EM round with an M-step of at most 100 "
            "epochs and validation patience 10 (the paper's text); the released src/train_epfgnn.py "
            "repeats up to 100 rounds of 50-epoch M-steps (EM patience 5), uses degree-redistributed "
            "unaries with ReZero edge weights and initialises the compatibility matrix at "
            "(randn + I) / C (ours: zeros)."
        )
    out.append(
        "Bins: the paper's eq. 1 ((k-1)/m < c <= k/m); the released calibloss.py uses floor(c m) "
        "(left-closed bins), shown in its own table."
    )
    return out


def figures(records: Sequence[dict[str, Any]], report_dir: Path) -> list[Figure]:
    """Reliability diagrams (nodewise, edgewise, agree, disagree) per dataset and model, pooled
    over runs, drawn by gs-metrics' one reliability plot with each bin's sample count printed
    on its bar; a bar's opacity grows with its share of the samples, so an almost empty bin
    does not look like a full one. The number of bins is the records' (the suite's ``bins``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = group_records(records, ("dataset", "model"))
    if not groups:
        return []
    kinds = (("node", "nodewise"), ("all", "edgewise"), ("agree", "agree"), ("disagree", "disagree"))
    out = []
    for ds in sorted({k[0] for k in groups}):
        keys = sorted((k for k in groups if k[0] == ds), key=lambda k: ORDER.get(k[1], 9))
        fig, axes = plt.subplots(len(keys), len(kinds), figsize=(3.0 * len(kinds), 2.9 * len(keys)),
                                 squeeze=False)
        n_bins: set[int] = set()
        for row, key in zip(axes, keys, strict=True):
            for ax, (kind, label) in zip(row, kinds, strict=True):
                n_bins |= draw_reliability(ax, [r["metrics"]["reliability"].get(kind) for r in groups[key]
                                        if "reliability" in r["metrics"]],
                                   f"{ds} {key[1].upper()}: {label}")
        fig.tight_layout()
        path = report_dir / f"edgewise_reliability_{ds}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        bins_text = " / ".join(str(k) for k in sorted(n_bins)) or "no"
        out.append(Figure(path.name, f"{ds}: nodewise, edgewise, agree and disagree reliability diagrams "
                                     f"({bins_text} bins, test nodes, pooled over runs); the number on a "
                                     "bar is its sample count, pale bars hold few samples."))
    return out


def bins_label(records: Sequence[dict[str, Any]]) -> str:
    """The number of ECE bins ``m`` of the records (from their stored reliability bins, else
    the ``bins`` setting they ran with), e.g. ``"15"``; several values joined by " / "."""
    found = set()
    for r in records:
        rel = r.get("metrics", {}).get("reliability") or {}
        node = rel.get("node")
        found.add(len(node["count"]) if node else Settings.from_record(r).bins)
    return " / ".join(map(str, sorted(found))) or "?"


def unpack_bins(b: dict[str, list[float]]):
    """A record's stored bins (:func:`job.pack_bins`, equal-width) as gs-metrics' ``ReliabilityBins``."""
    from gs_metrics import ReliabilityBins

    counts = np.asarray(b["count"], dtype=np.int64)
    full = counts > 0
    return ReliabilityBins(
        edges=np.linspace(0.0, 1.0, counts.size + 1),
        counts=counts,
        accuracy=np.where(full, np.asarray(b["accuracy"], dtype=float), np.nan),
        confidence=np.where(full, np.asarray(b["confidence"], dtype=float), np.nan),
    )


def draw_reliability(ax, bins_list, title: str) -> set[int]:
    """Draw the runs' bins pooled (:func:`gs_metrics.pool_reliability_bins`) with
    :func:`gs_metrics.plot_reliability_diagram`; returns the number of bins drawn ({} if none)."""
    from gs_metrics import plot_reliability_diagram, pool_reliability_bins

    bins_list = [b for b in bins_list if b]
    if not bins_list:
        ax.set_axis_off()
        return set()
    pooled = pool_reliability_bins([unpack_bins(b) for b in bins_list])
    plot_reliability_diagram(pooled, ax, title=title, show_gap=False, show_counts=True,
                             shade_by_count=True, legend=False, fontsize=7)
    ax.title.set_fontsize(8)
    return {len(pooled.counts)}
