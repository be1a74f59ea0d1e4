"""No test writes into the user's caches: the repository's conftest.py points gs-data's data
root, the Track event cache and XDG_CACHE_HOME into a temporary folder for the session."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from gs_data import data_root
from gs_data.track.generate import default_cache_dir

TMP = Path(tempfile.gettempdir()).resolve()
HOME_CACHE = (Path.home() / ".cache").resolve()


def _temporary(path: Path) -> bool:
    p = Path(path).resolve()
    return TMP in p.parents and HOME_CACHE not in p.parents and p != HOME_CACHE


@pytest.mark.parametrize("var", ["GS_DATA_ROOT", "GS_CACHE_DIR", "XDG_CACHE_HOME"])
def test_the_cache_variables_point_into_a_temporary_folder(var):
    assert var in os.environ, f"{var} is not set: the repository conftest.py was not loaded"
    assert _temporary(Path(os.environ[var])), f"{var}={os.environ[var]} is not a temporary folder"


def test_gs_datas_data_root_and_track_cache_are_temporary(monkeypatch):
    assert _temporary(data_root()) and _temporary(default_cache_dir())
    # without GS_DATA_ROOT gs-data falls back to the user cache dir: XDG_CACHE_HOME, temporary too
    monkeypatch.delenv("GS_DATA_ROOT")
    assert _temporary(data_root()) and data_root().name == "gs-data"
    monkeypatch.delenv("GS_CACHE_DIR")
    monkeypatch.setenv("HOME", str(Path(os.environ["XDG_CACHE_HOME"]).parent / "home"))
    assert _temporary(default_cache_dir())


def test_real_data_stays_readable_where_it_is(shared_datasets):
    """``shared_datasets`` (GS_SHARED_DATA or ../shared/datasets) is not redirected."""
    assert not _temporary(shared_datasets) or "GS_SHARED_DATA" in os.environ
