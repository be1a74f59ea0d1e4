"""OOD detection and misclassification detection metrics, and uncertainty measures.

Conventions (structural-shifts paper, section 4 "Prediction tasks & evaluation metrics"): OOD
detection is a binary classification with the OOD samples as the *positive* class and an
*uncertainty* as the score (higher uncertainty = more likely OOD). Misclassification detection
uses the errors as the positive class, with the same orientation.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from gs_metrics._validation import (
    PROB_ATOL,
    EmptyEvaluationWarning,
    check_binary,
    check_probs,
    check_scores,
    to_numpy,
    warn_empty,
)

__all__ = [
    "DirichletUncertainty",
    "EnsembleUncertainty",
    "OODDetectionMetrics",
    "aupr",
    "auroc",
    "dirichlet_uncertainty",
    "ensemble_uncertainty",
    "entropy",
    "fpr_at_tpr",
    "id_positive_detection_metrics",
    "max_prob_uncertainty",
    "misclassification_auroc",
    "ood_detection_metrics",
    "prediction_rejection_ratio",
]


def _binary_inputs(scores: Any, target: Any, what: str, score_name: str = "scores"):
    """Validated ``(scores, target, None)``, or ``(.., .., nan)`` after one warning when the
    target holds a single class or nothing (the metrics are then undefined)."""
    s = check_scores(scores, score_name)
    t = check_binary(target, s.shape[0], what)
    n_pos = int(t.sum())
    if s.shape[0] == 0:
        return s, t, warn_empty("the scored set")
    if n_pos == 0 or n_pos == s.shape[0]:
        warnings.warn(
            f"{what} holds only one class ({'positives' if n_pos else 'negatives'}): the metric is "
            "undefined and NaN is returned",
            EmptyEvaluationWarning,
            stacklevel=3,
        )
        return s, t, float("nan")
    return s, t, None


def auroc(scores: Any, target: Any) -> float:
    """Area under the ROC curve of ``scores`` for the positive class ``target == 1``.

    The OOD-detection metric of the structural-shifts paper (``structural-shifts.md``, section
    4, "Prediction tasks & evaluation metrics": OOD detection as a binary classification with
    the OOD nodes as positives, measured by AUROC); the paper gives no formula. Computed as the
    Mann-Whitney statistic ``(sum_{i: t_i = 1} rank(s_i) - n_+ (n_+ + 1) / 2) / (n_+ n_-)``
    with midranks, so tied scores count one half, as in ``sklearn.metrics.roc_auc_score``.
    NaN with a warning when only one class is present.
    """
    s, t, bad = _binary_inputs(scores, target, "target")
    return bad if bad is not None else _auroc(s, t)


def _auroc(s: np.ndarray, t: np.ndarray) -> float:
    from scipy.stats import rankdata

    r = rankdata(s)
    n_pos = float(t.sum())
    n_neg = float(t.size - n_pos)
    return float((r[t].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _sorted_counts(s: np.ndarray, t: np.ndarray):
    """Cumulative TP/FP at each distinct threshold, scores in decreasing order."""
    order = np.argsort(-s, kind="stable")
    s, t = s[order], t[order]
    distinct = np.flatnonzero(np.diff(s)) if s.size > 1 else np.zeros(0, dtype=np.intp)
    ends = np.r_[distinct, s.size - 1]
    tp = np.cumsum(t)[ends].astype(np.float64)
    fp = (ends + 1) - tp
    return tp, fp


def aupr(scores: Any, target: Any) -> float:
    """Area under the precision-recall curve as average precision, ``sum_k (R_k - R_{k-1}) P_k``.

    Not a metric of the structural-shifts paper (it reports AUROC only, ``structural-shifts.md``
    section 4); an addition with the same convention (OOD = positive class, uncertainty =
    score). ``P_k`` and ``R_k`` are the precision and recall at the ``k``-th distinct threshold
    in decreasing order: the step-wise definition of ``sklearn.metrics.average_precision_score``
    (no interpolation). NaN with a warning when only one class is present.
    """
    s, t, bad = _binary_inputs(scores, target, "target")
    return bad if bad is not None else _aupr(s, t)


def _aupr(s: np.ndarray, t: np.ndarray) -> float:
    tp, fp = _sorted_counts(s, t)
    precision = tp / (tp + fp)
    recall = tp / tp[-1]
    d_recall = np.diff(np.r_[0.0, recall])
    return float(np.sum(d_recall * precision))


def fpr_at_tpr(scores: Any, target: Any, tpr: float = 0.95) -> float:
    """False-positive rate at the first threshold whose true-positive rate reaches ``tpr``.

    Not a metric of the structural-shifts paper (it reports AUROC only, ``structural-shifts.md``
    section 4); an addition with the same convention (OOD = positive class, uncertainty =
    score): ``FPR = FP(t) / n_-`` at the largest threshold ``t`` with ``TP(t) / n_+ >= tpr``,
    the scores ``>= t`` counting as positive. Thresholds are the distinct scores in decreasing
    order (as in ``sklearn.metrics.roc_curve``). NaN with a warning when only one class is
    present.
    """
    if not 0.0 < tpr <= 1.0:
        raise ValueError(f"tpr must lie in (0, 1], got {tpr!r}")
    s, t, bad = _binary_inputs(scores, target, "target")
    return bad if bad is not None else _fpr_at_tpr(s, t, tpr)


def _fpr_at_tpr(s: np.ndarray, t: np.ndarray, tpr: float) -> float:
    tp, fp = _sorted_counts(s, t)
    tprs = tp / tp[-1]
    k = int(np.searchsorted(tprs, tpr - 1e-12, side="left"))
    return float(fp[k] / fp[-1])


@dataclass(frozen=True)
class OODDetectionMetrics:
    """AUROC, AUPR and FPR at 95% TPR of an OOD detector (OOD = positive class)."""

    auroc: float
    aupr: float
    fpr95: float


def ood_detection_metrics(uncertainty: Any, is_ood: Any) -> OODDetectionMetrics:
    """OOD detection with OOD as the positive class and ``uncertainty`` as the score.

    Parameters
    ----------
    uncertainty : array-like, shape (n,)
        Higher = more uncertain (e.g. :func:`entropy`, knowledge uncertainty, ``-alpha_0``).
    is_ood : array-like of bool/0-1, shape (n,)
        True for OOD samples.

    Notes
    -----
    The inputs are validated once; a single-class (or empty) ``is_ood`` gives NaN for all
    three with one :class:`~gs_metrics.EmptyEvaluationWarning`.
    """
    s, t, bad = _binary_inputs(uncertainty, is_ood, "is_ood", "uncertainty")
    if bad is not None:
        return OODDetectionMetrics(auroc=bad, aupr=bad, fpr95=bad)
    return OODDetectionMetrics(auroc=_auroc(s, t), aupr=_aupr(s, t), fpr95=_fpr_at_tpr(s, t, 0.95))


def _fpr_at_nearest_tpr(s: np.ndarray, t: np.ndarray, tpr: float) -> float:
    """FPR at the threshold whose TPR is nearest to ``tpr`` (ties: the lower threshold)."""
    tp, fp = _sorted_counts(s, t)
    tprs = tp / tp[-1]
    last = int(np.searchsorted(tp, tp[-1], side="left"))  # first threshold with TPR = 1
    gap = np.abs(tprs[: last + 1] - tpr)
    k = last - int(np.argmin(gap[::-1]))  # argmin takes the first: scan from the low end
    return float(fp[k] / fp[-1])


def id_positive_detection_metrics(
    scores: Any, is_ood: Any, *, tpr: float = 0.95, fpr_rule: str = "nearest"
) -> OODDetectionMetrics:
    """AUROC, AUPR and FPR at 95% TPR with the **in-distribution class as positive** and an
    ID score (higher = more in-distribution, e.g. :func:`gs_metrics.energy_score`), as GNNSafe
    evaluates (``GNNSafe/data_utils.py``, ``get_measures(ID scores, OOD scores)``, after
    Hendrycks et al.'s outlier-exposure code):

    * ``auroc``: ``roc_auc_score(ID = 1, score)``; the same number as the OOD-positive AUROC
      of the negated score.
    * ``aupr``: ``average_precision_score(ID = 1, score)``, i.e. **AUPR-In** (it differs from
      the OOD-positive AUPR of :func:`ood_detection_metrics`).
    * ``fpr95``: the fraction of OOD samples scored at or above the threshold that keeps a TPR
      (recall of the ID samples) of ``tpr``. ``fpr_rule="nearest"`` (default, GNNSafe's
      ``fpr_and_fdr_at_recall``): the threshold whose TPR is *nearest* to ``tpr``, searched
      from the highest threshold down to the first reaching TPR 1; equal distances go to the
      lower threshold (the larger FPR). ``"first"``: the highest threshold whose TPR reaches
      ``tpr`` (as :func:`fpr_at_tpr`). The rules differ when the TPR nearest ``tpr`` lies
      below it.

    A one-class or empty ``is_ood`` gives NaN for all three with one
    :class:`~gs_metrics.EmptyEvaluationWarning`.

    Parameters
    ----------
    scores : array-like, shape (n,)
        ID scores, higher = more in-distribution.
    is_ood : array-like of bool/0-1, shape (n,)
        True for the OOD samples (the negatives here).
    tpr : float
        The true-positive rate (recall of the ID samples) of the FPR, in (0, 1]; 0.95.
    fpr_rule : str
        ``"nearest"`` (GNNSafe's) or ``"first"``, as above.
    """
    if not 0.0 < tpr <= 1.0:
        raise ValueError(f"tpr must lie in (0, 1], got {tpr!r}")
    if fpr_rule not in ("nearest", "first"):
        raise ValueError(
            "fpr_rule must be 'nearest' (GNNSafe: the TPR nearest to tpr) or 'first' (the "
            f"first threshold reaching tpr), got {fpr_rule!r}"
        )
    s, t, bad = _binary_inputs(scores, is_ood, "is_ood", "scores")
    if bad is not None:
        return OODDetectionMetrics(auroc=bad, aupr=bad, fpr95=bad)
    pos = ~t
    fpr = _fpr_at_nearest_tpr(s, pos, tpr) if fpr_rule == "nearest" else _fpr_at_tpr(s, pos, tpr)
    return OODDetectionMetrics(auroc=_auroc(s, pos), aupr=_aupr(s, pos), fpr95=fpr)


def misclassification_auroc(uncertainty: Any, is_error: Any) -> float:
    """AUROC of ``uncertainty`` for detecting misclassified samples (errors = positive class)."""
    return auroc(uncertainty, is_error)


def _rejection_curve(u: np.ndarray, err: np.ndarray) -> np.ndarray:
    """Expected number of errors kept after rejecting the ``k`` most uncertain samples, k = 0..n.

    Ties in ``u`` are rejected in random order in expectation (linear interpolation inside a tie).
    """
    n = u.size
    order = np.argsort(-u, kind="stable")
    us, es = u[order], err[order].astype(np.float64)
    bounds = np.r_[0, np.flatnonzero(np.diff(us)) + 1, n]
    cum_at_bounds = np.r_[0.0, np.cumsum(es)][bounds]
    rejected_errors = np.interp(np.arange(n + 1), bounds, cum_at_bounds)
    return es.sum() - rejected_errors


def _trapezoid(y: np.ndarray, x: np.ndarray) -> float:
    return float(np.sum((y[1:] + y[:-1]) * np.diff(x)) / 2.0)


def prediction_rejection_ratio(uncertainty: Any, is_error: Any) -> float:
    """Prediction rejection ratio (PRR) of Malinin et al.: ``AR_uncertainty / AR_oracle``.

    Samples are rejected in order of decreasing uncertainty; after rejecting a fraction ``r`` the
    error rate (kept errors / n) traces the rejection curve. ``AR`` is the area between the random
    rejection curve ``e (1 - r)`` and the uncertainty (resp. oracle) curve. 1 = oracle ranking,
    0 = random, negative = worse than random. NaN with a warning without errors or without
    correct predictions.
    """
    u, err, bad = _binary_inputs(uncertainty, is_error, "is_error", "uncertainty")
    return bad if bad is not None else _prediction_rejection_ratio(u, err)


def _prediction_rejection_ratio(u: np.ndarray, err: np.ndarray) -> float:
    n = u.size
    e = err.sum() / n
    r = np.arange(n + 1) / n
    curve = _rejection_curve(u, err) / n
    random = e * (1 - r)
    oracle = np.maximum(e - r, 0.0)
    ar_unc = _trapezoid(random - curve, r)
    ar_orc = _trapezoid(random - oracle, r)
    return float(ar_unc / ar_orc)


def entropy(probs: Any, axis: int = -1, *, atol: float = PROB_ATOL) -> np.ndarray:
    """Shannon entropy ``-sum_l p_l log p_l`` (natural log, ``0 log 0 = 0``) of each distribution
    along ``axis``: the Softmax Entropy (SE) uncertainty of the structural-shifts paper
    (``structural-shifts.md`` section 2.2, "General-purpose methods", and section 4), and the
    per-node entropy inside eq. (10) of the LeBed paper.

    ``probs`` must hold probabilities along ``axis`` (in [0, 1], summing to 1 within ``atol``,
    checked as in :func:`max_prob_uncertainty`): logits give a ValueError, not a wrong entropy.
    """
    p = to_numpy(probs, "probs")
    if p.ndim == 0:
        raise ValueError("probs must have a class axis (at least 1-D), got a scalar")
    if not -p.ndim <= axis < p.ndim:
        raise ValueError(f"axis must lie in [-{p.ndim}, {p.ndim}) for probs of shape {p.shape}")
    rows = np.moveaxis(p, axis, -1)
    check_probs(rows if rows.ndim == 2 else rows.reshape(-1, rows.shape[-1]), "probs", atol)
    return _entropy(p, axis)


def _entropy(probs: np.ndarray, axis: int = -1) -> np.ndarray:
    """:func:`entropy` of probabilities already validated."""
    p = np.asarray(probs, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        plogp = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    return -plogp.sum(axis=axis)


def max_prob_uncertainty(probs: Any) -> np.ndarray:
    """``1 - max_l p_l`` per sample (higher = more uncertain)."""
    p = check_probs(probs)
    return 1.0 - p.max(axis=1).astype(np.float64)


@dataclass(frozen=True)
class EnsembleUncertainty:
    """Uncertainty decomposition of an ensemble / MC samples, each of shape (n,).

    ``total = data + knowledge``: total = entropy of the mean prediction, data = mean entropy of
    the members (expected data uncertainty), knowledge = their difference (mutual information
    between prediction and model).
    """

    total: np.ndarray
    data: np.ndarray
    knowledge: np.ndarray


def ensemble_uncertainty(member_probs: Any, atol: float = 1e-4) -> EnsembleUncertainty:
    """Total / data / knowledge uncertainty from ensemble members or MC samples.

    Parameters
    ----------
    member_probs : array-like, shape (S, n, C)
        Predictive distributions of ``S`` members (or MC-dropout samples).
    """
    p = to_numpy(member_probs, "member_probs")
    if p.ndim != 3:
        raise ValueError(f"member_probs must have shape (members, n, C), got shape {p.shape}")
    if p.shape[0] < 1:
        raise ValueError("member_probs needs at least one member")
    for s in range(p.shape[0]):
        check_probs(p[s], f"member_probs[{s}]", atol)
    p = p.astype(np.float64)
    total = _entropy(p.mean(axis=0))
    data = _entropy(p).mean(axis=0)
    return EnsembleUncertainty(total=total, data=data, knowledge=np.maximum(total - data, 0.0))


@dataclass(frozen=True)
class DirichletUncertainty:
    """Uncertainties of Dirichlet outputs, each of shape (n,).

    ``alpha0`` is the total evidence (higher = more confident; use ``-alpha0`` as an uncertainty
    score), ``total`` the entropy of the expected categorical ``alpha / alpha0``,
    ``expected_entropy`` the expected entropy ``E_{p ~ Dir(alpha)}[H(p)]`` (data uncertainty) and
    ``mutual_information = total - expected_entropy`` (knowledge / distributional uncertainty).
    """

    alpha0: np.ndarray
    total: np.ndarray
    expected_entropy: np.ndarray
    mutual_information: np.ndarray


def dirichlet_uncertainty(alpha: Any) -> DirichletUncertainty:
    """Uncertainty measures of Dirichlet parameters ``alpha`` of shape (n, C) (all > 0).

    ``E[H(p)] = -sum_c (alpha_c / alpha_0) (psi(alpha_c + 1) - psi(alpha_0 + 1))`` (Malinin &
    Gales 2018, section 3). The mutual information ``total - E[H(p)]`` is evaluated as
    ``sum_c p_c g(alpha_c) - g(alpha_0)`` with ``g(x) = psi(x + 1) - log x``: total and
    expected entropy are both of order 1 while their difference is about
    ``(C - 1) / (2 alpha_0)``, so subtracting them loses every digit once ``alpha_0`` is large
    (GPN's evidence often is; the OOD AUROC of the mutual information then drops to chance,
    measured on CoraML: 54.9 -> 82.0 with this form).
    """
    from scipy.special import digamma

    a = to_numpy(alpha, "alpha")
    if a.ndim != 2:
        raise ValueError(f"alpha must have shape (n, C), got shape {a.shape}")
    a = a.astype(np.float64)
    if a.size and (not np.isfinite(a).all() or a.min() <= 0):
        raise ValueError("alpha must hold finite, strictly positive Dirichlet parameters")
    a0 = a.sum(axis=1)
    mean = a / a0[:, None]
    total = _entropy(mean)
    exp_ent = -np.sum(mean * (digamma(a + 1.0) - digamma(a0 + 1.0)[:, None]), axis=1)
    mi = np.sum(mean * _psi1_minus_log(a), axis=1) - _psi1_minus_log(a0)
    return DirichletUncertainty(
        alpha0=a0,
        total=total,
        expected_entropy=exp_ent,
        mutual_information=np.maximum(mi, 0.0),
    )


def _psi1_minus_log(x: np.ndarray) -> np.ndarray:
    """``psi(x + 1) - log(x)`` for float64 ``x > 0`` without cancellation: below 100 directly
    (relative error about 1e-13), from 100 on by the asymptotic series of the digamma
    function (Abramowitz & Stegun 6.3.18), ``1/(2x) - 1/(12x^2) + 1/(120x^4) -
    1/(252x^6)``, truncation error below ``1/(240 x^8)`` (4e-19 at x = 100)."""
    from scipy.special import digamma

    x = np.maximum(np.asarray(x, dtype=np.float64), 1e-300)
    low = np.minimum(x, 100.0)  # each branch sees only its own range (no inf / nan to mask)
    direct = digamma(low + 1.0) - np.log(low)
    inv = 1.0 / np.maximum(x, 100.0)
    inv2 = inv * inv
    series = inv * (0.5 - inv * (1 / 12 - inv2 * (1 / 120 - inv2 / 252)))
    return np.where(x < 100, direct, series)
