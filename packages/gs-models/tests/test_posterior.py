"""Dirichlet head, radial flows, GPN and NatPN."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch.autograd.functional import jacobian

from gs_models import build_model
from gs_models.posterior import BatchedRadialFlow, log_certainty_budget


def uce_loss(alpha: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Test-local Bayesian (UCE) loss: E_{p ~ Dir(alpha)}[-log p_y] = digamma(alpha_0) - digamma(alpha_y)."""
    return (
        torch.digamma(alpha.sum(-1)) - torch.digamma(alpha.gather(1, y.view(-1, 1)).squeeze(1))
    ).mean()


def test_radial_flow_logdet_matches_autograd_jacobian(float64):
    torch.manual_seed(0)
    flow = BatchedRadialFlow(dim=3, num_layers=4, num_flows=2)
    with torch.no_grad():  # make the transformation non-trivial
        flow.beta_raw.normal_(0, 2)
        flow.alpha_raw.normal_(0, 1)
    z = torch.randn(5, 3)
    out, logdet = flow.transform(z)
    for f in range(2):
        for i in range(5):
            jac = jacobian(lambda v, f=f: flow.transform(v.view(1, 3))[0][f, 0], z[i])
            torch.testing.assert_close(logdet[f, i], torch.linalg.slogdet(jac).logabsdet)


def test_radial_flow_density_integrates_to_one(float64):
    torch.manual_seed(1)
    flow = BatchedRadialFlow(dim=2, num_layers=3, num_flows=1)
    with torch.no_grad():
        flow.beta_raw.normal_(0, 1)
    grid = torch.linspace(-9, 9, 361)
    zz = torch.cartesian_prod(grid, grid)
    with torch.no_grad():
        dens = flow.log_prob(zz)[:, 0].exp()
    mass = float(dens.sum()) * float(grid[1] - grid[0]) ** 2
    assert abs(mass - 1.0) < 1e-2


def test_certainty_budgets():
    assert log_certainty_budget("normal", 16) == pytest.approx(0.5 * math.log(4 * math.pi) * 16)
    assert log_certainty_budget("constant", 16) == 0.0
    assert log_certainty_budget("exp-half", 16) == 8.0
    with pytest.raises(ValueError, match="choose one of"):
        log_certainty_budget("linear", 4)


def test_dirichlet_head_alpha(tiny_graph):
    x, ei, _, _ = tiny_graph
    model = build_model("dirichlet", x.size(1), 2, hidden_channels=16).eval()
    with torch.no_grad():
        emb, alpha = model(x, ei)
        _, logits = model.backbone(x, ei)
    torch.testing.assert_close(alpha, 1.0 + torch.nn.functional.softplus(logits))
    assert emb.shape == (x.size(0), 16) and bool((alpha > 1).all())


def _gcn_propagation_matrix(ei: torch.Tensor, n: int) -> np.ndarray:
    a = np.zeros((n, n))
    for s, t in ei.T.tolist():
        a[t, s] += 1.0
    a += np.eye(n)
    d = a.sum(1)
    return a / np.sqrt(d[:, None] * d[None, :])


def test_gpn_evidence_and_appnp_against_dense_reference(tiny_graph, float64):
    x, ei, y, mask = tiny_graph
    x = x.double()
    torch.manual_seed(0)
    model = build_model("gpn", x.size(1), 2, hidden_channels=16, appnp_K=5).double().eval()
    model.set_class_counts(y, mask)
    torch.testing.assert_close(model.class_counts, torch.bincount(y[mask]).double())
    with torch.no_grad():
        out = model.forward_details(x, ei)
        z = model.encoder(x)
        log_beta = (
            model.flow.log_prob(z)
            + torch.log(model.class_counts)
            + 0.5 * math.log(4 * math.pi) * 16
        )
    beta_ft = log_beta.clamp(-30, 30).exp().numpy()
    a_hat = _gcn_propagation_matrix(ei, x.size(0))
    h = beta_ft.copy()
    for _ in range(5):  # APPNP: h <- (1 - alpha) A_hat h + alpha beta_ft
        h = 0.9 * a_hat @ h + 0.1 * beta_ft
    np.testing.assert_allclose(out.alpha.numpy(), 1.0 + h, rtol=1e-8)
    np.testing.assert_allclose(out.feature_alpha.numpy(), 1.0 + beta_ft, rtol=1e-8)
    with torch.no_grad():
        emb, alpha = model(x, ei)
    torch.testing.assert_close(emb, z)


@pytest.mark.parametrize("predictor", ["representation", "latent"])
def test_natpn_posterior_update(tiny_graph, predictor):
    x, ei, _, _ = tiny_graph
    torch.manual_seed(0)
    model = build_model("natpn", x.size(1), 3, hidden_channels=16, predictor=predictor).eval()
    with torch.no_grad():
        out = model.forward_details(x, ei)
        if predictor == "latent":  # our earlier layout: the predictor reads BN(z)
            chi = torch.softmax(model.decoder(out.embeddings), -1)
        else:  # the authors': the predictor reads the encoder's representation
            h = model.encoder.embed(x, ei)
            chi = torch.softmax(model.decoder(h), -1)
            torch.testing.assert_close(out.embeddings, model.encoder.head(h))
    evidence = out.alpha - 1.0
    torch.testing.assert_close(evidence / evidence.sum(-1, keepdim=True), chi)
    torch.testing.assert_close(evidence.sum(-1), out.log_evidence.exp())
    torch.testing.assert_close(
        out.log_evidence, (out.log_density + 0.5 * math.log(4 * math.pi) * 16).clamp(-30, 30)
    )


def test_natpn_authors_predictor_reads_the_encoder_width_and_has_no_latent_norm():
    model = build_model("structural-shifts-natpn", 20, 4)
    assert model.decoder.in_features == 256 and model.encoder.head.out_features == 16
    assert not hasattr(model, "latent_norm")
    old = build_model("structural-shifts-natpn-latent-head", 20, 4)
    assert old.decoder.in_features == 16 and isinstance(old.latent_norm, torch.nn.BatchNorm1d)


def test_natpn_projector_and_predictor_share_one_dropout_mask():
    # train mode: one dropout draw of the representation feeds both the projector (z) and
    # the predictor (chi); recomputed by hand from the same random state
    torch.manual_seed(3)
    x, ei = torch.randn(30, 6), torch.randint(0, 30, (2, 60))
    model = build_model("natpn", 6, 3, hidden_channels=8, dropout=0.5).train()
    torch.manual_seed(5)
    out = model.forward_details(x, ei)
    torch.manual_seed(5)
    h = model.encoder.embed(x, ei)
    h = torch.nn.functional.dropout(h, 0.5, True)
    torch.testing.assert_close(out.embeddings, model.encoder.head(h))
    evidence = out.alpha - 1.0
    ok = evidence.sum(-1) > 1e-3  # rows whose evidence is not lost to float rounding
    assert bool(ok.any())
    torch.testing.assert_close(
        (evidence / evidence.sum(-1, keepdim=True))[ok], torch.softmax(model.decoder(h), -1)[ok]
    )


def test_gpn_authors_encoder_is_linear_gelu_batchnorm_dropout_then_a_projector(float64):
    # structural-shifts authors' FeedForwardLayer: dropout(norm(act(linear(h)))), 3 x 256,
    # then a linear projector to 16; checked in eval mode against a hand-written forward
    torch.manual_seed(0)
    x = torch.rand(40, 12, dtype=torch.float64)
    ei = torch.randint(0, 40, (2, 80))
    model = build_model("structural-shifts-gpn", 12, 3).double()
    model.train()
    with torch.no_grad():  # a few train-mode passes give the batch norms running statistics
        for _ in range(3):
            model(x, ei)
    model.eval()
    enc = model.encoder
    assert len(enc.layers) == 3 and enc.head.out_features == 16 and model.flow.num_layers == 8
    h = x
    with torch.no_grad():
        for lin, norm in zip(enc.layers, enc.norms, strict=True):
            assert lin.out_features == 256 and isinstance(norm, torch.nn.BatchNorm1d)
            h = norm(torch.nn.functional.gelu(lin(h)))
        z_ref = enc.head(h)
        z, _ = model(x, ei)
    torch.testing.assert_close(z, z_ref)
    assert model.propagation.K == 5 and model.propagation.alpha == pytest.approx(0.2)


def test_gpn_frequency_class_factor_lowers_log_evidence_by_log_n(tiny_graph, float64):
    x, ei, y, mask = tiny_graph
    x = x.double()
    torch.manual_seed(0)
    count = build_model("gpn", x.size(1), 2, hidden_channels=16).double().eval()
    freq = build_model("gpn", x.size(1), 2, hidden_channels=16, class_factor="frequency")
    freq = freq.double().eval()
    freq.load_state_dict(count.state_dict())
    for m in (count, freq):
        m.set_class_counts(y, mask)
    n = int(mask.sum())
    with torch.no_grad():
        a, b = count.forward_details(x, ei), freq.forward_details(x, ei)
    inside = (a.log_evidence.abs() < 29) & (b.log_evidence.abs() < 29)  # away from the clamp
    assert bool(inside.any())
    torch.testing.assert_close(
        (a.log_evidence - b.log_evidence)[inside],
        torch.full_like(a.log_evidence[inside], math.log(n)),
    )


def test_gpn_rejects_a_graph_encoder():
    from gs_models.configs import GPNConfig, NodeGNNConfig

    with pytest.raises(ValueError, match="model='mlp'"):
        GPNConfig(encoder=NodeGNNConfig(model="gcn"))
    with pytest.raises(ValueError, match="class_factor"):
        GPNConfig(class_factor="prior")


@pytest.mark.parametrize(
    "name",
    [
        "dirichlet",
        "gpn",
        "natpn",
        "structural-shifts-dirichlet",
        "structural-shifts-gpn",
        "structural-shifts-gpn-stadler2021",
        "structural-shifts-natpn",
        "structural-shifts-natpn-latent-head",
    ],
)
def test_posterior_modules_train(name, tiny_graph, train_steps):
    x, ei, y, mask = tiny_graph
    torch.manual_seed(0)
    model = build_model(name, x.size(1), 2)
    if hasattr(model, "set_class_counts"):
        model.set_class_counts(y, mask)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)

    def loss_fn():
        return uce_loss(model(x, ei)[1][mask], y[mask])

    before, after = train_steps(model, opt, loss_fn, 40)
    with torch.no_grad():
        alpha = model(x, ei)[1]
    assert after < 0.8 * before, (before, after)
    assert bool((alpha > 0).all()) and alpha.shape == (x.size(0), 2)
