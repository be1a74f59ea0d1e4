"""The package namespace (issue 57 item 5): ``import gs_splits`` eagerly imports the in-memory
API and nothing heavier (no numba, no out-of-core module); the out-of-core names live in the
sub-package ``gs_splits.ondisk``; no module answers unknown names through a PEP 562
``__getattr__``."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import gs_splits
import gs_splits.names
import gs_splits.properties

PACKAGE = Path(gs_splits.__file__).parent

#: what ``import gs_splits`` may load: the in-memory API (over numpy; scipy loads on first use)
LIGHT = {"gs_splits", "gs_splits.__about__", "gs_splits._atomic", "gs_splits.diagnostics", "gs_splits.graph",
         "gs_splits.names", "gs_splits.properties", "gs_splits.scientific", "gs_splits.split",
         "gs_splits.strategies"}

#: gs-splits 0.1.0's top-level out-of-core names, now ``gs_splits.ondisk.<name>``
MOVED = {"OnDiskCSR", "convert_edges", "open_ondisk", "pagerank_ondisk", "personalized_pagerank_ondisk",
         "clustering_coefficient_ondisk", "triangles_ondisk"}


def _fresh(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON value as its last line."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_importing_the_package_loads_no_numba_and_no_out_of_core_module():
    got = _fresh(
        "import json, sys, gs_splits\n"
        "mods = sorted(m for m in sys.modules if m.split('.')[0] in ('numba', 'llvmlite', 'gs_splits'))\n"
        "unresolved = [n for n in gs_splits.__all__ if not hasattr(gs_splits, n)]\n"
        "after = sorted(m for m in sys.modules if m.split('.')[0] in ('numba', 'llvmlite', 'gs_splits'))\n"
        "print(json.dumps({'mods': mods, 'unresolved': unresolved, 'after': after}))"
    )
    assert not [m for m in got["mods"] if m.split(".")[0] in ("numba", "llvmlite")]
    assert not [m for m in got["mods"] if m == "gs_splits.ondisk" or m.startswith("gs_splits.ondisk.")]
    assert set(got["mods"]) == LIGHT, "a new module imported by `import gs_splits`: is it light?"
    # every public name is there already: reading them loads nothing more (no lazy facade)
    assert got["unresolved"] == [] and got["after"] == got["mods"]


def test_the_first_call_loads_and_runs_the_numba_kernels():
    got = _fresh(
        "import json, sys, numpy as np, gs_splits\n"
        "before = 'numba' in sys.modules\n"
        "pr = gs_splits.pagerank(np.array([[0, 1, 2], [1, 2, 0]]))\n"
        "from gs_splits import _kernels\n"
        "print(json.dumps({'before': before, 'after': 'numba' in sys.modules, 'sum': float(pr.sum()),\n"
        "                  'compiled': [len(k.signatures) for k in (_kernels._count_endpoints, _kernels._pr_rows_ser)]}))"
    )
    assert got["before"] is False and got["after"] is True
    assert got["sum"] == pytest.approx(1.0)
    assert got["compiled"] == [1, 1]  # numba dispatchers, compiled (or loaded from its cache) for the call


def test_every_public_name_resolves_from_a_light_module():
    assert len(gs_splits.__all__) == len(set(gs_splits.__all__))
    for name in gs_splits.__all__:
        value = getattr(gs_splits, name)
        module = getattr(value, "__module__", None)
        if module is not None and module.startswith("gs_splits"):
            assert module in LIGHT, (name, module)
    # modules the package gives whole: all of their __all__
    assert set(gs_splits.names.__all__) <= set(gs_splits.__all__)
    assert set(gs_splits.properties.__all__) <= set(gs_splits.__all__)
    assert issubclass(gs_splits.TiedPropertyError, ValueError)  # structural_split's docstring names it


def test_the_out_of_core_names_moved_to_the_ondisk_sub_package():
    import gs_splits.ondisk as ondisk

    assert not MOVED & set(gs_splits.__all__)
    assert MOVED <= set(ondisk.__all__)
    for name in ondisk.__all__:
        value = getattr(ondisk, name)
        assert value.__module__ in ("gs_splits.ondisk.csr", "gs_splits.ondisk.properties"), name
    assert not MOVED & set(vars(gs_splits))  # gs_splits.OnDiskCSR is an AttributeError now


def test_no_module_answers_unknown_names_with_a_module_getattr():
    """PEP 562 ``__getattr__``/``__dir__`` at module level would hide what an import costs."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [f"{path.relative_to(PACKAGE)}: {node.name}" for node in tree.body
                  if isinstance(node, ast.FunctionDef) and node.name in ("__getattr__", "__dir__")]
    assert found == []
