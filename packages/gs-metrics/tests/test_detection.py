"""OOD / misclassification detection and uncertainty measures against scikit-learn, scipy and
Monte Carlo references."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gs_metrics as gm


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 300), st.booleans())
def test_auroc_aupr_match_sklearn(seed, n, ties):
    from sklearn.metrics import average_precision_score, roc_auc_score

    rng = np.random.default_rng(seed)
    t = rng.random(n) < rng.uniform(0.05, 0.95)
    if t.all() or not t.any():
        t[0] = not t[0]
    s = rng.normal(size=n) + t * rng.uniform(0, 2)
    if ties:
        s = np.round(s, 1)
    assert gm.auroc(s, t) == pytest.approx(roc_auc_score(t, s), abs=1e-12)
    assert gm.aupr(s, t) == pytest.approx(average_precision_score(t, s), abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(5, 300), st.booleans())
def test_fpr_at_95_tpr_matches_roc_curve(seed, n, ties):
    from sklearn.metrics import roc_curve

    rng = np.random.default_rng(seed)
    t = rng.random(n) < 0.5
    t[:2] = [True, False]
    s = rng.normal(size=n) + t
    if ties:
        s = np.round(s, 1)
    fpr, tpr, _ = roc_curve(t, s, drop_intermediate=False)
    ref = fpr[np.argmax(tpr >= 0.95)]
    assert gm.fpr_at_tpr(s, t, 0.95) == pytest.approx(ref)
    m = gm.ood_detection_metrics(s, t)
    assert m.fpr95 == pytest.approx(ref)


def test_single_class_gives_nan_with_warning():
    with pytest.warns(gm.EmptyEvaluationWarning, match="one class"):
        assert np.isnan(gm.auroc([0.1, 0.2], [1, 1]))
    with pytest.warns(gm.EmptyEvaluationWarning):
        assert np.isnan(gm.prediction_rejection_ratio([0.1, 0.2], [0, 0]))


def _prr_brute(u, err):
    """PRR from an explicit rejection curve (ties broken by averaging over all orders)."""
    import itertools

    n = len(u)
    curves = []
    groups = [np.flatnonzero(u == v) for v in sorted(set(u), reverse=True)]
    for orders in itertools.product(*[list(itertools.permutations(g)) for g in groups]):
        order = np.concatenate(orders)
        curves.append([err[order[k:]].sum() / n for k in range(n + 1)])
    curve = np.mean(curves, axis=0)
    r = np.arange(n + 1) / n
    e = err.mean()
    rnd = e * (1 - r)
    orc = np.maximum(e - r, 0)

    def trap(v):
        return np.sum((v[1:] + v[:-1]) / 2 * np.diff(r))

    return trap(rnd - curve) / trap(rnd - orc)


@pytest.mark.parametrize("seed", range(5))
def test_prr_against_explicit_curve(seed):
    rng = np.random.default_rng(seed)
    u = np.round(rng.random(7), 1)
    err = rng.random(7) < 0.4
    err[:2] = [True, False]
    assert gm.prediction_rejection_ratio(u, err) == pytest.approx(_prr_brute(u, err.astype(float)))


def test_prr_extremes():
    err = np.array([1, 0, 1, 0, 0, 0, 1, 0], dtype=bool)
    assert gm.prediction_rejection_ratio(err.astype(float), err) == pytest.approx(1.0)  # oracle
    assert gm.prediction_rejection_ratio(-err.astype(float), err) < 0  # anti-oracle
    assert gm.prediction_rejection_ratio(np.zeros(8), err) == pytest.approx(
        0.0, abs=1e-12
    )  # all tied = random
    assert gm.misclassification_auroc(err.astype(float), err) == 1.0


def test_entropy_and_ensemble_decomposition():
    from scipy.stats import entropy as sp_entropy

    rng = np.random.default_rng(0)
    members = rng.dirichlet(np.ones(5), size=(4, 30))  # (S, n, C)
    res = gm.ensemble_uncertainty(members)
    mean = members.mean(0)
    assert np.allclose(res.total, sp_entropy(mean, axis=1))
    assert np.allclose(res.data, np.mean([sp_entropy(m, axis=1) for m in members], axis=0))
    assert np.allclose(res.total, res.data + res.knowledge)
    assert (res.knowledge >= 0).all()
    # identical members: no knowledge uncertainty
    same = gm.ensemble_uncertainty(np.repeat(members[:1], 3, axis=0))
    assert np.allclose(same.knowledge, 0, atol=1e-12)
    p = np.array([[1.0, 0.0], [0.5, 0.5]])
    assert np.allclose(gm.entropy(p), [0.0, np.log(2)])
    assert np.allclose(gm.max_prob_uncertainty(p), [0.0, 0.5])


def test_dirichlet_against_monte_carlo():
    rng = np.random.default_rng(1)
    alpha = np.array([[1.0, 2.0, 3.0], [10.0, 10.0, 10.0], [0.5, 0.5, 4.0]])
    res = gm.dirichlet_uncertainty(alpha)
    assert np.allclose(res.alpha0, alpha.sum(1))
    for i, a in enumerate(alpha):
        samples = rng.dirichlet(a, size=200_000)
        mc = np.mean(gm.entropy(samples))
        assert res.expected_entropy[i] == pytest.approx(mc, abs=5e-3)
        assert res.total[i] == pytest.approx(gm.entropy(a / a.sum()))
    assert np.allclose(res.mutual_information, res.total - res.expected_entropy)
    # more evidence with the same mean: less knowledge uncertainty
    mi = gm.dirichlet_uncertainty(np.array([[1.0, 1.0], [100.0, 100.0]])).mutual_information
    assert mi[0] > mi[1] > 0
    with pytest.raises(ValueError, match="positive"):
        gm.dirichlet_uncertainty(np.array([[0.0, 1.0]]))


def test_dirichlet_mutual_information_is_exact_for_large_evidence(mutual_information_reference):
    """Mutual information is about (C - 1) / (2 alpha_0) for large alpha_0; computed as
    total - expected entropy it is lost to cancellation (GPN's OOD AUROC fell to chance).
    Checked against mpmath at 60 digits, alpha_0 from 1 to 1e12 (the form gs-algos'
    ``dirichlet_uncertainties`` uses, issue 20: one implementation)."""
    rng = np.random.default_rng(3)
    base = rng.random((8, 7)) + 0.05
    scales = np.logspace(0, 12, 8)[:, None]
    alpha = base / base.sum(-1, keepdims=True) * scales
    got = gm.dirichlet_uncertainty(alpha).mutual_information
    ref = [mutual_information_reference(row) for row in alpha]
    assert got.tolist() == pytest.approx(ref, rel=1e-5)
    assert bool((got[1:] < got[:-1]).all())  # less evidence, more knowledge uncertainty


def test_psi1_minus_log_near_the_series_switch_is_continuous():
    """``psi(x + 1) - log x`` switches to its asymptotic series at x = 100: both sides agree
    with mpmath to 1e-12."""
    mpmath = pytest.importorskip("mpmath")
    from gs_metrics.detection import _psi1_minus_log

    xs = np.array([0.01, 1.0, 37.5, 99.999999, 100.0, 100.000001, 1e4, 1e9])
    got = _psi1_minus_log(xs).tolist()
    with mpmath.workdps(40):
        ref = [float(mpmath.digamma(mpmath.mpf(x) + 1) - mpmath.log(mpmath.mpf(x))) for x in xs.tolist()]
    assert got == pytest.approx(ref, rel=1e-12)


NOT_PROBS = [np.array([[2.0, -1.0]]), np.array([[0.9, 0.9]])]  # logits; a row summing to 1.8
PROB_FUNCTIONS = {
    "entropy": gm.entropy,
    "max_prob_uncertainty": gm.max_prob_uncertainty,
    "ensemble_uncertainty": lambda p: gm.ensemble_uncertainty(p[None]),
    "conf_score": gm.conf_score,
    "entropy_score": gm.entropy_score,
    "atc_score": lambda p: gm.atc_score(p, 0.5),
    "threshold_score": gm.threshold_score,
}


@pytest.mark.parametrize("bad", NOT_PROBS, ids=["logits", "row-sum-1.8"])
@pytest.mark.parametrize("name", sorted(PROB_FUNCTIONS))
def test_every_uncertainty_of_probabilities_rejects_non_probabilities(name, bad):
    """The trial's finding: entropy returned -1.386 for logits and 0.19 for [[0.9, 0.9]]."""
    with pytest.raises(ValueError, match=r"probs.*(must lie in \[0, 1\]|must sum to 1)"):
        PROB_FUNCTIONS[name](bad)


def test_logits_passed_to_ood_detection_through_entropy_raise():
    rng = np.random.default_rng(5)
    logits = rng.normal(size=(20, 4)) * 3
    with pytest.raises(ValueError, match="probs must lie in"):
        gm.ood_detection_metrics(gm.entropy(logits), rng.random(20) < 0.5)


def test_entropy_of_valid_probabilities_along_any_axis():
    from scipy.stats import entropy as sp_entropy

    rng = np.random.default_rng(6)
    p = rng.dirichlet(np.ones(4), size=(3, 5))  # (S, n, C)
    assert np.allclose(gm.entropy(p), sp_entropy(p, axis=-1))
    q = np.moveaxis(p, -1, 1)  # classes on axis 1
    assert np.allclose(gm.entropy(q, axis=1), sp_entropy(q, axis=1))
    assert gm.entropy(p[0, 0]) == pytest.approx(sp_entropy(p[0, 0]))  # one distribution
    with pytest.raises(ValueError, match="must sum to 1"):
        gm.entropy(q)  # the classes are not on the last axis
    with pytest.raises(ValueError, match="axis"):
        gm.entropy(p, axis=3)
    off = np.array([[0.2, 0.8 + 5e-5]])
    assert gm.entropy(off) == pytest.approx(sp_entropy(off[0]), rel=1e-3)  # default atol 1e-4
    with pytest.raises(ValueError, match="sum to 1"):
        gm.entropy(off, atol=1e-6)


@pytest.mark.parametrize("target", [[0, 0, 0, 0], [1, 1, 1, 1], []], ids=["neg", "pos", "empty"])
def test_one_class_target_warns_once(target):
    """ood_detection_metrics (and the accumulators) warned once per metric: three times."""
    import warnings

    s = np.linspace(0.0, 1.0, len(target))
    runs = {
        "ood_detection_metrics": lambda: gm.ood_detection_metrics(s, target),
        "OODDetection": lambda: _accumulated(gm.OODDetection(), s, target),
        "MisclassificationDetection": lambda: _accumulated(
            gm.MisclassificationDetection(), s, target
        ),
    }
    for name, run in runs.items():
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            res = run()
        values = res.values() if isinstance(res, dict) else vars(res).values()
        assert all(np.isnan(v) for v in values), name
        assert [w.category for w in rec] == [gm.EmptyEvaluationWarning], name
        if target:  # the warning points at the caller and names the argument
            assert rec[0].filename == __file__, name
            assert "one class" in str(rec[0].message), name
    if target:
        with pytest.warns(gm.EmptyEvaluationWarning, match="is_ood holds only one class"):
            gm.ood_detection_metrics(s, target)


def _accumulated(acc, s, target):
    acc.update(s, target)
    return acc.compute()


def test_ood_detection_metrics_equal_the_single_metrics():
    rng = np.random.default_rng(7)
    s, t = rng.random(200), rng.random(200) < 0.3
    res = gm.ood_detection_metrics(s, t)
    assert (res.auroc, res.aupr, res.fpr95) == (gm.auroc(s, t), gm.aupr(s, t), gm.fpr_at_tpr(s, t))
    acc = _accumulated(gm.OODDetection(), s, t)
    assert acc == res
    mis = _accumulated(gm.MisclassificationDetection(), s, t)
    assert mis == {"auroc": gm.auroc(s, t), "prr": gm.prediction_rejection_ratio(s, t)}
