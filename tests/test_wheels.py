"""What a user gets from ``pip install gs-<name>``: each distribution's built wheel.

* The wheel holds the package's run-time data files (the molecular fidelity JSON of gs-data,
  the suite TOMLs of gs-bench), ``py.typed`` and nothing of ``tests/`` or its fixtures; its
  metadata has the licence, URLs, classifiers and the README as long description.
* Each wheel, installed (not editable) alone into a fresh environment, imports from that
  environment, runs its CLI's ``--help`` where it has one, and brings no gs distribution
  other than those it declares.
* Installing gs-models next to a torch that is already there and inside gs-models' declared
  range keeps that torch; one outside the range would be replaced (the control).

The wheels are built from this tree with hatchling; environments are made with uv
(hard-linked from its cache, so a torch environment takes seconds). The torch used in the
"keep it" test is a tiny stub distribution named ``torch`` built here, at an in-range version
other than the CI pin; older real torch builds cannot be installed on the CI machines
(docs/releasing.md).
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("wheelenv", ROOT / ".ci" / "wheelenv.py")
wheelenv = importlib.util.module_from_spec(_spec)
sys.modules["wheelenv"] = wheelenv
_spec.loader.exec_module(wheelenv)

DISTS = wheelenv.DISTS
# the console scripts each distribution must ship (and nothing else has one)
CLIS = {"gs-splits": {"gs-splits"}, "gs-bench": {"gs-bench"}}
# run-time data files a wheel must carry, besides every other non-Python file under src/<module>
DATA_FILES = {
    "gs-data": {
        "gs_data/materials/data/molecular_fidelity_gaps.json.gz",
        "gs_data/materials/data/molecular_fidelity_gaps.provenance.json",
    },
    "gs-bench": {
        f"gs_bench/suites/{name}.toml" for name in ("structural-shifts", "edgewise", "lebed", "gess")
    },
}
URL_LABELS = {"Homepage", "Source", "Changelog", "Issues"}


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("wheels")
    return {dist: wheelenv.build(dist, out)[0] for dist in DISTS}


def _source_files(dist: str) -> set[str]:
    folder, module = DISTS[dist]
    src = ROOT / folder / "src"
    return {
        p.relative_to(src).as_posix()
        for p in (src / module).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }


@pytest.mark.parametrize("dist", sorted(DISTS))
def test_wheel_holds_the_package_its_data_and_py_typed_but_no_tests(wheels, dist):
    _, module = DISTS[dist]
    names = set(zipfile.ZipFile(wheels[dist]).namelist())
    assert f"{module}/py.typed" in names
    assert DATA_FILES.get(dist, set()) <= names, DATA_FILES[dist] - names
    missing = _source_files(dist) - names
    assert not missing, f"{dist}: files under src/{module} missing from the wheel: {sorted(missing)}"
    top = {n.split("/")[0] for n in names}
    assert top == {module, f"{module}-{wheelenv.version_of(dist)}.dist-info"}, top
    leaked = [n for n in names if re.search(r"(^|/)(tests?|fixtures|conftest\.py)(/|$)", n)]
    assert not leaked, f"{dist}: tests or fixtures in the wheel: {leaked}"


@pytest.mark.parametrize("dist", sorted(DISTS))
def test_wheel_metadata_has_licence_urls_classifiers_and_readme(wheels, dist):
    folder, module = DISTS[dist]
    meta = wheelenv.wheel_metadata(wheels[dist])
    assert meta["Name"] == dist
    assert meta["Version"] == wheelenv.version_of(dist)
    assert meta["License-Expression"] == "MIT"
    assert "LICENSE" in (meta.get_all("License-File") or [])
    info = f"{module}-{meta['Version']}.dist-info"
    assert f"{info}/licenses/LICENSE" in zipfile.ZipFile(wheels[dist]).namelist()
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    assert URL_LABELS <= set(urls), urls
    assert all(u.startswith("https://") for u in urls.values()), urls
    classifiers = set(meta.get_all("Classifier") or [])
    assert {"Typing :: Typed", "Programming Language :: Python :: 3.11"} <= classifiers
    assert meta["Description-Content-Type"] == "text/markdown"
    readme = (ROOT / folder / "README.md").read_text()
    assert meta.get_payload().strip() == readme.strip()


@pytest.mark.parametrize("dist", sorted(DISTS))
def test_wheel_installs_alone_imports_and_brings_only_declared_gs_packages(wheels, dist, tmp_path):
    _, module = DISTS[dist]
    wheel_dir = wheels[dist].parent  # holds all six wheels: undeclared ones could come along

    def requires(name: str) -> set[str]:
        return wheelenv.gs_requires(wheelenv.wheel_metadata(wheels[name]))

    declared = wheelenv.declared_gs_closure(dist, requires)
    python = wheelenv.fresh_env(tmp_path / "env")
    wheelenv.install(python, [str(wheels[dist])], find_links=[wheel_dir])

    gs_installed = {n for n in wheelenv.installed(python) if n in DISTS}
    assert gs_installed == declared
    assert wheelenv.gs_modules_on_path(python) == {DISTS[d][1] for d in declared}

    code = f"import {module}; print({module}.__version__); print({module}.__file__)"
    version, where = wheelenv.run([python, "-c", code]).split()
    assert version == wheelenv.version_of(dist)
    assert Path(where).is_relative_to(tmp_path / "env"), f"{module} imported from {where}"

    scripts = set()
    with zipfile.ZipFile(wheels[dist]) as zf:
        entry = [n for n in zf.namelist() if n.endswith(".dist-info/entry_points.txt")]
        if entry:
            text = zf.read(entry[0]).decode()
            block = re.search(r"\[console_scripts\]\n(.*?)(\n\[|\Z)", text, flags=re.S)
            scripts = {line.split("=")[0].strip() for line in block.group(1).splitlines() if "=" in line}
    assert scripts == CLIS.get(dist, set())
    for script in scripts:
        proc = subprocess.run(
            [str(python.parent / script), "--help"], capture_output=True, text=True, timeout=300,
            env=wheelenv.isolated_env(),
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert proc.stdout.lower().startswith("usage:") and script in proc.stdout


# --- an existing torch inside the declared range is kept --------------------------------------


def _stub_torch_wheel(out: Path, version: str) -> Path:
    """A tiny pure-Python wheel named torch (no code but a marker) at ``version``."""
    info = f"torch-{version}.dist-info"
    files = {
        "torch/__init__.py": f'__version__ = "{version}"\nGS_TEST_STUB = True\n',
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n"
        "Summary: stub for gs's wheel tests (not PyTorch)\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: gs-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(text.encode())}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = "\n".join(record) + "\n"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"torch-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    return path


def _torch_range(wheel: Path):
    reqs = [Requirement(r) for r in wheelenv.wheel_metadata(wheel).get_all("Requires-Dist")]
    (torch,) = [r for r in reqs if r.name == "torch" and r.marker is None]
    return torch.specifier


def _ci_torch_pin() -> str:
    pins = re.findall(r"^torch==(\S+)", wheelenv.CONSTRAINTS.read_text(), flags=re.M)
    assert len(pins) == 1, pins
    return pins[0]


def test_installing_gs_models_keeps_an_existing_torch_inside_its_range(wheels, tmp_path):
    other = "2.14.0"
    declared = _torch_range(wheels["gs-models"])
    assert declared.contains(other) and other != _ci_torch_pin()
    python = wheelenv.fresh_env(tmp_path / "env")
    wheelenv.install(python, [str(_stub_torch_wheel(tmp_path / "stub", other))], constraints=None)

    # no CI constraints here: they pin torch, which is exactly what a user does not have
    log = wheelenv.install(
        python, [str(wheels["gs-models"])], find_links=[wheels["gs-models"].parent], constraints=None
    )
    after = wheelenv.installed(python)
    assert after["torch"] == other, log
    assert "torch-geometric" in after and after["gs-models"] == wheelenv.version_of("gs-models")
    marker = wheelenv.run([python, "-c", "import torch; print(torch.GS_TEST_STUB, torch.__version__)"])
    assert marker.split() == ["True", other]
    assert not re.search(r"^\s*-\s*torch==", log, flags=re.M), log


def test_control_a_torch_outside_the_range_would_be_replaced(wheels, tmp_path):
    below = "2.10.0"  # below the lower bound, 2.11
    assert not _torch_range(wheels["gs-models"]).contains(below)
    python = wheelenv.fresh_env(tmp_path / "env")
    wheelenv.install(python, [str(_stub_torch_wheel(tmp_path / "stub", below))], constraints=None)
    log = wheelenv.install(
        python,
        [str(wheels["gs-models"])],
        find_links=[wheels["gs-models"].parent],
        extra_args=["--dry-run"],
    )
    assert re.search(rf"^\s*-\s*torch=={re.escape(below)}\b", log, flags=re.M), log
    assert re.search(rf"^\s*\+\s*torch=={re.escape(_ci_torch_pin())}", log, flags=re.M), log
    assert wheelenv.installed(python)["torch"] == below  # a dry run changes nothing
