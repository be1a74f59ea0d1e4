"""docs/architecture.md says which package imports which: that table must match the code.

The table's "imports" column is compared with each distribution's declared dependencies
(``pyproject.toml``) and with the ``gs_*`` modules its ``src/`` tree actually imports, and
the "Where does my change go" table must name files that exist.
"""

from __future__ import annotations

import ast
import re

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
FOLDERS = {
    "gs-splits": "packages/gs-splits",
    "gs-data": "packages/gs-data",
    "gs-models": "packages/gs-models",
    "gs-metrics": "packages/gs-metrics",
    "gs-algos": "packages/gs-algos",
    "gs-bench": "apps/bench",
}


def _doc_table() -> dict[str, set[str]]:
    """distribution -> the gs modules the docs say it imports."""
    rows = {}
    for line in DOC.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0] in FOLDERS:
            rows[cells[0]] = set(re.findall(r"gs_[a-z]+", cells[2]))
    return rows


def _declared(dist: str) -> set[str]:
    project = tomllib.loads((ROOT / FOLDERS[dist] / "pyproject.toml").read_text())["project"]
    names = {Requirement(r).name for r in project.get("dependencies", [])}
    return {n.replace("-", "_") for n in names if n in FOLDERS}


def _imported(dist: str) -> set[str]:
    module = dist.replace("-", "_")
    found = set()
    for path in (ROOT / FOLDERS[dist] / "src").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            found |= {n.split(".")[0] for n in names if n.startswith("gs_")}
    return found - {module}


def test_the_table_lists_every_distribution():
    assert set(_doc_table()) == set(FOLDERS)


@pytest.mark.parametrize("dist", sorted(FOLDERS))
def test_the_table_matches_the_declared_dependencies_and_the_imports(dist):
    doc = _doc_table()[dist]
    assert doc == _declared(dist), f"{dist}: docs say {sorted(doc)}, pyproject declares {sorted(_declared(dist))}"
    assert _imported(dist) == doc, f"{dist}: docs say {sorted(doc)}, src imports {sorted(_imported(dist))}"


def test_the_files_of_where_does_my_change_go_exist():
    text = DOC.read_text()
    section = text[text.index("## Where does my change go"):text.index("## Conventions")]
    paths = re.findall(r"`((?:packages|apps)/[^`]+?)`", section)
    assert len(paths) >= 8
    for p in paths:
        p = p.split(" ")[0].replace("<name>.toml", "")
        assert (ROOT / p).exists(), f"docs/architecture.md names {p}, which does not exist"


def _section(title: str) -> str:
    text = DOC.read_text()
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start:end]


def test_the_walk_of_one_job_names_objects_that_exist():
    """Every module, function, class, field or method that "One job, from TOML to record"
    names in backquotes resolves in the code (issue 57: the walk matches the code): dotted
    ``gs_bench`` paths from their module, ``SuiteConfig`` / ``Job`` members on those classes,
    the ``runner.<hook>`` calls on :class:`gs_bench.runner.Runner`."""
    import importlib

    import gs_bench.runner
    import gs_bench.suites

    section = _section("One job, from TOML to record")
    names = set(re.findall(r"`([A-Za-z_][\w.]*)(?:\([^`]*\))?`", section))
    roots = {"SuiteConfig": gs_bench.suites.SuiteConfig, "Job": gs_bench.suites.Job,
             "runner": gs_bench.runner.Runner}
    checked, missing = 0, []
    for name in sorted(names):
        head, _, rest = name.partition(".")
        if head == "gs_bench":
            parts = name.split(".")
            for i in range(len(parts), 0, -1):  # the longest importable module prefix
                try:
                    obj = importlib.import_module(".".join(parts[:i]))
                    break
                except ModuleNotFoundError:
                    continue
            attrs = parts[i:]
        elif head in roots and rest:
            obj, attrs = roots[head], rest.split(".")
        else:
            continue
        for a in attrs:
            if not hasattr(obj, a) and a not in getattr(obj, "__dataclass_fields__", {}):
                missing.append(name)
                break
            obj = getattr(obj, a, None)
        checked += 1
    assert checked >= 15, f"only {checked} names checked: has the section's wording changed?"
    assert not missing, f"docs/architecture.md names what the code does not have: {missing}"
