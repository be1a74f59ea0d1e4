"""The registry of task metrics: the scores a training run selects checkpoints by.

:data:`TASK_METRICS` maps a name to a :class:`TaskMetric`: a pure function
``f(outputs, target) -> float`` of a model's raw outputs and the targets, the tasks it
applies to and whether larger is better. ``outputs`` are numpy arrays: class scores
(n, C) for ``multiclass``, the logit of the positive class (n,) for ``binary`` and the
predicted values (n,) for ``regression``. The table is built explicitly below (no
registration by import side effect); gs-algos reads it to validate
``TrainConfig.metric``, to know its direction and to evaluate every registered metric of a
task during training. Add your own with :func:`register_metric`:

>>> import numpy as np
>>> from gs_metrics import get_metric, register_metric, unregister_metric
>>> _ = register_metric("error-rate", lambda out, y: float(np.mean(out.argmax(1) != y)),
...                     tasks=("multiclass",), higher_is_better=False)
>>> get_metric("error-rate")(np.array([[0.2, 0.8], [0.9, 0.1]]), np.array([1, 1]))
0.5
>>> unregister_metric("error-rate")
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from gs_metrics.task import accuracy, binary_roc_auc, mean_absolute_error

__all__ = [
    "TASK_METRICS",
    "TASKS",
    "TaskMetric",
    "available_metrics",
    "get_metric",
    "register_metric",
    "unregister_metric",
]

#: The prediction tasks a metric may apply to.
TASKS = ("multiclass", "binary", "regression")
_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
#: selection quantities that are not metrics of this table (gs-algos' training loss)
_RESERVED = ("loss",)


@dataclass(frozen=True)
class TaskMetric:
    """One task metric: ``function(outputs, target) -> float`` and its properties."""

    name: str
    function: Callable[[Any, Any], float]
    tasks: tuple[str, ...]
    higher_is_better: bool
    label: str = ""
    builtin: bool = False

    def __call__(self, outputs: Any, target: Any) -> float:
        return float(self.function(outputs, target))


def _accuracy(outputs: Any, target: Any) -> float:
    out = np.asarray(outputs)
    return accuracy(out if out.ndim == 2 else (out.reshape(-1) > 0).astype(np.int64), target)


TASK_METRICS: dict[str, TaskMetric] = {
    m.name: m
    for m in (
        TaskMetric("accuracy", _accuracy, ("multiclass", "binary"), True, "ACC", True),
        TaskMetric("auroc", lambda out, y: binary_roc_auc(np.asarray(out).reshape(-1), y),
                   ("binary",), True, "AUC", True),
        TaskMetric("mae", lambda out, y: mean_absolute_error(
            np.asarray(out, dtype=np.float64).reshape(-1), np.asarray(y, dtype=np.float64).reshape(-1)),
            ("regression",), False, "MAE", True),
    )
}
"""Metric name -> :class:`TaskMetric` (the shipped ones, then the registered ones)."""


def available_metrics(task: str | None = None) -> list[str]:
    """Names of the registered metrics (those applying to ``task`` if given)."""
    return [n for n, m in TASK_METRICS.items() if task is None or task in m.tasks]


def get_metric(name: str) -> TaskMetric:
    """The metric called ``name``; ``ValueError`` listing the accepted names otherwise."""
    try:
        return TASK_METRICS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown metric {name!r}; accepted: {', '.join(TASK_METRICS)}") from None


def register_metric(name: str, function: Callable[[Any, Any], float], *, tasks: tuple[str, ...],
                    higher_is_better: bool, label: str | None = None,
                    overwrite: bool = False) -> TaskMetric:
    """Add ``function(outputs, target) -> float`` under ``name``; returns its entry.

    ``tasks``: the tasks of :data:`TASKS` it applies to. ``overwrite=True`` replaces a metric
    you registered before; the shipped ones cannot be replaced.
    """
    if not isinstance(name, str) or not _NAME.match(name) or name in _RESERVED:
        raise ValueError(f"metric name must match {_NAME.pattern} and not be one of {_RESERVED}, "
                         f"got {name!r}")
    if not callable(function):
        raise TypeError(f"metric function must be callable (outputs, target) -> float, got "
                        f"{type(function).__name__}")
    tasks = tuple(tasks)
    bad = [t for t in tasks if t not in TASKS]
    if not tasks or bad:
        raise ValueError(f"tasks must be a non-empty subset of {TASKS}, got {tasks!r}")
    old = TASK_METRICS.get(name)
    if old is not None and (old.builtin or not overwrite):
        raise ValueError(f"metric {name!r} exists already"
                         + ("" if old.builtin else "; pass overwrite=True to replace it"))
    entry = TaskMetric(name, function, tasks, bool(higher_is_better), label or name)
    TASK_METRICS[name] = entry
    return entry


def unregister_metric(name: str) -> None:
    """Remove a metric added by :func:`register_metric` (the shipped ones stay)."""
    entry = get_metric(name)
    if entry.builtin:
        raise ValueError(f"metric {name!r} ships with gs-metrics and cannot be unregistered")
    del TASK_METRICS[name]
