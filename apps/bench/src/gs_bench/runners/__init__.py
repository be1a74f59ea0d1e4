"""Suite runners: an explicit table (no registration by import side effect).

Each runner module provides

* ``validate(config) -> dict[str, str]``: checks datasets, methods and data files before any
  job starts (raises :class:`gs_bench.suites.SuiteConfigError` with what to fix) and returns a
  fingerprint per dataset;
* ``run_job(job: dict) -> dict``: runs one job and returns its metrics;
* ``tables(records) -> list[gs_bench.report.Table]``: the paper-layout tables.
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
