"""Lazy access to the optional simulation stack (PYTHIA 8 and ACTS), behind the ``track`` extra
(a public module: gs-bench reads :data:`INSTALL_HINT` and :func:`simulation_available` here)."""

from __future__ import annotations

import importlib
from types import ModuleType

#: the command that installs the ``track`` extra's packages today (gs-data is not on PyPI
#: yet; from a checkout, ``pip install './packages/gs-data[track]'`` does the same). The ranges
#: are the extra's in pyproject.toml (a test checks it); pyacts has wheels for Python 3.11+ only
INSTALL_HINT = "pip install 'pythia8mc>=8.317.2,<8.318' 'pyacts>=48,<49' (Python 3.11+)"


def require(module: str) -> ModuleType:
    """Import ``module`` (``pythia8mc``, ``acts``, ``acts.examples``, ``pandas``) or explain the fix.

    Raises
    ------
    ImportError
        If the module is missing; the message names the extra that provides it.
    """
    try:
        return importlib.import_module(module)
    except ImportError as err:  # pragma: no cover - exercised where the extra is absent
        what = "pandas" if module == "pandas" else "PYTHIA 8 (pythia8mc) and ACTS (pyacts)"
        hint = "pip install pandas" if module == "pandas" else INSTALL_HINT
        raise ImportError(
            f"gs_data.track needs {what} for this function, but importing {module!r} failed "
            f"({err}). Install the optional dependencies with: {hint}"
        ) from err


def simulation_available() -> bool:
    """True if both ``pythia8mc`` and ``acts.examples`` can be imported."""
    for name in ("pythia8mc", "acts.examples"):
        try:
            importlib.import_module(name)
        except ImportError:
            return False
    return True
