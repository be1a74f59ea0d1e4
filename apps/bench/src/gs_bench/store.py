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
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["ResultsStore", "atomic_write_text"]


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (temporary file in the same folder, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class ResultsStore:
    """Folder of per-job JSON records (see the module docstring for the layout)."""

    def __init__(self, root: str | os.PathLike[str]):
        self.root = Path(root)
        self.results_dir = self.root / "results"
        self.logs_dir = self.root / "logs"

    def path_for(self, key: str) -> Path:
        return self.results_dir / f"{key}.json"

    def log_path(self, key: str) -> Path:
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        return self.logs_dir / f"{key}.log"

    def has(self, key: str) -> bool:
        """Whether a record (finished or failed) exists for ``key``."""
        return self.path_for(key).is_file()

    def is_done(self, key: str) -> bool:
        """Whether ``key`` finished successfully (failed jobs are run again on a re-run)."""
        if not self.has(key):
            return False
        try:
            return self.get(key).get("status", "ok") == "ok"
        except (OSError, ValueError):
            return False

    def put(self, key: str, record: dict[str, Any]) -> Path:
        if record.get("key") not in (None, key):
            raise ValueError(f"record key {record.get('key')!r} does not match {key!r}")
        record = {"key": key, **record}
        path = self.path_for(key)
        atomic_write_text(path, json.dumps(record, indent=2, sort_keys=True, default=_json_default))
        return path

    def get(self, key: str) -> dict[str, Any]:
        return json.loads(self.path_for(key).read_text(encoding="utf-8"))

    def keys(self) -> list[str]:
        if not self.results_dir.is_dir():
            return []
        return sorted(p.stem for p in self.results_dir.glob("*.json") if not p.name.startswith("."))

    def records(self) -> Iterator[dict[str, Any]]:
        for key in self.keys():
            yield self.get(key)

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
