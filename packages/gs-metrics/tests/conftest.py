"""Fixtures of the gs-metrics tests.

* ``cora``: Planetoid Cora parsed from the raw ``ind.cora.*`` pickles in ``shared_datasets``
  (gs-metrics may not import gs_data, so the parsing lives here; it follows the Planetoid
  layout: features and labels = vstack(allx, tx) / vstack(ally, ty) with the test rows put back
  at the positions listed in ``ind.cora.test.index``).

gs-metrics is torch-free: with ``GS_BLOCK_TORCH=1`` in the environment, importing torch (and the
reference implementations that need it, netcal and torchmetrics) fails in this test session, as
in an environment where torch is not installed (the reference comparisons are then skipped,
with that reason; every other test must pass).
"""

from __future__ import annotations

import importlib.abc
import os
import pickle
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

TORCH_STACK = ("torch", "torchmetrics", "netcal", "torch_geometric")


class _BlockTorch(importlib.abc.MetaPathFinder):
    """Make ``import torch`` (and its dependants) raise ImportError, as if not installed."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in TORCH_STACK:
            raise ModuleNotFoundError(f"{name} is blocked in this test session (GS_BLOCK_TORCH=1)")
        return None


if os.environ.get("GS_BLOCK_TORCH") == "1":
    loaded = [m for m in TORCH_STACK if m in sys.modules]
    if loaded:
        raise RuntimeError(f"GS_BLOCK_TORCH=1 but {loaded} were imported before the gs-metrics tests")
    sys.meta_path.insert(0, _BlockTorch())


def pytest_collection_modifyitems(config, items):
    """In the torch-blocked session, leave out the test that starts that session (it would
    start itself again)."""
    if os.environ.get("GS_BLOCK_TORCH") != "1":
        return
    keep = [i for i in items if i.name != "test_whole_test_suite_passes_with_torch_blocked"]
    if len(keep) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if i not in keep])
        items[:] = keep


@dataclass(frozen=True)
class Graph:
    x: np.ndarray  # (N, d) float32
    y: np.ndarray  # (N,) int64
    edge_index: np.ndarray  # (2, E) int64, both directions, no duplicates
    train_idx: np.ndarray
    val_idx: np.ndarray
    test_idx: np.ndarray

    @property
    def num_nodes(self) -> int:
        return int(self.y.shape[0])


def load_planetoid_raw(raw: Path, name: str) -> Graph:
    objs = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # old scipy pickles
        for key in ("x", "y", "tx", "ty", "allx", "ally", "graph"):
            with open(raw / f"ind.{name}.{key}", "rb") as f:
                objs[key] = pickle.load(f, encoding="latin1")
    test_index = np.loadtxt(raw / f"ind.{name}.test.index", dtype=np.int64)
    test_sorted = np.sort(test_index)
    features = sp.vstack([objs["allx"], objs["tx"]]).tolil()
    features[test_index, :] = features[test_sorted, :]
    onehot = np.vstack([objs["ally"], objs["ty"]])
    onehot[test_index, :] = onehot[test_sorted, :]
    graph = objs["graph"]
    src, dst = [], []
    for i, nbrs in graph.items():
        for j in nbrs:
            src.append(i)
            dst.append(j)
    n = onehot.shape[0]
    a = sp.coo_matrix((np.ones(len(src)), (src, dst)), shape=(n, n)).tocsr()
    a = ((a + a.T) > 0).astype(np.float64)
    a.setdiag(0)
    a.eliminate_zeros()
    coo = a.tocoo()
    edge_index = np.stack([coo.row, coo.col]).astype(np.int64)
    n_train = objs["y"].shape[0]
    return Graph(
        x=np.asarray(features.todense(), dtype=np.float32),
        y=onehot.argmax(axis=1).astype(np.int64),
        edge_index=edge_index,
        train_idx=np.arange(n_train),
        val_idx=np.arange(n_train, n_train + 500),
        test_idx=test_sorted,
    )


@pytest.fixture(scope="session")
def cora(shared_datasets) -> Graph:
    raw = shared_datasets / "planetoid" / "Cora" / "raw"
    if not raw.is_dir():
        pytest.skip(f"Planetoid Cora raw files not found at {raw}")
    return load_planetoid_raw(raw, "cora")
