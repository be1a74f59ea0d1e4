"""Run jobs in local worker processes or on a Ray cluster; store each result atomically.

Both executors call the same function, :func:`run_one`, with the same arguments, so a job
gives the same record whichever executor ran it (CPU runs are deterministic given the seed).

Local worker processes die with their parent: on Linux the kernel sends them ``SIGKILL`` when
the parent dies (``PR_SET_PDEATHSIG``), and on every platform a watchdog thread in each worker
exits it as soon as its parent process is gone, so a ``kill -9`` of ``gs-bench run`` leaves no
orphan computing or waiting. Workers ignore ``SIGINT`` (a Ctrl-C reaches the whole process
group): the parent stops them itself, so an interrupt gives one line, not one traceback per
worker.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import platform
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from importlib import metadata
from pathlib import Path
from typing import Any

from gs_bench.store import ResultsStore

__all__ = ["run_one", "execute", "environment", "package_versions", "EXECUTORS"]

EXECUTORS = ("local", "ray")
DISTRIBUTIONS = ("gs-splits", "gs-data", "gs-models", "gs-metrics", "gs-algos", "gs-bench")
log = logging.getLogger(__name__)


def package_versions() -> dict[str, str]:
    out: dict[str, str] = {}
    for dist in (*DISTRIBUTIONS, "torch", "torch-geometric", "numpy", "scipy"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


def _git_revision() -> str:
    try:
        here = Path(__file__).resolve().parent
        res = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=10
        )
        return res.stdout.strip() if res.returncode == 0 else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def environment() -> dict[str, Any]:
    """Versions, git revision, CPU and GPU of the machine (stored with every run)."""
    env: dict[str, Any] = {
        "versions": package_versions(),
        "git_revision": _git_revision(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
        "gpu": "none",
    }
    try:
        import torch

        if torch.cuda.is_available():
            env["gpu"] = torch.cuda.get_device_name(0)
    except ImportError:
        pass
    return env


def _load(path: str) -> Callable[..., dict[str, Any]]:
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


_WATCHDOG_PERIOD_S = 0.5


def _die_with_parent(parent_pid: int) -> None:
    """Initializer of a local worker process: exit as soon as ``parent_pid`` is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG = 1
        except (OSError, AttributeError):  # pragma: no cover - the watchdog still covers it
            pass
    if os.getppid() != parent_pid:  # the parent died before the death signal was armed
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(_WATCHDOG_PERIOD_S)
            if os.getppid() != parent_pid:
                os._exit(1)

    threading.Thread(target=watch, name="gs-bench-parent-watchdog", daemon=True).start()


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Terminate the workers of ``pool`` at once (their running jobs leave no record)."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    for proc in procs:
        proc.join(timeout=5)
        if proc.is_alive():  # pragma: no cover - ignored SIGTERM
            proc.kill()
    pool.shutdown(wait=False, cancel_futures=True)


def run_one(
    runner: str, job: dict[str, Any], log_path: str | None = None, workdir: str | None = None
) -> dict[str, Any]:
    """Run one job in this process and return its record (never raises: errors are recorded).

    ``workdir`` (the results folder) reaches the runner as ``job["workdir"]``, e.g. for
    files shared between jobs such as trained ensemble members; the record keeps ``job``
    as it was given."""
    handler = None
    root = logging.getLogger()
    if log_path:
        handler = logging.FileHandler(log_path, mode="w", encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
        root.setLevel(logging.INFO)
    start = time.perf_counter()
    jlog = logging.getLogger(__name__)
    jlog.info(
        "job %s (%s): %s, seed %s", job.get("key"), job.get("suite"),
        json.dumps(job.get("params"), sort_keys=True), job.get("seed"),
    )
    try:
        try:
            import torch

            torch.set_num_threads(1)
        except ImportError:  # pragma: no cover
            pass
        metrics = _load(runner)({**job, "workdir": workdir} if workdir else job)
        status, error = "ok", None
    except Exception as exc:  # noqa: BLE001 - a failing job must not stop the others
        logging.getLogger(__name__).exception("job %s failed", job.get("key"))
        metrics, status, error = {}, "error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"
    except BaseException:  # interrupted: no record will be written, say so
        jlog.warning("job %s interrupted after %.1f s; no record written", job.get("key"),
                     time.perf_counter() - start)
        raise
    else:
        jlog.info("job %s finished in %.1f s", job.get("key"), time.perf_counter() - start)
    finally:
        if handler is not None:
            root.removeHandler(handler)
            handler.close()
    return {
        "job": job,
        "status": status,
        "error": error,
        "metrics": metrics,
        "wall_time_s": round(time.perf_counter() - start, 3),
    }


def execute(
    jobs: Sequence[dict[str, Any]],
    runner: str,
    store: ResultsStore,
    *,
    executor: str = "local",
    workers: int = 1,
    address: str | None = None,
    on_result: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Run the jobs whose records are not yet in ``store``; returns the new records."""
    if executor not in EXECUTORS:
        raise ValueError(f"unknown executor {executor!r}; choose one of {', '.join(EXECUTORS)}")
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    todo = [j for j in jobs if not store.is_done(j["key"])]
    done: list[dict[str, Any]] = []

    def _finish(record: dict[str, Any]) -> None:
        store.put(record["job"]["key"], record)
        done.append(record)
        if on_result is not None:
            on_result(record)

    if not todo:
        return done
    if executor == "ray":
        _execute_ray(todo, runner, store, workers, address, _finish)
    elif workers == 1:
        for job in todo:
            _finish(run_one(runner, job, str(store.log_path(job["key"])), str(store.root)))
    else:
        import multiprocessing as mp

        ctx = mp.get_context("spawn")
        pool = ProcessPoolExecutor(
            max_workers=workers, mp_context=ctx, initializer=_die_with_parent, initargs=(os.getpid(),)
        )
        try:
            pending = {
                pool.submit(run_one, runner, job, str(store.log_path(job["key"])), str(store.root))
                for job in todo
            }
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    _finish(fut.result())
        except BaseException:  # interrupt or error: stop the workers now, keep what finished
            _stop_pool(pool)
            raise
        pool.shutdown(wait=True)
    return done


def _execute_ray(todo, runner, store, workers, address, finish) -> None:
    try:
        import ray
    except ImportError as exc:
        raise RuntimeError(
            "the ray executor needs Ray: pip install 'gs-bench[ray]'"
        ) from exc
    started_here = False
    if not ray.is_initialized():
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(
                num_cpus=workers,
                include_dashboard=False,
                log_to_driver=False,
                _node_ip_address="127.0.0.1",
            )
        started_here = True
    try:
        remote = ray.remote(num_cpus=1)(run_one)
        refs = {
            remote.remote(runner, job, str(store.log_path(job["key"])), str(store.root)): job
            for job in todo
        }
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                finish(ray.get(ref))
    finally:
        if started_here:
            ray.shutdown()
