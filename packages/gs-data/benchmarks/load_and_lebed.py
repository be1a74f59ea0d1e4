"""Timings: loading CoraML (raw parse and cached), and generating LeBed's 320 Cora test graphs.

    python packages/gs-data/benchmarks/load_and_lebed.py --root ../shared/datasets

Side by side with the reference: PyG's own Planetoid reader (``torch_geometric.io``) on the
same raw Cora files, to compare gs-data's raw parsing with the standard implementation.
Processed caches go to a temporary GS_DATA_ROOT (nothing is written under --root).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time


def timed(fn, repeat):
    out, ts = None, []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t)
    return out, ts


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "shared", "datasets"))
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    os.environ["GS_DATA_ROOT"] = tempfile.mkdtemp(prefix="gs-data-bench-")
    t = time.perf_counter()
    import torch
    from torch_geometric.io import read_planetoid_data

    import gs_data

    print(f"import torch + torch_geometric + gs_data: {time.perf_counter() - t:.2f} s")
    torch.set_num_threads(2)
    root = os.path.abspath(args.root)

    print(f"machine load average: {os.getloadavg()} on {os.cpu_count()} CPUs")
    _, first = timed(lambda: gs_data.load("cora-ml", root=root, download=False, force_reload=True), 1)
    _, cached = timed(lambda: gs_data.load("cora-ml", root=root, download=False), args.repeat)
    _, nocache = timed(lambda: gs_data.load("cora-ml", root=root, download=False, use_cache=False), args.repeat)
    print("| task | median (s) | max (s) |")
    print("|---|---|---|")
    print(f"| CoraML: parse raw .mat + write processed cache | {first[0]:.3f} | {first[0]:.3f} |")
    print(f"| CoraML: load cached (gs_data.load) | {statistics.median(cached):.3f} | {max(cached):.3f} |")
    print(f"| CoraML: parse raw .mat, no cache | {statistics.median(nocache):.3f} | {max(nocache):.3f} |")
    _, ours = timed(lambda: gs_data.load("planetoid-cora", root=root, download=False, use_cache=False), args.repeat)
    raw = os.path.join(root, "planetoid", "Cora", "raw")
    _, ref = timed(lambda: read_planetoid_data(raw, "cora"), args.repeat)
    print(f"| Planetoid Cora raw: gs_data.load (no cache) | {statistics.median(ours):.3f} | {max(ours):.3f} |")
    print(f"| Planetoid Cora raw: PyG read_planetoid_data (reference) | {statistics.median(ref):.3f} | {max(ref):.3f} |")

    cora = gs_data.load("planetoid-cora", root=root, download=False)
    t, c = time.perf_counter(), time.process_time()
    graphs = gs_data.lebed_feature_shift(cora, seed=0)
    setup = time.perf_counter() - t
    n_edges = 0
    for g in graphs:
        n_edges += g.edge_index.shape[1]
    total, total_cpu = time.perf_counter() - t, time.process_time() - c
    print(f"| LeBed feature shift on Cora: environments (setup) | {setup:.2f} | {setup:.2f} |")
    print(f"| LeBed feature shift on Cora: all {len(graphs)} test graphs incl. setup | {total:.2f} | {total:.2f} |")
    print(f"| (same, CPU time of this process) | {total_cpu:.2f} | {total_cpu:.2f} |")
    print(f"machine load average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
