"""Structural node properties (structural-shifts paper, section 3.2) and a few extra built-ins.

Every function takes any graph input accepted by :func:`gs_splits.as_csr_graph` and works on
the undirected simple graph it produces. All of them return a float64 (or int64) array with
one value per node; isolated nodes are kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gs_splits.graph import as_csr_graph

__all__ = [
    "pagerank",
    "personalized_pagerank",
    "clustering_coefficient",
    "degree",
    "core_number",
    "eigenvector_centrality",
    "approximate_betweenness",
    "triangles",
]

#: Default L1 stopping tolerance of the power iteration; the L1 error to the exact stationary
#: vector is then at most ``(1 - alpha) / alpha * tol`` (about 5.7e-11 for alpha = 0.15).
DEFAULT_TOL = 1e-11


def _personalization_vector(n: int, personalization: Any) -> np.ndarray:
    if personalization is None:
        return np.full(n, 1.0 / n)
    p = np.asarray(personalization, dtype=np.float64)
    if p.shape != (n,):
        raise ValueError(f"personalization must have shape ({n},), got {p.shape}")
    if not np.all(np.isfinite(p)) or np.any(p < 0) or p.sum() <= 0:
        raise ValueError("personalization must be finite, non-negative and not all zero")
    return p / p.sum()


def pagerank(
    graph: Any,
    alpha: float = 0.15,
    *,
    personalization: np.ndarray | None = None,
    tol: float = DEFAULT_TOL,
    max_iter: int = 10_000,
    x0: np.ndarray | None = None,
    num_nodes: int | None = None,
    callback: Callable[[int, float], None] | None = None,
) -> np.ndarray:
    r"""PageRank, eq. (1) of the structural-shifts paper (Bazhenov et al., section 3.2).

    :math:`\pi = (1-\alpha) A D^{-1} \pi + \alpha p`, computed by power iteration on the
    undirected simple graph. Dangling (isolated) nodes send their mass to ``p``, as networkx
    does (``dangling=None``), so the result always sums to 1.

    Parameters
    ----------
    graph : any input accepted by :func:`as_csr_graph`
    alpha : float, default 0.15
        Restart probability (networkx's ``alpha`` is the damping ``1 - alpha`` = 0.85).
    personalization : array (n,), optional
        Restart distribution ``p``; uniform ``1/n`` by default (normalised to sum 1).
    tol : float, default 1e-11
        Stop when the L1 change between successive iterates is below ``tol``. The authors'
        published CoraML values are reproduced to machine precision with ``tol=1e-6``
        (their stopping rule, with the iteration started at ``p``).
    max_iter : int, default 10000
    x0 : array (n,), optional
        Start vector; default ``p`` (the authors' choice; networkx starts at uniform).
    num_nodes : int, optional
        Passed to :func:`as_csr_graph`.
    callback : callable(iteration, l1_change), optional
        Called after every iteration (progress reporting).

    Returns
    -------
    numpy.ndarray of float64, shape (n,)
    """
    from gs_splits import _kernels  # deferred: numba loads on first call
    g = as_csr_graph(graph, num_nodes)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha (restart probability) must be in (0, 1), got {alpha}")
    if not tol > 0:
        raise ValueError(f"tol must be positive, got {tol}")
    n = g.num_nodes
    p = _personalization_vector(n, personalization)
    x = p if x0 is None else _personalization_vector(n, x0)
    out, _, _ = _kernels.power_iteration(
        g.degree_ordered(), p, x, 1.0 - alpha, float(tol), int(max_iter), callback
    )
    return out


def personalized_pagerank(
    graph: Any,
    source: int | None = None,
    alpha: float = 0.15,
    *,
    tol: float = DEFAULT_TOL,
    max_iter: int = 10_000,
    num_nodes: int | None = None,
    callback: Callable[[int, float], None] | None = None,
) -> np.ndarray:
    """Personalized PageRank with a one-hot restart on ``source`` (paper section 3.2, locality).

    Eq. (1) with ``p = e_source``. With ``source=None`` the node of highest PageRank is used,
    as in the paper (ties: the lowest node id).

    Parameters
    ----------
    graph : any input accepted by :func:`as_csr_graph`
    source : int, optional
        Restart node; default the argmax of :func:`pagerank`.
    alpha, tol, max_iter, num_nodes, callback
        As in :func:`pagerank`.

    Returns
    -------
    numpy.ndarray of float64, shape (n,)
    """
    g = as_csr_graph(graph, num_nodes)
    n = g.num_nodes
    if source is None:
        source = int(np.argmax(pagerank(g, alpha, tol=tol, max_iter=max_iter)))
    p = _one_hot(n, source)
    return pagerank(g, alpha, personalization=p, tol=tol, max_iter=max_iter, callback=callback)


def _one_hot(n: int, source: Any) -> np.ndarray:
    """The restart vector ``e_source`` of personalized PageRank (``source`` checked)."""
    if isinstance(source, bool) or not isinstance(source, (int, np.integer)):
        raise TypeError(f"source must be an integer node id, got {type(source).__name__}")
    if not 0 <= int(source) < n:
        raise ValueError(f"source={source} is not a node id in [0, {n})")
    p = np.zeros(n)
    p[int(source)] = 1.0
    return p


def triangles(graph: Any, *, num_nodes: int | None = None) -> np.ndarray:
    """Number of triangles through every node (int64).

    Each triangle is found once on the degree-oriented graph (edges point to the endpoint of
    higher degree): at its middle node, intersecting out-neighbour lists through a bitmap.
    """
    from gs_splits import _kernels  # deferred: numba loads on first call
    g = as_csr_graph(graph, num_nodes)
    return _kernels.triangles_per_node(g.degree_ordered())


def clustering_coefficient(graph: Any, *, num_nodes: int | None = None) -> np.ndarray:
    r"""Local clustering coefficient, eq. (2) of the structural-shifts paper (section 3.2).

    :math:`c_i = 2\gamma_i / (d_i (d_i - 1))` with :math:`\gamma_i` the number of edges between
    the neighbours of ``i`` (= triangles through ``i``); 0 for degree < 2. Computed as the
    correctly rounded quotient of the two exact integers, so it equals networkx's
    ``clustering`` bit for bit.

    Returns
    -------
    numpy.ndarray of float64, shape (n,)
    """
    from gs_splits import _kernels  # deferred: numba loads on first call
    g = as_csr_graph(graph, num_nodes)
    return _clustering_from_triangles(_kernels.triangles_per_node(g.degree_ordered()), g.degree)


def _clustering_from_triangles(t: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Eq. (2) from the exact triangle counts ``t`` and degrees ``d`` (int64): ``2 t / (d (d-1))``
    correctly rounded, 0 for degree < 2 (shared by the in-memory and the on-disk path)."""
    denom = d * (d - 1)
    out = np.zeros(d.size, dtype=np.float64)
    ok = d >= 2
    out[ok] = (2 * t[ok]).astype(np.float64) / denom[ok].astype(np.float64)
    return out


def degree(graph: Any, *, num_nodes: int | None = None) -> np.ndarray:
    """Node degree in the undirected simple graph (float64, for use as a split property)."""
    return as_csr_graph(graph, num_nodes).degree.astype(np.float64)


def core_number(graph: Any, *, num_nodes: int | None = None) -> np.ndarray:
    """k-core number of every node (Batagelj-Zaversnik), as networkx's ``core_number``."""
    from gs_splits import _kernels  # deferred: numba loads on first call
    g = as_csr_graph(graph, num_nodes)
    return _kernels.core_numbers(g.indptr, g.indices, g.degree).astype(np.float64)


def eigenvector_centrality(
    graph: Any, *, tol: float = 1e-10, max_iter: int = 10_000, num_nodes: int | None = None
) -> np.ndarray:
    """Eigenvector centrality (principal eigenvector of A, L2-normalised, non-negative).

    Power iteration on ``A + I`` from the uniform vector, as networkx's
    ``eigenvector_centrality`` does; stops when the L1 change is below ``n * tol``.
    """
    g = as_csr_graph(graph, num_nodes)
    a = g.to_scipy()
    n = g.num_nodes
    x = np.full(n, 1.0 / n)
    for _ in range(max_iter):
        xlast = x
        x = xlast + a @ xlast
        norm = np.linalg.norm(x)
        if norm == 0:
            return np.zeros(n)
        x = x / norm
        if np.abs(x - xlast).sum() < n * tol:
            return x
    raise RuntimeError(f"eigenvector centrality did not converge in {max_iter} iterations")


def approximate_betweenness(
    graph: Any,
    k: int | None = 256,
    *,
    seed: int | np.random.Generator = 0,
    normalized: bool = True,
    num_nodes: int | None = None,
) -> np.ndarray:
    """Betweenness centrality estimated from ``k`` random BFS sources (Brandes 2001/2008).

    With ``k=None`` or ``k >= n`` it is exact. Scaling follows networkx's
    ``betweenness_centrality(G, k, normalized)`` for undirected graphs.
    """
    from gs_splits import _kernels  # deferred: numba loads on first call
    g = as_csr_graph(graph, num_nodes)
    n = g.num_nodes
    rng = np.random.default_rng(seed)
    if k is None or k >= n:
        sources = np.arange(n, dtype=np.int64)
    else:
        if k <= 0:
            raise ValueError(f"k must be positive, got {k}")
        sources = np.sort(rng.choice(n, size=k, replace=False)).astype(np.int64)
    bc = np.zeros(n, dtype=np.float64)
    _kernels.brandes_accumulate(g.indptr, g.indices, sources, bc)
    if normalized:
        scale = 1.0 / ((n - 1) * (n - 2)) if n > 2 else None
    else:
        scale = 0.5
    if scale is not None:
        if k is not None and k < n:
            scale = scale * n / k
        bc *= scale
    return bc
