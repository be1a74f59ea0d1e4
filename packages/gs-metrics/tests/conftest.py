"""Fixtures of the gs-metrics tests.

* ``cora``: Planetoid Cora parsed from the raw ``ind.cora.*`` pickles in ``shared_datasets``
  (gs-metrics may not import gs_data, so the parsing lives here; it follows the Planetoid
  layout: features and labels = vstack(allx, tx) / vstack(ally, ty) with the test rows put back
  at the positions listed in ``ind.cora.test.index``).
* ``tiny_gcn_cls``: a 2-layer GCN in plain torch (symmetric-normalised sparse adjacency with
  self-loops) whose forward returns ``(embeddings, logits)``: the contract LeBed expects.
"""

from __future__ import annotations

import pickle
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp


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


def make_tiny_gcn_class():
    """The TinyGCN class (defined lazily: torch is only needed by the LeBed tests)."""
    import torch

    class TinyGCN(torch.nn.Module):
        """2-layer GCN, ``A_hat = D^-1/2 (A + I) D^-1/2`` as a sparse tensor cached per graph."""

        def __init__(self, in_dim: int, hidden: int, out_dim: int, dropout: float = 0.5):
            super().__init__()
            self.lin1 = torch.nn.Linear(in_dim, hidden)
            self.lin2 = torch.nn.Linear(hidden, out_dim)
            self.dropout = dropout
            self._cache: tuple | None = None

        def _adj(self, edge_index, n):
            key = (edge_index.data_ptr(), edge_index.shape[1], n)
            if self._cache is None or self._cache[0] != key:
                loops = torch.arange(n, device=edge_index.device)
                ei = torch.cat([edge_index, torch.stack([loops, loops])], dim=1)
                deg = torch.zeros(n).index_add_(0, ei[0], torch.ones(ei.shape[1]))
                w = deg[ei[0]].rsqrt() * deg[ei[1]].rsqrt()
                adj = torch.sparse_coo_tensor(ei, w, (n, n), check_invariants=False).coalesce()
                self._cache = (key, adj)
            return self._cache[1]

        def forward(self, x, edge_index):
            adj = self._adj(edge_index, x.shape[0])
            if x.is_sparse:  # bag-of-words features stay sparse: cheap first layer
                h = torch.sparse.mm(x, self.lin1.weight.t()) + self.lin1.bias
            else:
                h = self.lin1(torch.nn.functional.dropout(x, self.dropout, self.training))
            h = torch.relu(torch.sparse.mm(adj, h))
            z = h
            h = torch.nn.functional.dropout(h, self.dropout, self.training)
            return z, torch.sparse.mm(adj, self.lin2(h))

    return TinyGCN


@pytest.fixture(scope="session")
def tiny_gcn_cls():
    pytest.importorskip("torch", reason="the lebed extra (torch) is not installed")
    return make_tiny_gcn_class()
