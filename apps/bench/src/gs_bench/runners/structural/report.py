"""The report of the ``structural-shifts`` suite: Tables 9-10 / 16-17 / 1 layouts beside the
paper, the cells off the paper, the protocol paragraph, the splits table and the figures, drawn
from the records only (no dataset is loaded, no split recomputed)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gs_algos.names import ROBUSTNESS_METHODS
from gs_bench.published import published
from gs_bench.report import Figure, Table, fmt_mean_std, group_records, has_paper_values, mean_std
from gs_bench.runners.paper import OFF_THRESHOLD, cell_against_paper, cells_off, off_cells_table
from gs_bench.runners.structural.pictures import MASKS_READ, split_figures
from gs_bench.runners.structural.spec import (
    SHIFT_ORDER,
    Settings,
    canonical_method,
    domain_scope,
    method_label,
    method_names,
    model_preset,
    published_name,
)
from gs_bench.runners.structural.summary import ood_auroc, summary_tables

__all__ = ["ROBUSTNESS_ROWS", "OFF_THRESHOLD", "pub_cell", "tables", "paper_cells", "off_cells",
           "paragraphs", "figures", "split_table"]

#: rows of the robustness tables (paper Tables 9-15) and of the detection tables (16-22)
ROBUSTNESS_ROWS = ("erm", "mixup", "eerm", "dann", "coral", "de", "erm+mod")


def pub_cell(dataset: str, shift: str, method: str, metric: str, ours: float) -> str:
    pub = published("structural-shifts", dataset, shift, method, metric)
    if pub is None or np.isnan(ours):
        return ""
    value, src = pub
    return f" (paper {value:.2f}, Δ {ours * 100 - value:+.2f}; {src})"


def tables(records: Sequence[dict[str, Any]]) -> list[Table]:
    """Tables 9-10 layout (ID / OOD accuracy), Tables 16-17 layout (OOD AUROC), Table 1 drop."""
    out: list[Table] = []
    groups = group_records(records, ("dataset", "ratio", "method", "strategy"))
    datasets = sorted({k[0] for k in groups})
    ratios = sorted({k[1] for k in groups})
    methods = [m for m in method_names() if any(k[2] in (m,) or canonical_method(k[2]) == m for k in groups)]
    shifts = [s for s in SHIFT_ORDER if any(k[3] == s for k in groups)]
    shifts += sorted({k[3] for k in groups} - set(shifts))  # registered strategies
    for ratio in ratios:
        for ds in datasets:
            out += [t for t in (_accuracy_table(groups, ds, ratio, methods, shifts),
                                _detection_table(groups, ds, ratio, methods, shifts)) if t is not None]
        drop = _drop_table(groups, datasets, ratio, shifts)
        if drop is not None:
            out.append(drop)
    out += summary_tables(records)
    splits = split_table(records)
    if splits is not None:
        out.append(splits)
    off = off_cells_table(paper_cells(records), "cells with a paper value",
                          ["dataset", "shift", "method", "metric", "n", "ours", "paper", "Δ"],
                          ("dataset", "shift", "method", "metric"))
    return out if off is None else [*out, off]


def _accuracy_table(groups: dict[tuple, list[dict[str, Any]]], ds: str, ratio: str,
                    methods: list[str], shifts: list[str]) -> Table | None:
    """Tables 9-15 layout: ID / OOD accuracy of the robustness rows on ``ds`` at ``ratio``, the
    paper's value beside ours at 50:50; None without such a row."""
    rows = []
    for meth in methods:
        row = [{"erm": "ERM"}.get(meth, method_label(meth))]
        present = False
        for sh in shifts:
            recs = groups.get((ds, ratio, meth, sh), [])
            present |= bool(recs)
            for metric in ("id_acc", "ood_acc"):
                vals = [r["metrics"][metric] for r in recs]
                cell = fmt_mean_std(vals)
                if ratio == "50:50":
                    cell += pub_cell(ds, sh, meth, metric, mean_std(vals)[0])
                row.append(cell)
        if present and meth in ROBUSTNESS_ROWS:
            rows.append(row)
    if not rows:
        return None
    cols = ["method"] + [f"{sh} {part}" for sh in shifts for part in ("ID", "OOD")]
    return Table(
        f"OOD robustness on {ds} (ID:OOD {ratio}): accuracy (%), mean ± std over seeds (paper Tables 9-15 layout)",
        cols, rows,
        note=("Paper values (Tables 9-10) beside ours where the paper has the same setting: "
              "\"(n=3)\" is our run count, \"(paper 72.43, Δ -1.36; SS Table 10)\" the value of "
              "Table 10 of the structural-shifts paper (Bazhenov et al.) and Δ = ours − paper; "
              "the OOD-detection tables below read the same way."
              if has_paper_values(rows) else
              f"No paper value in this table: the paper reports no {ds} at ID:OOD {ratio} "
              "(its Tables 9-10 hold the 50:50 splits of its seven datasets)."),
    )


def _detection_table(groups: dict[tuple, list[dict[str, Any]]], ds: str, ratio: str,
                     methods: list[str], shifts: list[str]) -> Table | None:
    """Tables 16-22 layout: OOD-detection AUROC of the uncertainty rows on ``ds`` at ``ratio``,
    the paper's value beside ours at 50:50; None without such a row."""
    rows = []
    for meth in methods:
        row = [("SE" if meth == "erm" else "SE + mod" if meth == "erm+mod" else method_label(meth))]
        present = False
        pub_name = published_name(meth)
        for sh in shifts:
            recs = groups.get((ds, ratio, meth, sh), [])
            present |= bool(recs)
            vals = [ood_auroc(r, meth) for r in recs]
            cell = fmt_mean_std(vals)
            if ratio == "50:50":
                cell += pub_cell(ds, sh, pub_name, "ood_auroc", mean_std(vals)[0])
            row.append(cell)
        if present and meth not in ROBUSTNESS_METHODS:
            rows.append(row)
    if not rows:
        return None
    return Table(
        f"OOD detection on {ds} (ID:OOD {ratio}): AUROC (%) (paper Tables 16-22 layout)",
        ["method", *shifts], rows,
    )


def _drop_table(groups: dict[tuple, list[dict[str, Any]]], datasets: list[str], ratio: str,
                shifts: list[str]) -> Table | None:
    """Table 1 layout: ERM's relative accuracy drop ID -> OOD and SE's AUROC per dataset at
    ``ratio``, the paper's value beside ours where it has one; None without any value."""
    rows = []
    for ds in datasets:
        row = [ds]
        for metric, pub_method, fmt in (("drop", "erm", "{:+.2f} %"), ("ood_auroc", "se", "{:.2f}")):
            for sh in shifts:
                vals = [r["metrics"][metric] for r in groups.get((ds, ratio, "erm", sh), [])]
                m, _, n = mean_std(vals)
                cell = f"{fmt.format(m * 100)} (n={n})" if n else "—"
                pub = published("structural-shifts", ds, ratio, sh, pub_method, metric)
                if n and pub is not None:
                    cell += f" (paper {pub[0]:.2f}, Δ {m * 100 - pub[0]:+.2f}; {pub[1]})"
                row.append(cell)
        rows.append(row)
    if not any(any(c != "—" for c in r[1:]) for r in rows):
        return None
    return Table(
        f"ERM accuracy drop ID→OOD and SE OOD-detection AUROC (ID:OOD {ratio}; paper Table 1 layout)",
        ["dataset", *[f"drop {s}" for s in shifts], *[f"AUROC {s}" for s in shifts]], rows,
    )


def paper_cells(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every 50:50 cell of Tables 9-10 (ID / OOD accuracy) and 16-17 (OOD AUROC) that the
    records fill and the paper reports: ``{dataset, shift, method, metric, n, ours, paper,
    delta}`` in percent (``ours`` = mean over the cell's runs), in report order."""
    groups = group_records(records, ("dataset", "ratio", "method", "strategy"))
    cells = []
    for (ds, ratio, meth, sh), recs in sorted(
        groups.items(), key=lambda kv: (kv[0][0], SHIFT_ORDER.index(kv[0][3]) if kv[0][3] in SHIFT_ORDER else 9, kv[0][2])
    ):
        if ratio != "50:50":
            continue
        canon = canonical_method(meth)
        wanted = []
        if canon in ROBUSTNESS_ROWS:
            wanted += [(metric, canon, [r["metrics"][metric] for r in recs]) for metric in ("id_acc", "ood_acc")]
        if canon not in ROBUSTNESS_METHODS:
            pub_name = published_name(canon)
            wanted.append(("ood_auroc", pub_name, [ood_auroc(r, canon) for r in recs]))
        for metric, pub_name, vals in wanted:
            pub = published("structural-shifts", ds, sh, pub_name, metric)
            cell = None if pub is None else cell_against_paper(
                {"dataset": ds, "shift": sh, "method": pub_name, "metric": metric}, vals, pub[0])
            if cell is not None:
                cells.append(cell)
    return cells


def off_cells(records: Sequence[dict[str, Any]], threshold: float = OFF_THRESHOLD) -> list[dict[str, Any]]:
    """The cells of :func:`paper_cells` more than ``threshold`` points from the paper."""
    return cells_off(paper_cells(records), threshold)


#: the protocols of :func:`gs_algos.TrainConfig.structural_shifts` in words, for the report
PROTOCOL_WORDS = {"authors": "Training as in the paper authors' code",
                  "early-stop": "Our earlier training, with early stopping"}


def _runs_text(runs: int, members: int) -> str:
    """``"3 runs"``, ``"1 run of 5 members"``: the run count, and the member count where a run
    is an ensemble."""
    text = f"{runs} run{'s' if runs != 1 else ''}"
    return text if members == 1 else f"{text} of {members} members"


def _seeds_text(seeds: list[int]) -> str:
    """``"seed 43"``, ``"seeds 43–47"`` for a consecutive range, else ``"seeds 43, 45"``."""
    if len(seeds) == 1:
        return f"seed {seeds[0]}"
    if seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"seeds {seeds[0]}–{seeds[-1]}"
    return "seeds " + ", ".join(str(s) for s in seeds)


def paragraphs(records: Sequence[dict[str, Any]]) -> list[str]:
    """The "protocol" paragraph of the report, generated from the jobs' settings and the
    gs-algos / gs-models configs they resolve to (one paragraph per distinct setting)."""
    from gs_algos.config import TrainConfig
    from gs_models import preset as model_config

    seen: dict[str, Settings] = {}
    counts: dict[tuple, set] = {}
    for r in records:
        # one paragraph per settings dict the jobs ran with, read through the typed settings
        key = repr(sorted((k, str(v)) for k, v in r["job"]["settings"].items()))
        if key not in seen:
            seen[key] = Settings.from_record(r)
        counts.setdefault((key, canonical_method(r["job"]["params"]["method"])), set()).add(
            tuple(r.get("metrics", {}).get("member_seeds", [r["job"]["seed"]]))
        )
    out = []
    for key, st in seen.items():
        protocol = st.protocol
        cfg = TrainConfig.structural_shifts(protocol, **st.train_changes())
        stop = "no early stopping" if cfg.patience is None else f"early stopping after {cfg.patience} epochs without improvement"
        rule = "lowest" if not cfg.higher_is_better else "highest"
        base = model_config(model_preset("erm", protocol))
        order = " → ".join({"conv-act-norm": ["conv", base.activation.upper(), f"{base.norm} norm", f"dropout {base.dropout}"],
                            "conv-norm-act": ["conv", f"{base.norm} norm", base.activation.upper(), f"dropout {base.dropout}"]}[base.layer_order])
        runs_txt = []
        for (k, meth), seeds in sorted(counts.items()):
            if k == key:
                members = sorted({s for t in seeds for s in t})
                runs_txt.append(f"{method_label(meth)} {_runs_text(len(seeds), len(next(iter(seeds))))}, {_seeds_text(members)}")
        source = st.split_source
        split_txt = ("the authors' published masks (yandex-research/structural-graph-shifts, `datasets/<name>/splits/<shift>.pth`)"
                     if source == "authors" else
                     "the authors' published masks at 50:50, gs-splits with split seed 0 at the other ratios"
                     if source == "authors-where-published" else "gs-splits, split seed 0 (ties at the ID/OOD boundary broken by the seed, so a split may differ from the authors' files)")
        robust = sorted({m for (k, m) in counts if k == key and m in ROBUSTNESS_METHODS})
        robust_txt = ""
        if robust:
            variant = st.robustness_variant
            robust_txt = (
                f" {', '.join(method_label(m) for m in robust)}: "
                + ("the GOOD benchmark's losses (robustness_variant = \"good\")"
                   if variant == "good" else "our earlier losses (robustness_variant = \"ours-v1\")")
                + f", with {st.domains} domains: bins of the shift's node property over "
                + ("the training nodes" if domain_scope(st) == "in_train" else "all nodes")
                + ("; trained in GOOD's framework, as the paper did (robustness_framework = \"good\": "
                   "GCN 3 × 300, ReLU, dropout 0.5; Adam lr 1e-3, no weight decay, 100 epochs, EERM "
                   "lr 5e-3 and 50 epochs; best Valid-In accuracy: gs_algos TrainConfig.good_cora)"
                   if st.robustness_framework == "good"
                   else "; trained with the protocol above, like every other method "
                        "(robustness_framework = \"paper\"), not in GOOD's own training framework, "
                        "which the paper names for them (--robustness-framework good)") + "."
            )
        out.append(
            f"**Protocol ({protocol}).** {PROTOCOL_WORDS.get(protocol, protocol)} (protocol = \"{protocol}\"): "
            f"Adam, learning rate {cfg.lr:g}, weight decay {cfg.weight_decay:g}, "
            f"full batch, {cfg.max_epochs} epochs, {stop}; the weights of the epoch with the {rule} "
            f"{cfg.metric} on Valid-In (the validation nodes of the ID part) are restored "
            f"(gs_algos TrainConfig.structural_shifts({protocol!r})). "
            f"Base model: {base.num_layers} {base.model.upper()} layers × {base.hidden_channels}, layer order {order}, linear head. "
            f"Splits: {split_txt}. Runs: {'; '.join(runs_txt)}.{robust_txt}"
        )
    return out


def figures(records: Sequence[dict[str, Any]], report_dir: Path, run_dir: Path | None = None) -> list[Figure]:
    """ID vs OOD accuracy per shift (one bar group per dataset and method), and the split
    figures from the layouts stored in ``run_dir`` (default: ``report_dir``'s parent)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = group_records(records, ("dataset", "strategy", "method"))
    if not groups:
        return []
    keys = sorted(groups)
    datasets = sorted({k[0] for k in keys})
    fig, ax = plt.subplots(figsize=(max(6, 1.0 * len(keys)), 3.8))
    xs = np.arange(len(keys))
    id_m = [mean_std(r["metrics"]["id_acc"] for r in groups[k])[0] * 100 for k in keys]
    ood_m = [mean_std(r["metrics"]["ood_acc"] for r in groups[k])[0] * 100 for k in keys]
    ax.bar(xs - 0.2, id_m, 0.4, label="ID test", color="tab:blue")
    ax.bar(xs + 0.2, ood_m, 0.4, label="OOD test", color="tab:red")
    ax.set_xticks(xs)
    if len(datasets) == 1:
        ax.set_xticklabels([f"{s}\n{m.upper()}" for _, s, m in keys], fontsize=8)
    else:
        ax.set_xticklabels([f"{d}\n{s}\n{m.upper()}" for d, s, m in keys], fontsize=7)
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 100)
    title = "Structural shifts: ID vs OOD test accuracy"
    if len(datasets) == 1:
        title += f" on {datasets[0]}" + (" (synthetic)" if "synthetic" in datasets[0] else "")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2, frameon=False)
    fig.tight_layout()
    path = report_dir / "structural_id_ood_accuracy.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    figs = [Figure(path.name, "ID vs OOD test accuracy per dataset, shift and method (mean over seeds).")]
    return figs + split_figures(records, report_dir, run_dir)


def split_table(records: Sequence[dict[str, Any]]) -> Table | None:
    """The split each (dataset, shift, ratio, mask source) of the records used: nodes per part,
    read from the records (``metrics["sizes"]``, stored by every job)."""
    rows: dict[tuple, list[str]] = {}
    for r in records:
        if r.get("status") != "ok" or not isinstance(r.get("metrics", {}).get("sizes"), dict):
            continue
        p, sizes = r["job"]["params"], r["metrics"]["sizes"]
        # the masks the job read (records of before: its setting)
        source = r["metrics"].get(MASKS_READ) or Settings.from_record(r).split_source
        key = (p["dataset"], SHIFT_ORDER.index(p["strategy"]) if p["strategy"] in SHIFT_ORDER else 9,
               p["strategy"], p["ratio"], source)
        rows.setdefault(key, [p["dataset"], p["strategy"], p["ratio"], source,
                              *(str(sizes.get(k, "—")) for k in ("in_train", "in_valid", "in_test", "out_valid", "out_test"))])
    if not rows:
        return None
    return Table(
        "Splits used by the jobs: nodes per part (from the job records)",
        ["dataset", "shift", "ID:OOD", "masks", "Train", "Valid-In", "Test-In", "Valid-Out", "Test-Out"],
        [rows[k] for k in sorted(rows)],
        note="masks: 'seeded' = gs-splits with split seed 0, 'authors' = the authors' published files.",
    )
