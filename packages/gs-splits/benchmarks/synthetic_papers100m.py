"""SYNTHETIC ogbn-papers100M-size edge stream (Chung-Lu) for the on-disk conversion (issue 32).

Writes ``OUT`` (raw binary, int32, layout ``(2, E)``: the E sources, then the E destinations)
and the sidecar ``OUT.json`` that ``gs_splits.ondisk.convert_edges`` / ``gs-splits convert`` read
(``{"format": "gs-splits raw edges", "dtype": "int32", "layout": "2xE", "num_edges": E,
"num_nodes": n, "generator": {...}}``). The sidecar is written last: a file without it is
unfinished.

Model (Chung-Lu with continuous power-law weights). Every edge draws both endpoints
independently; the endpoint is the node of rank ``floor(X)``, where ``X`` on ``[0, n)`` has the
density ``f(x) ~ (x + i0) ** (-1 / (gamma - 1))`` (drawn by inverting its CDF in closed form:
no per-node table, no search), and ranks are mapped to node ids by a seeded random
permutation, so hubs are spread over the id range as in real data. The expected degree of
the node of rank ``i`` is ``2 E * integral_i^{i+1} f``: a power law with exponent ``gamma``,
mean ``2 E / n`` and maximum (rank 0) ``--max-degree``, which fixes ``i0``.

The stream is what raw data look like, not a simple graph: it keeps the self-loops and the
repeated pairs that independent draws give (few: 110 loops and 4,169 repeats in the
10M-edge version), and the conversion removes and counts them. With this mean degree the
power law leaves no node of small expected degree: the smallest is about 10, the median
about 16 (a real citation graph has many papers with one or two links).

Defaults = ogbn-papers100M (OGB; Hu et al. 2020): 111,059,956 nodes and 1,615,685,872 edges,
so a mean total degree of 29.1. The exponent and the maximum are our choice, since the
real degree sequence is not available offline here: ``gamma = 2.5``, the middle of the range
fitted to citation graphs (2-3; the in-degree tail of citations is near 3, out-degrees
(reference lists) are short-tailed), and ``max-degree = 100,000``, the order of the citation
counts of the most cited papers in the Microsoft Academic Graph that papers100M is drawn
from. Both are options; a heavier tail (smaller gamma, larger max) makes the triangle
counts of later slices costlier, not the conversion.

Deterministic per seed: the permutation comes from ``SeedSequence(seed)`` child 0 and the
edges of block b (``BLOCK`` edges each) from child ``b + 1``, so the file does not depend on
the machine or on how much is generated at once. Memory: the permutation (4 bytes per node,
8 while it is drawn: 0.9 GB at full size) plus about 150 MB per block in flight.

Usage::

    python synthetic_papers100m.py /work/big/papers100m.bin                       # full size, 12.9 GB
    python synthetic_papers100m.py small.bin --nodes 20000 --edges 300000 --seed 1  # small versions
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from gs_splits._atomic import atomic_write

PAPERS100M_NODES = 111_059_956
PAPERS100M_EDGES = 1_615_685_872
GAMMA = 2.5
MAX_DEGREE = 100_000.0
BLOCK = 1 << 22  # edges per random block (the unit of determinism)
FORMAT = "gs-splits raw edges"


def _mass(lo: float, hi: float, i0: float, e: float) -> float:
    """integral of (x + i0) ** (e - 1) over [lo, hi], times e (e = 1 - a, a = 1 / (gamma - 1))."""
    return (hi + i0) ** e - (lo + i0) ** e


def solve_offset(num_nodes: int, num_edges: int, gamma: float, max_degree: float) -> float:
    """The ``i0`` for which the expected degree of rank 0 is ``max_degree`` (bisection)."""
    if not gamma > 2:
        raise ValueError(f"gamma must be > 2 (a finite mean degree), got {gamma}")
    e = 1.0 - 1.0 / (gamma - 1.0)

    def top(i0: float) -> float:
        return 2.0 * num_edges * _mass(0, 1, i0, e) / _mass(0, num_nodes, i0, e)

    mean = 2.0 * num_edges / num_nodes
    lo, hi = 1e-9, float(num_nodes) * 1e6
    if not mean < max_degree < top(lo):
        raise ValueError(f"max_degree must lie between the mean degree {mean:.1f} and {top(lo):.0f} "
                         f"for gamma {gamma}, got {max_degree}")
    for _ in range(200):  # top() decreases in i0
        mid = math.sqrt(lo * hi)
        if top(mid) > max_degree:
            lo = mid
        else:
            hi = mid
    return math.sqrt(lo * hi)


def default_max_degree(num_nodes: int, num_edges: int, gamma: float = GAMMA) -> float:
    """:data:`MAX_DEGREE` at full size, scaled for other sizes like a power law's natural
    maximum ``mean * n ** (1 / (gamma - 1))`` (at least twice the mean)."""
    mean = 2.0 * num_edges / num_nodes
    full_mean = 2.0 * PAPERS100M_EDGES / PAPERS100M_NODES
    scaled = MAX_DEGREE * (mean / full_mean) * (num_nodes / PAPERS100M_NODES) ** (1.0 / (gamma - 1.0))
    return max(scaled, 2.0 * mean)


def _ranks(u: np.ndarray, num_nodes: int, i0: float, e: float) -> np.ndarray:
    """Inverse CDF of the density ~ (x + i0) ** (e - 1) on [0, n), floored to ranks."""
    a0 = i0**e
    span = (num_nodes + i0) ** e - a0
    x = np.power(a0 + u * span, 1.0 / e) - i0
    r = x.astype(np.int64)
    np.clip(r, 0, num_nodes - 1, out=r)
    return r


def generate(out: str | os.PathLike, num_nodes: int = PAPERS100M_NODES, num_edges: int = PAPERS100M_EDGES, *,
             gamma: float = GAMMA, max_degree: float | None = None, seed: int = 0, log=None) -> dict:
    """Write the SYNTHETIC edge stream to ``out`` and its sidecar ``out.json``; returns the sidecar.
    ``max_degree`` defaults to :func:`default_max_degree`."""
    if max_degree is None:
        max_degree = default_max_degree(num_nodes, num_edges, gamma)
    if not 2 <= num_nodes < 2**31:
        raise ValueError(f"num_nodes must be in [2, 2**31), got {num_nodes}")
    if num_edges < 1:
        raise ValueError(f"num_edges must be >= 1, got {num_edges}")
    out = Path(out)
    side = out.with_name(out.name + ".json")
    side.unlink(missing_ok=True)
    i0 = solve_offset(num_nodes, num_edges, gamma, max_degree)
    e = 1.0 - 1.0 / (gamma - 1.0)
    seq = np.random.SeedSequence(seed)
    perm = np.random.default_rng(seq.spawn(1)[0]).permutation(num_nodes).astype(np.int32)
    nblocks = -(-num_edges // BLOCK)
    t0 = time.monotonic()

    def write(f) -> None:
        fd = f.fileno()
        os.ftruncate(fd, 2 * 4 * num_edges)
        for b in range(nblocks):
            # child b + 1 of the seed, without spawning all of them first
            rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(b + 1,)))
            m = min(BLOCK, num_edges - b * BLOCK)
            for plane in (0, 1):
                ids = perm[_ranks(rng.random(m), num_nodes, i0, e)]
                os.pwrite(fd, ids.astype("<i4", copy=False).tobytes(), 4 * (plane * num_edges + b * BLOCK))
            if log is not None and (b % 64 == 63 or b == nblocks - 1):
                log(f"{b + 1}/{nblocks} blocks, {time.monotonic() - t0:.0f} s")

    atomic_write(out, write)  # the whole file or none: a stopped run leaves no half edge file
    meta = {
        "format": FORMAT, "dtype": "int32", "layout": "2xE", "num_edges": int(num_edges), "num_nodes": int(num_nodes),
        "generator": {"model": "Chung-Lu, continuous power-law weights (x + i0)^(-1/(gamma-1)), ranks permuted",
                      "kind": "SYNTHETIC", "gamma": gamma, "max_expected_degree": max_degree, "i0": i0,
                      "mean_degree": 2 * num_edges / num_nodes, "seed": seed, "block": BLOCK,
                      "script": "packages/gs-splits/benchmarks/synthetic_papers100m.py"},
    }
    side.write_text(json.dumps(meta, indent=1) + "\n")
    return meta


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="raw edge file to write (its sidecar is OUT.json)")
    ap.add_argument("--nodes", type=int, default=PAPERS100M_NODES, help=f"number of nodes (default {PAPERS100M_NODES:,})")
    ap.add_argument("--edges", type=int, default=PAPERS100M_EDGES, help=f"number of edges drawn (default {PAPERS100M_EDGES:,})")
    ap.add_argument("--gamma", type=float, default=GAMMA, help=f"power-law exponent of the degrees, > 2 (default {GAMMA})")
    ap.add_argument("--max-degree", type=float, default=None,
                    help=f"expected degree of the top node (default {MAX_DEGREE:,.0f} at full size; smaller graphs: "
                         "scaled as a power law's natural maximum, mean * n ** (1 / (gamma - 1)))")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    max_degree = a.max_degree if a.max_degree is not None else default_max_degree(a.nodes, a.edges, a.gamma)
    try:
        meta = generate(a.out, a.nodes, a.edges, gamma=a.gamma, max_degree=max_degree, seed=a.seed,
                        log=lambda s: print(s, file=sys.stderr, flush=True))
    except ValueError as exc:
        print(f"synthetic_papers100m: error: {exc}", file=sys.stderr)
        return 2
    g = meta["generator"]
    print(f"wrote {a.out} ({a.edges:,} edges, {a.nodes:,} nodes, int32 (2, E)) and {a.out}.json; "
          f"gamma {g['gamma']}, max expected degree {g['max_expected_degree']:,.0f}, i0 {g['i0']:.4g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
