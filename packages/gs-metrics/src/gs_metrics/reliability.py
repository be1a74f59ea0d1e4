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
    bins: ReliabilityBins, ax: Any = None, *, title: str | None = None, label: str = "accuracy"
):
    """Draw a reliability diagram (accuracy per confidence bin against the diagonal).

    Parameters
    ----------
    bins : ReliabilityBins
        Per-bin data (equal-width or equal-mass).
    ax : matplotlib Axes, optional
        Axes to draw into; a new figure is created when omitted.
    title : str, optional
        Axes title; by default the ECE of the bins.

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
            "plot_reliability_diagram needs matplotlib: pip install 'gs-metrics[plot]'"
        ) from exc
    if ax is None:
        ax = Figure(figsize=(4, 4)).subplots()  # no pyplot: no global figure state
    edges = bins.edges
    left, width = edges[:-1], np.diff(edges)
    full = bins.counts > 0
    ax.bar(
        left[full],
        bins.accuracy[full],
        width=width[full],
        align="edge",
        edgecolor="black",
        color="tab:blue",
        label=label,
    )
    ax.bar(
        left[full],
        bins.confidence[full] - bins.accuracy[full],
        bottom=bins.accuracy[full],
        width=width[full],
        align="edge",
        color="tab:red",
        alpha=0.3,
        label="gap",
    )
    ax.plot([0, 1], [0, 1], "k--", linewidth=1)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("confidence")
    ax.set_ylabel("accuracy")
    ece = bins.error("l1") if bins.total else float("nan")
    ax.set_title(title if title is not None else f"ECE = {ece:.4f} (n = {bins.total})")
    ax.legend(loc="upper left")
    return ax.figure
