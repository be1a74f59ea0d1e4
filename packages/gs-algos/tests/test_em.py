"""EM training of GMNN / EPFGNN (``gs_algos.em``) on a SYNTHETIC two-community graph:
losses fall, the structured marginals are accurate and consistent (edge marginals sum to one),
seeding is deterministic and leaves the caller's RNG alone, bad input fails early."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch_geometric.data import Data

from gs_algos.em import EMConfig, fit_epfgnn, fit_gmnn, run_em_rounds
from gs_algos.engine import seeded
from gs_models import build_model


def _two_communities(seed: int = 0, n: int = 60, f: int = 6, signal: float = 1.5) -> tuple[Data, dict]:
    """SYNTHETIC 2-class graph: class-dependent features, mostly intra-class edges; masks
    train (first third), valid (second third)."""
    gen = torch.Generator().manual_seed(seed)
    y = torch.arange(n) % 2
    x = torch.randn(n, f, generator=gen) + signal * y.view(-1, 1).float()
    src, dst = [], []
    for i in range(n):
        for j in range(i + 1, n):
            p = 0.2 if y[i] == y[j] else 0.02
            if torch.rand(1, generator=gen).item() < p:
                src += [i, j]
                dst += [j, i]
    data = Data(x=x, edge_index=torch.tensor([src, dst]), y=y)
    train = torch.zeros(n, dtype=torch.bool)
    valid = torch.zeros(n, dtype=torch.bool)
    train[: n // 3] = True
    valid[n // 3 : 2 * n // 3] = True
    return data, {"train": train, "valid": valid}


@pytest.fixture
def graph():
    return _two_communities()


def test_presets_follow_the_paper():
    g, e = EMConfig.gmnn(), EMConfig.epfgnn()
    assert (g.pretrain_epochs, g.pretrain_patience, g.m_epochs, g.e_epochs, g.em_rounds) == (200, 50, 100, 100, 1)
    assert e.m_patience == 10 and g.m_patience is None
    # released src/train_epfgnn.py: 100 rounds of <= 50 M epochs, patience 10, EM patience 5
    assert (e.variant, e.em_rounds, e.m_epochs, e.em_patience) == ("released", 100, 50, 5)
    v1 = EMConfig.epfgnn("ours-v1")
    assert (v1.em_rounds, v1.m_epochs, v1.m_patience, v1.em_patience) == (1, 100, 10, None)
    with pytest.raises(ValueError, match="variant"):
        EMConfig.gmnn("paper")
    assert (g.lr, g.weight_decay) == (0.01, 5e-4)
    with pytest.raises(ValueError, match="m_patience"):
        EMConfig(m_patience=0)
    with pytest.raises(ValueError, match="pretrain_epochs"):
        EMConfig(pretrain_epochs=-1)


def test_epfgnn_em_reduces_loss_and_gives_consistent_marginals(graph):
    data, masks = graph
    model = seeded(lambda: build_model("edgewise-epfgnn", 6, 2, hidden_channels=16, variant="ours-v1"), 0)
    res = fit_epfgnn(model, data, masks, EMConfig.epfgnn("ours-v1", pretrain_epochs=30, pretrain_patience=None, m_epochs=30, m_patience=None), seed=0)
    pre = [h[2] for h in res.history if h[0] == "pretrain"]
    m = [h[2] for h in res.history if h[0] == "m_step"]
    assert len(pre) == 30 and len(m) == 30 and res.epochs_run == 60
    assert pre[-1] < 0.5 * pre[0] and m[-1] < m[0]
    x, ei, y = data.x, data.edge_index, data.y
    test = ~(masks["train"] | masks["valid"])
    probs = model.node_marginals(x, ei)
    assert float((probs.argmax(1) == y)[test].float().mean()) > 0.75
    em = model.edge_marginals(x, ei)
    torch.testing.assert_close(em.sum((1, 2)), torch.ones(ei.size(1)))
    torch.testing.assert_close(em.sum(2), probs[ei[0]], atol=1e-3, rtol=0)
    w = model.compatibility.detach()  # homophilous graph: agreeing labels are favoured
    assert float(torch.diagonal(w).mean()) > float(w.mean())


def test_epfgnn_m_step_stops_on_validation_patience(graph):
    data, masks = graph
    model = seeded(lambda: build_model("edgewise-epfgnn", 6, 2, hidden_channels=16, variant="ours-v1"), 0)
    res = fit_epfgnn(model, data, masks, EMConfig.epfgnn("ours-v1", pretrain_epochs=20, m_epochs=200, m_patience=3), seed=0)
    m = [h for h in res.history if h[0] == "m_step"]
    assert 3 <= len(m) < 200  # the validation accuracy saturates on this easy graph


def test_gmnn_em_reduces_loss_and_gives_consistent_marginals(graph):
    data, masks = graph
    model = seeded(lambda: build_model("edgewise-gmnn", 6, 2, hidden_channels=16, num_samples=8, variant="ours-v1"), 1)
    calls = []
    cfg = EMConfig.gmnn("ours-v1", pretrain_epochs=30, pretrain_patience=None, m_epochs=40, e_epochs=20)
    res = fit_gmnn(model, data, masks, cfg, seed=0, callback=lambda info: calls.append(info.logs.get("stage", "pretrain")))
    assert len(calls) == len(res.history) == res.epochs_run == 90
    assert calls.count("m_step") == 40 and calls.count("e_step") == 20
    pre = [h[2] for h in res.history if h[0] == "pretrain"]
    m = [h[2] for h in res.history if h[0] == "m_step"]
    assert pre[-1] < 0.5 * pre[0]
    assert np.mean(m[-5:]) < np.mean(m[:5])  # pseudo-likelihood improves (stochastic targets)
    x, ei, y = data.x, data.edge_index, data.y
    test = ~(masks["train"] | masks["valid"])
    node, em = model.node_and_edge_marginals(x, ei, y=y, observed_mask=masks["train"])
    assert float((node.argmax(1) == y)[test].float().mean()) > 0.75
    torch.testing.assert_close(em.sum((1, 2)), torch.ones(ei.size(1), dtype=em.dtype))
    torch.testing.assert_close(em.sum(2), node[ei[0]], atol=1e-6, rtol=0)
    # p learned homophily: agreeing label pairs get most of the edge mass
    assert float(torch.diagonal(em, dim1=1, dim2=2).sum(1).mean()) > 0.6


def test_pretraining_uses_the_engine_early_stopping():
    data, masks = _two_communities(signal=0.2, f=60)  # weak signal: validation stalls
    model = seeded(lambda: build_model("edgewise-gmnn", 60, 2, hidden_channels=16, num_samples=4), 0)
    res = fit_gmnn(model, data, masks, EMConfig.gmnn(pretrain_epochs=500, pretrain_patience=5, m_epochs=0, e_epochs=0), seed=0)
    assert res.pretrain is not None and res.pretrain.epochs_run < 500
    assert res.pretrain.stopped_early
    best = res.pretrain.best  # acc-or-NLL rule: the kept epoch is best on both so far
    prior = [h["metrics"]["valid"] for h in res.pretrain.history[: best.epoch]]
    assert all(best.metrics["valid"]["accuracy"] >= p["accuracy"] for p in prior)
    assert all(best.metrics["valid"]["loss"] <= p["loss"] for p in prior)


@pytest.mark.parametrize("variant", ["released", "ours-v1"])
@pytest.mark.parametrize("fit, name", [(fit_gmnn, "edgewise-gmnn"), (fit_epfgnn, "edgewise-epfgnn")])
def test_same_seed_same_model_and_global_rng_untouched(graph, fit, name, variant):
    data, masks = graph
    cfg = EMConfig(pretrain_epochs=10, m_epochs=5, e_epochs=5, em_rounds=2, m_patience=None, variant=variant)
    states = []
    for _ in range(2):
        model = seeded(lambda: build_model(name, 6, 2, hidden_channels=8, variant=variant, **({"num_samples": 4} if "gmnn" in name else {})), 0)
        torch.manual_seed(123)
        before = torch.get_rng_state()
        fit(model, data, masks, cfg, seed=7)
        assert torch.equal(torch.get_rng_state(), before)
        states.append(model.state_dict())
    for k in states[0]:
        assert torch.equal(states[0][k], states[1][k]), k


def test_bad_masks_fail_early(graph):
    data, masks = graph
    model = build_model("edgewise-gmnn", 6, 2, hidden_channels=8)
    with pytest.raises(ValueError, match="'train'"):
        fit_gmnn(model, data, {"valid": masks["valid"]})
    with pytest.raises(ValueError, match="bool tensor of shape"):
        fit_gmnn(model, data, {"train": masks["train"].long()})
    with pytest.raises(ValueError, match="selects no node"):
        fit_epfgnn(build_model("edgewise-epfgnn", 6, 2), data, {"train": torch.zeros(60, dtype=torch.bool)})


def test_em_rounds_stop_on_their_patience_on_a_scripted_sequence():
    seq = iter([0.5, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.9])  # best-so-far accuracy after each M-step
    e_calls = []
    assert run_em_rounds(100, 5, lambda: next(seq), lambda: e_calls.append(1)) == 7
    assert len(e_calls) == 7  # the E-step follows every M-step, the last one included
    seq = iter([0.5, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.9])
    assert run_em_rounds(8, None, lambda: next(seq), lambda: None) == 8
    seq = iter([0.5, 0.6, 0.6, 0.7, 0.7, 0.7])  # an improvement resets the count
    assert run_em_rounds(6, 2, lambda: next(seq), lambda: None) == 6


def test_released_epfgnn_em(graph):
    data, masks = graph
    model = seeded(lambda: build_model("edgewise-epfgnn", 6, 2, hidden_channels=16), 0)
    assert model.rezero.numel() == 0
    cfg = EMConfig.epfgnn(pretrain_epochs=30, pretrain_patience=None, em_rounds=20, m_epochs=10)
    res = fit_epfgnn(model, data, masks, cfg, seed=0)
    assert 1 <= res.em_rounds_run <= 20
    m = [h for h in res.history if h[0] == "m_step"]
    assert len(m) <= 10 * res.em_rounds_run
    pairs = torch.unique(torch.sort(data.edge_index, 0).values, dim=1).size(1)
    assert model.rezero.numel() == pairs and bool(model.rezero.detach().abs().sum() > 0)  # trained from zero
    train = masks["train"]
    prop = res.proposal
    torch.testing.assert_close(prop[train], torch.nn.functional.one_hot(data.y[train], 2).float())
    torch.testing.assert_close(prop.sum(1), torch.ones(60))
    x, ei, y = data.x, data.edge_index, data.y
    test = ~(masks["train"] | masks["valid"])
    for node in (model.node_marginals(x, ei, y=y, observed_mask=train),
                 model.node_marginals(x, ei, method="mean_field", proposal=prop)):
        assert float((node.argmax(1) == y)[test].float().mean()) > 0.75
    with pytest.raises(ValueError, match="variant"):
        fit_epfgnn(model, data, masks, EMConfig.epfgnn("ours-v1"))


def test_released_gmnn_em(graph):
    data, masks = graph
    model = seeded(lambda: build_model("edgewise-gmnn", 6, 2, hidden_channels=16, num_samples=8), 1)
    cfg = EMConfig.gmnn(pretrain_epochs=30, pretrain_patience=None, m_epochs=40, e_epochs=20)
    res = fit_gmnn(model, data, masks, cfg, seed=0)
    m = [h[2] for h in res.history if h[0] == "m_step"]
    e = [h[2] for h in res.history if h[0] == "e_step"]
    assert len(m) == 40 and len(e) == 20 and res.em_rounds_run == 1
    assert m[-1] < 0.5 * m[0]  # one fixed label set: p learns to reproduce it
    x, ei, y = data.x, data.edge_index, data.y
    test = ~(masks["train"] | masks["valid"])
    node, em = model.node_and_edge_marginals(x, ei, y=y, observed_mask=masks["train"])
    assert float((node.argmax(1) == y)[test].float().mean()) > 0.75
    torch.testing.assert_close(em, node[ei[0]].unsqueeze(2) * node[ei[1]].unsqueeze(1))
    with pytest.raises(ValueError, match="variant"):
        fit_gmnn(model, data, masks, EMConfig.gmnn("ours-v1"))
