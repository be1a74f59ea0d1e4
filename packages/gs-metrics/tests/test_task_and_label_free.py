"""Task metrics (accuracy, binary ROC-AUC, MAE) and the LeBed paper's label-free baselines."""

from __future__ import annotations

import numpy as np
import pytest

import gs_metrics as gm


def test_task_metrics_against_sklearn():
    from sklearn.metrics import accuracy_score, mean_absolute_error, roc_auc_score

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 100)
    scores = rng.random((100, 3))
    assert gm.accuracy(scores, y) == pytest.approx(accuracy_score(y, scores.argmax(1)))
    assert gm.accuracy(scores.argmax(1), y) == pytest.approx(accuracy_score(y, scores.argmax(1)))
    t = rng.integers(0, 2, 100)
    s = rng.random(100) + 0.3 * t
    assert gm.binary_roc_auc(s, t) == pytest.approx(roc_auc_score(t, s))
    pred, target = rng.normal(size=(50, 2)), rng.normal(size=(50, 2))
    assert gm.mean_absolute_error(pred, target) == pytest.approx(mean_absolute_error(target, pred))
    mask = rng.random(50) < 0.5
    assert gm.mean_absolute_error(pred, target, mask) == pytest.approx(
        np.abs(pred[mask] - target[mask]).mean()
    )


def test_missing_class_behaviour():
    # binary ROC-AUC with one class only: NaN and a warning (sklearn raises)
    with pytest.warns(gm.EmptyEvaluationWarning, match="one class"):
        assert np.isnan(gm.binary_roc_auc([0.2, 0.9, 0.4], [1, 1, 1]))
    # accuracy does not care which classes occur
    assert gm.accuracy([2, 2], [2, 1]) == 0.5
    with pytest.warns(gm.EmptyEvaluationWarning):
        assert np.isnan(gm.mean_absolute_error(np.zeros(3), np.zeros(3), mask=np.zeros(3, bool)))


def _probs(rng, n=200, c=4, sharp=2.0):
    z = rng.normal(size=(n, c)) * sharp
    p = np.exp(z - z.max(1, keepdims=True))
    return p / p.sum(1, keepdims=True)


def test_baselines_formulas():
    rng = np.random.default_rng(1)
    p = _probs(rng)
    assert gm.conf_score(p) == pytest.approx(np.mean(p.max(1)))  # eq. 9
    assert gm.entropy_score(p) == pytest.approx(np.mean(-np.sum(p * np.log(p), 1)))  # eq. 10
    for tau in (0.7, 0.8, 0.9):  # eq. 13
        assert gm.threshold_score(p, tau) == pytest.approx(1 - np.mean(p.max(1) > tau))


@pytest.mark.parametrize("score", ["mc", "ne"])
def test_atc_threshold_reproduces_validation_error(score):
    rng = np.random.default_rng(2)
    p = _probs(rng, n=500)
    y = np.where(rng.random(500) < p.max(1), p.argmax(1), rng.integers(0, 4, 500))
    t = gm.fit_atc_threshold(p, y, score)
    val_err = np.mean(p.argmax(1) != y)
    # eq. 12: on the validation set, the ATC estimate equals the validation error
    assert gm.atc_score(p, t, score) == pytest.approx(val_err)
    # a sharper test set is estimated to have a lower error
    assert gm.atc_score(_probs(rng, n=500, sharp=5.0), t, score) < val_err


def test_evaluate_estimator_against_scipy():
    from scipy.stats import linregress, spearmanr

    rng = np.random.default_rng(3)
    err = rng.random(20)
    score = 2 * err + rng.normal(scale=0.2, size=20)
    ev = gm.evaluate_estimator(score, err)
    assert ev.spearman == pytest.approx(spearmanr(score, err).statistic)
    lr = linregress(score, err)
    assert ev.r2 == pytest.approx(lr.rvalue**2)
    assert ev.slope == pytest.approx(lr.slope)
    neg = gm.evaluate_estimator(-score, err, orientation=-1)
    assert neg.spearman == pytest.approx(ev.spearman)
    assert neg.r2 == pytest.approx(ev.r2)
    assert gm.ORIENTATION["conf_score"] == -1
    with pytest.raises(ValueError, match="at least 3"):
        gm.evaluate_estimator([1, 2], [1, 2])


def test_evaluate_estimator_constant_score_matches_sklearn():
    # found by the lebed ci run: an over-confident MLP puts every test node above tau = 0.7,
    # so Thres.(0.7) is 0 on every graph and np.polyfit failed ("SVD did not converge")
    import warnings

    from scipy.stats import ConstantInputWarning, spearmanr
    from sklearn.linear_model import LinearRegression
    from sklearn.metrics import r2_score

    err = np.array([0.1, 0.3, 0.2, 0.5])
    for const in (0.0, 0.25):
        s = np.full(4, const)
        ev = gm.evaluate_estimator(s, err)
        fit = LinearRegression().fit(s[:, None], err)
        assert ev.r2 == pytest.approx(r2_score(err, fit.predict(s[:, None])))
        assert ev.slope == pytest.approx(fit.coef_[0])
        assert ev.intercept == pytest.approx(fit.intercept_)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConstantInputWarning)
            assert np.isnan(spearmanr(s, err).statistic) and np.isnan(ev.spearman)
    # constant errors too: nothing to explain, R^2 undefined
    assert np.isnan(gm.evaluate_estimator(np.zeros(3), np.ones(3)).r2)
