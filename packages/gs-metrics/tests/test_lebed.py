"""LeBed (lebed-online-gnn-evaluation, eq. 4-8, algorithm 1) on real Cora with feature-noise
test graphs, plus unit tests of the stopping rule, the non-edge sample and the model contract."""

from __future__ import annotations

import copy
import logging

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the lebed extra (torch) is not installed")

import gs_metrics as gm  # noqa: E402
from gs_metrics.lebed import LeBedConfig, lebed_score, sample_non_edges, structure_score  # noqa: E402

log = logging.getLogger(__name__)


def _sparse(rows, cols, shape):
    idx = torch.from_numpy(np.stack([rows, cols]).astype(np.int64))
    return torch.sparse_coo_tensor(
        idx, torch.ones(idx.shape[1]), shape, check_invariants=False
    ).coalesce()


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    """Tiny models: intra-op threads only add synchronisation cost (badly so on a busy machine)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def trained_cora(cora, tiny_gcn_cls):
    """A 2-layer GCN (hidden 16) trained on Cora's 140 training nodes; its initial state saved."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = tiny_gcn_cls(cora.x.shape[1], 16, int(cora.y.max()) + 1)
        init = copy.deepcopy(model.state_dict())
        nz = np.nonzero(cora.x)
        x = _sparse(nz[0], nz[1], cora.x.shape)
        ei = torch.from_numpy(cora.edge_index)
        y = torch.from_numpy(cora.y)
        train = torch.from_numpy(cora.train_idx)
        opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
        for _ in range(60):
            model.train()
            opt.zero_grad()
            _, logits = model(x, ei)
            torch.nn.functional.cross_entropy(logits[train], y[train]).backward()
            opt.step()
    model.eval()
    return model, init, nz, ei, y


def test_lebed_tracks_test_error_on_noisy_cora(cora, trained_cora):
    """Test graphs: Cora with a growing share of each node's words replaced by random words
    (synthetic feature noise on the real graph). LeBed must rank them by true test error."""
    model, init, (rows, cols), ei, y = trained_cora
    rng = np.random.default_rng(0)
    u = rng.random(rows.size)
    random_words = rng.integers(0, cora.x.shape[1], rows.size)
    test = torch.from_numpy(cora.test_idx)
    cfg = LeBedConfig(max_steps=60)  # defaults: min_steps 5, epsilon 0.01 (absolute)
    assert (cfg.min_steps, cfg.epsilon) == (5, 0.01)
    errors, scores, confs, steps = [], [], [], []
    for level in np.linspace(0.0, 1.0, 10):
        x = _sparse(rows, np.where(u < level, random_words, cols), cora.x.shape)
        with torch.no_grad():
            _, logits = model(x, ei)
        errors.append(float((logits.argmax(1)[test] != y[test]).float().mean()))
        res = lebed_score(model, init, x, ei, config=cfg, seed=0)
        scores.append(res.score)
        steps.append(res.stop_step)
        assert res.stopped_early and res.stop_step < cfg.max_steps, (level, res.stop_step)
        confs.append(gm.conf_score(torch.softmax(logits, 1).numpy()[cora.test_idx]))
    ev = gm.evaluate_estimator(scores, errors, orientation=gm.ORIENTATION["lebed"])
    log.info(
        "errors %s scores %s steps %s -> %s", np.round(errors, 3), np.round(scores, 3), steps, ev
    )
    assert errors[-1] > errors[0] + 0.3  # the noise really hurts the model
    assert ev.spearman > 0.8
    assert ev.r2 > 0.5
    base = gm.evaluate_estimator(confs, errors, orientation=gm.ORIENTATION["conf_score"])
    assert base.spearman > 0  # the ConfScore baseline's documented orientation is right


def _toy(tiny_gcn_cls, seed=0):
    rng = np.random.default_rng(seed)
    n = 60
    x = torch.from_numpy(rng.normal(size=(n, 8)).astype(np.float32))
    src = rng.integers(0, n, 150)
    dst = rng.integers(0, n, 150)
    keep = src != dst
    ei = torch.from_numpy(np.stack([np.r_[src[keep], dst[keep]], np.r_[dst[keep], src[keep]]]))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = tiny_gcn_cls(8, 8, 3, dropout=0.0)
    init = copy.deepcopy(model.state_dict())
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.3)
    return model, init, x, ei


def test_stopping_rule_and_score(tiny_gcn_cls):
    model, init, x, ei = _toy(tiny_gcn_cls)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    rng_state = torch.get_rng_state()
    # huge tolerance: stops at min_steps exactly
    r = lebed_score(model, init, x, ei, config=LeBedConfig(max_steps=20, min_steps=4, epsilon=10.0))
    assert (r.stop_step, r.stopped_early) == (4, True)
    assert len(r.structure_scores) == 4
    # zero tolerance: never within, runs to the step limit
    r0 = lebed_score(model, init, x, ei, config=LeBedConfig(max_steps=7, min_steps=1, epsilon=0.0))
    assert (r0.stop_step, r0.stopped_early) == (7, False)
    # relative tolerance is a fraction of the reference
    rr = lebed_score(
        model,
        init,
        x,
        ei,
        config=LeBedConfig(max_steps=3, min_steps=1, epsilon=0.5, epsilon_mode="relative"),
    )
    assert rr.tolerance == pytest.approx(0.5 * abs(rr.reference))
    # lr = 0: the re-trained parameters stay at theta_0, so the score is ||theta* - theta_0||
    rz = lebed_score(
        model,
        init,
        x,
        ei,
        config=LeBedConfig(max_steps=2, min_steps=1, epsilon=0.0, lr=0.0, weight_decay=0.0),
    )
    ref = torch.sqrt(sum(((p.detach() - init[k]) ** 2).sum() for k, p in model.named_parameters()))
    assert rz.score == pytest.approx(float(ref), rel=1e-6)
    # the trained model and the global RNG are untouched; results are reproducible
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert torch.equal(rng_state, torch.get_rng_state())
    again = lebed_score(
        model, init, x, ei, config=LeBedConfig(max_steps=7, min_steps=1, epsilon=0.0)
    )
    assert again.score == r0.score
    steps = []
    lebed_score(
        model,
        init,
        x,
        ei,
        config=LeBedConfig(max_steps=3, min_steps=1, epsilon=0.0),
        callback=lambda s, g, d: steps.append(s),
    )
    assert steps == [1, 2, 3]


def test_model_contract_and_config_errors(tiny_gcn_cls):
    model, init, x, ei = _toy(tiny_gcn_cls)

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
        LeBedConfig(max_steps=5, min_steps=6)
    with pytest.raises(ValueError, match="epsilon_mode"):
        LeBedConfig(epsilon_mode="percent")
    with pytest.raises(ValueError, match="node indices"):
        lebed_score(model, init, x, ei + 1000)


def test_non_edge_sample():
    ei = np.array([[0, 1, 2, 3], [1, 2, 3, 0]])
    neg = sample_non_edges(ei, 10, 30, seed=1)
    assert neg.shape == (2, 30)
    assert np.all(neg[0] != neg[1])
    pairs = {(min(a, b), max(a, b)) for a, b in neg.T}
    assert len(pairs) == 30
    assert not pairs & {(0, 1), (1, 2), (2, 3), (0, 3)}
    assert np.array_equal(neg, sample_non_edges(ei, 10, 30, seed=1))
    # not biased towards small node ids: high ids appear
    assert neg.max() >= 8
    with pytest.raises(ValueError, match="only"):
        sample_non_edges(ei, 4, 5)


def test_structure_score_is_bce():
    z = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    pos = torch.tensor([[0], [1]])  # cos = 1
    neg = torch.tensor([[0], [2]])  # cos = 0
    expected = (-np.log(1 / (1 + np.exp(-1.0))) - np.log(1 - 0.5)) / 2
    assert structure_score(z, pos, neg) == pytest.approx(expected)
