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

__all__ = ["BASELINE_OF_METRIC", "HIT_COUNT", "POSITION_ROWS", "trivial_baselines", "baseline_values",
           "position_baselines"]

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


#: The position-only rows of a Track table (issue 53): name -> what it is. Not trivial: each
#: reads the tracks' geometry. They are shown beside the models; the findings' guard uses the
#: trivial rows only.
POSITION_ROWS = {
    "aligned-edge count": "one threshold on the number of kNN edges (k = 5, unit directions) whose "
                          "hits keep their azimuth (|dphi| < 0.002) while their polar angle changes "
                          "(|dtheta| > 0.005)",
    "straightest chain": "one threshold on the longest run of hits at distinct radii (> 20 mm "
                         "apart) within |dphi| < 0.005 and |deta| < 0.05 of one hit",
    "position logistic regression": "a logistic regression on 5 position features (hit count, "
                                    "aligned edges and their fraction, the straightest chain, "
                                    "hits on chains of 5 or more radii), standardised on train",
}


def position_baselines(parts: dict[str, list]) -> dict[str, dict[str, Any]]:
    """The position-only rows (:data:`POSITION_ROWS`) of a Track job, fitted on its ``train``
    part and scored on its Test-ID and Test-OOD (fractions; ``None`` for an empty part), from
    the events' ``position_summary`` (:func:`gs_data.track.position_features` of the raw hit
    positions, attached by :func:`~gs_bench.runners.gess.data.graph_parts`). ``{}`` without
    summaries or with one class in train."""
    from sklearn.linear_model import LogisticRegression

    import gs_metrics as gm
    from gs_data.track import POSITION_FEATURES

    def table(part: str) -> tuple[np.ndarray, np.ndarray]:
        gs = [g for g in parts.get(part, []) if getattr(g, "position_summary", None) is not None]
        if not gs:
            return np.zeros((0, len(POSITION_FEATURES))), np.zeros(0)
        x = np.concatenate([g.position_summary.reshape(1, -1).double().numpy() for g in gs])
        return x, np.asarray([float(g.y.reshape(-1)[0]) for g in gs])

    xtr, ytr = table("train")
    if xtr.shape[0] == 0 or len(np.unique(ytr)) < 2:
        return {}
    tests = {k: table(p) for k, p in _TESTS.items()}
    col = {name: POSITION_FEATURES.index(name) for name in POSITION_FEATURES}
    out: dict[str, dict[str, Any]] = {}
    for row, feature in (("aligned-edge count", "aligned_edges"), ("straightest chain", "straightest_chain")):
        rule = gm.fit_threshold_classifier(xtr[:, col[feature]], ytr)
        out[row] = {**{k: (_finite_or_none(rule.accuracy(x[:, col[feature]], y)) if y.size else None)
                       for k, (x, y) in tests.items()},
                    "threshold": _finite_or_none(rule.threshold), "signal": "above" if rule.side else "below"}
    mu, sd = xtr.mean(0), xtr.std(0)
    sd[sd == 0] = 1.0
    clf = LogisticRegression(max_iter=2000).fit((xtr - mu) / sd, ytr.astype(int))
    out["position logistic regression"] = {
        k: (float((clf.predict((x - mu) / sd) == y.astype(int)).mean()) if y.size else None)
        for k, (x, y) in tests.items()}
    return out


def baseline_values(erm: Sequence[dict[str, Any]], key: str = "baselines") -> dict[str, dict[str, list[float]]]:
    """``{baseline name: {"test_id": [...], "test_ood": [...]}}`` over the records ``erm``
    that carry ``baselines`` (:func:`trivial_baselines`; records written before it have none),
    missing values left out; a baseline without any value is left out. ``key =
    "position_baselines"``: the position-only rows (:func:`position_baselines`)."""
    out: dict[str, dict[str, list[float]]] = {}
    for r in erm:
        for name, b in (r["metrics"].get(key) or {}).items():
            for test in ("test_id", "test_ood"):
                v = b.get(test)
                if v is not None and math.isfinite(v):
                    out.setdefault(name, {"test_id": [], "test_ood": []})[test].append(float(v))
    return {k: v for k, v in out.items() if v["test_id"] or v["test_ood"]}
