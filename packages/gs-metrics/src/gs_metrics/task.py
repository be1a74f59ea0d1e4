"""Task metrics: accuracy (node classification), binary ROC-AUC (DrugOOD-3D), MAE (QMOF).

Missing classes: ``accuracy`` does not depend on which classes occur (labels must still be
valid class indices). ``binary_roc_auc`` is undefined when the evaluated targets hold a single
class: it returns NaN and warns with :class:`~gs_metrics.EmptyEvaluationWarning` (scikit-learn
raises instead). ``mean_absolute_error`` has no classes; every metric returns NaN with a warning
on an empty evaluated set.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gs_metrics._validation import (
    check_labels,
    check_labels_and_mask,
    check_mask,
    check_scores,
    to_numpy,
    warn_empty,
)
from gs_metrics.detection import auroc

__all__ = ["accuracy", "binary_roc_auc", "mean_absolute_error"]


def accuracy(pred: Any, labels: Any, mask: Any = None) -> float:
    """Fraction of correct predictions.

    ``pred`` is either predicted class indices of shape (n,) or scores/probabilities of shape
    (n, C) (argmax is taken). ``labels`` outside ``mask`` are neither used nor range-checked
    (PyG's ``-1`` for unlabelled nodes is fine there).
    """
    p = to_numpy(pred, "pred")
    if p.ndim == 2:
        if p.size and not np.isfinite(p).all():
            raise ValueError("pred contains NaN or infinite values")
        p = np.argmax(p, axis=1) if p.shape[0] else np.zeros(0, dtype=np.int64)
        c = to_numpy(pred, "pred").shape[1]
    elif p.ndim == 1:
        c = None
    else:
        raise ValueError(f"pred must be class indices (n,) or scores (n, C), got shape {p.shape}")
    pl = check_labels(p, c, None, "pred")
    y, m = check_labels_and_mask(labels, mask, c, pl.shape[0])
    if not m.any():
        return warn_empty("the evaluated set")
    return float(np.mean(pl[m] == y[m]))


def binary_roc_auc(scores: Any, target: Any, mask: Any = None) -> float:
    """ROC-AUC of scores (probability or logit of the positive class) for binary targets.

    NaN with a warning when the evaluated targets hold one class only (or none).
    """
    s = check_scores(scores, "scores")
    m = check_mask(mask, s.shape[0])
    t = to_numpy(target, "target")
    if t.ndim != 1 or t.shape[0] != s.shape[0]:
        raise ValueError(f"target must have shape ({s.shape[0]},) like scores, got {t.shape}")
    if not m.any():
        return warn_empty("the evaluated set")
    return auroc(s[m], t[m])


def mean_absolute_error(pred: Any, target: Any, mask: Any = None) -> float:
    """Mean absolute error ``mean |pred - target|`` over the evaluated samples (any shape; all
    elements of a sample's target count)."""
    p = np.asarray(to_numpy(pred, "pred"), dtype=np.float64)
    t = np.asarray(to_numpy(target, "target"), dtype=np.float64)
    if p.shape != t.shape:
        raise ValueError(f"pred and target must have the same shape, got {p.shape} and {t.shape}")
    if p.size and (not np.isfinite(p).all() or not np.isfinite(t).all()):
        raise ValueError("pred and target must be finite (found NaN or infinity)")
    if p.ndim == 0:
        raise ValueError("pred must have at least one dimension (samples)")
    m = check_mask(mask, p.shape[0])
    if not m.any():
        return warn_empty("the evaluated set")
    return float(np.mean(np.abs(p[m] - t[m])))
