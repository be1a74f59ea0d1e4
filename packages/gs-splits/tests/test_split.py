"""Structural split invariants (hypothesis), persistence, configuration and bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gs_splits as gs
from gs_splits import STRUCTURAL_PARTS, Split, split_sizes, structural_split


@st.composite
def sizes_strategy(draw):
    w = draw(st.lists(st.integers(0, 20), min_size=5, max_size=5).filter(lambda x: sum(x) > 0))
    return tuple(x / sum(w) for x in w)


@st.composite
def graph_strategy(draw):
    n = draw(st.integers(5, 60))
    m = draw(st.integers(0, 3 * n))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    return rng.integers(0, n, size=(2, m)), n


def _check_invariants(split: Split, sizes, n):
    masks = np.stack([split.masks[p] for p in STRUCTURAL_PARTS])
    # disjoint and covering
    assert np.array_equal(masks.sum(axis=0), np.ones(n))
    counts = masks.sum(axis=1)
    # sizes as specified: floor(n * s), the last part of each group takes the remainder
    assert counts.tolist() == split_sizes(n, sizes)
    assert abs(counts[:3].sum() - n * sum(sizes[:3])) < 1 + 1e-9
    for c, s in zip(counts, sizes, strict=True):
        assert abs(c - n * s) < 3
    sigma = split.sigma
    # ID nodes have sigma <= every OOD sigma; OOD parts monotone: out_valid <= out_test
    id_m, ov, ot = split.in_distribution, split.out_valid, split.out_test
    if id_m.any() and (ov | ot).any():
        assert sigma[id_m].max() <= sigma[ov | ot].min()
    if ov.any() and ot.any():
        assert sigma[ov].max() <= sigma[ot].min()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graph=graph_strategy(), sizes=sizes_strategy(), seed=st.integers(0, 2**31 - 1),
       strategy=st.sampled_from(["popularity", "locality", "density", "random", "degree"]))
def test_structural_split_invariants(graph, sizes, seed, strategy):
    e, n = graph
    nonempty = sum(1 for s in sizes if s > 0)
    if n < nonempty:
        with pytest.raises(ValueError, match="fewer than"):
            structural_split(e, strategy, sizes=sizes, seed=seed, num_nodes=n)
        return
    a = structural_split(e, strategy, sizes=sizes, seed=seed, num_nodes=n)
    _check_invariants(a, sizes, n)
    b = structural_split(e, strategy, sizes=sizes, seed=seed, num_nodes=n)
    assert a == b  # bit-identical with the same seed (masks, sigma, domains, metadata)
    for p in STRUCTURAL_PARTS:
        assert a.masks[p].tobytes() == b.masks[p].tobytes()
    assert a.sigma.tobytes() == b.sigma.tobytes()


@settings(max_examples=40, deadline=None)
@given(values=st.lists(st.integers(-3, 3), min_size=10, max_size=80), seed=st.integers(0, 1000))
def test_ties_broken_by_seeded_permutation(values, seed):
    """Heavily tied user property: still disjoint/covering/monotone; seeds can differ only in ties."""
    n = len(values)
    prop = np.array(values, dtype=float)
    e = np.array([[0], [1]])
    a = structural_split(e, prop, seed=seed, num_nodes=n)
    _check_invariants(a, (0.3, 0.1, 0.1, 0.1, 0.4), n)
    b = structural_split(e, prop, seed=seed + 1, num_nodes=n)
    # the multiset of sigma values in ID is the same whatever the tie-break
    assert sorted(a.sigma[a.in_distribution]) == sorted(b.sigma[b.in_distribution])


def test_paper_sizes_and_presets():
    assert split_sizes(2995, (0.3, 0.1, 0.1, 0.1, 0.4)) == [898, 299, 300, 299, 1199]
    assert split_sizes(1000, gs.PAPER_SIZES["70:30"]) == [420, 140, 140, 60, 240]
    e = np.random.default_rng(0).integers(0, 1000, size=(2, 3000))
    s = structural_split(e, "degree", sizes="90:10", num_nodes=1000)
    assert s.in_distribution.sum() == 900 and s.out_of_distribution.sum() == 100
    with pytest.raises(ValueError, match="preset"):
        structural_split(e, "degree", sizes="80:20")


def test_split_sizes_groups_and_bad_input():
    """One part-size rule for every split: the structural ID / OOD groups by default for five
    fractions, one group otherwise (GeSS table 4), explicit groups when asked."""
    assert split_sizes(19753, (0.75, 0.125, 0.125)) == [14814, 2469, 2470]
    assert split_sizes(19753, (0.6, 0.1, 0.1, 0.1, 0.1), groups=(5,)) == [11851, 1975, 1975, 1975, 1977]
    assert split_sizes(19753, (0.6, 0.1, 0.1, 0.1, 0.1)) == [11851, 1975, 1976, 1975, 1976]
    assert split_sizes(0, (0.5, 0.5)) == [0, 0]
    with pytest.raises(ValueError, match="sum to 1"):
        split_sizes(10, (0.5, 0.4))
    with pytest.raises(ValueError, match="must have 5 fractions"):
        split_sizes(10, (0.5, 0.5), groups=(3, 2))
    with pytest.raises(ValueError, match="n must be an int"):
        split_sizes(-1, (0.5, 0.5))
    with pytest.raises(ValueError, match="groups"):
        split_sizes(10, (0.5, 0.5), groups=(0, 2))


def test_callable_and_array_strategies_and_domains():
    e = np.random.default_rng(1).integers(0, 200, size=(2, 800))
    deg = gs.degree(e, num_nodes=200)
    a = structural_split(e, deg, num_nodes=200, seed=3)
    b = structural_split(e, lambda g: g.degree, num_nodes=200, seed=3)
    c = structural_split(e, "degree", num_nodes=200, seed=3)
    assert all(np.array_equal(a.masks[p], b.masks[p]) and np.array_equal(a.masks[p], c.masks[p]) for p in STRUCTURAL_PARTS)
    assert b.metadata["strategy"] == "<lambda>" and a.metadata["strategy"] == "array"
    # domains (default scope "in_train"): k = 10 equal bins of the sigma rank of the training
    # nodes; domain 0 = most ID-like (appendix F); monotone in sigma over all nodes
    tr = a.masks["in_train"]
    counts = np.bincount(a.domains[tr], minlength=10)
    assert counts.size == 10 and counts.min() >= 1 and counts.max() - counts.min() <= 1
    # monotone: sigma_i < sigma_j implies domain_i <= domain_j (nodes with equal sigma may
    # fall either side of a bin edge), i.e. sorted by (sigma, domain) the domains never fall
    order = np.lexsort((a.domains, a.sigma))
    assert np.all(np.diff(a.domains[order]) >= 0)
    assert len(np.unique(a.sigma)) > 10  # not vacuous: sigma takes many values
    assert a.sigma[a.domains == 0].max() <= a.sigma[a.domains == 9].min()
    assert a.metadata["domain_scope"] == "in_train"
    # the earlier rule (domain_scope="all"): equal bins over all nodes
    old = structural_split(e, deg, num_nodes=200, seed=3, domain_scope="all")
    assert np.bincount(old.domains).tolist() == [20] * 10
    assert old.sigma[old.domains == 0].max() <= old.sigma[old.domains == 9].min()
    with pytest.raises(ValueError, match="domain_scope"):
        structural_split(e, deg, num_nodes=200, seed=3, domain_scope="train")


@pytest.mark.parametrize("sizes", ["50:50", "70:30", "90:10"])
def test_training_nodes_span_all_ten_domains_with_equal_counts(sizes):
    """Appendix F / GOOD: the 10 domains partition the *training* nodes. Over all nodes (the
    earlier rule) a 50:50 split's training nodes fall into the first 5 domains only."""
    e = np.random.default_rng(7).integers(0, 997, size=(2, 5000))
    s = structural_split(e, "degree", sizes=sizes, num_nodes=997, seed=1)
    tr = s.masks["in_train"]
    counts = np.bincount(s.domains[tr], minlength=10)
    assert counts.size == 10 and counts.max() - counts.min() <= 1 and counts.sum() == tr.sum()
    # bins are contiguous in the split's order (sigma, ties by the seeded permutation):
    # every training node of domain d has sigma <= every training node of domain d + 1
    for d in range(9):
        assert s.sigma[tr & (s.domains == d)].max() <= s.sigma[tr & (s.domains == d + 1)].min()
    # every OOD node has sigma >= every ID node, so it lies in the last bin
    assert set(np.unique(s.domains[s.out_of_distribution]).tolist()) == {9}
    old = structural_split(e, "degree", sizes=sizes, num_nodes=997, seed=1, domain_scope="all")
    if sizes == "50:50":
        assert set(np.unique(old.domains[tr]).tolist()) == {0, 1, 2, 3, 4}


def test_property_domains():
    v = np.arange(100.0)[::-1]
    d = gs.property_domains(v, 10)
    assert np.bincount(d).tolist() == [10] * 10 and d[0] == 9 and d[-1] == 0
    u = gs.property_domains(np.array([0.0, 0.1, 0.5, 1.0]), 2, method="uniform")
    assert u.tolist() == [0, 0, 1, 1]
    with pytest.raises(ValueError, match="NaN"):
        gs.property_domains(np.array([0.0, np.nan]))
    # within: bins over the selected nodes; others take the bin their value falls in
    v = np.array([5.0, 0.0, 9.0, 1.0, 3.0, 7.0, 2.0, 8.0])
    within = np.array([True, True, False, True, False, True, False, False])
    d = gs.property_domains(v, 2, within=within)
    # selected values 0, 1, 5, 7 -> bins {0, 1} and {5, 7}; 2, 3 fall after 1 (bin 0), 8, 9
    # after 7 (bin 1)
    assert d.tolist() == [1, 0, 1, 0, 0, 1, 0, 1]
    assert gs.property_domains(v, 2, within=within, method="uniform").tolist() == [1, 0, 1, 0, 0, 1, 0, 1]
    with pytest.raises(ValueError, match="within"):
        gs.property_domains(v, 2, within=np.zeros(8, dtype=bool))


def test_random_strategy_is_uniform_baseline():
    e = np.random.default_rng(2).integers(0, 1000, size=(2, 4000))
    s = structural_split(e, "random", num_nodes=1000, seed=5)
    deg = gs.degree(e, num_nodes=1000)
    # random baseline: ID and OOD degree means are close (no structural shift)
    assert abs(deg[s.in_distribution].mean() - deg[s.out_of_distribution].mean()) < 1.0
    p = structural_split(e, "popularity", num_nodes=1000, seed=5)
    assert deg[p.in_distribution].mean() > deg[p.out_of_distribution].mean() + 2


def test_save_load_roundtrip(tmp_path):
    e = np.random.default_rng(0).integers(0, 300, size=(2, 900))
    s = structural_split(e, "density", num_nodes=300, seed=11)
    path = s.save(tmp_path / "sub" / "split")
    assert path.name == "split.npz" and (tmp_path / "sub" / "split.json").exists()
    t = Split.load(tmp_path / "sub" / "split.npz")
    assert t == s and t.metadata["graph_fingerprint"] == s.metadata["graph_fingerprint"]
    meta = json.loads((tmp_path / "sub" / "split.json").read_text())
    assert meta["strategy"] == "density" and meta["sizes"] == [0.3, 0.1, 0.1, 0.1, 0.4]
    assert list(t.masks) == list(STRUCTURAL_PARTS)
    assert not list((tmp_path / "sub").glob("*.tmp"))
    with pytest.raises(FileNotFoundError):
        Split.load(tmp_path / "missing")


def test_split_is_machine_independent_fingerprint():
    """Same inputs and seed -> same bytes; the metadata fingerprint identifies the graph."""
    e = np.array([[0, 1, 2, 3, 4], [1, 2, 3, 4, 0]])
    a = structural_split(e, "popularity", seed=0)
    assert a.metadata["graph_fingerprint"] == gs.as_csr_graph(e).fingerprint()
    assert len(a.metadata["graph_fingerprint"]) == 64


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sizes": (0.3, 0.1, 0.1, 0.1, 0.3)}, "sum to 1"),
        ({"sizes": (0.5, 0.5)}, "5 fractions"),
        ({"sizes": (0.3, 0.1, 0.1, -0.1, 0.6)}, "non-negative"),
        ({"strategy": "pagerankk"}, "unknown 'pagerankk'"),
        ({"strategy": np.array([1.0, np.nan, 0, 0, 0, 0])}, "NaN/inf"),
        ({"strategy": np.array([1.0, np.inf, 0, 0, 0, 0])}, "NaN/inf"),
        ({"strategy": np.ones(5)}, "one value per node"),
    ],
)
def test_bad_input(kwargs, match):
    e = np.array([[0, 1, 2, 3, 4], [1, 2, 3, 4, 5]])
    with pytest.raises(ValueError, match=match):
        structural_split(e, **kwargs)


def test_fewer_nodes_than_parts_and_empty_graph():
    with pytest.raises(ValueError, match="fewer than the 5 non-empty parts"):
        structural_split(np.array([[0, 1], [1, 2]]), "degree")
    with pytest.raises(ValueError, match="empty"):
        structural_split(np.zeros((2, 0), dtype=int), "degree")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_order_and_tie_summary_match_lexsort_and_unique(seed):
    """The split's order (one stable sort) is np.lexsort's permutation, and tie_summary read
    from its runs equals the np.unique computation (the path it takes on any other order),
    on properties with many ties, equal-size tie groups and signed zeros."""
    from gs_splits.split import _order_by, tie_summary

    rng = np.random.default_rng(seed)
    n = 5000
    prop = rng.integers(0, 40, n).astype(np.float64) / 7.0
    prop[rng.random(n) < 0.1] = -0.0
    prop[:200] = rng.random(200)  # untied values too
    if seed == 2:  # two largest groups of equal size: np.unique picks the smaller value
        prop = np.repeat([3.0, 1.0, 2.0], [10, 10, 5])
        n = prop.size
    sigma = -prop
    tiebreak = rng.permutation(n)
    order = _order_by(sigma, tiebreak)
    assert np.array_equal(order, np.lexsort((tiebreak, sigma)))
    for n_id, n_ov in [(n // 2, n // 10), (n // 3, 1), (n - 1, 1)]:
        fast = tie_summary(prop, order, n_id, n_ov)
        slow = tie_summary(prop, rng.permutation(n), n_id, n_ov)  # not sorted: the np.unique path
        # the boundary flags depend on where the group sits in `order`: recompute them the slow
        # way on the split's order
        values, inverse, counts = np.unique(prop, return_inverse=True, return_counts=True)
        g = int(counts.argmax())
        rank_in = (inverse == g)[order]
        first, last = int(np.argmax(rank_in)), n - 1 - int(np.argmax(rank_in[::-1]))
        slow["spans_id_ood_boundary"] = bool(first < n_id <= last)
        slow["spans_ood_boundary"] = bool(first < n_id + n_ov <= last)
        assert fast == slow


def test_a_callable_strategy_may_take_the_rng_as_registered_strategies_do():
    """``register_strategy`` takes ``f(graph, rng)``; ``structural_split(graph, f)`` took
    ``f(graph)`` only and failed with a bare TypeError on the registered form."""
    ei = np.array([[0, 1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 3, 4, 5, 6, 7, 8, 9]])
    seen = []

    def with_rng(graph, rng):
        seen.append(rng)
        return rng.random(graph.num_nodes)

    a = structural_split(ei, with_rng, seed=3)
    b = structural_split(ei, lambda g: np.arange(g.num_nodes, dtype=float), seed=3)
    assert isinstance(seen[0], np.random.Generator) and a.num_nodes == b.num_nodes == 10
    c = structural_split(ei, with_rng, seed=3)  # the split's generator: same seed, same split
    assert all(np.array_equal(a.masks[k], c.masks[k]) for k in STRUCTURAL_PARTS)
    d = structural_split(ei, lambda g, scale=2.0: scale * np.arange(g.num_nodes), seed=3)
    assert np.array_equal(d.sigma, -2.0 * np.arange(10))  # an optional 2nd argument is not the rng


def test_split_statistics_checks_labels_and_leaves_unlabelled_nodes_out():
    from gs_splits.diagnostics import split_statistics

    ei = np.array([[0, 1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 3, 4, 5, 6, 7, 8, 9]])
    s = structural_split(ei, "popularity", seed=0)
    with pytest.raises(ValueError, match="non-integer"):
        split_statistics(s, None, np.linspace(0, 1, 10))
    with pytest.raises(ValueError, match=r"argmax\(1\)"):
        split_statistics(s, None, np.eye(10))
    y = np.array([0, 1, -1, 0, 1, 0, -1, 1, 0, 1])
    st = split_statistics(s, None, y)
    assert st.unlabelled == 2
    for part, mask in s.masks.items():
        lab = mask & (y >= 0)
        if lab.any():
            assert st.class_balance[part][0] == pytest.approx(np.mean(y[lab] == 0))
            assert sum(st.class_balance[part].values()) == pytest.approx(1.0)
    assert type(st).from_dict(st.to_dict()).unlabelled == 2
    # float labels with integral values (a .npy of 0.0 / 1.0) are class ids
    assert split_statistics(s, None, y.astype(float)).class_balance == st.class_balance


def test_statistics_with_bool_or_no_labelled_nodes():
    from gs_splits.diagnostics import split_statistics, summarize_split

    ei = np.array([[0, 1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 3, 4, 5, 6, 7, 8, 9]])
    s = structural_split(ei, "popularity", seed=0)
    flags = np.arange(10) % 2 == 0
    assert split_statistics(s, None, flags).class_balance == split_statistics(s, None, flags.astype(int)).class_balance
    st = split_statistics(s, None, -np.ones(10, int))  # nobody labelled: no class table at all
    assert st.class_balance == {} and st.unlabelled == 10
    assert "Class balance" not in summarize_split(s, ei, -np.ones(10, int))
