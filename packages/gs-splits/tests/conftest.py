"""Fixtures for the gs-splits tests (real CoraML from ``shared_datasets``, small random graphs)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

DATA = Path(__file__).parent / "data"
BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def pytest_configure(config):
    # also registered in the monorepo's pyproject.toml; here for the tests run from the sdist
    config.addinivalue_line(
        "markers", "slow: out-of-core tests (gs_splits.ondisk); `nox -s tests-gs_splits` deselects "
        "them, `nox -s tests-gs_splits-slow` runs them, `nox -s tests` runs both"
    )


@pytest.fixture(scope="session")
def coraml(shared_datasets):
    """The structural-shifts paper's CoraML: dict with edges, labels, features, author values."""
    from scipy.io import loadmat

    root = shared_datasets / "structural-shifts" / "cora-ml"
    if not (root / "data.mat").exists():
        pytest.skip(f"CoraML not found at {root}/data.mat")
    d = loadmat(root / "data.mat")
    values = {
        s: np.load(root / "splits" / f"{s}-values.npy")
        for s in ("popularity", "locality", "density", "random")
    }
    return {
        "path": root / "data.mat",
        "edges": np.asarray(d["edges"], dtype=np.int64),
        "labels": np.asarray(d["labels"]).ravel(),
        "features": d["features"],
        "num_nodes": d["labels"].shape[1],
        "values": values,
    }


@pytest.fixture(scope="session")
def author_masks():
    """The authors' CoraML masks converted once from their .pth files (see data/README.md)."""
    with np.load(DATA / "coraml_author_masks.npz") as z:
        return {k: z[k] for k in z.files}


def _random_graph(n: int, m: int, seed: int, isolated: int = 0) -> tuple[np.ndarray, int]:
    """Edge array (2, m) of a random multigraph on n nodes plus ``isolated`` extra isolated nodes.

    Several components arise by construction: nodes are split into two halves with no edge
    across, and may include self-loops and duplicates (the normaliser must cope).
    """
    rng = np.random.default_rng(seed)
    half = max(n // 2, 1)
    a = rng.integers(0, half, size=(2, m // 2))
    b = rng.integers(half, n, size=(2, m - m // 2)) if n > half else rng.integers(0, half, size=(2, m - m // 2))
    return np.concatenate([a, b], axis=1), n + isolated


@pytest.fixture(scope="session")
def random_graph():
    """Factory ``random_graph(n, m, seed, isolated=0) -> (edges, num_nodes)``."""
    return _random_graph


def _load_benchmark(name: str):
    script = BENCHMARKS / f"{name}.py"
    if not script.is_file():  # tests run from an installed wheel have no benchmarks/
        pytest.skip(f"benchmark script not found at {script}")
    spec = importlib.util.spec_from_file_location(name, script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def load_benchmark():
    """Factory ``load_benchmark(name)``: the script ``benchmarks/<name>.py`` as a module."""
    return _load_benchmark
