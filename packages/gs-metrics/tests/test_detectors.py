"""OOD detector scores (MSP, Energy, ODIN, Mahalanobis, GNNSafe propagation) and the ID-positive
detection metrics: worked examples by hand and scikit-learn as the reference."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

import gs_metrics as gm

LN3 = math.log(3.0)


def test_msp_energy_odin_worked_example():
    # logits (0, ln 3): softmax = (1, 3) / 4 -> MSP = 3/4
    logits = np.array([[0.0, LN3], [5.0, 5.0]])
    assert gm.msp_score(logits) == pytest.approx([0.75, 0.5], abs=1e-15)
    # -E = T log(e^{0/T} + e^{ln3/T}): T = 1 -> log(1 + 3) = log 4; T = 2 -> 2 log(1 + sqrt 3)
    assert gm.energy_score(logits) == pytest.approx([math.log(4), 5 + math.log(2)], abs=1e-12)
    assert gm.energy_score(logits, temperature=2.0)[0] == pytest.approx(
        2 * math.log(1 + math.sqrt(3)), abs=1e-12
    )
    # ODIN, T = 1000: softmax(0, ln3/1000) max = 3^0.001 / (1 + 3^0.001)
    assert gm.odin_score(logits)[0] == pytest.approx(3**0.001 / (1 + 3**0.001), abs=1e-15)
    assert gm.odin_score(logits, temperature=1.0)[0] == pytest.approx(0.75, abs=1e-15)


def test_energy_is_stable_for_large_logits_and_orders_like_the_paper():
    # log-sum-exp of (1000, 1000) is 1000 + log 2, not inf
    assert gm.energy_score([[1000.0, 1000.0]])[0] == pytest.approx(1000 + math.log(2))
    # a confident (ID-like) row has a lower energy, so a higher score, than a flat one
    s = gm.energy_score([[8.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    assert s[0] > s[1]


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: gm.energy_score([1.0, 2.0]), "logits must be a 2-D array"),
        (lambda: gm.energy_score([[1.0, np.nan]]), "logits contains NaN"),
        (lambda: gm.energy_score([[1.0, 2.0]], temperature=0), "temperature must be a finite"),
        (lambda: gm.odin_score([[1.0, 2.0]], temperature=-1), "temperature must be a finite"),
        (lambda: gm.msp_score([["a", "b"]]), "logits must hold real numbers"),
    ],
)
def test_detector_inputs_are_checked(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def _two_clusters():
    # class 0 around (1, 0), class 1 around (5, 0), each deviating by (+-1, 0) and (0, +-1)
    dev = np.array([[-1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    x = np.vstack([dev + [1.0, 0.0], dev + [5.0, 0.0]])
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    return x, y


def test_mahalanobis_worked_example():
    x, y = _two_clusters()
    det = gm.fit_mahalanobis(x, y)
    assert det.means == pytest.approx(np.array([[1.0, 0.0], [5.0, 0.0]]))
    # Sigma = 1/8 sum dev dev^T = 1/8 (2 * diag(2, 2)) = 0.5 I, so Sigma^{-1} = 2 I
    assert det.covariance == pytest.approx(0.5 * np.eye(2))
    assert det.precision == pytest.approx(2.0 * np.eye(2))
    # x = (2, 0): d0 = 2 (1^2) = 2, d1 = 2 (3^2) = 18 -> score -2
    # x = (3, 1): d0 = 2 (2^2 + 1) = 10, d1 = 2 (2^2 + 1) = 10 -> score -10
    test = np.array([[2.0, 0.0], [3.0, 1.0]])
    assert det.distances(test) == pytest.approx(np.array([[2.0, 18.0], [10.0, 10.0]]))
    assert gm.mahalanobis_score(test, x, y) == pytest.approx([-2.0, -10.0])


def test_mahalanobis_matches_sklearn_empirical_covariance():
    from sklearn.covariance import EmpiricalCovariance

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 300)
    mix = rng.normal(size=(4, 4))
    x = rng.normal(size=(300, 4)) @ mix + 3.0 * y[:, None]  # correlated, shifted classes
    test = rng.normal(size=(50, 4)) @ mix + 3.0
    means = np.stack([x[y == c].mean(0) for c in range(3)])
    ref_cov = EmpiricalCovariance(assume_centered=False).fit(x - means[y])  # the authors' choice
    ref = np.stack([ref_cov.mahalanobis(test - means[c]) for c in range(3)], axis=1)
    det = gm.fit_mahalanobis(x, y)
    assert det.covariance == pytest.approx(ref_cov.covariance_, rel=1e-10, abs=1e-12)
    assert det.distances(test) == pytest.approx(ref, rel=1e-9)
    assert det.score(test) == pytest.approx(-ref.min(1), rel=1e-9)


def test_mahalanobis_inputs_are_checked():
    x, y = _two_clusters()
    with pytest.raises(ValueError, match="labels has length 7"):
        gm.fit_mahalanobis(x, y[:7])
    with pytest.raises(ValueError, match="at least 2 training samples"):
        gm.fit_mahalanobis(x[:1], y[:1])
    with pytest.raises(ValueError, match="dimension 3 but the detector was fitted on dimension 2"):
        gm.fit_mahalanobis(x, y).score(np.zeros((1, 3)))


def test_gnnsafe_propagation_worked_example():
    # path 0 - 1 - 2 (both directions stored) and an isolated node 3; alpha = 0.5
    edge_index = np.array([[0, 1, 1, 2], [1, 0, 2, 1]])
    e = np.array([1.0, 2.0, 4.0, 8.0])
    # step 1: neighbour means (2, (1 + 4)/2, 2, none -> 0); e1 = (e + m) / 2 = (1.5, 2.25, 3, 4)
    e1 = gm.gnnsafe_propagation(e, edge_index, k=1, alpha=0.5)
    assert e1 == pytest.approx([1.5, 2.25, 3.0, 4.0])
    # step 2: means (2.25, (1.5 + 3)/2, 2.25, 0) -> (1.875, 2.25, 2.625, 2): the isolated node
    # shrinks to alpha^K e = 8 / 4 (the authors' code adds no self-loop)
    e2 = gm.gnnsafe_propagation(e, edge_index)  # defaults K = 2, alpha = 0.5
    assert e2 == pytest.approx([1.875, 2.25, 2.625, 2.0])
    # alpha = 1 keeps the scores, K = 0 too
    assert gm.gnnsafe_propagation(e, edge_index, alpha=1.0) == pytest.approx(e)
    assert gm.gnnsafe_propagation(e, edge_index, k=0) == pytest.approx(e)


def test_gnnsafe_propagation_direction_duplicates_and_sparse_input():
    # directed 0 -> 1: node 1 averages its in-neighbour 0 (PyG source_to_target, degree(col));
    # node 0 has no incoming edge: e0 = 0.5 * 1 = 0.5, e1 = 0.5 * 3 + 0.5 * 1 = 2
    assert gm.gnnsafe_propagation([1.0, 3.0], np.array([[0], [1]]), k=1) == pytest.approx(
        [0.5, 2.0]
    )
    # 0 -> 2 stored twice and 1 -> 2: node 2's mean is (2 e0 + e1) / 3 = (2 * 3 + 6) / 3 = 4
    ei = np.array([[0, 0, 1], [2, 2, 2]])
    out = gm.gnnsafe_propagation([3.0, 6.0, 0.0], ei, k=1, alpha=0.0)
    assert out == pytest.approx([0.0, 0.0, 4.0])
    # the same graph as a scipy sparse adjacency A[i, j] = number of edges i -> j
    a = sp.coo_matrix(([2.0, 1.0], ([0, 1], [2, 2])), shape=(3, 3))
    assert gm.gnnsafe_propagation([3.0, 6.0, 0.0], a, k=1, alpha=0.0) == pytest.approx(out)
    with pytest.raises(ValueError, match=r"shape \(3, 3\)"):
        gm.gnnsafe_propagation([3.0, 6.0, 0.0], sp.eye(4))
    with pytest.raises(ValueError, match=r"edge_index must hold node indices in \[0, 3\)"):
        gm.gnnsafe_propagation([3.0, 6.0, 0.0], np.array([[0], [3]]))
    with pytest.raises(ValueError, match="alpha must be a number in"):
        gm.gnnsafe_propagation([1.0], np.zeros((2, 0), dtype=int), alpha=1.5)
    with pytest.raises(ValueError, match="k must be a non-negative integer"):
        gm.gnnsafe_propagation([1.0], np.zeros((2, 0), dtype=int), k=-1)


def _reference_fpr(target, scores, tpr, rule):
    """FPR at the chosen ROC point, from scikit-learn's full ROC curve (drop_intermediate=False:
    one point per distinct threshold, decreasing; the first point is the empty set)."""
    from sklearn.metrics import roc_curve

    fpr, tprs, _ = roc_curve(target, scores, drop_intermediate=False)
    fpr, tprs = fpr[1:], tprs[1:]
    if rule == "first":
        return fpr[np.flatnonzero(tprs >= tpr - 1e-12)[0]]
    last = np.flatnonzero(tprs >= 1.0)[0]
    gap = np.abs(tprs[: last + 1] - tpr)
    return fpr[np.flatnonzero(gap == gap.min())[-1]]  # equal distances: the lower threshold


@pytest.mark.parametrize("seed", range(6))
def test_id_positive_metrics_match_sklearn(seed):
    from sklearn.metrics import average_precision_score, roc_auc_score

    rng = np.random.default_rng(seed)
    n_id, n_ood = rng.integers(20, 200, 2)
    scores = np.r_[rng.normal(1.0, 1.0, n_id), rng.normal(0.0, 1.0, n_ood)]
    scores = np.round(scores, 1)  # ties, as discrete scores have
    is_ood = np.r_[np.zeros(n_id, bool), np.ones(n_ood, bool)]
    res = gm.id_positive_detection_metrics(scores, is_ood)
    assert res.auroc == pytest.approx(roc_auc_score(~is_ood, scores), abs=1e-12)
    assert res.aupr == pytest.approx(average_precision_score(~is_ood, scores), abs=1e-12)
    assert res.fpr95 == pytest.approx(_reference_fpr(~is_ood, scores, 0.95, "nearest"), abs=1e-12)
    first = gm.id_positive_detection_metrics(scores, is_ood, fpr_rule="first")
    assert first.fpr95 == pytest.approx(_reference_fpr(~is_ood, scores, 0.95, "first"), abs=1e-12)
    # the AUROC is the OOD-positive AUROC of the negated score; the AUPR is AUPR-In
    assert res.auroc == pytest.approx(gm.ood_detection_metrics(-scores, is_ood).auroc)


def test_id_positive_fpr95_nearest_versus_first_worked_example():
    # 20 ID nodes scored 1..20 and 3 OOD nodes scored 30, 1.5, 0. From the top: at threshold 2
    # the ID recall is 19/20 = 0.95; it stays 0.95 at threshold 1.5 (an OOD node) and reaches
    # 1 at threshold 1.
    scores = np.r_[np.arange(1.0, 21.0), [30.0, 1.5, 0.0]]
    is_ood = np.r_[np.zeros(20, bool), np.ones(3, bool)]
    # "first": highest threshold with recall >= 0.95 is 2: OOD >= 2 is {30}: FPR = 1/3
    first = gm.id_positive_detection_metrics(scores, is_ood, fpr_rule="first")
    assert first.fpr95 == pytest.approx(1 / 3)
    # "nearest" (GNNSafe): recall 0.95 at thresholds 2 and 1.5; the lower one, 1.5, wins:
    # OOD >= 1.5 is {30, 1.5}: FPR = 2/3
    assert gm.id_positive_detection_metrics(scores, is_ood).fpr95 == pytest.approx(2 / 3)
    # AUROC by pairs (ID above OOD): above 30 none, above 1.5 the 19 of 2..20, above 0 all 20
    assert gm.id_positive_detection_metrics(scores, is_ood).auroc == pytest.approx(39 / 60)


def test_id_positive_metrics_inputs():
    with pytest.raises(ValueError, match="fpr_rule must be 'nearest'"):
        gm.id_positive_detection_metrics([0.1, 0.2], [0, 1], fpr_rule="closest")
    with pytest.raises(ValueError, match="tpr must lie in"):
        gm.id_positive_detection_metrics([0.1, 0.2], [0, 1], tpr=0)
    with pytest.warns(gm.EmptyEvaluationWarning, match="is_ood holds only one class"):
        res = gm.id_positive_detection_metrics([0.1, 0.2], [0, 0])
    assert math.isnan(res.auroc) and math.isnan(res.aupr) and math.isnan(res.fpr95)
