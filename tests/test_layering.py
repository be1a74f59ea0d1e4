"""The import layering of docs/architecture.md is enforced by import-linter.

This test runs the real contracts on the real tree (must pass), then on a copy of the tree
in which a lower package imports a higher one (must fail), so a silently broken contract
cannot go unnoticed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: gs-bench brings tomli there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
SRC_DIRS = [
    "packages/gs-splits/src",
    "packages/gs-data/src",
    "packages/gs-models/src",
    "packages/gs-metrics/src",
    "packages/gs-algos/src",
    "apps/bench/src",
]


def _lint_imports(tree: Path) -> subprocess.CompletedProcess:
    exe = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    if not Path(exe).exists():
        pytest.fail("import-linter is not installed in this environment (nox installs it)")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(str(tree / d) for d in SRC_DIRS)
    return subprocess.run(
        [exe, "--config", str(tree / "pyproject.toml"), "--no-cache"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _copy_tree(dst: Path) -> None:
    shutil.copy2(ROOT / "pyproject.toml", dst / "pyproject.toml")
    for d in SRC_DIRS:
        shutil.copytree(ROOT / d, dst / d, ignore=shutil.ignore_patterns("__pycache__"))


def _contract_names() -> list[str]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return [c["name"] for c in tomllib.load(f)["tool"]["importlinter"]["contracts"]]


def test_real_tree_keeps_the_layering():
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    # every contract of pyproject.toml was checked and kept (none skipped, none broken)
    names = _contract_names()
    assert len(names) >= 3
    for name in names:
        assert f"{name} KEPT" in result.stdout, result.stdout
    assert f"Contracts: {len(names)} kept, 0 broken." in result.stdout, result.stdout


@pytest.mark.parametrize(
    ("lower", "upper"),
    [("packages/gs-splits/src/gs_splits", "gs_bench"), ("packages/gs-metrics/src/gs_metrics", "gs_models")],
)
def test_upward_import_is_caught(tmp_path, lower, upper):
    _copy_tree(tmp_path)
    bad = tmp_path / lower / "_upward_import.py"
    bad.write_text(f"import {upper}  # deliberately breaks the layering\n")
    result = _lint_imports(tmp_path)
    assert result.returncode != 0, result.stdout
    assert "BROKEN" in result.stdout.upper()


def test_torch_import_in_gs_splits_is_caught(tmp_path):
    _copy_tree(tmp_path)
    bad = tmp_path / "packages/gs-splits/src/gs_splits/_torch_import.py"
    bad.write_text("import torch  # gs-splits must stay torch-free\n")
    result = _lint_imports(tmp_path)
    assert result.returncode != 0, result.stdout


# ------------------------------------------------------------------ no training loops in gs-models
#: calls / names that make a training loop: an optimizer, a backward pass, an optimizer step
_TRAINING_MARKERS = ("backward", "zero_grad", "optim", "fit")


def _training_loop_sites(src: Path) -> list[str]:
    """``file:line name`` of every training-loop marker in the Python files under ``src``.

    Markers: ``x.backward()``, ``opt.zero_grad()``, any ``torch.optim`` reference and a
    function or method named ``fit``. Found by parsing (not text search), so comments and
    docstrings that *mention* training do not count.
    """
    import ast

    sites = []
    for path in sorted(src.rglob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            name = None
            if isinstance(node, ast.Attribute) and node.attr in _TRAINING_MARKERS:
                name = node.attr
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "fit":
                name = "def fit"
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                mods = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                if any(m == "torch.optim" or m.startswith("torch.optim.") for m in mods):
                    name = "import torch.optim"
            if name is not None:
                sites.append(f"{path.relative_to(src)}:{node.lineno} {name}")
    return sites


def test_gs_models_keeps_no_training_loop():
    """Architecture: anything that trains a model lives in gs-algos; gs-models keeps the
    networks and their inference (GMNN / EPFGNN EM training: ``gs_algos.em``)."""
    sites = _training_loop_sites(ROOT / "packages/gs-models/src/gs_models")
    assert sites == [], "training code found in gs-models: " + ", ".join(sites)


def test_a_training_loop_in_gs_models_is_caught(tmp_path):
    shutil.copytree(ROOT / "packages/gs-models/src/gs_models", tmp_path / "gs_models",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "gs_models" / "_loop.py").write_text(
        "import torch\n\n\ndef train(model, loss_fn):\n"
        "    opt = torch.optim.Adam(model.parameters())\n"
        "    loss = loss_fn(model)\n    loss.backward()\n    opt.step()\n"
    )
    sites = _training_loop_sites(tmp_path / "gs_models")
    assert any(s.startswith("_loop.py:5 optim") for s in sites), sites
    assert any(s.startswith("_loop.py:7 backward") for s in sites), sites
