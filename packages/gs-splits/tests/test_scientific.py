"""GeSS scientific splits: overlap rules, sizes, information levels, ordered domains."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gs_splits import Split, ordered_domain_split, par_label_indices, scientific_split


def _pileup(n=10_000, seed=0):
    rng = np.random.default_rng(seed)
    dom = rng.choice(np.array(["PU10", "PU50", "PU90"]), size=n, p=[0.5, 0.25, 0.25])
    hits = rng.poisson(50, size=n) + (dom == "PU50") * 180 + (dom == "PU90") * 350
    return dom, hits.astype(float)


@pytest.mark.parametrize("level", ["no_info", "o_feature", "par_label"])
def test_overlap_rules(level):
    dom, hits = _pileup()
    s = scientific_split(dom, "PU10", "PU50", info_level=level, attribute=hits, num_groups=4, seed=1)
    src, tgt, unused = dom == "PU10", dom == "PU50", dom == "PU90"
    core = ["train", "iid_val", "iid_test", "ood_val", "ood_test"] + (["ood_labeled"] if level == "par_label" else [])
    stack = np.stack([s.masks[k] for k in core])
    assert stack.sum(0).max() == 1  # disjoint
    assert np.array_equal(stack.sum(0).astype(bool), src | tgt)  # covers source + target
    assert not (stack.sum(0).astype(bool) & unused).any() and s.metadata["unused"] == unused.sum()
    assert np.array_equal(s.train | s.iid_val | s.iid_test, src)
    n_src = src.sum()
    assert s.train.sum() == int(np.floor(0.75 * n_src)) and s.iid_val.sum() == int(np.floor(0.125 * n_src))
    if level == "o_feature":
        assert np.array_equal(s.train_target, tgt)  # features of the entire OOD dataset
    else:
        assert "train_target" not in s.masks
    if level == "par_label":
        assert s.ood_labeled.sum() == 1000
        assert not (s.ood_labeled & (s.ood_val | s.ood_test)).any()
        a100, a500, a1000 = (par_label_indices(s, k, seed=3) for k in (100, 500, 1000))
        assert set(a100) <= set(a500) <= set(a1000) == set(np.flatnonzero(s.ood_labeled))
        with pytest.raises(ValueError, match="n_labels"):
            par_label_indices(s, 1001)
    # subgroups: 4 equal-width bins of the number of hits over the source (GeSS 3.2.1)
    assert set(np.unique(s.groups[src])) <= {0, 1, 2, 3} and (s.groups[~src] == -1).all()
    h = hits[src]
    edges = np.linspace(h.min(), h.max(), 5)
    expected = np.clip(np.searchsorted(edges, h, side="right") - 1, 0, 3)
    assert np.array_equal(s.groups[src], expected)


def test_groups_by_domain_and_default_target():
    dom = np.repeat(np.array([3, 1, 2, 0]), [100, 200, 300, 400])
    s = scientific_split(dom, [1, 2], seed=0)
    assert s.metadata["target"] == [0, 3]
    assert set(s.groups[(dom == 1)]) == {0} and set(s.groups[(dom == 2)]) == {1}
    assert s.metadata["domain_values"] == [0, 1, 2, 3]


def test_bit_identical_and_roundtrip(tmp_path):
    dom, hits = _pileup(2000)
    a = scientific_split(dom, "PU10", "PU90", info_level="par_label", par_label_pool=200, seed=4)
    b = scientific_split(dom, "PU10", "PU90", info_level="par_label", par_label_pool=200, seed=4)
    assert a == b
    a.save(tmp_path / "sci")
    assert Split.load(tmp_path / "sci") == a


@settings(max_examples=40, deadline=None)
@given(sizes=st.lists(st.integers(1, 200), min_size=2, max_size=6), seed=st.integers(0, 10_000))
def test_ordered_domain_split_properties(sizes, seed):
    dom = np.repeat(np.arange(len(sizes)), sizes)
    s = ordered_domain_split(dom, order="size", source_fraction=0.6, seed=seed)
    src = set(s.metadata["source"])
    tgt = set(s.metadata["target"])
    assert src and tgt and not (src & tgt) and src | tgt == set(range(len(sizes)))
    order = s.metadata["domain_order"]
    # source = a prefix of the size order (largest first)
    assert set(order[: len(src)]) == src
    counts = [sizes[d] for d in order]
    assert counts == sorted(counts, reverse=True)


def test_ordered_by_key():
    dom = np.repeat(np.array([8, 37, 95, 157]), [400, 300, 200, 100])  # DrugOOD-like size domains
    s = ordered_domain_split(dom, order="key", descending=False, source_fraction=0.6)
    assert s.metadata["source"] == [8, 37] and s.metadata["target"] == [95, 157]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"source": "PU10", "target": "PU10"}, "overlap"),
        ({"source": "PU11"}, "unknown domain"),
        ({"source": "PU10", "info_level": "full"}, "info_level"),
        ({"source": "PU10", "source_sizes": (0.5, 0.2, 0.2)}, "sum to 1"),
        ({"source": ["PU10", "PU50", "PU90"]}, "target is empty"),
        ({"source": "PU10", "info_level": "par_label", "par_label_pool": 10**6}, "par_label_pool"),
        ({"source": "PU10", "num_groups": 3}, "needs attribute"),
    ],
)
def test_bad_input(kwargs, match):
    dom, _ = _pileup(500)
    with pytest.raises(ValueError, match=match):
        scientific_split(dom, **kwargs)


def test_par_label_pool_records_which_ood_part_each_sample_came_from():
    """GeSS (appendix C.1) removes the pool from Val-OOD and Test-OOD in equal numbers and
    draws half of each fine-tuning set from each: the split says which part every pool
    sample left. Checked against the No-Info split of the same seed, whose ood_val /
    ood_test are the parts before the removal."""
    dom = np.array(["PU10"] * 600 + ["PU90"] * 400)
    par = scientific_split(dom, "PU10", "PU90", info_level="par_label", par_label_pool=101, seed=4)
    ref = scientific_split(dom, "PU10", "PU90", info_level="no_info", seed=4)
    pool = np.flatnonzero(par.masks["ood_labeled"])
    origin = np.asarray(par.metadata["ood_labeled_origin"])
    assert origin.shape == pool.shape
    assert (origin == "ood_val").sum() == 50 and (origin == "ood_test").sum() == 51
    assert ref.masks["ood_val"][pool[origin == "ood_val"]].all()
    assert ref.masks["ood_test"][pool[origin == "ood_test"]].all()
    assert "ood_labeled_origin" not in ref.metadata
