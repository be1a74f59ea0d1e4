"""SYNTHETIC heavy-tailed graphs for the speed benchmark (Chung-Lu model, memory-efficient).

A Chung-Lu graph draws both endpoints of every edge independently with probability
proportional to a node weight ``w_i ~ (i + i0)^(-1 / (gamma - 1))`` (power-law degree
distribution with exponent ``gamma``). Node ids are then shuffled so that hubs are spread over
the id range as in real data. Edges are written in chunks straight into int32 arrays
(``2 * E * 4`` bytes; 0.5 GB for the OGB-Products-size graph), so generation never holds
more than a few hundred MB of temporaries. Self-loops are dropped and duplicates are removed
so that the file holds exactly the undirected simple edges (each once, ``u < v``).

Usage::

    python synthetic_graphs.py OUT.npy NUM_NODES NUM_EDGES [--gamma 2.3] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def chung_lu_edges(
    num_nodes: int,
    num_edges: int,
    *,
    gamma: float = 2.3,
    seed: int = 0,
    max_weight_frac: float = 0.004,
    chunk: int = 8_000_000,
) -> np.ndarray:
    """``(2, E)`` int32 SYNTHETIC Chung-Lu edges, simple and undirected, exactly ``num_edges``."""
    rng = np.random.default_rng(seed)
    i0 = 10.0
    w = (np.arange(num_nodes, dtype=np.float64) + i0) ** (-1.0 / (gamma - 1.0))
    w = np.minimum(w, w.sum() * max_weight_frac)
    cdf = np.cumsum(w)
    cdf /= cdf[-1]
    del w
    perm = rng.permutation(num_nodes).astype(np.int32)
    keys = np.empty(0, dtype=np.int64)
    # oversample in rounds until enough distinct pairs exist
    while keys.size < num_edges:
        need = int((num_edges - keys.size) * 1.08) + 1000
        new = []
        for start in range(0, need, chunk):
            m = min(chunk, need - start)
            u = np.searchsorted(cdf, rng.random(m)).astype(np.int64)
            v = np.searchsorted(cdf, rng.random(m)).astype(np.int64)
            u = perm[u].astype(np.int64)
            v = perm[v].astype(np.int64)
            keep = u != v
            lo = np.minimum(u[keep], v[keep])
            hi = np.maximum(u[keep], v[keep])
            new.append(lo * num_nodes + hi)
            del u, v, lo, hi, keep
        keys = np.unique(np.concatenate([keys, *new]))
        del new
    # keep a random subset of exactly num_edges distinct pairs
    if keys.size > num_edges:
        drop = rng.choice(keys.size, size=keys.size - num_edges, replace=False)
        mask = np.ones(keys.size, dtype=bool)
        mask[drop] = False
        keys = keys[mask]
    out = np.empty((2, num_edges), dtype=np.int32)
    out[0] = keys // num_nodes
    out[1] = keys % num_nodes
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("num_nodes", type=int)
    ap.add_argument("num_edges", type=int)
    ap.add_argument("--gamma", type=float, default=2.3)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    t = time.perf_counter()
    e = chung_lu_edges(a.num_nodes, a.num_edges, gamma=a.gamma, seed=a.seed)
    np.save(a.out, e)
    deg = np.bincount(e.ravel(), minlength=a.num_nodes)
    print(
        f"SYNTHETIC Chung-Lu graph: {a.num_nodes} nodes, {e.shape[1]} undirected edges, "
        f"max degree {deg.max()}, isolated {int((deg == 0).sum())}, {time.perf_counter() - t:.1f} s "
        f"-> {a.out}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
