"""The package namespace: ``_LAZY`` (what resolves at run time) and the ``TYPE_CHECKING`` imports
(what type checkers and IDEs see) give the same names, and ``import gs_splits`` loads no numba."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import gs_splits


def _static_imports() -> dict[str, set[str]]:
    """Module -> the names the ``if TYPE_CHECKING:`` block imports from it (``*``: its __all__)."""
    tree = ast.parse(Path(gs_splits.__file__).read_text(encoding="utf-8"))
    block = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    out: dict[str, set[str]] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.module.startswith("gs_splits.")
        module = node.module.removeprefix("gs_splits.")
        names = {a.name for a in node.names}
        if names == {"*"}:
            names = set(importlib.import_module(node.module).__all__)
        out[module] = names
    return out


def test_the_type_checking_imports_give_the_lazy_names():
    lazy: dict[str, set[str]] = {}
    for name, module in gs_splits._LAZY.items():
        lazy.setdefault(module, set()).add(name)
    assert _static_imports() == lazy
    assert set(gs_splits.__all__) == {"__version__", *gs_splits._LAZY}


def test_importing_the_package_loads_no_numba():
    code = "import sys, gs_splits; print(sorted(m for m in sys.modules if m.split('.')[0] == 'numba' or m.startswith('gs_splits.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert out.stdout.strip() == "['gs_splits.__about__']"


def test_dir_lists_the_public_names_and_every_exception_the_docstrings_name():
    """``dir(gs_splits)`` showed the module's own helpers (Any, importlib, TYPE_CHECKING), and
    ``structural_split``'s docstring names ``TiedPropertyError``, which the package lacked."""
    names = [n for n in dir(gs_splits) if not n.startswith("__")]
    assert set(names) == set(gs_splits._LAZY)
    assert issubclass(gs_splits.TiedPropertyError, ValueError)
