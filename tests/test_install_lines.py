"""Every ``pip install`` line in every README and doc can be run as written (issue 33).

Nothing of gs is on PyPI yet, so ``pip install gs-splits`` fails ("from versions: none"). The
rule, checked here on every Markdown file of the repository (CHANGELOGs, which record history,
and nox log transcripts, lines starting with ``nox >``, aside):

* a command that names a gs distribution by name (``pip install gs-splits``,
  ``pip install "gs-splits @ git+..."``) says on its line that it is for after the first release
  (the words "after release" or "after-release");
* a command that installs local folders (``./packages/gs-splits``, ``'apps/bench[ray]'``;
  written from the repository root) names folders that exist, with extras that the folder's
  pyproject declares, and resolves: ``uv pip install --dry-run --offline`` with the CI pins into
  a fresh environment. That catches a line that installs ``./apps/bench`` without the sibling
  folders it needs (pip would look for gs-splits on PyPI). Offline: the packages come from uv's
  cache, which the package sessions of ``nox -s tests`` filled before this one; a third-party
  package missing from the cache skips the line (this machine never installed it), a gs
  distribution that would have to come from an index fails it;
* any other command installs third-party packages from PyPI (nox, twine, MoleculeACE, ...).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import InvalidRequirement, Requirement

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("wheelenv", ROOT / ".ci" / "wheelenv.py")
wheelenv = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("wheelenv", wheelenv)
_spec.loader.exec_module(wheelenv)

GS_DISTS = set(wheelenv.DISTS)
#: pip options that take a value (the value is not a requirement)
_WITH_VALUE = {"--python", "-p", "--resolution", "-c", "--constraint", "-r", "--requirement", "--find-links", "-f",
               "-i", "--index-url", "--extra-index-url", "-d", "--target", "-t", "--prefix"}
#: a command runs to the end of the line, a closing backtick, a table cell or a shell comment
_COMMAND = re.compile(r"(?:uv )?pip install\b(.*?)(?=\s#|`|\||$)")
_SKIP_FOLDERS = {".git", ".nox", "node_modules", "dist", "build"}


def _markdown_files() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.md")
                  if not _SKIP_FOLDERS & set(p.relative_to(ROOT).parts) and p.name != "CHANGELOG.md")


def _requirements(args: str) -> list[tuple[str, bool]]:
    """(requirement, editable) of a ``pip install`` argument string."""
    args = args.rstrip()
    if args.endswith("\\"):  # a shell line continued on the next line: shlex rejects the lone \
        args = args[:-1]
    try:
        tokens = shlex.split(args)
    except ValueError:  # an unbalanced quote in prose: take the words as they are
        tokens = args.split()
    out, skip, editable = [], False, False
    for tok in tokens:
        if skip:
            skip = False
            continue
        if tok in _WITH_VALUE:
            skip = True
            continue
        if tok in ("-e", "--editable"):
            editable = True
            continue
        if tok.startswith("-") or tok in ("&&", ";", "\\", "or", "and"):
            if tok in ("&&", ";"):
                break
            continue
        out.append((tok.rstrip(".,;:)"), editable))
        editable = False
    return out


def _is_local(req: str) -> bool:
    return req.startswith(("./", "../", "/", "packages/", "apps/")) or req == "."


def _split_extras(req: str) -> tuple[str, set[str]]:
    m = re.fullmatch(r"(.*?)(?:\[([^\]]*)\])?", req)
    assert m is not None
    return m.group(1), {e.strip() for e in (m.group(2) or "").split(",") if e.strip()}


def install_lines() -> list[tuple[str, str, list[tuple[str, bool]]]]:
    """(where, line, requirements) of every ``pip install`` command in the docs."""
    found = []
    for path in _markdown_files():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "pip install" not in line or line.lstrip().startswith("nox >"):
                continue
            for m in _COMMAND.finditer(line):
                reqs = _requirements(m.group(1))
                if reqs:
                    found.append((f"{path.relative_to(ROOT)}:{n}", line, reqs))
    return found


LINES = install_lines()


def _gs_name(req: str) -> str | None:
    try:
        name = Requirement(req).name
    except InvalidRequirement:
        return None
    return name if name in GS_DISTS else None


def test_the_docs_have_install_lines():
    """The scan finds the README's commands (a guard against a scan that finds nothing)."""
    where = {w.split(":")[0] for w, _, _ in LINES}
    assert {"README.md", "packages/gs-splits/README.md", "docs/cluster.md"} <= where
    assert any(_is_local(r) for _, _, reqs in LINES for r, _ in reqs)


@pytest.mark.parametrize(("where", "line", "reqs"), LINES, ids=[w for w, _, _ in LINES])
def test_a_gs_distribution_by_name_is_marked_after_release(where, line, reqs):
    named = [r for r, _ in reqs if not _is_local(r) and _gs_name(r)]
    if named:
        assert re.search(r"after[ -]release", line, re.I), (
            f"{where}: `pip install {' '.join(named)}` cannot work before the first release "
            "(nothing is on PyPI): give the local-path command, and mark this one 'after release'"
        )


LOCAL = [(w, line, reqs) for w, line, reqs in LINES
         if any(_is_local(r) for r, _ in reqs) and not re.search(r"after[ -]release", line, re.I)]


@pytest.mark.parametrize(("where", "line", "reqs"), LOCAL, ids=[w for w, _, _ in LOCAL])
def test_a_local_install_line_names_folders_and_extras_that_exist(where, line, reqs):
    for req, _ in reqs:
        if not _is_local(req):
            continue
        folder, extras = _split_extras(req)
        path = (ROOT / folder).resolve()
        assert (path / "pyproject.toml").is_file(), f"{where}: {folder} is not a package folder"
        declared = tomllib.loads((path / "pyproject.toml").read_text())["project"].get(
            "optional-dependencies", {})
        assert extras <= set(declared), f"{where}: {req}: no extra {sorted(extras - set(declared))}"


@pytest.fixture
def fresh_python(tmp_path):
    """A new, empty environment per line: a line must work on its own, as written."""
    try:
        return wheelenv.fresh_env(tmp_path / "env")
    except (RuntimeError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"uv is needed to install the lines: {exc}")


def _module_of(folder: str) -> str:
    """The import name of a gs distribution folder (``packages/gs-data`` -> ``gs_data``)."""
    name = tomllib.loads((ROOT / folder / "pyproject.toml").read_text())["project"]["name"]
    return name.replace("-", "_")


@pytest.mark.parametrize(("where", "line", "reqs"), LOCAL, ids=[w for w, _, _ in LOCAL])
def test_a_local_install_line_installs_and_imports(where, line, reqs, fresh_python):
    args, modules = [], []
    for req, _ in reqs:
        if _is_local(req):
            folder, extras = _split_extras(req)
            args.append(str((ROOT / folder).resolve()) + (f"[{','.join(sorted(extras))}]" if extras else ""))
            modules.append(_module_of(folder))
        else:
            args.append(req)
    uv = wheelenv.uv_executable()
    cmd = [uv, "pip", "install", "--offline", "--python", str(fresh_python), "-c", str(wheelenv.CONSTRAINTS), *args]
    env = dict(os.environ)
    if "UV_FIND_LINKS" not in env and env.get("PIP_FIND_LINKS"):  # pip's local wheels, for uv too
        env["UV_FIND_LINKS"] = env["PIP_FIND_LINKS"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)
    if done.returncode != 0:
        err = done.stderr
        missing = set(re.findall(r"\b([A-Za-z0-9][A-Za-z0-9._-]*) was not found in the cache", err))
        # offline, a registry package that uv never cached is reported this way instead
        missing |= set(re.findall(r"\b([A-Za-z0-9][A-Za-z0-9._-]*)==\S+ needs to be downloaded from a registry", err))
        gs_missing = {m for m in missing if m.replace("_", "-").lower() in GS_DISTS}
        assert not gs_missing, (f"{where}: `{line.strip()}` needs {sorted(gs_missing)} from an index, "
                                "where it is not (install the sibling folders in the same command)")
        if missing:
            pytest.skip(f"{where}: {sorted(missing)} not in uv's cache on this machine (offline check)")
        pytest.fail(f"{where}: `{line.strip()}` does not install:\n{err}")
    check = subprocess.run([uv, "pip", "check", "--python", str(fresh_python)], capture_output=True,
                           text=True, timeout=300, env=env)
    assert check.returncode == 0, f"{where}: after `{line.strip()}`: {check.stdout}{check.stderr}"
    code = "; ".join(f"import {m}" for m in dict.fromkeys(modules))
    imported = subprocess.run([str(fresh_python), "-c", code], capture_output=True, text=True, timeout=600,
                              cwd=fresh_python.parent)
    assert imported.returncode == 0, f"{where}: after `{line.strip()}`, `{code}` fails:\n{imported.stderr[-2000:]}"
