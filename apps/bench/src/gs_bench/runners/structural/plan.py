"""The ``structural-shifts`` suite's plan: how many runs each grid point gets and the order
the executor starts the jobs in (gs-algos' method registry is loaded when they run)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gs_algos.names import ROBUSTNESS_METHODS
from gs_bench.runners.structural.spec import Grid, Settings, algo_name, has_files
from gs_bench.suites import Job

__all__ = ["runs", "max_runs", "order_jobs"]


def runs(point: Grid | Mapping[str, Any], settings: Settings | Mapping[str, Any], seeds: int) -> int:
    """Number of runs (job seeds) of a grid point: ``seeds`` for single models,
    ``ensemble_runs`` (default 1, the authors' one ensemble) for ensembles, ``posterior_runs``
    for GPN / NatPN and ``robustness_runs`` for DANN / CORAL / Mixup / EERM where set; 0 for a
    dataset without its files when ``skip_missing_datasets`` is set (the ``full`` profile)."""
    from gs_algos.node_methods import node_method

    st, point = Settings.from_mapping(settings), Grid.from_mapping(point)
    if st.skip_missing_datasets and not has_files(point.dataset, st):
        return 0
    name = algo_name(point.method)
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


def order_jobs(jobs: list[Job]) -> list[Job]:
    """One ID:OOD ratio after the other (the grid's order, so the main text's 50:50 finishes
    first in a long run), and within a ratio single models first (EERM, the longest,
    leading), ensembles last: with shared members (``share_members``) an ensemble then
    loads the members its single-model counterpart has trained instead of training them
    again on another worker."""
    from gs_algos.node_methods import node_method

    typed = {id(job): Job.of(job, Grid) for job in jobs}  # a job dict written by hand too
    ratios: dict[str, int] = {}
    for job in typed.values():
        ratios.setdefault(job.params.ratio or "", len(ratios))

    def rank(job: Job) -> tuple[int, int]:
        job = typed[id(job)]
        name = algo_name(job.params.method)
        ratio = ratios[job.params.ratio or ""]
        if node_method(name, Settings.from_job(job).ensemble_size).num_members > 1:
            return ratio, 2
        return ratio, 0 if name == "eerm" else 1

    return sorted(jobs, key=rank)  # stable: the grid order within each rank
