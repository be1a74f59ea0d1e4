"""Nodewise calibration metrics: ECE (eq. 1-2 of the edgewise-calibration paper), MCE, L2-CE,
NLL (eq. 18), Brier (eq. 20) and accuracy (eq. 16), with equal-width or equal-mass binning.

Reference: Hsu, Shen, Cremers, "A Graph Is More Than Its Nodes: Towards Structured
Uncertainty-Aware Learning on Graphs" (``edgewise-calibration.md``), section 2 and appendix B.

Binning convention (paper eq. 1): with ``m`` equal-width bins, bin ``k`` (1-based) holds the
confidences ``(k-1)/m < c <= k/m``; a confidence of exactly 0 goes to the first bin and 1.0 to
the last. netcal and torchmetrics use left-closed bins ``[(k-1)/m, k/m)`` instead; the two
conventions agree except for confidences lying exactly on an interior bin boundary.
``bin_rule="floor"`` selects the edgewise-calibration authors' released convention
(``src/calibloss.py``, ``ECE.equal_width_binning``: bin ``floor(c m)``, 1.0 in the last bin),
i.e. left-closed bins; the paper's equation stays the default.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from gs_metrics._validation import (
    check_binary,
    check_confidences,
    check_labels_and_mask,
    check_probs,
    warn_empty,
)

__all__ = [
    "ReliabilityBins",
    "accuracy_from_probs",
    "bin_indices",
    "brier_score",
    "calibration_error",
    "confidences_and_correct",
    "expected_calibration_error",
    "l2_calibration_error",
    "maximum_calibration_error",
    "negative_log_likelihood",
    "pool_reliability_bins",
    "reliability_bins",
]

Binning = Literal["width", "mass"]
BinRule = Literal["paper", "floor"]
_BIN_RULES = ("paper", "floor")
Norm = Literal["l1", "l2", "max"]

#: Default number of bins (the paper's and torchmetrics' default).
DEFAULT_BINS = 15


@dataclass(frozen=True)
class ReliabilityBins:
    """Per-bin data of a reliability diagram.

    Attributes
    ----------
    edges : ndarray, shape (m + 1,)
        Bin boundaries. For equal-width binning ``linspace(0, 1, m + 1)``; for equal-mass binning
        the smallest confidence of each bin (and the overall maximum as last edge).
    counts : ndarray of int, shape (m,)
        Number of samples per bin, ``|B_k|``.
    accuracy : ndarray, shape (m,)
        ``acc(B_k)`` (eq. 2), NaN for empty bins.
    confidence : ndarray, shape (m,)
        ``conf(B_k)`` (eq. 2), NaN for empty bins.
    """

    edges: np.ndarray
    counts: np.ndarray
    accuracy: np.ndarray
    confidence: np.ndarray

    @property
    def total(self) -> int:
        """Number of binned samples."""
        return int(self.counts.sum())

    @property
    def gaps(self) -> np.ndarray:
        """``|acc(B_k) - conf(B_k)|`` per bin (NaN for empty bins)."""
        return np.abs(self.accuracy - self.confidence)

    def error(self, norm: Norm = "l1") -> float:
        """Calibration error from the bins: ECE (``"l1"``), L2-CE (``"l2"``) or MCE (``"max"``).

        ``ECE = sum_k |B_k|/n |acc(B_k) - conf(B_k)|`` (eq. 1); ``L2 = sqrt(sum_k |B_k|/n gap_k^2)``;
        ``MCE = max_k gap_k`` over non-empty bins. NaN with a warning when no sample was binned.
        """
        n = self.total
        if n == 0:
            return warn_empty("the evaluated set")
        full = self.counts > 0
        gaps = self.gaps[full]
        w = self.counts[full] / n
        if norm == "l1":
            return float(np.sum(w * gaps))
        if norm == "l2":
            return float(np.sqrt(np.sum(w * gaps**2)))
        if norm == "max":
            return float(np.max(gaps))
        raise ValueError(f"norm must be 'l1', 'l2' or 'max', got {norm!r}")


def _check_bins(n_bins: int) -> int:
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
    return int(n_bins)


def _check_rule(bin_rule: str) -> str:
    if bin_rule not in _BIN_RULES:
        raise ValueError(
            f"bin_rule must be 'paper' ((k-1)/m < c <= k/m, eq. 1) or 'floor' (the authors' "
            f"released code: bin floor(c * m)), got {bin_rule!r}"
        )
    return bin_rule


def bin_indices(
    confidences: np.ndarray, n_bins: int = DEFAULT_BINS, bin_rule: BinRule = "paper"
) -> np.ndarray:
    """0-based equal-width bin index of each confidence, ``(k-1)/m < c <= k/m`` (eq. 1).

    Confidence 0 goes to bin 0, 1.0 to bin ``m - 1``. The boundaries are
    ``numpy.linspace(0, 1, m + 1)``; the result equals
    ``numpy.searchsorted(boundaries[1:-1], c, side="left")`` (tested), computed without a binary
    search: a floor followed by two exact boundary corrections.

    ``bin_rule="floor"``: the authors' released convention (``src/calibloss.py``):
    ``min(floor(c m), m - 1)``, i.e. ``(k-1)/m <= c < k/m``. The two differ only for a
    confidence exactly on an interior boundary ``k/m`` (paper: bin ``k - 1``; floor: bin ``k``).
    """
    n_bins = _check_bins(n_bins)
    c = np.asarray(confidences, dtype=np.float64)
    k = (c * n_bins).astype(np.intp)
    if _check_rule(bin_rule) == "floor":
        return np.clip(k, 0, n_bins - 1)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    np.clip(k, 0, n_bins, out=k)
    k -= c <= edges[k]
    k += c > edges[k + 1]
    np.clip(k, 0, n_bins - 1, out=k)
    return k


def _bins_from_sums(edges, counts, conf_sum, corr_sum) -> ReliabilityBins:
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.where(counts > 0, corr_sum / np.maximum(counts, 1), np.nan)
        conf = np.where(counts > 0, conf_sum / np.maximum(counts, 1), np.nan)
    return ReliabilityBins(
        edges=edges, counts=counts.astype(np.int64), accuracy=acc, confidence=conf
    )


def _reliability_bins(
    conf: np.ndarray, correct: np.ndarray, n_bins: int, binning: Binning,
    bin_rule: BinRule = "paper",
) -> ReliabilityBins:
    if binning == "width":
        idx = bin_indices(conf, n_bins, bin_rule)
        counts = np.bincount(idx, minlength=n_bins)
        conf_sum = np.bincount(idx, weights=conf, minlength=n_bins)
        corr_sum = np.bincount(idx, weights=correct, minlength=n_bins)
        return _bins_from_sums(np.linspace(0.0, 1.0, n_bins + 1), counts, conf_sum, corr_sum)
    if binning == "mass":
        n = conf.shape[0]
        order = np.argsort(conf, kind="stable")
        # sample of rank r goes to bin floor(r * m / n): bins of sizes differing by at most one
        idx = np.empty(n, dtype=np.intp)
        idx[order] = (np.arange(n, dtype=np.int64) * n_bins) // max(n, 1)
        counts = np.bincount(idx, minlength=n_bins)
        conf_sum = np.bincount(idx, weights=conf, minlength=n_bins)
        corr_sum = np.bincount(idx, weights=correct, minlength=n_bins)
        sorted_conf = conf[order]
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        edges = np.empty(n_bins + 1)
        if n:
            edges[:-1] = sorted_conf[np.minimum(starts, n - 1)]
            edges[-1] = sorted_conf[-1]
        else:
            edges[:] = np.nan
        return _bins_from_sums(edges, counts, conf_sum, corr_sum)
    raise ValueError(
        f"binning must be 'width' (equal-width bins) or 'mass' (equal-mass bins), got {binning!r}"
    )


def confidences_and_correct(probs: Any, labels: Any, mask: Any = None, atol: float = 1e-4):
    """Confidence ``c_i = max_l p_i(l)`` and correctness ``1(argmax p_i = y_i)`` of the nodes in ``mask``.

    Parameters
    ----------
    probs : array-like, shape (n, C)
        Predicted class probabilities (rows sum to 1 within ``atol``).
    labels : array-like of int, shape (n,)
        True classes in ``[0, C)`` on the nodes in ``mask``; the others are not used or checked
        (PyG's ``-1`` for unlabelled nodes is fine there).
    mask : array-like of bool (n,) or int indices, optional
        The evaluated node set ``U``; default all nodes.

    Returns
    -------
    (confidences, correct) : tuple of ndarray, shapes (|U|,)
    """
    p = check_probs(probs, "probs", atol)
    y, m = check_labels_and_mask(labels, mask, p.shape[1], p.shape[0])
    p, y = p[m], y[m]
    pred = np.argmax(p, axis=1) if p.size else np.zeros(0, dtype=np.int64)
    conf = p.max(axis=1).astype(np.float64) if p.size else np.zeros(0)
    return np.clip(conf, 0.0, 1.0), pred == y


def reliability_bins(
    probs: Any = None,
    labels: Any = None,
    mask: Any = None,
    *,
    confidences: Any = None,
    correct: Any = None,
    n_bins: int = DEFAULT_BINS,
    binning: Binning = "width",
    bin_rule: BinRule = "paper",
) -> ReliabilityBins:
    """Per-bin accuracy, confidence and counts (the data of a reliability diagram, eq. 1-2).

    Give either ``probs`` and ``labels`` (and optionally ``mask``), or ``confidences`` and
    ``correct`` directly (e.g. edge confidences from :mod:`gs_metrics.edgewise`).

    Parameters
    ----------
    n_bins : int
        Number of bins ``m`` (default 15).
    binning : {"width", "mass"}
        Equal-width bins ``(k-1)/m < c <= k/m`` (paper eq. 1) or equal-mass bins (each bin holds
        ``floor`` or ``ceil`` of ``n/m`` samples, ordered by confidence, ties broken by position).
    bin_rule : {"paper", "floor"}
        Equal-width only: which bin a confidence exactly on a boundary ``k/m`` joins, see
        :func:`bin_indices` (``"floor"`` = the authors' released code).
    """
    n_bins = _check_bins(n_bins)
    _check_rule(bin_rule)
    if confidences is not None or correct is not None:
        if probs is not None or labels is not None:
            raise ValueError("give either probs/labels or confidences/correct, not both")
        conf = check_confidences(confidences, "confidences")
        corr = check_binary(correct, conf.shape[0], "correct")
    else:
        if probs is None or labels is None:
            raise TypeError("reliability_bins needs probs and labels, or confidences and correct")
        conf, corr = confidences_and_correct(probs, labels, mask)
    return _reliability_bins(conf, corr.astype(np.float64), n_bins, binning, bin_rule)


def pool_reliability_bins(bins: Sequence[ReliabilityBins]) -> ReliabilityBins:
    """Pool the bins of several evaluations (e.g. runs) with the same edges: counts add up,
    accuracy and confidence are the count-weighted means per bin (as if all samples had been
    binned at once).

    Raises
    ------
    ValueError
        No bins, or bins with different edges (a different number of bins or binning).
    """
    bins = list(bins)
    if not bins:
        raise ValueError("pool_reliability_bins needs at least one ReliabilityBins")
    for b in bins:
        if not isinstance(b, ReliabilityBins):
            raise TypeError(f"bins must be ReliabilityBins, got {type(b)!r}")
    edges = bins[0].edges
    for b in bins[1:]:
        if b.edges.shape != edges.shape or not np.allclose(b.edges, edges):
            raise ValueError(
                f"cannot pool bins with different edges ({len(edges) - 1} and {len(b.edges) - 1} "
                "bins, or other boundaries); pool only bins of the same binning"
            )
    counts = np.sum([b.counts for b in bins], axis=0)
    conf_sum = np.sum([np.nan_to_num(b.confidence) * b.counts for b in bins], axis=0)
    corr_sum = np.sum([np.nan_to_num(b.accuracy) * b.counts for b in bins], axis=0)
    return _bins_from_sums(np.asarray(edges, dtype=np.float64), counts, conf_sum, corr_sum)


def calibration_error(
    probs: Any = None, labels: Any = None, mask: Any = None, *, norm: Norm = "l1", **bin_options: Any
) -> float:
    """Binned calibration error: ECE (``norm="l1"``, eq. 1), L2-CE (``"l2"``) or MCE (``"max"``).

    The inputs are those of :func:`reliability_bins`: ``probs``, ``labels``, ``mask``, or the
    keywords ``confidences`` and ``correct``; ``bin_options`` (``n_bins``, ``binning``,
    ``bin_rule``, ...) go to it unchanged, so the two never disagree on an option or a default.
    An empty evaluated set gives NaN with an :class:`~gs_metrics.EmptyEvaluationWarning`.
    """
    return reliability_bins(probs, labels, mask, **bin_options).error(norm)


def expected_calibration_error(probs=None, labels=None, mask=None, **kwargs) -> float:
    """Nodewise expected calibration error, eq. (1)-(2) of the edgewise-calibration paper.

    ``ECE = sum_k |B_k| / |U| * |acc(B_k) - conf(B_k)|`` with ``m`` (default 15) equal-width bins
    ``(k-1)/m < c <= k/m``, or equal-mass bins with ``binning="mass"``.

    Examples
    --------
    >>> import numpy as np
    >>> p = np.array([[1/3, 2/3]] * 3)          # appendix A, uniform prediction
    >>> round(expected_calibration_error(p, [0, 1, 1], n_bins=1), 12)
    0.0
    """
    return calibration_error(probs, labels, mask, norm="l1", **kwargs)


def maximum_calibration_error(probs=None, labels=None, mask=None, **kwargs) -> float:
    """Maximum calibration error ``MCE = max_k |acc(B_k) - conf(B_k)|`` over non-empty bins.

    The bins ``B_k`` and ``acc`` / ``conf`` are those of eq. (1)-(2) of the edgewise-calibration
    paper, which defines only the ECE from them (section 2; appendix B notes that other ECE
    variants exist); the MCE is Guo et al. 2017's (the paper's reference [3]), as in
    torchmetrics' ``norm="max"``. Arguments as in :func:`expected_calibration_error`.
    """
    return calibration_error(probs, labels, mask, norm="max", **kwargs)


def l2_calibration_error(probs=None, labels=None, mask=None, **kwargs) -> float:
    """L2 calibration error ``sqrt(sum_k |B_k| / |U| (acc(B_k) - conf(B_k))^2)``.

    The bins ``B_k`` and ``acc`` / ``conf`` are those of eq. (1)-(2) of the edgewise-calibration
    paper, which defines only the ECE from them (section 2; appendix B notes that other ECE
    variants exist, citing Kumar et al. 2019, its reference [10]); this is the binned l2
    variant, as torchmetrics' ``norm="l2"``. Arguments as in
    :func:`expected_calibration_error`.
    """
    return calibration_error(probs, labels, mask, norm="l2", **kwargs)


def negative_log_likelihood(
    probs: Any, labels: Any, mask: Any = None, *, eps: float = 1e-12
) -> float:
    """Nodewise NLL ``-1/|U| sum_i log p_i(y_i)`` (eq. 18); probabilities are clipped below at ``eps``."""
    p = check_probs(probs)
    y, m = check_labels_and_mask(labels, mask, p.shape[1], p.shape[0])
    if not m.any():
        return warn_empty("the evaluated node set")
    pt = p[np.flatnonzero(m), y[m]].astype(np.float64)
    return float(-np.mean(np.log(np.maximum(pt, eps))))


def brier_score(probs: Any, labels: Any, mask: Any = None) -> float:
    """Nodewise Brier score ``1/|U| sum_i sum_l (p_i(l) - 1(l = y_i))^2`` (eq. 20; summed over classes)."""
    p = check_probs(probs)
    y, m = check_labels_and_mask(labels, mask, p.shape[1], p.shape[0])
    if not m.any():
        return warn_empty("the evaluated node set")
    pm = p[m].astype(np.float64)
    pt = pm[np.arange(pm.shape[0]), y[m]]
    return float(np.mean(np.sum(pm**2, axis=1) - 2 * pt + 1))


def accuracy_from_probs(probs: Any, labels: Any, mask: Any = None) -> float:
    """Nodewise accuracy ``1/|U| sum_i 1(argmax p_i = y_i)`` (eq. 16)."""
    conf, correct = confidences_and_correct(probs, labels, mask)
    if correct.size == 0:
        return warn_empty("the evaluated node set")
    return float(correct.mean())
