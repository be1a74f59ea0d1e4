"""Structural properties against networkx (an independent reference implementation)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import gs_splits as gs


def _nx_graph(e, n):
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from((int(u), int(v)) for u, v in e.T if u != v)
    return G


def _vec(d, n):
    return np.array([d[i] for i in range(n)])


CASES = [(60, 150, 0, 5), (120, 300, 6, 9), (200, 500, 1, 17), (500, 3000, 2, 40), (31, 20, 3, 3)]


@pytest.mark.parametrize(("n", "m", "seed", "iso"), CASES)
def test_pagerank_and_ppr_match_networkx(random_graph, n, m, seed, iso):
    """Eq. (1): L1 distance to networkx (tol tightened to 1e-12) within 1e-9.

    networkx stops when its L1 change is below ``N * tol``, so its own error can reach
    ``(0.85 / 0.15) * N * tol``: for graphs above 150 nodes its tol is tightened further
    (to 1e-14) so that the comparison measures our error, not networkx's.
    """
    e, N = random_graph(n, m, seed, isolated=iso)
    nx_tol = 1e-12 if N <= 150 else 1e-14
    G = _nx_graph(e, N)
    assert nx.number_connected_components(G) >= 3  # two halves + isolated nodes
    ref = _vec(nx.pagerank(G, alpha=0.85, tol=nx_tol, max_iter=100_000), N)
    ours = gs.pagerank(e, num_nodes=N)
    assert np.abs(ours - ref).sum() <= 1e-9
    assert abs(ours.sum() - 1) < 1e-12
    src = int(np.argmax(ref))
    ref_ppr = _vec(nx.pagerank(G, alpha=0.85, personalization={src: 1.0}, tol=nx_tol, max_iter=100_000), N)
    ours_ppr = gs.personalized_pagerank(e, src, num_nodes=N)
    assert np.abs(ours_ppr - ref_ppr).sum() <= 1e-9
    # default source = argmax PageRank (paper section 3.2)
    assert np.array_equal(gs.personalized_pagerank(e, num_nodes=N), ours_ppr)


def test_pagerank_user_personalization_and_errors(random_graph):
    e, N = random_graph(40, 100, 7, isolated=2)
    G = _nx_graph(e, N)
    p = np.random.default_rng(0).random(N)
    ref = _vec(nx.pagerank(G, personalization=dict(enumerate(p)), tol=1e-12, max_iter=100_000), N)
    assert np.abs(gs.pagerank(e, personalization=p, num_nodes=N) - ref).sum() <= 1e-9
    with pytest.raises(ValueError, match="alpha"):
        gs.pagerank(e, alpha=1.5)
    with pytest.raises(ValueError, match="source"):
        gs.personalized_pagerank(e, source=10_000)
    with pytest.raises(RuntimeError, match="max_iter"):
        gs.pagerank(e, max_iter=2)
    calls = []
    gs.pagerank(e, callback=lambda it, err: calls.append((it, err)))
    assert calls and calls[-1][1] < 1e-11 and [c[0] for c in calls] == list(range(1, len(calls) + 1))


@pytest.mark.parametrize(("n", "m", "seed", "iso"), [*CASES, (300, 6000, 4, 0)])
def test_clustering_equals_networkx_exactly(random_graph, n, m, seed, iso):
    """Eq. (2): bit-identical to networkx.clustering (0 for degree < 2)."""
    e, N = random_graph(n, m, seed, isolated=iso)
    G = _nx_graph(e, N)
    ref = _vec(nx.clustering(G), N)
    ours = gs.clustering_coefficient(e, num_nodes=N)
    assert np.array_equal(ours, ref)
    assert np.array_equal(gs.triangles(e, num_nodes=N), _vec(nx.triangles(G), N))


def test_clustering_on_dense_graph_with_hubs():
    G = nx.powerlaw_cluster_graph(400, 8, 0.6, seed=1)
    e = np.array(G.edges()).T
    assert np.array_equal(gs.clustering_coefficient(e, num_nodes=400), _vec(nx.clustering(G), 400))


def test_extra_builtins_match_networkx(random_graph):
    e, N = random_graph(120, 400, 5, isolated=3)
    G = _nx_graph(e, N)
    assert np.array_equal(gs.degree(e, num_nodes=N), _vec(dict(G.degree()), N).astype(float))
    assert np.array_equal(gs.core_number(e, num_nodes=N), _vec(nx.core_number(G), N).astype(float))
    bc = gs.approximate_betweenness(e, k=None, num_nodes=N)
    assert np.allclose(bc, _vec(nx.betweenness_centrality(G), N), atol=1e-12)
    approx = gs.approximate_betweenness(e, k=60, seed=1, num_nodes=N)
    assert approx.shape == (N,) and np.all(approx >= 0)
    Gc = G.subgraph(max(nx.connected_components(G), key=len)).copy()
    ec = gs.eigenvector_centrality(e, num_nodes=N)
    ref = nx.eigenvector_centrality(G, tol=1e-12, max_iter=10_000)
    assert np.allclose(ec, _vec(ref, N), atol=1e-6)
    assert len(Gc) > 0


def _heavy_tailed_edges(n, m, seed):
    """Small SYNTHETIC Chung-Lu-style graph with hubs, duplicates and isolated nodes."""
    rng = np.random.default_rng(seed)
    w = (np.arange(n) + 5.0) ** -0.8
    w /= w.sum()
    e = rng.choice(n, size=(2, m), p=w)
    return e, n + 7


def test_degree_ordered_relabelling_is_the_same_graph():
    e, N = _heavy_tailed_edges(800, 6000, 3)
    g = gs.as_csr_graph(e, num_nodes=N)
    dg = g.degree_ordered()
    assert dg is g.degree_ordered()  # cached
    deg = g.degree
    assert np.all(np.diff(deg[dg.order]) <= 0)  # descending degree
    assert np.array_equal(dg.rank[dg.order], np.arange(N))
    for r in range(N):
        row = dg.nind[dg.nptr[r] : dg.nptr[r + 1]]
        out = row[: dg.outdeg[r]]
        assert np.all(out < r) and np.all(row[dg.outdeg[r] :] > r)
        assert np.array_equal(np.sort(dg.order[row]), g.neighbors(int(dg.order[r])))
    assert dg.bounds[0] == 0 and dg.bounds[-1] == N and np.all(np.diff(dg.bounds) >= 0)
    g.clear_cache()
    assert g.degree_ordered() is not dg


def test_properties_bit_identical_for_any_thread_count(monkeypatch):
    """Same inputs give the same bits with 1 or 2 numba threads and with the serial kernels."""
    import numba

    from gs_splits import _kernels

    e, N = _heavy_tailed_edges(3000, 40_000, 11)

    def run():
        g = gs.as_csr_graph(e, num_nodes=N)  # fresh graph: nothing cached
        return [gs.pagerank(g), gs.personalized_pagerank(g), gs.clustering_coefficient(g), gs.triangles(g)]

    monkeypatch.setattr(_kernels, "PARALLEL_MIN_NNZ", 10**18)
    reference = run()  # serial kernels
    monkeypatch.setattr(_kernels, "PARALLEL_MIN_NNZ", 0)
    before = numba.get_num_threads()
    counts = sorted({1, min(2, numba.config.NUMBA_NUM_THREADS), numba.config.NUMBA_NUM_THREADS})
    try:
        for t in counts:
            numba.set_num_threads(t)
            for ours, ref in zip(run(), reference, strict=True):
                assert ours.dtype == ref.dtype and ours.tobytes() == ref.tobytes(), t
    finally:
        numba.set_num_threads(before)
    G = _nx_graph(e, N)
    ref = _vec(nx.pagerank(G, alpha=0.85, tol=1e-14, max_iter=100_000), N)
    assert np.abs(reference[0] - ref).sum() <= 1e-9
    assert np.array_equal(reference[2], _vec(nx.clustering(G), N))
