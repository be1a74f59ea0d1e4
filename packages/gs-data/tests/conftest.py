"""Fixtures of the gs-data tests.

* every test runs with ``GS_DATA_ROOT`` pointing to a fresh temporary folder, so nothing is
  ever written to the user's cache (processed caches, split caches);
* ``fixtures_root``: the small raw-format fixtures of ``tests/fixtures`` (read-only use);
* ``fixture_graph``: the graph every fixture encodes (see ``tests/fixtures/make_fixtures.py``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(autouse=True)
def _isolated_data_root(tmp_path, monkeypatch):
    root = tmp_path / "gs-data-root"
    monkeypatch.setenv("GS_DATA_ROOT", str(root))
    return root


@pytest.fixture(scope="session")
def fixtures_root() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def fixture_graph() -> dict:
    """The graph of the fixtures: 12 nodes, 16 undirected edges, 6 features, 3 classes."""
    labels = np.array([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2], dtype=np.int64)
    features = (np.arange(12 * 6).reshape(12, 6) * 7 % 5 == 0).astype(np.float32)
    edges = {
        (0, 1), (1, 2), (2, 3), (3, 0), (0, 2), (4, 5), (5, 6), (6, 7), (7, 4),
        (8, 9), (9, 10), (10, 11), (11, 8), (3, 4), (7, 8), (11, 0),
    }
    und = {(min(a, b), max(a, b)) for a, b in edges}
    return {"labels": labels, "features": features, "edges": und, "num_nodes": 12}
