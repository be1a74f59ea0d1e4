"""The neighbour-average operator shared by GNNSafe's energy propagation and DAPS's score
diffusion (torch-free: scipy.sparse).

A graph is given either as a PyG ``edge_index`` of shape ``(2, E)`` (column ``(i, j)`` is the
edge ``i -> j``; an edge stored twice counts twice, as in both authors' code) or as a
``scipy.sparse`` matrix ``A`` of shape ``(N, N)`` with ``A[i, j]`` the weight of the edge
``i -> j`` (1 for an unweighted graph: the same graph as its ``edge_index``).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import scipy.sparse as sp

from gs_metrics._validation import check_edge_index

Aggregate = Literal["in", "out"]


def adjacency(graph: Any, num_nodes: int) -> sp.csr_matrix:
    """``A`` (CSR, float64) with ``A[i, j]`` = the summed weight of the edges ``i -> j``."""
    if sp.issparse(graph):
        a = sp.csr_matrix(graph, dtype=np.float64)
        if a.shape != (num_nodes, num_nodes):
            raise ValueError(
                f"graph as a sparse adjacency must have shape ({num_nodes}, {num_nodes}) (one "
                f"row and column per node of the scores), got shape {a.shape}"
            )
        a.sum_duplicates()
        if a.nnz and (not np.isfinite(a.data).all() or a.data.min() < 0):
            raise ValueError("graph (sparse adjacency) must hold finite, non-negative edge weights")
        return a
    ei = check_edge_index(graph, num_nodes)
    ones = np.ones(ei.shape[1], dtype=np.float64)
    return sp.csr_matrix((ones, (ei[0], ei[1])), shape=(num_nodes, num_nodes))


def neighbour_mean(graph: Any, num_nodes: int, aggregate: Aggregate) -> sp.csr_matrix:
    """The row-stochastic operator ``M`` with ``(M x)_i`` = the (weighted) mean of ``x`` over the
    neighbours of ``i``; a node without neighbours gets a zero row, so ``(M x)_i = 0``.

    ``aggregate="in"``: the neighbours of ``i`` are the sources ``j`` of the edges ``j -> i``,
    ``M = D_in^{-1} A^T`` (GNNSafe, PyG's ``source_to_target`` flow). ``"out"``: the targets
    ``j`` of the edges ``i -> j``, ``M = D_out^{-1} A`` (DAPS). The two agree on an undirected
    graph (``edge_index`` holding both directions, ``A`` symmetric).
    """
    a = adjacency(graph, num_nodes)
    if aggregate == "in":
        a = a.T.tocsr()
    elif aggregate != "out":  # pragma: no cover - internal
        raise ValueError(f"aggregate must be 'in' or 'out', got {aggregate!r}")
    deg = np.asarray(a.sum(axis=1)).ravel()
    inv = np.divide(1.0, deg, out=np.zeros_like(deg), where=deg > 0)
    return sp.diags(inv) @ a
