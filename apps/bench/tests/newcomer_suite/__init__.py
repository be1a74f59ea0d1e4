"""A newcomer's toy suite ``coin``, written as the docs say (docs/architecture.md, "Add a
suite"): one package under ``gs_bench/runners/`` and one line in ``RUNNERS``. The test
``test_suite_packages.py::test_a_newcomer_adds_a_suite_with_one_package_and_one_line`` puts
this folder under ``gs_bench/runners/`` for the duration of the test."""

from gs_bench.runner import SuiteRunner

from .job import run_job
from .report import tables
from .spec import Grid, Settings, validate

RUNNER = SuiteRunner(name="coin", module=__name__, Grid=Grid, Settings=Settings,
                     validate=validate, run_job=run_job, tables=tables)
