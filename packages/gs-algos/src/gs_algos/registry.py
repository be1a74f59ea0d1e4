"""Registering your own training method: one call, read by every consumer.

gs-algos keeps two explicit tables (nothing registers itself on import):
:data:`gs_algos.methods.METHODS` (name -> :class:`~gs_algos.methods.Method` class, used by
:func:`gs_algos.engine.fit_node` / :func:`gs_algos.engine.fit_graph` callers, the GeSS search and
gs-bench's gess runner) and :data:`gs_algos.node_methods.NODE_METHODS` (name -> the named
node-classification method of the structural-shifts route, read by
:func:`gs_algos.node_methods.node_method` and gs-bench's structural-shifts runner).
:func:`register_method` adds a :class:`~gs_algos.methods.Method` subclass to the first and, when it
works at node level, a single-model entry (softmax-entropy uncertainty, like ERM) to the
second, so that every consumer accepts the new name without another edit::

    from gs_algos.methods import Method
    from gs_algos.registry import register_method

    class FloodedERM(Method):
        name = "flooding"
        def training_loss(self, model, batch, epoch):
            _, out = batch.forward(model)
            loss = (batch.losses(out).mean() - 0.1).abs() + 0.1
            return loss, {"loss": float(loss.detach())}

    register_method("flooding", FloodedERM)
"""

from __future__ import annotations

import re

from gs_algos.methods import METHODS, Method
from gs_algos.names import ALIASES

__all__ = ["available_methods", "register_method", "unregister_method"]

_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
#: the methods shipped with gs-algos (cannot be replaced or unregistered)
_BUILTIN_METHODS = frozenset(METHODS)


def available_methods(level: str | None = None) -> list[str]:
    """Names of :data:`~gs_algos.methods.METHODS` (those working at ``level`` if given)."""
    return [n for n, cls in METHODS.items() if level is None or level in cls.levels]


def register_method(name: str, method: type[Method], *, overwrite: bool = False) -> type[Method]:
    """Add the :class:`~gs_algos.methods.Method` subclass ``method`` under ``name``.

    Adds it to :data:`gs_algos.methods.METHODS` and, if ``"node"`` is in ``method.levels``,
    a :class:`~gs_algos.node_methods.SingleModel` entry to
    :data:`gs_algos.node_methods.NODE_METHODS` (one model per run, softmax-entropy OOD
    score). ``overwrite=True`` replaces a method you registered before; the shipped ones
    cannot be replaced. Returns ``method``.
    """
    from gs_algos.node_methods import NODE_METHODS, SingleModel

    if not isinstance(name, str) or not _NAME.match(name) or name in ALIASES:
        raise ValueError(f"method name must match {_NAME.pattern} (and not be one of the aliases "
                         f"{', '.join(repr(a) for a in ALIASES)}), got {name!r}")
    if not (isinstance(method, type) and issubclass(method, Method)):
        raise TypeError(f"method must be a subclass of gs_algos.methods.Method, got {method!r}")
    if name in _BUILTIN_METHODS or name in _builtin_node_methods():
        raise ValueError(f"method {name!r} ships with gs-algos and cannot be replaced")
    if (name in METHODS or name in NODE_METHODS) and not overwrite:
        raise ValueError(f"method {name!r} exists already; pass overwrite=True to replace it")
    METHODS[name] = method
    NODE_METHODS.pop(name, None)
    if "node" in method.levels:
        NODE_METHODS[name] = lambda k, _name=name: SingleModel(_name, lambda: METHODS[_name]())
    return method


def unregister_method(name: str) -> None:
    """Remove a method added by :func:`register_method` (the shipped ones stay)."""
    from gs_algos.node_methods import NODE_METHODS

    if name in _BUILTIN_METHODS or name in _builtin_node_methods():
        raise ValueError(f"method {name!r} ships with gs-algos and cannot be unregistered")
    if name not in METHODS:
        raise ValueError(f"no registered method {name!r}; registered: "
                         f"{', '.join(n for n in METHODS if n not in _BUILTIN_METHODS) or 'none'}")
    del METHODS[name]
    NODE_METHODS.pop(name, None)


def _builtin_node_methods() -> frozenset[str]:
    from gs_algos.node_methods import BUILTIN_NODE_METHODS

    return BUILTIN_NODE_METHODS
