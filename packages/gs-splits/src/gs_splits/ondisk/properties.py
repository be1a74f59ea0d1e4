"""Out-of-core structural properties over an on-disk CSR (issue 32, second slice).

The paper's properties (structural-shifts paper, section 3.2) computed on a graph whose
adjacency does not fit in memory, within a memory budget, and **bit for bit equal** to the
in-memory kernels of :mod:`gs_splits._kernels`:

* :func:`degree_ordered_ondisk` writes, once, the degree-ordered copy of the graph that the
  in-memory kernels build in RAM (:class:`gs_splits._kernels.DegreeOrdered`), next to the
  on-disk CSR, by streaming: ``degree_ordered/nind.npy`` (every row: out-neighbours then
  in-neighbours, the same rows :func:`gs_splits._kernels._relabel_row` writes in memory),
  ``oind.npy`` (the out-neighbour lists only: the degree-oriented graph), ``order.npy``,
  ``nptr.npy``, ``outdeg.npy`` and ``meta.json``.
* :func:`pagerank_ondisk` / :func:`personalized_pagerank_ondisk`: eq. (1), Jacobi sweeps
  that stream ``nind.npy`` in row chunks into one reused buffer. Every reduction is summed
  over the same :data:`~gs_splits._kernels.NBLOCKS` row blocks (fixed by the graph) in the
  same order as in memory: a chunk boundary inside a block carries the block's running sums,
  so the additions happen in exactly the in-memory sequence.
* :func:`triangles_ondisk` / :func:`clustering_coefficient_ondisk`: eq. (2) over the
  degree-oriented graph, in blocks of middle nodes whose out-lists fit the budget, streaming
  the out-lists of the higher nodes past each block (or holding the oriented graph whole in
  memory when it fits; the log says which). Triangle counts are integers: exact in any order.

Files are read with ``readinto`` into reused buffers, never memory-mapped, so the page cache
is not resident memory. Memory, with ``n`` nodes and ``m`` stored entries (twice the edges):
PageRank about ``88 n`` bytes (six float64 vectors, row pointers, order) plus the buffer;
triangles about ``(8 T + 28) n`` bytes (``T`` threads' counts) plus the buffers; building the
degree-ordered copy about ``40 n`` bytes plus the buffers. The buffers take what the budget
leaves, at least the longest row.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from numba import get_num_threads, prange

from gs_splits import _kernels
from gs_splits._atomic import atomic_write
from gs_splits._kernels import _jit, _twin
from gs_splits.graph import CSRGraph
from gs_splits.ondisk.csr import (
    FORMAT,
    FORMAT_VERSION,
    OnDiskCSR,
    _npy_header,
    _read_exact,
    _read_npy_header,
    default_memory,
    open_ondisk,
    parse_memory,
)
from gs_splits.properties import (
    DEFAULT_TOL,
    _clustering_from_triangles,
    _one_hot,
    _personalization_vector,
)

__all__ = [
    "DiskDegreeOrdered",
    "degree_ordered_ondisk",
    "pagerank_ondisk",
    "personalized_pagerank_ondisk",
    "triangles_ondisk",
    "clustering_coefficient_ondisk",
    "in_memory_bytes",
    "choose_path",
    "save_ondisk",
]

log = logging.getLogger(__name__)

DO_FORMAT = "gs-splits degree-ordered"
DO_VERSION = 1
DO_FOLDER = "degree_ordered"  # listed in gs_splits.ondisk.csr._DERIVED (a CSR folder may hold it)


# --------------------------------------------------------------------------- file helpers
class _NpyReader:
    """A 1-D ``.npy`` file read by slices into caller buffers (buffered reads, no mmap)."""

    def __init__(self, path: Path):
        self.path = path
        self.f = open(path, "rb")  # noqa: SIM115 - closed by close()
        shape, _, self.dtype = _read_npy_header(self.f)
        self.length = int(shape[0])
        self.offset = self.f.tell()

    def read(self, start: int, count: int, buf: np.ndarray) -> np.ndarray:
        """Entries ``start .. start + count`` into ``buf[:count]`` (returned)."""
        view = buf[:count]
        self.f.seek(self.offset + start * self.dtype.itemsize)
        _read_exact(self.f, view.view(np.uint8))
        return view

    def close(self) -> None:
        self.f.close()


def _write_npy(path: Path, arr: np.ndarray) -> None:
    with open(path, "wb") as f:
        _write_npy_to(f, arr)


def _write_npy_to(f: Any, arr: np.ndarray) -> None:
    """A 1-D array as ``.npy`` into the open binary file ``f``."""
    arr = np.ascontiguousarray(arr)
    f.write(_npy_header(arr.dtype.newbyteorder("<").str, arr.size))
    f.write(memoryview(arr).cast("B"))


def _load_npy(path: Path) -> np.ndarray:
    """A whole (small, O(n)) ``.npy`` file into memory (a real array, not a mapping)."""
    r = _NpyReader(path)
    try:
        out = np.empty(r.length, r.dtype)
        return r.read(0, r.length, out)
    finally:
        r.close()


def _chunks(ptr: np.ndarray, r0: int, r1: int, cap: int) -> list[tuple[int, int]]:
    """Row ranges covering ``r0 .. r1`` with at most ``cap`` entries each (at least one row)."""
    out = []
    r = r0
    while r < r1:
        e = int(np.searchsorted(ptr, ptr[r] + cap, side="right")) - 1
        e = min(max(e, r + 1), r1)
        out.append((r, e))
        r = e
    return out


#: Largest streaming buffer (entries; 256 MiB of int32): larger ones read no faster, and the
#: RAM they would take is better left to the page cache, which holds part of the file.
STREAM_ENTRIES = 1 << 26

#: Bytes of the budget left to the interpreter, numba and small arrays.
PROCESS_BYTES = 256 * 2**20


def _free(budget: int, resident: int) -> int:
    """Bytes of ``budget`` left for buffers once ``resident`` arrays and the process are counted."""
    return max(budget - resident - min(PROCESS_BYTES, budget // 4), 0)


def _budget(memory: int | str | None) -> int:
    return default_memory() if memory is None else parse_memory(memory)


def _as_ondisk(graph: Any) -> OnDiskCSR:
    if isinstance(graph, OnDiskCSR):
        return graph
    if isinstance(graph, (str, os.PathLike)):
        return open_ondisk(graph)
    raise TypeError(f"expected an OnDiskCSR (gs_splits.ondisk.open_ondisk) or its folder, got {type(graph).__name__}")


# --------------------------------------------------------------------------- degree-ordered copy
def _relabel_chunk_py(indptr, u0, u1, src, sbase, rank, r0, r1, nptr, out, obase, outdeg):
    """Rows of the degree-ordered graph whose node is in ``u0 .. u1`` (neighbours in
    ``src``, which starts at entry ``sbase``) and whose new id is in ``r0 .. r1`` (written
    into ``out``, which starts at entry ``obase``)."""
    for u in prange(u0, u1):
        r = rank[u]
        if r0 <= r < r1:
            row = src[indptr[u] - sbase:indptr[u + 1] - sbase]
            outdeg[r] = _kernels._relabel_row(row, rank, r, out, nptr[r] - obase, nptr[r + 1] - obase)


_relabel_chunk_par = _jit(parallel=True)(_twin(_relabel_chunk_py, "_par"))
_relabel_chunk_ser = _jit()(_twin(_relabel_chunk_py, "_ser"))


@_jit()
def _compact_out(nptr, outdeg, r0, r1, buf, obase):
    """Move the out-lists of rows ``r0 .. r1`` (in ``buf``, from entry ``obase``) to the front
    of ``buf``, in row order; returns their total length."""
    w = 0
    for r in range(r0, r1):
        a = nptr[r] - obase
        for k in range(a, a + outdeg[r]):
            buf[w] = buf[k]
            w += 1
    return w


class DiskDegreeOrdered:
    """The degree-ordered copy of an on-disk graph (see :func:`degree_ordered_ondisk`).

    ``order``, ``nptr``, ``outdeg`` and ``bounds`` are loaded on demand (``O(n)``);
    ``nind.npy`` and ``oind.npy`` stay on disk and are streamed by the kernels.
    """

    def __init__(self, folder: Path, meta: dict):
        self.path = folder
        self.meta = meta
        self.num_nodes = int(meta["num_nodes"])
        self.nnz = int(meta["nnz"])
        self.out_entries = int(meta["out_entries"])

    def order(self) -> np.ndarray:
        return _load_npy(self.path / "order.npy")

    def nptr(self) -> np.ndarray:
        return _load_npy(self.path / "nptr.npy")

    def outdeg(self) -> np.ndarray:
        return _load_npy(self.path / "outdeg.npy")

    @staticmethod
    def rank_of(order: np.ndarray) -> np.ndarray:
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size, dtype=order.dtype)
        return rank

    def bounds(self, nptr: np.ndarray) -> np.ndarray:
        n = self.num_nodes
        nblocks = min(_kernels.NBLOCKS, max(n, 1))
        b = np.empty(nblocks + 1, dtype=np.int64)
        _kernels._balanced_bounds(nptr, nblocks, b)
        return b


def _default_folder(csr: OnDiskCSR) -> Path:
    """``CSR/degree_ordered``, or, when the CSR folder is read-only, a folder named by the
    graph's checksum in the system's temporary folder."""
    if os.access(csr.path, os.W_OK) or (csr.path / DO_FOLDER / "meta.json").is_file():
        return csr.path / DO_FOLDER
    return Path(tempfile.gettempdir()) / f"gs-splits-{DO_FOLDER}-{csr.checksum[:16]}"


def degree_ordered_ondisk(graph: Any, memory: int | str | None = None, *,
                          folder: str | os.PathLike | None = None) -> DiskDegreeOrdered:
    """The degree-ordered copy of an on-disk CSR, built once next to it (``OUT/degree_ordered``;
    a folder in the temporary folder when ``OUT`` is read-only; or ``folder``) and reused
    while the CSR's checksum matches.

    Rows are those of :class:`gs_splits._kernels.DegreeOrdered` (nodes by descending degree,
    ties by id; each row its out-neighbours, sorted, then its in-neighbours), bit for bit.
    Built by streaming: the destination rows are cut into ranges whose entries fit the
    buffer, and for each range the source ``indices.npy`` is read once, in chunks. Memory
    about ``40 n`` bytes plus ``memory``'s remainder as buffers (at least two rows). The
    folder is written as ``<folder>.partial-<pid>`` and renamed when complete: an interrupted
    build is redone from the start on the next call (it is one or a few sequential passes);
    two processes building at once both finish and the first copy stays.
    """
    csr = _as_ondisk(graph)
    budget = _budget(memory)
    out = Path(folder) if folder is not None else _default_folder(csr)
    done = _finished_copy(out, csr)
    if done is not None:
        return done
    if (out / "meta.json").is_file():
        log.info("%s: stale or foreign degree-ordered copy, rebuilding it", out)
    # one partial folder per process: two splits started together each build, the first wins
    partial = out.with_name(f"{out.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    n = csr.num_nodes
    indptr = _load_npy(csr.path / "indptr.npy")
    src = _NpyReader(csr.path / "indices.npy")
    try:
        idt = src.dtype
        deg = np.diff(indptr)
        order, rank, nptr, _ = _kernels.degree_order(deg, idt)
        maxdeg = int(deg.max()) if n else 0
        del deg
        nnz = int(nptr[-1])
        outdeg = np.zeros(n, dtype=np.int64)
        resident = 40 * n
        free = _free(budget, resident) // idt.itemsize
        src_cap = max(maxdeg, 1, min(nnz, free // 4, STREAM_ENTRIES))
        out_cap = max(maxdeg, 1, min(nnz, free - src_cap))
        obuf = np.empty(out_cap, idt)
        sbuf = np.empty(src_cap, idt)
        ranges = _chunks(nptr, 0, n, out_cap)
        src_chunks = _chunks(indptr, 0, n, src_cap)
        log.info("%s: building the degree-ordered copy (%d node(s), %d entries) in %d pass(es) over "
                 "indices.npy", out, n, nnz, len(ranges))
        out_total = 0
        with open(partial / "nind.npy", "wb") as fn, open(partial / "oind.npy", "wb") as fo:
            fn.write(_npy_header(np.dtype(idt).newbyteorder("<").str, nnz))
            oheader = _npy_header(np.dtype(idt).newbyteorder("<").str, nnz)  # rewritten at the end
            fo.write(oheader)
            for r0, r1 in ranges:
                obase = int(nptr[r0])
                length = int(nptr[r1]) - obase
                for u0, u1 in src_chunks:
                    sbase = int(indptr[u0])
                    s = src.read(sbase, int(indptr[u1]) - sbase, sbuf)
                    relabel = _relabel_chunk_par if s.size >= _kernels.PARALLEL_MIN_NNZ else _relabel_chunk_ser
                    relabel(indptr, u0, u1, s, sbase, rank, r0, r1, nptr, obuf, obase, outdeg)
                fn.write(memoryview(obuf[:length]).cast("B"))
                w = int(_compact_out(nptr, outdeg, r0, r1, obuf, obase))
                fo.write(memoryview(obuf[:w]).cast("B"))
                out_total += w
            header = _npy_header(np.dtype(idt).newbyteorder("<").str, out_total)
            if len(header) != len(oheader):  # numpy pads headers: a shorter length fits in place
                raise RuntimeError("oind.npy: header size changed")
            fo.seek(0)
            fo.write(header)
            fo.truncate(len(header) + out_total * idt.itemsize)
    finally:
        src.close()
    del obuf, sbuf, indptr
    _write_npy(partial / "order.npy", order)
    _write_npy(partial / "nptr.npy", nptr)
    _write_npy(partial / "outdeg.npy", outdeg)
    meta = {"format": DO_FORMAT, "format_version": DO_VERSION, "source_checksum": csr.checksum,
            "num_nodes": n, "nnz": nnz, "out_entries": out_total, "passes": len(ranges),
            "rule": "gs_splits._kernels.DegreeOrdered rows: nodes by descending degree (ties: id); "
                    "each row its out-neighbours (higher degree) sorted, then its in-neighbours"}
    data = json.dumps(meta, indent=1).encode()
    atomic_write(partial / "meta.json", lambda f: f.write(data))
    done = _finished_copy(out, csr)
    if done is not None:  # another process finished first: keep its copy (the same bits)
        shutil.rmtree(partial, ignore_errors=True)
        return done
    shutil.rmtree(out, ignore_errors=True)
    try:
        os.replace(partial, out)
    except OSError:  # another process renamed its copy in between
        shutil.rmtree(partial, ignore_errors=True)
        done = _finished_copy(out, csr)
        if done is None:
            raise
        return done
    return DiskDegreeOrdered(out, meta)


def _finished_copy(out: Path, csr: OnDiskCSR) -> DiskDegreeOrdered | None:
    """The finished degree-ordered copy of ``csr`` in ``out``, or None."""
    try:
        meta = json.loads((out / "meta.json").read_text())
    except (OSError, ValueError, RecursionError):
        return None
    if (isinstance(meta, dict) and meta.get("format") == DO_FORMAT and meta.get("format_version") == DO_VERSION
            and meta.get("source_checksum") == csr.checksum):
        return DiskDegreeOrdered(out, meta)
    return None


# --------------------------------------------------------------------------- PageRank
def _power_iteration_ondisk(dg: DiskDegreeOrdered, p: np.ndarray, x0: np.ndarray, damping: float,
                            tol: float, max_iter: int, budget: int, callback=None):
    n = dg.num_nodes
    nptr = dg.nptr()
    order = dg.order()
    rank = dg.rank_of(order)
    bounds = dg.bounds(nptr)
    reader = _NpyReader(dg.path / "nind.npy")
    itemsize = reader.dtype.itemsize
    maxrow = int(np.diff(nptr).max()) if n else 0
    free = _free(budget, 88 * n) // itemsize
    cap = max(maxrow, 1, min(dg.nnz, free))
    if cap < dg.nnz:  # streamed: two moderate buffers (one read while the other is computed on),
        # the rest of the RAM stays page cache
        cap = max(maxrow, 1, min(cap // 2, STREAM_ENTRIES // 2))
    chunks = _chunks(nptr, 0, n, cap)
    held = len(chunks) <= 1
    buf = np.empty(min(cap, max(dg.nnz, 1)), reader.dtype)
    if held:
        reader.read(0, dg.nnz, buf)
        reader.close()
        bufs = [buf]
    else:
        bufs = [buf, np.empty_like(buf)]
    log.info("pagerank (out-of-core): %s", "adjacency held in memory (it fits the budget)" if held else
             f"adjacency streamed from {reader.path} in {len(chunks)} chunk(s) of at most {cap} entries per sweep")
    # block range of every chunk
    spans = []
    for r0, r1 in chunks:
        b0 = int(np.searchsorted(bounds, r0, side="right")) - 1
        b1 = int(np.searchsorted(bounds, r1, side="left"))
        spans.append((r0, r1, max(b0, 0), min(b1, bounds.size - 1), _kernels.row_segments(nptr, r0, r1)))

    def read(j: int) -> np.ndarray:
        base = int(nptr[spans[j][0]])
        return reader.read(base, int(nptr[spans[j][1]]) - base, bufs[j % 2])

    # the next chunk is read by a thread while the kernels (nogil) compute on this one: the
    # reading (a copy from the page cache, or the disk) no longer leaves the cores idle
    pool = None if held else ThreadPoolExecutor(max_workers=1, thread_name_prefix="gs-splits-read")

    def sweep(y, x, pp, inv_deg, damping, teleport, x_new, y_new, err_part, dang_part):
        err_part[:] = 0.0
        dang_part[:] = 0.0
        pending = None if held else pool.submit(read, 0)
        for j, (r0, r1, b0, b1, seg) in enumerate(spans):
            if held:
                cur, base = buf, 0
            else:
                cur, base = pending.result(), int(nptr[r0])
                if j + 1 < len(spans):
                    pending = pool.submit(read, j + 1)
            _kernels.pr_sweep(bounds, b0, b1, r0, r1, seg, nptr, cur, base, y, x, pp, inv_deg,
                              damping, teleport, x_new, y_new, err_part, dang_part)

    try:
        return _kernels.power_loop(order, rank, nptr, bounds, sweep, p, x0, damping, tol, max_iter, callback)
    finally:
        if not held:
            pool.shutdown(wait=True)
            reader.close()


def pagerank_ondisk(graph: Any, alpha: float = 0.15, *, personalization: np.ndarray | None = None,
                    tol: float = DEFAULT_TOL, max_iter: int = 10_000, memory: int | str | None = None,
                    callback: Callable[[int, float], None] | None = None) -> np.ndarray:
    """PageRank, eq. (1) of the structural-shifts paper, on an on-disk CSR: the same vector as
    :func:`gs_splits.pagerank` on the same graph, bit for bit.

    Block-streamed Jacobi sweeps over ``degree_ordered/nind.npy`` (built on first use, see
    :func:`degree_ordered_ondisk`). With the uniform restart the result is kept there
    (``pagerank-<alpha>-<tol>-<max_iter>.npy``, ``8 n`` bytes) and reused by the next call
    with the same arguments, e.g. locality's choice of source after popularity. Memory: about ``88 n`` bytes (vectors, row pointers,
    order) plus a read buffer of what ``memory`` leaves (at least the longest row); when the
    whole adjacency fits, it is read once and held (the log says so).
    """
    csr = _as_ondisk(graph)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha (restart probability) must be in (0, 1), got {alpha}")
    if not tol > 0:
        raise ValueError(f"tol must be positive, got {tol}")
    budget = _budget(memory)
    dg = degree_ordered_ondisk(csr, budget)
    # the uniform-restart vector is kept beside the degree-ordered copy: locality needs its
    # argmax after popularity computed it (same graph, alpha, tol, max_iter: the same bits)
    kept = None if personalization is not None else dg.path / f"pagerank-{alpha!r}-{float(tol)!r}-{int(max_iter)}.npy"
    if kept is not None and kept.is_file():
        log.info("pagerank (out-of-core): reusing %s", kept)
        return _load_npy(kept)
    p = _personalization_vector(csr.num_nodes, personalization)
    out, _, _ = _power_iteration_ondisk(dg, p, p, 1.0 - alpha, float(tol), int(max_iter), budget, callback)
    if kept is not None:
        try:
            atomic_write(kept, lambda f: _write_npy_to(f, out))
        except OSError as exc:  # a read-only folder: nothing kept
            log.info("pagerank (out-of-core): not kept (%s)", exc)
    return out


def personalized_pagerank_ondisk(graph: Any, source: int | None = None, alpha: float = 0.15, *,
                                 tol: float = DEFAULT_TOL, max_iter: int = 10_000,
                                 memory: int | str | None = None) -> np.ndarray:
    """Personalized PageRank from ``source`` (default: the top-PageRank node, ties the lowest
    id), paper section 3.2, locality; :func:`gs_splits.personalized_pagerank` bit for bit,
    memory as :func:`pagerank_ondisk`."""
    csr = _as_ondisk(graph)
    n = csr.num_nodes
    if source is None:
        source = int(np.argmax(pagerank_ondisk(csr, alpha, tol=tol, max_iter=max_iter, memory=memory)))
    p = _one_hot(n, source)
    return pagerank_ondisk(csr, alpha, personalization=p, tol=tol, max_iter=max_iter, memory=memory)


# --------------------------------------------------------------------------- triangles
def _tri_block_py(optr, ubuf, ubase, u0, u1, vbuf, vbase, v0, v1, counts, bits):
    """Triangles ``w < v < u`` (degree-ordered ids) whose middle node ``v`` is in ``v0 .. v1``
    and whose top node ``u`` is in ``u0 .. u1``: ``v`` and ``w`` are out-neighbours of ``u``
    and ``w`` an out-neighbour of ``v``. ``u``'s out-list (in ``ubuf`` from ``ubase``) is
    marked in a bitmap, then the out-list of each ``v`` (in ``vbuf`` from ``vbase``) is
    probed. Each triangle is found once, at its middle node; chunk ``c`` owns ``counts[c]``
    and ``bits[c]``. Integer counts: the result does not depend on blocks or chunks."""
    nchunks = counts.shape[0]
    one = np.uint64(1)
    for c in prange(nchunks):
        cnt = counts[c]
        bm = bits[c]
        for u in range(u0 + c, u1, nchunks):
            a = optr[u] - ubase
            m = optr[u + 1] - ubase
            if m - a < 2:
                continue
            s = a + np.searchsorted(ubuf[a:m], v0)
            e = a + np.searchsorted(ubuf[a:m], v1)
            if s == e or e == a + 1:
                continue
            for k in range(a, e):
                w = ubuf[k]
                bm[w >> 6] |= one << np.uint64(w & 63)
            tu = 0
            for k in range(s, e):
                v = ubuf[k]
                t = _kernels.probe_marked(vbuf, optr[v] - vbase, optr[v + 1] - vbase, v, bm, cnt)
                if t:
                    cnt[v] += t
                    tu += t
            cnt[u] += tu
            for k in range(a, e):
                bm[ubuf[k] >> 6] = 0


_tri_block_par = _jit(parallel=True)(_twin(_tri_block_py, "_par"))
_tri_block_ser = _jit()(_twin(_tri_block_py, "_ser"))


def triangles_ondisk(graph: Any, *, memory: int | str | None = None) -> np.ndarray:
    """Number of triangles through every node (int64) of an on-disk CSR; equal to
    :func:`gs_splits.triangles`.

    Over the degree-oriented graph ``degree_ordered/oind.npy`` (each edge from the lower to
    the higher degree rank): when it fits the budget it is read once and held; otherwise the
    middle nodes are cut into blocks whose out-lists fill the buffer budget (less a streaming
    buffer of at most 256 MiB), and for each block the out-lists of the later nodes are
    streamed past it. Memory: about
    ``(8 T + 28) n`` bytes for ``T`` threads, plus the buffers (at least the longest out-list).
    """
    csr = _as_ondisk(graph)
    budget = _budget(memory)
    dg = degree_ordered_ondisk(csr, budget)
    n = dg.num_nodes
    outdeg = dg.outdeg()
    optr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(outdeg, out=optr[1:])
    maxout = int(outdeg.max()) if n else 0
    del outdeg
    total_out = int(optr[-1])
    par = dg.nnz >= _kernels.PARALLEL_MIN_NNZ
    nchunks = max(1, get_num_threads()) if par else 1
    counts = np.zeros((nchunks, n), dtype=np.int64)
    bits = np.zeros((nchunks, (n + 63) // 64), dtype=np.uint64)
    reader = _NpyReader(dg.path / "oind.npy")
    itemsize = reader.dtype.itemsize
    free = _free(budget, (8 * nchunks + 28) * n) // itemsize
    try:
        if free >= total_out:
            log.info("triangles (out-of-core): oriented graph (%d entries) held in memory (it fits "
                     "the budget)", total_out)
            buf = np.empty(max(total_out, 1), reader.dtype)
            reader.read(0, total_out, buf)
            (_tri_block_par if par else _tri_block_ser)(optr, buf, 0, 0, n, buf, 0, 0, n, counts, bits)
        else:
            ucap = max(maxout, 1, min(free // 3, STREAM_ENTRIES))
            vcap = max(maxout, 1, free - ucap)
            vbuf = np.empty(vcap, reader.dtype)
            ubuf = np.empty(ucap, reader.dtype)
            vblocks = _chunks(optr, 0, n, vcap)
            log.info("triangles (out-of-core): oriented graph (%d entries) in %d block(s) of middle "
                     "nodes, later out-lists streamed in chunks of at most %d entries", total_out,
                     len(vblocks), ucap)
            for v0, v1 in vblocks:
                vbase = int(optr[v0])
                reader.read(vbase, int(optr[v1]) - vbase, vbuf)
                for u0, u1 in _chunks(optr, v0 + 1, n, ucap) if v0 + 1 < n else []:
                    ubase = int(optr[u0])
                    ucount = int(optr[u1]) - ubase
                    reader.read(ubase, ucount, ubuf)
                    # threads pay off on large chunks only (chunk c of counts is used either way)
                    kernel = _tri_block_par if par and ucount >= _kernels.PARALLEL_MIN_NNZ // 8 else _tri_block_ser
                    kernel(optr, ubuf, ubase, u0, u1, vbuf, vbase, v0, v1, counts, bits)
    finally:
        reader.close()
        buf = vbuf = ubuf = None  # noqa: F841 - the buffers go before the counts are summed
    del bits
    total = counts[0] if nchunks == 1 else counts.sum(axis=0)
    del counts
    return total[dg.rank_of(dg.order())]


def clustering_coefficient_ondisk(graph: Any, *, memory: int | str | None = None) -> np.ndarray:
    """Local clustering coefficient, eq. (2) of the structural-shifts paper, of an on-disk CSR:
    :func:`gs_splits.clustering_coefficient` bit for bit (the correctly rounded quotient of
    the exact triangle count and ``d (d - 1) / 2``). Memory as :func:`triangles_ondisk`."""
    csr = _as_ondisk(graph)
    t = triangles_ondisk(csr, memory=memory)
    return _clustering_from_triangles(t, np.diff(_load_npy(csr.path / "indptr.npy")))


def degree_ondisk(graph: Any) -> np.ndarray:
    """Node degree (float64) of an on-disk CSR, from ``indptr.npy`` alone (``16 n`` bytes)."""
    csr = _as_ondisk(graph)
    return np.diff(_load_npy(csr.path / "indptr.npy")).astype(np.float64)


def _random_ondisk(g: OnDiskCSR, memory: int, rng: np.random.Generator) -> np.ndarray:
    from gs_splits.strategies import get_strategy

    return get_strategy("random")(g.to_csr_graph(), rng)  # reads num_nodes only


#: Strategies with an out-of-core property: ``name -> f(OnDiskCSR, budget, rng)``. The others
#: run their in-memory function on the memory-mapped CSR (pages of it become resident).
ONDISK_STRATEGIES: dict[str, Callable[[OnDiskCSR, int, np.random.Generator], np.ndarray]] = {
    "popularity": lambda g, mem, rng: pagerank_ondisk(g, memory=mem),
    "locality": lambda g, mem, rng: personalized_pagerank_ondisk(g, memory=mem),
    "density": lambda g, mem, rng: clustering_coefficient_ondisk(g, memory=mem),
    "degree": lambda g, mem, rng: degree_ondisk(g),
    "random": _random_ondisk,
}


# --------------------------------------------------------------------------- choosing the path
def in_memory_bytes(num_nodes: int, nnz: int, itemsize: int = 4) -> int:
    """Estimated peak bytes of the in-memory path on a graph of ``num_nodes`` nodes and
    ``nnz`` stored entries (twice the undirected edges): the CSR (``8 n + s m``), its
    degree-ordered copy (``s m + 24 n``) and the property vectors and split arrays
    (about ``104 n``), ``s`` bytes per id."""
    return int(2 * itemsize * nnz + 136 * num_nodes)


def choose_path(num_nodes: int, nnz: int, memory: int | str | None = None, path: str = "auto",
                itemsize: int = 4) -> tuple[str, str]:
    """``("memory" | "ondisk", reason)``: ``path`` itself when it is not ``"auto"``; otherwise
    on disk when :func:`in_memory_bytes` exceeds the budget (default 60 % of the RAM)."""
    if path not in ("auto", "memory", "ondisk"):
        raise ValueError(f"path must be 'auto', 'memory' or 'ondisk', got {path!r}")
    if path != "auto":
        return path, f"path={path!r} asked for"
    budget = _budget(memory)
    need = in_memory_bytes(num_nodes, nnz, itemsize)
    gib = 2**30
    if need > budget:
        return "ondisk", (f"the in-memory path needs about {need / gib:.3g} GiB, more than the "
                          f"memory budget of {budget / gib:.3g} GiB")
    return "memory", f"the in-memory path needs about {need / gib:.3g} GiB, within the budget of {budget / gib:.3g} GiB"


def save_ondisk(g: CSRGraph, folder: str | os.PathLike | None = None) -> OnDiskCSR:
    """Write an in-memory :class:`~gs_splits.CSRGraph` as an on-disk CSR folder (the format of
    :func:`gs_splits.ondisk.convert_edges`; a fresh temporary folder when ``folder`` is None)."""
    out = Path(folder) if folder is not None else Path(tempfile.mkdtemp(prefix="gs-splits-csr-"))
    out.mkdir(parents=True, exist_ok=True)
    _write_npy(out / "indptr.npy", g.indptr.astype(np.int64, copy=False))
    _write_npy(out / "indices.npy", g.indices)
    meta = {"format": FORMAT, "format_version": FORMAT_VERSION, "num_nodes": g.num_nodes,
            "stats": dict(g.stats) if g.stats else {"num_edges": g.num_edges},
            "checksum": g.fingerprint(), "input": {"from": "CSRGraph in memory"}}
    data = json.dumps(meta, indent=1).encode()
    atomic_write(out / "meta.json", lambda f: f.write(data))
    return open_ondisk(out)
