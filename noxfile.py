"""Developer sessions for the gs monorepo.

Quick reference (run from the repository root)::

    nox -s tests            # every package session, then the cross-package tests in tests/
    nox -s tests-gs_splits  # one package, alone in a fresh environment
    nox -s lint             # ruff + import-linter (the layering contracts)
    nox -s build            # wheel + sdist of all six distributions into dist/
    nox -s demo             # the main job on the embedded (synthetic) default graph

Every package session creates a fresh virtual environment and installs *only* that
package, its declared dependencies and its ``test`` extra (local sibling packages are
installed from their source folders, since they are not on PyPI yet). This is how we
prove that each distribution installs and works alone.

Environments are created with uv, which hard-links packages from its cache: a fresh
environment with torch takes seconds instead of a minute. uv does not read pip's
configuration, so when pip is configured with a local ``find-links`` folder (as on the
project's CI machines, where the CPU build of torch lies on disk) we pass that folder
to uv as ``UV_FIND_LINKS``. Without it, ``torch==2.13.0`` may resolve to a multi-GB
CUDA build on Linux; set ``UV_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu``
yourself if you want the CPU build from the PyTorch index.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import nox

ROOT = pathlib.Path(__file__).parent.resolve()

nox.options.default_venv_backend = "uv|venv"
nox.options.sessions = ["lint", "tests"]
nox.options.error_on_missing_interpreters = True

# distribution -> (folder, import name, local distributions it depends on, extras for its tests)
PACKAGES: dict[str, tuple[str, str, tuple[str, ...], tuple[str, ...]]] = {
    "gs-splits": ("packages/gs-splits", "gs_splits", (), ("test",)),
    "gs-metrics": ("packages/gs-metrics", "gs_metrics", (), ("test", "reference", "plot")),
    "gs-data": ("packages/gs-data", "gs_data", ("gs-splits",), ("test", "track")),
    "gs-models": ("packages/gs-models", "gs_models", (), ("test",)),
    "gs-algos": ("packages/gs-algos", "gs_algos", ("gs-models", "gs-metrics"), ("test",)),
    "gs-bench": (
        "apps/bench",
        "gs_bench",
        ("gs-splits", "gs-data", "gs-models", "gs-metrics", "gs-algos"),
        ("test",),
    ),
}


def _pip_find_links() -> list[str]:
    """The find-links folders that pip is configured with on this machine (may be empty)."""
    try:
        out = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    links: list[str] = []
    for line in out.splitlines():
        key, _, value = line.partition("=")
        if key.strip().endswith("find-links"):
            for item in value.strip().strip("'\"").split():
                if item and item not in links and os.path.exists(item.removeprefix("file://")):
                    links.append(item)
    return links


def _uv_env() -> dict[str, str]:
    env: dict[str, str] = {}
    if "UV_FIND_LINKS" not in os.environ:
        links = _pip_find_links()
        if links:
            env["UV_FIND_LINKS"] = " ".join(links)
    return env


os.environ.update(_uv_env())


def _install_local(session: nox.Session, dist: str, extras: tuple[str, ...] = ()) -> None:
    """Install `dist` and the local distributions it needs, all in one resolver call."""
    folder, _, local_deps, _ = PACKAGES[dist]
    targets = [str(ROOT / PACKAGES[dep][0]) for dep in _closure(local_deps)]
    spec = str(ROOT / folder)
    if extras:
        spec = f"{spec}[{','.join(extras)}]"
    session.install(*targets, spec)


def _closure(deps: tuple[str, ...]) -> list[str]:
    seen: list[str] = []
    stack = list(deps)
    while stack:
        dep = stack.pop()
        if dep in seen:
            continue
        seen.append(dep)
        stack.extend(PACKAGES[dep][2])
    # install lower layers first (stable order for reproducible logs)
    order = list(PACKAGES)
    return sorted(seen, key=order.index)


def _pytest(session: nox.Session, *paths: str) -> None:
    args = list(session.posargs) or ["-q"]
    session.run(
        "python",
        "-m",
        "pytest",
        *args,
        *paths,
        env={"GS_NOX_SESSION": session.name},
    )


def _make_package_session(dist: str) -> None:
    folder, module, _, test_extras = PACKAGES[dist]
    name = f"tests-{module}"

    @nox.session(name=name)
    def _session(session: nox.Session) -> None:
        _install_local(session, dist, test_extras)
        _pytest(session, f"{folder}/tests")

    _session.__doc__ = f"Install only {dist} (+ its declared deps) in a fresh env and run its tests."


for _dist in PACKAGES:
    _make_package_session(_dist)


@nox.session(name="tests-gs_metrics-no-torch")
def tests_gs_metrics_no_torch(session: nox.Session) -> None:
    """gs-metrics alone without torch: its `test` and `plot` extras pull none, and its tests
    pass with torch also blocked at import (``GS_BLOCK_TORCH=1``)."""
    _install_local(session, "gs-metrics", ("test", "plot"))
    session.run("python", "-c", "import importlib.util as u, sys; sys.exit(u.find_spec('torch') is not None)")
    session.run("python", "-m", "pytest", *(session.posargs or ["-q"]), "packages/gs-metrics/tests",
                env={"GS_NOX_SESSION": session.name, "GS_BLOCK_TORCH": "1"})


@nox.session(name="tests-integration")
def tests_integration(session: nox.Session) -> None:
    """Cross-package tests in tests/ (everything installed together, plus import-linter)."""
    _install_local(session, "gs-bench", ("test",))
    session.install("import-linter>=2.1", "pytest>=8", "hypothesis>=6.100")
    _pytest(session, "tests")


@nox.session
def tests(session: nox.Session) -> None:
    """Every per-package session, then the cross-package tests."""
    for dist in PACKAGES:
        session.notify(f"tests-{PACKAGES[dist][1]}")
    session.notify("tests-gs_metrics-no-torch")
    session.notify("tests-integration")


@nox.session
def lint(session: nox.Session) -> None:
    """ruff (style, errors) and import-linter (the layering of docs/architecture.md)."""
    session.install("ruff>=0.6", "import-linter>=2.1")
    session.run("ruff", "check", ".")
    src_paths = os.pathsep.join(str(ROOT / folder / "src") for folder, *_ in PACKAGES.values())
    session.run("lint-imports", env={"PYTHONPATH": src_paths})


@nox.session
def build(session: nox.Session) -> None:
    """Wheel and sdist of every distribution, each carrying its own version, into dist/."""
    # hatchling is hatch's build backend: calling it directly builds exactly what `hatch build`
    # builds, without hatch creating a second, nested build environment per package.
    session.install("hatchling>=1.21")
    out = ROOT / "dist"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    for dist, (folder, module, _, _) in PACKAGES.items():
        with session.chdir(ROOT / folder):
            version = session.run("hatchling", "version", silent=True).strip()
            session.log(f"{dist} {version}")
            session.run("hatchling", "build", "-t", "wheel", "-t", "sdist", "-d", str(out))
        stem = f"{module}-{version}"
        built = sorted(p.name for p in out.glob(f"{stem}*"))
        if not any(n.endswith(".whl") for n in built) or not any(n.endswith(".tar.gz") for n in built):
            session.error(f"{dist}: expected a wheel and an sdist named {stem}*, found {built}")
    session.log("built: " + ", ".join(sorted(p.name for p in out.iterdir())))


@nox.session
def demo(session: nox.Session) -> None:
    """The main job on the embedded synthetic default graph (grows into the full benchmark)."""
    _install_local(session, "gs-bench")
    args = list(session.posargs) or ["--out", str(ROOT / "demo-output")]
    session.run("gs-bench", "demo", *args)
