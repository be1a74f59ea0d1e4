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


def test_real_tree_keeps_the_layering():
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "broken" not in result.stdout.lower() or "0 broken" in result.stdout.lower()


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
