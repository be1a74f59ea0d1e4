"""One log line when numba compiles the gs-splits kernels (first run only).

numba compiles a kernel at its first call and keeps the machine code in its on-disk cache;
on a new machine (or after an upgrade) the first split therefore spends seconds compiling
with nothing to show for it. A listener on numba's ``numba:compile`` event, which numba
fires only when it really compiles (not when it loads a kernel from its cache), logs
``compiling kernels (first run only)`` once per process, at INFO on the logger
``gs_splits.kernels``; the ``gs-splits`` CLI shows that logger's INFO lines.
"""

from __future__ import annotations

import logging

from numba.core import event

__all__ = ["LOGGER", "MESSAGE", "MESSAGE_EVERY_RUN"]

LOGGER = logging.getLogger("gs_splits.kernels")
MESSAGE = "compiling kernels (first run only; numba caches them)"
#: said instead when numba has no reusable cache folder (gs_splits._kernels' fallback)
MESSAGE_EVERY_RUN = "compiling kernels (numba has no reusable cache folder here: every run compiles)"
#: module whose kernels count (others, e.g. a user's own numba code, are not ours to announce)
_OURS = "gs_splits."


class _FirstCompile(event.Listener):
    def __init__(self) -> None:
        self.told = False
        self.message = MESSAGE

    def on_start(self, ev: event.Event) -> None:
        if self.told:
            return
        dispatcher = (ev.data or {}).get("dispatcher")
        module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
        if module.startswith(_OURS):
            self.told = True
            LOGGER.info(self.message)

    def on_end(self, ev: event.Event) -> None:
        return None


LISTENER = _FirstCompile()
event.register("numba:compile", LISTENER)
