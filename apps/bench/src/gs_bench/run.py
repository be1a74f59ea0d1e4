"""``gs-bench run``: expand a suite, validate it, run the missing jobs, write the report."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

from gs_bench.executors import environment, execute
from gs_bench.report import build_report
from gs_bench.runners import RUNNERS, load_runner
from gs_bench.store import ResultsStore, RunLock, atomic_write_text
from gs_bench.suites import SuiteConfig, SuiteConfigError, expand_jobs, load_suite

__all__ = ["run_suite", "plan_jobs", "print_quarantine"]
log = logging.getLogger(__name__)


def plan_jobs(config: SuiteConfig) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Validate ``config`` (before any job starts) and expand it into job dicts."""
    runner = load_runner(config.suite)
    fingerprints = runner.validate(config)
    env = environment()
    seeds = config.seeds
    max_runs = getattr(runner, "max_runs", None)
    if max_runs is not None:  # some grid points run more often than `seeds` (e.g. GPN: 5)
        config = config.with_overrides(seeds=max(config.seeds, max_runs(config.settings, config.seeds)))
    jobs = expand_jobs(config, versions=env["versions"], fingerprints=fingerprints)
    applicable = getattr(runner, "applicable", None)
    if applicable is not None:  # grid points that make no sense (e.g. a domain shift of Cora)
        jobs = [j for j in jobs if applicable(j.params, j.settings)]
    runs = getattr(runner, "runs", None)
    if runs is not None:  # methods with their own number of runs (e.g. one 5-member ensemble)
        jobs = [j for j in jobs if j.seed < runs(j.params, j.settings, seeds)]
    out = [j.as_dict() for j in jobs]
    order = getattr(runner, "order_jobs", None)
    if order is not None:  # e.g. single models before the ensembles that reuse them
        out = order(out)
    return out, env


def run_suite(
    suite: str,
    *,
    profile: str = "demo",
    out: str | Path,
    axes: dict[str, list[str]] | None = None,
    seeds: int | None = None,
    executor: str = "local",
    address: str | None = None,
    workers: int = 1,
    progress: bool = True,
    report_format: str | None = "md",
    dry_run: bool = False,
    settings: dict[str, Any] | None = None,
) -> int:
    """Run ``suite`` with ``profile`` into ``out``; returns a process exit code.

    ``out`` is locked for the whole run (:class:`gs_bench.store.RunLock`): a second concurrent
    run on it raises :class:`gs_bench.store.LockedError`. ``dry_run`` validates and plans only.
    ``settings`` override the suite's settings (e.g. ``{"split_source": "authors"}``).
    """
    config = load_suite(suite, profile)
    axes = dict(axes or {})
    if "method" in axes and "method" not in config.grid and "model" in config.grid:
        axes["model"] = axes.pop("method")  # the edgewise suite compares models, not methods
    for short, axis in getattr(load_runner(config.suite), "AXIS_ALIASES", {}).items():
        if short in axes and short not in config.grid:  # e.g. gess: --methods -> algorithm
            axes[axis] = axes.pop(short)
    config = config.with_overrides(seeds=seeds, axes=axes, settings=settings)
    from gs_bench.preflight import check_suite, format_problems

    pre = check_suite(config)  # every job that cannot succeed, before any starts
    if pre.problems:
        print(format_problems(pre.problems), file=sys.stdout if dry_run else sys.stderr)
        raise SuiteConfigError(f"{pre.summary()}; nothing started (problems listed above)")
    jobs, env = pre.jobs, environment()
    if dry_run:
        print(f"{pre.summary()}; the suite is valid (dry run, nothing started)", file=sys.stderr)
        return 0
    store = ResultsStore(out)
    store.root.mkdir(parents=True, exist_ok=True)
    with RunLock(store.root):
        return _run_locked(config, jobs, env, store, executor=executor, address=address,
                           workers=workers, progress=progress, report_format=report_format)


def print_quarantine(store: ResultsStore) -> None:
    """One stderr line per record in quarantine (moved there by this run or an earlier one)."""
    files = store.quarantine_files()
    if not files:
        return
    reasons = {p: r for p, r in store.quarantined}
    print(f"skipped {len(files)} unreadable record(s), kept in {store.quarantine_dir} "
          "(their jobs run again on the next `gs-bench run`; delete the files once checked):",
          file=sys.stderr)
    for p in files:
        print(f"  {p.name}" + (f": {reasons[p]}" if p in reasons else ""), file=sys.stderr)


def _run_locked(config, jobs, env, store, *, executor, address, workers, progress, report_format) -> int:
    atomic_write_text(
        store.root / f"run-{config.suite}.json",
        json.dumps(
            {
                "suite": config.suite,
                "profile": config.profile,
                "source": config.source,
                "grid": config.grid,
                "settings": config.settings,
                "seeds": config.seeds,
                "jobs": len(jobs),
                "environment": env,
            },
            indent=2,
            default=str,
        ),
    )
    todo = [j for j in jobs if not store.is_done(j["key"])]
    print(
        f"{config.suite} ({config.profile}): {len(jobs)} jobs, {len(jobs) - len(todo)} already done, "
        f"{len(todo)} to run with {executor} x{workers} -> {store.root}",
        file=sys.stderr,
    )
    bar = None
    if progress and todo:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(todo), desc=config.suite, unit="job", dynamic_ncols=True)

    def on_result(record: dict[str, Any]) -> None:
        if bar is not None:
            bar.set_postfix_str(f"last: {record['status']} {record['wall_time_s']:.1f}s")
            bar.update(1)
        if record["status"] != "ok":
            print(f"job {record['job']['key']} failed: {record['error'].splitlines()[0]}", file=sys.stderr)

    try:
        new = execute(
            jobs, RUNNERS[config.suite] + ":run_job", store, executor=executor, workers=workers,
            address=address, on_result=on_result,
        )
    finally:
        if bar is not None:
            bar.close()
    failed = [r for r in new if r["status"] != "ok"]
    if report_format:
        path = build_report(store.root, report_format)
        print(f"report: {path}", file=sys.stderr)
    print_quarantine(store)
    return 1 if failed else 0
