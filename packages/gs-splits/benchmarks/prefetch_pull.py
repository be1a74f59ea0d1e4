"""The PageRank pull with and without its software prefetch, side by side in one process.

gs-splits' PageRank / PPR sweep (``gs_splits._kernels._pr_rows_py``) sums ``y[buf[k]]`` over
each row's neighbours. On a graph whose ``y`` (8 bytes per node) is far larger than the
caches, those reads wait on memory; the kernel asks the CPU to start loading
``y[buf[k + PREFETCH_AHEAD]]`` while it adds ``y[buf[k]]``. This script times the package's
kernel against the same loop without the prefetch (and with other distances), on the same
rows, and checks that every variant gives the same bits.

Rows: a slice of ``--entries`` adjacency entries starting at the fraction ``--at`` of the
rows of a degree-ordered on-disk graph (``--folder``, the ``degree_ordered`` folder that
:func:`gs_splits.ondisk.degree_ordered_ondisk` writes, e.g. the papers100M-size one of
``results-papers100m``), or of a SYNTHETIC Chung-Lu graph made in memory (``--synthetic
NODES:EDGES``, the generator of ``synthetic_papers100m.py``).

    python packages/gs-splits/benchmarks/prefetch_pull.py --folder /work/big/full/csr/degree_ordered --at 0.5
    python packages/gs-splits/benchmarks/prefetch_pull.py --synthetic 20M:200M

Output: one line per variant and repeat (seconds, ns per entry per thread, same bits).
Exit status 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from pyg_side_by_side import _count  # noqa: E402  (this folder: "200k", "1.5M" -> int)


def _plain(prange):
    def rows(seg, nptr, buf, base, y, out):
        for s in prange(seg.size - 1):
            for i in range(seg[s], seg[s + 1]):
                acc = 0.0
                for k in range(nptr[i] - base, nptr[i + 1] - base):
                    acc += y[buf[k]]
                out[i] = acc
    return rows


def _ahead(prange, prefetch, ahead: int):
    def rows(seg, nptr, buf, base, y, out):
        for s in prange(seg.size - 1):
            last = nptr[seg[s + 1]] - base - ahead
            for i in range(seg[s], seg[s + 1]):
                acc = 0.0
                for k in range(nptr[i] - base, nptr[i + 1] - base):
                    if k < last:
                        prefetch(y, buf[k + ahead])
                    acc += y[buf[k]]
                out[i] = acc
    return rows


def variants(distances: list[int]) -> list[tuple[str, object]]:
    import numba

    from gs_splits._kernels import prefetch

    jit = numba.njit(parallel=True, nogil=True)
    out = [("no prefetch", jit(_plain(numba.prange)))]
    for d in distances:
        out.append((f"prefetch {d} ahead", jit(_ahead(numba.prange, prefetch, d))))
    return out


def slice_of_folder(folder: Path, at: float, entries: int):
    """Row pointers, the entries of ``entries`` rows from the fraction ``at``, their base."""
    for name in ("nptr.npy", "nind.npy"):
        if not (folder / name).is_file():
            raise ValueError(f"--folder {folder}: no {name} (give the degree_ordered folder of an on-disk CSR)")
    nptr = np.load(folder / "nptr.npy")
    nind = np.load(folder / "nind.npy", mmap_mode="r")
    n = nptr.size - 1
    r0 = int(n * at)
    r1 = int(np.searchsorted(nptr, int(nptr[r0]) + entries))
    r1 = min(max(r1, r0 + 1), n)
    a, b = int(nptr[r0]), int(nptr[r1])
    return nptr, np.array(nind[a:b]), a, r0, r1


def slice_of_synthetic(n: int, e: int, at: float, entries: int):
    import tempfile

    from synthetic_papers100m import generate  # this folder

    import gs_splits as gs
    from gs_splits._kernels import DegreeOrdered

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "edges.bin"
        generate(path, n, e, seed=0)
        edges = np.fromfile(path, dtype="<i4").reshape(2, e)
    g = gs.as_csr_graph(edges, num_nodes=n)
    del edges
    d = DegreeOrdered(g.indptr, g.indices)
    r0 = int(n * at)
    r1 = min(max(int(np.searchsorted(d.nptr, int(d.nptr[r0]) + entries)), r0 + 1), n)
    return d.nptr, d.nind, 0, r0, r1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--folder", type=Path, help="degree_ordered folder of an on-disk CSR")
    src.add_argument("--synthetic", metavar="NODES:EDGES", help="a SYNTHETIC Chung-Lu graph made in memory")
    ap.add_argument("--at", type=float, default=0.5, help="first row, as a fraction of the rows (default 0.5)")
    ap.add_argument("--entries", default="200M", help="adjacency entries timed (default 200M)")
    ap.add_argument("--distances", default="8,16,32,64", help="prefetch distances to try (default 8,16,32,64)")
    ap.add_argument("--repeats", type=int, default=2)
    a = ap.parse_args(argv)
    try:
        if not 0.0 <= a.at < 1.0:
            raise ValueError(f"--at {a.at}: a fraction of the rows in [0, 1)")
        entries = _count(a.entries)
        distances = [int(x) for x in a.distances.split(",") if x.strip()]
        if any(d < 1 for d in distances):
            raise ValueError(f"--distances {a.distances!r}: positive whole numbers")
        if a.folder is not None:
            nptr, buf, base, r0, r1 = slice_of_folder(a.folder, a.at, entries)
        else:
            n_text, _, e_text = a.synthetic.partition(":")
            nptr, buf, base, r0, r1 = slice_of_synthetic(_count(n_text), _count(e_text), a.at, entries)
    except ValueError as exc:
        print(f"prefetch_pull: error: {exc}", file=sys.stderr)
        return 2

    import numba

    from gs_splits._kernels import PREFETCH_AHEAD, row_segments

    n = nptr.size - 1
    y = np.random.default_rng(0).random(n)
    out = np.zeros(n)
    seg = row_segments(nptr, r0, r1)
    threads = numba.get_num_threads()
    print(f"rows {r0:,}..{r1:,} of {n:,}: {buf.size:,} entries; y {y.nbytes / 2**20:,.0f} MiB; "
          f"{threads} thread(s); the package prefetches {PREFETCH_AHEAD} ahead", flush=True)
    ref = None
    runs = variants(distances)
    for _name, f in runs:
        f(seg[:2], nptr, buf, base, y, out)  # compile, untimed
    for _ in range(a.repeats):
        for name, f in runs:
            t = time.perf_counter()
            with numba.parallel_chunksize(1):
                f(seg, nptr, buf, base, y, out)
            dt = time.perf_counter() - t
            if ref is None:
                ref = out[r0:r1].copy()
            same = bool(np.array_equal(ref, out[r0:r1]))
            print(f"{name:20s} {dt:8.3f} s {dt / max(buf.size, 1) * 1e9 * threads:7.2f} ns/entry/thread"
                  f"  same bits: {same}", flush=True)
            if not same:
                print("prefetch_pull: a variant changed the sums", file=sys.stderr)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
