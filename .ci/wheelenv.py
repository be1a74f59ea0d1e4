"""Build a distribution's wheel and install it, alone, into a fresh environment.

Shared by the ``release`` session of ``noxfile.py`` and by ``tests/test_wheels.py`` so that
the release command and the test check a wheel the same way. Environments are created with
uv, which hard-links packages from its cache (seconds per environment, even with torch).
uv does not read pip's configuration: ``UV_FIND_LINKS`` (set by the noxfile from pip's
``find-links``) is honoured and merged with any extra folders given here.

Standard library only: this file is imported by the noxfile before any environment exists.
"""

from __future__ import annotations

import email.message
import email.parser
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS = ROOT / ".ci" / "constraints.txt"

# distribution -> (folder, import name)
DISTS: dict[str, tuple[str, str]] = {
    "gs-splits": ("packages/gs-splits", "gs_splits"),
    "gs-metrics": ("packages/gs-metrics", "gs_metrics"),
    "gs-data": ("packages/gs-data", "gs_data"),
    "gs-models": ("packages/gs-models", "gs_models"),
    "gs-algos": ("packages/gs-algos", "gs_algos"),
    "gs-bench": ("apps/bench", "gs_bench"),
}

Log = Callable[[str], None]


def _quiet(_: str) -> None:
    return None


def uv_executable() -> str:
    """The uv binary: ``$GS_UV``, else ``uv`` on PATH, else the one of the ``uv`` Python package."""
    found = os.environ.get("GS_UV") or shutil.which("uv")
    if not found:
        try:
            from uv import find_uv_bin  # type: ignore[import-not-found]

            found = find_uv_bin()
        except (ImportError, FileNotFoundError):
            found = None
    if not found:
        raise RuntimeError("uv is needed to create fresh environments: pip install uv (or nox[uv])")
    return found


def isolated_env() -> dict[str, str]:
    """This process's environment without ``PYTHONPATH``: a fresh environment must import what
    is installed in it, not a checkout that a developer's ``PYTHONPATH`` points at."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def run(cmd: Sequence[str], *, log: Log = _quiet, cwd: Path | None = None, env: dict | None = None) -> str:
    """Run ``cmd``; return its stdout+stderr; raise RuntimeError with that output when it fails."""
    log("$ " + " ".join(str(c) for c in cmd))
    full_env = {**isolated_env(), **(env or {})}
    proc = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env=full_env, capture_output=True, text=True, check=False
    )
    out = proc.stdout + proc.stderr
    if out.strip():
        log(out.rstrip())
    if proc.returncode != 0:
        raise RuntimeError(f"command failed ({proc.returncode}): {' '.join(map(str, cmd))}\n{out}")
    return out


def version_of(dist: str) -> str:
    """The version in the tree (``src/<module>/__about__.py``)."""
    folder, module = DISTS[dist]
    about = (ROOT / folder / "src" / module / "__about__.py").read_text()
    match = re.search(r'__version__\s*=\s*"([^"]+)"', about)
    if match is None:
        raise ValueError(f"{folder}/src/{module}/__about__.py has no __version__ = \"...\" line")
    return match.group(1)


def build(
    dist: str, out: Path, *, sdist: bool = False, python: str | Path = sys.executable, log: Log = _quiet
) -> list[Path]:
    """Build the wheel (and the sdist if asked) of ``dist`` from the tree into ``out``, with the
    hatchling of ``python``'s environment."""
    folder, module = DISTS[dist]
    out.mkdir(parents=True, exist_ok=True)
    targets = ["-t", "wheel"] + (["-t", "sdist"] if sdist else [])
    before = set(out.iterdir())
    run([python, "-m", "hatchling", "build", *targets, "-d", str(out)], cwd=ROOT / folder, log=log)
    made = sorted(set(out.iterdir()) - before)
    stem = f"{module}-{version_of(dist)}"
    if not made or not all(p.name.startswith(stem) for p in made):
        raise RuntimeError(f"{dist}: expected files named {stem}*, hatchling made {[p.name for p in made]}")
    return made


def fresh_env(path: Path, *, log: Log = _quiet) -> Path:
    """A new, empty virtual environment at ``path`` (same Python as this one); its python."""
    run([uv_executable(), "venv", "-q", "--python", sys.executable, str(path)], log=log)
    return path / "bin" / "python"


def install(
    python: Path,
    requirements: Iterable[str],
    *,
    find_links: Iterable[Path] = (),
    constraints: Path | None = CONSTRAINTS,
    extra_args: Sequence[str] = (),
    log: Log = _quiet,
) -> str:
    """``uv pip install`` into the environment of ``python`` (never editable)."""
    cmd = [uv_executable(), "pip", "install", "--python", str(python), *extra_args]
    links = [str(p) for p in find_links] + os.environ.get("UV_FIND_LINKS", "").split()
    for link in links:
        cmd += ["--find-links", link]
    if constraints is not None:
        cmd += ["-c", str(constraints)]
    return run([*cmd, *requirements], log=log)


def installed(python: Path) -> dict[str, str]:
    """Normalised distribution name -> version of everything installed in that environment."""
    code = (
        "import importlib.metadata as m, json, re\n"
        "print(json.dumps({re.sub(r'[-_.]+', '-', d.metadata['Name']).lower(): d.version"
        " for d in m.distributions()}))"
    )
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True,
                         env=isolated_env()).stdout
    return json.loads(out)


def gs_modules_on_path(python: Path) -> set[str]:
    """Top-level ``gs_*`` import packages that the environment can import."""
    code = "import pkgutil; print(' '.join(m.name for m in pkgutil.iter_modules() if m.name.startswith('gs_')))"
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True,
                         env=isolated_env()).stdout
    return set(out.split())


def wheel_metadata(wheel: Path) -> email.message.Message:
    """The ``METADATA`` of a wheel file, parsed."""
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        return email.parser.Parser().parsestr(zf.read(name).decode())


def gs_requires(metadata: email.message.Message) -> set[str]:
    """The gs distributions that a wheel's metadata requires at run time (no extra)."""
    names = set()
    for req in metadata.get_all("Requires-Dist") or []:
        spec, _, marker = req.partition(";")
        name = re.split(r"[\[<>=!~ (]", spec.strip(), maxsplit=1)[0].lower().replace("_", "-")
        if name in DISTS and "extra" not in marker:
            names.add(name)
    return names


def declared_gs_closure(dist: str, requires: Callable[[str], Iterable[str]]) -> set[str]:
    """``dist`` and every gs distribution it needs at run time, following ``requires(name)``
    (the names of the gs distributions that ``name`` declares without an extra)."""
    seen: set[str] = set()
    stack = [dist]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        stack.extend(requires(name))
    return seen
