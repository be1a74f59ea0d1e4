"""A toy suite runner for the robustness tests (no data, no torch): each job optionally
writes ``<pid_dir>/<pid>`` when it starts, sleeps ``sleep_s`` seconds, and returns
``value = n * 10 + seed``. Registered in ``gs_bench.runners.RUNNERS`` by the tests only.

For the failure and cluster tests (issue 18): the job with ``n == fail_n`` raises while the
file ``fail_while`` exists; with ``trace_dir`` every start leaves ``start.<key>.<pid>.<ns>``
there and a running job holds ``running.<key>.<pid>``, so a test can count how often each
job started and how many ran at once (the ``concurrent`` metric: running jobs seen at start,
itself included)."""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gs_bench.report import Table
from gs_bench.suites import Job


@dataclass(frozen=True)
class Grid:
    """One grid point (written as a list, as runners did before issue 57: still accepted)."""

    n: list[int]


@dataclass(frozen=True)
class Train:
    """A nested settings table (``[settings.train]``), to test key paths through tables."""

    lr: float = 0.01
    max_epochs: int = 10


@dataclass(frozen=True)
class Settings:
    sleep_s: float = 0.0
    pid_dir: str | None = None
    label: str = "toy"
    train: Train = field(default_factory=Train)
    fail_n: int = -1
    fail_while: str | None = None
    trace_dir: str | None = None
    require_file: str | None = None


def validate(config) -> dict[str, str]:
    """``require_file`` (a path, relative to the working directory) must exist, as a data file
    of a real suite: a relative path that exists for the driver is missing on a worker node
    started elsewhere."""
    from gs_bench.suites import SuiteConfigError

    req = config.settings.get("require_file")
    if req and not Path(req).is_file():
        raise SuiteConfigError(f"required file {Path(req).resolve()} is missing")
    return {}


def run_job(job: Job) -> dict[str, Any]:
    settings, n = job.settings, job.params.n  # the dict of the job key; the grid point's n
    # a training loop's per-epoch line: it belongs in the job's log file, not on the console
    logging.getLogger(__name__).info("toy epoch 1 of job n=%s", n)
    if settings.get("pid_dir"):
        Path(settings["pid_dir"], str(os.getpid())).write_text(job.key)
    running = None
    concurrent = 1
    if settings.get("trace_dir"):
        trace = Path(settings["trace_dir"])
        (trace / f"start.{job.key}.{os.getpid()}.{time.time_ns()}").write_text(str(job.device))
        running = trace / f"running.{job.key}.{os.getpid()}"
        running.write_text("")
        concurrent = len(list(trace.glob("running.*")))
    try:
        if n == settings.get("fail_n", -1) and Path(settings.get("fail_while") or "/nonexistent").exists():
            raise RuntimeError(f"toy job n={n} fails while {settings['fail_while']} exists")
        end = time.monotonic() + float(settings.get("sleep_s", 0.0))
        while time.monotonic() < end:
            time.sleep(0.05)
    finally:
        if running is not None:
            running.unlink(missing_ok=True)
    return {"value": n * 10 + job.seed, "concurrent": concurrent, "cwd": os.getcwd()}


def tables(records) -> list[Table]:
    rows = [[str(r["job"]["params"]["n"]), str(r["job"]["seed"]), str(r["metrics"]["value"])]
            for r in sorted(records, key=lambda r: (r["job"]["params"]["n"], r["job"]["seed"]))
            if r.get("status") == "ok"]
    from gs_bench.report import fmt_mean_std, group_records

    groups = group_records(records, ("n",))
    means = [[str(n), fmt_mean_std([r["metrics"]["value"] for r in groups[(n,)]], scale=1.0)]
             for (n,) in sorted(groups)]
    return [Table("toy values", ["n", "seed", "value"], rows),
            Table("toy mean over seeds", ["n", "value"], means)]
