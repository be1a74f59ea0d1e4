"""Uncertainty methods: formulas against independent references, and mechanisms on
SYNTHETIC graphs (ensemble knowledge uncertainty, GPN / NatPN evidence, temperature)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.optimize import minimize_scalar
from scipy.stats import entropy as sp_entropy

from gs_algos.config import TrainConfig
from gs_algos.engine import fit_node, seeded
from gs_algos.uncertainty import (
    BayesianLoss,
    TemperatureScaling,
    bayesian_combination,
    dirichlet_alpha,
    dirichlet_entropy,
    dirichlet_uncertainties,
    ensemble_probs,
    ensemble_uncertainties,
    entropy,
    mc_dropout_probs,
    softmax_entropy,
    train_ensemble,
    uce_loss,
)


def _cfg(**kw):
    base = dict(lr=0.01, weight_decay=0.0, max_epochs=100, patience=None, seed=0)
    base.update(kw)
    return TrainConfig(**base)


def test_softmax_entropy_matches_scipy():
    z = torch.randn(5, 4, generator=torch.Generator().manual_seed(0))
    ref = sp_entropy(torch.softmax(z, -1).numpy(), axis=1)
    assert np.allclose(softmax_entropy(z).numpy(), ref, atol=1e-6)


def test_ensemble_decomposition():
    p = torch.tensor([[[0.9, 0.1], [0.5, 0.5]], [[0.1, 0.9], [0.5, 0.5]]])
    u = ensemble_uncertainties(p)
    # item 0: members disagree (knowledge = log 2 - H(0.9, 0.1)); item 1: both at 0.5
    h = sp_entropy([0.9, 0.1])
    assert u["total"].tolist() == pytest.approx([np.log(2), np.log(2)], abs=1e-6)
    assert u["data"].tolist() == pytest.approx([h, np.log(2)], abs=1e-6)
    assert u["knowledge"].tolist() == pytest.approx([np.log(2) - h, 0.0], abs=1e-6)


def test_measures_agree_with_gs_metrics():
    """gs-algos' measures are gs-metrics' on tensors (one implementation, issue 20): the
    same numbers, in the input's dtype and on its device."""
    import gs_metrics

    g = torch.Generator().manual_seed(1)
    p = torch.softmax(torch.randn(4, 6, 3, generator=g, dtype=torch.float64), -1)
    ours = ensemble_uncertainties(p)
    ref = gs_metrics.ensemble_uncertainty(p.numpy())
    for k in ("total", "data", "knowledge"):
        assert np.allclose(ours[k].numpy(), getattr(ref, k))
    alpha = torch.rand(6, 3, generator=g, dtype=torch.float64) * 5 + 0.1
    ours = dirichlet_uncertainties(alpha)
    ref = gs_metrics.dirichlet_uncertainty(alpha.numpy())
    assert np.allclose(ours["data"].numpy(), ref.expected_entropy)
    assert np.allclose(ours["knowledge"].numpy(), ref.mutual_information)
    assert np.allclose(-ours["evidence"].numpy(), ref.alpha0)


def test_dirichlet_formulas_match_torch_distributions_and_monte_carlo():
    alpha = torch.tensor([[2.0, 3.0, 0.5], [10.0, 1.0, 1.0]], dtype=torch.float64)
    dist = torch.distributions.Dirichlet(alpha)
    assert torch.allclose(dirichlet_entropy(alpha), dist.entropy())
    g = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    s = dist.sample((200_000,)).clamp_min(1e-300)  # (S, N, C)
    y = torch.tensor([1, 0])
    mc_uce = (-torch.log(s[:, torch.arange(2), y])).mean(0)
    assert torch.allclose(uce_loss(alpha, y), mc_uce, rtol=2e-2)
    mc_data = (-(s * torch.log(s)).sum(-1)).mean(0)
    assert torch.allclose(dirichlet_uncertainties(alpha)["data"], mc_data, rtol=1e-2)
    del g


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_dirichlet_knowledge_is_exact_for_large_evidence(dtype, mutual_information_reference):
    """Mutual information is about (C - 1) / (2 alpha_0) for large alpha_0; computed as
    total - data it was lost to cancellation from alpha_0 ~ 1e6 in float32 (GPN's OOD
    AUROC fell to chance). Checked against mpmath at 60 digits, alpha_0 from 1 to 1e12."""
    g = torch.Generator().manual_seed(3)
    base = torch.rand(8, 7, generator=g, dtype=torch.float64) + 0.05
    scales = torch.logspace(0, 12, 8, dtype=torch.float64)[:, None]
    alpha = (base / base.sum(-1, keepdim=True) * scales).to(dtype)
    got = dirichlet_uncertainties(alpha)["knowledge"]
    assert got.dtype == dtype
    ref = [mutual_information_reference(row.tolist()) for row in alpha.double()]
    assert got.double().tolist() == pytest.approx(ref, rel=1e-5)
    # the OOD ranking: less evidence, more knowledge uncertainty, all the way up
    assert bool((got[1:] < got[:-1]).all())


def test_ensemble_knowledge_of_nearly_agreeing_members_matches_float64_reference():
    g = torch.Generator().manual_seed(4)
    logits = torch.randn(1, 50, 5, generator=g, dtype=torch.float64)
    members = torch.softmax(logits + 1e-3 * torch.randn(5, 50, 5, generator=g, dtype=torch.float64), -1)
    ref = ensemble_uncertainties(members)["knowledge"]
    got = ensemble_uncertainties(members.float())["knowledge"]
    assert got.dtype == torch.float32
    assert got.double().numpy() == pytest.approx(ref.numpy(), rel=1e-3)


def test_bayesian_combination_adds_the_evidence():
    a1 = torch.tensor([[3.0, 1.0]])
    a2 = torch.tensor([[1.0, 5.0]])
    assert bayesian_combination([a1, a2]).tolist() == [[3.0, 5.0]]
    assert bayesian_combination([a1, a1, a1]).tolist() == [[7.0, 1.0]]


def test_temperature_scaling_lowers_validation_nll():
    g = torch.Generator().manual_seed(0)
    y = torch.randint(0, 4, (400,), generator=g)
    logits = torch.randn(400, 4, generator=g)
    logits[torch.arange(400), y] += 1.0
    logits = 6 * logits  # an over-confident model
    ts = TemperatureScaling().fit(logits, y)
    ce = torch.nn.functional.cross_entropy
    assert float(ce(ts(logits).detach(), y)) < float(ce(logits, y)) - 0.2
    ref = minimize_scalar(lambda t: float(ce(logits.double() / t, y)), bounds=(0.05, 50),
                          method="bounded")
    assert ts.temperature == pytest.approx(ref.x, rel=1e-2) and ts.temperature > 1
    with pytest.raises(ValueError, match="non-empty"):
        TemperatureScaling().fit(logits[:0], y[:0])


def test_mc_dropout_samples_differ_and_batchnorm_stays_frozen(synthetic_graph, tiny_gcn):
    model = tiny_gcn(8, 3, dropout=0.5)
    fit_node(model, synthetic_graph, None, _cfg(max_epochs=5))
    stats = model.norms[0].running_mean.clone()
    p = mc_dropout_probs(model, synthetic_graph, num_samples=6, seed=1)
    assert p.shape == (6, synthetic_graph.num_nodes, 3)
    assert not torch.allclose(p[0], p[1])
    assert torch.equal(model.norms[0].running_mean, stats) and not model.training
    assert torch.equal(p, mc_dropout_probs(model, synthetic_graph, num_samples=6, seed=1))


def test_ensemble_knowledge_uncertainty_is_higher_on_ood_nodes(synthetic_graph_factory, tiny_mlp):
    # domain 2 is OOD: its nuisance features are shifted far from the training range
    data = synthetic_graph_factory(num_domains=3, domain_shift=4.0, seed=4)
    models, _ = train_ensemble(
        build=lambda s: tiny_mlp(8, 3, seed=s),
        fit=lambda m, s: fit_node(m, data, None, _cfg(seed=s, max_epochs=80)),
        num_members=5,
        seed=0,
    )
    u = ensemble_uncertainties(ensemble_probs(models, data))["knowledge"]
    id_nodes = data.in_test_mask
    ood_nodes = data.out_test_mask
    assert u[ood_nodes].mean() > 2 * u[id_nodes].mean()
    # members differ because their seeds differ
    assert not torch.equal(models[0].head.weight, models[1].head.weight)


@pytest.mark.parametrize("name", ["gpn", "natpn"])
def test_posterior_networks_give_less_evidence_to_far_ood_inputs(synthetic_graph, name):
    from gs_models import build_model

    overrides = (dict(hidden_channels=16, latent_dim=4, flow_layers=4) if name == "gpn"
                 else dict(latent_dim=4, flow_layers=4))
    if name == "natpn":
        from gs_models import NatPNConfig, NodeGNNConfig

        overrides = dict(config=NatPNConfig(
            encoder=NodeGNNConfig(model="gcn", hidden_channels=16, num_layers=2, dropout=0.0),
            latent_dim=4, flow_layers=4))
    model = seeded(lambda: build_model(name, 8, 3, **overrides), 0)
    res = fit_node(model, synthetic_graph, BayesianLoss(), _cfg(max_epochs=150))
    assert res.best.value > 0.8  # it classifies (accuracy from alpha / alpha_0)
    alpha_id = dirichlet_alpha(model, synthetic_graph)
    far = synthetic_graph.clone()
    far.x = synthetic_graph.x * 5 + 30  # far-OOD features on the same graph
    alpha_far = dirichlet_alpha(model, far)
    train = synthetic_graph.in_train_mask
    assert alpha_far.sum(-1).median() < 0.5 * alpha_id[train].sum(-1).median()
    # the OOD score (minus the evidence) ranks far inputs as more uncertain
    ev_id = dirichlet_uncertainties(alpha_id[train])["evidence"]
    ev_far = dirichlet_uncertainties(alpha_far)["evidence"]
    assert ev_far.mean() > ev_id.mean()


def test_bayesian_loss_is_uce_minus_weighted_entropy(synthetic_graph):
    from gs_algos.batch import Batch
    from gs_models import build_model

    model = seeded(lambda: build_model("gpn", 8, 3, hidden_channels=8, latent_dim=2,
                                       flow_layers=2), 0)
    idx = torch.nonzero(synthetic_graph.in_train_mask).flatten()
    batch = Batch("node", "multiclass", synthetic_graph, idx, synthetic_graph.y[idx])
    model.eval()
    loss, _ = BayesianLoss(entropy_weight=0.1).training_loss(model, batch, 0)
    alpha = model(synthetic_graph.x, synthetic_graph.edge_index)[1][idx]
    expected = uce_loss(alpha, batch.y).mean() - 0.1 * dirichlet_entropy(alpha).mean()
    assert loss.item() == pytest.approx(expected.item(), rel=1e-5)
    # GPN's class counts N_c were set from the training labels
    assert model.class_counts.tolist() == torch.bincount(batch.y, minlength=3).float().tolist()


def test_measures_are_computed_by_gs_metrics(monkeypatch):
    """One implementation of the uncertainty measures (issue 20): gs-algos' tensor functions
    call gs-metrics' and only convert; a second implementation here would fail this."""
    import gs_metrics

    calls = []

    def spy(name):
        real = getattr(gs_metrics, name)

        def wrapped(*args, **kwargs):
            calls.append(name)
            return real(*args, **kwargs)

        return wrapped

    for name in ("entropy", "ensemble_uncertainty", "dirichlet_uncertainty"):
        monkeypatch.setattr(gs_metrics, name, spy(name))
    p = torch.softmax(torch.randn(3, 4, 5, generator=torch.Generator().manual_seed(0)), -1)
    softmax_entropy(p[0])
    ensemble_uncertainties(p)
    dirichlet_uncertainties(p[0] * 10)
    assert calls == ["entropy", "ensemble_uncertainty", "dirichlet_uncertainty"]


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_entropy_of_half_precision_softmax_and_rejects_logits(dtype):
    """gs-metrics' entropy checks that rows are probabilities (since 2026-12-06); a half
    softmax's rows sum to 1 within its own rounding only, and must still be read."""
    logits = torch.randn(1000, 10, generator=torch.Generator().manual_seed(0))
    h = softmax_entropy(logits.to(dtype))
    ref = softmax_entropy(logits)
    assert h.dtype == dtype and torch.allclose(h.float(), ref, atol=5e-2)
    with pytest.raises(ValueError, match="probs must"):
        entropy(logits.to(dtype))
    with pytest.raises(ValueError, match="must sum to 1"):  # a 2 % error is not rounding
        entropy((torch.softmax(logits, -1) * 1.02).to(dtype))
