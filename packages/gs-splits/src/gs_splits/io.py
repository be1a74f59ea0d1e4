"""Reading graphs from files (used by the CLI; usable on its own).

Formats (chosen by suffix):

* ``.mat`` (MATLAB v5, e.g. the structural-shifts CoraML file): edges from ``edges``
  ``(2, E)``, or an adjacency from ``network`` / ``adjacency`` / ``adj_matrix`` / ``A``;
  labels from ``labels`` (or one-hot ``group``); features from ``features`` / ``attrb`` / ``X``;
* ``.npz``: a ``scipy.sparse.save_npz`` adjacency, or arrays ``edge_index`` / ``edges``
  ``(2, E)`` with optional ``num_nodes``, ``labels`` / ``y``, ``features`` / ``x``;
* ``.npy``: an edge array ``(2, E)`` or ``(E, 2)``;
* anything else: a text edge list, one ``u v`` pair per line, integer node ids ``0..n-1``.

Text edge lists
---------------
* ``#`` starts a comment (whole line or end of line); comments and blank lines are ignored,
  also when choosing the delimiter: the file is comma separated when a non-comment line has
  a comma, otherwise whitespace separated.
* **Extra columns** (a weight, a timestamp, ...): every line must have the same number of
  columns, at least two. The first two are the node ids; any further columns are ignored,
  whatever they hold (integer, float or text), with one logged warning that says how many
  were ignored. A line with a different number of columns is an error naming the file and
  the line number.
* **Node ids** are ASCII digits only, at most 18 of them (ids below 10**18, within int64):
  a sign, an underscore (``1_0``), a non-ASCII digit (``١٢``, ``１２``) or a float is an error
  naming the file, the line and the id, and a longer run of digits is called too large, where
  Python's ``int()`` would read ``1_0`` as 10 and ``+5`` as 5 (:data:`NODE_ID_DIGITS`).

Sparse node ids
---------------
Node ids index arrays of length ``max id + 1``. When the ids leave more than half of
``0..max id`` unused and more than :data:`SPARSE_ID_SLACK` ids unused, :func:`load_graph`
raises a ``ValueError`` suggesting ``relabel=True`` (``gs-splits make --relabel``) instead of
allocating memory for ids that do not exist. With ``relabel=True`` the ids that occur are
mapped to ``0..k-1`` in ascending order; ``GraphFile.node_ids[i]`` is the original id of node
``i`` (the CLI saves it beside the split as ``OUT.node_ids.npy``).

Every failure to read a file is a ``ValueError`` whose message starts with the file's path.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = ["GraphFile", "load_graph", "read_edge_list", "SPARSE_ID_SLACK"]

log = logging.getLogger(__name__)

#: Unused ids below the largest id tolerated before :func:`load_graph` asks for ``relabel``.
SPARSE_ID_SLACK = 10_000


@dataclass
class GraphFile:
    """A graph read from disk: ``graph`` (edge array or sparse adjacency) plus extras."""

    graph: Any
    num_nodes: int | None
    labels: np.ndarray | None = None
    features: Any = None
    node_ids: np.ndarray | None = None


def _labels(v: Any) -> np.ndarray | None:
    if v is None:
        return None
    if sp.issparse(v):
        v = v.toarray()
    v = np.asarray(v)
    if v.ndim == 2 and 1 not in v.shape:
        return v.argmax(axis=1)
    return v.ravel()


def _int_ids(e: np.ndarray, p: Path) -> np.ndarray:
    e = np.asarray(e)
    if e.dtype == bool or e.dtype.kind not in "iuf":
        raise ValueError(f"{p}: node ids must be integers, got an array of dtype {e.dtype}")
    if e.dtype.kind == "f":
        if not (np.all(np.isfinite(e)) and np.all(e == np.round(e))):
            raise ValueError(f"{p}: node ids must be integers, got non-integer values")
    if e.size and e.min() < 0:
        raise ValueError(f"{p}: node ids must be >= 0, found {int(e.min())}")
    if e.size and e.max() >= 2**62:
        raise ValueError(f"{p}: node id {e.max()} is too large")
    return e.astype(np.int64)


def _edges_2xE(e: Any, p: Path, what: str) -> np.ndarray:
    e = np.asarray(e)
    if sp.issparse(e) or e.ndim != 2 or 2 not in e.shape:
        raise ValueError(f"{p}: {what} must be an edge array of shape (2, E) or (E, 2), got shape {np.shape(e)}")
    if e.shape[0] != 2:
        e = e.T
    return _int_ids(e, p)


#: Most digits of a node id in a text edge list: ids below 10**18 fit int64 with room to spare.
NODE_ID_DIGITS = 18
_ALL_IDS = re.compile(rf"(?:[0-9]{{1,{NODE_ID_DIGITS}}}\n)*[0-9]{{1,{NODE_ID_DIGITS}}}", re.ASCII)


def _check_node_id(p: Path, lineno: int, tok: str) -> None:
    """Raise the one-line error for a text node id that is not 1 to 18 ASCII digits."""
    if re.fullmatch(r"[0-9]+", tok, re.ASCII):
        if len(tok) > NODE_ID_DIGITS:
            raise ValueError(f"{p}: line {lineno}: node id {tok!r} is too large (at most {NODE_ID_DIGITS} "
                             "digits: ids below 10**18, within int64)")
        return
    raise ValueError(f"{p}: line {lineno}: node id {tok!r} is not a non-negative integer "
                     "(ASCII digits 0-9 only)")


def check_regular_file(p: Path, what: str = "a graph file", *, pipe_ok: bool = False) -> None:
    """``ValueError`` naming ``p`` when it exists but is not a regular file: ``/dev/zero`` never
    ends (issue 56), a socket is no file. A link to a regular file is accepted, and with
    ``pipe_ok`` a FIFO (``gs-splits make <(zcat edges.txt.gz)``: a reader that reads once, front
    to back; the on-disk conversion seeks, so it takes regular files only)."""
    import stat

    try:
        mode = p.stat().st_mode
    except OSError:
        return  # missing: the caller's own message
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode) or (pipe_ok and stat.S_ISFIFO(mode)):
        return
    kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a character device" if stat.S_ISCHR(mode)
            else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "not a file")
    raise ValueError(f"{p}: is {kind}, not a regular file; give {what}")


def read_edge_list(p: Path) -> np.ndarray:
    """Read a text edge list (rules in the module docstring); returns ``(2, E)`` int64."""
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{p}: not a text edge list (not UTF-8 text: {exc.reason} at byte {exc.start})") from None
    rows: list[tuple[int, str]] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        body = line.split("#", 1)[0].strip()
        if body:
            rows.append((lineno, body))
    if not rows:
        raise ValueError(f"{p}: the edge list is empty (no lines with 'u v')")
    comma = any("," in body for _, body in rows)
    split = (lambda b: [c.strip() for c in b.split(",")]) if comma else str.split
    ncols = len(split(rows[0][1]))
    if ncols < 2:
        raise ValueError(f"{p}: line {rows[0][0]}: each line needs two node ids 'u v', got {rows[0][1]!r}")
    first: list[str] = []
    second: list[str] = []
    for lineno, body in rows:
        cols = split(body)
        if len(cols) != ncols:
            raise ValueError(
                f"{p}: line {lineno} has {len(cols)} column(s), the first data line has {ncols}; "
                "every line needs the same columns (u v [extra ...])"
            )
        first.append(cols[0])
        second.append(cols[1])
    # one C-level pass over all ids; int64 conversion alone would take '1_0', '+5' and '١٢'
    if not _ALL_IDS.fullmatch("\n".join(first) + "\n" + "\n".join(second)):
        for (lineno, _), u, v in zip(rows, first, second, strict=True):
            for tok in (u, v):
                _check_node_id(p, lineno, tok)
    src = np.array(first, dtype=np.int64)
    dst = np.array(second, dtype=np.int64)
    if ncols and ncols > 2:
        log.warning("%s: ignored %d extra column(s) after 'u v' on every line (weights / "
                    "timestamps are not used by the splits)", p, ncols - 2)
    return np.stack([src, dst])


def _relabel_or_check(gf: GraphFile, p: Path, relabel: bool, num_nodes: int | None) -> GraphFile:
    """Apply ``relabel`` to an edge-array graph, or refuse ids that are mostly unused."""
    e = gf.graph
    if sp.issparse(e) or not isinstance(e, np.ndarray) or e.size == 0:
        if relabel and sp.issparse(e):
            raise ValueError(f"{p}: --relabel applies to edge lists; this file holds an adjacency matrix (ids are 0..n-1 already)")
        if sp.issparse(e) and num_nodes is None:
            _check_adjacency_size(p, tuple(e.shape), int(e.nnz))
        return gf
    if relabel:
        if num_nodes is not None or gf.labels is not None or gf.features is not None:
            raise ValueError(
                f"{p}: relabel cannot be combined with num_nodes, labels or features (their rows "
                "follow the original ids); relabel the file yourself or drop relabel"
            )
        ids, inverse = np.unique(e, return_inverse=True)
        return GraphFile(inverse.reshape(e.shape).astype(np.int64), int(ids.size), node_ids=ids)
    n = gf.num_nodes if gf.num_nodes is not None else int(e.max()) + 1
    if num_nodes is not None:
        n = max(n, int(num_nodes))
    used = int(np.unique(e).size) if n > SPARSE_ID_SLACK else n
    if num_nodes is None and gf.num_nodes is None and n - used > max(used, SPARSE_ID_SLACK):
        raise ValueError(
            f"{p}: node ids are sparse: {used} distinct ids but the largest is {n - 1}, so "
            f"{n} nodes would be allocated; use relabel (gs-splits make --relabel) to number "
            "the ids that occur 0..k-1 (the mapping is saved beside the split)"
        )
    return gf


def _check_adjacency_size(p: Path, shape: tuple[int, ...], nnz: int) -> None:
    """Refuse an adjacency whose nodes are almost all isolated (the rule of sparse node ids:
    more than half of the nodes and more than :data:`SPARSE_ID_SLACK` without an edge), before
    the per-node arrays of the split are allocated: a ``3e8 x 3e8`` matrix with 5 entries ended
    in a generic "out of memory" after 1.3 GB (issue 34)."""
    n = int(max(shape)) if shape else 0
    touched = min(n, 2 * nnz)  # each stored entry gives an edge to at most two nodes
    if n - touched > max(touched, SPARSE_ID_SLACK):
        raise ValueError(
            f"{p}: a scipy.sparse adjacency of shape {shape[0]} x {shape[-1]} with {nnz} stored "
            f"entries: at most {touched} of its {n} nodes have an edge, so {n} nodes would be "
            "allocated; save the graph as an edge list and use relabel (gs-splits make --relabel), "
            f"or give num_nodes (--num-nodes {n}) if the isolated nodes are real"
        )


def _check_sparse_npz_size(p: Path) -> None:
    """:func:`_check_adjacency_size` of a ``scipy.sparse.save_npz`` file from its ``shape`` and
    entry arrays only, without reading ``indptr`` (``n + 1`` integers)."""
    try:
        with np.load(p, allow_pickle=False) as z:
            files = set(z.files)
            if "shape" not in files or not ({"indices", "row"} & files):
                return
            shape = tuple(int(x) for x in np.asarray(z["shape"]).ravel())
            entries = "indices" if "indices" in files else "row"
            with z.zip.open(f"{entries}.npy") as fh:  # the header only: its length is nnz
                fmt = np.lib.format
                version = fmt.read_magic(fh)
                read = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
                nnz = int(np.prod(read(fh)[0]))
    except Exception:  # noqa: BLE001 - an unreadable file is reported by the loader itself
        return
    if len(shape) == 2:
        _check_adjacency_size(p, shape, nnz)


def load_graph(path: str | Path, *, relabel: bool = False, num_nodes: int | None = None) -> GraphFile:
    """Read a graph file (see the module docstring for the formats and rules).

    Parameters
    ----------
    path : path of the graph file
    relabel : bool, default False
        Number the node ids that occur ``0..k-1`` (ascending); ``GraphFile.node_ids`` maps back.
    num_nodes : int, optional
        The caller's node count (only used for the sparse-id check: giving it says that the
        unused ids are real isolated nodes).

    Raises
    ------
    FileNotFoundError
        No such file.
    ValueError
        The file cannot be read as a graph (truncated, damaged, wrong content); the message
        starts with its path.
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"graph file not found: {p}")
    if p.is_dir():
        raise ValueError(f"{p}: is a folder, not a graph file")
    check_regular_file(p, pipe_ok=True)
    if p.suffix.lower() == ".npz" and num_nodes is None:
        _check_sparse_npz_size(p)
    try:
        gf = _load_graph(p)
    except FileNotFoundError:
        raise
    except Exception as exc:  # noqa: BLE001 - any parser failure names the file
        if isinstance(exc, ValueError) and str(exc).startswith(str(p)):
            raise
        raise ValueError(
            f"{p}: cannot read this {p.suffix or 'text'} graph file (truncated, damaged or another "
            f"format: {type(exc).__name__}: {' '.join(str(exc).split())[:200]})"
        ) from None
    return _relabel_or_check(gf, p, relabel, num_nodes)


def _load_graph(p: Path) -> GraphFile:
    suffix = p.suffix.lower()
    if suffix == ".mat":
        from scipy.io import loadmat

        d = loadmat(p)
        feats = next((d[k] for k in ("features", "attrb", "X") if k in d), None)
        labels = _labels(next((d[k] for k in ("labels", "group", "y") if k in d), None))
        if "edges" in d:
            e = _edges_2xE(d["edges"], p, "'edges'")
            n = labels.size if labels is not None else (feats.shape[0] if feats is not None else None)
            return GraphFile(e, n, labels, feats)
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
            n = None
            if "num_nodes" in files:
                nn = np.asarray(z["num_nodes"])
                if nn.size != 1 or nn.dtype.kind not in "iu" or int(nn.ravel()[0]) < 1:
                    raise ValueError(f"{p}: 'num_nodes' must be one positive integer, got {nn.ravel()[:3]}")
                n = int(nn.ravel()[0])
            labels = _labels(next((z[k] for k in ("labels", "y") if k in files), None))
            feats = next((z[k] for k in ("features", "x") if k in files), None)
            return GraphFile(_edges_2xE(z[key], p, f"'{key}'"), n, labels, feats)
    if suffix == ".npy":
        return GraphFile(_edges_2xE(np.load(p, allow_pickle=False), p, "the array"), None)
    return GraphFile(read_edge_list(p), None)
