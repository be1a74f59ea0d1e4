"""Registering a method (gs_algos.registry.register_method) and a metric the engine selects by."""

from __future__ import annotations

import numpy as np
import pytest

from gs_algos.config import TrainConfig
from gs_algos.methods import ERM, METHODS, Method
from gs_algos.node_methods import NODE_METHODS, available_node_methods, node_method
from gs_algos.registry import available_methods, register_method, unregister_method


class Doubled(ERM):
    """ERM with the loss doubled (a toy)."""

    name = "doubled"

    def training_loss(self, model, batch, epoch):
        loss, logs = super().training_loss(model, batch, epoch)
        return 2 * loss, logs


class GraphOnly(Method):
    name = "graph-only"
    levels = ("graph",)


def test_a_registered_node_method_joins_both_tables():
    register_method("doubled", Doubled)
    try:
        assert METHODS["doubled"] is Doubled and "doubled" in available_methods("node")
        assert "doubled" in available_node_methods()
        assert node_method("doubled").name == "doubled"
        with pytest.raises(ValueError, match="overwrite=True"):
            register_method("doubled", Doubled)
    finally:
        unregister_method("doubled")
    assert "doubled" not in METHODS and "doubled" not in NODE_METHODS
    with pytest.raises(ValueError, match="unknown node method 'doubled'"):
        node_method("doubled")


def test_a_graph_level_method_is_not_a_node_method():
    register_method("graph-only", GraphOnly)
    try:
        assert "graph-only" in available_methods("graph") and "graph-only" not in available_methods("node")
        assert "graph-only" not in NODE_METHODS
    finally:
        unregister_method("graph-only")


def test_shipped_methods_and_bad_registrations_are_refused():
    for name in ("erm", "de", "se"):
        with pytest.raises(ValueError):
            register_method(name, Doubled)
    with pytest.raises(ValueError, match="cannot be unregistered"):
        unregister_method("dann")
    with pytest.raises(TypeError, match="subclass"):
        register_method("not-a-method", object)


def test_train_config_reads_gs_metrics_registry():
    from gs_metrics import register_metric, unregister_metric

    with pytest.raises(ValueError, match="metric must be one of"):
        TrainConfig(metric="max-error")
    register_metric("max-error", lambda o, y: float(np.max(np.abs(o - y))), tasks=("regression",),
                    higher_is_better=False)
    try:
        cfg = TrainConfig(metric="max-error", task="regression")
        assert not cfg.higher_is_better
        with pytest.raises(ValueError, match="does not apply to multiclass"):
            TrainConfig(metric="max-error")
    finally:
        unregister_metric("max-error")
    assert TrainConfig(metric="loss").higher_is_better is False
    with pytest.raises(ValueError, match="does not apply to regression"):
        TrainConfig(metric="accuracy", task="regression")
