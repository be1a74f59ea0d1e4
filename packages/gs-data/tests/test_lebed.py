"""LeBed test-graph generators: counts, determinism, perturbation strengths."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

import gs_data
from gs_data import lebed


@pytest.fixture(scope="module")
def synthetic():
    return gs_data.load("synthetic-default", use_cache=False)


@pytest.fixture(scope="module")
def toy():
    rng = np.random.default_rng(0)
    n, f = 3000, 40
    src = rng.integers(0, n, 12000)
    dst = rng.integers(0, n, 12000)
    from gs_data._readers import undirected_edges

    ei = undirected_edges(src, dst, n)
    y = np.repeat(np.arange(3), [1500, 1000, 500])
    return Data(x=torch.ones(n, f), edge_index=torch.from_numpy(ei), y=torch.from_numpy(y), num_nodes=n)


@pytest.mark.parametrize("p", [0.1, 0.35, 0.7])
def test_noise_std_is_p(toy, p):
    out = lebed.perturb_feature_noise(toy, p, np.random.default_rng(1))
    diff = (out.x - toy.x).numpy()
    assert abs(diff.std() - p) < 0.02 * p + 1e-3 and abs(diff.mean()) < 0.01
    assert torch.equal(out.edge_index, toy.edge_index)


@pytest.mark.parametrize("p", [0.1, 0.35, 0.7])
def test_mask_fraction_is_p(toy, p):
    out = lebed.perturb_feature_mask(toy, p, np.random.default_rng(1))
    zero_cols = (out.x == 0).all(0)
    assert int(zero_cols.sum()) == round(p * toy.x.shape[1])
    assert torch.equal(torch.nonzero(zero_cols).ravel(), out.masked_columns)
    assert torch.all(out.x[:, ~zero_cols] == 1)
    assert torch.all(toy.x == 1)  # the input is untouched


@pytest.mark.parametrize("p", [0.1, 0.35, 0.7])
def test_class_subgraph_keeps_fraction_p_per_class(toy, p):
    out = lebed.perturb_class_subgraph(toy, p, np.random.default_rng(1))
    counts = np.bincount(out.y.numpy(), minlength=3)
    assert counts.tolist() == [round(p * 1500), round(p * 1000), round(p * 500)]
    ids = out.node_ids.numpy()
    assert np.array_equal(toy.y.numpy()[ids], out.y.numpy())
    # induced: an edge survives iff both endpoints are kept
    keep = set(ids.tolist())
    ei = toy.edge_index.numpy()
    expected = sum(1 for a, b in ei.T if a in keep and b in keep)
    assert out.edge_index.shape[1] == expected
    assert torch.equal(out.x, toy.x[torch.from_numpy(ids)])


@pytest.mark.parametrize("p", [0.1, 0.35, 0.7])
def test_edge_dropout_removes_fraction_p(toy, p):
    out = lebed.perturb_edge_dropout(toy, p, np.random.default_rng(1))
    e0 = toy.edge_index.shape[1] // 2
    e1 = out.edge_index.shape[1] // 2
    assert e0 - e1 == round(p * e0)
    before = set(map(tuple, toy.edge_index.t().tolist()))
    after = set(map(tuple, out.edge_index.t().tolist()))
    assert after <= before and after == {(b, a) for a, b in after}


def test_bad_strength(toy):
    with pytest.raises(ValueError, match="strength p"):
        lebed.perturb_edge_dropout(toy, 1.5, np.random.default_rng(0))


def test_feature_shift_320_graphs_deterministic(synthetic):
    s = gs_data.lebed_feature_shift(synthetic, seed=0)
    assert len(s) == 320
    desc = s.describe()
    assert sum(d["perturbation"] == "feature_noise" for d in desc) == 160
    assert sorted({d["environment"] for d in desc}) == list(range(2, 10))
    for e in range(2, 10):
        assert sum(d["environment"] == e for d in desc) == 40
    # train / valid environments: same structure and labels, different spurious features
    assert torch.equal(s.train.y, s.valid.y) and torch.equal(s.train.edge_index, synthetic.edge_index)
    f0 = synthetic.x.shape[1]
    assert torch.equal(s.train.x[:, :f0], synthetic.x)
    assert not torch.equal(s.train.x[:, f0:], s.valid.x[:, f0:])
    # EERM labels: argmax of a random GAT with 10 outputs (LeBed Table 1: 10 classes); without
    # standardisation some classes may be empty on a small graph
    assert s.train.y.min() >= 0 and s.train.y.max() < 10 and s.train.y.unique().numel() >= 2
    # EERM's additive environment offset: spurious features of two environments differ by one
    # row vector, the same for every node
    diff = s.train.x[:, f0:] - s.valid.x[:, f0:]
    assert torch.allclose(diff, diff[0].expand_as(diff), atol=1e-5) and diff[0].abs().sum() > 0
    assert s.approximations == ()
    # deterministic given the seed, graph by graph
    s2 = gs_data.lebed_feature_shift(synthetic, seed=0)
    for i in (0, 25, 319):
        a, b = s[i], s2[i]
        assert a.p == b.p and 0.1 <= a.p <= 0.7 and torch.equal(a.x, b.x)
    s3 = gs_data.lebed_feature_shift(synthetic, seed=1)
    assert not torch.equal(s[0].x, s3[0].x)
    ps = [s[i].p for i in range(0, 320, 64)]
    assert len(set(ps)) == len(ps)


def test_feature_shift_original_labels_need_the_approximation(synthetic):
    cfg = lebed.FeatureShiftConfig(label_source="original", noise_levels=1, mask_levels=1,
                                   generator="approximation")
    s = gs_data.lebed_feature_shift(synthetic, cfg, seed=0)
    assert len(s) == 16 and torch.equal(s.train.y, synthetic.y)
    assert s.approximations and "not EERM" in s.approximations[0]
    with pytest.raises(ValueError, match="label_source"):
        gs_data.lebed_feature_shift(synthetic, lebed.FeatureShiftConfig(label_source="x"))
    with pytest.raises(ValueError, match="approximation"):  # EERM draws its own labels
        gs_data.lebed_feature_shift(synthetic, lebed.FeatureShiftConfig(label_source="original"))
    with pytest.raises(ValueError, match="generator"):
        gs_data.lebed_feature_shift(synthetic, lebed.FeatureShiftConfig(generator="sgc"))


def test_random_gat_layer_matches_pyg_gatconv():
    """Independent reference for EERM's generator: one layer of our numpy GAT equals PyG's
    GATConv (2 heads averaged, self-loops, LeakyReLU 0.2, zero bias) with the same weights."""
    from torch_geometric.nn import GATConv

    rng = np.random.default_rng(3)
    n, d, k = 30, 6, 4
    x = rng.normal(size=(n, d)).astype(np.float32)
    src, dst = rng.integers(0, n, 80), rng.integers(0, n, 80)
    ei = np.stack([np.r_[src, dst], np.r_[dst, src]])
    ours = lebed._random_gat(x, ei, [d, k], np.random.default_rng(7))
    draw = np.random.default_rng(7)  # the same draws, in the same order: W, att_src, att_dst
    w = lebed._glorot(draw, d, 2 * k)
    a_src = lebed._glorot(draw, 2, k)
    a_dst = lebed._glorot(draw, 2, k)
    conv = GATConv(d, k, heads=2, concat=False)
    with torch.no_grad():
        conv.lin.weight.copy_(torch.from_numpy(w.T))
        conv.att_src.copy_(torch.from_numpy(a_src).reshape(1, 2, k))
        conv.att_dst.copy_(torch.from_numpy(a_dst).reshape(1, 2, k))
        conv.bias.zero_()
        ref = conv(torch.from_numpy(x), torch.from_numpy(ei).long()).numpy()
    np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-5)


def test_feature_shift_count_on_cora(shared_datasets):
    cora = gs_data.load("planetoid-cora", root=shared_datasets, download=False, use_cache=False)
    s = gs_data.lebed_feature_shift(cora, seed=0)
    assert len(s) == 320 and s[100].x.shape == (2708, 1433 + 10)


def test_domain_shift(fixtures_root):
    doms = {k: gs_data.load(k, root=fixtures_root) for k in ("udagcn-acmv9", "dblpv8", "citationv2")}
    s = gs_data.lebed_domain_shift(doms, "udagcn-acmv9", seed=0)
    assert len(s) == 3 * 4 * 30
    kinds = [d["perturbation"] for d in s.describe()]
    assert {k: kinds.count(k) for k in set(kinds)} == {k: 90 for k in lebed.PERTURBATIONS}
    g = s[200]
    assert g.domain_name == "dblpv8" and 0.1 <= g.p <= 0.7
    assert torch.equal(s[200].x, gs_data.lebed_domain_shift(doms, "udagcn-acmv9", seed=0)[200].x)
    assert int(s.train.train_mask.sum()) == round(0.8 * 12)
    with_clean = gs_data.lebed_domain_shift(doms, "dblpv8", lebed.DomainShiftConfig(include_clean=True))
    assert len(with_clean) == 363 and with_clean[0].perturbation == "none"
    with pytest.raises(ValueError, match="source"):
        gs_data.lebed_domain_shift(doms, "nope")
    with pytest.raises(ValueError, match="unknown perturbation"):
        gs_data.lebed_domain_shift(doms, "dblpv8", lebed.DomainShiftConfig(perturbations=("blur",)))


def test_temporal_shift(fixtures_root):
    arxiv = gs_data.load("ogbn-arxiv", root=fixtures_root)
    s = gs_data.lebed_temporal_shift(arxiv, seed=0)
    assert len(s) == 360
    assert s.train.num_nodes == 4  # years 2008..2011
    assert s.valid.num_nodes == 7 and int(s.valid.eval_mask.sum()) == 3
    g = s[0]  # period (2014, 2016]: papers of 2008..2016, evaluated on 2015 and 2016
    assert g.period == "2014-2016"
    assert g.num_nodes == 9 and int(g.eval_mask.sum()) == 2
    assert sorted(g.node_year[g.eval_mask].tolist()) == [2015, 2016]
    with pytest.raises(ValueError, match="node_year"):
        gs_data.lebed_temporal_shift(gs_data.load("pubmed", root=fixtures_root))
