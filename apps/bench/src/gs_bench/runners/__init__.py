"""Suite runners: an explicit table (no registration by import side effect).

:data:`RUNNERS` maps a suite name to the module (or package) of its runner, whose interface
:class:`gs_bench.runner.Runner` states: ``Grid`` and ``Settings`` (the suite's schema), the
required hooks ``validate(config)``, ``run_job(job)`` and ``tables(records)``, and the optional
ones (``figures``, ``paragraphs``, ``notes``, ``applicable``, ``runs``, ``max_runs``,
``order_jobs``, ``problems``, ``axis_aliases``), each with its default in
:class:`gs_bench.runner.SuiteRunner`. A runner package defines ``RUNNER = SuiteRunner(...)``
(``gs_bench/runners/lebed/``); a single-file runner module defines the hooks as functions and
:func:`load_runner` wraps it. ``run_job`` runs on a worker, which imports
``"<module>:run_job"`` and gives it a typed :class:`gs_bench.suites.Job`: the grid point as the
runner's ``Grid`` (``job.params``), the resolved ``job.device`` and the results folder in
``job.workdir`` (for files shared between jobs), when the executor gives one.

Report sections follow the order of :data:`RUNNERS` (the papers' order). ``tables``,
``figures``, ``paragraphs`` and ``notes`` draw from the records (and files the jobs wrote into
the run folder) only: ``gs-bench report`` never loads a dataset or computes a split, so it works
on a finished run folder with the data root removed.
"""

from gs_bench.runner import Runner, SuiteRunner

RUNNERS: dict[str, str] = {
    "structural-shifts": "gs_bench.runners.structural",
    "edgewise": "gs_bench.runners.edgewise",
    "lebed": "gs_bench.runners.lebed",
    "gess": "gs_bench.runners.gess",
}

__all__ = ["RUNNERS"]


def load_runner(suite: str) -> Runner:
    """The :class:`~gs_bench.runner.Runner` of ``suite``: its module's ``RUNNER``, or the
    module's hook functions wrapped by :meth:`SuiteRunner.from_module` (ValueError listing
    the known suites for an unknown one)."""
    import importlib

    if suite not in RUNNERS:
        raise ValueError(f"no runner for suite {suite!r}; known: {', '.join(sorted(RUNNERS))}")
    module = importlib.import_module(RUNNERS[suite])
    runner = vars(module).get("RUNNER")
    return runner if runner is not None else SuiteRunner.from_module(suite, module)


__all__ += ["load_runner"]
