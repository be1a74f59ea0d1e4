"""The seams between modules and packages (issue 31).

* No private cross-package import: code of one package (library sources, benchmarks, checks;
  not tests) never imports another package's private module (``gs_data._io``) or private name
  (``from gs_data.geometric import _data_file``); it uses the owner's public names. Inside
  gs-bench's library no module imports a private name of a sibling (the runners once took
  ``_root`` from the structural runner). The
  import-linter ``protected`` contracts of the root ``pyproject.toml`` enforce the module half
  in ``nox -s lint`` as well; this test also checks that they list every private module.
* No import circle among gs-bench's modules. Module-level and function-level imports both
  count (a function-level import that closes a circle only hides it until the function runs),
  as do the parent packages an import executes (not those of the importing module itself,
  which ran before it: a suite package's ``job`` importing its ``spec`` is no circle with the
  package's ``__init__``, which imports both); ``importlib.import_module`` with a computed
  name (``gs_bench.runners.load_runner``) is not an import statement and does not count.

Each check is also run on a copy of the tree with a planted offence, and must fail there.
"""

from __future__ import annotations

import ast
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: gs-bench brings tomli there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
CODE_DIRS = ("packages", "apps")
SKIP_PARTS = {"tests", ".nox", "build", "dist", "__pycache__", "measured"}
BENCH_SRC = "apps/bench/src"


def _package_of(rel: Path) -> str | None:
    """The import package a file belongs to: ``packages/gs-data/...`` -> ``gs_data``."""
    if rel.parts[:2] == ("apps", "bench"):
        return "gs_bench"
    if rel.parts[0] == "packages" and len(rel.parts) > 1:
        return rel.parts[1].replace("-", "_")
    return None


def _code(root: Path) -> Iterator[tuple[Path, str, ast.Module]]:
    for d in CODE_DIRS:
        for path in sorted((root / d).rglob("*.py")):
            rel = path.relative_to(root)
            owner = _package_of(rel)
            if owner and not SKIP_PARTS.intersection(rel.parts):
                yield rel, owner, ast.parse(path.read_text(encoding="utf-8"))


def _private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def private_cross_package_imports(root: Path) -> list[str]:
    bad = []
    for rel, owner, tree in _code(root):
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [(node.module, [a.name for a in node.names])]
            elif isinstance(node, ast.Import):
                targets = [(a.name, []) for a in node.names]
            else:
                continue
            for module, names in targets:
                top, *rest = module.split(".")
                if top == owner == "gs_bench" and rel.parts[:3] == ("apps", "bench", "src"):
                    # inside gs-bench's library: no private *name* from a sibling module (a
                    # runner's helper that others need moves to a shared module under a
                    # public name, e.g. gs_bench.runners.common)
                    private = [n for n in names if _private(n)]
                elif not top.startswith("gs_") or top == owner:
                    continue
                else:
                    private = [p for p in rest if _private(p)] + [n for n in names if _private(n)]
                if private:
                    bad.append(f"{rel.as_posix()}:{node.lineno}: {owner} imports {module} "
                               f"{names or ''} (private: {', '.join(private)})")
    return bad


def test_no_private_cross_package_imports():
    assert private_cross_package_imports(ROOT) == []


def test_the_protected_contracts_list_every_private_module():
    with open(ROOT / "pyproject.toml", "rb") as f:
        contracts = tomllib.load(f)["tool"]["importlinter"]["contracts"]
    listed = {m for c in contracts if c["type"] == "protected" for m in c["protected_modules"]}
    found = set()
    for src in [*sorted(ROOT.glob("packages/*/src")), ROOT / BENCH_SRC]:
        for path in src.rglob("_*.py"):
            rel = path.relative_to(src).with_suffix("")
            if any(_private(p) for p in rel.parts) and "__pycache__" not in rel.parts:
                found.add(".".join(rel.parts))
    assert found == listed, f"private modules not protected: {sorted(found - listed)}; " \
                            f"protected but gone: {sorted(listed - found)}"


def _bench_modules(root: Path) -> dict[str, Path]:
    src = root / BENCH_SRC
    out = {}
    for path in sorted(src.rglob("*.py")):
        parts = path.relative_to(src).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imported(module: str, is_package: bool, tree: ast.Module, known: dict[str, Path]) -> set[str]:
    """The gs_bench modules an import statement anywhere in ``tree`` executes."""
    out: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = module.split(".") if is_package else module.split(".")[:-1]
                pkg = pkg[: len(pkg) - (node.level - 1)]
                base = ".".join([*pkg, *([base] if base else [])])
            names = [base] + [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in known]
        for name in names:
            parts = name.split(".")
            # the packages above ``module`` ran before it did: importing a sibling executes
            # them only where the statement names one of them itself
            out.update(p for p in (".".join(parts[:i]) for i in range(1, len(parts) + 1))
                       if p in known and (p == name or not module.startswith(p + ".")))
    out.discard(module)
    return out


def import_circles(root: Path) -> list[list[str]]:
    """Strongly connected groups of more than one gs_bench module (Tarjan)."""
    known = _bench_modules(root)
    graph = {m: _imported(m, p.name == "__init__.py", ast.parse(p.read_text(encoding="utf-8")), known)
             for m, p in known.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return circles


def test_no_import_circle_among_gs_bench_modules():
    assert import_circles(ROOT) == []


def _copy(tmp_path: Path) -> Path:
    copy = tmp_path / "tree"
    for d in CODE_DIRS:
        shutil.copytree(ROOT / d, copy / d, ignore=shutil.ignore_patterns(*SKIP_PARTS, "*.png", "*.jsonl"))
    return copy


@pytest.mark.parametrize("planted", [
    "from gs_data.geometric import _root\n",
    "import gs_data._io\n",
    "def f():\n    from gs_models.node import _CSRFeatures\n    return _CSRFeatures\n",
    "from gs_bench.runners.structural import _load\n",
])
def test_a_planted_private_import_is_caught(planted, tmp_path):
    copy = _copy(tmp_path)
    (copy / BENCH_SRC / "gs_bench/_planted.py").write_text(planted, encoding="utf-8")
    assert len(private_cross_package_imports(copy)) == 1


@pytest.mark.parametrize("planted", [
    # a function-level import back into a module that imports this one at the top
    ("gs_bench/preflight.py", "\n\ndef _planted():\n    from gs_bench.run import run_suite\n    return run_suite\n"),
    # a relative import from a runner into a module that imports the runners' common pieces
    ("gs_bench/runners/common.py", "\n\ndef _planted():\n    from ..runners import structural\n    return structural\n"),
    # a suite package's spec importing its package, whose __init__ imports the spec
    ("gs_bench/runners/lebed/spec.py", "\n\ndef _planted():\n    from gs_bench.runners.lebed import job\n    return job\n"),
])
def test_a_planted_circle_is_caught(planted, tmp_path):
    copy = _copy(tmp_path)
    path = copy / BENCH_SRC / planted[0]
    path.write_text(path.read_text(encoding="utf-8") + planted[1], encoding="utf-8")
    circles = import_circles(copy)
    assert len(circles) == 1 and f"gs_bench.{Path(planted[0]).with_suffix('').as_posix().split('/', 1)[1].replace('/', '.')}" in circles[0]
