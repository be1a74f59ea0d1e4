"""Speed and memory of the three structural properties: gs-splits vs networkx, igraph, networkit.

Each (library, graph) pair runs in its own subprocess, one after the other, in one run of this
script; the subprocess reports wall-clock times per step and the parent reads its peak
resident memory from ``os.wait4`` (``ru_maxrss``). Every tool starts from the same edge
array on disk (``.npy``, ``(2, E)``, undirected edges once each) and builds its own graph
(timed as "build"; for gs-splits the degree-ordered copy that its three property kernels
share is timed separately as "degree_order" and added to "build" by ``render_table.py``).
Properties: PageRank (damping 0.85, uniform personalization), PPR
(one-hot restart on the top-PageRank node; the node id is computed once and given to every
tool), local clustering coefficient.

Graphs: CoraML (real, structural-shifts paper), a SYNTHETIC power-law graph (170k nodes, 1.2M
edges) and a SYNTHETIC heavy-tailed graph of OGB-Products size (2,449,029 nodes, 61,859,140
undirected edges), both Chung-Lu graphs made by ``synthetic_graphs.py``.

Tolerances: gs-splits stops when the L1 change is below 1e-11 (its default: L1 error to the
exact vector below ~6e-11); igraph uses PRPACK (direct solver, exact to rounding); networkit
is run with ``tol=1e-9`` (its default; it has no personalized PageRank, so no PPR figure).
networkx (scipy power iteration, tol 1e-10 per node) is skipped on the largest graph.

Requirements (benchmark only, not package dependencies): python-igraph, networkit, networkx.

Usage::

    python packages/gs-splits/benchmarks/bench_properties.py \
        --coraml ../shared/datasets/structural-shifts/cora-ml/data.mat \
        --powerlaw /tmp/gs-splits-bench/powerlaw_170k.npy \
        --products /tmp/gs-splits-bench/products_size.npy --out bench.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np


def _load_edges(path: str) -> tuple[np.ndarray, int]:
    if path.endswith(".mat"):
        from scipy.io import loadmat

        d = loadmat(path)
        e = np.asarray(d["edges"], dtype=np.int64)
        return e, int(d["labels"].shape[1])
    e = np.load(path, mmap_mode="r")
    return e, int(e.max()) + 1


#: A 4-node graph (a triangle and a pendant) to compile the numba kernels on.
TINY_GRAPH = np.array([[0, 1, 2, 0], [1, 2, 0, 3]])


def warm_up_numba(run: Callable[[], object]) -> float:
    """Seconds to call ``run()`` (gs-splits on a tiny graph) twice: once with every kernel's
    parallel twin forced, once with the default threshold.

    numba compiles (or loads its on-disk cache) once per process: warming it on a tiny graph
    keeps compile time out of the run times (it is reported separately).
    """
    from gs_splits import _kernels

    t = time.perf_counter()
    big_threshold = _kernels.PARALLEL_MIN_NNZ
    _kernels.PARALLEL_MIN_NNZ = 0  # warm the parallel twins as well
    try:
        run()
    finally:
        _kernels.PARALLEL_MIN_NNZ = big_threshold
    run()
    return time.perf_counter() - t


def _child(lib: str, path: str, source: int, out: str) -> None:
    """Run one library on one graph; write {step: seconds, ...} to ``out``."""
    res: dict[str, float | str] = {}
    t0 = time.perf_counter()
    edges, n = _load_edges(path)
    edges = np.ascontiguousarray(edges)
    res["load"] = time.perf_counter() - t0
    if lib == "gs-splits":
        import gs_splits as gs

        def tiny_properties() -> None:
            g0 = gs.as_csr_graph(TINY_GRAPH)
            gs.pagerank(g0), gs.clustering_coefficient(g0)

        res["jit_warmup"] = warm_up_numba(tiny_properties)
        t = time.perf_counter()
        g = gs.as_csr_graph(edges, n)
        res["build"] = time.perf_counter() - t
        del edges
        # the degree-ordered copy that all three property kernels share (built on first use,
        # cached on the graph): timed on its own, counted with the build in the tables
        t = time.perf_counter()
        g.degree_ordered()
        res["degree_order"] = time.perf_counter() - t
        t = time.perf_counter()
        pr = gs.pagerank(g)
        res["pagerank"] = time.perf_counter() - t
        if source < 0:
            source = int(np.argmax(pr))
        t = time.perf_counter()
        gs.personalized_pagerank(g, source)
        res["ppr"] = time.perf_counter() - t
        t = time.perf_counter()
        gs.clustering_coefficient(g)
        res["clustering"] = time.perf_counter() - t
        res["top_pagerank_node"] = int(np.argmax(pr))
    elif lib == "igraph":
        import igraph as ig

        t = time.perf_counter()
        g = ig.Graph(n=n, edges=edges.T, directed=False)
        g.simplify()
        res["build"] = time.perf_counter() - t
        del edges
        t = time.perf_counter()
        g.pagerank(damping=0.85)
        res["pagerank"] = time.perf_counter() - t
        t = time.perf_counter()
        g.personalized_pagerank(damping=0.85, reset_vertices=[source])
        res["ppr"] = time.perf_counter() - t
        t = time.perf_counter()
        g.transitivity_local_undirected(mode="zero")
        res["clustering"] = time.perf_counter() - t
    elif lib == "networkit":
        import networkit as nk

        nk.setNumberOfThreads(os.cpu_count() or 1)
        t = time.perf_counter()
        g = nk.graph.GraphFromCoo((edges[0].astype(np.uint64), edges[1].astype(np.uint64)), n=n, directed=False)
        g.removeSelfLoops()
        g.removeMultiEdges()
        res["build"] = time.perf_counter() - t
        del edges
        t = time.perf_counter()
        nk.centrality.PageRank(g, damp=0.85, tol=1e-9).run()
        res["pagerank"] = time.perf_counter() - t
        res["ppr"] = "n/a"
        t = time.perf_counter()
        nk.centrality.LocalClusteringCoefficient(g, turbo=True).run()
        res["clustering"] = time.perf_counter() - t
    elif lib == "networkx":
        import networkx as nx

        t = time.perf_counter()
        g = nx.Graph()
        g.add_nodes_from(range(n))
        g.add_edges_from(edges.T.tolist())
        res["build"] = time.perf_counter() - t
        del edges
        t = time.perf_counter()
        nx.pagerank(g, alpha=0.85, tol=1e-10, max_iter=10_000)
        res["pagerank"] = time.perf_counter() - t
        t = time.perf_counter()
        nx.pagerank(g, alpha=0.85, personalization={source: 1.0}, tol=1e-10, max_iter=10_000)
        res["ppr"] = time.perf_counter() - t
        t = time.perf_counter()
        nx.clustering(g)
        res["clustering"] = time.perf_counter() - t
    else:
        raise ValueError(lib)
    with open(out, "w") as f:
        json.dump(res, f)


def _run(lib: str, path: str, source: int, tmp: str) -> dict:
    out = f"{tmp}.{lib}.json"
    proc = subprocess.Popen([sys.executable, __file__, "--child", lib, path, str(source), out])
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    res = {"exit": proc.returncode, "peak_rss_gb": usage.ru_maxrss / 1024**2}
    if proc.returncode == 0:
        with open(out) as f:
            res.update(json.load(f))
        os.unlink(out)
    return res


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--coraml")
    ap.add_argument("--powerlaw")
    ap.add_argument("--products")
    ap.add_argument("--libs", default="gs-splits,igraph,networkit,networkx")
    ap.add_argument("--out", default="bench_properties.json")
    a = ap.parse_args()
    graphs = [(k, p) for k, p in (("CoraML", a.coraml), ("powerlaw-170k (synthetic)", a.powerlaw), ("products-size (synthetic)", a.products)) if p]
    results = {"machine": {"cpus": os.cpu_count(), "load_before": os.getloadavg()}, "runs": {}}
    tmp = os.path.abspath(a.out) + ".tmp"
    for name, path in graphs:
        libs = [lib for lib in a.libs.split(",") if not (lib == "networkx" and "products" in name)]
        # gs-splits first: it finds the top-PageRank node that every tool then uses for PPR
        r = _run("gs-splits", path, -1, tmp)
        results["runs"].setdefault(name, {})["gs-splits"] = r
        print(name, "gs-splits", r, flush=True)
        source = int(r.get("top_pagerank_node", 0))
        for lib in libs:
            if lib == "gs-splits":
                continue
            r = _run(lib, path, source, tmp)
            results["runs"][name][lib] = r
            print(name, lib, r, flush=True)
    results["machine"]["load_after"] = os.getloadavg()
    with open(a.out, "w") as f:
        json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
