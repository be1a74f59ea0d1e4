"""Optional packages: whether one is installed, and the one-line error that names it and the
command that installs it today (before any gs package is on PyPI, the third-party package
itself; see README.md "Install").

A command that needs a missing optional package stops before it writes anything: the CLI
turns :class:`MissingDependencyError` (a :class:`~gs_bench.suites.SuiteConfigError`) into
``gs-bench: cannot start: ...`` and exit 2, and a :class:`ModuleNotFoundError` of one of
:data:`OPTIONAL`'s modules raised later into the same one line (never "internal error").
Light: no torch, no numpy.
"""

from __future__ import annotations

import importlib.util
import sys

from gs_bench.suites import SuiteConfigError

__all__ = ["OPTIONAL", "MissingDependencyError", "install_hint", "is_installed", "require",
           "missing_dependency_line"]

#: import name -> (what it is, the command that installs it, working today). The ranges are
#: those of the pyproject extras that bring them (tests/test_install_lines.py checks it).
OPTIONAL: dict[str, tuple[str, str]] = {
    "ray": ("Ray (the ray executor)", "pip install 'ray>=2.40'"),
    "matplotlib": ("matplotlib (figures)", "pip install 'matplotlib>=3.7'"),
    "torch_cluster": ("torch_cluster (PyG's kNN kernels)",
                      "pip install torch-cluster (a wheel matching your torch; knn_graph's "
                      "backend='auto' works without it)"),
    "pythia8mc": ("PYTHIA 8 (Track simulation)", ""),
    "acts": ("ACTS (Track simulation)", ""),
    "MoleculeACE": ("MoleculeACE's data (the DrugOOD-3D stand-in)", "pip install --no-deps MoleculeACE"),
}


class MissingDependencyError(SuiteConfigError):
    """An optional package that the command needs is not installed; the message names it and
    the command that installs it."""


def install_hint(module: str) -> str:
    """The command that installs ``module`` (a key of :data:`OPTIONAL`)."""
    if module in ("pythia8mc", "acts"):
        from gs_data.track.deps import INSTALL_HINT  # the track extra's ranges, in one place

        return INSTALL_HINT
    return OPTIONAL[module][1]


def is_installed(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it (``sys.modules[module] = None``,
    as tests block a module, counts as missing)."""
    if module in sys.modules:
        return sys.modules[module] is not None
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require(module: str, purpose: str) -> None:
    """Raise :class:`MissingDependencyError` unless ``module`` is installed; ``purpose`` says
    what needs it (``"--executor ray"``)."""
    if not is_installed(module):
        what = OPTIONAL[module][0]
        raise MissingDependencyError(f"{purpose} needs {what}, which is not installed: "
                                     f"{install_hint(module)}")


def missing_dependency_line(exc: BaseException) -> str | None:
    """One line for an import error of an optional package (found along ``__cause__`` /
    ``__context__``), else ``None``."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        name = getattr(cur, "name", None) if isinstance(cur, ImportError) else None
        top = (name or "").split(".")[0]
        if top in OPTIONAL:
            return f"{OPTIONAL[top][0]} is not installed: {install_hint(top)}"
        cur = cur.__cause__ or cur.__context__
    return None
