"""Trivial baselines against scikit-learn's dummy estimators and a brute-force threshold search."""

from __future__ import annotations

import numpy as np
import pytest

import gs_metrics as gm


def _brute_force_threshold(x: np.ndarray, y: np.ndarray) -> tuple[float, int, float]:
    """-inf and every distinct value as threshold, both sides; the first strict best (the
    order the search documents: threshold ascending, side 1 before side 0)."""
    best = (-1.0, 0.0, 1)
    for t in [-np.inf, *np.unique(x)]:
        for side in (1, 0):
            acc = float((np.where(x > t, side, 1 - side) == y).mean())
            if acc > best[0]:
                best = (acc, float(t), side)
    return best[1], best[2], best[0]


def test_majority_class_matches_sklearn_dummy_classifier():
    from sklearn.dummy import DummyClassifier

    rng = np.random.default_rng(0)
    for trial in range(20):
        n_classes = int(rng.integers(1, 5))
        train = rng.integers(0, n_classes, size=int(rng.integers(1, 40)))
        test = rng.integers(0, n_classes, size=int(rng.integers(1, 40)))
        ref = DummyClassifier(strategy="most_frequent").fit(np.zeros((train.size, 1)), train)
        assert gm.majority_class(train) == int(ref.predict(np.zeros((1, 1)))[0]), trial
        assert gm.majority_class_accuracy(train, test) == pytest.approx(
            ref.score(np.zeros((test.size, 1)), test)), trial


def test_majority_class_tie_goes_to_the_smallest_label_and_float_labels_are_accepted():
    from sklearn.dummy import DummyClassifier

    train = np.array([2, 1, 2, 1, 0])
    ref = DummyClassifier(strategy="most_frequent").fit(np.zeros((5, 1)), train)
    assert gm.majority_class(train) == 1 == ref.predict(np.zeros((1, 1)))[0]
    # PyG graph labels arrive as floats 0.0 / 1.0
    assert gm.majority_class_accuracy(np.array([1.0, 1.0, 0.0]), np.array([1.0, 0.0, 0.0, 0.0])) == 0.25


def test_mean_predictor_mae_matches_sklearn_dummy_regressor():
    from sklearn.dummy import DummyRegressor
    from sklearn.metrics import mean_absolute_error

    rng = np.random.default_rng(1)
    train, test = rng.normal(3.0, 2.0, 50), rng.normal(4.0, 1.0, 30)
    ref = DummyRegressor().fit(np.zeros((50, 1)), train).predict(np.zeros((30, 1)))
    assert gm.mean_predictor_mae(train, test) == pytest.approx(mean_absolute_error(test, ref))
    # (n, 1) targets, as PyG's ``y`` stacked per graph, are flattened
    assert gm.mean_predictor_mae(train[:, None], test[:, None]) == pytest.approx(mean_absolute_error(test, ref))


def test_threshold_classifier_equals_brute_force_search():
    # small integer features: many ties between values and between rules
    rng = np.random.default_rng(2)
    for trial in range(300):
        n = int(rng.integers(1, 40))
        x = rng.integers(0, int(rng.integers(1, 13)), size=n).astype(float)
        y = (rng.random(n) < rng.random()).astype(np.int64)
        if trial % 3 == 0:  # a feature that does separate the classes, up to noise
            x = x + 5 * y * (rng.random(n) < 0.8)
        rule = gm.fit_threshold_classifier(x, y)
        t, side, acc = _brute_force_threshold(x, y)
        assert (rule.threshold, rule.side) == (t, side), trial
        assert rule.train_accuracy == pytest.approx(acc), trial
        assert rule.accuracy(x, y) == pytest.approx(acc), trial


def test_threshold_classifier_predicts_unseen_values_and_both_sides():
    # more hits = signal: side 1 above the threshold
    rule = gm.fit_threshold_classifier([10, 12, 30, 33, 11, 35], [0, 0, 1, 1, 0, 1])
    assert (rule.threshold, rule.side, rule.train_accuracy) == (12.0, 1, 1.0)
    assert rule.predict([0, 12, 12.5, 100]).tolist() == [0, 0, 1, 1]
    assert rule.accuracy([5, 50], [1, 1]) == 0.5
    # fewer hits = signal: side 0 above the threshold
    rule = gm.fit_threshold_classifier([10, 12, 30, 33], [1, 1, 0, 0])
    assert (rule.threshold, rule.side) == (12.0, 0)
    # one class only: a constant prediction, accuracy 1
    rule = gm.fit_threshold_classifier([3, 1, 2], [1, 1, 1])
    assert (rule.threshold, rule.side, rule.train_accuracy) == (-np.inf, 1, 1.0)
    assert rule.predict([0, 5]).tolist() == [1, 1]
    # an exact split wins over the constant "all 0" (3 of 4)
    rule = gm.fit_threshold_classifier([3, 1, 2, 2], [0, 1, 0, 0])
    assert (rule.threshold, rule.side, rule.train_accuracy) == (1.0, 0, 1.0)


def test_baselines_reject_bad_input_and_warn_on_empty_test_sets():
    with pytest.raises(ValueError, match="train_labels is empty"):
        gm.majority_class([])
    with pytest.raises(ValueError, match="train_targets is empty"):
        gm.mean_predictor_mae([], [1.0])
    with pytest.raises(ValueError, match="x is empty"):
        gm.fit_threshold_classifier([], [])
    with pytest.raises(ValueError, match=r"must lie in \[0, 2\)"):
        gm.fit_threshold_classifier([1.0, 2.0], [0, 2])
    with pytest.raises(ValueError, match="NaN"):
        gm.mean_predictor_mae([1.0, np.nan], [1.0])
    with pytest.raises(TypeError, match="integer class indices"):
        gm.majority_class([0.5, 1.0])
    with pytest.warns(gm.EmptyEvaluationWarning):
        assert np.isnan(gm.majority_class_accuracy([0, 1, 1], []))
    with pytest.warns(gm.EmptyEvaluationWarning):
        assert np.isnan(gm.mean_predictor_mae([1.0], np.zeros((0, 1))))
    with pytest.warns(gm.EmptyEvaluationWarning):
        assert np.isnan(gm.fit_threshold_classifier([1, 2], [0, 1]).accuracy([], []))
