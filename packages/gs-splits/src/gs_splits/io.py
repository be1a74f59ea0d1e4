"""Reading graphs from files (used by the CLI; usable on its own).

Formats (chosen by suffix):

* ``.mat`` (MATLAB v5, e.g. the structural-shifts CoraML file): edges from ``edges``
  ``(2, E)``, or an adjacency from ``network`` / ``adjacency`` / ``adj_matrix`` / ``A``;
  labels from ``labels`` (or one-hot ``group``); features from ``features`` / ``attrb`` / ``X``;
* ``.npz``: a ``scipy.sparse.save_npz`` adjacency, or arrays ``edge_index`` / ``edges``
  ``(2, E)`` with optional ``num_nodes``, ``labels`` / ``y``, ``features`` / ``x``;
* ``.npy``: an edge array ``(2, E)`` or ``(E, 2)``;
* anything else: a text edge list, one ``u v`` pair per line (whitespace or comma separated,
  ``#`` comments), integer node ids ``0..n-1``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["GraphFile", "load_graph"]


@dataclass
class GraphFile:
    """A graph read from disk: ``graph`` (edge array or sparse adjacency) plus extras."""

    graph: Any
    num_nodes: int | None
    labels: np.ndarray | None = None
    features: Any = None


def _labels(v: Any) -> np.ndarray | None:
    if v is None:
        return None
    if sp.issparse(v):
        v = v.toarray()
    v = np.asarray(v)
    if v.ndim == 2 and 1 not in v.shape:
        return v.argmax(axis=1)
    return v.ravel()


def load_graph(path: str | Path) -> GraphFile:
    """Read a graph file (see the module docstring for the formats)."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"graph file not found: {p}")
    suffix = p.suffix.lower()
    if suffix == ".mat":
        from scipy.io import loadmat

        d = loadmat(p)
        feats = next((d[k] for k in ("features", "attrb", "X") if k in d), None)
        labels = _labels(next((d[k] for k in ("labels", "group", "y") if k in d), None))
        if "edges" in d:
            e = np.asarray(d["edges"])
            if e.shape[0] != 2 and e.ndim == 2 and e.shape[1] == 2:
                e = e.T
            n = labels.size if labels is not None else (feats.shape[0] if feats is not None else None)
            return GraphFile(e.astype(np.int64), n, labels, feats)
        for k in ("network", "adjacency", "adj_matrix", "A"):
            if k in d:
                a = sp.csr_array(d[k])
                return GraphFile(a, a.shape[0], labels, feats)
        raise ValueError(f"{p}: no 'edges' or adjacency ('network', 'adjacency', 'adj_matrix', 'A') in the .mat file")
    if suffix == ".npz":
        with np.load(p, allow_pickle=False) as z:
            files = set(z.files)
            if {"indptr", "indices", "shape"} <= files or {"row", "col", "shape"} <= files:
                a = sp.load_npz(p)
                return GraphFile(a, a.shape[0])
            key = next((k for k in ("edge_index", "edges") if k in files), None)
            if key is None:
                raise ValueError(f"{p}: expected arrays 'edge_index' or 'edges' (2, E), or a scipy.sparse.save_npz file; found {sorted(files)}")
            n = int(z["num_nodes"]) if "num_nodes" in files else None
            labels = _labels(next((z[k] for k in ("labels", "y") if k in files), None))
            feats = next((z[k] for k in ("features", "x") if k in files), None)
            return GraphFile(z[key].astype(np.int64), n, labels, feats)
    if suffix == ".npy":
        e = np.load(p, allow_pickle=False)
        if e.ndim == 2 and e.shape[0] != 2 and e.shape[1] == 2:
            e = e.T
        return GraphFile(e, None)
    try:
        e = np.loadtxt(p, comments="#", delimiter=None if "," not in p.read_text()[:4096] else ",", dtype=np.int64, ndmin=2)
    except ValueError as exc:
        raise ValueError(f"{p}: could not read a text edge list of integer pairs 'u v' ({exc})") from exc
    if e.size == 0:
        raise ValueError(f"{p}: the edge list is empty")
    if e.shape[1] < 2:
        raise ValueError(f"{p}: each line needs two node ids, got {e.shape[1]} column(s)")
    return GraphFile(e[:, :2].T.copy(), None)
