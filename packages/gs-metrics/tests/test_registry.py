"""The task-metric registry (gs_metrics.registry): the shipped entries and registering one."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import gs_metrics
from gs_metrics import registry


def test_docstring_example():
    res = doctest.testmod(registry)
    assert res.failed == 0 and res.attempted > 0


def test_the_shipped_metrics_agree_with_their_functions():
    scores = np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]])
    y = np.array([1, 1, 1])
    assert gs_metrics.get_metric("accuracy")(scores, y) == gs_metrics.accuracy(scores, y)
    logits = np.array([2.0, -1.0, 0.5, -3.0])
    t = np.array([1, 0, 0, 0])
    assert gs_metrics.get_metric("accuracy")(logits, t) == 0.75  # threshold 0 on the logit
    assert gs_metrics.get_metric("auroc")(logits, t) == gs_metrics.binary_roc_auc(logits, t)
    assert gs_metrics.get_metric("mae")(np.array([1.0, 2.0]), np.array([0.0, 4.0])) == 1.5
    assert [gs_metrics.get_metric(m).higher_is_better for m in ("accuracy", "auroc", "mae")] == [True, True, False]
    assert gs_metrics.available_metrics("regression") == ["mae"]
    assert gs_metrics.available_metrics("binary") == ["accuracy", "auroc"]


def test_registration_rules():
    with pytest.raises(ValueError, match="cannot be unregistered"):
        gs_metrics.unregister_metric("accuracy")
    with pytest.raises(ValueError, match="exists already"):
        gs_metrics.register_metric("mae", abs, tasks=("regression",), higher_is_better=False)
    with pytest.raises(ValueError, match="not be one of"):
        gs_metrics.register_metric("loss", abs, tasks=("regression",), higher_is_better=False)
    with pytest.raises(ValueError, match="tasks"):
        gs_metrics.register_metric("bad-task", abs, tasks=("ranking",), higher_is_better=False)
    with pytest.raises(ValueError, match="unknown metric 'nope'; accepted: accuracy, auroc, mae"):
        gs_metrics.get_metric("nope")
    entry = gs_metrics.register_metric("max-error", lambda o, y: float(np.max(np.abs(o - y))),
                                       tasks=("regression",), higher_is_better=False, label="MaxE")
    try:
        assert gs_metrics.available_metrics("regression") == ["mae", "max-error"]
        assert entry(np.array([1.0, 5.0]), np.array([1.0, 2.0])) == 3.0 and entry.label == "MaxE"
    finally:
        gs_metrics.unregister_metric("max-error")
    assert "max-error" not in gs_metrics.TASK_METRICS
