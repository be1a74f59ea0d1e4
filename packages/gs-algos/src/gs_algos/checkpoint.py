"""Atomic files of gs-algos: checkpoints (:func:`atomic_save`) and any other file
(:func:`atomic_write`), written to a temporary file in the same folder, then renamed.

:func:`atomic_write` is the one atomic-write helper of gs-algos (docs/architecture.md,
"One of each"): gs-algos depends on gs-models and gs-metrics, neither of which writes files,
and not on gs-data, whose helper the layers below use.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

__all__ = ["atomic_save", "atomic_write", "load_checkpoint", "member_lock", "safe_torch_load", "CHECKPOINT_NAME"]

CHECKPOINT_NAME = "last.pt"


@contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "wb", encoding: str | None = None) -> Iterator:
    """Open a temporary file beside ``path``; rename it onto ``path`` only on success.

    The parent folder is created if needed. The file gets the permissions of a plain
    ``open(path, "w")`` (``0o666`` minus the umask), not the ``0o600`` of
    :func:`tempfile.mkstemp`. On any error the temporary file is removed and ``path`` is
    left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # umask applies (mkstemp: 0600)
    try:
        with os.fdopen(fd, mode, encoding=encoding) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextmanager
def member_lock(path: str | os.PathLike) -> Iterator[None]:
    """Hold ``fcntl.flock`` on the sidecar ``<path>.lock`` while the entry ``path`` is built, so
    processes sharing a cache (``gs-bench --workers N``) build it once (issue 34). Where no
    lock can be taken (no ``fcntl``, a folder that cannot be written) the block runs unlocked;
    the entry's write is atomic, so at worst it is built twice. The same rule as gs-data's
    ``entry_lock``, which gs-algos does not import."""
    path = Path(path)
    try:
        import fcntl

        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o666)
    except (ImportError, OSError):
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def atomic_save(obj: Any, path: str | os.PathLike) -> Path:
    """``torch.save`` ``obj`` to ``path`` atomically: a reader never sees a partial file.

    The parent folder is created if needed. Returns the final path.
    """
    with atomic_write(path) as fh:
        torch.save(obj, fh)
    return Path(path)


def load_checkpoint(path: str | os.PathLike, safe_globals: Iterable[Any] = ()) -> dict:
    """Load a checkpoint written by the engine (tensors mapped to CPU).

    Read with ``torch.load(weights_only=True)``: tensors, containers and numbers only, plus
    the classes in ``safe_globals`` (the engine passes its ``Track``), so a crafted file
    cannot run code. A file that is not such a checkpoint raises :class:`ValueError` naming
    it (torch's own message advises ``weights_only=False``, which would run the file's code).
    """
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder, not a checkpoint file")
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path}")
    return safe_torch_load(path, safe_globals, what="checkpoint")


def safe_torch_load(path: str | os.PathLike, safe_globals: Iterable[Any] = (), *,
                    what: str = "torch file") -> Any:
    """``torch.load(path, weights_only=True)`` on CPU, with ``safe_globals`` allowed; any failure
    is a one-line :class:`ValueError` naming ``path`` (a missing file stays FileNotFoundError)."""
    try:
        with torch.serialization.safe_globals(list(safe_globals)):
            return torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise
    except Exception as exc:  # noqa: BLE001 - torch raises UnpicklingError, RuntimeError, ...
        raise ValueError(
            f"{path}: cannot load this {what} safely ({type(exc).__name__}: {_reason(exc)}); it is "
            "damaged, not a torch file, or holds objects other than tensors and plain "
            "containers (a file crafted to run code when loaded?). Nothing from it was run; "
            "replace or delete it."
        ) from exc


def _reason(exc: BaseException) -> str:
    """What torch's weights-only error says is wrong, without its advice to load with
    ``weights_only=False`` (which would run the file's code)."""
    text = str(exc)
    found = re.search(r"GLOBAL ([\w.]+)", text)
    if found:
        return f"it asks for {found.group(1)}, which is not allowed"
    if "Weights only load failed" in text:
        return "it holds objects other than tensors and plain containers"
    return " ".join(text.split())[:300] or type(exc).__name__
