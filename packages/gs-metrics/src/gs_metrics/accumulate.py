"""Accumulating metrics for batched evaluation (torchmetrics-style ``update`` / ``compute`` /
``reset`` / ``merge``).

Each class gives, after any sequence of ``update`` calls, exactly the value of the matching
pure function on the concatenated inputs (tested). Equal-width calibration bins are streamed as
per-bin sums; equal-mass binning and the ranking metrics (AUROC, AUPR, FPR95, PRR) keep the
scores, since they need all of them at once.

``EdgewiseCalibration`` accumulates over *disjoint* graphs or edge batches: edges are
deduplicated within one ``update`` call only, and each call's ``mask`` defines its own evaluated
nodes (for the K index).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gs_metrics._validation import (
    PROB_ATOL,
    check_binary,
    check_confidences,
    check_labels_and_mask,
    check_probs,
    check_scores,
    to_numpy,
    warn_empty,
)
from gs_metrics.calibration import (
    DEFAULT_BINS,
    Binning,
    ReliabilityBins,
    _bins_from_sums,
    _check_bins,
    _reliability_bins,
    bin_indices,
    confidences_and_correct,
)
from gs_metrics.detection import (
    OODDetectionMetrics,
    _auroc,
    _binary_inputs,
    _prediction_rejection_ratio,
    ood_detection_metrics,
)
from gs_metrics.edgewise import EdgewiseMetrics, _accumulate, _EdgeSums

__all__ = [
    "CalibrationAccumulator",
    "EdgewiseCalibration",
    "MeanAbsoluteErrorAccumulator",
    "MisclassificationDetection",
    "OODDetection",
]


class _Accumulator:
    def reset(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def __init__(self) -> None:
        self.reset()

    def merge(self, other: _Accumulator) -> None:
        """Add the state of another accumulator of the same kind and settings (e.g. a worker's)."""
        if type(other) is not type(self):
            raise TypeError(f"cannot merge {type(other).__name__} into {type(self).__name__}")
        self._merge(other)

    def _merge(self, other) -> None:  # pragma: no cover - overridden
        raise NotImplementedError


class CalibrationAccumulator(_Accumulator):
    """Streaming nodewise ECE/MCE/L2 (eq. 1-2), NLL (eq. 18), Brier (eq. 20) and accuracy.

    Parameters
    ----------
    n_bins : int
        Number of bins (default 15).
    binning : {"width", "mass"}
        Equal-width bins (streamed as sums) or equal-mass bins (confidences kept).

    Examples
    --------
    >>> import numpy as np
    >>> acc = CalibrationAccumulator(n_bins=10)
    >>> acc.update(np.array([[0.2, 0.8]]), np.array([1]))
    >>> acc.update(np.array([[0.6, 0.4]]), np.array([1]))
    >>> res = acc.compute()
    >>> round(res["ece"], 6), res["accuracy"]
    (0.4, 0.5)
    """

    def __init__(self, n_bins: int = DEFAULT_BINS, binning: Binning = "width", eps: float = 1e-12):
        self.n_bins = _check_bins(n_bins)
        if binning not in ("width", "mass"):
            raise ValueError(f"binning must be 'width' or 'mass', got {binning!r}")
        self.binning = binning
        self.eps = eps
        super().__init__()

    def reset(self) -> None:
        """Forget everything seen so far."""
        m = self.n_bins
        self.counts = np.zeros(m, dtype=np.int64)
        self.conf_sum = np.zeros(m)
        self.corr_sum = np.zeros(m)
        self.nll_sum = 0.0
        self.brier_sum = 0.0
        self.n_prob = 0  # samples that came with full probabilities (for NLL / Brier)
        self._conf: list[np.ndarray] = []
        self._corr: list[np.ndarray] = []

    def update(self, probs: Any, labels: Any, mask: Any = None, *, atol: float = PROB_ATOL) -> None:
        """Add a batch of predicted probabilities ``(n, C)`` and labels ``(n,)``."""
        p = check_probs(probs, "probs", atol)
        y, m = check_labels_and_mask(labels, mask, p.shape[1], p.shape[0])
        conf, corr = confidences_and_correct(p, y, m, atol)
        pm = p[m].astype(np.float64)
        pt = pm[np.arange(pm.shape[0]), y[m]]
        self.nll_sum += float(-np.log(np.maximum(pt, self.eps)).sum())
        self.brier_sum += float((np.sum(pm**2, axis=1) - 2 * pt + 1).sum())
        self.n_prob += int(pm.shape[0])
        self._add(conf, corr)

    def update_confidences(self, confidences: Any, correct: Any) -> None:
        """Add a batch of confidences and correctness flags (ECE/MCE/L2/accuracy only)."""
        conf = check_confidences(confidences)
        corr = check_binary(correct, conf.shape[0], "correct")
        self._add(conf, corr)

    def _add(self, conf: np.ndarray, corr: np.ndarray) -> None:
        if self.binning == "width":
            idx = bin_indices(conf, self.n_bins)
            self.counts += np.bincount(idx, minlength=self.n_bins)
            self.conf_sum += np.bincount(idx, weights=conf, minlength=self.n_bins)
            self.corr_sum += np.bincount(
                idx, weights=corr.astype(np.float64), minlength=self.n_bins
            )
        else:
            self._conf.append(np.asarray(conf, dtype=np.float64))
            self._corr.append(np.asarray(corr, dtype=np.float64))

    def _merge(self, other: CalibrationAccumulator) -> None:
        if (other.n_bins, other.binning) != (self.n_bins, self.binning):
            raise ValueError("cannot merge accumulators with different n_bins or binning")
        self.counts += other.counts
        self.conf_sum += other.conf_sum
        self.corr_sum += other.corr_sum
        self.nll_sum += other.nll_sum
        self.brier_sum += other.brier_sum
        self.n_prob += other.n_prob
        self._conf += other._conf
        self._corr += other._corr

    def bins(self) -> ReliabilityBins:
        """Reliability-diagram data of everything seen so far."""
        if self.binning == "width":
            return _bins_from_sums(
                np.linspace(0, 1, self.n_bins + 1), self.counts, self.conf_sum, self.corr_sum
            )
        conf = np.concatenate(self._conf) if self._conf else np.zeros(0)
        corr = np.concatenate(self._corr) if self._corr else np.zeros(0)
        return _reliability_bins(conf, corr, self.n_bins, "mass")

    def compute(self) -> dict[str, float]:
        """``{"ece", "mce", "l2", "accuracy", "nll", "brier", "count"}``; NaN (with a warning) if empty.

        ``nll`` and ``brier`` cover the samples given through :meth:`update` only.
        """
        b = self.bins()
        n = b.total
        if n == 0:
            nan = warn_empty("the accumulated evaluated set")
            return {
                "ece": nan,
                "mce": nan,
                "l2": nan,
                "accuracy": nan,
                "nll": nan,
                "brier": nan,
                "count": 0,
            }
        return {
            "ece": b.error("l1"),
            "mce": b.error("max"),
            "l2": b.error("l2"),
            "accuracy": float(np.nansum(b.accuracy * b.counts) / n),
            "nll": self.nll_sum / self.n_prob if self.n_prob else float("nan"),
            "brier": self.brier_sum / self.n_prob if self.n_prob else float("nan"),
            "count": n,
        }


class EdgewiseCalibration(_Accumulator):
    """Streaming edgewise metrics (:func:`gs_metrics.edgewise_metrics`) over disjoint graphs."""

    def __init__(self, n_bins: int = DEFAULT_BINS, binning: Binning = "width", eps: float = 1e-12):
        self.n_bins, self.binning, self.eps = _check_bins(n_bins), binning, eps
        super().__init__()

    def reset(self) -> None:
        """Forget everything seen so far."""
        self._sums = _EdgeSums(self.n_bins, self.binning, self.eps)

    def update(
        self, probs, labels, edge_index, mask=None, *, edge_marginals=None, atol: float = PROB_ATOL
    ) -> None:
        """Add one graph (or one edge batch disjoint from the others); arguments as in
        :func:`gs_metrics.edgewise_metrics`."""
        _accumulate(self._sums, probs, labels, edge_index, mask, edge_marginals, atol)

    def _merge(self, other: EdgewiseCalibration) -> None:
        if (other.n_bins, other.binning) != (self.n_bins, self.binning):
            raise ValueError("cannot merge accumulators with different n_bins or binning")
        a, b = self._sums, other._sums
        a.counts += b.counts
        a.conf_sum += b.conf_sum
        a.corr_sum += b.corr_sum
        a.nll_sum += b.nll_sum
        a.brier_sum += b.brier_sum
        a.kept_nodes += b.kept_nodes
        a.num_nodes_evaluated += b.num_nodes_evaluated
        a._mass += b._mass

    def compute(self) -> EdgewiseMetrics:
        """All edgewise metrics of the accumulated graphs."""
        return self._sums.result()


class _ScoreStore(_Accumulator):
    def reset(self) -> None:
        """Forget everything seen so far."""
        self._scores: list[np.ndarray] = []
        self._targets: list[np.ndarray] = []

    def _store(self, scores, target, name) -> None:
        s = check_scores(scores, "scores")
        t = check_binary(target, s.shape[0], name)
        self._scores.append(s)
        self._targets.append(t)

    def _merge(self, other) -> None:
        self._scores += other._scores
        self._targets += other._targets

    def _all(self):
        s = np.concatenate(self._scores) if self._scores else np.zeros(0)
        t = np.concatenate(self._targets) if self._targets else np.zeros(0, dtype=bool)
        return s, t


class OODDetection(_ScoreStore):
    """Streaming OOD detection: AUROC, AUPR and FPR@95%TPR (OOD = positive, score = uncertainty)."""

    def update(self, uncertainty: Any, is_ood: Any) -> None:
        """Add a batch of uncertainties and OOD flags."""
        self._store(uncertainty, is_ood, "is_ood")

    def compute(self) -> OODDetectionMetrics:
        s, t, bad = _binary_inputs(*self._all(), "is_ood", "uncertainty")  # warns once
        if bad is not None:
            return OODDetectionMetrics(auroc=bad, aupr=bad, fpr95=bad)
        return ood_detection_metrics(s, t)


class MisclassificationDetection(_ScoreStore):
    """Streaming misclassification detection: AUROC and prediction rejection ratio."""

    def update(self, uncertainty: Any, is_error: Any) -> None:
        """Add a batch of uncertainties and error flags (True = misclassified)."""
        self._store(uncertainty, is_error, "is_error")

    def compute(self) -> dict[str, float]:
        s, t, bad = _binary_inputs(*self._all(), "is_error", "uncertainty")  # warns once
        if bad is not None:
            return {"auroc": bad, "prr": bad}
        return {"auroc": _auroc(s, t), "prr": _prediction_rejection_ratio(s, t)}


class MeanAbsoluteErrorAccumulator(_Accumulator):
    """Streaming mean absolute error (exact: sum of absolute errors and count)."""

    def reset(self) -> None:
        """Forget everything seen so far."""
        self.abs_sum = 0.0
        self.count = 0

    def update(self, pred: Any, target: Any) -> None:
        """Add a batch of predictions and targets of equal shape."""
        p = np.asarray(to_numpy(pred, "pred"), dtype=np.float64)
        t = np.asarray(to_numpy(target, "target"), dtype=np.float64)
        if p.shape != t.shape:
            raise ValueError(
                f"pred and target must have the same shape, got {p.shape} and {t.shape}"
            )
        if p.size and (not np.isfinite(p).all() or not np.isfinite(t).all()):
            raise ValueError("pred and target must be finite (found NaN or infinity)")
        self.abs_sum += float(np.abs(p - t).sum())
        self.count += int(p.size)

    def _merge(self, other: MeanAbsoluteErrorAccumulator) -> None:
        self.abs_sum += other.abs_sum
        self.count += other.count

    def compute(self) -> float:
        """MAE over every element seen; NaN with a warning if nothing was seen."""
        if self.count == 0:
            return warn_empty("the accumulated set")
        return self.abs_sum / self.count
