"""Process settings that make CPU training cheaper, applied by ``gs-bench`` in each worker.

Training on a CPU allocates and frees the same large tensors (an edge batch of a point cloud,
about 16 MB per ``(E, 64)`` activation) in every step. glibc's ``malloc`` serves blocks above
its mmap threshold with ``mmap`` and returns them with ``munmap`` on ``free``, so each step
page-faults (and the kernel zeroes) every such block again: on the 2-core development machine
a third of a Track training step's time was system time. :func:`keep_freed_memory` raises the
mmap and trim thresholds with ``mallopt``, so freed blocks stay in the heap and the next step
reuses them (the cost: the process keeps its peak heap instead of returning it between steps).
This is the setting PyTorch's CPU performance guide gets by preloading jemalloc or tcmalloc.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import sys

__all__ = ["keep_freed_memory"]

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_done: bool | None = None
log = logging.getLogger(__name__)


def keep_freed_memory(mmap_threshold: int = 1 << 30, trim_threshold: int = 1 << 30) -> bool:
    """Keep freed blocks below ``mmap_threshold`` bytes in glibc's heap (``mallopt``).

    Sets ``M_MMAP_THRESHOLD`` (blocks at least this large still get their own ``mmap``) and
    ``M_TRIM_THRESHOLD`` (free memory at the top of the heap above this is returned to the
    system). Returns whether the setting was applied: only on Linux with glibc, once per
    process, and not when the environment sets ``GS_KEEP_FREED_MEMORY=0``; elsewhere (macOS,
    Windows, musl) it does nothing and returns ``False``.
    """
    global _done
    if _done is not None:
        return _done
    _done = False
    if os.environ.get("GS_KEEP_FREED_MEMORY", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    # some glibc versions refuse a threshold above 32 MiB (half their heap size): fall back to it
    ok = any(mallopt(_M_MMAP_THRESHOLD, int(v)) for v in (mmap_threshold, min(mmap_threshold, 1 << 25)))
    ok = ok and any(mallopt(_M_TRIM_THRESHOLD, int(v)) for v in (trim_threshold, 1 << 25))
    if ok:
        log.debug("mallopt: freed blocks below %d bytes stay in the heap", mmap_threshold)
    _done = ok
    return ok
