"""DIR and LRI-Bernoulli mechanisms on SYNTHETIC point clouds (label carried by 3
'signal' points per cloud, the other points are noise)."""

from __future__ import annotations

import pytest
import torch
from torch_geometric.data import Batch as PygBatch

from gs_algos import TrainConfig, fit_graph
from gs_algos.methods import DIR, LRIBernoulli, bernoulli_kl, split_by_score


def _parts(clouds, n=60):
    return {"train": clouds(n, seed=0), "iid_val": clouds(16, seed=1),
            "ood_val": clouds(16, seed=2, shift=1.0)}


def _cfg(**kw):
    base = dict(max_epochs=25, batch_size=16, task="binary", seed=0, lr=5e-3)
    base.update(kw)
    return TrainConfig.gess(**base)


def test_split_by_score_keeps_the_top_fraction_per_graph():
    batch = torch.tensor([0] * 10 + [1] * 4 + [2])
    scores = torch.arange(15, dtype=torch.float)
    keep = split_by_score(scores, batch, 0.3)
    assert keep[:10].tolist() == [False] * 7 + [True] * 3  # top 3 of 10
    assert keep[10:14].tolist() == [False, False, True, True]  # ceil(1.2) = 2 of 4
    assert keep[14]  # a 1-point graph keeps its point


def test_bernoulli_kl_matches_torch_distributions():
    p = torch.tensor([0.1, 0.5, 0.9, 0.7])
    ref = torch.distributions.kl_divergence(
        torch.distributions.Bernoulli(probs=p), torch.distributions.Bernoulli(probs=torch.full_like(p, 0.7))
    )
    assert torch.allclose(bernoulli_kl(p, 0.7), ref, atol=1e-6)


def test_lri_prior_decays_from_0_9_to_0_7():
    m = LRIBernoulli()
    assert [m.r(e) for e in (0, 9, 10, 19, 20, 50)] == pytest.approx([0.9, 0.9, 0.8, 0.8, 0.7, 0.7])


def _point_probs(meth, graphs):
    b = PygBatch.from_data_list(graphs)
    with torch.no_grad():
        p = torch.sigmoid(meth.keep_logits(b))
    sig = b.x[:, 0] == 1
    return p[sig].mean().item(), p[~sig].mean().item(), p.mean().item()


def test_lri_randomness_is_learnt_where_the_signal_is(synthetic_clouds, tiny_pointnet):
    parts = _parts(synthetic_clouds)
    meth = LRIBernoulli(info_loss_coef=5.0)
    # evaluate at the last epoch only, so that the final extractor is kept
    res = fit_graph(tiny_pointnet(), parts, meth, _cfg(max_epochs=30, lr=0.03, eval_every=30))
    p_sig, p_noise, _ = _point_probs(meth, parts["train"])
    # informative points are kept a little more often (weak on this easy toy: +0.03)
    assert p_sig > p_noise
    assert res.best.value > 0.7
    # a large information-loss weight pulls every keep-probability to the prior r
    strong = LRIBernoulli(info_loss_coef=50.0)
    fit_graph(tiny_pointnet(), parts, strong, _cfg(max_epochs=22, lr=0.03, eval_every=22))
    _, _, p_mean = _point_probs(strong, parts["train"])
    assert p_mean == pytest.approx(strong.r(21), abs=0.05)


def test_dir_selects_the_causal_points(synthetic_clouds, tiny_pointnet):
    parts = _parts(synthetic_clouds)
    meth = DIR(causal_ratio=0.25, num_interventions=2)
    res = fit_graph(tiny_pointnet(), parts, meth, _cfg(max_epochs=30))
    b = PygBatch.from_data_list(parts["train"])
    with torch.no_grad():
        keep = split_by_score(meth.scores(b), b.batch, meth.causal_ratio)
    precision = float((b.x[keep, 0] == 1).float().mean())
    base_rate = float((b.x[:, 0] == 1).float().mean())
    assert precision > base_rate + 0.15  # rationale concentrates on the signal points
    assert res.best.value > 0.7


def test_geometric_methods_refuse_node_level(synthetic_graph, tiny_gcn):
    from gs_algos import fit_node

    with pytest.raises(ValueError, match="level"):
        fit_node(tiny_gcn(8, 3), synthetic_graph, DIR(), TrainConfig(max_epochs=1))
