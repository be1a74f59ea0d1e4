"""Graph normalisation: every accepted input becomes one undirected simple :class:`CSRGraph`.

Accepted inputs (converted once, at the entry of a public function):

* an edge index array of shape ``(2, E)`` (numpy or anything ``np.asarray`` accepts);
* a ``scipy.sparse`` matrix or array (square, ``(n, n)``; the non-zero pattern is the edge set);
* a networkx graph (nodes are relabelled ``0..n-1`` in ``G.nodes`` order);
* a torch tensor ``(2, E)`` or a PyG ``Data`` object (duck-typed: ``edge_index`` and
  ``num_nodes``), without gs-splits ever importing torch;
* an existing :class:`CSRGraph` (returned as is);
* an on-disk CSR folder opened with :func:`gs_splits.ondisk.open_ondisk` (anything with
  ``to_csr_graph()``): a :class:`CSRGraph` over its memory-mapped arrays.

How edges are normalised (documented, never silent: every count is kept in
:attr:`CSRGraph.stats` and logged):

* **direction** — the graph is symmetrised: an edge given in one direction only gets its
  reverse (counted in ``one_directional_pairs``);
* **self-loops** — removed (``self_loops``); the paper's properties are defined on simple graphs;
* **duplicates** — repeated ``(u, v)`` pairs are kept once (``duplicate_edges``);
* **isolated nodes** — kept (nodes ``0..num_nodes-1`` all exist; give ``num_nodes`` when the
  highest ids have no edges).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # both load on the first call that needs them, not on `import gs_splits`
    import scipy.sparse as sp

    from gs_splits import _kernels

__all__ = ["CSRGraph", "as_csr_graph", "fingerprint_arrays"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, eq=False)
class CSRGraph:
    """Undirected simple graph in compressed sparse row form (both directions stored).

    Attributes
    ----------
    indptr : numpy.ndarray of int64, shape (num_nodes + 1,)
    indices : numpy.ndarray of int32 (int64 for more than 2**31 nodes), shape (2 * num_edges,)
        Neighbours of node ``i`` are ``indices[indptr[i]:indptr[i + 1]]``, sorted ascending.
    num_nodes : int
    stats : dict
        What the normalisation did: ``input_edges``, ``self_loops``, ``duplicate_edges``,
        ``one_directional_pairs``, ``num_edges`` (undirected), ``isolated_nodes``.

    Notes
    -----
    The structural properties reuse a degree-ordered copy of the adjacency (built on first
    use, about 4 bytes per stored entry plus 20 bytes per node), kept with the graph in a
    private cache; :meth:`clear_cache` frees it. The arrays must not be modified in place.
    """

    indptr: np.ndarray
    indices: np.ndarray
    num_nodes: int
    stats: dict = field(default_factory=dict)
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def num_edges(self) -> int:
        """Number of undirected edges."""
        return int(self.indices.size // 2)

    @property
    def degree(self) -> np.ndarray:
        """Node degrees (int64), isolated nodes have 0."""
        return np.diff(self.indptr)

    def clear_cache(self) -> None:
        """Free the derived structures kept for the property kernels (rebuilt on demand)."""
        self._cache.clear()

    def degree_ordered(self) -> _kernels.DegreeOrdered:
        """The graph relabelled by descending degree (cached; used by the property kernels)."""
        from gs_splits import _kernels  # deferred: numba loads on first call
        dg = self._cache.get("degree_ordered")
        if dg is None:
            dg = _kernels.DegreeOrdered(self.indptr, self.indices)
            self._cache["degree_ordered"] = dg
        return dg

    def neighbors(self, node: int) -> np.ndarray:
        """Sorted neighbour ids of ``node``."""
        return self.indices[self.indptr[node] : self.indptr[node + 1]]

    def to_scipy(self) -> sp.csr_array:
        """Symmetric 0/1 adjacency as a ``scipy.sparse.csr_array`` (float64)."""
        import scipy.sparse as sp  # deferred: half the cost of `import gs_splits` otherwise

        data = np.ones(self.indices.size, dtype=np.float64)
        return sp.csr_array((data, self.indices, self.indptr), shape=(self.num_nodes,) * 2)

    def edge_index(self) -> np.ndarray:
        """Undirected edges once each, ``(2, num_edges)`` int64 with ``u < v``."""
        rows = np.repeat(np.arange(self.num_nodes, dtype=np.int64), self.degree)
        keep = rows < self.indices
        return np.stack([rows[keep], self.indices[keep].astype(np.int64)])

    def fingerprint(self) -> str:
        """SHA-256 of the normalised graph (node count and sorted CSR arrays), hex."""
        return fingerprint_arrays(self.num_nodes, (self.indptr, self.indices))

    def subgraph(self, nodes: np.ndarray) -> CSRGraph:
        """Induced subgraph on ``nodes`` (relabelled 0..len(nodes)-1 in the given order)."""
        nodes = np.asarray(nodes, dtype=np.int64)
        sub = self.to_scipy()[nodes][:, nodes].tocsr()
        sub.sort_indices()
        return CSRGraph(
            sub.indptr.astype(np.int64), sub.indices.astype(self.indices.dtype), len(nodes), {}
        )


def fingerprint_arrays(num_nodes: int, arrays: Iterable[np.ndarray]) -> str:
    """The rule of :meth:`CSRGraph.fingerprint`, the one place gs-splits hashes a graph: SHA-256
    of ``int64(num_nodes)`` followed by the values of ``arrays`` in turn as little-endian int64.
    The arrays may come in consecutive blocks (the on-disk CSR streams its files this way), so
    the same graph has the same fingerprint in memory and on disk."""
    h = hashlib.sha256()
    h.update(np.int64(num_nodes).tobytes())
    for a in arrays:
        h.update(np.ascontiguousarray(a, dtype="<i8"))
    return h.hexdigest()


def _from_torch_like(obj: Any) -> np.ndarray:
    return obj.detach().cpu().numpy()


def _is_torch_tensor(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] == "torch" and hasattr(obj, "detach")


def _edges_of(graph: Any, num_nodes: int | None) -> tuple[np.ndarray, int | None]:
    """Return ``(edges (2,E) int64, num_nodes or None)`` for any accepted input."""
    import scipy.sparse as sp  # deferred: half the cost of `import gs_splits` otherwise

    # PyG Data / anything with edge_index (duck typing; never import torch)
    if hasattr(graph, "edge_index") and not isinstance(graph, np.ndarray):
        ei = graph.edge_index
        ei = _from_torch_like(ei) if _is_torch_tensor(ei) else np.asarray(ei)
        if num_nodes is None:
            nn = getattr(graph, "num_nodes", None)
            num_nodes = int(nn) if nn is not None else None
        return ei, num_nodes
    if _is_torch_tensor(graph):
        return _from_torch_like(graph), num_nodes
    if sp.issparse(graph):
        if graph.ndim != 2 or graph.shape[0] != graph.shape[1]:
            raise ValueError(
                f"graph: a scipy.sparse adjacency must be square (n, n), got shape {graph.shape}"
            )
        coo = sp.coo_array(graph)
        coo.eliminate_zeros()
        if num_nodes is not None and num_nodes != graph.shape[0]:
            raise ValueError(
                f"num_nodes={num_nodes} disagrees with the adjacency shape {graph.shape}"
            )
        return np.stack([coo.row.astype(np.int64), coo.col.astype(np.int64)]), graph.shape[0]
    mod = type(graph).__module__
    if mod.startswith("networkx"):
        nodes = list(graph.nodes)
        index = {v: i for i, v in enumerate(nodes)}
        if graph.number_of_edges():
            e = np.array([(index[u], index[v]) for u, v in graph.edges()], dtype=np.int64).T
        else:
            e = np.zeros((2, 0), dtype=np.int64)
        if num_nodes is not None and num_nodes != len(nodes):
            raise ValueError(f"num_nodes={num_nodes} disagrees with the networkx graph ({len(nodes)} nodes)")
        return e, len(nodes)
    if isinstance(graph, (np.ndarray, list, tuple)):
        return np.asarray(graph), num_nodes
    raise TypeError(
        f"graph: unsupported type {type(graph).__name__}; accepted are an edge index array of "
        "shape (2, E), a scipy.sparse (n, n) matrix, a networkx graph, a torch tensor (2, E), a "
        "PyG Data object (anything with .edge_index), a gs_splits.CSRGraph or an OnDiskCSR"
    )


def as_csr_graph(graph: Any, num_nodes: int | None = None) -> CSRGraph:
    """Normalise any accepted graph input into an undirected simple :class:`CSRGraph`.

    Parameters
    ----------
    graph : array (2, E), scipy.sparse (n, n), networkx graph, torch tensor, PyG Data, CSRGraph or OnDiskCSR
        See the module docstring for the exact rules (symmetrised, self-loops and duplicates
        removed, isolated nodes kept).
    num_nodes : int, optional
        Number of nodes; default ``max id + 1`` for edge arrays (the shape for matrices).

    Returns
    -------
    CSRGraph

    Raises
    ------
    ValueError
        Empty graph (no nodes), wrong shape, non-integer ids, ids out of ``[0, num_nodes)``
        (the message names the first offending edge).
    TypeError
        Unsupported input type.

    Examples
    --------
    >>> import numpy as np
    >>> g = as_csr_graph(np.array([[0, 1, 1], [1, 2, 2]]), num_nodes=4)
    >>> g.num_nodes, g.num_edges, g.stats["duplicate_edges"]
    (4, 2, 1)
    """
    from gs_splits import _kernels  # deferred: numba loads on first call
    if not isinstance(graph, CSRGraph) and callable(getattr(graph, "to_csr_graph", None)):
        graph = graph.to_csr_graph()  # an OnDiskCSR: its arrays, memory-mapped
    if isinstance(graph, CSRGraph):
        if num_nodes is not None and num_nodes != graph.num_nodes:
            raise ValueError(f"num_nodes={num_nodes} disagrees with the graph ({graph.num_nodes} nodes)")
        return graph
    if num_nodes is not None and (
        isinstance(num_nodes, bool) or not isinstance(num_nodes, (int, np.integer)) or num_nodes < 1
    ):
        raise ValueError(
            f"num_nodes must be a positive integer (or None to infer it), got {num_nodes!r}: "
            "the graph would be empty"
        )
    edges, num_nodes = _edges_of(graph, num_nodes)
    if edges.ndim != 2 or edges.shape[0] != 2:
        if edges.ndim == 2 and edges.shape[1] == 2 and edges.shape[0] != 2:
            hint = f" (got ({edges.shape[0]}, 2): pass np.asarray(edges).T)"
        elif edges.ndim == 2 and edges.shape[0] == edges.shape[1]:
            hint = (f" (got {edges.shape}: a dense adjacency matrix? pass "
                    "scipy.sparse.csr_matrix(adjacency))")
        else:
            hint = f" (got shape {edges.shape})"
        raise ValueError(f"graph: an edge index must have shape (2, E){hint}")
    if edges.size and not np.issubdtype(edges.dtype, np.integer):
        if np.issubdtype(edges.dtype, np.floating) and np.all(np.isfinite(edges)) and np.all(
            edges == np.round(edges)
        ):
            edges = edges.astype(np.int64)
        else:
            raise ValueError(f"graph: node ids must be integers, got dtype {edges.dtype}")
    # int32 / int64 ids are used as they are (no copy to int64 for large int32 edge lists)
    idt = edges.dtype if edges.dtype in (np.dtype(np.int32), np.dtype(np.int64)) else np.dtype(np.int64)
    src = np.ascontiguousarray(edges[0], dtype=idt)
    dst = np.ascontiguousarray(edges[1], dtype=idt)
    if num_nodes is None:
        num_nodes = int(max(src.max(), dst.max())) + 1 if src.size else 0
    num_nodes = int(num_nodes)
    if num_nodes <= 0:
        raise ValueError("graph is empty: it has no nodes (give num_nodes for a graph without edges)")
    bad = int(_kernels.first_bad_edge(src, dst, num_nodes)) if src.size else -1
    if bad >= 0:
        raise ValueError(
            f"graph: edge {bad} ({int(src[bad])}, {int(dst[bad])}) has a node id outside "
            f"[0, {num_nodes}); node ids must be 0..num_nodes-1"
        )
    indptr, indices, loops, unique_directed = _kernels.build_symmetric_csr(src, dst, num_nodes)
    nonloop = src.size - loops
    stats = {
        "input_edges": int(src.size),
        "self_loops": int(loops),
        "duplicate_edges": int(nonloop - unique_directed),
        "one_directional_pairs": int(indices.size - unique_directed),
        "num_edges": int(indices.size // 2),
        "isolated_nodes": int(np.count_nonzero(np.diff(indptr) == 0)),
    }
    if loops:
        log.warning("graph: removed %d self-loop(s)", loops)
    if stats["duplicate_edges"]:
        log.warning("graph: removed %d duplicate edge(s)", stats["duplicate_edges"])
    if stats["one_directional_pairs"]:
        reciprocal = (unique_directed - stats["one_directional_pairs"]) // 2
        level = logging.WARNING if reciprocal else logging.INFO
        log.log(
            level,
            "graph: symmetrised %d edge(s) given in one direction only (%d pair(s) given in both)",
            stats["one_directional_pairs"],
            reciprocal,
        )
    return CSRGraph(indptr, indices, num_nodes, stats)
