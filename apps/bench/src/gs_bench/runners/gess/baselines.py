"""The trivial baselines of a ``gess`` job: what a predictor that learns nothing about the
inputs scores, fitted on the job's own train part and stored in its record
(:func:`trivial_baselines`, on the worker), and read back from the records by the report
(:func:`baseline_values`). The findings are judged only where ERM beats them."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["BASELINE_OF_METRIC", "HIT_COUNT", "trivial_baselines", "baseline_values"]

#: The report's name of the trivial baseline of each metric (its "algorithm" cell):
#: accuracy, the majority class of ``train``; ROC-AUC, 50 by definition (any constant score);
#: MAE, the train-label mean. Track adds :data:`HIT_COUNT`.
BASELINE_OF_METRIC = {"accuracy": "majority class", "auroc": "AUC 50", "mae": "train mean"}
#: Track's known shortcut: a threshold on the number of hits of an event
#: (``apps/bench/checks/track_hit_count_baseline.py``).
HIT_COUNT = "hit-count threshold"
_TESTS = {"test_id": "iid_test", "test_ood": "ood_test"}


def _finite_or_none(v: float) -> float | None:
    return float(v) if v is not None and np.isfinite(v) else None


def trivial_baselines(parts: dict[str, list], case) -> dict[str, dict[str, Any]]:
    """What a predictor that learns nothing about the inputs scores on this job's Test-ID and
    Test-OOD (``{name: {"test_id": v, "test_ood": v, ...}}``, the metric's unit: fractions for
    ACC / AUC, eV for MAE; ``None`` for an empty part), fitted on the job's ``train`` part:

    * ACC: the majority class of the train labels (``"class"``: which one);
    * AUC: 0.5 (a constant score ranks no pair);
    * MAE: the train-label mean as prediction (``"prediction"``);
    * Track (ACC) also: the hit-count threshold (number of points ``g.pos.size(0)`` per event)
      and direction with the best train accuracy (``"threshold"``, ``"signal"``: ``"above"``
      or ``"below"``; a threshold of ``None`` predicts one class everywhere).

    The functions are gs-metrics' (:mod:`gs_metrics.baselines`); every job stores them, the
    report reads them from the ERM records (:func:`baseline_values`)."""
    import gs_metrics as gm

    def targets(part: str) -> np.ndarray:
        return np.asarray([float(v) for g in parts.get(part, []) for v in g.y.reshape(-1).tolist()])

    train = targets("train")
    if train.size == 0:
        return {}
    out: dict[str, dict[str, Any]] = {}
    with warnings.catch_warnings():  # an empty test part gives None, not a warning per job
        warnings.simplefilter("ignore", gm.EmptyEvaluationWarning)
        if case.metric == "mae":
            out[BASELINE_OF_METRIC["mae"]] = {
                **{k: _finite_or_none(gm.mean_predictor_mae(train, targets(p))) for k, p in _TESTS.items()},
                "prediction": float(f"{train.mean():.5g}")}
        elif case.metric == "auroc":
            out[BASELINE_OF_METRIC["auroc"]] = {k: 0.5 for k in _TESTS}
        else:
            out[BASELINE_OF_METRIC.get(case.metric, "majority class")] = {
                **{k: _finite_or_none(gm.majority_class_accuracy(train, targets(p))) for k, p in _TESTS.items()},
                "class": gm.majority_class(train)}
        if case.family == "track" and case.metric == "accuracy":
            def hits(part: str) -> np.ndarray:
                return np.asarray([g.pos.size(0) for g in parts.get(part, [])], dtype=np.float64)

            rule = gm.fit_threshold_classifier(hits("train"), train)
            out[HIT_COUNT] = {
                **{k: _finite_or_none(rule.accuracy(hits(p), targets(p))) for k, p in _TESTS.items()},
                "threshold": _finite_or_none(rule.threshold), "signal": "above" if rule.side else "below"}
    return out


def baseline_values(erm: Sequence[dict[str, Any]]) -> dict[str, dict[str, list[float]]]:
    """``{baseline name: {"test_id": [...], "test_ood": [...]}}`` over the records ``erm``
    that carry ``baselines`` (:func:`trivial_baselines`; records written before it have none),
    missing values left out; a baseline without any value is left out."""
    out: dict[str, dict[str, list[float]]] = {}
    for r in erm:
        for name, b in (r["metrics"].get("baselines") or {}).items():
            for test in ("test_id", "test_ood"):
                v = b.get(test)
                if v is not None and math.isfinite(v):
                    out.setdefault(name, {"test_id": [], "test_ood": []})[test].append(float(v))
    return {k: v for k, v in out.items() if v["test_id"] or v["test_ood"]}
