"""``gs-bench run``: expand a suite, validate it, run the missing jobs, write the report."""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from gs_bench.executors import DEFAULT_RETRIES, NodeCheck, environment, execute
from gs_bench.preflight import check_suite, format_problems, plan_jobs
from gs_bench.report import build_report
from gs_bench.runners import RUNNERS, load_runner
from gs_bench.store import ResultsStore, RunLock, atomic_write_text
from gs_bench.suites import SuiteConfig, SuiteConfigError, job_resources, load_suite

__all__ = ["run_suite", "plan_jobs", "print_quarantine", "print_failures", "warn_other_settings",
           "print_skipped"]
log = logging.getLogger(__name__)


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
    device: str = "auto",
    device_in_key: bool = False,
    threads: int | None = None,
    retries: int = DEFAULT_RETRIES,
    verbose: bool = False,
) -> int:
    """Run ``suite`` with ``profile`` into ``out``; returns a process exit code (1 when a job
    failed: the failures are listed at the end, and running again retries only them).

    ``out`` is locked for the whole run (:class:`gs_bench.store.RunLock`): a second concurrent
    run on it raises :class:`gs_bench.store.LockedError`. ``dry_run`` validates and plans only.
    ``settings`` override the suite's settings (e.g. ``{"split_source": "authors"}``).
    ``device`` (``"auto"``, ``"cpu"``, ``"cuda"``, ``"cuda:N"``) is where every job trains;
    it is stored in each record and does not change the job keys unless ``device_in_key``.
    ``threads``: torch threads per job (default: cores / workers; on Ray the job's
    ``num_cpus``). ``retries``: times a job whose worker process died is started again.
    A failing job prints one line whatever ``workers``; ``verbose`` adds its traceback (which
    is always in its log file).
    """
    from gs_algos.device_names import check_device_name  # the spelling: no torch import

    check_device_name(str(device), "--device")
    config = _configure(suite, profile, axes=axes, seeds=seeds, settings=settings)
    pre, env = _preflight(config, device=device, device_in_key=device_in_key, executor=executor,
                          dry_run=dry_run)
    jobs = pre.jobs
    if dry_run:
        unchecked = (f"; the Ray cluster at {address} was not contacted (a dry run checks the suite "
                     "and this machine's data only)") if executor == "ray" and address else ""
        print(f"{pre.summary()}; the suite is valid (dry run, nothing started){unchecked}",
              file=sys.stderr)
        return 0
    if executor == "ray":  # before --out is created: a missing Ray leaves nothing behind
        from gs_bench.optional import require

        require("ray", "--executor ray")
    if executor == "ray" and address:  # an unreachable head: one line now, nothing written
        from gs_bench.executors import check_reachable

        check_reachable(address)
    store = ResultsStore(out)
    store.root.mkdir(parents=True, exist_ok=True)
    with RunLock(store.root):
        return _run_locked(config, jobs, env, store, executor=executor, address=address,
                           workers=workers, progress=progress, report_format=report_format,
                           device=device, threads=threads, retries=retries, verbose=verbose)


def _configure(suite: str, profile: str, *, axes: dict[str, list[str]] | None, seeds: int | None,
               settings: dict[str, Any] | None) -> SuiteConfig:
    """The suite of ``run_suite`` with the caller's axes (``method`` read as the suite's own
    axis where the runner names it otherwise), seeds and settings; a note of the suite's (a
    value listed twice) goes to stderr."""
    config = load_suite(suite, profile)
    axes = dict(axes or {})
    if "method" in axes and "method" not in config.grid and "model" in config.grid:
        axes["model"] = axes.pop("method")  # the edgewise suite compares models, not methods
    for short, axis in load_runner(config.suite).axis_aliases.items():
        if short in axes and short not in config.grid:  # e.g. gess: --methods -> algorithm
            axes[axis] = axes.pop(short)
    config = config.with_overrides(seeds=seeds, axes=axes, settings=settings)
    for note in config.notes:  # a value listed twice: planned once, and the user hears it
        print(f"gs-bench: {note}", file=sys.stderr)
    return config


def _preflight(config: SuiteConfig, *, device: str, device_in_key: bool, executor: str,
               dry_run: bool) -> tuple[Any, dict[str, Any]]:
    """:func:`gs_bench.preflight.check_suite` and the run's environment: every job that cannot
    succeed, before any starts (listed, then :class:`SuiteConfigError`); with the local executor
    the device resolved once on this machine; a plan without jobs is a :class:`SuiteConfigError`
    too."""
    pre = check_suite(config, key_extra={"device": device} if device_in_key else None)
    if pre.problems:
        print(format_problems(pre.problems), file=sys.stdout if dry_run else sys.stderr)
        raise SuiteConfigError(f"{pre.summary()}; nothing started (problems listed above)")
    if executor == "local":  # here, the driver is the machine: fail now, not once per job (after
        # the names and the data, so that a misspelt method is refused before torch loads)
        from gs_algos.device import resolve_device

        resolve_device(device, "--device")
    env = pre.env if pre.env is not None else environment()
    if not pre.jobs:  # before issue 34: exit 0 and "no results ... run `gs-bench run ...` first"
        why = (f"the [[exclude]] rules leave out all {pre.excluded} grid point(s)" if pre.excluded
               else "no grid point applies to this suite's runner")
        raise SuiteConfigError(f"{pre.summary()}: no jobs remain ({why}); change the suite's "
                               "[grid], [[exclude]] or the --datasets / --methods given")
    return pre, env


def other_sources(records: Iterable[dict[str, Any]], sources: Mapping[str, str]) -> dict[str, int]:
    """``{distribution: number of records}`` of ``records`` whose ``worker.sources`` (the
    source fingerprint of the code that computed them) differs from ``sources`` for that
    distribution. Records written before gs-bench stored fingerprints count nowhere."""
    counts: dict[str, int] = {}
    for rec in records:
        theirs = (rec.get("worker") or {}).get("sources") or {}
        for dist, fp in theirs.items():
            if dist in sources and fp != sources[dist]:
                counts[dist] = counts.get(dist, 0) + 1
    return counts


def warn_other_sources(store: ResultsStore, suite: str, sources: Mapping[str, str]) -> int:
    """Warn (stderr) when records of ``suite`` in ``store`` were computed by other source code
    than the running one. Job keys hold settings, data and package versions, not the source,
    so such records count as done and are kept; the warning names the packages whose source
    differs so that a change that alters results is not mixed in unseen. Returns the number of
    such records."""
    records = [r for r in store.records() if r["job"].get("suite") == suite]
    per_record = [other_sources([r], sources) for r in records]
    differ = sum(1 for d in per_record if d)
    edited = sum(1 for r in records if (r.get("worker") or {}).get("sources_edited"))
    if edited:
        print(f"warning: {edited} of the {len(records)} {suite} record(s) in {store.root} were "
              "computed by a worker process during which our packages' files changed on disk "
              "(worker.sources_edited): their code may be older than their fingerprint says, or "
              "a mix.", file=sys.stderr)
    if differ:
        per = {d: sum(x.get(d, 0) for x in per_record) for d in sorted(set().union(*per_record))}
        names = ", ".join(f"{d} ({n})" for d, n in sorted(per.items()))
        print(f"warning: {differ} of the {len(records)} {suite} record(s) in {store.root} "
              f"were computed by other source code than this run's (records per package whose "
              f"source differs: {names}); they count as done, since job keys hold settings, data "
              "and package versions but not the source. If the change alters results, run into "
              "a fresh --out.", file=sys.stderr)
    return differ


def warn_other_settings(store: ResultsStore, config: SuiteConfig, jobs: list[dict[str, Any]]) -> int:
    """Warn (stderr) when ``store`` already holds records of ``config.suite`` computed with
    other settings, or of the same grid point and seed under another key (other package
    versions or data, ``--device-in-key``): the report keeps them apart (a table each), but
    the folder then mixes runs. Returns the number of such records."""
    from gs_bench.report import describe_variants, record_variant
    from gs_bench.runners import load_runner

    planned = {j["key"] for j in jobs}
    points = {(json.dumps(j["params"], sort_keys=True), j["seed"]) for j in jobs}
    # a sweep setting (gess: train_events) is a point of one curve, not another run
    sweep = load_runner(config.suite).sweep_settings
    this_run = {"job": {"suite": config.suite, "settings": config.settings}}
    ours, ours_full = record_variant(this_run, sweep), record_variant(this_run)
    other_settings, other_keys = [], 0
    for rec in store.records():
        if rec["job"].get("suite") != config.suite or rec["key"] in planned:
            continue
        if record_variant(rec, sweep) != ours:
            other_settings.append(rec)
        elif sweep and record_variant(rec) != ours_full:
            continue  # another point of the sweep (e.g. gess's learning curve): expected here
        elif (json.dumps(rec["job"]["params"], sort_keys=True), rec["job"].get("seed")) in points:
            other_keys += 1
    if other_settings:
        others = list(dict.fromkeys(record_variant(r) for r in other_settings))
        diff = describe_variants([ours, *others])
        print(f"warning: {store.root} already holds {len(other_settings)} {config.suite} record(s) "
              f"of other settings ({'; '.join(diff[1:]) or 'other settings'}; this run: "
              f"{diff[0] or 'the defaults'}). The report shows each setting in tables of its own; "
              "use another --out to keep runs apart.", file=sys.stderr)
    if other_keys:
        print(f"warning: {store.root} already holds {other_keys} record(s) of the same grid points "
              "and seeds under other job keys (other package versions, data files or "
              "--device-in-key); the report shows them in tables of their own.", file=sys.stderr)
    return len(other_settings) + other_keys


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


def print_skipped(store: ResultsStore) -> None:
    """One stderr line saying that files which are not gs records were left in place because
    ``store`` is not a gs run folder (:meth:`ResultsStore.is_run_folder`), then one per file."""
    if not store.skipped:
        return
    print(f"{store.root} is not a gs run folder (no run-<suite>.json): skipped "
          f"{len(store.skipped)} file(s) in {store.results_dir} that are not gs records and left "
          "them where they are (nothing moved to quarantine):", file=sys.stderr)
    for p, reason in store.skipped:
        print(f"  {p.name}: {reason}", file=sys.stderr)


def print_failures(failed: list[dict[str, Any]], total: int, store: ResultsStore) -> None:
    """The end-of-run summary of the jobs that failed in this run (stderr)."""
    if not failed:
        return
    print(f"{len(failed)} of {total} job(s) failed; their records hold the error "
          f"({store.results_dir}/<key>.json), their logs are in {store.logs_dir}. Run the same "
          "command again to retry only these:", file=sys.stderr)
    for rec in failed:
        job = rec["job"]
        params = ", ".join(f"{k}={v}" for k, v in job.get("params", {}).items())
        host = (rec.get("worker") or {}).get("host") or "unknown host"
        first = str(rec.get("error") or "").splitlines()[0] if rec.get("error") else "no error text"
        print(f"  {job['key']} {job.get('suite')}[{params}, seed={job.get('seed')}] on {host}: "
              f"{first}", file=sys.stderr)


def _run_locked(config, jobs, env, store, *, executor, address, workers, progress, report_format,
                device="auto", threads=None, retries=DEFAULT_RETRIES, verbose=False) -> int:
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
                "executor": executor,
                "workers": workers,
                "device": device,
                "resources": config.resources,
                # the driver's machine; each record's "worker" says where that job ran
                "environment": env,
            },
            indent=2,
            default=str,
        ),
    )
    warn_other_settings(store, config, jobs)
    warn_other_sources(store, config.suite, env.get("sources") or {})
    todo = [j for j in jobs if not store.is_done(j["key"])]
    print(
        f"{config.suite} ({config.profile_label}): {len(jobs)} jobs, {len(jobs) - len(todo)} already done, "
        f"{len(todo)} to run with {executor} x{workers} (device {device}) -> {store.root}",
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
            lines = str(record["error"] or "no error text").splitlines() or ["no error text"]
            print(f"job {record['job']['key']} failed: {lines[0]} (log: "
                  f"{store.logs_dir / (record['job']['key'] + '.log')})", file=sys.stderr)
            if verbose and len(lines) > 1:
                print("\n".join("    " + line for line in lines[1:]), file=sys.stderr)

    check = NodeCheck(RUNNERS[config.suite], config, env.get("data_fingerprints", {}),
                      env["versions"])
    resources = {j["key"]: job_resources(config.resources, j["params"]) for j in todo}
    try:
        new = execute(
            jobs, RUNNERS[config.suite] + ":run_job", store, executor=executor, workers=workers,
            address=address, on_result=on_result, device=device, threads=threads,
            retries=retries, resources=resources, check=check,
        )
    finally:
        if bar is not None:
            bar.close()
    failed = [r for r in new if r["status"] != "ok"]
    if report_format:
        try:
            path = build_report(store.root, report_format)
            print(f"report: {path}", file=sys.stderr)
        except ValueError as exc:  # e.g. every job failed: nothing to tabulate
            print(f"no report: {exc}", file=sys.stderr)
    print_quarantine(store)
    print_failures(failed, len(new), store)
    return 1 if failed else 0
