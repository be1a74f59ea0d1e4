"""Run jobs in local worker processes or on a Ray cluster; store each result atomically.

Both executors call the same function, :func:`run_one`, with the same arguments, so a job
gives the same record whichever executor ran it (CPU runs are deterministic given the seed
and the number of torch threads). Both behave the same when a job fails:

* an exception inside a job is caught by :func:`run_one` and recorded (``status: "error"``,
  the traceback in ``error``, the host in ``worker``); the other jobs go on;
* a worker process that dies (``kill -9``, out of memory, a lost Ray node) has its job run
  again up to ``retries`` times (Ray: the task's ``max_retries``; local: a new process
  pool); after that the job is recorded as failed with the reason, and the run goes on;
* records and logs always reach the driver, which writes them under ``--out``: on Ray a
  task returns its record with its log text, so no worker ever writes to a driver path.

A failed job's record is kept, and the next ``gs-bench run`` on the same folder runs only
the failed (and missing) jobs again.

Ray (:func:`_execute_ray`): each job asks for the ``num_cpus`` / ``num_gpus`` of its
suite's ``[resources]`` (:func:`gs_bench.suites.job_resources`); at most ``workers`` jobs
are in flight, with a local Ray or an ``--address``; a ``runtime_env`` carries the data
variables (:data:`DATA_ENV_VARS`); before any job starts, one probe task per node checks
the suite's data there (the runner's ``validate``), the package versions and whether the
node sees the output folder (:class:`NodeCheck`).

Local worker processes die with their parent: on Linux the kernel sends them ``SIGKILL`` when
the parent dies (``PR_SET_PDEATHSIG``), and on every platform a watchdog thread in each worker
exits it as soon as its parent process is gone, so a ``kill -9`` of ``gs-bench run`` leaves no
orphan computing or waiting. Workers ignore ``SIGINT`` (a Ctrl-C reaches the whole process
group): the parent stops them itself, so an interrupt gives one line, not one traceback per
worker.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import io
import json
import logging
import math
import os
import platform
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from gs_bench.store import ResultsStore, atomic_write_text
from gs_bench.suites import Job

__all__ = [
    "run_one", "execute", "environment", "package_versions", "source_fingerprints", "sources_edited",
    "tree_hash", "worker_info", "default_threads",
    "NodeCheck", "ClusterCheckError", "EXECUTORS", "DATA_ENV_VARS",
]

EXECUTORS = ("local", "ray")
#: environment variables that locate data and caches; the Ray executor passes the driver's
#: values (as absolute paths) to every task in its ``runtime_env``
DATA_ENV_VARS = ("GS_DATA_ROOT", "GS_SHARED_DATA", "GS_CACHE_DIR", "XDG_CACHE_HOME")
#: times a job whose worker process died is started again (``--retries``)
DEFAULT_RETRIES = 2
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


#: the import package of each of our distributions, whose source :func:`source_fingerprints` hashes
SOURCE_PACKAGES = {"gs-splits": "gs_splits", "gs-data": "gs_data", "gs-models": "gs_models",
                   "gs-metrics": "gs_metrics", "gs-algos": "gs_algos", "gs-bench": "gs_bench"}
#: the files of a package that hold its behaviour (code, shipped suite and preset files)
SOURCE_SUFFIXES = (".py", ".toml", ".json")


def tree_hash(root: Path, suffixes: tuple[str, ...] = SOURCE_SUFFIXES) -> str:
    """12 hex digits of :func:`gs_data.fingerprint` over the relative path and bytes of every
    file under ``root`` whose name ends in one of ``suffixes`` (sorted, ``__pycache__`` left
    out): the same for the same files wherever they lie, different as soon as one changes,
    appears or goes."""
    import numpy as np

    from gs_data import fingerprint

    files = [p for p in sorted(root.rglob("*"))
             if p.is_file() and p.name.endswith(suffixes)
             and "__pycache__" not in p.relative_to(root).parts]
    return fingerprint([(p.relative_to(root).as_posix(), np.frombuffer(p.read_bytes(), dtype=np.uint8))
                        for p in files], length=12)


def _source_fingerprints_on_disk() -> dict[str, str]:
    out: dict[str, str] = {}
    for dist, package in SOURCE_PACKAGES.items():
        spec = importlib.util.find_spec(package)
        locations = list(spec.submodule_search_locations or []) if spec else []
        out[dist] = tree_hash(Path(locations[0])) if locations else "not installed"
    return out


@functools.cache
def source_fingerprints() -> dict[str, str]:
    """``{distribution: tree_hash of its installed package}`` for our six packages (``"not
    installed"`` for one that is not), taken once per process, at its first call (a local worker
    calls it when it starts). Stored in every record's ``worker`` and in the run file: the job
    keys hold the settings, data and package *versions*, not the source, so a run folder resumed
    after a code change keeps its records, and these say which code wrote each one (``gs-bench
    run`` warns on resume when they differ from the running code's). A process that lives
    through an edit of the files is caught by :func:`sources_edited`."""
    return _source_fingerprints_on_disk()


def sources_edited() -> list[str]:
    """The distributions whose files on disk differ now from :func:`source_fingerprints` (taken
    when this process started): Python imports modules lazily, so a long-lived worker that lives
    through an edit may run the older code, the newer (modules first imported after the edit)
    or a mix, and its fingerprint alone would not say so. Stored as ``worker.sources_edited``
    when not empty; the report and ``gs-bench run``'s resume warning count such records."""
    start = source_fingerprints()
    now = _source_fingerprints_on_disk()
    return sorted(d for d in start if now.get(d) != start[d])


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
        "sources": source_fingerprints(),
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


#: Set by ``gs-bench`` without ``--verbose``; inherited by the local workers, which then keep
#: third-party deprecation warnings off stderr too (:func:`quiet_third_party_warnings`).
QUIET_WARNINGS_ENV = "GS_BENCH_QUIET_WARNINGS"


def quiet_third_party_warnings() -> None:
    """Keep DeprecationWarning, PendingDeprecationWarning and FutureWarning raised outside our
    packages off stderr (issue 56: every run on torch 2.14 printed a 2-line ``torch.jit.script``
    FutureWarning from PyG's import). Warnings from ``gs_*`` modules and every other category
    still show; ``gs-bench -v`` shows them all."""
    import warnings

    for category in (DeprecationWarning, PendingDeprecationWarning, FutureWarning):
        warnings.filterwarnings("ignore", category=category, module=r"(?!gs_)")


def _die_with_parent(parent_pid: int) -> None:
    """Initializer of a local worker process: exit as soon as ``parent_pid`` is gone; take the
    source fingerprints now, before a job imports anything (:func:`sources_edited`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if os.environ.get(QUIET_WARNINGS_ENV) == "1":
        quiet_third_party_warnings()
    source_fingerprints()
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



def available_cores() -> int:
    """CPU cores this process may use (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - macOS, Windows
        return max(1, os.cpu_count() or 1)


def default_threads(workers: int) -> int:
    """Torch threads of one job when ``--threads`` is not given: this machine's cores divided
    by the number of parallel jobs, at least 1."""
    return max(1, available_cores() // max(1, int(workers)))


def worker_info(device: str | None = None, threads: int | None = None) -> dict[str, Any]:
    """Who ran a job: host, process, Python, package versions, device and torch threads (stored
    in every record as ``worker``; on a cluster these are the worker node's, not the driver's)."""
    info: dict[str, Any] = {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "versions": package_versions(),
        "sources": source_fingerprints(),
        "device": device,
        "threads": threads,
    }
    edited = sources_edited()
    if edited:
        info["sources_edited"] = edited
    if device and device.startswith("cuda"):
        try:
            import torch

            info["gpu"] = torch.cuda.get_device_name(torch.device(device))
        except Exception:  # noqa: BLE001 - a name is a nicety
            info["gpu"] = "unknown"
    return info


def _log_handler(log_path: str | None, capture: bool) -> tuple[logging.Handler | None, io.StringIO | None]:
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    if capture:
        buf = io.StringIO()
        handler: logging.Handler = logging.StreamHandler(buf)
    elif log_path:
        buf, handler = None, logging.FileHandler(log_path, mode="w", encoding="utf-8")
    else:
        return None, None
    handler.setFormatter(fmt)
    return handler, buf


def run_one(
    runner: str,
    job: Job | dict[str, Any],
    log_path: str | None = None,
    workdir: str | None = None,
    *,
    device: str = "auto",
    threads: int | None = None,
    capture_log: bool = False,
) -> dict[str, Any]:
    """Run one job in this process and return its record (never raises: errors are recorded).

    The runner ``"<module>:run_job"`` is given the typed :class:`~gs_bench.suites.Job`: its grid
    point built into the runner's ``Grid``, ``workdir`` (the results folder, e.g. for files
    shared between jobs such as trained ensemble members) as ``job.workdir``, and ``device``
    (``"auto"``, ``"cpu"``, ``"cuda"``, ``"cuda:N"``), resolved here, on the machine that runs
    the job, as ``job.device``: a :class:`torch.device` (e.g. ``cuda:0``) that the runner passes
    down unchanged (the job's one resolution; the record stores its name). The record keeps
    ``job`` as it was given (a :class:`~gs_bench.suites.Job` as :meth:`~gs_bench.suites.Job.as_dict`;
    neither device nor folder enters it or the job key) and stores the device used, the worker
    (:func:`worker_info`), ``wall_time_s`` and ``cpu_time_s`` (the process's CPU seconds over the
    job, all threads: what the job cost, whatever else ran beside it). ``threads``: torch
    threads of the job (default 1). With ``capture_log`` the job's log is returned in the record
    as ``log`` (text) instead of written to ``log_path``: the Ray executor's tasks hand it to the
    driver.
    """
    given = job.as_dict() if isinstance(job, Job) else job
    handler, buf = _log_handler(log_path, capture_log)
    start, cpu_start = time.perf_counter(), time.process_time()
    threads = int(threads) if threads else 1
    used = device
    with _job_log(handler):
        log.info("job %s (%s): %s, seed %s, on %s (device %s, %d torch thread(s))", given.get("key"),
                 given.get("suite"), json.dumps(given.get("params"), sort_keys=True), given.get("seed"),
                 socket.gethostname(), device, threads)
        try:
            resolved, used = _prepare_torch(device, threads)
            where = {"device": resolved, **({"workdir": Path(workdir)} if workdir else {})}
            metrics = _load(runner)(Job.of(job, _grid_of(runner), **where))
            status, error = "ok", None
        except Exception as exc:  # noqa: BLE001 - a failing job must not stop the others
            log.exception("job %s failed on %s", given.get("key"), socket.gethostname())
            metrics, status = {}, "error"
            error = (f"{type(exc).__name__}: {exc} [on host {socket.gethostname()}]\n"
                     f"{traceback.format_exc()}")
        except BaseException:  # interrupted: no record will be written, say so
            log.warning("job %s interrupted after %.1f s; no record written", given.get("key"),
                        time.perf_counter() - start)
            raise
        else:
            log.info("job %s finished in %.1f s", given.get("key"), time.perf_counter() - start)
    record = {
        "job": given,
        "status": status,
        "error": error,
        "metrics": metrics,
        "wall_time_s": round(time.perf_counter() - start, 3),
        # CPU seconds of this process (all its threads) over the job: unlike the wall time, not
        # inflated by other load or by a run that was paused (SIGSTOP) while the job ran
        "cpu_time_s": round(time.process_time() - cpu_start, 3),
        "device": used,
        "worker": worker_info(used, threads),
    }
    if buf is not None:
        record["log"] = buf.getvalue()
    return record


@contextlib.contextmanager
def _job_log(handler: logging.Handler | None) -> Iterator[None]:
    """The job's log (per-epoch lines, a failure's traceback) goes to ``handler`` only while the
    job runs, as in a worker process: the console is the same whatever --workers (issue 34); the
    driver prints one line per failure, and the traceback with -v. ``None``: logging as it is."""
    if handler is None:
        yield
        return
    root = logging.getLogger()
    console, level = list(root.handlers), root.level
    for h in console:
        root.removeHandler(h)
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield
    finally:
        root.removeHandler(handler)
        handler.close()
        for h in console:
            root.addHandler(h)
        root.setLevel(level)


def _prepare_torch(device: str, threads: int) -> tuple[Any, str]:
    """Set this process's torch threads and memory reuse, and resolve ``device``: ``(the
    torch.device, its name)``, the one place a job's device is resolved (the runner hands it to
    gs-algos, whose trainers take it as it is: gs_algos.as_device)."""
    try:
        import torch

        torch.set_num_threads(threads)
        from gs_models import keep_freed_memory

        # freed activations stay in the heap for the next step instead of being unmapped
        # and page-faulted again (gs_models.runtime; GS_KEEP_FREED_MEMORY=0 turns it off)
        keep_freed_memory()
        from gs_algos.device import resolve_device

        resolved: Any = resolve_device(device, "--device")
        return resolved, str(resolved)
    except ImportError:  # pragma: no cover - gs-bench always has torch and gs-algos
        return device, device


def _grid_of(runner: str) -> type | None:
    """The ``Grid`` of the runner ``"<module>:run_job"`` (its module's ``RUNNER``'s, or the
    module's own), into which :func:`run_one` builds a job's grid point; ``None`` for a module
    without one (the point stays a dict)."""
    names = vars(importlib.import_module(runner.partition(":")[0]))
    suite_runner = names.get("RUNNER")
    return suite_runner.Grid if suite_runner is not None else names.get("Grid")


def failure_record(job: dict[str, Any], error: str, *, device: str | None = None,
                   wall_time_s: float = 0.0) -> dict[str, Any]:
    """The record of a job that left none itself (its worker process died): the same fields as
    :func:`run_one`'s, ``status: "error"``; the worker is unknown."""
    return {
        "job": job,
        "status": "error",
        "error": error,
        "metrics": {},
        "wall_time_s": round(wall_time_s, 3),
        "device": device,
        "worker": {"host": None, "note": "the worker process died before it could report"},
    }


@dataclass(frozen=True)
class NodeCheck:
    """What every Ray node must confirm before any job is submitted (one probe task per node):
    the runner module ``runner_module`` validates ``config`` there (data files present, the
    runner's own checks) and gives the same data ``fingerprints`` as on the driver, and the
    node has the driver's package ``versions``."""

    runner_module: str
    config: Any
    fingerprints: Mapping[str, str]
    versions: Mapping[str, str]


class ClusterCheckError(ValueError):
    """A Ray node cannot run the suite (data, versions, resources); the message names the node
    and what to fix. Raised before any job starts."""


def execute(
    jobs: Sequence[Job | dict[str, Any]],
    runner: str,
    store: ResultsStore,
    *,
    executor: str = "local",
    workers: int = 1,
    address: str | None = None,
    on_result: Callable[[dict[str, Any]], None] | None = None,
    device: str = "auto",
    threads: int | None = None,
    retries: int = DEFAULT_RETRIES,
    resources: Mapping[str, Mapping[str, float]] | None = None,
    check: NodeCheck | None = None,
    env: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Run the jobs whose records are not yet in ``store``; returns the new records.

    ``device``: passed to every job (resolved on its worker). ``threads``: torch threads per
    job (default: :func:`default_threads` of ``workers`` locally; on Ray the job's
    ``num_cpus``). ``retries``: times a job whose worker process died is started again.
    Ray only: ``resources`` maps a job key to its ``{"num_cpus", "num_gpus"}`` (default 1
    CPU, no GPU), ``check`` is validated on every node first (:class:`NodeCheck`), ``env``
    is the ``runtime_env`` environment of every task (default: :func:`data_env`).
    """
    if executor not in EXECUTORS:
        raise ValueError(f"unknown executor {executor!r}; choose one of {', '.join(EXECUTORS)}")
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if retries < 0:
        raise ValueError(f"retries must be >= 0, got {retries}")
    if threads is not None and threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    # the executors carry a job as its dict (what a Ray task or a worker process receives, and
    # what the record keeps); run_one builds the typed Job the runner gets from it
    jobs = [j.as_dict() if isinstance(j, Job) else j for j in jobs]
    todo = [j for j in jobs if not store.is_done(j["key"])]
    done: list[dict[str, Any]] = []

    def _finish(record: dict[str, Any]) -> None:
        log_text = record.pop("log", None)
        key = record["job"]["key"]
        if log_text is not None:
            atomic_write_text(store.log_path(key), log_text)
        store.put(key, record)
        done.append(record)
        if on_result is not None:
            on_result(record)

    if not todo:
        return done
    if executor == "ray":
        _execute_ray(todo, runner, store, workers, address, _finish, device=device,
                     threads=threads, retries=retries, resources=resources or {}, check=check,
                     env=data_env() if env is None else dict(env))
        return done
    threads = threads or default_threads(workers)
    workdir = str(store.root.resolve())
    if workers == 1:
        for job in todo:
            _finish(run_one(runner, job, _log_path(store, job), workdir, device=device,
                            threads=threads))
    else:
        _execute_pool(todo, runner, store, workers, _finish, device=device, threads=threads,
                      retries=retries)
    return done


def _log_path(store: ResultsStore, job: dict[str, Any]) -> str:
    return str(store.log_path(job["key"]).resolve())


def _execute_pool(todo, runner, store, workers, finish, *, device, threads, retries) -> None:
    """Local worker processes. A worker that dies breaks the whole pool (Python's
    ``ProcessPoolExecutor``): the jobs it held are run again in a new pool, each at most
    ``retries`` times, then recorded as failed."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    workdir = str(store.root.resolve())
    attempts = {j["key"]: 0 for j in todo}
    queue = list(todo)
    while queue:
        pool = ProcessPoolExecutor(
            max_workers=workers, mp_context=ctx, initializer=_die_with_parent, initargs=(os.getpid(),)
        )
        broken: list[dict[str, Any]] = []
        try:
            futures = {
                pool.submit(run_one, runner, job, _log_path(store, job), workdir, device=device,
                            threads=threads): job
                for job in queue
            }
            queue = []
            pending = set(futures)
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    try:
                        record = fut.result()
                    except BrokenProcessPool:
                        broken.append(futures[fut])
                        continue
                    finish(record)
        except BaseException:  # interrupt or error: stop the workers now, keep what finished
            _stop_pool(pool)
            raise
        if not broken:
            pool.shutdown(wait=True)
            continue
        _stop_pool(pool)
        log.warning("a local worker process died; %d unfinished job(s) start again in a new pool",
                    len(broken))
        for job in broken:
            attempts[job["key"]] += 1
            if attempts[job["key"]] > retries:
                finish(failure_record(
                    job, f"WorkerDied: the worker process running this job (or one beside it) "
                         f"died {attempts[job['key']]} time(s); gave up after {retries} "
                         "retr(y/ies) (--retries). Its log may hold the last lines.",
                    device=device))
            else:
                queue.append(job)


def data_env() -> dict[str, str]:
    """The data and cache variables of :data:`DATA_ENV_VARS` set here, as absolute paths, for
    the ``runtime_env`` of Ray tasks (a worker's own working directory is not the driver's).
    ``GS_SHARED_DATA``, when unset, is the shared real-data folder the driver finds itself
    (``../shared/datasets`` beside its working directory or a parent), if any."""
    out = {k: str(Path(os.environ[k]).expanduser().resolve()) for k in DATA_ENV_VARS
           if os.environ.get(k)}
    if "GS_SHARED_DATA" not in out:
        here = Path.cwd().resolve()
        for folder in (here, *here.parents):
            cand = folder.parent / "shared" / "datasets"
            if cand.is_dir():
                out["GS_SHARED_DATA"] = str(cand)
                break
    return out


# ------------------------------------------------------------------------------------- Ray
def _ray_job(runner: str, job: dict[str, Any], workdir: str | None, device: str,
             threads: int) -> dict[str, Any]:
    """A Ray task: :func:`run_one` with the log captured and returned with the record."""
    return run_one(runner, job, None, workdir, device=device, threads=threads, capture_log=True)


def _probe(check: NodeCheck | None, marker: str | None) -> dict[str, Any]:
    """A Ray task pinned to one node: what that node sees (see :class:`NodeCheck`)."""
    info: dict[str, Any] = {
        "host": socket.gethostname(),
        "cwd": os.getcwd(),
        "versions": package_versions(),
        "sees_out": bool(marker) and os.path.isfile(marker),
        "fingerprints": {},
        "error": None,
    }
    if check is not None:
        try:
            mod = importlib.import_module(check.runner_module)
            info["fingerprints"] = dict(mod.validate(check.config) or {})
        except Exception as exc:  # noqa: BLE001 - reported to the driver with the node's name
            info["error"] = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
    return info


def _node_label(node: dict[str, Any], probe: dict[str, Any] | None = None) -> str:
    host = (probe or {}).get("host") or node.get("NodeManagerHostname") or "?"
    return f"{host} ({node.get('NodeManagerAddress', '?')}, node {str(node.get('NodeID', '?'))[:8]})"


def _job_nodes(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Alive nodes that can run a job (some CPU or GPU)."""
    return [n for n in nodes if n.get("Alive") and (n.get("Resources", {}).get("CPU", 0) > 0
                                                    or n.get("Resources", {}).get("GPU", 0) > 0)]


def _check_feasible(demands: set[tuple[float, float]], nodes: list[dict[str, Any]]) -> None:
    for cpus, gpus in sorted(demands):
        if not any(n["Resources"].get("CPU", 0) >= cpus and n["Resources"].get("GPU", 0) >= gpus
                   for n in nodes):
            have = "; ".join(f"{_node_label(n)}: CPU {n['Resources'].get('CPU', 0):g}, "
                             f"GPU {n['Resources'].get('GPU', 0):g}" for n in nodes) or "none"
            raise ClusterCheckError(
                f"jobs ask for num_cpus={cpus:g}, num_gpus={gpus:g} but no node of the Ray "
                f"cluster has that much (nodes: {have}); lower the suite's [resources] or add "
                "a node that has it"
            )


def _probe_failure(exc: BaseException) -> str:
    """One line for a node check that raised: a worker that cannot import our packages (the
    usual cause: the nodes run the Python environment ``ray start`` was started from, not the
    driver's) is named as such; anything else gives its first line."""
    import re

    text = str(exc)
    missing = re.search(r"No module named '([^']+)'", text)
    if missing:
        return (
            f"the node check failed: a Ray worker cannot import {missing.group(1)!r}. Ray's "
            "workers run in the Python environment that `ray start` was started from, not in "
            "this one: install gs-bench there on every node (or set PYTHONPATH before `ray "
            "start`); see docs/cluster.md"
        )
    return f"the node check failed: {type(exc).__name__}: {text.splitlines()[0] if text else ''}"


def _auth_hint(env: Mapping[str, str] | None = None, home: str | None = None) -> str:
    """A hint for a refused connection when this machine holds a Ray token but the client does
    not use it: Ray >= 2.59 turns token authentication on for clusters that ``ray start`` makes,
    and a client sends the token (``~/.ray/auth_token``) only with ``RAY_AUTH_MODE=token``."""
    env = os.environ if env is None else env
    if env.get("RAY_AUTH_MODE", "").lower() == "token" or env.get("RAY_AUTH_TOKEN"):
        return ""
    token = os.path.join(home if home is not None else os.path.expanduser("~"), ".ray", "auth_token")
    if not os.path.isfile(token):
        return ""
    return ("; this machine has a Ray token (~/.ray/auth_token) but RAY_AUTH_MODE is not 'token' "
            "here: a cluster started by `ray start` (Ray >= 2.59) refuses clients without it, so "
            "export RAY_AUTH_MODE=token")


def _check_nodes(ray, nodes, check, marker, env) -> bool:
    """One probe task per node; raise :class:`ClusterCheckError` naming every node that cannot
    run the suite. Returns whether every node sees the output folder."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    probe = ray.remote(num_cpus=0, max_retries=1)(_probe)
    opts = {"runtime_env": {"env_vars": env}} if env else {}
    refs = [
        probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False),
                      **opts).remote(check, marker)
        for n in nodes
    ]
    try:
        results = ray.get(refs, timeout=_PROBE_TIMEOUT_S)
    except ray.exceptions.GetTimeoutError:
        raise ClusterCheckError(
            f"the node check did not answer within {_PROBE_TIMEOUT_S} s on every node "
            f"({', '.join(_node_label(n) for n in nodes)}); is every node's Python environment "
            "able to import gs_bench?"
        ) from None
    except ray.exceptions.RayError as exc:
        raise ClusterCheckError(_probe_failure(exc)) from None
    problems = []
    for node, res in zip(nodes, results, strict=True):
        where = _node_label(node, res)
        if res["error"]:
            problems.append(f"node {where}: {res['error']}")
            continue
        if check is None:
            continue
        differ = {k: (v, res["versions"].get(k)) for k, v in check.versions.items()
                  if res["versions"].get(k) != v}
        if differ:
            problems.append(f"node {where} has other package versions than the driver: " + ", ".join(
                f"{k} {theirs} (driver {ours})" for k, (ours, theirs) in sorted(differ.items())))
        fp = {k: (v, res["fingerprints"].get(k)) for k, v in check.fingerprints.items()
              if res["fingerprints"].get(k) != v}
        if fp:
            problems.append(f"node {where} has other data than the driver for " + ", ".join(
                f"{k!r}" for k in sorted(fp)) + " (other files or file sizes)")
    if problems:
        raise ClusterCheckError(
            f"{len(problems)} problem(s) on the Ray cluster before any job started: "
            + "; ".join(problems)
            + ". Every node needs the same data (shared storage, or the same files under "
            "GS_DATA_ROOT / GS_SHARED_DATA, which the driver passes to every task) and the "
            "same package versions; see docs/cluster.md"
        )
    return all(r["sees_out"] for r in results)


_PROBE_TIMEOUT_S = 600


#: seconds ``--executor ray --address HOST:PORT`` waits for a TCP connection to the head
RAY_CONNECT_TIMEOUT_S = 15.0


def check_reachable(address: str, timeout: float | None = None) -> None:
    """Raise :class:`ClusterCheckError` naming ``address`` unless a TCP connection to it opens
    within ``timeout`` seconds (default :data:`RAY_CONNECT_TIMEOUT_S`). Before issue 34,
    ``ray.init`` retried an unreachable address for over 5 minutes without a gs message.
    ``auto`` / ``local`` (found by Ray itself) are not checked; ``ray://`` addresses are."""
    if address in ("auto", "local"):
        return
    hostport = address.split("://", 1)[-1].split("/", 1)[0]
    host, sep, port_text = hostport.rpartition(":")
    if not sep:
        host, port_text = hostport, "10001" if address.startswith("ray://") else "6379"
    host = host.strip("[]")
    try:
        port = int(port_text)
    except ValueError:
        raise ClusterCheckError(f"--address {address!r}: expected HOST:PORT (e.g. head-node:6379), "
                                "'auto' or ray://HOST:PORT") from None
    limit = RAY_CONNECT_TIMEOUT_S if timeout is None else timeout
    try:
        with socket.create_connection((host, port), timeout=limit):
            pass
    except OSError as exc:
        why = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
        raise ClusterCheckError(
            f"cannot reach the Ray cluster at {address} ({why} after at most {limit:g} s); is "
            "`ray start --head` running there and the port open from this machine? Nothing "
            "started; see docs/cluster.md") from None


def _execute_ray(todo, runner, store, workers, address, finish, *, device, threads, retries,
                 resources, check, env) -> None:
    from gs_bench.optional import require

    require("ray", "the ray executor")  # run_suite checks it before --out is touched
    import ray
    demand = {j["key"]: _resources(resources.get(j["key"])) for j in todo}
    if device.startswith("cuda") and any(g <= 0 for _, g in demand.values()):
        raise ClusterCheckError(
            f"--device {device} with the ray executor needs a GPU per job: set num_gpus in the "
            "suite's [resources] (e.g. 1, or 0.5 to share a GPU between two jobs), or use "
            "--device auto"
        )
    started_here = False
    if not ray.is_initialized():
        _ray_init(ray, address, max(1, math.ceil(workers * max(c for c, _ in demand.values()))))
        started_here = True
    inflight: dict[Any, dict[str, Any]] = {}
    try:
        workdir = _ray_workdir(ray, store, demand, check, env)
        submit = functools.partial(_ray_submit, ray.remote(_ray_job), runner, workdir, device,
                                   threads, retries, {"runtime_env": {"env_vars": env}} if env else {})
        queue = deque(todo)
        while queue or inflight:
            while queue and len(inflight) < workers:
                job = queue.popleft()
                inflight[submit(job, demand[job["key"]])] = job
            ready, _ = ray.wait(list(inflight), num_returns=1)
            for ref in ready:
                finish(_ray_record(ray, ref, inflight.pop(ref), retries, device))
    except BaseException:
        for ref in inflight:  # interrupted: stop what still runs, keep what finished
            try:
                ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001, S110 - best effort on the way out
                pass
        raise
    finally:
        if started_here:
            ray.shutdown()


def _ray_init(ray, address: str | None, num_cpus: int) -> None:
    """Connect to the cluster at ``address`` (checked reachable first), or start a new local
    Ray instance of ``num_cpus`` CPUs."""
    quiet = {"log_to_driver": False, "logging_level": logging.WARNING}  # CLI: our lines only
    if address:
        check_reachable(address)
        try:
            ray.init(address=address, **quiet)
        except (ConnectionError, TimeoutError) as exc:
            raise ClusterCheckError(
                f"cannot connect to the Ray cluster at {address}: {type(exc).__name__}: "
                f"{' '.join(str(exc).split())[:200]}{_auth_hint()}; see docs/cluster.md"
            ) from None
        return
    # "local": always a new local instance, as documented (docs/cluster.md). Without an address
    # Ray would look for a running instance (RAY_ADDRESS, then any local GCS process) and connect
    # to someone else's cluster, e.g. another test session's on the same machine, where
    # num_cpus is refused
    ray.init(address="local", num_cpus=num_cpus, include_dashboard=False,
             _node_ip_address="127.0.0.1", **quiet)


def _ray_workdir(ray, store, demand, check, env) -> str | None:
    """Check the cluster before any job (every demand fits a node; every node passes
    :class:`NodeCheck`); the results folder when every node sees it, else ``None`` (jobs get no
    shared work folder)."""
    nodes = _job_nodes(ray.nodes())
    _check_feasible(set(demand.values()), nodes)
    marker = store.root.resolve() / f".gs-bench-node-check-{secrets.token_hex(6)}"
    marker.write_text("gs-bench: does every Ray node see this folder?\n", encoding="utf-8")
    try:
        shared = _check_nodes(ray, nodes, check, str(marker), env)
    finally:
        marker.unlink(missing_ok=True)
    if shared:
        return str(store.root.resolve())
    log.warning(
        "not every Ray node sees %s: jobs get no shared work folder (ensembles train "
        "their members themselves); records and logs still come back to this driver",
        store.root.resolve())
    return None


def _ray_submit(task, runner, workdir, device, threads, retries, opts, job, demand) -> Any:
    """Start ``job`` as a Ray task asking for ``demand`` = (CPUs, GPUs); its object ref."""
    cpus, gpus = demand
    return task.options(num_cpus=cpus, num_gpus=gpus, max_retries=retries, **opts).remote(
        runner, job, workdir, device, threads or max(1, int(cpus)))


def _ray_record(ray, ref, job, retries: int, device: str) -> dict[str, Any]:
    """The record a finished task returned, or a failure record where its worker or node died."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayError as exc:  # the task's worker or node died
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        record = failure_record(
            job, f"{type(exc).__name__}: the Ray task of this job returned no record "
                 f"(its worker process or node died; retried {retries} time(s), "
                 f"--retries): {first}", device=device)
        record["log"] = record["error"] + "\n"
        return record


def _resources(res: Mapping[str, float] | None) -> tuple[float, float]:
    res = res or {}
    return float(res.get("num_cpus", 1)), float(res.get("num_gpus", 0))
