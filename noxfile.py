"""Developer sessions for the gs monorepo.

Quick reference (run from the repository root)::

    nox -s tests            # every package session, then the cross-package tests in tests/
    nox -s tests-gs_splits  # one package, alone in a fresh environment (gs-splits: not the
                            # tests marked slow, which tests-gs_splits-slow runs)
    nox -s lint             # ruff + import-linter (the layering contracts)
    nox -s build            # wheel + sdist of all six distributions into dist/
    nox -s demo             # the main job on the embedded (synthetic) default graph
    nox -s tests-lowest     # every package with its direct dependencies at their lower bounds
    nox -s release -- gs-splits minor   # bump, check, build, test the wheel, commit, tag
                                        # (docs/releasing.md; nothing is uploaded)

Versions: each package declares the *ranges* it supports (users install it next to their own
torch); the CI *pins* live in ``.ci/constraints.txt`` and every session below installs with
``-c .ci/constraints.txt``, except ``tests-lowest``, which resolves each package's direct
dependencies to their lowest allowed versions (uv ``--resolution lowest-direct``).

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
import re
import shutil
import subprocess
import sys
import tempfile

import nox

try:  # Python 3.11+; nox itself brings tomli on 3.10
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = pathlib.Path(__file__).parent.resolve()
sys.path.insert(0, str(ROOT / ".ci"))
import wheelenv  # noqa: E402  (shared with tests/test_wheels.py)

CONSTRAINTS = ROOT / ".ci" / "constraints.txt"
#: the Python minor the CI pins were resolved on; on any other minor (3.10, 3.12, ... run with
#: ``nox --force-python``, see .ci/run) the package sessions install the newest releases within
#: the packages' ranges instead, since the pins name releases that exist for this minor only
#: (numpy 2.4 has no 3.10 wheels, ...)
PINNED_PYTHON = "3.11"
# tests-lowest: only what cannot come from the lower bounds themselves (see the file).
LOWEST_CONSTRAINTS = ROOT / ".ci" / "constraints-lowest.txt"

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


# Package sessions whose tests run on two pytest-xdist workers (``-n 2 --dist loadfile``: each
# test file stays on one worker, so module-scoped fixtures are built once). Only where the tests
# take minutes: a worker pays its own start and test collection. Passing pytest arguments after
# ``--`` replaces these defaults (``nox -s tests-gs_data -- -q -k foo`` runs serially).
XDIST_WORKERS: dict[str, int] = {"gs-data": 2, "gs-algos": 2, "gs-bench": 2}
XDIST_REQUIREMENT = "pytest-xdist>=3.5"

# Packages whose tests marked ``slow`` run in a session of their own, ``tests-<module>-slow``:
# ``tests-<module>`` deselects them (``-m "not slow"``) for a quick check while editing, and
# ``nox -s tests`` (CI) runs both sessions, so every test still runs there.
SLOW_SESSIONS: set[str] = {"gs-splits"}


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


def _install_local(
    session: nox.Session, dist: str, extras: tuple[str, ...] = (), *, lowest: bool = False,
    also: tuple[str, ...] = (),
) -> None:
    """Install `dist` and the local distributions it needs, all in one resolver call.

    With the CI pins of .ci/constraints.txt, or (``lowest``) with every direct dependency at
    the lowest version its range allows (uv's ``--resolution lowest-direct``). ``also``: more
    requirements for the session's own use (the test runner's plugins)."""
    folder, _, local_deps, _ = PACKAGES[dist]
    targets = [str(ROOT / PACKAGES[dep][0]) for dep in _closure(local_deps)]
    spec = str(ROOT / folder)
    if extras:
        spec = f"{spec}[{','.join(extras)}]"
    if lowest:
        pins = ["--resolution", "lowest-direct", "-c", str(LOWEST_CONSTRAINTS)]
    else:
        pins = _ci_pins(session)
    session.install(*pins, *targets, spec, *also)


def _session_python(session: nox.Session) -> str:
    """``major.minor`` of the session's interpreter."""
    out = session.run("python", "-c", "import sys; print('%d.%d' % sys.version_info[:2])",
                      silent=True, log=False)
    return str(out).strip().splitlines()[-1]


def _ci_pins(session: nox.Session) -> list[str]:
    """``-c .ci/constraints.txt`` on the Python the pins were resolved on, else nothing."""
    minor = _session_python(session)
    if minor == PINNED_PYTHON:
        return ["-c", str(CONSTRAINTS)]
    session.log(f"Python {minor}: no CI pins (they are for {PINNED_PYTHON}); installing the newest "
                "releases within the packages' ranges")
    return []


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


def _pytest(
    session: nox.Session, *paths: str, isolated_as: str | None = None, env: dict | None = None,
    workers: int = 0, markers: str | None = None,
) -> None:
    """pytest in the session's environment. ``isolated_as`` names the package session whose
    isolation this environment has (its tests may then check, e.g., that torch is absent).
    ``workers``: run the tests on that many pytest-xdist workers, a test file per worker at a
    time (unless pytest arguments were given after ``--``). ``markers``: the session's ``-m``
    selection, kept with pytest arguments given after ``--`` (a later ``-m`` there wins)."""
    xdist = ["-n", str(workers), "--dist", "loadfile"] if workers > 1 else []
    args = (["-m", markers] if markers else []) + (list(session.posargs) or ["-q", *xdist])
    session.run(
        "python",
        "-m",
        "pytest",
        *args,
        *paths,
        env={"GS_NOX_SESSION": isolated_as or session.name, **(env or {})},
    )


def _make_package_session(dist: str) -> None:
    folder, module, _, test_extras = PACKAGES[dist]
    name = f"tests-{module}"

    workers = XDIST_WORKERS.get(dist, 0)

    @nox.session(name=name)
    def _session(session: nox.Session) -> None:
        _install_local(session, dist, test_extras, also=(XDIST_REQUIREMENT,) if workers else ())
        # isolated_as: the name without the interpreter nox appends under --force-python
        _pytest(session, f"{folder}/tests", isolated_as=name, workers=workers,
                markers="not slow" if dist in SLOW_SESSIONS else None)

    _session.__doc__ = f"Install only {dist} (+ its declared deps) in a fresh env and run its tests."
    if dist in SLOW_SESSIONS:
        _session.__doc__ += " Not those marked slow: see the -slow session."

        @nox.session(name=f"{name}-slow")
        def _slow(session: nox.Session) -> None:
            _install_local(session, dist, test_extras, also=(XDIST_REQUIREMENT,) if workers else ())
            _pytest(session, f"{folder}/tests", isolated_as=name, workers=workers, markers="slow")

        _slow.__doc__ = f"As tests-{module}, the tests marked slow only."


def _make_lowest_session(dist: str) -> None:
    folder, module, _, test_extras = PACKAGES[dist]

    @nox.session(name=f"tests-lowest-{module}", venv_backend="uv")
    def _session(session: nox.Session) -> None:
        _install_local(session, dist, test_extras, lowest=True)
        # show what "lowest" resolved to: these are the versions the lower bounds were tested with
        session.run(_uv_bin(), "pip", "freeze", "--python", f"{session.bin}/python", external=True)
        _pytest(session, f"{folder}/tests", isolated_as=f"tests-{module}")

    _session.__doc__ = (
        f"{dist} alone, its direct dependencies at their lowest allowed versions (uv lowest-direct)."
    )


for _dist in PACKAGES:
    _make_package_session(_dist)
    _make_lowest_session(_dist)


@nox.session(name="tests-lowest", venv_backend="none")
def tests_lowest(session: nox.Session) -> None:
    """Every package with its direct dependencies resolved to their lower bounds."""
    for dist in PACKAGES:
        session.notify(f"tests-lowest-{PACKAGES[dist][1]}")


@nox.session(name="tests-gs_metrics-no-torch")
def tests_gs_metrics_no_torch(session: nox.Session) -> None:
    """gs-metrics alone without torch: its `test` and `plot` extras pull none, and its tests
    pass with torch also blocked at import (``GS_BLOCK_TORCH=1``)."""
    _install_local(session, "gs-metrics", ("test", "plot"))
    session.run("python", "-c", "import importlib.util as u, sys; sys.exit(u.find_spec('torch') is not None)")
    session.run("python", "-m", "pytest", *(session.posargs or ["-q"]), "packages/gs-metrics/tests",
                env={"GS_NOX_SESSION": "tests-gs_metrics-no-torch", "GS_BLOCK_TORCH": "1"})


@nox.session(name="tests-integration")
def tests_integration(session: nox.Session) -> None:
    """Cross-package tests in tests/ (everything installed together, plus import-linter)."""
    _install_local(session, "gs-bench", ("test",))
    # hatchling and packaging: tests/test_wheels.py builds the six wheels and reads their metadata
    session.install(
        "-c", str(CONSTRAINTS), "import-linter>=2.1", "pytest>=8", "hypothesis>=6.100",
        "hatchling>=1.26", "packaging>=24",
    )
    _pytest(session, "tests", env={"GS_UV": _uv_bin()})


def _uv_bin() -> str:
    """The uv that nox itself uses (`pip install 'nox[uv]'` brings it), else uv on PATH."""
    try:
        from nox.virtualenv import UV  # type: ignore[attr-defined]
    except ImportError:
        UV = None
    found = UV if UV and os.path.exists(UV) else shutil.which(UV or "uv")
    return found or wheelenv.uv_executable()


@nox.session
def tests(session: nox.Session) -> None:
    """Every per-package session, then the cross-package tests."""
    for dist in PACKAGES:
        session.notify(f"tests-{PACKAGES[dist][1]}")
        if dist in SLOW_SESSIONS:
            session.notify(f"tests-{PACKAGES[dist][1]}-slow")
    session.notify("tests-gs_metrics-no-torch")
    session.notify("tests-integration")


@nox.session
def lint(session: nox.Session) -> None:
    """ruff (style, errors) and import-linter (the layering of docs/architecture.md)."""
    session.install("-c", str(CONSTRAINTS), "ruff>=0.6", "import-linter>=2.1")
    session.run("ruff", "check", ".")
    src_paths = os.pathsep.join(str(ROOT / folder / "src") for folder, *_ in PACKAGES.values())
    session.run("lint-imports", env={"PYTHONPATH": src_paths})


@nox.session
def build(session: nox.Session) -> None:
    """Wheel and sdist of every distribution, each carrying its own version, into dist/."""
    # hatchling is hatch's build backend: calling it directly builds exactly what `hatch build`
    # builds, without hatch creating a second, nested build environment per package.
    session.install("-c", str(CONSTRAINTS), "hatchling>=1.26")
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


@nox.session
def docs(session: nox.Session) -> None:
    """The docs site into build/docs/site: sources generated by docs/site/build_site.py (quick
    starts, API reference, CLI reference, suites and settings, measured tables), built with
    ``mkdocs build --strict`` (any warning fails, a dead link or anchor between pages
    included), then every page in headless Chromium (docs/site/test_site.py; without a
    browser it skips, unless GS_REQUIRE_BROWSER=1), then every code block of the READMEs and
    docs as written (docs/site/readme_blocks.py)."""
    _install_local(session, "gs-bench", also=("mkdocs>=1.6", "mkdocstrings[python]>=0.26",
                                              "playwright>=1.45", "pytest>=8", "pip"))
    out = ROOT / "build" / "docs"
    session.run("python", str(ROOT / "docs" / "site" / "build_site.py"), "--build", "--out", str(out))
    session.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", *session.posargs,
                str(ROOT / "docs" / "site" / "test_site.py"), env={"GS_DOCS_SITE": str(out / "site")})
    # every README / docs code block as written, each alone (docs/site/readme_blocks.py); this
    # session's environment is a throwaway, so the blocks that pip-install may run here
    session.run("python", str(ROOT / "docs" / "site" / "readme_blocks.py"), "--allow-install")


RELEASE_USAGE = (
    "usage: nox -s release -- <distribution> <bump> [--no-tag]\n"
    f"  <distribution>: one of {', '.join(PACKAGES)}\n"
    "  <bump>: what `hatch version` accepts: major, minor, patch, release, dev, ... or a version\n"
    "  --no-tag: do everything but create the tag"
)


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.rstrip()


def _changelog_entry(changelog: pathlib.Path, version: str) -> str:
    """The text of the ``## <version>`` section of a CHANGELOG ('' when there is none)."""
    lines = changelog.read_text().splitlines()
    head = re.compile(rf"^##\s+\[?{re.escape(version)}\]?(\s|$)")
    body: list[str] = []
    inside = False
    for line in lines:
        if line.startswith("## "):
            if inside:
                break
            inside = bool(head.match(line))
            continue
        if inside:
            body.append(line)
    return "\n".join(body).strip()


def _dependants_refusing(dist: str, version: str) -> list[str]:
    """Sibling requirements on ``dist`` whose range does not admit ``version``."""
    from packaging.requirements import Requirement

    refusing = []
    for other, (folder, *_rest) in PACKAGES.items():
        project = tomllib.loads((ROOT / folder / "pyproject.toml").read_text())["project"]
        reqs = list(project.get("dependencies", []))
        for extra in project.get("optional-dependencies", {}).values():
            reqs += extra
        for text in reqs:
            req = Requirement(text)
            if req.name == dist and not req.specifier.contains(version, prereleases=True):
                refusing.append(f"{other}: {text}")
    return refusing


@nox.session(venv_backend="uv")
def release(session: nox.Session) -> None:
    """Bump, require a CHANGELOG entry, build sdist + wheel, twine check, test the wheel alone
    in a fresh environment, commit, tag <dist>-vX.Y.Z. Never uploads (docs/releasing.md)."""
    args = list(session.posargs)
    make_tag = "--no-tag" not in args
    args = [a for a in args if a != "--no-tag"]
    if len(args) != 2 or args[0] not in PACKAGES:
        session.error(RELEASE_USAGE)
    dist, bump = args
    folder, module, local_deps, test_extras = PACKAGES[dist]
    pkg = ROOT / folder
    about = pkg / "src" / module / "__about__.py"
    changelog = pkg / "CHANGELOG.md"
    changelog_rel = str(changelog.relative_to(ROOT))

    dirty = [
        line for line in _git("status", "--porcelain", "--untracked-files=all").splitlines()
        if line[3:] != changelog_rel
    ]
    if dirty:
        session.error(
            "the work tree must be clean (only the package's CHANGELOG.md may be edited), "
            "so that the tag holds exactly what was built; found:\n" + "\n".join(dirty)
        )

    session.install("-c", str(CONSTRAINTS), "hatchling>=1.26", "twine>=6.1", "packaging>=24")
    old = wheelenv.version_of(dist)
    saved = about.read_text()
    committed = False
    try:
        # `hatch version <bump>` is hatchling's version command; calling hatchling directly does
        # the same bump without hatch creating a nested build environment for it
        with session.chdir(pkg):
            session.run("hatchling", "version", bump)
        version = wheelenv.version_of(dist)
        tag = f"{dist}-v{version}"
        session.log(f"{dist}: {old} -> {version}")
        refusing = _dependants_refusing(dist, version)
        if refusing:
            session.warn(
                f"these ranges do not admit {dist} {version}; widen them and release those "
                "packages after this one (docs/releasing.md): " + "; ".join(refusing)
            )
        if not _changelog_entry(changelog, version):
            session.error(
                f"{changelog_rel} has no entry for {version}: add a '## {version}' section "
                "(with the changes it releases) and run the command again"
            )
        if make_tag and _git("tag", "--list", tag):
            session.error(f"tag {tag} exists already")

        out = ROOT / "dist" / f"{dist}-{version}"
        shutil.rmtree(out, ignore_errors=True)
        tools = f"{session.bin}/python"  # this session's environment, with hatchling
        files = wheelenv.build(dist, out, sdist=True, python=tools, log=session.log)
        session.run("twine", "check", "--strict", *map(str, files))
        wheel = next(p for p in files if p.suffix == ".whl")

        # the wheel alone in a fresh environment, then the package's own tests against it
        # (not session.create_tmp(): that would point TMPDIR into this session's virtualenv,
        # where Ray refuses its temp dir and gs-bench's ray tests hang)
        tmp = pathlib.Path(tempfile.mkdtemp(prefix=f"gs-release-{dist}-"))
        siblings = tmp / "siblings"  # local dependencies, built from this tree
        siblings.mkdir(parents=True)
        for dep in _closure(local_deps):
            wheelenv.build(dep, siblings, python=tools, log=session.log)
        python = wheelenv.fresh_env(tmp / "env", log=session.log)
        spec = f"{wheel}[{','.join(test_extras)}]" if test_extras else str(wheel)
        wheelenv.install(python, [spec], find_links=[siblings], log=session.log)
        gs_installed = {n for n in wheelenv.installed(python) if n in PACKAGES}
        expected = {dist, *_closure(local_deps)}
        if gs_installed != expected:
            session.error(f"the wheel brought gs distributions {sorted(gs_installed)}, expected {sorted(expected)}")
        where = wheelenv.run(
            [python, "-c", f"import {module}; print({module}.__version__, {module}.__file__)"],
            log=session.log,
        ).split()
        if where[0] != version or not where[1].startswith(str(tmp / "env")):
            session.error(f"{module} imported from {where[1]} (version {where[0]}), not from the wheel")
        session.run(
            str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", f"{folder}/tests",
            env={"GS_NOX_SESSION": f"tests-{module}", "VIRTUAL_ENV": str(tmp / "env")},
            external=True,
        )
        shutil.rmtree(tmp, ignore_errors=True)

        _git("add", str(about.relative_to(ROOT)), changelog_rel)
        _git("commit", "-q", "-m", f"{dist} {version}", "--", str(about.relative_to(ROOT)), changelog_rel)
        committed = True
        session.log(f"committed {_git('log', '-1', '--format=%h %s')}")
        if make_tag:
            _git("tag", "-a", tag, "-m", f"{dist} {version}")
            session.log(f"tagged {tag} -> {_git('rev-parse', '--short', tag + '^{commit}')}")
        else:
            session.log(f"no tag (--no-tag); to tag this commit: git tag -a {tag} -m '{dist} {version}' <commit>")
        session.log(f"built: {', '.join(p.name for p in files)} in {out.relative_to(ROOT)}")
        session.log(
            "nothing was uploaded; to publish: twine upload "
            f"{out.relative_to(ROOT)}/*  (and git push origin {tag})"
        )
    finally:
        if not committed:
            about.write_text(saved)
