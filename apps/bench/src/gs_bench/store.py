"""Results store of a benchmark run: one JSON record per finished job, written atomically.

Layout of an output folder::

    OUT/
      run-<suite>.json      # the suite, profile and environment of the latest invocation
      results/<key>.json    # one record per finished job (key = hash of its resolved config)
      logs/<key>.log        # one log per job
      report/               # written by ``gs-bench report``

A record is written to a temporary file in the same folder and renamed into place, so a
``kill -9`` at any moment leaves either the whole record or none of it. Re-running the same
command skips every job whose record exists: an interrupted run resumes with nothing lost
and nothing duplicated. Jobs that failed are recorded too (with the error) and are run
again by the next invocation.

A record that cannot be read (truncated, not JSON, not a record of this store: wrong key,
no job, unknown suite) is never fatal: it is moved to ``results/quarantine/`` with a warning
naming its path and the reason (:attr:`ResultsStore.quarantined`), so ``report`` reports the
good records and ``run`` runs that job again. Only in a run folder (one holding a
``run-<suite>.json``): ``gs-bench report`` of any other folder skips such files and leaves them
where they are (``ResultsStore(..., quarantine=False)``, :attr:`ResultsStore.skipped`).

While ``gs-bench run`` writes into ``OUT`` it holds ``OUT/.lock`` (:class:`RunLock`, holding
host, pid and start time), so a second concurrent ``run`` on the same folder stops with a
message naming the holder instead of doing all the work twice. A lock left by a process that
no longer runs on this host (``kill -9``, power loss) is stale and is taken over with a warning.
"""

from __future__ import annotations

import datetime
import errno
import json
import logging
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "ResultsStore", "RunLock", "LockedError", "CorruptRecordError", "atomic_write_text", "QUARANTINE",
    "read_json", "read_run_file", "RUN_FILE_KEYS",
]

log = logging.getLogger(__name__)
QUARANTINE = "quarantine"


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (temporary file in the same folder, then
    rename) with gs-data's :func:`gs_data.atomic_write`, the helper gs-bench shares
    (docs/architecture.md, "One of each"; importing it imports neither torch nor numba).

    The file gets the permissions a plain ``open(path, "w")`` would give (``0o666`` minus the
    umask), not the ``0o600`` of :func:`tempfile.mkstemp`.
    """
    from gs_data import atomic_write

    try:
        with atomic_write(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:  # name the file asked for, not the temporary one or none (ENOSPC)
        raise type(exc)(exc.errno, exc.strerror or str(exc), str(path)) from None


class CorruptRecordError(ValueError):
    """A file in ``results/`` is not a readable record of this store (the message names it)."""


class LockedError(RuntimeError):
    """Another live ``gs-bench run`` holds the lock of the output folder."""


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (exited, not yet reaped) is not a live holder
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def read_json(path: Path) -> Any:
    """The parsed content of ``path``; :class:`CorruptRecordError` naming the file for any
    content that does not parse: damaged bytes, bad JSON, and nesting deeper than the parser's
    recursion limit (a crafted file; issue 56). ``OSError`` passes."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise CorruptRecordError(f"{path}: not a UTF-8 text file ({exc.reason})") from None
    except RecursionError:
        raise CorruptRecordError(f"{path}: nested deeper than a record can be") from None
    except ValueError as exc:
        raise CorruptRecordError(f"{path}: not valid JSON (truncated or damaged: {exc})") from None


#: the keys every run file written by ``gs-bench run`` holds (:func:`gs_bench.run._run_locked`)
RUN_FILE_KEYS = ("suite", "profile", "grid", "settings", "seeds", "jobs")


def read_run_file(path: Path) -> dict[str, Any] | None:
    """The content of a ``run-<suite>.json`` when it is one that ``gs-bench run`` wrote (a JSON
    object with :data:`RUN_FILE_KEYS` and its own suite name), else ``None``: a file of the
    same name from another tool, or a damaged one, is not a run file."""
    try:
        info = read_json(path)
    except (CorruptRecordError, OSError):
        return None
    if not isinstance(info, dict) or any(k not in info for k in RUN_FILE_KEYS):
        return None
    return info if info.get("suite") == Path(path).name[4:-5] else None


class RunLock:
    """Exclusive lock of an output folder: ``OUT/.lock`` holding ``{"host", "pid", "started"}``.

    Race-free on one host (issue 34): the content is written to a temporary file first and the
    lock appears with ``os.link`` onto ``.lock``, which fails when the lock exists, so a lock
    is never seen empty or half written. A lock whose holder ran on this host and is no longer
    alive is stale: it is removed with a warning, and the removal is atomic: it happens only
    while holding ``fcntl.flock`` on the sidecar ``OUT/.lock.takeover`` and after reading the
    lock again under it, so two processes that both find the same stale lock cannot both take
    it over, and none can delete a lock another has just taken. A lock of a live process, or of
    another host (whose processes cannot be checked from here), raises :class:`LockedError`
    naming the holder and the file to delete if that run is known dead. Use as a context
    manager; the lock file is removed on exit.
    """

    def __init__(self, root: str | os.PathLike[str]):
        self.path = Path(root) / ".lock"
        self.held = False

    def holder(self) -> dict[str, Any] | None:
        """The content of the lock file, ``None`` without one, ``{}`` when unreadable."""
        try:
            info = read_json(self.path)
        except FileNotFoundError:
            return None
        except (OSError, CorruptRecordError):
            return {}
        return info if isinstance(info, dict) else {}

    def is_stale(self, info: dict[str, Any]) -> bool:
        if info.get("host") != socket.gethostname():
            return False
        pid = info.get("pid")
        return not isinstance(pid, int) or not _pid_alive(pid)

    def _locked(self, info: dict[str, Any]) -> LockedError:
        return LockedError(
            f"{self.path.parent} is in use by another gs-bench run (host {info.get('host')}, "
            f"pid {info.get('pid')}, started {info.get('started')}); wait for it to finish, "
            f"or use another --out. If that run is dead, delete {self.path}"
        )

    def _remove_if_stale(self) -> None:
        """Under the takeover lock: read ``.lock`` again and delete it only if it is (still)
        stale or unreadable; a live holder raises :class:`LockedError`."""
        import fcntl

        with open(self.path.with_name(".lock.takeover"), "a") as side:
            fcntl.flock(side.fileno(), fcntl.LOCK_EX)  # released when the file is closed
            info = self.holder()
            if info is None:
                return  # released meanwhile
            if info and not self.is_stale(info):
                raise self._locked(info)
            if self.path.is_dir():
                raise LockedError(f"{self.path} is a folder, not a gs-bench lock file: remove it, "
                                  "or use another --out")
            if not info:  # written by an older gs-bench that died between create and write
                log.warning("removing unreadable lock file %s", self.path)
            else:
                log.warning(
                    "removing stale lock %s of pid %s on %s (that process no longer runs)",
                    self.path, info.get("pid"), info.get("host"),
                )
            self.path.unlink(missing_ok=True)

    def acquire(self) -> None:
        from gs_data import unique_temp_name

        self.path.parent.mkdir(parents=True, exist_ok=True)
        me = {"host": socket.gethostname(), "pid": os.getpid(),
              "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
        tmp = self.path.with_name(unique_temp_name(self.path.name))
        try:
            try:
                fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)
            except OSError as exc:  # name the run folder, not the temporary file (issue 56)
                raise type(exc)(exc.errno, exc.strerror or str(exc), str(self.path.parent)) from None
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(json.dumps(me))  # no fsync: a lock emptied by a power loss is taken over
            for _ in range(5):
                try:
                    os.link(tmp, self.path)  # atomic; fails if a lock exists
                except FileExistsError:
                    info = self.holder()
                    if info is None:
                        continue  # released meanwhile: try again
                    if info and not self.is_stale(info):
                        raise self._locked(info) from None
                    self._remove_if_stale()
                    continue
                self.held = True
                return
        finally:
            try:
                tmp.unlink(missing_ok=True)
            except OSError:  # a read-only folder refuses even this (EROFS): keep the first error
                pass
        raise LockedError(f"could not take the lock {self.path}: it keeps changing hands")

    def release(self) -> None:
        if self.held:
            info = self.holder()
            if info and info.get("pid") == os.getpid():
                self.path.unlink(missing_ok=True)
            self.held = False

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class ResultsStore:
    """Folder of per-job JSON records (see the module docstring for the layout)."""

    def __init__(self, root: str | os.PathLike[str], *, quarantine: bool = True):
        self.root = Path(root)
        self.results_dir = self.root / "results"
        self.logs_dir = self.root / "logs"
        self.quarantine_dir = self.results_dir / QUARANTINE
        #: whether unreadable records are moved to ``results/quarantine/`` (``False``: skipped
        #: and left in place, for a folder that is not a gs run folder, :meth:`is_run_folder`)
        self.moves = quarantine
        #: ``(new path, reason)`` of every record this object moved to quarantine
        self.quarantined: list[tuple[Path, str]] = []
        #: ``(path, reason)`` of every unreadable file skipped and left in place (``quarantine=False``)
        self.skipped: list[tuple[Path, str]] = []

    def run_files(self) -> list[Path]:
        """The run files (``run-<suite>.json`` of a known suite) that ``gs-bench run`` wrote here."""
        from gs_bench.runners import RUNNERS

        return sorted(p for p in self.root.glob("run-*.json")
                      if p.is_file() and p.name[4:-5] in RUNNERS and read_run_file(p) is not None)

    def is_run_folder(self) -> bool:
        """Whether ``gs-bench run`` wrote this folder (it holds a run file): only then does a
        reader move files it cannot read to quarantine (issue 34: ``report`` of any folder
        with a ``results/`` moved other programs' JSON files)."""
        return bool(self.run_files())

    def path_for(self, key: str) -> Path:
        return self.results_dir / f"{key}.json"

    def log_path(self, key: str) -> Path:
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        return self.logs_dir / f"{key}.log"

    def has(self, key: str) -> bool:
        """Whether a record (finished or failed) exists for ``key``."""
        return self.path_for(key).is_file()

    def is_done(self, key: str) -> bool:
        """Whether ``key`` finished successfully (failed jobs are run again on a re-run; a
        corrupt record is quarantined and its job counts as not done)."""
        if not self.has(key):
            return False
        rec = self._read_or_quarantine(self.path_for(key))
        return rec is not None and rec.get("status", "ok") == "ok"

    def put(self, key: str, record: dict[str, Any]) -> Path:
        if record.get("key") not in (None, key):
            raise ValueError(f"record key {record.get('key')!r} does not match {key!r}")
        record = {"key": key, **record}
        path = self.path_for(key)
        atomic_write_text(path, json.dumps(record, indent=2, sort_keys=True, default=_json_default))
        return path

    def get(self, key: str) -> dict[str, Any]:
        """The record of ``key``; :class:`CorruptRecordError` naming the file when it is not one."""
        path = self.path_for(key)
        rec = read_json(path)
        if not isinstance(rec, dict):
            raise CorruptRecordError(f"{path}: not a result record (a JSON {type(rec).__name__})")
        if rec.get("key") != key:
            raise CorruptRecordError(
                f"{path}: foreign record (its key is {rec.get('key')!r}, the file name says {key!r})"
            )
        return rec

    @staticmethod
    def check_record(rec: dict[str, Any]) -> None:
        """Raise :class:`CorruptRecordError` unless ``rec`` is a complete job record."""
        from gs_bench.runners import RUNNERS

        job = rec.get("job")
        if not isinstance(job, dict) or not isinstance(job.get("params"), dict):
            raise CorruptRecordError("no job description (not written by gs-bench run)")
        if job.get("suite") not in RUNNERS:
            raise CorruptRecordError(f"foreign record of an unknown suite {job.get('suite')!r}")
        if rec.get("status") not in ("ok", "error") or not isinstance(rec.get("metrics"), dict):
            raise CorruptRecordError("no status 'ok' / 'error' or no metrics table")

    def quarantine(self, path: Path, reason: str) -> Path:
        """Move ``path`` to ``results/quarantine/`` (never overwriting) and warn with both paths."""
        self.quarantine_dir.mkdir(parents=True, exist_ok=True)
        dest = self.quarantine_dir / path.name
        i = 1
        while dest.exists():
            dest = self.quarantine_dir / f"{path.stem}.{i}{path.suffix}"
            i += 1
        try:
            os.replace(path, dest)
        except FileNotFoundError:  # another process moved it first
            return dest
        log.warning("skipped unreadable result record %s (%s); moved it to %s", path, reason, dest)
        self.quarantined.append((dest, reason))
        return dest

    def _read_or_quarantine(self, path: Path, *, complete: bool = False) -> dict[str, Any] | None:
        try:
            rec = self.get(path.stem)
            if complete:
                self.check_record(rec)
        except CorruptRecordError as exc:
            reason = str(exc).removeprefix(f"{path}: ")
            if self.moves:
                self.quarantine(path, reason)
            else:
                log.warning("skipped %s (%s); left in place: %s is not a gs run folder", path,
                            reason, self.root)
                self.skipped.append((path, reason))
            return None
        except OSError as exc:
            if exc.errno in (errno.ENOENT,):
                return None
            if exc.errno == errno.EISDIR:  # a folder named like a record: not ours to move
                log.warning("skipped %s: a folder, not a record file; left in place", path)
                self.skipped.append((path, "a folder, not a record file"))
                return None
            raise
        return rec

    def quarantine_files(self) -> list[Path]:
        """Every file in ``results/quarantine/`` (this run's and earlier ones)."""
        if not self.quarantine_dir.is_dir():
            return []
        return sorted(p for p in self.quarantine_dir.iterdir() if p.is_file())

    def keys(self) -> list[str]:
        if not self.results_dir.is_dir():
            return []
        return sorted(p.stem for p in self.results_dir.glob("*.json") if not p.name.startswith("."))

    def records(self) -> Iterator[dict[str, Any]]:
        """The complete records; corrupt or foreign ones are quarantined and skipped."""
        for key in self.keys():
            rec = self._read_or_quarantine(self.path_for(key), complete=True)
            if rec is not None:
                yield rec

    def __len__(self) -> int:
        return len(self.keys())


def _json_default(obj: Any) -> Any:
    try:
        import numpy as np

        if isinstance(obj, np.generic):
            return obj.item()
        if isinstance(obj, np.ndarray):
            return obj.tolist()
    except ImportError:  # pragma: no cover
        pass
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"cannot store a value of type {type(obj).__name__} in a result record")
