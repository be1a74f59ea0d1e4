"""Names the CLI offers as choices, in a module that imports nothing heavy (numpy, torch), so
that ``gs-bench --help`` and argument errors answer at once. Each is checked against the
module that uses it (``tests/test_cli.py``)."""

from __future__ import annotations

__all__ = ["REPORT_FORMATS", "SPLIT_SOURCES", "ROBUSTNESS_FRAMEWORKS"]

#: the report formats of :func:`gs_bench.report.build_report` (``gs_bench.report.FORMATS``)
REPORT_FORMATS = ("md", "html", "latex")
#: structural-shifts ``split_source`` (``gs-bench run --split-source``): gs-splits (split seed
#: 0), the authors' published 50:50 masks, or the authors' masks where they publish one (50:50)
#: and gs-splits at the other ratios; the suite's ``Settings`` reads them from here
SPLIT_SOURCES = ("seeded", "authors", "authors-where-published")
#: structural-shifts ``robustness_framework`` (``--robustness-framework``): how DANN / CORAL /
#: Mixup / EERM are trained, "paper" (appendix F and section 3.1, like every other method) or
#: "good" (GOOD's GCN and GOODCora training, which the paper names)
ROBUSTNESS_FRAMEWORKS = ("paper", "good")
