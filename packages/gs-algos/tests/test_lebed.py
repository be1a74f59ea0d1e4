"""LeBed re-training (gs_algos.lebed; lebed-online-gnn-evaluation, eq. 4-8, algorithm 1) on
SYNTHETIC toy graphs: the stopping rule, the score, the authors' settings table, pre-training.
The real-Cora regression test lives in apps/bench (it needs gs-data's generator)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from gs_algos.config import TrainConfig
from gs_algos.lebed import (
    AUTHORS_SETTINGS,
    LeBedConfig,
    authors_config,
    dataset_family,
    lebed_score,
    pretrain,
)
from gs_metrics.lebed import structure_score
from gs_models import build_model


def _toy(seed: int = 0):
    """A SYNTHETIC random graph (60 nodes, 8 features) and a 'trained' model (theta_0 + 0.3)."""
    rng = np.random.default_rng(seed)
    n = 60
    x = torch.from_numpy(rng.normal(size=(n, 8)).astype(np.float32))
    src, dst = rng.integers(0, n, 150), rng.integers(0, n, 150)
    keep = src != dst
    ei = torch.from_numpy(np.stack([np.r_[src[keep], dst[keep]], np.r_[dst[keep], src[keep]]]))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = build_model("lebed-gcn", 8, 3)
    init = copy.deepcopy(model.state_dict())
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.3)
    return model, init, x, ei


def test_stopping_rule_and_score():
    model, init, x, ei = _toy()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    rng_state = torch.get_rng_state()
    # huge tolerance: stops at the first allowed epoch (0-based epoch 3 = 4 updates)
    r = lebed_score(model, init, x, ei, config=LeBedConfig(max_steps=20, min_steps=3, epsilon=10.0))
    assert (r.stop_step, r.stopped_early) == (4, True)
    assert len(r.structure_scores) == 4
    # zero tolerance: never within, runs to the step limit
    r0 = lebed_score(model, init, x, ei, config=LeBedConfig(max_steps=7, min_steps=1, epsilon=0.0))
    assert (r0.stop_step, r0.stopped_early) == (7, False)
    # relative tolerance is a fraction of the reference
    rr = lebed_score(
        model, init, x, ei,
        config=LeBedConfig(max_steps=3, min_steps=1, epsilon=0.5, epsilon_mode="relative"),
    )
    assert rr.tolerance == pytest.approx(0.5 * abs(rr.reference))
    # the reference is g(Z*) of eq. 7 on the trained model's embeddings
    model.eval()
    with torch.no_grad():
        z, _ = model(x, ei)
    assert np.isfinite(rr.reference) and rr.reference > 0
    assert rr.reference == pytest.approx(
        structure_score(z.numpy(), ei.numpy(), np.zeros((2, 0), dtype=int)), abs=1.0
    )
    # lr = 0: the re-trained parameters stay at theta_0, so the score is ||theta* - theta_0||
    rz = lebed_score(
        model, init, x, ei,
        config=LeBedConfig(max_steps=2, min_steps=1, epsilon=0.0, lr=0.0, weight_decay=0.0),
    )
    ref = torch.sqrt(sum(((p.detach() - init[k]) ** 2).sum() for k, p in model.named_parameters()))
    assert rz.score == pytest.approx(float(ref), rel=1e-6)
    # the trained model and the global RNG are untouched; results are reproducible
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert torch.equal(rng_state, torch.get_rng_state())
    again = lebed_score(model, init, x, ei, config=LeBedConfig(max_steps=7, min_steps=1, epsilon=0.0))
    assert again.score == r0.score
    steps = []
    lebed_score(
        model, init, x, ei, config=LeBedConfig(max_steps=3, min_steps=1, epsilon=0.0),
        callback=lambda s, g, d: steps.append(s),
    )
    assert steps == [1, 2, 3]


def test_structure_from_train_forward_lags_one_update():
    """The authors compare g(Z) of the training forward of each step (before its update):
    the first structure score is that of theta_0; the eval-forward option sees theta_1."""
    model, init, x, ei = _toy(1)
    cfg = LeBedConfig(max_steps=2, min_steps=1, epsilon=0.0)
    tr = lebed_score(model, init, x, ei, config=cfg)
    ev = lebed_score(model, init, x, ei, config=cfg.with_changes(structure_from="eval_forward"))
    fresh = copy.deepcopy(model)
    fresh.load_state_dict(init)
    with torch.no_grad():
        z0, _ = fresh(x, ei)
    from gs_metrics.lebed import sample_non_edges

    neg = sample_non_edges(ei.numpy(), 60, ei.shape[1], np.random.default_rng(0), strict=False)
    assert tr.structure_scores[0] == pytest.approx(structure_score(z0.numpy(), ei.numpy(), neg), rel=1e-5)
    assert tr.structure_scores[1] == pytest.approx(ev.structure_scores[0], rel=1e-5)
    assert tr.score == pytest.approx(ev.score, rel=1e-6)  # same updates, same parameters


def test_model_contract_and_config_errors():
    model, init, x, ei = _toy()

    class LogitsOnly(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(8, 3)

        def forward(self, x, edge_index):
            return self.lin(x)

    bad = LogitsOnly()
    with pytest.raises(TypeError, match=r"\(embeddings, logits\)"):
        lebed_score(bad, bad.state_dict(), x, ei)
    with pytest.raises(ValueError, match="min_steps"):
        LeBedConfig(max_steps=5, min_steps=5)
    with pytest.raises(ValueError, match="epsilon_mode"):
        LeBedConfig(epsilon_mode="percent")
    with pytest.raises(ValueError, match="structure_from"):
        LeBedConfig(structure_from="both")
    with pytest.raises(ValueError, match="node indices"):
        lebed_score(model, init, x, ei + 1000)


def test_authors_settings_table():
    """Spot checks against the authors' param_space.txt (Amanda-Zheng/LEBED)."""
    c = authors_config("planetoid-cora", "gcn")
    assert (c.lr, c.weight_decay, c.max_steps, c.min_steps, c.epsilon, c.epsilon_mode) == (
        1e-3, 5e-4, 500, 5, 0.03, "absolute")
    assert c == LeBedConfig(source=c.source)  # the Cora GCN values are the defaults
    g = authors_config("planetoid-cora", "gin")
    assert (g.lr, g.weight_decay, g.epsilon) == (1e-4, 0.0, 0.04)
    a = authors_config("acmv9", "gcn")  # their ACM source, relative lp_margin_rate
    assert (a.lr, a.max_steps, a.min_steps, a.epsilon, a.epsilon_mode) == (2e-3, 100, 10, 0.2, "relative")
    assert authors_config("udagcn-citationv2", "sage").epsilon == 0.15  # their "network"
    assert authors_config("ogbn-arxiv", "mlp").min_steps == 200
    s = authors_config("synthetic-default", "gcn")
    assert s.lr == c.lr and "did not run" in s.source
    assert dataset_family("amazon-photo") == "amazon-photo" and dataset_family("dblpv7") == "dblp"
    assert len(AUTHORS_SETTINGS) == 30
    with pytest.raises(ValueError, match="accepted"):
        authors_config("planetoid-cora", "transformer")
    legacy = LeBedConfig.legacy()
    assert (legacy.lr, legacy.epsilon, legacy.structure_from) == (0.01, 0.01, "eval_forward")


def test_pretrain_selects_on_the_validation_graph():
    """The checkpoint is chosen on the second graph."""
    rng = np.random.default_rng(0)
    n = 50
    ei = torch.from_numpy(np.stack([np.arange(n - 1), np.arange(1, n)]))
    ei = torch.cat([ei, ei.flip(0)], 1)
    y = torch.from_numpy(rng.integers(0, 2, n))
    x_tr = torch.nn.functional.one_hot(y, 2).float() + 0.1 * torch.randn(n, 2)
    x_va = torch.randn(n, 2)  # uninformative validation graph (SYNTHETIC)
    train = Data(x=x_tr, edge_index=ei, y=y, num_nodes=n)
    valid = Data(x=x_va, edge_index=ei, y=y, num_nodes=n)
    torch.manual_seed(0)
    model = build_model("lebed-mlp", 2, 2)
    res = pretrain(model, train, valid, num_classes=2)
    assert res.best.metrics  # selection ran on the "valid" part
    assert res.best.value == pytest.approx(
        float((model(x_va, ei)[1].argmax(1) == y).float().mean()), abs=1e-6
    )
    with pytest.raises(ValueError, match="feature width"):
        pretrain(model, train, Data(x=torch.randn(n, 3), edge_index=ei, y=y, num_nodes=n))
    with pytest.raises(ValueError, match="metric='loss'.*not accepted"):
        pretrain(model, train, valid, config=TrainConfig(metric="loss", train_part="train", select_on=("valid",)))


def _authors_pretrain(model, train, valid, lr, wd, epochs):
    """The authors' pre-training (pretrain-lebed.py:117-155, written out independently of
    gs_algos): train(): train mode, log-softmax + NLL on the training graph, one Adam step;
    test(): eval mode, accuracy on the validation graph; save when strictly better."""
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=wd)
    best, state = 0.0, None
    for _ in range(epochs):
        model.train()
        _, logits = model(train.x, train.edge_index)
        loss = torch.nn.NLLLoss()(torch.log_softmax(logits, 1), train.y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        model.eval()
        with torch.no_grad():
            acc = (model(valid.x, valid.edge_index)[1].argmax(1) == valid.y).float().mean().item()
        if acc > best:
            best, state = acc, copy.deepcopy(model.state_dict())
    model.load_state_dict(state)
    return best


@pytest.mark.parametrize("preset", ["lebed-mlp", "lebed-gcn"])
def test_pretrain_is_the_authors_loop_on_two_graphs(preset):
    """Against the authors' loop: the same kept parameters, batch-norm statistics included
    (lebed-mlp: they come from the training graph alone, not from both graphs together, as
    our earlier disjoint union gave). SYNTHETIC graphs; the validation graph's features are
    shifted so that mixing them into the statistics would show."""
    rng = np.random.default_rng(1)
    n, c = 60, 3
    ei = torch.from_numpy(np.stack([np.arange(n - 1), np.arange(1, n)]))
    ei = torch.cat([ei, ei.flip(0)], 1)
    y = torch.from_numpy(rng.integers(0, c, n))
    x_tr = torch.nn.functional.one_hot(y, c).float() + 0.5 * torch.from_numpy(rng.normal(size=(n, c))).float()
    x_va = 3.0 + torch.nn.functional.one_hot(y, c).float() + 0.5 * torch.from_numpy(rng.normal(size=(n, c))).float()
    train = Data(x=x_tr, edge_index=ei, y=y, num_nodes=n)
    valid = Data(x=x_va, edge_index=ei, y=y, num_nodes=n)
    torch.manual_seed(0)
    ours = build_model(preset, c, c)
    ref = copy.deepcopy(ours)
    cfg = TrainConfig(lr=1e-2, weight_decay=5e-4, max_epochs=40, patience=None, train_part="train",
                      select_on=("valid",), metric="accuracy", device="cpu")
    res = pretrain(ours, train, valid, num_classes=c, config=cfg)
    best = _authors_pretrain(ref, train, valid, 1e-2, 5e-4, 40)
    assert res.best.value == pytest.approx(best)
    for k, v in ref.state_dict().items():
        assert torch.allclose(ours.state_dict()[k].float(), v.float(), atol=1e-6), k
    if preset == "lebed-mlp":
        bn = next(m for m in ours.modules() if isinstance(m, torch.nn.BatchNorm1d))
        assert bn.running_mean.abs().sum() > 0  # it trained, on the training graph's statistics
