"""Numba kernels behind gs-splits (graph construction, PageRank, triangles, BFS, k-core).

All kernels work on a symmetric CSR adjacency (``indptr`` int64, ``indices`` int32/int64, rows
sorted, no self-loops, no duplicates). Reductions that feed a result are done over a fixed
number of blocks (:data:`NBLOCKS`) that does not depend on the number of threads, so the
results are bit-identical on any machine whatever ``numba.get_num_threads()`` is.
"""

from __future__ import annotations

import types

import numpy as np
from numba import get_num_threads, njit, prange

NBLOCKS = 256  # fixed reduction granularity (independent of the thread count)


def _twin(func, suffix: str):
    """A copy of ``func`` under another ``__qualname__``.

    numba's on-disk cache is keyed by qualified name and line, not by the ``parallel`` flag:
    compiling the same function object serially and in parallel would share (and clobber) one
    cache entry. The copies get their own entries.
    """
    f = types.FunctionType(func.__code__, func.__globals__, func.__name__ + suffix, func.__defaults__, func.__closure__)
    f.__qualname__ = func.__qualname__ + suffix
    return f


# --------------------------------------------------------------------------- construction
@njit(cache=True)
def _count_endpoints(src, dst, counts):
    loops = 0
    for k in range(src.size):
        u = src[k]
        v = dst[k]
        if u == v:
            loops += 1
            continue
        counts[u] += 1
        counts[v] += 1
    return loops


@njit(cache=True)
def _fill_tagged(src, dst, pos, work):
    """Write each non-loop edge (u, v) twice: 2v at row u (forward), 2u+1 at row v (reverse)."""
    for k in range(src.size):
        u = src[k]
        v = dst[k]
        if u == v:
            continue
        work[pos[u]] = 2 * v
        pos[u] += 1
        work[pos[v]] = 2 * u + 1
        pos[v] += 1


@njit(parallel=True, cache=True)
def _sort_dedup_rows(indptr, work, uniq, forward):
    """Sort every row of tagged entries; count unique neighbours and unique forward pairs."""
    n = indptr.size - 1
    for i in prange(n):
        a = indptr[i]
        b = indptr[i + 1]
        if b - a > 1:
            work[a:b].sort()
        cnt = 0
        fwd = 0
        last = -1
        has_fwd = False
        for k in range(a, b):
            v = work[k] >> 1
            if v != last:
                if has_fwd:
                    fwd += 1
                cnt += 1
                last = v
                has_fwd = False
            if (work[k] & 1) == 0:
                has_fwd = True
        if has_fwd:
            fwd += 1
        uniq[i] = cnt
        forward[i] = fwd


@njit(parallel=True, cache=True)
def _compact_rows(indptr, work, new_indptr, out):
    n = indptr.size - 1
    for i in prange(n):
        q = new_indptr[i]
        last = -1
        for k in range(indptr[i], indptr[i + 1]):
            v = work[k] >> 1
            if v != last:
                out[q] = v
                q += 1
                last = v


@njit(cache=True)
def first_bad_edge(src, dst, n):
    for k in range(src.size):
        if src[k] < 0 or src[k] >= n or dst[k] < 0 or dst[k] >= n:
            return k
    return -1


def build_symmetric_csr(src: np.ndarray, dst: np.ndarray, n: int):
    """Symmetric, deduplicated, loop-free CSR from directed edge arrays (ids already checked).

    Returns ``(indptr, indices, self_loops, unique_directed_pairs)``.
    """
    counts = np.zeros(n, dtype=np.int64)
    loops = int(_count_endpoints(src, dst, counts))
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    del counts
    wdtype = np.int32 if 2 * n + 1 < 2**31 else np.int64
    work = np.empty(int(indptr[-1]), dtype=wdtype)
    pos = indptr[:-1].copy()
    _fill_tagged(src, dst, pos, work)
    del pos
    uniq = np.empty(n, dtype=np.int64)
    forward = np.empty(n, dtype=np.int64)
    _sort_dedup_rows(indptr, work, uniq, forward)
    new_indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(uniq, out=new_indptr[1:])
    idtype = np.int32 if n < 2**31 else np.int64
    out = np.empty(int(new_indptr[-1]), dtype=idtype)
    _compact_rows(indptr, work, new_indptr, out)
    return new_indptr, out, loops, int(forward.sum())


# --------------------------------------------------------------------------- PageRank
def _scale_by_degree_py(x, inv_deg, y, dangling_mask, partial):
    n = x.size
    step = (n + NBLOCKS - 1) // NBLOCKS
    for b in prange(NBLOCKS):
        s = 0.0
        for i in range(b * step, min(n, (b + 1) * step)):
            y[i] = x[i] * inv_deg[i]
            if dangling_mask[i]:
                s += x[i]
        partial[b] = s


def _pull_py(indptr, indices, y, x, x_new, p, damping, teleport, partial):
    n = x.size
    step = (n + NBLOCKS - 1) // NBLOCKS
    for b in prange(NBLOCKS):
        err = 0.0
        for i in range(b * step, min(n, (b + 1) * step)):
            acc = 0.0
            for k in range(indptr[i], indptr[i + 1]):
                acc += y[indices[k]]
            v = damping * acc + teleport * p[i]
            x_new[i] = v
            err += abs(v - x[i])
        partial[b] = err


# Serial and parallel twins of the same code: identical arithmetic (the reductions run over
# the same NBLOCKS blocks in the same order), so the choice never changes a result bit.
_scale_by_degree_par = njit(parallel=True, cache=True)(_twin(_scale_by_degree_py, "_par"))
_scale_by_degree_ser = njit(cache=True)(_twin(_scale_by_degree_py, "_ser"))
_pull_par = njit(parallel=True, cache=True)(_twin(_pull_py, "_par"))
_pull_ser = njit(cache=True)(_twin(_pull_py, "_ser"))

#: Below this many stored adjacency entries the serial kernels are used (thread start-up and
#: synchronisation cost more than they save on small graphs).
PARALLEL_MIN_NNZ = 200_000


def power_iteration(indptr, indices, deg, p, x0, damping, tol, max_iter, callback=None):
    """Jacobi power iteration of eq. (1) of the structural-shifts paper (see ``pagerank``).

    Returns ``(x, iterations, last_l1_change)``; raises ``RuntimeError`` if not converged.
    """
    n = p.size
    inv_deg = np.zeros(n, dtype=np.float64)
    nz = deg > 0
    inv_deg[nz] = 1.0 / deg[nz]
    dangling = ~nz
    y = np.empty(n, dtype=np.float64)
    x = x0.astype(np.float64, copy=True)
    x_new = np.empty(n, dtype=np.float64)
    partial = np.zeros(NBLOCKS, dtype=np.float64)
    err = np.inf
    par = indices.size >= PARALLEL_MIN_NNZ
    _scale_by_degree = _scale_by_degree_par if par else _scale_by_degree_ser
    _pull = _pull_par if par else _pull_ser
    for it in range(1, max_iter + 1):
        _scale_by_degree(x, inv_deg, y, dangling, partial)
        dangling_sum = 0.0
        for b in range(NBLOCKS):  # fixed order: deterministic
            dangling_sum += partial[b]
        teleport = damping * dangling_sum + (1.0 - damping)
        _pull(indptr, indices, y, x, x_new, p, damping, teleport, partial)
        err = 0.0
        for b in range(NBLOCKS):
            err += partial[b]
        x, x_new = x_new, x
        if callback is not None:
            callback(it, err)
        if err < tol:
            return x, it, err
    raise RuntimeError(
        f"PageRank power iteration did not reach tol={tol:g} (L1 change) in max_iter={max_iter} "
        f"iterations (last change {err:.3g}); raise max_iter or tol"
    )


# --------------------------------------------------------------------------- triangles
@njit(parallel=True, cache=True)
def _orient(indptr, indices, deg, out_ptr_counts):
    n = indptr.size - 1
    for u in prange(n):
        c = 0
        du = deg[u]
        for k in range(indptr[u], indptr[u + 1]):
            v = indices[k]
            dv = deg[v]
            if du < dv or (du == dv and u < v):
                c += 1
        out_ptr_counts[u] = c


@njit(parallel=True, cache=True)
def _fill_oriented(indptr, indices, deg, optr, oind):
    n = indptr.size - 1
    for u in prange(n):
        q = optr[u]
        du = deg[u]
        for k in range(indptr[u], indptr[u + 1]):
            v = indices[k]
            dv = deg[v]
            if du < dv or (du == dv and u < v):
                oind[q] = v
                q += 1


def _forward_triangles_py(optr, oind, counts, marks):
    """Forward algorithm on the degree-oriented DAG; chunk c owns counts[c] and marks[c]."""
    nchunks = counts.shape[0]
    n = optr.size - 1
    for c in prange(nchunks):
        cnt = counts[c]
        mark = marks[c]
        for u in range(c, n, nchunks):
            a = optr[u]
            b = optr[u + 1]
            if b - a < 2:
                continue
            stamp = u + 1
            for k in range(a, b):
                mark[oind[k]] = stamp
            for k in range(a, b):
                v = oind[k]
                for kk in range(optr[v], optr[v + 1]):
                    w = oind[kk]
                    if mark[w] == stamp:
                        cnt[u] += 1
                        cnt[v] += 1
                        cnt[w] += 1


_forward_triangles_par = njit(parallel=True, cache=True)(_twin(_forward_triangles_py, "_par"))
_forward_triangles_ser = njit(cache=True)(_twin(_forward_triangles_py, "_ser"))


def triangles_per_node(indptr, indices, deg):
    n = indptr.size - 1
    oc = np.empty(n, dtype=np.int64)
    _orient(indptr, indices, deg, oc)
    optr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(oc, out=optr[1:])
    del oc
    oind = np.empty(int(optr[-1]), dtype=indices.dtype)
    _fill_oriented(indptr, indices, deg, optr, oind)
    par = indices.size >= PARALLEL_MIN_NNZ
    nchunks = max(1, min(4 * get_num_threads(), 64)) if par else 1
    counts = np.zeros((nchunks, n), dtype=np.int64)
    marks = np.zeros((nchunks, n), dtype=np.int64)
    (_forward_triangles_par if par else _forward_triangles_ser)(optr, oind, counts, marks)
    del marks, oind, optr
    return counts.sum(axis=0)


# --------------------------------------------------------------------------- BFS / k-core
@njit(cache=True)
def bfs_distances(indptr, indices, source, dist, queue):
    """Unweighted shortest-path distances from ``source`` (-1 = unreachable)."""
    dist[:] = -1
    dist[source] = 0
    head = 0
    tail = 1
    queue[0] = source
    while head < tail:
        u = queue[head]
        head += 1
        du = dist[u] + 1
        for k in range(indptr[u], indptr[u + 1]):
            v = indices[k]
            if dist[v] < 0:
                dist[v] = du
                queue[tail] = v
                tail += 1
    return tail


@njit(cache=True)
def core_numbers(indptr, indices, deg):
    """Batagelj-Zaversnik O(m) k-core decomposition."""
    n = deg.size
    d = deg.copy()
    maxd = 0
    for i in range(n):
        if d[i] > maxd:
            maxd = d[i]
    bins = np.zeros(maxd + 2, dtype=np.int64)
    for i in range(n):
        bins[d[i]] += 1
    start = 0
    for k in range(maxd + 1):
        c = bins[k]
        bins[k] = start
        start += c
    pos = np.empty(n, dtype=np.int64)
    vert = np.empty(n, dtype=np.int64)
    for v in range(n):
        pos[v] = bins[d[v]]
        vert[pos[v]] = v
        bins[d[v]] += 1
    for k in range(maxd, 0, -1):
        bins[k] = bins[k - 1]
    bins[0] = 0
    for i in range(n):
        v = vert[i]
        for k in range(indptr[v], indptr[v + 1]):
            u = indices[k]
            if d[u] > d[v]:
                du = d[u]
                pu = pos[u]
                pw = bins[du]
                w = vert[pw]
                if u != w:
                    pos[u] = pw
                    vert[pu] = w
                    pos[w] = pu
                    vert[pw] = u
                bins[du] += 1
                d[u] -= 1
    return d


@njit(cache=True)
def brandes_accumulate(indptr, indices, sources, bc):
    """Brandes' single-source dependency accumulation (unweighted) over ``sources``."""
    n = indptr.size - 1
    sigma = np.zeros(n, dtype=np.float64)
    dist = np.empty(n, dtype=np.int64)
    delta = np.zeros(n, dtype=np.float64)
    order = np.empty(n, dtype=np.int64)
    for s in sources:
        dist[:] = -1
        sigma[:] = 0.0
        dist[s] = 0
        sigma[s] = 1.0
        order[0] = s
        head = 0
        tail = 1
        while head < tail:
            u = order[head]
            head += 1
            for k in range(indptr[u], indptr[u + 1]):
                v = indices[k]
                if dist[v] < 0:
                    dist[v] = dist[u] + 1
                    order[tail] = v
                    tail += 1
                if dist[v] == dist[u] + 1:
                    sigma[v] += sigma[u]
        for i in range(tail):
            delta[order[i]] = 0.0
        for i in range(tail - 1, -1, -1):
            w = order[i]
            for k in range(indptr[w], indptr[w + 1]):
                v = indices[k]
                if dist[v] == dist[w] - 1:
                    delta[v] += sigma[v] / sigma[w] * (1.0 + delta[w])
            if w != s:
                bc[w] += delta[w]
