"""The install commands in gs-data's messages work today and match the ``track`` extra
(issue 33: nothing is on PyPI yet, so ``pip install "gs-data[track]"`` cannot work)."""

from __future__ import annotations

from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def _track_extra() -> list[str]:
    if not PYPROJECT.is_file():  # pragma: no cover - tests run from a checkout
        pytest.skip("pyproject.toml of gs-data not beside the tests")
    return tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]["track"]


def test_the_track_hint_installs_the_extras_packages_with_its_ranges():
    from gs_data import geometric
    from gs_data.track.deps import INSTALL_HINT

    for req in _track_extra():
        spec = req.split(";")[0].strip()
        if spec.startswith("pandas"):
            continue
        assert f"'{spec}'" in INSTALL_HINT, (spec, INSTALL_HINT)
        assert f"'{spec}'" in geometric._TRACK_DATA, (spec, geometric._TRACK_DATA)
    assert "gs-data[track]" not in INSTALL_HINT


def test_the_track_extra_admits_only_releases_with_wheels():
    """pythia8mc 8.318.0 has no wheel for Python 3.10+ (pip builds it from C++ for over 30
    minutes); pyacts has wheels for 3.11+ only, so the extra skips it on 3.10."""
    from packaging.requirements import Requirement

    reqs = {Requirement(r).name: Requirement(r) for r in _track_extra()}
    pythia = reqs["pythia8mc"]
    assert pythia.specifier.contains("8.317.2") and not pythia.specifier.contains("8.318.0")
    for name in ("pythia8mc", "pyacts"):
        marker = reqs[name].marker
        assert marker is not None
        assert not marker.evaluate({"python_version": "3.10"})
        assert marker.evaluate({"python_version": "3.11"})
