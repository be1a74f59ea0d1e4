"""One definition (issue 31): a setting's accepted values and its default are written once, in
the package that owns them, and everyone else imports them.

* ``robustness_variant``: its values (``"good"``, ``"ours-v1"``) stand as a literal tuple, list
  or set in one place only, :data:`gs_algos.names.ROBUSTNESS_VARIANTS`; its default is written
  once, :data:`gs_algos.names.DEFAULT_ROBUSTNESS_VARIANT` (no ``robustness_variant = "good"``
  default and no ``.get("robustness_variant", "good")`` anywhere else);
* the light modules that hold such names (:mod:`gs_algos.names`, :mod:`gs_splits.names`) and the
  CLI that reads them at module top load neither torch nor numba.

The source checks read library sources, scripts and checks (not tests: a test may spell the
values out to pin them) and are also run on a copy with a planted second copy.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CODE_DIRS = ("packages", "apps")
SKIP_PARTS = {"tests", ".nox", "build", "dist", "__pycache__", "measured"}
VARIANTS = {"good", "ours-v1"}
THE_DEFINITION = "packages/gs-algos/src/gs_algos/names.py"


def _trees(root: Path) -> Iterator[tuple[str, ast.Module]]:
    for d in CODE_DIRS:
        for path in sorted((root / d).rglob("*.py")):
            rel = path.relative_to(root)
            if not SKIP_PARTS.intersection(rel.parts):
                yield rel.as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def _str(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def variant_value_lists(root: Path) -> list[str]:
    """Every literal tuple / list / set whose items are exactly the robustness variants."""
    return [f"{rel}:{node.lineno}"
            for rel, tree in _trees(root) for node in ast.walk(tree)
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and node.elts
            and all(_str(e) is not None for e in node.elts)
            and {_str(e) for e in node.elts} == VARIANTS]


def variant_defaults(root: Path) -> list[str]:
    """Every place that writes a default of ``robustness_variant`` as a string literal: a
    parameter or dataclass field of that name, a ``.get("robustness_variant", "...")``, or the
    ``DEFAULT_ROBUSTNESS_VARIANT = "..."`` assignment itself."""
    out = []
    for rel, tree in _trees(root):
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                a = node.args
                pos = [*a.posonlyargs, *a.args]
                pairs = [*zip(pos[len(pos) - len(a.defaults):], a.defaults, strict=True),
                         *zip(a.kwonlyargs, a.kw_defaults, strict=True)]
                out += [f"{rel}:{node.lineno}" for arg, d in pairs
                        if arg.arg == "robustness_variant" and _str(d) is not None]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                if node.target.id in ("robustness_variant", "DEFAULT_ROBUSTNESS_VARIANT") and _str(node.value):
                    out.append(f"{rel}:{node.lineno}")
            elif isinstance(node, ast.Assign) and _str(node.value) is not None:
                if any(isinstance(t, ast.Name) and t.id == "DEFAULT_ROBUSTNESS_VARIANT" for t in node.targets):
                    out.append(f"{rel}:{node.lineno}")
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr in ("get", "setdefault", "pop") and len(node.args) == 2
                  and _str(node.args[0]) == "robustness_variant" and _str(node.args[1]) is not None):
                out.append(f"{rel}:{node.lineno}")
    return out


@pytest.mark.parametrize("check", [variant_value_lists, variant_defaults])
def test_robustness_variant_is_defined_once(check):
    found = check(ROOT)
    assert len(found) == 1 and found[0].startswith(f"{THE_DEFINITION}:"), (
        f"{check.__name__}: expected one, in {THE_DEFINITION}; found {found}")


@pytest.mark.parametrize(("check", "planted"), [
    (variant_value_lists, 'CHOICES = ["ours-v1", "good"]\n'),
    (variant_defaults, 'def f(robustness_variant="good"):\n    return robustness_variant\n'),
    (variant_defaults, 'def f(settings):\n    return settings.get("robustness_variant", "good")\n'),
])
def test_a_planted_second_definition_is_caught(check, planted, tmp_path):
    copy = tmp_path / "tree"
    for d in CODE_DIRS:
        shutil.copytree(ROOT / d, copy / d, ignore=shutil.ignore_patterns(*SKIP_PARTS, "*.png", "*.jsonl"))
    (copy / "apps/bench/src/gs_bench/_planted.py").write_text(planted, encoding="utf-8")
    assert len(check(copy)) == 2


def test_the_light_modules_load_neither_torch_nor_numba():
    code = ("import sys, gs_algos.names, gs_splits.names, gs_bench.cli\n"
            "print(sorted({'torch', 'numba', 'torch_geometric'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         timeout=300)
    assert out.stdout.strip() == "[]"
