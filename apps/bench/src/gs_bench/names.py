"""Names the CLI offers as choices, in a module that imports nothing heavy (numpy, torch), so
that ``gs-bench --help`` and argument errors answer at once. Each is checked against the
module that uses it (``tests/test_cli.py``)."""

from __future__ import annotations

__all__ = ["REPORT_FORMATS"]

#: the report formats of :func:`gs_bench.report.build_report` (``gs_bench.report.FORMATS``)
REPORT_FORMATS = ("md", "html", "latex")
