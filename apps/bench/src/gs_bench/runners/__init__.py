"""Suite runners: an explicit table (no registration by import side effect).

Each runner module provides

* ``validate(config) -> dict[str, str]``: checks datasets, methods and data files before any
  job starts (raises :class:`gs_bench.suites.SuiteConfigError` with what to fix) and returns a
  fingerprint per dataset;
* ``run_job(job: dict) -> dict``: runs one job and returns its metrics;
* ``tables(records) -> list[gs_bench.report.Table]``: the paper-layout tables.

Optional: ``figures(records, report_dir)``, ``paragraphs(records) -> list[str]`` (text put
before the suite's tables, e.g. the training protocol), ``notes(records, run_dir) ->
list[str]`` (text put after the suite's figures, e.g. what could not be drawn), ``applicable(params) -> bool``
(drop grid points that make no sense) and ``runs(params, settings, seeds) -> int`` (fewer
runs for some grid points, e.g. one 5-member ensemble against 3 runs of a single model),
``max_runs(settings, seeds) -> int`` (plan up to that many runs when ``runs`` gives some
grid points more than ``seeds``), ``order_jobs(jobs) -> jobs`` (the order the executor starts
them in). ``run_job`` finds the
results folder in ``job["workdir"]`` (for files shared between jobs), when the executor
gives one.
Report sections follow the order of :data:`RUNNERS` (the papers' order). ``tables``,
``figures``, ``paragraphs`` and ``notes`` draw from the records (and files the jobs wrote into
the run folder) only: ``gs-bench report`` never loads a dataset or computes a split, so it works
on a finished run folder with the data root removed.
"""

RUNNERS: dict[str, str] = {
    "structural-shifts": "gs_bench.runners.structural",
    "edgewise": "gs_bench.runners.edgewise",
    "lebed": "gs_bench.runners.lebed",
    "gess": "gs_bench.runners.gess",
}

__all__ = ["RUNNERS"]


def load_runner(suite: str):
    """Import the runner module of ``suite`` (ValueError listing the known suites otherwise)."""
    import importlib

    if suite not in RUNNERS:
        raise ValueError(f"no runner for suite {suite!r}; known: {', '.join(sorted(RUNNERS))}")
    return importlib.import_module(RUNNERS[suite])


__all__ += ["load_runner"]
