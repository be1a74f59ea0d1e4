"""Label-free test-error estimators (baselines of the LeBed paper, appendix C.1) and the
evaluation of any estimator across many test graphs (Spearman rho and linear-fit R^2, section 3.1).

Reference: ``lebed-online-gnn-evaluation.txt``, appendix C.1, eq. (9)-(13).

Orientation of each score with respect to the true test error (used by :func:`evaluate_estimator`
through ``orientation``):

================  ======================================================  ===========
score             what it is                                              orientation
================  ======================================================  ===========
``conf_score``    mean max softmax probability (eq. 9)                    ``-1``
``entropy_score`` mean softmax entropy (eq. 10)                           ``+1``
``atc_score``     ATC estimate of the error: fraction below threshold     ``+1``
``threshold``     ``1 - fraction(max prob > tau)`` (eq. 13)               ``+1``
LeBed             parameter distance (:mod:`gs_metrics.lebed`, eq. 8)     ``+1``
================  ======================================================  ===========

``+1``: the score grows with the test error; ``-1``: it shrinks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from gs_metrics._validation import check_labels, check_probs, check_scores, warn_empty
from gs_metrics.detection import _entropy

__all__ = [
    "ORIENTATION",
    "EstimatorEvaluation",
    "atc_score",
    "conf_score",
    "entropy_score",
    "evaluate_estimator",
    "fit_atc_threshold",
    "threshold_score",
]

ScoreFn = Literal["mc", "ne"]

#: Orientation of each baseline's score w.r.t. the true test error (+1: grows with it).
ORIENTATION = {
    "conf_score": -1,
    "entropy_score": 1,
    "atc_mc": 1,
    "atc_ne": 1,
    "threshold": 1,
    "lebed": 1,
}


def conf_score(probs: Any) -> float:
    """ConfScore (eq. 9): mean over the test nodes of the maximum softmax probability."""
    p = check_probs(probs)
    if p.shape[0] == 0:
        return warn_empty("the test node set")
    return float(p.max(axis=1).astype(np.float64).mean())


def entropy_score(probs: Any) -> float:
    """Entropy (eq. 10): mean over the test nodes of the softmax entropy (natural log)."""
    p = check_probs(probs)
    if p.shape[0] == 0:
        return warn_empty("the test node set")
    return float(_entropy(p).mean())


def _atc_s(p: np.ndarray, score: ScoreFn) -> np.ndarray:
    if score == "mc":
        return p.max(axis=1).astype(np.float64)
    if score == "ne":
        return -_entropy(p)
    raise ValueError(
        f"score must be 'mc' (max confidence) or 'ne' (negative entropy), got {score!r}"
    )


def fit_atc_threshold(val_probs: Any, val_labels: Any, score: ScoreFn = "mc") -> float:
    """ATC threshold ``t`` (eq. 12): fraction of validation nodes with ``s < t`` = validation error.

    ``s`` is the max confidence (``"mc"``, ATC-MC) or the negative entropy (``"ne"``, ATC-NE).
    ``t`` is chosen as the ``k``-th smallest score (``k`` = number of validation errors), so that
    exactly ``k`` scores lie strictly below it when scores are distinct.
    """
    p = check_probs(val_probs, "val_probs")
    y = check_labels(val_labels, p.shape[1], p.shape[0], "val_labels")
    if p.shape[0] == 0:
        return warn_empty("the validation node set")
    s = np.sort(_atc_s(p, score))
    k = int(np.sum(np.argmax(p, axis=1) != y))
    if k == 0:
        return float(np.nextafter(s[0], -np.inf))
    if k == s.size:
        return float(np.nextafter(s[-1], np.inf))
    return float(s[k])


def atc_score(probs: Any, threshold: float, score: ScoreFn = "mc") -> float:
    """ATC estimate of the test error (eq. 11): fraction of test nodes with ``s < threshold``."""
    p = check_probs(probs)
    if p.shape[0] == 0:
        return warn_empty("the test node set")
    return float(np.mean(_atc_s(p, score) < threshold))


def threshold_score(probs: Any, tau: float = 0.9) -> float:
    """Threshold method (eq. 13): estimated error ``1 - fraction(max prob > tau)``; the paper uses
    ``tau`` in {0.7, 0.8, 0.9}."""
    if not 0.0 <= tau <= 1.0:
        raise ValueError(f"tau must lie in [0, 1], got {tau!r}")
    p = check_probs(probs)
    if p.shape[0] == 0:
        return warn_empty("the test node set")
    return float(1.0 - np.mean(p.max(axis=1) > tau))


@dataclass(frozen=True)
class EstimatorEvaluation:
    """How well a label-free score tracks the true test error across test graphs.

    Attributes
    ----------
    spearman : float
        Spearman rank correlation between ``orientation * score`` and the true error (1 = the
        score orders the graphs exactly by error).
    r2 : float
        Coefficient of determination of the least-squares line ``error ~ a * score + b``
        (orientation-free, in [0, 1]).
    slope, intercept : float
        The fitted line.
    """

    spearman: float
    r2: float
    slope: float
    intercept: float


def evaluate_estimator(scores: Any, errors: Any, orientation: int = 1) -> EstimatorEvaluation:
    """Spearman rho and linear-fit R^2 between estimator scores and true test errors (sec. 3.1).

    Parameters
    ----------
    scores, errors : array-like, shape (G,)
        One score and one true test error per test graph (``G >= 3``). A constant score
        gives ``spearman = nan`` (undefined) and ``r2 = 0`` (the flat line).
    orientation : {+1, -1}
        Sign that makes the score grow with the error (see :data:`ORIENTATION`).
    """
    from scipy.stats import spearmanr

    if orientation not in (1, -1):
        raise ValueError(f"orientation must be +1 or -1, got {orientation!r}")
    s = check_scores(scores, "scores")
    e = check_scores(errors, "errors", s.shape[0])
    if s.shape[0] < 3:
        raise ValueError(f"need at least 3 test graphs to correlate, got {s.shape[0]}")
    if np.ptp(s) == 0.0:
        # A constant score (e.g. no test node above a threshold in any graph) orders nothing:
        # rho is undefined (NaN, as scipy's spearmanr) and the best line is flat, R^2 = 0
        # (scikit-learn's LinearRegression + r2_score give the same). np.polyfit would
        # divide by the zero column norm and fail in LAPACK.
        ss_tot = float(np.sum((e - e.mean()) ** 2))
        return EstimatorEvaluation(spearman=float("nan"), r2=0.0 if ss_tot > 0 else float("nan"),
                                   slope=0.0, intercept=float(e.mean()))
    rho = float(spearmanr(orientation * s, e).statistic)
    slope, intercept = np.polyfit(s, e, 1)
    resid = e - (slope * s + intercept)
    ss_tot = float(np.sum((e - e.mean()) ** 2))
    r2 = float(1.0 - np.sum(resid**2) / ss_tot) if ss_tot > 0 else float("nan")
    return EstimatorEvaluation(spearman=rho, r2=r2, slope=float(slope), intercept=float(intercept))
