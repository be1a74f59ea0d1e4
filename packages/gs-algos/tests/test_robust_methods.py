"""Each OOD-robustness method's defining mechanism, on SYNTHETIC node graphs."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression

from gs_algos.batch import Batch, TaskSpec
from gs_algos.config import TrainConfig
from gs_algos.engine import fit_node, predict_node
from gs_algos.methods import (
    DANN,
    EERM,
    ERM,
    IRM,
    METHODS,
    DeepCoral,
    GroupDRO,
    Method,
    Mixup,
    VREx,
    coral_distance,
    group_risks,
)


def _cfg(**kw):
    base = dict(lr=0.01, weight_decay=0.0, max_epochs=150, patience=None, seed=0,
                select_on=("in_valid",))
    base.update(kw)
    return TrainConfig(**base)


def _all_train(data):
    d = data.clone()
    d.in_train_mask = torch.ones(d.num_nodes, dtype=torch.bool)
    return d


def _full_batch(data, mask_name="in_train_mask"):
    idx = torch.nonzero(getattr(data, mask_name)).flatten()
    return Batch("node", "multiclass", data, idx, data.y[idx], data.domain[idx])


def test_methods_table_is_explicit():
    assert set(METHODS) == {"erm", "irm", "vrex", "groupdro", "coral", "dann", "mixup",
                            "eerm", "dir", "lri"}
    assert all(issubclass(c, Method) for c in METHODS.values())


def test_group_risks_keep_the_gradient():
    losses = torch.tensor([1.0, 2.0, 3.0, 5.0], requires_grad=True)
    risks, ids = group_risks(losses, torch.tensor([0, 0, 2, 2]))
    assert ids.tolist() == [0, 2] and risks.tolist() == [1.5, 4.0]
    risks.sum().backward()
    assert losses.grad.tolist() == [0.5, 0.5, 0.5, 0.5]


def test_coral_distance_matches_numpy_and_its_penalty_gradient_flows():
    g = torch.Generator().manual_seed(0)
    a = torch.randn(30, 4, generator=g, requires_grad=True)
    b = (torch.randn(40, 4, generator=g) * 2).requires_grad_(True)
    d = coral_distance(a, b)
    assert d.requires_grad
    ca = np.cov(a.detach().numpy(), rowvar=False)
    cb = np.cov(b.detach().numpy(), rowvar=False)
    assert float(d.detach()) == pytest.approx(((ca - cb) ** 2).sum() / (4 * 16), rel=1e-5)
    d.backward()
    assert a.grad.abs().sum() > 0 and b.grad.abs().sum() > 0


def test_coral_penalty_reaches_the_model_parameters(synthetic_graph, tiny_mlp):
    model = tiny_mlp(8, 3)
    meth = DeepCoral(penalty_weight=1.0)
    meth.setup(TaskSpec("node", "multiclass", 3, 16, num_domains=2))
    batch = _full_batch(synthetic_graph)
    emb, _ = batch.forward(model)
    pen = meth.penalty(emb[batch.labeled], batch.domain)
    assert pen.requires_grad and float(pen.detach()) > 0
    pen.backward()
    grads = [p.grad for p in model.layers.parameters()]
    assert all(g is not None and g.abs().sum() > 0 for g in grads)


def _domain_probe_accuracy(emb: torch.Tensor, dom: torch.Tensor) -> float:
    x, y = emb.numpy(), dom.numpy()
    half = len(y) // 2
    clf = LogisticRegression(max_iter=2000).fit(x[:half], y[:half])
    return float(clf.score(x[half:], y[half:]))


def test_dann_hides_the_domains_that_erm_features_reveal(synthetic_graph_factory, tiny_mlp):
    data = _all_train(synthetic_graph_factory(num_domains=2, domain_shift=1.5, seed=0))
    # evaluate only at the last epoch, so that the final weights are kept
    cfg = _cfg(lr=0.003, max_epochs=400, eval_every=400)
    erm_model, dann_model = tiny_mlp(8, 3, seed=0), tiny_mlp(8, 3, seed=0)
    fit_node(erm_model, data, ERM(), cfg)
    dann = DANN(domain_weight=2.0, hidden=32)
    fit_node(dann_model, data, dann, cfg)
    erm_emb, _ = predict_node(erm_model, data)
    dann_emb, dann_out = predict_node(dann_model, data)
    with torch.no_grad():
        own = float((dann.domain_classifier(dann_emb).argmax(-1) == data.domain).float().mean())
    erm_probe = _domain_probe_accuracy(erm_emb, data.domain)
    dann_probe = _domain_probe_accuracy(dann_emb, data.domain)
    assert erm_probe > 0.85  # a linear probe separates the domains on ERM features
    assert own < 0.7  # DANN's own domain classifier ends near chance (0.5)
    assert dann_probe < erm_probe - 0.05  # and a fresh probe finds less domain signal
    assert float((dann_out.argmax(-1) == data.y).float().mean()) > 0.9  # task still solved


def test_coral_lowers_the_covariance_distance_between_domains(synthetic_graph_factory, tiny_mlp):
    data = _all_train(synthetic_graph_factory(num_domains=2, domain_shift=2.0, seed=1))
    dists = {}
    for name, meth in [("erm", ERM()), ("coral", DeepCoral(penalty_weight=10.0))]:
        model = tiny_mlp(8, 3, seed=0)
        fit_node(model, data, meth, _cfg())
        emb, _ = predict_node(model, data)
        dists[name] = float(coral_distance(emb[data.domain == 0], emb[data.domain == 1]))
    assert dists["coral"] < 0.5 * dists["erm"]


def _noisy_group_graph(factory):
    data = _all_train(factory(num_domains=2, domain_shift=0.0, seed=2))
    g = torch.Generator().manual_seed(0)
    hard = (data.domain == 1) & (torch.rand(data.num_nodes, generator=g) < 0.4)
    data.y = torch.where(hard, (data.y + 1) % 3, data.y)  # domain 1: 40 % label noise
    return data


def test_groupdro_moves_weight_to_the_worst_group(synthetic_graph_factory, tiny_mlp):
    data = _noisy_group_graph(synthetic_graph_factory)
    meth = GroupDRO(step_size=0.2)
    model = tiny_mlp(8, 3, hidden=8)
    fit_node(model, data, meth, _cfg(max_epochs=60))
    assert meth.q[1] > 0.7 and meth.q.sum() == pytest.approx(1.0)  # worst group: domain 1
    # the optimised loss is the q-weighted sum of the group risks (after the q update)
    batch = _full_batch(data)
    q_before = meth.q.clone()
    meth.train()
    model.train()
    loss, _ = meth.training_loss(model, batch, 0)
    _, out = batch.forward(model)
    risks, _ = group_risks(batch.losses(out), batch.domain)
    q = q_before * torch.exp(0.2 * risks.detach())
    q = q / q.sum()
    expected = float((q * risks).sum().detach())
    assert torch.allclose(meth.q, q) and float(loss.detach()) == pytest.approx(expected)


def test_vrex_lowers_the_variance_of_group_risks(synthetic_graph_factory, tiny_mlp):
    data = _noisy_group_graph(synthetic_graph_factory)
    batch = _full_batch(data)
    var = {}
    for name, meth in [("erm", ERM()), ("vrex", VREx(penalty_weight=100.0))]:
        model = tiny_mlp(8, 3, hidden=8, seed=0)
        fit_node(model, data, meth, _cfg(max_epochs=100))
        model.eval()
        with torch.no_grad():
            _, out = batch.forward(model)
            risks, _ = group_risks(batch.losses(out), batch.domain)
        var[name] = float(risks.var(unbiased=False))
    assert var["vrex"] < 0.5 * var["erm"]


def test_irm_penalty_is_the_squared_scale_gradient_and_training_lowers_it(
    synthetic_graph_factory, tiny_mlp
):
    data = _noisy_group_graph(synthetic_graph_factory)
    batch = _full_batch(data)
    meth = IRM(penalty_weight=1.0)
    model = tiny_mlp(8, 3, hidden=8)
    _, logs = meth.training_loss(model, batch, 0)
    # finite-difference check of d risk_e / d w at w = 1
    with torch.no_grad():
        _, out = batch.forward(model)
        pen, eps = 0.0, 1e-5
        for e in (0, 1):
            m = batch.domain == e
            o, y = out[batch.labeled][m].double(), batch.y[m]
            ce = torch.nn.functional.cross_entropy
            up, down = float(ce(o * (1 + eps), y)), float(ce(o * (1 - eps), y))
            pen += ((up - down) / (2 * eps)) ** 2
    assert logs["penalty"] == pytest.approx(pen / 2, rel=1e-3)  # mean over the 2 domains
    pens = {}
    for name, m in [("erm", ERM()), ("irm", IRM(penalty_weight=100.0))]:
        model = tiny_mlp(8, 3, hidden=8, seed=0)
        fit_node(model, data, m, _cfg(max_epochs=100))
        model.eval()
        pens[name] = IRM().training_loss(model, batch, 0)[1]["penalty"]
    assert pens["irm"] < pens["erm"]


def test_mixup_mixes_representations_and_labels(synthetic_graph, tiny_mlp):
    model = tiny_mlp(8, 3)
    batch = _full_batch(synthetic_graph)
    meth = Mixup(alpha=0.4, prob=1.0)
    torch.manual_seed(5)
    loss, logs = meth.training_loss(model, batch, 0)
    # replay the same draws by hand
    torch.manual_seed(5)
    torch.rand(())
    lam = float(torch.distributions.Beta(torch.tensor(0.4), torch.tensor(0.4)).sample())
    perm = torch.randperm(batch.num_labeled)
    emb, _ = batch.forward(model)
    h = emb[batch.labeled]
    logits = model.head(lam * h + (1 - lam) * h[perm])
    ce = torch.nn.functional.cross_entropy
    expected = lam * ce(logits, batch.y) + (1 - lam) * ce(logits, batch.y[perm])
    assert logs["mixed"] == 1.0 and logs["lam"] == pytest.approx(lam)
    assert loss.item() == pytest.approx(expected.item(), rel=1e-5)
    # prob = 0: never mixed, plain ERM loss
    loss0, logs0 = Mixup(prob=0.0).training_loss(model, batch, 0)
    assert logs0["mixed"] == 0.0
    assert loss0.item() == pytest.approx(ERM().training_loss(model, batch, 0)[0].item())
    # prob = 0.5: about half of the batches are mixed
    torch.manual_seed(0)
    mixed = [Mixup(prob=0.5).training_loss(model, batch, 0)[1]["mixed"] for _ in range(200)]
    assert 0.35 < np.mean(mixed) < 0.65


def test_mixup_refuses_a_message_passing_head(synthetic_graph, tiny_gcn):
    model = tiny_gcn(8, 3, head="conv")
    with pytest.raises(TypeError, match="head"):
        Mixup().training_loss(model, _full_batch(synthetic_graph), 0)


def test_eerm_explorers_raise_the_risk_variance(synthetic_graph_factory, tiny_gcn):
    data = synthetic_graph_factory(n=90, seed=3)
    model = tiny_gcn(8, 3, hidden=16, dropout=0.0, norm=None)
    fit_node(model, data, ERM(), _cfg(max_epochs=60))
    model.eval()
    torch.manual_seed(0)
    meth = EERM(num_envs=3, num_edits=3, explorer_lr=0.2)
    meth.setup(TaskSpec("node", "multiclass", 3, 16))
    batch = _full_batch(data)
    meth.setup_graph(data.num_nodes)

    def mean_var(n=30):
        with torch.no_grad():
            return float(np.mean([
                float(meth.env_risks(model, batch, grad_model=False)[0].var(unbiased=False))
                for _ in range(n)
            ]))

    before = mean_var()
    for _ in range(150):
        meth.explore(model, batch)
    after = mean_var()
    assert after > 2 * before
    # the model step minimises Var + beta * Mean over the environments
    model.train()
    loss, logs = meth.training_loss(model, batch, 0)
    assert loss.item() == pytest.approx(logs["variance"] + meth.beta * logs["loss"], rel=1e-5)


def test_eerm_explorer_samples_without_replacement_from_the_softmax():
    """Gumbel-top-k must give the law of ``torch.multinomial(softmax, k, replacement=False)``:
    exact pair-inclusion probabilities (sum over both orders of p_a * p_b / (1 - p_a))
    against the frequencies of 20000 draws; plus the REINFORCE log-probability against
    ``log_softmax`` gathered by hand.

    The 20000 draws of the 4 rows are taken in one call, on the rows' cumulative weights
    stacked 20000 times (every row draws independently, so this is the law of 20000 calls,
    without 20000 Python-level calls); ``sample()`` without ``cdf`` is the same draw."""
    from itertools import combinations

    from gs_algos.methods.eerm import StructureExplorer

    ex = StructureExplorer(4, 2)
    with torch.no_grad():
        ex.logits.copy_(torch.tensor([[0.0, 2.0, -1.0, 1.0]]).repeat(4, 1))
    ex.logits.data[:, 0] += torch.arange(4.0)  # rows differ
    cdf = ex.weights()[1]
    torch.manual_seed(5)
    own = ex.sample()
    torch.manual_seed(5)
    assert torch.equal(own, ex.sample(cdf))  # sample() draws on weights()'s cdf
    torch.manual_seed(0)
    draws = 20000
    picks = ex.sample(cdf.repeat(draws, 1)).view(draws, 4, 2)
    assert picks.shape == (draws, 4, 2)
    assert bool((picks[..., 0] != picks[..., 1]).all())  # without replacement
    for row in range(4):
        p = torch.softmax(ex.logits[row].detach().double(), 0)
        got = {frozenset(pr) for pr in picks[:, row].tolist()}
        for a, b in combinations(range(4), 2):
            exact = float(p[a] * p[b] / (1 - p[a]) + p[b] * p[a] / (1 - p[b]))
            freq = float(((picks[:, row] == a).any(1) & (picks[:, row] == b).any(1)).double().mean())
            assert freq == pytest.approx(exact, abs=4 * (exact * (1 - exact) / draws) ** 0.5 + 1e-3)
        assert got <= {frozenset(c) for c in combinations(range(4), 2)}
    one = ex.sample()
    expected = torch.log_softmax(ex.logits, 1).gather(1, one).sum()
    assert float(ex.log_prob(one).detach()) == pytest.approx(float(expected.detach()), rel=1e-6)
    ei = torch.tensor([[0, 1], [1, 0]])
    new_ei, logp = ex(ei, with_log_prob=False)
    assert logp is None and new_ei.shape[0] == 2


def test_eerm_sampler_handles_concentrated_rows_and_the_closed_form_gradient_is_autograds():
    from gs_algos.methods.eerm import StructureExplorer

    # a row whose weight sits on one column: the later picks come from the rest, exactly
    ex = StructureExplorer(6, 3)
    with torch.no_grad():
        ex.logits.normal_()
        ex.logits[0, 2] = 60.0
    torch.manual_seed(1)
    for _ in range(20):
        picks = ex.sample()
        assert all(len(set(r.tolist())) == 3 for r in picks)
        assert 2 in picks[0].tolist()
    # REINFORCE gradient: closed form against autograd of -reward * log_prob(picks)
    ex = StructureExplorer(50, 4)
    with torch.no_grad():
        ex.logits.normal_(0, 2)
    e, cdf, norm = ex.weights()
    picks = ex.sample(cdf)
    reward = 0.37
    ex.logits.grad = None
    (-(reward * ex.log_prob(picks))).backward()
    torch.testing.assert_close(ex.reinforce_grad(picks, reward, e, norm), ex.logits.grad,
                               rtol=1e-5, atol=1e-6)


def test_eerm_trains_end_to_end(synthetic_graph, tiny_gcn):
    res = fit_node(tiny_gcn(8, 3), synthetic_graph, EERM(num_envs=2, num_edits=2),
                   _cfg(max_epochs=5))
    assert res.epochs_run == 5 and np.isfinite(res.history[-1]["train_loss"])


def test_source_vs_target_domains(synthetic_graph, tiny_mlp):
    from gs_algos.methods import domain_embeddings

    spec = TaskSpec("node", "multiclass", 3, 16, num_domains=2, has_target=True)
    dann = DANN(source_domains=False)
    dann.setup(spec)
    assert dann.domain_classifier[-1].out_features == 2  # source vs target only
    full = DANN()
    full.setup(spec)
    assert full.domain_classifier[-1].out_features == 3  # 2 source domains + target
    batch = _full_batch(synthetic_graph)
    batch.target = torch.nonzero(synthetic_graph.out_test_mask).flatten()
    emb, _ = batch.forward(tiny_mlp(8, 3))
    _, d = domain_embeddings(batch, None, emb, 2, source_domains=False)
    assert set(d.tolist()) == {0, 1} and int((d == 1).sum()) == batch.target.numel()
    _, d = domain_embeddings(batch, None, emb, 2)
    assert set(d.tolist()) == {0, 1, 2}
    with pytest.raises(ValueError, match="target"):
        DANN(source_domains=False).setup(TaskSpec("node", "multiclass", 3, 16, num_domains=2))
