"""Validation before running: the jobs of a suite that cannot succeed, found before any starts.

Two kinds of problem are told apart, because they call for different fixes:

* ``construction``: the job fails whatever the machine (an algorithm that does not apply to
  the dataset's task, a dataset the runner does not wire, a Par-Label size larger than the
  labelled OOD pool, an unknown name). Fix the suite file or the command line. Shipped
  suites have none (tested for every suite x profile).
* ``data``: the job needs files or an optional package this machine lacks (a dataset not
  downloaded, PYTHIA 8 + ACTS for Track events not in the cache). Fix the machine.

A runner may define ``problems(config, jobs) -> list[Problem]`` (the
:class:`~gs_bench.suites.Job` objects :func:`plan` returns). A :class:`~gs_bench.suites.DataMissingError` raised by a
runner's ``validate`` becomes one ``data`` problem for all the suite's jobs; any other
:class:`~gs_bench.suites.SuiteConfigError` (a construction error found while loading or
validating) propagates, as before.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from gs_bench.executors import environment
from gs_bench.runners import load_runner
from gs_bench.suites import DataMissingError, Job, SuiteConfig, expand_jobs

__all__ = ["KINDS", "Problem", "Preflight", "check_suite", "format_problems", "plan", "plan_jobs"]

KINDS = ("construction", "data")


@dataclass(frozen=True)
class Problem:
    """Jobs that cannot succeed, for one reason.

    Attributes
    ----------
    kind
        ``"construction"`` or ``"data"`` (module docstring).
    where
        The grid point(s) concerned, e.g. ``"dataset=molecular-fidelity, algorithm=dir"``.
    reason
        What is wrong and what is accepted / how to fix it.
    jobs
        Number of planned jobs affected (``None`` when the suite could not be expanded).
    """

    kind: str
    where: str
    reason: str
    jobs: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Problem.kind must be one of {KINDS}, got {self.kind!r}")

    def line(self) -> str:
        n = "" if self.jobs is None else f" ({self.jobs} job{'s' if self.jobs != 1 else ''})"
        return f"[{self.kind}] {self.where}{n}: {self.reason}"


@dataclass
class Preflight:
    """What :func:`check_suite` found: the planned jobs (as the executors and the records hold
    them, :meth:`~gs_bench.suites.Job.as_dict`) and the problems."""

    suite: str
    profile: str
    jobs: list[dict[str, Any]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    excluded: int = 0  # grid points dropped by the suite's [[exclude]] rules
    #: the run environment of the plan (versions, data fingerprints); None when data is missing
    env: dict[str, Any] | None = None

    def of_kind(self, kind: str) -> list[Problem]:
        return [p for p in self.problems if p.kind == kind]

    @property
    def construction(self) -> list[Problem]:
        """Problems that make jobs fail on any machine."""
        return self.of_kind("construction")

    @property
    def data(self) -> list[Problem]:
        """Problems of this machine (missing files or optional packages)."""
        return self.of_kind("data")

    def failing_jobs(self, kind: str) -> int | None:
        """Number of jobs affected by problems of ``kind`` (``None``: unknown)."""
        probs = self.of_kind(kind)
        if any(p.jobs is None for p in probs):
            return None
        return sum(int(p.jobs) for p in probs)

    def summary(self) -> str:
        def count(kind: str) -> str:
            n = self.failing_jobs(kind)
            return "?" if n is None else str(n)

        excl = (f" ({self.excluded} grid point{'s' if self.excluded != 1 else ''} left out by "
                "the suite's [[exclude]] rules)") if self.excluded else ""
        return (
            f"{self.suite} ({self.profile}): {len(self.jobs)} job{'' if len(self.jobs) == 1 else 's'} "
            f"planned{excl}; "
            f"{count('construction')} fail by construction, "
            f"{count('data')} lack data on this machine"
        )


def format_problems(problems: Sequence[Problem]) -> str:
    """One line per problem, construction problems first."""
    order = sorted(problems, key=lambda p: KINDS.index(p.kind))
    return "\n".join("  " + p.line() for p in order)


def plan(
    config: SuiteConfig, *, key_extra: dict[str, Any] | None = None
) -> tuple[list[Job], dict[str, Any]]:
    """Validate ``config`` (before any job starts) and expand it into the typed jobs, in the
    order the executor starts them. The returned environment holds the data fingerprints too
    (``data_fingerprints``). ``key_extra``: see :func:`gs_bench.suites.expand_jobs`."""
    runner = load_runner(config.suite)
    fingerprints = runner.validate(config)
    env = environment()
    env["data_fingerprints"] = dict(fingerprints or {})
    seeds = config.seeds
    # the hooks take the typed settings (a config built by hand has none: its dict then)
    settings = config.typed_settings if config.typed_settings is not None else config.settings
    most = runner.max_runs(settings, config.seeds)
    if most > config.seeds:  # some grid points run more often than `seeds` (e.g. GPN: 5)
        config = config.with_overrides(seeds=most)
    jobs = expand_jobs(config, versions=env["versions"], fingerprints=fingerprints,
                       key_extra=key_extra)
    # grid points that make no sense (e.g. a domain shift of Cora), and methods with their own
    # number of runs (e.g. one 5-member ensemble)
    jobs = [j for j in jobs if runner.applicable(j.params, settings)
            and j.seed < runner.runs(j.params, settings, seeds)]
    # e.g. single models before the ensembles that reuse them
    return runner.order_jobs(jobs), env


def plan_jobs(
    config: SuiteConfig, *, key_extra: dict[str, Any] | None = None
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """:func:`plan`, the jobs as the executors and the records take them
    (:meth:`~gs_bench.suites.Job.as_dict`)."""
    jobs, env = plan(config, key_extra=key_extra)
    return [j.as_dict() for j in jobs], env


def _missing_per_dataset(config: SuiteConfig) -> list[Problem]:
    """One ``data`` problem per dataset of ``config``'s grid whose own plan lacks data (its
    grid points x seeds as the job count); empty when the grid has one dataset or none lacks
    data on its own (the problem is then the suite's, e.g. a pairing of datasets)."""
    datasets = list(config.grid.get("dataset") or [])
    if len(datasets) < 2:
        return []
    runner = load_runner(config.suite)
    problems = []
    for ds in datasets:
        sub = config.with_overrides(axes={"dataset": [ds]})
        try:
            runner.validate(sub)  # where plan_jobs' DataMissingError comes from
        except DataMissingError as exc:
            problems.append(Problem("data", f"dataset={ds}", " ".join(str(exc).split()),
                                    len(expand_jobs(sub))))
    return problems


def check_suite(config, key_extra: dict[str, Any] | None = None) -> Preflight:
    """Plan ``config`` (a resolved :class:`~gs_bench.suites.SuiteConfig`) and list every
    problem that would make one of its jobs fail, without running anything. ``key_extra``:
    see :func:`gs_bench.suites.expand_jobs` (``gs-bench run --device-in-key``)."""
    out = Preflight(config.suite, config.profile_label)
    axes = list(config.grid)
    out.excluded = sum(config.excluded(dict(zip(axes, values, strict=True)))
                       for values in itertools.product(*(config.grid[a] for a in axes)))
    try:
        # a construction error (SuiteConfigError) propagates
        jobs, out.env = plan(config, key_extra=key_extra)
    except DataMissingError as exc:
        out.jobs = [j.as_dict() for j in expand_jobs(config)]
        # which datasets lack their files, each with its jobs (a runner's check stops at the
        # first); the suite-wide message where no single dataset is to blame
        out.problems.extend(_missing_per_dataset(config) or [
            Problem("data", "suite", " ".join(str(exc).split()), len(out.jobs))])
        return out
    out.jobs = [j.as_dict() for j in jobs]
    out.problems.extend(load_runner(config.suite).problems(config, jobs))
    return out
