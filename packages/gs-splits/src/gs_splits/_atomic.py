"""The one atomic-write helper of gs-splits (docs/architecture.md, "One of each").

gs-splits is the bottom layer and imports nothing of gs, so it has its own; gs-data has
:func:`gs_data._io.atomic_write` (gs-data does not import gs_splits on import: gs_splits
brings numba, seconds of start-up), gs-algos :mod:`gs_algos.checkpoint`.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["atomic_write"]


def atomic_write(target: str | os.PathLike, write: Callable[[Any], Any]) -> None:
    """Call ``write(binary file)`` on a temporary file beside ``target``, then rename it there.

    A reader sees the old file or the whole new one, never a part. The file gets the
    permissions of a plain ``open(target, "w")`` (``0o666`` minus the umask), not the
    ``0o600`` of :func:`tempfile.mkstemp`. On any error the temporary file is removed and
    ``target`` is left as it was.
    """
    target = Path(target)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(6)}.tmp")
    try:  # mode 0o666: the kernel applies the umask (mkstemp would give 0600)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as exc:  # name the file the user asked for, not the temporary one
        raise type(exc)(exc.errno, f"cannot write here ({exc.strerror})", str(target)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, target)
    except OSError as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if exc.filename in (None, str(tmp)):  # name the target, never the temporary file
            raise type(exc)(exc.errno, exc.strerror or str(exc), str(target)) from None
        raise
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
