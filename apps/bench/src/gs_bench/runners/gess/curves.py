"""The learning curves of the ``gess`` suite: what a job stores per epoch
(:func:`learning_curves`, on the worker) and the report's figure of them (:func:`figures`,
from the records only; matplotlib is imported only when there is a curve to draw)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gs_bench.report import Figure, group_records
from gs_bench.runners.gess.spec import algorithm_rank

__all__ = ["learning_curves", "mean_curve", "figures", "size_figure"]


def _round5(v: Any) -> float | None:
    """5 significant digits; ``None`` for a missing or non-finite value."""
    return float(f"{v:.5g}") if v is not None and math.isfinite(v) else None


def learning_curves(history: Sequence[dict[str, Any]], metric: str) -> dict[str, list]:
    """The record's ``curves`` from gs-algos' ``FitResult.history``: per epoch (lists of equal
    length) ``epoch``, ``train_loss`` (the method's training objective, penalties included)
    and the selection metric ``metric`` on ``iid_val`` and ``ood_val`` (``None`` on an epoch
    that was not evaluated), 5 significant digits. For ``tl-<N>``: the fine-tuning run."""
    def val(h: dict[str, Any], part: str) -> float | None:
        return _round5((h.get("metrics") or {}).get(part, {}).get(metric))

    return {"epoch": [int(h["epoch"]) for h in history],
            "train_loss": [_round5(h.get("train_loss")) for h in history],
            "iid_val": [val(h, "iid_val") for h in history],
            "ood_val": [val(h, "ood_val") for h in history]}


def mean_curve(recs: Sequence[dict[str, Any]], key: str, scale: float) -> tuple[list[int], list[float]]:
    """Epochs and the mean over ``recs`` (seeds) of ``curves[key]`` at each epoch that has a
    value in at least one record."""
    by_epoch: dict[int, list[float]] = {}
    for r in recs:
        c = r["metrics"]["curves"]
        for e, v in zip(c.get("epoch", []), c.get(key, []), strict=False):
            if v is not None and math.isfinite(v):
                by_epoch.setdefault(int(e), []).append(float(v) * scale)
    epochs = sorted(by_epoch)
    return epochs, [float(np.mean(by_epoch[e])) for e in epochs]


def figures(records: Sequence[dict[str, Any]], report_dir: Path) -> list[Figure]:
    """Learning curves, one PNG per dataset (``gess_curves_<dataset>.png`` in the report
    folder): training loss, Val-ID and Val-OOD selection metric against the epoch, one line
    per (algorithm, backbone), the mean over seeds, from the records' ``curves``
    (:func:`learning_curves`). Records written before them have none: no figure for their
    dataset. matplotlib (Agg) is imported only when there is a curve to draw."""
    from gs_bench.runners.gess.report import full_size

    sized = size_figure(records, report_dir)
    groups = group_records(full_size(records), ("dataset", "backbone", "algorithm"))
    with_curves = {k: [r for r in recs if r["metrics"].get("curves")] for k, recs in groups.items()}
    with_curves = {k: v for k, v in with_curves.items() if v}
    if not with_curves:
        return sized
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from gs_data.geometric import GEOMETRIC_METRICS

    out = []
    for ds in sorted({k[0] for k in with_curves}):
        keys = sorted((k for k in with_curves if k[0] == ds), key=lambda k: (k[1], algorithm_rank(k[2])))
        metric = with_curves[keys[0]][0]["metrics"]["metric"]
        scale = 1.0 if metric == "mae" else 100.0
        unit = "MAE (eV)" if metric == "mae" else f"{GEOMETRIC_METRICS.get(metric, metric)} (%)"
        several_backbones = len({k[1] for k in keys}) > 1
        fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
        colors = plt.get_cmap("tab20" if len(keys) > 10 else "tab10")
        for i, key in enumerate(keys):
            recs = with_curves[key]
            label = f"{key[2]} ({key[1]})" if several_backbones else key[2]
            for ax, (field, s) in zip(axes, (("train_loss", 1.0), ("iid_val", scale), ("ood_val", scale)),
                                      strict=True):
                epochs, mean = mean_curve(recs, field, s)
                if epochs:
                    ax.plot(epochs, mean, color=colors(i % colors.N), label=label, lw=1.2,
                            marker="." if len(epochs) <= 30 else None)
        for ax, title in zip(axes, ("training loss (the method's objective)", f"Val-ID {unit}",
                                    f"Val-OOD {unit} (GeSS selects here)"), strict=True):
            ax.set_title(title, fontsize=9)
            ax.set_xlabel("epoch")
            ax.grid(alpha=0.3)
        axes[-1].legend(fontsize=7, loc="best")
        fig.suptitle(f"GeSS {ds}: learning curves", fontsize=10)
        fig.tight_layout()
        name = f"gess_curves_{ds}.png".replace("/", "_")
        fig.savefig(report_dir / name, dpi=100)
        plt.close(fig)
        seeds = sorted({len(with_curves[k]) for k in keys})
        out.append(Figure(name, f"{ds}: training loss and the selection metric ({unit}) on Val-ID "
                                f"and Val-OOD per epoch, mean over {'/'.join(map(str, seeds))} "
                                f"seed{'s' if seeds != [1] else ''}; the tl-<N> rows show their "
                                "fine-tuning run (their ERM pre-training follows the erm row's protocol)."))
    return out + sized


def size_figure(records: Sequence[dict[str, Any]], report_dir: Path) -> list[Figure]:
    """The learning curve over training size (``gess_size_curve.png``): per dataset, Test-ID
    (ID-sel) and Test-OOD (OOD-sel) against the training events (log scale), mean ± std over
    seeds per (backbone, algorithm), with GeSS's table-3 values at its size as stars; the
    numbers of :func:`gs_bench.runners.gess.report.size_curve`. Empty without ``train_events``
    records."""
    from gs_bench.published import gess_track_published
    from gs_bench.runners.gess.report import GESS_TRAIN_EVENTS, size_points

    points = size_points(records)
    if not points:
        return []
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    datasets = sorted({k[0] for k in points})
    fig, axes = plt.subplots(1, len(datasets), figsize=(5.2 * len(datasets), 3.8), squeeze=False)
    for ax, ds in zip(axes[0], datasets, strict=True):
        for i, ((_, bb, algo), by_n) in enumerate((k, v) for k, v in points.items() if k[0] == ds):
            ns = list(by_n)
            for col, (sel, test, style) in enumerate((("id", "id", "--"), ("ood", "ood", "-"))):
                vals = [[100.0 * r["metrics"][f"{sel}_sel_test_{test}"] for r in by_n[n]] for n in ns]
                ax.errorbar(ns, [float(np.mean(v)) for v in vals], yerr=[float(np.std(v)) for v in vals],
                            ls=style, marker="o", color=f"C{2 * i + col}", capsize=3,
                            label=f"{algo} ({bb}) Test-{'ID' if test == 'id' else 'OOD'}")
            pub = gess_track_published(bb, ds, algo)
            if pub is not None and ds in GESS_TRAIN_EVENTS:
                for col, v in enumerate((pub[0], pub[2])):
                    ax.plot([GESS_TRAIN_EVENTS[ds]], [v], marker="*", ms=12, color=f"C{2 * i + col}", ls="none")
        ax.set_xscale("log")
        ax.set_xlabel("training events (log scale); stars: GeSS table 3 at its size")
        ax.set_ylabel("accuracy (%)")
        ax.set_title(ds, fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    fig.suptitle("GeSS Track: Test-ID / Test-OOD against training size", fontsize=10)
    fig.tight_layout()
    fig.savefig(report_dir / "gess_size_curve.png", dpi=100)
    plt.close(fig)
    return [Figure("gess_size_curve.png", "Test-ID (ID-sel, dashed) and Test-OOD (OOD-sel, solid) "
                   "against the number of training events, mean ± std over seeds; the stars are "
                   "GeSS's published values at its training size (table 3, table 4).")]
