"""Atomic files of gs-algos: checkpoints (:func:`atomic_save`) and any other file
(:func:`atomic_write`), written to a temporary file in the same folder, then renamed.

:func:`atomic_write` is the one atomic-write helper of gs-algos (docs/architecture.md,
"One of each"): gs-algos depends on gs-models and gs-metrics, neither of which writes files,
and not on gs-data, whose helper the layers below use.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch

__all__ = ["atomic_save", "atomic_write", "load_checkpoint", "CHECKPOINT_NAME"]

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


def atomic_save(obj: Any, path: str | os.PathLike) -> Path:
    """``torch.save`` ``obj`` to ``path`` atomically: a reader never sees a partial file.

    The parent folder is created if needed. Returns the final path.
    """
    with atomic_write(path) as fh:
        torch.save(obj, fh)
    return Path(path)


def load_checkpoint(path: str | os.PathLike) -> dict:
    """Load a checkpoint written by the engine (tensors mapped to CPU)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path}")
    return torch.load(path, map_location="cpu", weights_only=False)
