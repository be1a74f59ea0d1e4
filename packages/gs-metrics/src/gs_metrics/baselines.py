"""Trivial baselines: what a predictor that learns nothing about the inputs scores.

A benchmark verdict such as "method A beats method B" means something only when the models
learned more than such a predictor; these functions give its score on held-out parts, fitted on
the training labels alone (or, for :func:`fit_threshold_classifier`, on one scalar per sample,
e.g. a known shortcut such as the number of hits of a Track event).

* :func:`majority_class` / :func:`majority_class_accuracy`: always predict the most frequent
  training class (scikit-learn's ``DummyClassifier(strategy="most_frequent")``; a tie goes to
  the smallest label, as there).
* :func:`mean_predictor_mae`: always predict the training mean (``DummyRegressor()``), scored
  by the mean absolute error.
* :func:`fit_threshold_classifier`: the best rule ``x > t -> side`` on one scalar feature, the
  threshold ``t`` and the ``side`` chosen for the highest training accuracy; a
  :class:`ThresholdClassifier` that predicts and scores other parts.

An empty evaluated set returns NaN with :class:`~gs_metrics.EmptyEvaluationWarning`, as every
metric of this package; an empty training set raises ``ValueError`` (nothing to fit).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gs_metrics._validation import check_labels, check_scores, to_numpy, warn_empty

__all__ = [
    "ThresholdClassifier",
    "fit_threshold_classifier",
    "majority_class",
    "majority_class_accuracy",
    "mean_predictor_mae",
]


def _train_labels(labels: Any, name: str) -> np.ndarray:
    y = check_labels(labels, None, None, name)
    if y.size == 0:
        raise ValueError(f"{name} is empty: a baseline needs at least one training label")
    if y.min() < 0:
        raise ValueError(f"{name} must be non-negative class indices, got minimum {y.min()}")
    return y


def majority_class(train_labels: Any) -> int:
    """The most frequent class of ``train_labels`` (integer class indices); the smallest of
    several equally frequent classes."""
    y = _train_labels(train_labels, "train_labels")
    return int(np.argmax(np.bincount(y)))


def majority_class_accuracy(train_labels: Any, test_labels: Any) -> float:
    """Accuracy on ``test_labels`` of always predicting :func:`majority_class` of
    ``train_labels``: the share of test samples of that class (NaN with a warning when
    ``test_labels`` is empty)."""
    c = majority_class(train_labels)
    t = check_labels(test_labels, None, None, "test_labels")
    if t.size == 0:
        return warn_empty("test_labels")
    return float(np.mean(t == c))


def _targets(x: Any, name: str) -> np.ndarray:
    v = np.asarray(to_numpy(x, name), dtype=np.float64).reshape(-1)
    if v.size and not np.isfinite(v).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return v


def mean_predictor_mae(train_targets: Any, test_targets: Any) -> float:
    """Mean absolute error on ``test_targets`` of always predicting the mean of
    ``train_targets`` (regression; arrays of any shape are flattened, one target per element).
    NaN with a warning when ``test_targets`` is empty."""
    tr = _targets(train_targets, "train_targets")
    if tr.size == 0:
        raise ValueError("train_targets is empty: a baseline needs at least one training target")
    te = _targets(test_targets, "test_targets")
    if te.size == 0:
        return warn_empty("test_targets")
    return float(np.mean(np.abs(te - tr.mean())))


@dataclass(frozen=True)
class ThresholdClassifier:
    """The rule "predict ``side`` where ``x > threshold``, ``1 - side`` elsewhere" on one
    scalar feature, with the training accuracy it was chosen for
    (:func:`fit_threshold_classifier`)."""

    threshold: float
    side: int
    train_accuracy: float

    def predict(self, x: Any) -> np.ndarray:
        """0/1 predictions (int64) for the scalar feature values ``x``."""
        v = check_scores(x, "x")
        return np.where(v > self.threshold, self.side, 1 - self.side).astype(np.int64)

    def accuracy(self, x: Any, labels: Any) -> float:
        """Accuracy of :meth:`predict` against 0/1 ``labels`` (NaN with a warning when empty)."""
        v = check_scores(x, "x")
        y = check_labels(labels, 2, v.shape[0])
        if y.size == 0:
            return warn_empty("the evaluated set")
        return float(np.mean(self.predict(v) == y))


def fit_threshold_classifier(x: Any, labels: Any) -> ThresholdClassifier:
    """The threshold and side of the best training accuracy for binary ``labels`` (0/1) from
    one scalar feature ``x`` per sample.

    The candidate thresholds are ``-inf`` (a constant prediction, ``side`` everywhere) and
    the distinct values of ``x`` (``x > t`` then splits the sorted values at every gap), so
    the search is exhaustive; it runs in ``O(n log n)``. Of several rules with the same
    training accuracy, the smallest threshold wins, and at one threshold side 1 ("1 above")
    before side 0: where no split beats predicting one class, the rule is that constant
    (``threshold = -inf``), also on values outside the training range.
    """
    v = check_scores(x, "x")
    y = check_labels(labels, 2, v.shape[0])
    if v.size == 0:
        raise ValueError("x is empty: a threshold needs at least one training sample")
    values, inverse = np.unique(v, return_inverse=True)
    pos_at = np.bincount(inverse.reshape(-1), weights=y, minlength=values.size)
    all_at = np.bincount(inverse.reshape(-1), minlength=values.size)
    neg_at = all_at - pos_at
    # side 1 at threshold values[k]: correct = positives above + negatives at or below
    pos_above = y.sum() - np.cumsum(pos_at)
    neg_below = np.cumsum(neg_at)
    thresholds = np.concatenate([[-np.inf], values])
    correct_side1 = np.rint(np.concatenate([[y.sum()], pos_above + neg_below])).astype(np.int64)
    correct_side0 = v.size - correct_side1
    correct = np.stack([correct_side1, correct_side0], axis=1).reshape(-1)  # (t0,1) (t0,0) (t1,1) ...
    best = int(np.argmax(correct))
    return ThresholdClassifier(threshold=float(thresholds[best // 2]), side=1 - best % 2,
                               train_accuracy=float(correct[best] / v.size))
