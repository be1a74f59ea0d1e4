"""Numba kernels behind gs-splits (graph construction, PageRank, triangles, BFS, k-core).

Construction, BFS, k-core and betweenness work on the symmetric CSR adjacency (``indptr``
int64, ``indices`` int32/int64, rows sorted, no self-loops, no duplicates). PageRank and the
triangle count work on :class:`DegreeOrdered`, the same graph relabelled by descending degree
(built once per graph and cached on the ``CSRGraph``). Reductions that feed a result are done
over at most :data:`NBLOCKS` row blocks whose bounds depend on the graph alone, combined in
block order, so the results are bit-identical on any machine whatever
``numba.get_num_threads()`` is; integer counts are exact whatever the chunking.
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import stat
import tempfile
import types

import numba
import numpy as np
from numba import get_num_threads, njit, prange

from gs_splits import _compile_log  # noqa: F401  (logs once when numba compiles these kernels)

NBLOCKS = 256  # fixed reduction granularity (independent of the thread count)

log = logging.getLogger(__name__)
# fallback -- None: numba's own locations work; a path; or "off"; throwaway: the path is removed at exit
_cache_state: dict = {"fallback": None, "throwaway": False}


def base_name() -> str:
    """The reusable fallback cache folders' name pattern, for messages."""
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    return os.path.join(tempfile.gettempdir(), f"gs-splits-numba-{uid}[-1..-{CACHE_DIR_ALTERNATIVES}]")


def _private_dir(path: str) -> bool:
    """Whether ``path`` is a real folder (not a link) of this user that no one else can write."""
    st = os.lstat(path)
    mine = not hasattr(os, "getuid") or st.st_uid == os.getuid()
    return stat.S_ISDIR(st.st_mode) and mine and not st.st_mode & 0o022


#: Numbered alternatives to ``<tmp>/gs-splits-numba-<uid>`` tried when that name is taken by a
#: folder that is not ours alone (another user's, a link, world-writable).
CACHE_DIR_ALTERNATIVES = 8


def _temporary_cache_dir() -> str | None:
    """A writable folder for numba's cache when neither ``NUMBA_CACHE_DIR``, the package folder
    nor ``$HOME`` is: ``<tmp>/gs-splits-numba-<uid>``, or the first of ``...-<uid>-1`` to
    ``-8`` where that name is taken by a folder that is not ours alone; kept, so the next run
    finds the same one and reuses its kernels (issue 56: a fresh ``mkdtemp`` folder per run
    was left behind every time). Only when all nine are taken: a ``mkdtemp`` folder removed
    when the process exits. ``None`` when the temporary folder is not writable either."""
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    base = os.path.join(tempfile.gettempdir(), f"gs-splits-numba-{uid}")
    for k in range(CACHE_DIR_ALTERNATIVES + 1):
        cand = base if k == 0 else f"{base}-{k}"
        try:
            os.makedirs(cand, mode=0o700, exist_ok=True)
            # numba unpickles its index files: a folder of that predictable name that another
            # user made (or a link to one) could hold a crafted cache, so use it only if ours
            if _private_dir(cand):
                tempfile.TemporaryFile(dir=cand).close()
                return cand
        except OSError:
            continue
    try:
        where = tempfile.mkdtemp(prefix="gs-splits-numba-")
    except OSError:
        return None
    atexit.register(shutil.rmtree, where, ignore_errors=True)
    _cache_state["throwaway"] = True
    return where


def _jit(**options):
    """``numba.njit(cache=True, **options)``, falling back (with one log line per process) to a
    temporary cache folder, or to no on-disk cache, where numba finds no writable cache
    location (issue 34: a read-only install with ``HOME`` unwritable made even ``gs-splits
    --help`` fail with ``RuntimeError: cannot cache function ...``)."""

    def decorate(func):
        if _cache_state["fallback"] != "off":
            try:
                return njit(cache=True, **options)(func)
            except RuntimeError as exc:
                if "cannot cache" not in str(exc):
                    raise
                if _cache_state["fallback"] is None:  # the first kernel: try a temporary folder
                    where = _temporary_cache_dir()
                    if where is None or _cache_state.get("throwaway"):
                        from gs_splits import _compile_log

                        _compile_log.LISTENER.message = _compile_log.MESSAGE_EVERY_RUN
                    log.warning(
                        "numba finds no writable cache folder (NUMBA_CACHE_DIR, beside gs_splits, "
                        "$HOME); %s. Set NUMBA_CACHE_DIR to a writable folder to choose one",
                        "kernels are compiled in every run (no temporary folder is writable)" if where is None
                        else f"kernels are compiled in every run, in {where} (removed at exit: the {base_name()}"
                             f" folders are all taken by other users or links)" if _cache_state.get("throwaway")
                        else f"compiled kernels are cached in {where}, reused by later runs",
                    )
                    if where:
                        _cache_state["fallback"] = where
                        numba.config.CACHE_DIR = where
                        return decorate(func)
                _cache_state["fallback"] = "off"
        return njit(**options)(func)

    return decorate


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
@_jit()
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


@_jit()
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


@_jit(parallel=True)
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


@_jit(parallel=True)
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


@_jit()
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


# --------------------------------------------------------------------------- degree order
@_jit()
def _relabel_row(row, rank, r, out, a, e):
    """Write row ``r`` of the degree-ordered graph into ``out[a:e]`` from ``row``, the sorted
    original neighbour ids of node ``order[r]``: first its *out*-neighbours (new id below
    ``r``: higher degree), sorted by new id, then its *in*-neighbours (new id above ``r``) in
    reverse order of their old id. Returns the number of out-neighbours. Shared by the
    in-memory and the on-disk construction, so both write the same rows."""
    lo = a
    hi = e
    for k in range(row.size):
        v = rank[row[k]]
        if v < r:
            out[lo] = v
            lo += 1
        else:
            hi -= 1
            out[hi] = v
    if lo - a > 48:
        out[a:lo].sort()
    else:  # insertion sort: faster than the library sort on the many short rows
        for i in range(a + 1, lo):
            key = out[i]
            j = i - 1
            while j >= a and out[j] > key:
                out[j + 1] = out[j]
                j -= 1
            out[j + 1] = key
    return lo - a


@_jit(parallel=True)
def _relabel_split(indptr, indices, order, rank, nptr, bounds, out, outdeg):
    """Row ``r`` of the relabelled graph = node ``order[r]``, neighbours renamed by ``rank``
    (row layout: :func:`_relabel_row`). Fully determined by the graph (no dependence on
    threads)."""
    for b in prange(bounds.size - 1):
        for r in range(bounds[b], bounds[b + 1]):
            u = order[r]
            outdeg[r] = _relabel_row(indices[indptr[u]:indptr[u + 1]], rank, r, out, nptr[r], nptr[r + 1])


@_jit()
def _balanced_bounds(nptr, nblocks, bounds):
    """Split rows into ``nblocks`` ranges of about equal cost (entries + 4 per row)."""
    n = nptr.size - 1
    total = nptr[n] + 4 * n
    i = 0
    bounds[0] = 0
    for b in range(1, nblocks):
        target = (total * b) // nblocks
        while i < n and nptr[i] + 4 * i < target:
            i += 1
        bounds[b] = i
    bounds[nblocks] = n


def degree_order(deg: np.ndarray, idt) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(order, rank, nptr, bounds)`` of the degree-ordered graph from the degrees alone:
    ``order`` sorts the nodes by descending degree (ties: ascending id), ``rank`` is its
    inverse, ``nptr`` the row pointers of the relabelled graph and ``bounds`` the
    ``min(NBLOCKS, n)`` row blocks of about equal work that every reduction is summed over
    (a function of the graph only, never of the thread count or a memory budget)."""
    n = deg.size
    order = np.argsort(-deg, kind="stable").astype(idt)
    rank = np.empty(n, dtype=idt)
    rank[order] = np.arange(n, dtype=idt)
    nptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(deg[order], out=nptr[1:])
    nblocks = min(NBLOCKS, max(n, 1))
    bounds = np.empty(nblocks + 1, dtype=np.int64)
    _balanced_bounds(nptr, nblocks, bounds)
    return order, rank, nptr, bounds


class DegreeOrdered:
    """The graph relabelled by descending degree (ties: ascending id), for cache locality.

    High-degree nodes get the small ids, so the values most often read by PageRank and the
    triangle marks sit in a few MB that stay in cache on power-law graphs. ``order[r]`` is the
    original id of new node ``r``; ``rank`` is the inverse; row ``r`` of ``(nptr, nind)`` lists
    the out-neighbours (higher degree, ``nind < r``, sorted) first, ``outdeg[r]`` of them, then
    the in-neighbours. ``bounds`` are :data:`NBLOCKS` row ranges of about equal work, fixed by
    the graph alone. Memory: one more copy of the adjacency (4 bytes per stored entry).
    """

    def __init__(self, indptr: np.ndarray, indices: np.ndarray):
        n = indptr.size - 1
        idt = indices.dtype
        self.order, self.rank, self.nptr, self.bounds = degree_order(np.diff(indptr), idt)
        self.nind = np.empty(indices.size, dtype=idt)
        self.outdeg = np.empty(n, dtype=np.int64)
        _relabel_split(indptr, indices, self.order, self.rank, self.nptr, self.bounds, self.nind, self.outdeg)


# --------------------------------------------------------------------------- PageRank
#: How many entries ahead the PageRank pull prefetches ``y[buf[k + PREFETCH_AHEAD]]``. On the
#: papers100M-size graph (888 MB ``y``, random reads beyond the hot high-degree block) the pull
#: waits on memory: prefetching 16 ahead makes it 1.8-2.4x faster on typical rows (README,
#: ``benchmarks/prefetch_pull.py``). A hint only: no result bit depends on it.
PREFETCH_AHEAD = 16


def _prefetch_py(arr, i):  # pragma: no cover - the interpreter's stand-in (NUMBA_DISABLE_JIT)
    """Interpreted stand-in of :func:`prefetch`: nothing to do."""


if numba.config.DISABLE_JIT:
    prefetch = _prefetch_py
else:
    from llvmlite import ir as _ir
    from numba.core import cgutils as _cgutils
    from numba.extending import intrinsic as _intrinsic

    @_intrinsic
    def prefetch(typingctx, arr, i):
        """``llvm.prefetch`` of ``arr[i]`` (read, keep in all cache levels): a hint to the CPU
        to start loading that element; never faults, never changes a value."""
        if not isinstance(arr, numba.types.Array) or not isinstance(i, numba.types.Integer):
            return None

        def codegen(context, builder, sig, args):
            aty = sig.args[0]
            ary = context.make_array(aty)(context, builder, args[0])
            ptr = _cgutils.get_item_pointer(context, builder, aty, ary, [args[1]], wraparound=False)
            i32 = _ir.IntType(32)
            # opaque pointers (llvmlite >= 0.45): ptr, "llvm.prefetch.p0"; typed (older): i8*
            p8 = builder.bitcast(ptr, _ir.IntType(8).as_pointer())
            name = "llvm.prefetch.p0" if getattr(p8.type, "is_opaque", False) else "llvm.prefetch.p0i8"
            fnty = _ir.FunctionType(_ir.VoidType(), [p8.type, i32, i32, i32])
            fn = _cgutils.get_or_insert_function(builder.module, fnty, name)
            builder.call(fn, [p8, i32(0), i32(3), i32(1)])
            return context.get_dummy_value()

        return numba.types.void(arr, i), codegen


def _pr_init_py(bounds, nptr, x, inv_deg, y, dang_part):
    for b in prange(bounds.size - 1):
        dm = 0.0
        for i in range(bounds[b], bounds[b + 1]):
            y[i] = x[i] * inv_deg[i]
            if nptr[i + 1] == nptr[i]:
                dm += x[i]
        dang_part[b] = dm


def _pr_rows_py(seg, nptr, buf, base, y, p, inv_deg, damping, teleport, x_new, y_new):
    """The pull of one Jacobi step of eq. (1) for rows ``seg[0] .. seg[-1]`` (their entries in
    ``buf`` from entry ``base``): ``x_new`` and ``x_new / deg``. One task per segment; the
    segments hold about equal numbers of entries (:func:`row_segments`), so every thread has
    the same work whatever the row blocks. Each row is computed alone: the segments never
    change a bit of the result. The reads of ``y`` are prefetched :data:`PREFETCH_AHEAD`
    entries ahead (a hint; the sums are the same)."""
    ahead = PREFETCH_AHEAD
    for s in prange(seg.size - 1):
        last = nptr[seg[s + 1]] - base - ahead  # prefetch within this segment's entries only
        for i in range(seg[s], seg[s + 1]):
            a = nptr[i]
            e = nptr[i + 1]
            acc = 0.0
            for k in range(a - base, e - base):
                if k < last:
                    prefetch(y, buf[k + ahead])
                acc += y[buf[k]]
            v = damping * acc + teleport * p[i]
            x_new[i] = v
            y_new[i] = v * inv_deg[i]


def _pr_sums_py(bounds, b0, b1, r0, r1, nptr, x, x_new, err_part, dang_part):
    """The reductions of that step over rows ``r0 .. r1`` (in blocks ``b0 .. b1``): the L1
    change and the dangling mass of ``x_new``, per fixed row block, in row order. Each block's
    sums go on from what ``err_part`` / ``dang_part`` hold (zero them before a sweep), so a
    block cut into chunks (the out-of-core path) adds in the same order as a whole one."""
    for b in prange(b0, b1):
        lo = max(bounds[b], r0)
        hi = min(bounds[b + 1], r1)
        err = err_part[b]
        dm = dang_part[b]
        for i in range(lo, hi):
            v = x_new[i]
            err += abs(v - x[i])
            if nptr[i + 1] == nptr[i]:
                dm += v
        err_part[b] = err
        dang_part[b] = dm


def row_segments(nptr: np.ndarray, r0: int, r1: int, parts: int | None = None) -> np.ndarray:
    """Row bounds cutting rows ``r0 .. r1`` into about ``parts`` segments of about equal
    entries (default: 8 per numba thread), for :func:`_pr_rows_py`. Only the work split
    depends on it, never a result."""
    parts = max(1, parts if parts is not None else 8 * get_num_threads())
    lo, hi = int(nptr[r0]), int(nptr[r1])
    targets = lo + (np.arange(1, parts, dtype=np.float64) * (hi - lo) / parts).astype(np.int64)
    cuts = np.searchsorted(nptr[r0 : r1 + 1], targets, side="left") + r0
    return np.unique(np.concatenate(([r0], cuts, [r1])).astype(np.int64))


def pr_sweep(bounds, b0, b1, r0, r1, seg, nptr, buf, base, y, x, p, inv_deg, damping, teleport,
             x_new, y_new, err_part, dang_part):
    """One Jacobi step of eq. (1) over rows ``r0 .. r1``: the pull (parallel over ``seg``,
    see :func:`row_segments`) then the block sums. Serial kernels below
    :data:`PARALLEL_MIN_NNZ` entries; the same arithmetic either way."""
    par = int(nptr[r1]) - int(nptr[r0]) >= PARALLEL_MIN_NNZ
    if par:
        # dynamic scheduling: a thread that finishes its segment takes the next one (static
        # halves left one core idle: equal entries are not equal time, short rows cost more)
        with numba.parallel_chunksize(1):
            _pr_rows_par(seg, nptr, buf, base, y, p, inv_deg, damping, teleport, x_new, y_new)
    else:
        _pr_rows_ser(seg, nptr, buf, base, y, p, inv_deg, damping, teleport, x_new, y_new)
    (_pr_sums_par if par else _pr_sums_ser)(bounds, b0, b1, r0, r1, nptr, x, x_new, err_part, dang_part)


# Serial and parallel twins of the same code: identical arithmetic (every reduction runs over
# the same row blocks, fixed by the graph, combined in block order), so the choice and the
# thread count never change a result bit.
_pr_init_par = _jit(parallel=True)(_twin(_pr_init_py, "_par"))
_pr_init_ser = _jit()(_twin(_pr_init_py, "_ser"))
# nogil: the out-of-core path reads the next chunk in a thread while these run
_pr_rows_par = _jit(parallel=True, nogil=True)(_twin(_pr_rows_py, "_par"))
_pr_rows_ser = _jit(nogil=True)(_twin(_pr_rows_py, "_ser"))
_pr_sums_par = _jit(parallel=True, nogil=True)(_twin(_pr_sums_py, "_par"))
_pr_sums_ser = _jit(nogil=True)(_twin(_pr_sums_py, "_ser"))

#: Below this many stored adjacency entries the serial kernels are used (thread start-up and
#: synchronisation cost more than they save on small graphs).
PARALLEL_MIN_NNZ = 200_000


def _ordered_sum(a: np.ndarray) -> float:
    s = 0.0
    for v in a.tolist():  # fixed order: deterministic
        s += v
    return s


def power_iteration(dg: DegreeOrdered, p, x0, damping, tol, max_iter, callback=None):
    """Jacobi power iteration of eq. (1) of the structural-shifts paper (see ``pagerank``).

    ``dg`` is the degree-ordered graph; ``p`` and ``x0`` are given (and ``x`` returned) in the
    original node order. Every iteration is one pass over the adjacency. Stops at the first
    iteration whose L1 change ``||x_k - x_{k-1}||_1`` is below ``tol``.

    Returns ``(x, iterations, last_l1_change)``; raises ``RuntimeError`` if not converged.
    """
    n = dg.nptr.size - 1
    nb = dg.bounds.size - 1
    seg = row_segments(dg.nptr, 0, n)

    def one_sweep(y, x, pp, inv_deg, damping, teleport, x_new, y_new, err_part, dang_part):
        err_part[:] = 0.0
        dang_part[:] = 0.0
        pr_sweep(dg.bounds, 0, nb, 0, n, seg, dg.nptr, dg.nind, 0, y, x, pp, inv_deg, damping, teleport,
                 x_new, y_new, err_part, dang_part)

    return power_loop(dg.order, dg.rank, dg.nptr, dg.bounds, one_sweep, p, x0, damping, tol, max_iter, callback)


def power_loop(order, rank, nptr, bounds, sweep, p, x0, damping, tol, max_iter, callback=None):
    """The loop of :func:`power_iteration`, with the pass over the adjacency given as
    ``sweep(y, x, p, inv_deg, damping, teleport, x_new, y_new, err_part, dang_part)`` (the
    arguments of :func:`pr_sweep` after ``base``): in memory, or streamed from disk by
    :mod:`gs_splits.ondisk.properties`. Memory: 6 float64 vectors of ``n`` (plus ``p`` and ``x0``)."""
    n = p.size
    deg = np.diff(nptr).astype(np.float64)
    inv_deg = np.zeros(n, dtype=np.float64)
    nz = deg > 0
    inv_deg[nz] = 1.0 / deg[nz]
    del deg, nz
    pp = p[order].astype(np.float64)
    x = x0[order].astype(np.float64)
    y = np.empty(n, dtype=np.float64)
    x_new = np.empty(n, dtype=np.float64)
    y_new = np.empty(n, dtype=np.float64)
    nb = bounds.size - 1
    err_part = np.zeros(nb, dtype=np.float64)
    dang_part = np.zeros(nb, dtype=np.float64)
    init = _pr_init_par if nptr[-1] >= PARALLEL_MIN_NNZ else _pr_init_ser
    init(bounds, nptr, x, inv_deg, y, dang_part)
    dangling = _ordered_sum(dang_part)
    err = np.inf
    for it in range(1, max_iter + 1):
        teleport = damping * dangling + (1.0 - damping)
        sweep(y, x, pp, inv_deg, damping, teleport, x_new, y_new, err_part, dang_part)
        err = _ordered_sum(err_part)
        dangling = _ordered_sum(dang_part)
        x, x_new = x_new, x
        y, y_new = y_new, y
        if callback is not None:
            callback(it, err)
        if err < tol:
            log.info("power iteration: converged in %d sweeps (L1 change %.3g)", it, err)
            return x[rank], it, err
    raise RuntimeError(
        f"PageRank power iteration did not reach tol={tol:g} (L1 change) in max_iter={max_iter} "
        f"iterations (last change {err:.3g}); raise max_iter or tol"
    )


# --------------------------------------------------------------------------- triangles
@_jit(inline="always")
def probe_marked(ids, a, e, stop, bm, cnt):
    """How many of ``ids[a:e]`` (sorted), up to the first one ``>= stop``, are marked in the
    bitmap ``bm``; each one found gets ``cnt[w] += 1`` (a triangle through ``w``)."""
    one = np.uint64(1)
    t = 0
    for kk in range(a, e):
        w = ids[kk]
        if w >= stop:
            break
        if (bm[w >> 6] >> np.uint64(w & 63)) & one:
            t += 1
            cnt[w] += 1
    return t


def _triangles_py(nptr, nind, outdeg, span, counts, bits):
    """Triangles per node on the degree-ordered graph (each triangle found exactly once).

    Orientation: every edge points to its endpoint of higher degree (smaller new id). For a
    triangle ``w < v < u`` (new ids) the edges are u->v, u->w, v->w: it is found at ``v``,
    for its in-neighbour ``u``, as the out-neighbour ``w`` that ``u`` and ``v`` share. ``v``'s
    out-neighbours are marked in a bitmap (n bits, stays in cache), then every in-neighbour
    ``u`` scans its own (sorted) out-list up to ``v`` (a common neighbour ``w`` is below
    ``v``): at most sum over nodes of outdeg^2 probes, far fewer on heavy-tailed graphs where
    the in-neighbours of the hubs make most of the work. Chunk ``c`` owns
    ``counts[c]`` and ``bits[c]`` and handles nodes ``c, c + nchunks, ...``; counts are
    integers, so the result does not depend on the chunking. ``span[u]`` = (start, end) of
    ``u``'s out-list, side by side so that one cache line serves both.
    """
    nchunks = counts.shape[0]
    n = nptr.size - 1
    one = np.uint64(1)
    for c in prange(nchunks):
        cnt = counts[c]
        bm = bits[c]
        for v in range(c, n, nchunks):
            a = nptr[v]
            m = a + outdeg[v]
            e = nptr[v + 1]
            if m - a < 1 or e == m:
                continue
            for k in range(a, m):
                w = nind[k]
                bm[w >> 6] |= one << np.uint64(w & 63)
            tv = 0
            for k in range(m, e):
                u = nind[k]
                t = probe_marked(nind, span[u, 0], span[u, 1], v, bm, cnt)
                if t:
                    cnt[u] += t
                    tv += t
            cnt[v] += tv
            for k in range(a, m):
                bm[nind[k] >> 6] = 0


_triangles_par = _jit(parallel=True)(_twin(_triangles_py, "_par"))
_triangles_ser = _jit()(_twin(_triangles_py, "_ser"))


def triangles_per_node(dg: DegreeOrdered) -> np.ndarray:
    """Number of triangles through every node (int64, original node order)."""
    n = dg.nptr.size - 1
    par = dg.nind.size >= PARALLEL_MIN_NNZ
    nchunks = max(1, get_num_threads()) if par else 1
    counts = np.zeros((nchunks, n), dtype=np.int64)
    bits = np.zeros((nchunks, (n + 63) // 64), dtype=np.uint64)
    span = np.empty((n, 2), dtype=np.int64)
    span[:, 0] = dg.nptr[:-1]
    span[:, 1] = dg.nptr[:-1] + dg.outdeg
    (_triangles_par if par else _triangles_ser)(dg.nptr, dg.nind, dg.outdeg, span, counts, bits)
    del bits, span
    total = counts[0] if nchunks == 1 else counts.sum(axis=0)
    return total[dg.rank]


# --------------------------------------------------------------------------- BFS / k-core
@_jit()
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


@_jit()
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


@_jit()
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


# --------------------------------------------------------------------------- on-disk conversion
# Kernels of gs_splits.ondisk.csr (external sort of packed edge keys). A key packs one directed
# entry of the symmetric adjacency: ``row << 32 | col << 1 | tag`` (row, col < 2**31), where
# tag 0 marks an edge given as (row, col) and tag 1 one given as (col, row) only; int64, so
# every key is >= 0. Sorting keys sorts the adjacency by (row, col), and among the keys of one
# (row, col) pair the first carries tag 0 exactly when the pair was given in that direction:
# keeping the first key of each pair keeps what the statistics of ``build_symmetric_csr`` need.
@_jit(nogil=True)
def edge_keys(src, dst, limit, keys):
    """Write the two keys of every non-loop edge ``(src[k], dst[k])`` into ``keys``.

    Returns ``(keys written, self-loops, largest id, first bad k or -1)``; an edge with an id
    outside ``[0, limit)`` stops the scan (the keys before it are written).
    """
    w = 0
    loops = 0
    mx = -1
    for k in range(src.size):
        u = np.int64(src[k])
        v = np.int64(dst[k])
        if u < 0 or v < 0 or u >= limit or v >= limit:
            return w, loops, mx, k
        if u > mx:
            mx = u
        if v > mx:
            mx = v
        if u == v:
            loops += 1
            continue
        keys[w] = (u << 32) | (v << 1)
        keys[w + 1] = (v << 32) | (u << 1) | 1
        w += 2
    return w, loops, mx, -1


@_jit(nogil=True)
def dedup_sorted_keys(keys):
    """Keep the first key of each (row, col) pair of sorted ``keys``, in place; returns the count."""
    n = keys.size
    if n == 0:
        return 0
    w = 1
    last = keys[0] >> 1
    for r in range(1, n):
        pair = keys[r] >> 1
        if pair != last:
            keys[w] = keys[r]
            w += 1
            last = pair
    return w


@_jit(nogil=True)
def _sift_down(hk, hr, size, i, key, j):
    """Put ``(key, j)`` at slot ``i`` of the binary min-heap ``hk[:size]`` and sift it down."""
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and hk[c + 1] < hk[c]:
            c += 1
        if hk[c] >= key:
            break
        hk[i] = hk[c]
        hr[i] = hr[c]
        i = c
    hk[i] = key
    hr[i] = j


@_jit(nogil=True)
def merge_sorted_keys(bufs, bpos, blen, more, out, last):
    """k-way merge (binary heap) of the sorted key buffers ``bufs[j, bpos[j]:blen[j]]`` into
    ``out``, keeping the first key of each (row, col) pair (``last[0]``: the pair of the last key
    written, carried between calls; -1 at the start).

    Returns ``(keys written, status)``: status ``j >= 0`` when buffer ``j`` is used up while its
    run has more keys (``more[j]``: refill it and call again), -1 when ``out`` is full, -2 when
    every run is merged. ``bpos`` advances past every key consumed, so a call can resume where
    the last one stopped.
    """
    k = bufs.shape[0]
    for j in range(k):
        if bpos[j] >= blen[j] and more[j]:
            return 0, j
    hk = np.empty(k, np.int64)  # heap of the runs' next keys, and their runs
    hr = np.empty(k, np.int64)
    size = 0
    for j in range(k):
        if bpos[j] < blen[j]:
            hk[size] = bufs[j, bpos[j]]
            hr[size] = j
            size += 1
    for i in range(size // 2 - 1, -1, -1):
        _sift_down(hk, hr, size, i, hk[i], hr[i])
    n = 0
    lp = last[0]
    cap = out.size
    while size > 0:
        if n >= cap:
            last[0] = lp
            return n, -1
        j = hr[0]
        key = hk[0]
        pair = key >> 1
        if pair != lp:
            out[n] = key
            n += 1
            lp = pair
        p = bpos[j] + 1
        bpos[j] = p
        if p < blen[j]:
            key = bufs[j, p]
        elif more[j]:
            last[0] = lp
            return n, j
        else:
            size -= 1
            if size == 0:
                break
            key = hk[size]
            j = hr[size]
        _sift_down(hk, hr, size, 0, key, j)
    last[0] = lp
    return n, -2


@_jit(nogil=True)
def csr_from_keys(keys, start, st, cols, ptr):
    """CSR pieces of merged keys (sorted, one per (row, col) pair) from ``keys[start]`` on:
    ``cols[i]`` the column of ``keys[i]``, and in ``ptr`` the start (entries before it) of
    every row up to the last row seen. ``st`` carries ``[next row without a start, entries,
    forward pairs (tag 0), rows with entries, last row]`` between calls.

    Returns ``(next i, starts written)``; stops early, at a key, when ``ptr`` is full (a gap
    of rows without entries), so a call can resume there.
    """
    row_next = st[0]
    entries = st[1]
    fwd = st[2]
    started = st[3]
    last_row = st[4]
    nptr = 0
    cap = ptr.size
    i = start
    while i < keys.size:
        key = keys[i]
        r = key >> 32
        while row_next <= r and nptr < cap:
            ptr[nptr] = entries
            nptr += 1
            row_next += 1
        if row_next <= r:
            break
        if r != last_row:
            started += 1
            last_row = r
        cols[i] = (key >> 1) & 0x7FFFFFFF
        if (key & 1) == 0:
            fwd += 1
        entries += 1
        i += 1
    st[0] = row_next
    st[1] = entries
    st[2] = fwd
    st[3] = started
    st[4] = last_row
    return i, nptr


@_jit(nogil=True)
def _is_space(c):
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


@_jit(nogil=True)
def text_has_comma(buf, in_comment):
    """Whether ``buf`` (bytes of a text edge list) has a comma outside ``#`` comments.

    ``in_comment``: whether ``buf`` starts inside a comment. Returns ``(found, in_comment at
    the end)`` so that a file can be scanned block by block.
    """
    for i in range(buf.size):
        c = buf[i]
        if c == 10:
            in_comment = False
        elif in_comment:
            continue
        elif c == 35:
            in_comment = True
        elif c == 44:
            return True, in_comment
    return False, in_comment


@_jit(nogil=True)
def _parse_id(buf, a, b):
    """``buf[a:b]`` as a node id (1 to 18 ASCII digits), -1 when it is not digits only, -2 when
    it is more than 18 digits (too large; :data:`gs_splits.io.NODE_ID_DIGITS`)."""
    if b <= a:
        return -1
    v = np.int64(0)
    for i in range(a, b):
        d = np.int64(buf[i]) - 48
        if d < 0 or d > 9:
            return -1
        if i - a < 18:
            v = v * 10 + d
    if b - a > 18:
        return -2
    return v


@_jit(nogil=True)
def _strip(buf, a, b):
    """``(a, b)`` without the whitespace at both ends of ``buf[a:b]``."""
    while a < b and _is_space(buf[a]):
        a += 1
    while b > a and _is_space(buf[b - 1]):
        b -= 1
    return a, b


@_jit(nogil=True)
def _fields(buf, p, end, comma):
    """Fields of the line body ``buf[p:end]``: ``(count, a0, b0, a1, b1)`` with the spans of the
    first two. Comma mode: split at commas, each field stripped (a blank body has none);
    otherwise: runs of non-whitespace."""
    nf = 0
    a0 = b0 = a1 = b1 = 0
    if comma:
        s, stop = _strip(buf, p, end)
        if s == stop:
            return 0, a0, b0, a1, b1
        s = p
        while True:
            t = s
            while t < end and buf[t] != 44:
                t += 1
            fa, fb = _strip(buf, s, t)
            if nf == 0:
                a0, b0 = fa, fb
            elif nf == 1:
                a1, b1 = fa, fb
            nf += 1
            if t >= end:
                return nf, a0, b0, a1, b1
            s = t + 1
    t = p
    while t < end:
        while t < end and _is_space(buf[t]):
            t += 1
        if t >= end:
            break
        s = t
        while t < end and not _is_space(buf[t]):
            t += 1
        if nf == 0:
            a0, b0 = s, t
        elif nf == 1:
            a1, b1 = s, t
        nf += 1
    return nf, a0, b0, a1, b1


@_jit(nogil=True)
def parse_edge_text(buf, comma, ncols, src, dst):
    """Parse the complete lines of ``buf`` (it ends with a newline) of a text edge list, the
    rules of :func:`gs_splits.io.read_edge_list`: ``#`` starts a comment, blank lines are
    skipped, fields are separated by commas (``comma``, fields stripped) or by runs of
    whitespace, every data line has ``ncols`` fields (0: the first data line sets it, at
    least 2), the first two are node ids. Stops after ``src.size`` edges, at a line boundary.

    Returns ``(bytes consumed, edges, lines consumed, ncols, error, a, b, fields)``; error 0
    none, 1 a first data line with fewer than two fields (``buf[a:b]`` is its text), 2 a line
    with another number of fields, 3 a field that is not a node id (``buf[a:b]``), 4 a node id
    of more than 18 digits (too large); on an error
    the lines consumed include the bad line and the bytes consumed stop before it.
    """
    n = buf.size
    p = 0
    e = 0
    lines = 0
    cap = src.size
    while p < n and e < cap:
        q = p
        while q < n and buf[q] != 10:
            q += 1
        end = p
        while end < q and buf[end] != 35:
            end += 1
        nf, a0, b0, a1, b1 = _fields(buf, p, end, comma)
        lines += 1
        if nf > 0:
            if ncols == 0:
                if nf < 2:
                    a, b = _strip(buf, p, end)
                    return p, e, lines, ncols, 1, a, b, nf
                ncols = nf
            elif nf != ncols:
                return p, e, lines, ncols, 2, p, end, nf
            u = _parse_id(buf, a0, b0)
            if u < 0:
                return p, e, lines, ncols, 3 if u == -1 else 4, a0, b0, nf
            v = _parse_id(buf, a1, b1)
            if v < 0:
                return p, e, lines, ncols, 3 if v == -1 else 4, a1, b1, nf
            src[e] = u
            dst[e] = v
            e += 1
        p = q + 1
    return p, e, lines, ncols, 0, 0, 0, 0
