"""Repository-level promises: CI runs the README's test command; every distribution is
installed with its own version; the dependency graph between distributions is the layering."""

from __future__ import annotations

import importlib
import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DISTS = {
    "gs-splits": ("packages/gs-splits", "gs_splits"),
    "gs-data": ("packages/gs-data", "gs_data"),
    "gs-models": ("packages/gs-models", "gs_models"),
    "gs-metrics": ("packages/gs-metrics", "gs_metrics"),
    "gs-algos": ("packages/gs-algos", "gs_algos"),
    "gs-bench": ("apps/bench", "gs_bench"),
}
# which local distributions each one may depend on (docs/architecture.md)
ALLOWED = {
    "gs-splits": set(),
    "gs-data": {"gs-splits"},
    "gs-models": {"gs-data", "gs-splits"},
    "gs-metrics": set(),
    "gs-algos": {"gs-models", "gs-metrics", "gs-data", "gs-splits"},
    "gs-bench": set(DISTS) - {"gs-bench"},
}


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"^(python -m pip install .*nox -s tests)$", readme, flags=re.M)
    assert len(commands) == 1, f"README must show exactly one test command, found {commands}"
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert commands[0] in ci, ".ci/run must run the README's test command exactly as written"


@pytest.mark.parametrize("dist", sorted(DISTS))
def test_installed_version_is_the_package_version(dist):
    folder, module = DISTS[dist]
    about = (ROOT / folder / "src" / module / "__about__.py").read_text()
    declared = re.search(r'__version__\s*=\s*"([^"]+)"', about).group(1)
    assert metadata.version(dist) == declared
    assert importlib.import_module(module).__version__ == declared


@pytest.mark.parametrize("dist", sorted(DISTS))
def test_local_dependencies_follow_the_layering(dist):
    folder, _ = DISTS[dist]
    project = tomllib.loads((ROOT / folder / "pyproject.toml").read_text())["project"]
    assert project["name"] == dist
    reqs = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        reqs += extra
    local = {re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0] for r in reqs} & set(DISTS)
    assert local <= ALLOWED[dist], f"{dist} depends on {local - ALLOWED[dist]} (not allowed)"


def test_torch_pinned_exactly_wherever_required():
    for folder, _ in DISTS.values():
        project = tomllib.loads((ROOT / folder / "pyproject.toml").read_text())["project"]
        reqs = list(project.get("dependencies", []))
        for extra in project.get("optional-dependencies", {}).values():
            reqs += extra
        for r in reqs:
            if re.match(r"torch\b(?![-_])", r):
                assert r.replace(" ", "") == "torch==2.13.0", f"{folder}: {r}"
