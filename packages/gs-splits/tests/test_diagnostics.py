"""Diagnostics against networkx shortest paths and direct counting."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

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
    # statistics computed beforehand (the CLI's report computes them once) give the same text
    assert gs.summarize_split(s, e, labels, stats=st) == md
    # no graph, no labels: still a valid report
    assert "Degree distribution" not in gs.summarize_split(s)


def _graph_and_split(strategy="popularity", n=300, kind="small-world"):
    if kind == "small-world":
        G = nx.connected_watts_strogatz_graph(n, 6, 0.1, seed=3)
    else:  # a scale-free tree: PageRank spans more than two decades
        G = nx.barabasi_albert_graph(n, 1, seed=3)
    G.add_nodes_from([n, n + 1])  # isolated: outside the largest component
    e = np.array(G.edges()).T
    labels = np.arange(n + 2) % 4
    return e, labels, gs.structural_split(e, strategy, num_nodes=n + 2, seed=0, on_ties="ignore")


def test_statistics_round_trip_through_json_and_keep_only_the_drawn_groups():
    import json

    e, labels, s = _graph_and_split()
    st = gs.split_statistics(s, e, labels, num_sources=8)
    back = gs.SplitStatistics.from_dict(json.loads(json.dumps(st.to_dict())))
    assert back == st and back.class_balance["ID"].keys() == {0, 1, 2, 3}
    small = st.to_dict(groups=("ID", "OOD"))
    assert small["sizes"] == st.sizes  # every part's size
    for key in ("class_balance", "degree", "degree_hist", "sigma"):
        assert set(small[key]) == {"ID", "OOD"}, key
    with pytest.raises(ValueError, match="unknown field\\(s\\) \\['bogus'\\]"):
        gs.SplitStatistics.from_dict({**small, "bogus": 1})
    with pytest.raises(ValueError, match="expected the dict written by SplitStatistics.to_dict"):
        gs.SplitStatistics.from_dict([1, 2])


@pytest.mark.parametrize("strategy, kind, scale", [("popularity", "scale-free", "log10"),
                                                   ("popularity", "small-world", "linear"),
                                                   ("density", "small-world", "linear")])
def test_property_histogram_counts_every_id_and_ood_node(strategy, kind, scale):
    from gs_splits.diagnostics import property_histogram

    e, labels, s = _graph_and_split(strategy, 1000, kind)
    ph = property_histogram(s, bins=20)
    assert ph["scale"] == scale and ph["name"] == strategy and len(ph["edges"]) == 21
    prop = -s.sigma
    for key, mask in (("ID", s.in_distribution), ("OOD", s.out_of_distribution)):
        shown = mask & (prop > 0) if scale == "log10" else mask
        assert sum(ph[key]) == int(shown.sum())
    assert ph["not_shown"] == (int((prop == 0).sum()) if scale == "log10" else 0)
    assert property_histogram(gs.Split(masks=dict(s.masks))) == {}  # no sigma, no histogram


def test_statistics_figure_from_stored_numbers_needs_no_split():
    import json

    pytest.importorskip("matplotlib")
    from gs_splits.plot import plot_statistics

    e, labels, s = _graph_and_split()
    stored = json.loads(json.dumps(gs.split_statistics(s, e, labels, num_sources=8).to_dict(groups=("ID", "OOD"))))
    fig = plot_statistics(None, stats=gs.SplitStatistics.from_dict(stored))
    titles = [ax.get_title() for ax in fig.axes]
    assert "Property distribution (popularity)" in titles
    # the property panel draws the stored counts: its bar heights are the histogram
    ax = fig.axes[titles.index("Property distribution (popularity)")]
    heights = [p.get_height() for p in ax.patches]
    assert sum(heights) == sum(stored["property_hist"]["ID"]) + sum(stored["property_hist"]["OOD"])
    with pytest.raises(ValueError, match="needs a split, or the statistics to draw"):
        plot_statistics(None)


def test_graph_picture_round_trips_and_samples_an_induced_subgraph():
    import json

    from gs_splits.plot import GraphPicture, graph_picture

    e, labels, s = _graph_and_split()
    full = graph_picture(s, e, iterations=5)
    assert full.positions.shape == (300, 2) and "largest connected component (300 of 302 nodes)" in full.title
    assert full.ood.sum() == s.out_of_distribution[:300].sum()
    back = GraphPicture.from_dict(json.loads(json.dumps(full.to_dict())))
    span = full.positions.max(0) - full.positions.min(0)
    assert np.all(np.abs(back.positions - full.positions) <= span / 65535)
    assert np.array_equal(back.ood, full.ood) and np.array_equal(back.edges, full.edges)
    part = graph_picture(s, e, iterations=5, show_nodes=50)
    assert part.positions.shape == (50, 2) and "a random sample of 50 of them drawn" in part.title
    # the sample's positions are the full layout's rows, its edges the edges among them
    rows = [int(np.flatnonzero((full.positions == p).all(1))[0]) for p in part.positions]
    full_edges = {tuple(sorted(x)) for x in full.edges.T.tolist()}
    induced = {tuple(sorted((rows[a], rows[b]))) for a, b in part.edges.T.tolist()}
    assert induced == {x for x in full_edges if x[0] in rows and x[1] in rows}
    with pytest.raises(ValueError, match="show_nodes must be a positive integer"):
        graph_picture(s, e, show_nodes=0)
    damaged = full.to_dict()
    damaged["positions"] = damaged["positions"][:40]
    with pytest.raises(ValueError, match="expected 600 values, got 15 \\(truncated or damaged\\)"):
        GraphPicture.from_dict(damaged)
    with pytest.raises(ValueError, match="expected a dict with format"):
        GraphPicture.from_dict({"format": "something else"})


def test_feature_picture_takes_a_coo_matrix():
    """scipy.io.loadmat may hand back COO features, which older scipy (1.15, the newest for
    Python 3.10) cannot index by row: the t-SNE picture converts them first."""
    pytest.importorskip("matplotlib")
    pytest.importorskip("sklearn")
    import scipy.sparse as sp

    from gs_splits.plot import plot_features

    _, _, split = _graph_and_split(n=60)
    rng = np.random.default_rng(0)
    dense = (rng.random((62, 8)) < 0.3).astype(np.float64)
    fig = plot_features(split, sp.coo_matrix(dense), max_nodes=40, seed=0)
    assert fig is not None
