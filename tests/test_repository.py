"""Repository-level promises: CI runs the README's test command; every distribution is
installed with its own version; the dependency graph between distributions is the layering."""

from __future__ import annotations

import importlib
import importlib.util
import re

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

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
    local = {Requirement(r).name for r in _requirements(dist)} & set(DISTS)
    assert local <= ALLOWED[dist], f"{dist} depends on {local - ALLOWED[dist]} (not allowed)"


def _requirements(dist: str) -> list[str]:
    """Every requirement string of a distribution's pyproject (dependencies and extras)."""
    project = tomllib.loads((ROOT / DISTS[dist][0] / "pyproject.toml").read_text())["project"]
    reqs = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        reqs += extra
    return reqs


def _tree_versions() -> dict[str, str]:
    out = {}
    for dist, (folder, module) in DISTS.items():
        about = (ROOT / folder / "src" / module / "__about__.py").read_text()
        out[dist] = re.search(r'__version__\s*=\s*"([^"]+)"', about).group(1)
    return out


def sibling_range_problems(versions: dict[str, str]) -> list[str]:
    """Sibling requirements that have no compatible range or do not admit the sibling's version.

    A compatible range is ``>=X.Y,<X.(Y+1)`` while X is 0 and ``>=X.Y,<(X+1)`` from 1.0 on
    (``gs-splits>=0.1,<0.2``); ``versions`` maps each distribution to its version in the tree."""
    problems = []
    for dist in DISTS:
        for text in _requirements(dist):
            req = Requirement(text)
            if req.name not in DISTS:
                continue
            lower = [s for s in req.specifier if s.operator == ">="]
            upper = [s for s in req.specifier if s.operator == "<"]
            if len(req.specifier) != 2 or len(lower) != 1 or len(upper) != 1:
                problems.append(f"{dist}: {text} is not a '>=X.Y,<X.(Y+1)' range")
                continue
            low = Version(lower[0].version)
            want_upper = f"0.{low.minor + 1}" if low.major == 0 else f"{low.major + 1}"
            if Version(upper[0].version) != Version(want_upper):
                problems.append(f"{dist}: {text} should end at <{want_upper}")
            if not req.specifier.contains(versions[req.name], prereleases=True):
                problems.append(f"{dist}: {text} does not admit {req.name} {versions[req.name]} of the tree")
    return problems


def test_sibling_ranges_are_compatible_ranges_that_admit_the_tree_versions():
    problems = sibling_range_problems(_tree_versions())
    assert not problems, "\n".join(problems)
    # every local dependency has a range (none is a bare name)
    for dist in DISTS:
        for text in _requirements(dist):
            req = Requirement(text)
            assert req.name not in DISTS or req.specifier, f"{dist}: {text}"


def test_a_sibling_release_outside_a_range_is_caught():
    versions = _tree_versions()
    bumped = Version(versions["gs-splits"])
    versions["gs-splits"] = f"{bumped.major}.{bumped.minor + 1}.0"
    problems = sibling_range_problems(versions)
    assert any(p.startswith("gs-data: gs-splits") for p in problems), problems
    assert any(p.startswith("gs-bench: gs-splits") for p in problems), problems


def test_third_party_requirements_are_ranges_not_pins():
    for dist in DISTS:
        for text in _requirements(dist):
            req = Requirement(text)
            if req.name in DISTS:
                continue
            ops = {s.operator for s in req.specifier}
            assert ">=" in ops, f"{dist}: {text} has no lower bound"
            assert not ops & {"==", "==="}, f"{dist}: {text} is a pin (pins belong in .ci/constraints.txt)"


def test_ci_pins_torch_in_the_constraints_file_and_the_pin_is_in_every_torch_range():
    pins = re.findall(r"^torch==(\S+)\s*$", (ROOT / ".ci" / "constraints.txt").read_text(), flags=re.M)
    assert pins == ["2.13.0"]
    ranges = [
        Requirement(text).specifier
        for dist in DISTS
        for text in _requirements(dist)
        if Requirement(text).name == "torch"
    ]
    assert ranges, "no distribution declares torch"
    for spec in ranges:
        assert spec.contains(pins[0]) and spec.contains("2.14.0"), spec


# ---------------------------------------------------------------- issue 33: what users have
_MINOR = re.compile(r"Programming Language :: Python :: (3\.\d+)$")


def _minors(dist: str) -> list[str]:
    project = tomllib.loads((ROOT / DISTS[dist][0] / "pyproject.toml").read_text())["project"]
    return sorted((m.group(1) for c in project["classifiers"] if (m := _MINOR.match(c))),
                  key=lambda v: int(v.split(".")[1]))


def test_python_versions_claimed_agree_everywhere():
    """Every pyproject claims the same minors (classifiers), requires-python starts at the
    lowest, the README says the same range, and CI runs each (.ci/pythons.py, .ci/run)."""
    minors = _minors("gs-splits")
    assert minors and all(_minors(d) == minors for d in DISTS)
    for dist in DISTS:
        project = tomllib.loads((ROOT / DISTS[dist][0] / "pyproject.toml").read_text())["project"]
        assert project["requires-python"] == f">={minors[0]}", dist
    readme = (ROOT / "README.md").read_text()
    assert f"Python {minors[0]} to {minors[-1]}" in readme
    assert "3.10+ works" not in readme
    spec = importlib.util.spec_from_file_location("ci_pythons", ROOT / ".ci" / "pythons.py")
    pythons = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pythons)
    assert pythons.claimed_minors() == minors
    ci = (ROOT / ".ci" / "run").read_text()
    assert "python .ci/pythons.py --check" in ci
    assert "--force-python \"$interpreter\" -s tests-gs_splits tests-gs_metrics-no-torch" in ci
    assert "tests-gs_metrics-no-torch tests-gs_splits-slow" in ci  # gs-splits' out-of-core tests too


def test_ci_runs_the_data_sessions_without_the_shared_datasets():
    """A test that needs ../shared and fails (instead of skipping) without it fails CI."""
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert 'GS_SHARED_DATA="$empty" python -m nox -s tests-gs_data tests-gs_bench' in ci


def test_the_torch_lower_bound_is_the_version_tested_and_named_in_releasing():
    bounds = set()
    for dist in DISTS:
        for text in _requirements(dist):
            req = Requirement(text)
            if req.name == "torch":
                lows = [s.version for s in req.specifier if s.operator == ">="]
                assert len(lows) == 1, f"{dist}: {text}"
                bounds.add(lows[0])
    assert len(bounds) == 1, f"one torch lower bound for all packages, found {sorted(bounds)}"
    bound = bounds.pop()
    releasing = (ROOT / "docs" / "releasing.md").read_text()
    assert re.search(rf"torch {re.escape(bound)}\.\d+ \(the oldest torch the suite ran on", releasing)
