"""k-nearest-neighbour graphs: PyG's ``torch_cluster`` when installed, else pure torch.

Fallback (pure torch, no torch-cluster, no pyg-lib): exact Euclidean distances computed
coordinate-wise (no ``|a|^2 + |b|^2 - 2ab`` cancellation in low dimension), ties (equal
computed distances) broken by the smaller node index. Batched: points of different clouds
(``batch``) are never connected. Memory-bounded: distances are computed for groups of clouds
and blocks of query points holding at most ``max_elements`` entries.

With ``torch_cluster`` importable (``backend="auto"``), its ``knn_graph`` finds the
neighbours (KD-tree on CPU, brute force on GPU) and its edges are put in the fallback's
conventions (self loops, order, batch need not be sorted), so both paths give the same edge
index; they may differ only in which of several points at exactly the same distance fills
the k-th place.
"""

from __future__ import annotations

import torch
from torch import Tensor

from gs_models._validation import check_positive_int

try:  # optional compiled backend; a wheel built for another torch fails with OSError
    import torch_cluster as _torch_cluster
except (ImportError, OSError):  # pragma: no cover - depends on the environment
    _torch_cluster = None

__all__ = ["knn_graph", "KNN_BACKENDS", "has_torch_cluster"]

#: ``backend`` values of :func:`knn_graph`.
KNN_BACKENDS: tuple[str, ...] = ("auto", "torch_cluster", "torch")


def has_torch_cluster() -> bool:
    """Whether ``torch_cluster`` is importable (then ``knn_graph`` uses it by default)."""
    return _torch_cluster is not None


def _check(pos: object, k: object, batch: object) -> tuple[Tensor, int, Tensor | None]:
    if not isinstance(pos, Tensor) or pos.dim() != 2 or not torch.is_floating_point(pos):
        raise ValueError(
            f"pos must be a float tensor of shape (num_points, dim), got {getattr(pos, 'shape', type(pos).__name__)}"
        )
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be an int >= 1 (number of neighbours), got {k!r}")
    if pos.numel() and not bool(torch.isfinite(pos).all()):
        raise ValueError("pos contains NaN or inf; accepted are finite coordinates")
    if batch is not None:
        if (
            not isinstance(batch, Tensor)
            or batch.shape != (pos.size(0),)
            or batch.dtype not in (torch.int64, torch.int32)
        ):
            raise ValueError(
                f"batch must be an integer tensor of shape ({pos.size(0)},) assigning each point to a cloud, "
                f"got {getattr(batch, 'shape', type(batch).__name__)}"
            )
        if batch.numel() and int(batch.min()) < 0:
            raise ValueError("batch holds negative cloud ids; accepted are ids >= 0")
    return pos, k, batch


def _dist(q: Tensor, p: Tensor, exact: bool) -> Tensor:
    """Euclidean distances ``(G, R, M)`` between queries ``(G, R, D)`` and points ``(G, M, D)``."""
    mode = "donot_use_mm_for_euclid_dist" if exact else "use_mm_for_euclid_dist"
    return torch.cdist(q, p, p=2.0, compute_mode=mode)


def _select(d: Tensor, k: int) -> tuple[Tensor, Tensor]:
    """k smallest per row, ordered by (distance, column index); ``inf`` marks invalid columns."""
    kk = min(k, d.size(-1))
    vals, idx = torch.topk(d, kk, dim=-1, largest=False, sorted=True)
    # ties: topk's order among equal values is unspecified, and a tie may straddle the k-th place
    kth = vals[..., -1:]
    n_le = (d <= kth).sum(-1)
    straddle = (n_le > kk) & torch.isfinite(kth.squeeze(-1))
    # order selected entries by (value, index): sort by index, then stable sort by value
    order = torch.argsort(idx, dim=-1)
    idx = torch.gather(idx, -1, order)
    vals = torch.gather(vals, -1, order)
    order = torch.sort(vals, dim=-1, stable=True).indices
    idx = torch.gather(idx, -1, order)
    vals = torch.gather(vals, -1, order)
    if bool(straddle.any()):
        rows = straddle.nonzero(as_tuple=True)
        sub = d[rows]
        s_vals, s_idx = torch.sort(sub, dim=-1, stable=True)
        vals[rows] = s_vals[..., :kk]
        idx[rows] = s_idx[..., :kk]
    return vals, idx


def knn_graph(
    pos: Tensor,
    k: int,
    batch: Tensor | None = None,
    *,
    loop: bool = False,
    max_elements: int = 2**24,
    exact_max_dim: int = 4,
    backend: str = "auto",
) -> Tensor:
    """k-nearest-neighbour graph of a batch of point clouds.

    Parameters
    ----------
    pos : Tensor, shape (N, D)
        Coordinates (or features, for DGCNN's dynamic graphs).
    k : int
        Neighbours per point (``>= 1``). A point in a cloud with fewer than ``k`` other points
        is connected to all of them.
    batch : Tensor, shape (N,), optional
        Cloud id of every point (need not be sorted).
    loop : bool
        Whether a point counts as its own neighbour (distance 0).
    max_elements : int
        Upper bound on the number of pairwise distances held in memory at once.
    exact_max_dim : int
        Up to this dimension distances are computed from coordinate differences (exact ties
        are detected exactly); above it the faster ``|a|^2 + |b|^2 - 2ab`` expansion is used
        (DGCNN's feature-space graphs).
    backend : {"auto", "torch_cluster", "torch"}
        ``"auto"``: ``torch_cluster.knn_graph`` when it is importable and ``pos`` is float32 or
        float64, else the pure-torch fallback; ``"torch_cluster"`` requires it (ImportError
        otherwise); ``"torch"``: always the fallback. ``max_elements`` and
        ``exact_max_dim`` apply to the fallback only.

    Returns
    -------
    Tensor, shape (2, E)
        ``edge_index[0]`` = neighbour (source), ``edge_index[1]`` = centre point (target),
        grouped by target in increasing order, neighbours ordered by (distance, index), the
        ``source_to_target`` convention of PyG's ``knn_graph``.
    """
    pos, k, batch = _check(pos, k, batch)
    check_positive_int(max_elements, "max_elements")
    if backend not in KNN_BACKENDS:
        raise ValueError(f"backend must be one of {KNN_BACKENDS}, got {backend!r}")
    if backend == "torch_cluster" and _torch_cluster is None:
        raise ImportError(
            "knn_graph(backend='torch_cluster'): torch_cluster is not importable; install the "
            "wheel matching your torch from https://data.pyg.org/whl/ or use backend='auto'"
        )
    if backend == "torch_cluster" or (
        backend == "auto" and _torch_cluster is not None and pos.dtype in (torch.float32, torch.float64)
    ):
        return _knn_torch_cluster(pos, k, batch, loop)
    n, dim = pos.shape
    device = pos.device
    empty = torch.empty(2, 0, dtype=torch.long, device=device)
    if n == 0:
        return empty
    if batch is None:
        batch = torch.zeros(n, dtype=torch.long, device=device)
    batch = batch.long()
    perm = torch.argsort(batch, stable=True)
    pos_s, batch_s = pos[perm], batch[perm]
    counts = torch.bincount(batch_s)
    counts = counts[counts > 0]
    ptr = torch.cat([counts.new_zeros(1), counts.cumsum(0)]).tolist()
    counts_l = counts.tolist()
    exact = dim <= exact_max_dim

    srcs, dsts = [], []
    g0 = 0
    num_graphs = len(counts_l)
    while g0 < num_graphs:
        # group consecutive clouds while the padded distance block fits
        g1, nmax = g0 + 1, counts_l[g0]
        while g1 < num_graphs and (g1 - g0 + 1) * max(nmax, counts_l[g1]) ** 2 <= max_elements:
            nmax = max(nmax, counts_l[g1])
            g1 += 1
        sizes = torch.tensor(counts_l[g0:g1], device=device)
        ng = g1 - g0
        start = ptr[g0]
        total = ptr[g1] - start
        local_graph = torch.repeat_interleave(torch.arange(ng, device=device), sizes)
        offsets = torch.tensor(ptr[g0:g1], device=device) - start
        local_pos = torch.arange(total, device=device) - offsets[local_graph]
        dense = pos_s.new_zeros(ng, nmax, dim)
        dense[local_graph, local_pos] = pos_s[start : ptr[g1]]
        valid = torch.zeros(ng, nmax, dtype=torch.bool, device=device)
        valid[local_graph, local_pos] = True
        rows_per_block = max(1, min(nmax, max_elements // max(1, ng * nmax)))
        for r0 in range(0, nmax, rows_per_block):
            r1 = min(nmax, r0 + rows_per_block)
            d = _dist(dense[:, r0:r1], dense, exact)
            d.masked_fill_(~valid.unsqueeze(1), float("inf"))
            if not loop:
                ar = torch.arange(r0, r1, device=device)
                d[:, ar - r0, ar] = float("inf")
            vals, idx = _select(d, k)  # (G, R, kk)
            ok = torch.isfinite(vals) & valid[:, r0:r1].unsqueeze(-1)
            gi, ri, _ = ok.nonzero(as_tuple=True)
            tgt_local = ri + r0
            src_local = idx[ok]
            base = offsets[gi] + start
            dsts.append(base + tgt_local)
            srcs.append(base + src_local)
        g0 = g1
    if not srcs:
        return empty
    src = perm[torch.cat(srcs)]
    dst = perm[torch.cat(dsts)]
    order = torch.argsort(dst, stable=True)
    return torch.stack([src[order], dst[order]])


def _knn_torch_cluster(pos: Tensor, k: int, batch: Tensor | None, loop: bool) -> Tensor:
    """``torch_cluster.knn_graph`` in the fallback's conventions.

    torch_cluster needs a sorted ``batch``, drops self loops *after* taking ``k + 1``
    neighbours (a point with duplicates may then keep ``k + 1``) and does not promise an
    order of the neighbours; here the clouds are sorted first, ``k + 1`` neighbours with self
    loops are asked for, the self loop is removed, and each point keeps its ``k`` nearest by
    (distance, index), grouped by target in increasing order.
    """
    assert _torch_cluster is not None
    n = pos.size(0)
    empty = torch.empty(2, 0, dtype=torch.long, device=pos.device)
    if n == 0:
        return empty
    perm = None
    pos_s, batch_s = pos, None
    if batch is not None:
        batch = batch.long()
        perm = torch.argsort(batch, stable=True)
        pos_s, batch_s = pos[perm], batch[perm]
    ei = _torch_cluster.knn_graph(pos_s, k if loop else k + 1, batch_s, loop=True, flow="source_to_target")
    src, dst = ei[0].long(), ei[1].long()
    if not loop:
        keep = src != dst
        src, dst = src[keep], dst[keep]
    if src.numel() == 0:
        return empty
    dist = torch.linalg.vector_norm(pos_s[src] - pos_s[dst], dim=-1)
    # order by (target, distance, source): stable sorts from the last key to the first
    order = torch.argsort(src, stable=True)
    order = order[torch.argsort(dist[order], stable=True)]
    order = order[torch.argsort(dst[order], stable=True)]
    src, dst = src[order], dst[order]
    counts = torch.bincount(dst, minlength=n)
    first = torch.cumsum(counts, 0) - counts
    rank = torch.arange(dst.numel(), device=dst.device) - first[dst]
    keep = rank < k
    src, dst = src[keep], dst[keep]
    if perm is not None:  # back to the caller's node ids, still grouped by target
        src, dst = perm[src], perm[dst]
        order = torch.argsort(dst, stable=True)
        src, dst = src[order], dst[order]
    return torch.stack([src, dst])
