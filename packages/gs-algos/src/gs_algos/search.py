"""GeSS hyperparameter search (appendix F, table 7): one hyperparameter per algorithm,
a declared search space, selection on the OOD-validation metric.

Table 7 of the GeSS paper names the tuned hyperparameter of every algorithm but its
search-space values did not survive in our copy of the paper (the cells are empty), so
the spaces below are ours: log-spaced over the usual ranges of each penalty, and the
probability / ratio grids over their natural ranges. The structural-shifts methods keep
the paper's fixed settings (no search).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gs_algos.engine import FitResult

__all__ = ["SearchSpace", "GESS_SEARCH_SPACES", "SearchResult", "grid_search"]


@dataclass(frozen=True)
class SearchSpace:
    """The hyperparameter GeSS tunes for one algorithm.

    Attributes
    ----------
    method
        Key in :data:`gs_algos.methods.METHODS`.
    param
        Constructor argument of that method.
    description
        Its name in GeSS table 7.
    values
        The grid.
    """

    method: str
    param: str
    description: str
    values: tuple[float, ...]


GESS_SEARCH_SPACES: dict[str, SearchSpace] = {
    "vrex": SearchSpace("vrex", "penalty_weight", "Penalty Weight", (0.1, 1.0, 10.0, 100.0)),
    "groupdro": SearchSpace(
        "groupdro", "step_size", "Exponential Coefficient", (0.001, 0.01, 0.1, 1.0)
    ),
    "mixup": SearchSpace("mixup", "prob", "Probability", (0.25, 0.5, 0.75, 1.0)),
    "dir": SearchSpace("dir", "causal_ratio", "Causal Ratio", (0.2, 0.4, 0.6, 0.8)),
    "lri": SearchSpace(
        "lri", "info_loss_coef", "Information Loss Coefficient", (0.01, 0.1, 1.0, 10.0)
    ),
    "dann": SearchSpace("dann", "domain_weight", "Domain Loss Weight", (0.01, 0.1, 1.0, 10.0)),
    "coral": SearchSpace("coral", "penalty_weight", "Penalty Weight", (0.01, 0.1, 1.0, 10.0)),
}
"""GeSS table 7: the tuned hyperparameter of each algorithm (values: ours, see module doc)."""


@dataclass
class SearchResult:
    """Outcome of :func:`grid_search`."""

    space: SearchSpace
    best_value: float
    best_score: float
    scores: dict[float, float]
    results: dict[float, FitResult]


def grid_search(
    method: str,
    run: Callable[[Any], FitResult],
    *,
    select_part: str = "ood_val",
    metric: str = "accuracy",
    higher_is_better: bool = True,
    values: Sequence[float] | None = None,
) -> SearchResult:
    """Run ``run(method_instance)`` for every value of the method's GeSS search space and
    keep the value whose run is best on ``select_part`` (GeSS: OOD validation).

    The score of a run is the ``metric`` on ``select_part`` at the best epoch of the
    run's ``select_part`` track (``FitResult.tracks[select_part]``).
    """
    from gs_algos.methods import METHODS

    if method not in GESS_SEARCH_SPACES:
        raise ValueError(
            f"no GeSS search space for method {method!r}; accepted: {sorted(GESS_SEARCH_SPACES)}"
        )
    space = GESS_SEARCH_SPACES[method]
    grid = tuple(values) if values is not None else space.values
    if len(grid) == 0:
        raise ValueError("the search grid is empty")
    scores: dict[float, float] = {}
    results: dict[float, FitResult] = {}
    for v in grid:
        res = run(METHODS[method](**{space.param: v}))
        if select_part not in res.tracks:
            raise ValueError(
                f"the run has no selection track {select_part!r} (tracks: {sorted(res.tracks)}); "
                "add it to config.select_on"
            )
        tr = res.tracks[select_part]
        scores[v] = tr.metrics.get(select_part, {}).get(metric, math.nan)
        results[v] = res

    def key(v):
        s = scores[v]
        if math.isnan(s):
            return -math.inf
        return s if higher_is_better else -s

    best = max(grid, key=key)
    return SearchResult(space, best, scores[best], scores, results)
