"""Benchmark: every edgewise metric on a SYNTHETIC graph of ogbn-products size.

    python packages/gs-metrics/benchmarks/bench_edgewise.py [--nodes N] [--edges E] [--classes C]

The graph is synthetic (uniformly random undirected edges, stored in both directions like a
PyG ``edge_index``; random softmax node marginals; random labels that agree with the
prediction for about 70% of the nodes), so only the timings and the memory figures mean
anything. The evaluated node set is a random 85% of the nodes (the unobserved share of the
edgewise-calibration paper, appendix C.2).

Reported: wall and CPU time (``time.process_time``, which is what a busy shared machine does not
distort much) of ``gs_metrics.edgewise_metrics`` (everything: validation, evaluated-edge
deduplication, ECE/MCE/L2, accuracy, NLL, Brier and K index on E_U, E_A, E_D, homophily) and
its peak extra memory (tracemalloc, numpy allocations included). Side by side, the reference:
torchmetrics' binary calibration error on the same per-edge confidences and correctness
(values must agree; it needs those arrays, which gs computes, so only its binning is timed).
"""

from __future__ import annotations

import argparse
import os
import resource
import time
import tracemalloc

import numpy as np

from gs_metrics import edgewise_metrics
from gs_metrics.edgewise import evaluated_edges


def make_graph(n: int, e_undirected: int, c: int, seed: int, coalesce: bool = True):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((n, c), dtype=np.float32) * 2.5
    logits -= logits.max(axis=1, keepdims=True)
    np.exp(logits, out=logits)
    logits /= logits.sum(axis=1, keepdims=True)
    probs = logits
    pred = probs.argmax(axis=1)
    labels = np.where(rng.random(n) < 0.7, pred, rng.integers(0, c, n))
    src = rng.integers(0, n, e_undirected)
    dst = rng.integers(0, n, e_undirected)
    edge_index = np.empty((2, 2 * e_undirected), dtype=np.int64)
    edge_index[0, :e_undirected] = src
    edge_index[1, :e_undirected] = dst
    edge_index[0, e_undirected:] = dst
    edge_index[1, e_undirected:] = src
    if coalesce:  # sorted by (source, target), as PyG's coalesce / to_undirected store it
        key = edge_index[0] * n + edge_index[1]
        key.sort()
        edge_index[0] = key // n
        edge_index[1] = key - edge_index[0] * n
        del key
    mask = rng.random(n) < 0.85
    return probs, labels, edge_index, mask


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=2_449_029)
    ap.add_argument("--edges", type=int, default=61_859_140, help="directed entries of edge_index")
    ap.add_argument("--classes", type=int, default=47)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--shuffled", action="store_true", help="edge_index in random order (not coalesced)"
    )
    ap.add_argument("--no-reference", action="store_true", help="skip the torchmetrics comparison")
    args = ap.parse_args()

    probs, labels, edge_index, mask = make_graph(
        args.nodes, args.edges // 2, args.classes, args.seed, not args.shuffled
    )
    print(f"load average before the run: {os.getloadavg()}")
    print(
        f"synthetic graph ({'shuffled' if args.shuffled else 'coalesced'} edge_index): {args.nodes:,} nodes, {edge_index.shape[1]:,} edge_index entries, "
        f"{args.classes} classes, {int(mask.sum()):,} evaluated nodes"
    )
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    t0, c0 = time.perf_counter(), time.process_time()
    res = edgewise_metrics(probs, labels, edge_index, mask)
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        f"gs_metrics.edgewise_metrics: wall {dt:.2f} s, CPU {cpu:.2f} s, peak extra memory {peak / 2**30:.2f} GiB "
        f"(tracemalloc; max-RSS growth {(rss1 - rss0) / 2**20:.2f} GiB)"
    )
    print(
        f"  |E_U| = {res.all.num_edges:,}, |E_A| = {res.agree.num_edges:,}, |E_D| = {res.disagree.num_edges:,}"
    )
    for k, v in res.as_dict().items():
        print(f"  {k:>22s} = {v:.6g}")

    if args.no_reference:
        return
    try:
        import torch
        from torchmetrics.functional.classification import binary_calibration_error
    except ImportError:
        print("torchmetrics not installed: reference comparison skipped")
        return
    # per-edge confidences/correctness (mean field), outside the timed gs call
    e = evaluated_edges(edge_index, args.nodes, mask)
    conf_n = probs.max(axis=1).astype(np.float64)
    corr_n = probs.argmax(axis=1) == labels
    conf = conf_n[e.lo] * conf_n[e.hi]
    corr = corr_n[e.lo] & corr_n[e.hi]
    t0, c0 = time.perf_counter(), time.process_time()
    ref = binary_calibration_error(
        torch.from_numpy(conf), torch.from_numpy(corr.astype(np.int64)), n_bins=15
    )
    dt_ref, cpu_ref = time.perf_counter() - t0, time.process_time() - c0
    print(
        f"torchmetrics binary_calibration_error on the {conf.size:,} edge confidences: wall {dt_ref:.2f} s, "
        f"CPU {cpu_ref:.2f} s, "
        f"ECE {float(ref):.6g} (gs: {res.all.ece:.6g}, |diff| {abs(float(ref) - res.all.ece):.2e})"
    )


if __name__ == "__main__":
    main()
