"""Reliability diagrams: the figure behind the ``plot`` extra (matplotlib, imported lazily).

The per-bin data come from :func:`gs_metrics.reliability_bins` (nodes) or from the ``bins``
attribute of :func:`gs_metrics.edgewise_metrics` subsets (edges).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gs_metrics.calibration import ReliabilityBins

__all__ = ["plot_reliability_diagram"]


def plot_reliability_diagram(
    bins: ReliabilityBins,
    ax: Any = None,
    *,
    title: str | None = None,
    label: str = "accuracy",
    show_gap: bool = True,
    show_counts: bool = False,
    shade_by_count: bool = False,
    legend: bool = True,
    fontsize: float | None = None,
):
    """Draw a reliability diagram (accuracy per confidence bin against the diagonal).

    The one reliability plot of gs (issue 20); any number of bins, equal-width or equal-mass.

    Parameters
    ----------
    bins : ReliabilityBins
        Per-bin data (:func:`gs_metrics.reliability_bins`; several runs pooled with
        :func:`gs_metrics.pool_reliability_bins`).
    ax : matplotlib Axes, optional
        Axes to draw into; a new figure is created when omitted.
    title : str, optional
        Axes title; by default the ECE of the bins.
    label : str
        Legend label of the accuracy bars.
    show_gap : bool
        Draw the gap between accuracy and confidence on each bar (red).
    show_counts : bool
        Print each bin's sample count on its bar.
    shade_by_count : bool
        A bar's opacity grows with its share of the samples, so an almost empty bin does not
        look like a full one.
    legend : bool
        Draw the legend.
    fontsize : float, optional
        Size of the axis labels and tick labels (counts: ``fontsize - 2``).

    Returns
    -------
    matplotlib.figure.Figure
        The figure (``ax.figure``); save it with ``fig.savefig(path)``.
    """
    if not isinstance(bins, ReliabilityBins):
        raise TypeError(
            f"bins must be a ReliabilityBins (from reliability_bins), got {type(bins)!r}"
        )
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "plot_reliability_diagram needs matplotlib (the plot extra): pip install 'matplotlib>=3.7'"
        ) from exc
    if ax is None:
        ax = Figure(figsize=(4, 4)).subplots()  # no pyplot: no global figure state
    edges = bins.edges
    left, width = edges[:-1], np.diff(edges)
    full = bins.counts > 0
    share = bins.counts / max(int(bins.counts.sum()), 1)
    if shade_by_count and full.any():
        alpha = 0.15 + 0.85 * np.minimum(1.0, share / max(float(share.max()), 1e-12))
    else:
        alpha = np.ones(len(share))
    for i, k in enumerate(np.flatnonzero(full)):
        ax.bar(
            left[k],
            bins.accuracy[k],
            width=width[k],
            align="edge",
            edgecolor="black",
            linewidth=0.5 if shade_by_count else None,
            color="tab:blue",
            alpha=float(alpha[k]),
            label=label if i == 0 else None,
        )
    if show_gap:
        for i, k in enumerate(np.flatnonzero(full)):
            ax.bar(
                left[k],
                bins.confidence[k] - bins.accuracy[k],
                bottom=bins.accuracy[k],
                width=width[k],
                align="edge",
                color="tab:red",
                alpha=0.3,
                label="gap" if i == 0 else None,
            )
    if show_counts:
        for k in np.flatnonzero(full):
            ax.text(left[k] + width[k] / 2, min(bins.accuracy[k], 0.9) + 0.02, str(int(bins.counts[k])),
                    ha="center", va="bottom", rotation=90,
                    fontsize=(fontsize - 2) if fontsize is not None else "x-small")
    ax.plot([0, 1], [0, 1], "k--", linewidth=1)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.05 if show_counts else 1)
    ax.set_xlabel("confidence", fontsize=fontsize)
    ax.set_ylabel("accuracy", fontsize=fontsize)
    if fontsize is not None:
        ax.tick_params(labelsize=fontsize - 1)
    ece = bins.error("l1") if bins.total else float("nan")
    ax.set_title(title if title is not None else f"ECE = {ece:.4f} (n = {bins.total})")
    if legend and full.any():
        ax.legend(loc="upper left")
    return ax.figure
