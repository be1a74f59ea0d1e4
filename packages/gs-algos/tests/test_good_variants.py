"""The GOOD-benchmark variants of DANN, CORAL, Mixup and EERM (``variant="good"``), the
formulations the structural-shifts paper ran (section 4), against hand-computed values and
independent re-implementations of GOOD's formulas, on SYNTHETIC graphs."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from gs_algos.batch import Batch, TaskSpec
from gs_algos.config import TrainConfig
from gs_algos.engine import fit_node
from gs_algos.methods import (
    DANN,
    EERM,
    DeepCoral,
    GoodGraphEditor,
    Mixup,
    coral_distance,
    feature_covariance,
    good_eerm_beta,
    good_reversal_coefficient,
)
from gs_algos.node_methods import node_method


def _full_batch(data):
    idx = torch.nonzero(data.in_train_mask).flatten()
    return Batch("node", "multiclass", data, idx, data.y[idx], data.domain[idx])


# ------------------------------------------------------------------------------ CORAL
def test_good_covariance_differs_from_the_centred_one_when_only_the_means_differ():
    """1-d hand example: both domains have the centred variance 2, so the centred CORAL
    distance is 0; GOOD's ``(Z^T Z - m m^T) / (n - 1)`` gives 3 and 123, i.e.
    ``(123 - 3)^2 / (4 * 1^2) = 3600``."""
    a = torch.tensor([[0.0], [2.0]])
    b = torch.tensor([[10.0], [12.0]])
    assert float(feature_covariance(a)) == pytest.approx(2.0)
    assert float(feature_covariance(b)) == pytest.approx(2.0)
    assert float(feature_covariance(a, "good")) == pytest.approx(3.0)
    assert float(feature_covariance(b, "good")) == pytest.approx(123.0)
    assert float(coral_distance(a, b)) == pytest.approx(0.0)
    assert float(coral_distance(a, b, "good")) == pytest.approx(3600.0)
    # in general: GOOD's estimate = centred covariance + outer product of the means
    g = torch.Generator().manual_seed(0)
    z = torch.randn(7, 3, generator=g) + 2.0
    m = z.mean(0, keepdim=True)
    torch.testing.assert_close(feature_covariance(z, "good"), feature_covariance(z) + m.t() @ m)
    with pytest.raises(ValueError, match="covariance"):
        feature_covariance(z, "biased")


def _good_coral_reference(emb: np.ndarray, env: np.ndarray, num_envs: int) -> float:
    """GOOD's ``Coral.loss_postprocess`` loop (Coral.py lines 91-111) in numpy."""
    covs = []
    for i in range(num_envs):
        f = emb[env == i]
        if f.shape[0] > 1:
            n = f.shape[0]
            mean = f.sum(0, keepdims=True) / n
            covs.append((f.T @ f - mean.T @ mean) / (n - 1))
        else:
            covs.append(None)
    terms = [np.mean((covs[i] - covs[j]) ** 2) / 4 for i in range(num_envs) for j in range(num_envs)
             if i != j and covs[i] is not None and covs[j] is not None]
    return float(sum(terms) / len(terms))


def test_good_coral_penalty_equals_goods_loop_and_defaults():
    g = torch.Generator().manual_seed(1)
    emb = torch.randn(40, 5, generator=g)
    env = torch.randint(0, 4, (40,), generator=g)
    env[0] = 4  # a domain with one item: left out, as GOOD does
    good = DeepCoral(variant="good")
    assert good.penalty_weight == 1.0 and good.covariance == "good"
    ref = _good_coral_reference(emb.numpy().astype(np.float64), env.numpy(), 5)
    assert float(good.penalty(emb, env)) == pytest.approx(ref, rel=1e-5)
    ours = DeepCoral()
    assert ours.variant == "ours-v1" and ours.covariance == "centred"
    assert float(ours.penalty(emb, env)) != pytest.approx(ref, rel=1e-3)
    with pytest.raises(ValueError, match="variant"):
        DeepCoral(variant="GOOD")


# ------------------------------------------------------------------------------- DANN
@pytest.mark.parametrize("epoch", [0, 10, 50, 100, 199])
def test_good_dann_reversal_coefficient_follows_goods_schedule(epoch):
    expected = 2.0 / (1.0 + math.exp(-10.0 * epoch / 200)) - 1.0
    assert good_reversal_coefficient(epoch, 200) == pytest.approx(expected)
    dann = DANN(variant="good")
    dann.setup(TaskSpec("node", "multiclass", 3, 16, num_domains=10, max_epochs=200))
    assert dann.reversal_coefficient(epoch) == pytest.approx(expected)
    assert DANN().reversal_coefficient(epoch) == 1.0


def test_good_dann_head_is_linear_and_the_encoder_gets_the_reversed_scaled_gradient():
    dann = DANN(variant="good")
    spec = TaskSpec("node", "multiclass", 3, 4, num_domains=10, max_epochs=200)
    dann.setup(spec)
    assert isinstance(dann.domain_classifier, nn.Linear)
    assert (dann.domain_classifier.in_features, dann.domain_classifier.out_features) == (4, 10)
    assert dann.domain_weight == 0.01  # GOODCora degree covariate ood_param
    ours = DANN()
    ours.setup(spec)
    assert isinstance(ours.domain_classifier, nn.Sequential) and ours.domain_weight == 1.0
    with pytest.raises(ValueError, match="max_epochs"):
        DANN(variant="good").setup(TaskSpec("node", "multiclass", 3, 4, num_domains=10))

    class Enc(nn.Module):  # embeddings x W, logits emb H
        def __init__(self):
            super().__init__()
            g = torch.Generator().manual_seed(0)
            self.W = nn.Parameter(torch.randn(6, 4, generator=g))
            self.H = nn.Parameter(torch.randn(4, 3, generator=g))

        def forward(self, x, edge_index):
            emb = x @ self.W
            return emb, emb @ self.H

    from torch_geometric.data import Data

    g = torch.Generator().manual_seed(2)
    data = Data(x=torch.randn(30, 6, generator=g), edge_index=torch.zeros(2, 0, dtype=torch.long))
    idx = torch.arange(30)
    y, dom = torch.randint(0, 3, (30,), generator=g), torch.arange(30) % 10
    batch = Batch("node", "multiclass", data, idx, y, dom)
    model = Enc()
    epoch = 50
    loss, logs = dann.training_loss(model, batch, epoch)
    loss.backward()
    coeff = 2.0 / (1.0 + math.exp(-10.0 * epoch / 200)) - 1.0
    assert logs["reversal"] == pytest.approx(coeff)
    # reference: d task / dW - coeff * w * d domain_CE / dW
    emb = data.x @ model.W
    task = torch.nn.functional.cross_entropy(emb @ model.H, y)
    dce = torch.nn.functional.cross_entropy(dann.domain_classifier(emb), dom)
    g_task, = torch.autograd.grad(task, model.W, retain_graph=True)
    g_dom, = torch.autograd.grad(dce, model.W)
    torch.testing.assert_close(model.W.grad, g_task - coeff * 0.01 * g_dom, rtol=1e-5, atol=1e-7)
    # the domain classifier itself descends its cross-entropy (no reversal there)
    g_dc, = torch.autograd.grad(
        torch.nn.functional.cross_entropy(dann.domain_classifier(emb.detach()), dom),
        dann.domain_classifier.weight)
    torch.testing.assert_close(dann.domain_classifier.weight.grad, 0.01 * g_dc, rtol=1e-5, atol=1e-8)


# ------------------------------------------------------------------------------ Mixup
def _gcn(in_ch=8, out_ch=3, **kw):
    from gs_models import build_model

    cfg = dict(hidden_channels=16, num_layers=2, dropout=0.0, norm=None, activation="relu")
    cfg.update(kw)
    torch.manual_seed(0)
    return build_model("gcn", in_ch, out_ch, **cfg)


def _attached(model, level="node"):
    meth = Mixup(variant="good")
    meth.setup(TaskSpec(level, "multiclass", 3, 16, feature_dim=8, max_epochs=10))
    meth.attach(model)
    return meth


def test_good_mixup_model_keeps_its_centre_term_at_evaluation(synthetic_graph):
    data = synthetic_graph
    model = _gcn().eval()
    meth = _attached(model)
    assert meth.alpha == 0.4 and Mixup().alpha == 1.0
    assert [(c.in_features, c.out_features) for c in meth.centre] == [(8, 16), (16, 16)]
    assert all(c.bias is None for c in meth.centre)
    with torch.no_grad():
        emb, logits = meth.predict(model, "node", data)
        # by hand: h_{l+1} = relu(GCNConv_l(h_l) + h_l W^c_l), logits = head(h_2)
        h = data.x
        for conv, cen in zip(model.layers, meth.centre, strict=True):
            h = torch.relu(conv(h, data.edge_index) + cen(h))
        torch.testing.assert_close(logits, model.head(h), rtol=1e-5, atol=1e-5)
        _, plain = model(data.x, data.edge_index)
        assert not torch.allclose(logits, plain, atol=1e-3)  # the centre term is used
        for cen in meth.centre:
            cen.weight.zero_()
        torch.testing.assert_close(meth.predict(model, "node", data)[1], plain, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="node"):
        _attached(_gcn(), level="graph")


def _reference_two_branch(model, meth, x, ei, lam, partner):
    """GOOD's Mixup_GCN forward written as there: branch b on the relabelled graph
    ``id_b2a[edge_index]`` with ``h_b = h_a[id_a2b]`` (MixupGCNs.py lines 93-136)."""
    n = x.size(0)
    inv = torch.empty_like(partner)
    inv[partner] = torch.arange(n)
    ei_b = inv[ei]
    h_a = [x]
    for conv, cen in zip(model.layers, meth.centre, strict=True):
        h_a.append(torch.relu(conv(h_a[-1], ei) + cen(h_a[-1])))
    h_b = [h[partner] for h in h_a]
    h_m = lam * x + (1 - lam) * x[partner]
    for i, (conv, cen) in enumerate(zip(model.layers, meth.centre, strict=True)):
        a = torch.relu(conv(h_a[i], ei) + cen(h_m))
        b = torch.relu(conv(h_b[i], ei_b) + cen(h_m))
        h_m = lam * a + (1 - lam) * b
    return model.head(h_m)


def test_good_mixup_two_branch_pass_and_loss_match_goods_formulation(synthetic_graph):
    data = synthetic_graph
    model = _gcn().train()  # dropout 0: deterministic
    meth = _attached(model)
    train = torch.nonzero(data.in_train_mask).flatten()
    g = torch.Generator().manual_seed(3)
    partner = torch.arange(data.num_nodes)
    partner[train] = train[torch.randperm(train.numel(), generator=g)]
    lam = 0.3
    _, logits = meth.mixup_forward(model, data.x, data.edge_index, lam, partner)
    ref = _reference_two_branch(model, meth, data.x, data.edge_index, lam, partner)
    torch.testing.assert_close(logits, ref, rtol=1e-4, atol=1e-5)
    # the training loss: lam CE(y_i) + (1 - lam) CE(y_partner(i)) over the training nodes,
    # with lam ~ Beta(0.4, 0.4) and the partner a permutation of the training nodes
    batch = _full_batch(data)
    torch.manual_seed(11)
    loss, logs = meth.training_loss(model, batch, 0)
    torch.manual_seed(11)
    torch.rand(())
    lam = float(torch.distributions.Beta(torch.tensor(0.4), torch.tensor(0.4)).sample())
    partner = torch.arange(data.num_nodes)
    partner[train] = train[torch.randperm(train.numel())]
    ref = _reference_two_branch(model, meth, data.x, data.edge_index, lam, partner)[train]
    ce = torch.nn.functional.cross_entropy
    expected = lam * ce(ref, data.y[train]) + (1 - lam) * ce(ref, data.y[partner[train]])
    assert logs["lam"] == pytest.approx(lam) and logs["mixed"] == 1.0
    assert float(loss.detach()) == pytest.approx(float(expected.detach()), rel=1e-4)


def test_good_mixup_runs_every_norm_three_times_per_step_and_trains_its_centre_terms(
    synthetic_graph
):
    data = synthetic_graph
    model = _gcn(norm="batch", dropout=0.2, activation="gelu")
    meth = _attached(model)
    model.train()
    before = [int(n.num_batches_tracked) for n in model.norms]
    meth.training_loss(model, _full_batch(data), 0)
    assert [int(n.num_batches_tracked) - b for n, b in zip(model.norms, before, strict=True)] == [3, 3]
    # in fit_node the centre terms are optimised with the model and restored with the best epoch
    w0 = [c.weight.detach().clone() for c in meth.centre]
    res = fit_node(model, data, meth, TrainConfig.structural_shifts(max_epochs=6, lr=0.01))
    assert res.epochs_run == 6
    assert all(not torch.equal(w, c.weight) for w, c in zip(w0, meth.centre, strict=True))
    with pytest.raises(TypeError, match="NodeGNN"):
        Mixup(variant="good").attach(nn.Linear(3, 3))


# ------------------------------------------------------------------------------- EERM
def test_good_eerm_beta_ramps_from_b_to_ten_b():
    assert good_eerm_beta(3.0, 0, 200) == pytest.approx(3.0)
    assert good_eerm_beta(3.0, 100, 200) == pytest.approx(16.5)
    assert good_eerm_beta(3.0, 200, 200) == pytest.approx(30.0)
    meth = EERM(variant="good")
    meth.setup(TaskSpec("node", "multiclass", 3, 16, max_epochs=50))
    assert meth.beta_at(25) == pytest.approx(10 * 3 * 0.5 + 3 * 0.5)
    assert EERM().beta_at(25) == 1.0


def test_good_eerm_editor_flips_exactly_n_times_s_directed_entries():
    n, s = 30, 2
    ed = GoodGraphEditor(10, n, s)
    assert tuple(ed.B.shape) == (10, n, n)
    assert float(ed.B.min()) >= 0.0 and float(ed.B.max()) <= 1.0  # U(0, 1) as GOOD
    g = torch.Generator().manual_seed(0)
    ei = torch.randint(0, n, (2, 80), generator=g)
    ei = torch.unique(torch.cat([ei, ei.flip(0)], 1), dim=1)
    torch.manual_seed(0)
    for k in (0, 7):
        picks = ed.sample(k)
        assert picks.shape == (n, s) and all(len(set(r.tolist())) == s for r in picks)
        new = ed.edit(ei, picks)
        before = {(int(a), int(b)) for a, b in ei.t()}
        after = {(int(a), int(b)) for a, b in new.t()}
        flipped = before ^ after
        assert len(flipped) == n * s  # each node i: s entries (picks[i, j] -> i) flipped
        assert flipped == {(int(picks[i, j]), i) for i in range(n) for j in range(s)}
        # GOOD's log-probability: sum_i (sum_j B[S_ij, i] - logsumexp_r B[r, i]), the
        # log-sum-exp once per node whatever s (EERM.py lines 99-101)
        bk = ed.B[k].detach()
        ref = sum(float(sum(bk[picks[i, j], i] for j in range(s)) - torch.logsumexp(bk[:, i], 0))
                  for i in range(n))
        assert float(ed.log_prob(k, picks)) == pytest.approx(ref, rel=1e-5)


def test_good_eerm_trains_on_the_training_subgraph_with_a_frozen_head(synthetic_graph, tiny_gcn):
    data = synthetic_graph
    meth = EERM(variant="good")
    assert (meth.num_envs, meth.num_edits, meth.beta, meth.explorer_lr, meth.explorer_steps,
            meth.freeze_head) == (10, 2, 3.0, 5e-3, 1, True)
    model = tiny_gcn(8, 3)
    head0 = model.head.weight.detach().clone()
    conv0 = model.layers[0].lin.weight.detach().clone()
    seen: list[int] = []
    hook = model.register_forward_hook(lambda m, i, o: seen.append(o[0].size(0)))
    cfg = TrainConfig.structural_shifts(max_epochs=3, lr=0.01)
    res = fit_node(model, data, meth, cfg)
    hook.remove()
    n_train = int(data.in_train_mask.sum())
    assert res.epochs_run == 3
    assert tuple(meth.editor.B.shape) == (10, n_train, n_train)
    # per epoch: 10 training passes on the n_train-node subgraph, then evaluation passes
    # on the whole graph
    train_passes = [k for k in seen if k != data.num_nodes]
    assert train_passes == [n_train] * 30
    assert torch.equal(model.head.weight, head0)  # GOOD optimises model.gnn only
    assert not torch.equal(model.layers[0].lin.weight, conv0)
    assert [h["beta"] for h in res.history] == pytest.approx([3.0, 12.0, 21.0])
    # the model's loss is the unbiased variance of the K risks + beta * their mean
    model.train()
    batch = _full_batch(data)
    torch.manual_seed(0)
    loss, logs = meth.training_loss(model, batch, 1)
    assert float(loss.detach()) == pytest.approx(logs["variance"] + 12.0 * logs["loss"], rel=1e-5)
    torch.manual_seed(0)
    risks, _ = meth.env_risks(model, batch, grad_model=False)
    assert risks.numel() == 10


# ------------------------------------------------------------------- structural route
def test_structural_route_uses_goods_variants_unless_told_otherwise():
    for name in ("dann", "coral", "mixup", "eerm"):
        assert node_method(name).method_factory().variant == "good"
        assert node_method(name, robustness_variant="ours-v1").method_factory().variant == "ours-v1"
        assert node_method(name).norm_updates == 1
    with pytest.raises(ValueError, match="variant"):
        node_method("dann", robustness_variant="theirs")


@pytest.mark.parametrize("name", ["dann", "erm", "gpn"])
def test_node_method_rejects_an_unknown_robustness_variant_for_every_method(name):
    from gs_algos.node_methods import ROBUSTNESS_VARIANTS, node_method

    assert set(ROBUSTNESS_VARIANTS) == {"good", "ours-v1"}
    with pytest.raises(ValueError, match="variant must be one of"):
        node_method(name, robustness_variant="GOOD")
