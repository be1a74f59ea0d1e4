"""Readers of the raw file formats (numpy/scipy only, no torch).

Every reader returns a :class:`RawGraph`: an undirected graph without self-loops (each edge
stored in both directions, sorted, unique), features, integer labels with ``-1`` for a node
whose label is missing, and reader-specific extras. Any failure to parse a file raises
:class:`~gs_data._io.CorruptRawFileError` whose message starts with the file's path.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.io
import scipy.sparse as sp

from gs_data._io import CorruptRawFileError
from gs_data._safe_pickle import NUMPY_ARRAY_GLOBALS, UnsafePickleError, restricted_load

__all__ = [
    "RawGraph",
    "undirected_edges",
    "read_structural_shifts_mat",
    "read_planetoid",
    "read_acdne_mat",
    "read_udagcn",
    "read_shchur_npz",
    "read_ogb",
]


@dataclass
class RawGraph:
    """A parsed graph before conversion to PyG.

    ``edge_index`` (2, E) int64, undirected (both directions), no self-loops, sorted, unique;
    ``x`` scipy.sparse CSR or dense ndarray, float32, (N, F); ``y`` (N,) int64, ``-1`` = missing.
    """

    edge_index: np.ndarray
    x: Any
    y: np.ndarray
    extras: dict[str, np.ndarray] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def num_nodes(self) -> int:
        return int(self.y.shape[0])


def undirected_edges(rows: np.ndarray, cols: np.ndarray, num_nodes: int) -> np.ndarray:
    """Symmetrise, drop self-loops and duplicates; return sorted (2, E) int64 edge_index."""
    rows = np.asarray(rows, dtype=np.int64).ravel()
    cols = np.asarray(cols, dtype=np.int64).ravel()
    r = np.concatenate([rows, cols])
    c = np.concatenate([cols, rows])
    keep = r != c
    r, c = r[keep], c[keep]
    if r.size and (r.min() < 0 or max(r.max(), c.max()) >= num_nodes):
        raise ValueError(f"edge endpoint outside [0, {num_nodes})")
    key = np.unique(r * np.int64(num_nodes) + c)
    return np.stack([key // num_nodes, key % num_nodes]).astype(np.int64)


def _parse(path: Path, what: str, fn: Callable[[], RawGraph]) -> RawGraph:
    """Run ``fn`` and turn any parsing failure into an error naming ``path``."""
    try:
        return fn()
    except CorruptRawFileError:
        raise
    except FileNotFoundError:
        raise
    except Exception as exc:  # noqa: BLE001 - re-raised with the file name
        raise CorruptRawFileError(
            f"{path}: cannot read this {what} file (truncated, corrupted or not in the expected "
            f"format: {type(exc).__name__}: {exc}). Delete it and download it again, or replace "
            "it with a good copy."
        ) from exc


def _loadmat(path: Path) -> dict:
    return scipy.io.loadmat(str(path))


def _require(mat: dict, keys: tuple[str, ...], path: Path) -> None:
    missing = [k for k in keys if k not in mat]
    if missing:
        raise CorruptRawFileError(
            f"{path}: missing variable(s) {missing}; expected a MATLAB file with {list(keys)}"
        )


# --------------------------------------------------------------------------------------------
# structural-shifts .mat (features sparse (N, F), labels (1, N), edges (2, E))
# --------------------------------------------------------------------------------------------


def read_structural_shifts_mat(path: str | os.PathLike) -> RawGraph:
    """Read a ``data.mat`` of the structural-shifts paper (Bazhenov et al., Appendix E)."""
    path = Path(path)

    def run() -> RawGraph:
        mat = _loadmat(path)
        _require(mat, ("features", "labels", "edges"), path)
        x = sp.csr_matrix(mat["features"], dtype=np.float32)
        labels = np.asarray(mat["labels"]).ravel()
        y = _labels_with_missing(labels)
        n = y.shape[0]
        if x.shape[0] != n:
            raise CorruptRawFileError(f"{path}: features has {x.shape[0]} rows, labels {n}")
        edges = np.asarray(mat["edges"])
        if edges.ndim != 2 or edges.shape[0] != 2:
            raise CorruptRawFileError(f"{path}: 'edges' has shape {edges.shape}, expected (2, E)")
        ei = undirected_edges(edges[0], edges[1], n)
        return RawGraph(ei, x, y, meta={"format": "structural-shifts-mat"})

    return _parse(path, "structural-shifts .mat", run)


def _labels_with_missing(labels: np.ndarray) -> np.ndarray:
    """Integer labels; NaN or negative values become -1 (missing)."""
    labels = np.asarray(labels)
    if labels.dtype.kind == "f":
        bad = ~np.isfinite(labels)
        out = np.where(bad, -1, labels).astype(np.int64)
    else:
        out = labels.astype(np.int64)
    out[out < 0] = -1
    return out


# --------------------------------------------------------------------------------------------
# Planetoid (ind.<name>.{x,y,tx,ty,allx,ally,graph,test.index}), as PyG's Planetoid reads it
# --------------------------------------------------------------------------------------------

PLANETOID_SUFFIXES = ("x", "tx", "allx", "y", "ty", "ally", "graph", "test.index")

#: the globals the Planetoid pickles hold: numpy arrays, scipy CSR matrices (under the old
#: ``scipy.sparse.csr`` path or the new ones) and the ``defaultdict(list)`` of the graph
PLANETOID_PICKLE_GLOBALS = NUMPY_ARRAY_GLOBALS | {
    ("scipy.sparse.csr", "csr_matrix"),
    ("scipy.sparse._csr", "csr_matrix"),
    ("scipy.sparse", "csr_matrix"),
    ("collections", "defaultdict"),
    ("builtins", "list"),
}


def read_planetoid(folder: str | os.PathLike, prefix: str) -> RawGraph:
    """Read the Planetoid raw files ``ind.<prefix>.*`` in ``folder``.

    Node order and feature rows follow the Planetoid convention (test rows ``tx[j]`` belong to
    node ``test.index[j]``). Nodes inside the test range that have no test row (15 isolated
    nodes of CiteSeer) get all-zero features, as in PyG, but label ``-1`` (missing) instead of
    PyG's class 0; pass ``missing_label`` to :func:`gs_data.load` to choose.
    """
    folder = Path(folder)
    objs: dict[str, Any] = {}
    for suf in PLANETOID_SUFFIXES:
        p = folder / f"ind.{prefix}.{suf}"
        if suf == "test.index":

            def run_idx(p: Path = p) -> Any:
                vals = [int(line) for line in p.read_text().split()]
                if not vals:
                    raise ValueError("empty index file")
                return np.asarray(vals, dtype=np.int64)

            objs[suf] = _parse_any(p, "Planetoid test.index", run_idx)
        else:

            def run_pkl(p: Path = p) -> Any:
                # a restricted unpickler: only the types the published files hold
                with open(p, "rb") as fh:
                    return restricted_load(fh, PLANETOID_PICKLE_GLOBALS, path=p,
                                           what="Planetoid pickle", encoding="latin1")

            objs[suf] = _parse_any(p, "Planetoid pickle", run_pkl)

    def run() -> RawGraph:
        allx = sp.csr_matrix(objs["allx"], dtype=np.float32)
        tx = sp.csr_matrix(objs["tx"], dtype=np.float32)
        ally = np.asarray(objs["ally"])
        ty = np.asarray(objs["ty"])
        test_index = objs["test.index"]
        n_all = allx.shape[0]
        f = {suf: folder / f"ind.{prefix}.{suf}" for suf in PLANETOID_SUFFIXES}
        # the pickles either load whole or fail above (naming themselves); a count that does not
        # match is then the text file test.index, truncated or edited
        if tx.shape[0] != ty.shape[0]:
            raise CorruptRawFileError(
                f"{f['ty']}: {ty.shape[0]} label rows but {f['tx']} has {tx.shape[0]} feature rows; "
                "one of the two files is damaged: replace both with good copies"
            )
        if ally.shape[0] != n_all:
            raise CorruptRawFileError(
                f"{f['ally']}: {ally.shape[0]} label rows but {f['allx']} has {n_all} feature rows; "
                "one of the two files is damaged: replace both with good copies"
            )
        if tx.shape[0] != test_index.size:
            raise CorruptRawFileError(
                f"{f['test.index']}: {test_index.size} test node ids but {f['tx']} has {tx.shape[0]} test "
                "rows: the index file is truncated or damaged. Delete it and download it again, or "
                "replace it with a good copy."
            )
        if test_index.min() < n_all:
            raise CorruptRawFileError(
                f"{f['test.index']}: test node id {test_index.min()} overlaps the {n_all} rows of "
                f"{f['allx']} (ids must be >= {n_all}): the index file is damaged. Replace it with a "
                "good copy."
            )
        n = int(test_index.max()) + 1
        # position of each node's feature row in vstack([allx, tx]); -1 = no row
        src = np.full(n, -1, dtype=np.int64)
        src[:n_all] = np.arange(n_all)
        src[test_index] = n_all + np.arange(test_index.size)
        stacked = sp.vstack([allx, tx, sp.csr_matrix((1, allx.shape[1]), dtype=np.float32)]).tocsr()
        x = stacked[np.where(src >= 0, src, stacked.shape[0] - 1)]
        onehot = np.vstack([ally, ty, np.zeros((1, ally.shape[1]), dtype=ally.dtype)])
        onehot = onehot[np.where(src >= 0, src, onehot.shape[0] - 1)]
        y = np.where(onehot.sum(1) > 0, onehot.argmax(1), -1).astype(np.int64)
        graph = objs["graph"]
        rows, cols = [], []
        for k, nbrs in graph.items():
            for v in nbrs:
                rows.append(int(k))
                cols.append(int(v))
        ei = undirected_edges(np.asarray(rows), np.asarray(cols), n)
        no_row = np.flatnonzero(src < 0)
        return RawGraph(
            ei, x.astype(np.float32), y, extras={}, meta={"format": "planetoid", "nodes_without_row": no_row.tolist()}
        )

    return _parse(folder / f"ind.{prefix}.graph", "Planetoid", run)


def _parse_any(path: Path, what: str, fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except (FileNotFoundError, UnsafePickleError):  # both name the file
        raise
    except Exception as exc:  # noqa: BLE001
        raise CorruptRawFileError(
            f"{path}: cannot read this {what} file (truncated, corrupted or not in the expected "
            f"format: {type(exc).__name__}: {exc}). Delete it and download it again, or replace "
            "it with a good copy."
        ) from exc


# --------------------------------------------------------------------------------------------
# ACDNE .mat (attrb (N, F), group one-hot (N, C), network (N, N))
# --------------------------------------------------------------------------------------------


def read_acdne_mat(path: str | os.PathLike) -> RawGraph:
    """Read an ACDNE ``.mat`` (Shen et al., AAAI 2020): ``attrb``, ``group``, ``network``.

    ``group`` is multi-hot: a few nodes carry two labels. ``y`` is the first label
    (lowest class index) of each node, ``extras['y_multi']`` the full (N, C) 0/1 matrix; a node
    with no label gets ``y = -1``.
    """
    path = Path(path)

    def run() -> RawGraph:
        mat = _loadmat(path)
        _require(mat, ("attrb", "group", "network"), path)
        attrb = mat["attrb"]
        x = sp.csr_matrix(attrb, dtype=np.float32)  # mostly zeros: keep sparse until to_data
        group = mat["group"]
        group = np.asarray(group.todense() if sp.issparse(group) else group)
        n = group.shape[0]
        if x.shape[0] != n:
            raise CorruptRawFileError(f"{path}: attrb has {x.shape[0]} rows, group {n}")
        y = np.where(group.sum(1) > 0, (group > 0).argmax(1), -1).astype(np.int64)
        adj = sp.coo_matrix(mat["network"])
        if adj.shape != (n, n):
            raise CorruptRawFileError(f"{path}: network has shape {adj.shape}, expected ({n}, {n})")
        ei = undirected_edges(adj.row, adj.col, n)
        return RawGraph(
            ei,
            x,
            y,
            extras={"y_multi": (group > 0).astype(np.int8)},
            meta={"format": "acdne-mat", "self_loops_in_raw": int((adj.row == adj.col).sum())},
        )

    return _parse(path, "ACDNE .mat", run)


# --------------------------------------------------------------------------------------------
# UDAGCN text format (<prefix>_docs.txt, <prefix>_edgelist.txt, <prefix>_labels.txt)
# --------------------------------------------------------------------------------------------


def read_udagcn(folder: str | os.PathLike, prefix: str) -> RawGraph:
    """Read the UDAGCN text files (Wu et al., WWW 2020) of one domain.

    ``<prefix>_docs.txt``: one line per node, comma-separated feature values;
    ``<prefix>_edgelist.txt``: one ``src,dst`` pair per line (0-based);
    ``<prefix>_labels.txt``: one integer label per line (empty or ``nan`` = missing, ``-1``).
    """
    folder = Path(folder)
    docs = folder / f"{prefix}_docs.txt"
    edges = folder / f"{prefix}_edgelist.txt"
    labels = folder / f"{prefix}_labels.txt"

    def run_docs() -> np.ndarray:
        rows = [line.split(",") for line in docs.read_text(encoding="utf-8").splitlines() if line.strip()]
        widths = {len(r) for r in rows}
        if len(widths) != 1:
            raise ValueError(f"rows have different numbers of values {sorted(widths)[:5]}")
        return np.asarray(rows, dtype=np.float32)

    def run_labels() -> np.ndarray:
        out = []
        for line in labels.read_text(encoding="utf-8").splitlines():
            s = line.strip()
            out.append(-1 if s in ("", "nan", "NaN", "-1") else int(s))
        return np.asarray(out, dtype=np.int64)

    def run_edges() -> np.ndarray:
        text = edges.read_text(encoding="utf-8")
        pairs = [line.split(",") for line in text.splitlines() if line.strip()]
        if any(len(p) != 2 for p in pairs):
            raise ValueError("every line must be 'src,dst'")
        return np.asarray(pairs, dtype=np.int64).reshape(-1, 2)

    x = _parse_any(docs, "UDAGCN docs", run_docs)
    y = _parse_any(labels, "UDAGCN labels", run_labels)
    e = _parse_any(edges, "UDAGCN edgelist", run_edges)
    if x.shape[0] != y.shape[0]:
        raise CorruptRawFileError(f"{labels}: {y.shape[0]} labels but {docs} has {x.shape[0]} rows")

    def run() -> RawGraph:
        ei = undirected_edges(e[:, 0], e[:, 1], y.shape[0])
        return RawGraph(ei, x, y, meta={"format": "udagcn-text"})

    return _parse(edges, "UDAGCN edgelist", run)


# --------------------------------------------------------------------------------------------
# Shchur et al. npz (gnn-benchmark; PyG's Amazon / Coauthor raw files)
# --------------------------------------------------------------------------------------------


def read_shchur_npz(path: str | os.PathLike) -> RawGraph:
    """Read a ``gnn-benchmark`` ``.npz`` (Shchur et al., 2018), as PyG's ``Amazon``/``Coauthor``."""
    path = Path(path)

    def run() -> RawGraph:
        with np.load(path, allow_pickle=False) as z:
            files = set(z.files)
            need = {"adj_data", "adj_indices", "adj_indptr", "adj_shape", "labels"}
            if not need <= files:
                raise CorruptRawFileError(f"{path}: missing arrays {sorted(need - files)}")
            adj = sp.csr_matrix((z["adj_data"], z["adj_indices"], z["adj_indptr"]), shape=tuple(z["adj_shape"]))
            if "attr_data" in files:
                x = sp.csr_matrix(
                    (z["attr_data"], z["attr_indices"], z["attr_indptr"]), shape=tuple(z["attr_shape"])
                ).astype(np.float32)
            elif "attr_matrix" in files:
                x = np.asarray(z["attr_matrix"], dtype=np.float32)
            else:
                raise CorruptRawFileError(f"{path}: no attribute arrays (attr_data/attr_matrix)")
            y = _labels_with_missing(z["labels"])
        n = y.shape[0]
        coo = adj.tocoo()
        ei = undirected_edges(coo.row, coo.col, n)
        return RawGraph(ei, x, y, meta={"format": "shchur-npz"})

    return _parse(path, "gnn-benchmark .npz", run)


# --------------------------------------------------------------------------------------------
# OGB node property prediction raw CSVs (<dir>/raw/*.csv.gz, <dir>/split/<type>/*.csv.gz)
# --------------------------------------------------------------------------------------------


def _read_csv_gz(path: Path) -> np.ndarray:
    """A headerless CSV(.gz) as a 2-D array (pandas when installed: much faster)."""
    with gzip.open(path, "rt") as fh:
        try:
            import pandas as pd  # optional

            return pd.read_csv(fh, header=None).to_numpy()
        except ImportError:
            return np.loadtxt(fh, delimiter=",", dtype=np.float64, ndmin=2)


def read_ogb(folder: str | os.PathLike, split_type: str) -> RawGraph:
    """Read an OGB node-property dataset folder (``raw/`` and ``split/<split_type>/``).

    Labels that are NaN in ``node-label.csv.gz`` become ``-1``. ``extras`` holds
    ``node_year`` when present and the official ``train/valid/test`` indices.
    """
    folder = Path(folder)
    raw = folder / "raw"
    edge_p, feat_p, lab_p = raw / "edge.csv.gz", raw / "node-feat.csv.gz", raw / "node-label.csv.gz"
    edges = _parse_any(edge_p, "OGB edge.csv.gz", lambda: _read_csv_gz(edge_p))
    feats = _parse_any(feat_p, "OGB node-feat.csv.gz", lambda: _read_csv_gz(feat_p))
    labs = _parse_any(lab_p, "OGB node-label.csv.gz", lambda: _read_csv_gz(lab_p))
    extras: dict[str, np.ndarray] = {}
    year_p = raw / "node_year.csv.gz"
    if year_p.exists():
        extras["node_year"] = _parse_any(year_p, "OGB node_year.csv.gz", lambda: _read_csv_gz(year_p)).ravel().astype(np.int64)
    for part in ("train", "valid", "test"):
        sp_p = folder / "split" / split_type / f"{part}.csv.gz"
        if sp_p.exists():
            extras[f"split_{part}"] = _parse_any(sp_p, "OGB split", lambda sp_p=sp_p: _read_csv_gz(sp_p)).ravel().astype(np.int64)

    def run() -> RawGraph:
        y = _labels_with_missing(labs.ravel())
        n = y.shape[0]
        x = np.ascontiguousarray(feats, dtype=np.float32)
        if x.shape[0] != n:
            raise CorruptRawFileError(f"{feat_p}: {x.shape[0]} rows but {lab_p} has {n} labels")
        e = np.asarray(edges)
        if e.ndim != 2 or e.shape[1] != 2 or np.isnan(e.astype(np.float64)).any():
            raise ValueError(f"expected two integer columns, got shape {e.shape}")
        e = e.astype(np.int64)
        ei = undirected_edges(e[:, 0], e[:, 1], n)
        for key, val in extras.items():
            if val.shape[0] != n and key == "node_year":
                raise CorruptRawFileError(f"{year_p}: {val.shape[0]} rows, expected {n}")
        return RawGraph(ei, x, y, extras=extras, meta={"format": "ogb-csv", "raw_directed_edges": int(e.shape[0])})

    return _parse(edge_p, "OGB edge.csv.gz", run)
