"""Diagnostics against networkx shortest paths and direct counting."""

from __future__ import annotations

import networkx as nx
import numpy as np

import gs_splits as gs


def test_distance_distribution_exact_when_all_sources():
    G = nx.connected_watts_strogatz_graph(80, 4, 0.2, seed=1)
    G.add_nodes_from([80, 81])  # two isolated nodes: unreachable pairs
    g = gs.as_csr_graph(G)
    nodes = np.arange(0, 82, 3)
    dd = gs.distance_distribution(g, nodes, num_sources=len(nodes))
    sp = dict(nx.all_pairs_shortest_path_length(G))
    counts = {}
    for s in nodes:
        for t in nodes:
            if s != t:
                d = sp[s].get(t, -1)
                counts[d] = counts.get(d, 0) + 1
    total = sum(counts.values())
    ref = {str(d): c / total for d, c in counts.items() if d >= 0}
    ref["unreachable"] = counts[-1] / total
    assert dd.keys() == ref.keys()
    assert all(abs(dd[k] - ref[k]) < 1e-12 for k in ref)


def test_statistics_and_summary():
    rng = np.random.default_rng(0)
    e = rng.integers(0, 300, size=(2, 1200))
    labels = rng.integers(0, 4, size=300)
    s = gs.structural_split(e, "popularity", num_nodes=300)
    st = gs.split_statistics(s, e, labels, num_sources=8)
    assert st.sizes["ID"] == 150 and st.sizes["OOD"] == 150
    for part in ("in_train", "ID", "OOD"):
        m = s.in_distribution if part == "ID" else s.out_of_distribution if part == "OOD" else s.masks[part]
        assert np.isclose(sum(st.class_balance[part].values()), 1.0)
        assert st.class_balance[part][2] == np.mean(labels[m] == 2)
        assert st.degree[part]["mean"] == gs.degree(e, num_nodes=300)[m].mean()
    assert st.sigma["ID"]["q100"] <= st.sigma["OOD"]["q0"]
    md = gs.summarize_split(s, e, labels, num_sources=8)
    assert md.startswith("# Split report: structural / popularity")
    assert "| in_train | 90 | 0.300 |" in md and "unreachable" in md
    # no graph, no labels: still a valid report
    assert "Degree distribution" not in gs.summarize_split(s)
