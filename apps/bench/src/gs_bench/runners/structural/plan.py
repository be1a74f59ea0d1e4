"""The ``structural-shifts`` suite's plan: how many runs each grid point gets and the order
the executor starts the jobs in (gs-algos' method registry is loaded when they run)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gs_algos.names import ROBUSTNESS_METHODS
from gs_bench.runners.structural.spec import Settings, algo_name, has_files

__all__ = ["runs", "max_runs", "order_jobs"]


def runs(params: dict[str, Any], settings: Settings | Mapping[str, Any], seeds: int) -> int:
    """Number of runs (job seeds) of a grid point: ``seeds`` for single models,
    ``ensemble_runs`` (default 1, the authors' one ensemble) for ensembles, ``posterior_runs``
    for GPN / NatPN and ``robustness_runs`` for DANN / CORAL / Mixup / EERM where set; 0 for a
    dataset without its files when ``skip_missing_datasets`` is set (the ``full`` profile)."""
    from gs_algos.node_methods import node_method

    st = Settings.from_mapping(settings)
    if st.skip_missing_datasets and not has_files(params["dataset"], st):
        return 0
    name = algo_name(params["method"])
    if node_method(name, st.ensemble_size).num_members > 1:
        return min(seeds, st.ensemble_runs)
    if name in ("gpn", "natpn") and st.posterior_runs:
        return st.posterior_runs
    if name in ROBUSTNESS_METHODS and st.robustness_runs:
        return st.robustness_runs
    return seeds


def max_runs(settings: Settings | Mapping[str, Any], seeds: int) -> int:
    """The most runs any grid point gets (:func:`runs`): jobs are planned up to it."""
    st = Settings.from_mapping(settings)
    return max([seeds, *(int(v) for v in (st.posterior_runs, st.robustness_runs) if v)])


def order_jobs(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One ID:OOD ratio after the other (the grid's order, so the main text's 50:50 finishes
    first in a long run), and within a ratio single models first (EERM, the longest,
    leading), ensembles last: with shared members (``share_members``) an ensemble then
    loads the members its single-model counterpart has trained instead of training them
    again on another worker."""
    from gs_algos.node_methods import node_method

    ratios: dict[str, int] = {}
    for job in jobs:
        ratios.setdefault(job["params"].get("ratio", ""), len(ratios))

    def rank(job: dict[str, Any]) -> tuple[int, int]:
        name = algo_name(job["params"]["method"])
        ratio = ratios[job["params"].get("ratio", "")]
        if node_method(name, Settings.from_job(job).ensemble_size).num_members > 1:
            return ratio, 2
        return ratio, 0 if name == "eerm" else 1

    return sorted(jobs, key=rank)  # stable: the grid order within each rank
