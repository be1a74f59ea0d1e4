"""``TrainConfig.norm_stats_graphs``: batch-norm running statistics recomputed under the current
weights before every evaluation ("precise BN"), on SYNTHETIC point clouds."""

from __future__ import annotations

import pytest
import torch

from gs_algos.config import TrainConfig
from gs_algos.engine import fit_graph
from gs_algos.engine.graph import _norm_stats_subset, _norms, recompute_norm_stats


def test_recomputed_statistics_are_the_exact_mean_and_variance(synthetic_clouds, tiny_pointnet):
    """One batch holding every graph: each norm's running mean / var = the mean and unbiased
    variance of what that norm saw in the pass (captured by forward hooks and computed here
    with torch.mean / torch.var, independently of batch norm's own bookkeeping)."""
    graphs = synthetic_clouds(24, seed=0)
    model = tiny_pointnet()
    norms = _norms(model)
    for m in norms:  # stale statistics, as an exponential average leaves them
        m.running_mean.fill_(5.0)
        m.running_var.fill_(9.0)
    seen = {}

    def keep(mod, inp, out):  # returns None: the output is not replaced
        seen.setdefault(mod, inp[0].detach().clone())

    hooks = [m.register_forward_hook(keep) for m in norms]
    model.train()
    modes = {n: m.training for n, m in model.named_modules()}
    assert recompute_norm_stats(model, None, graphs, 64, torch.device("cpu")) == len(norms) > 0
    for h in hooks:
        h.remove()
    assert {n: m.training for n, m in model.named_modules()} == modes  # modes restored
    assert all(m.momentum == 0.1 for m in norms)  # momenta restored
    assert len(seen) == len(norms)
    for m in norms:
        x = seen[m]
        torch.testing.assert_close(m.running_mean, x.mean(0), rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(m.running_var, x.var(0, unbiased=True), rtol=1e-4, atol=1e-5)
    # dropout is off during the pass: a second recomputation gives the same statistics
    first = [m.running_mean.clone() for m in norms]
    recompute_norm_stats(model, None, graphs, 64, torch.device("cpu"))
    for a, m in zip(first, norms, strict=True):
        torch.testing.assert_close(a, m.running_mean)


def test_fit_graph_keeps_the_recomputed_statistics(synthetic_clouds, tiny_pointnet):
    """The returned model's statistics are those of its own weights: recomputing them again
    changes nothing. Without the option they trail the weights (exponential averages)."""
    parts = {"train": synthetic_clouds(40, seed=0), "iid_val": synthetic_clouds(12, seed=1),
             "ood_val": synthetic_clouds(12, seed=2)}
    base = dict(max_epochs=3, batch_size=8, seed=0, lr=1e-2, task="binary", metric="accuracy")
    out = {}
    for n in (0, 1000):
        model = tiny_pointnet()
        fit_graph(model, parts, config=TrainConfig.gess(**base, norm_stats_graphs=n))
        before = [m.running_mean.clone() for m in _norms(model)]
        recompute_norm_stats(model, None, parts["train"], 8, torch.device("cpu"))
        out[n] = max(float((b - m.running_mean).abs().max() / (m.running_mean.abs().max() + 1e-6))
                     for b, m in zip(before, _norms(model), strict=True))
    assert out[1000] < 1e-4
    assert out[0] > 1e-3


def test_subset_is_fixed_and_bounded():
    train = list(range(50))
    a = _norm_stats_subset(train, 10, seed=3)
    assert a == _norm_stats_subset(train, 10, seed=3) and len(set(a)) == 10
    assert _norm_stats_subset(train, 100, seed=3) == train
    assert _norm_stats_subset(train, 0, seed=3) == []


def test_config_validates_and_keeps_old_identities():
    with pytest.raises(ValueError, match="norm_stats_graphs"):
        TrainConfig(norm_stats_graphs=-1)
    with pytest.raises(ValueError, match="norm_stats_graphs"):
        TrainConfig(norm_stats_graphs=True)
    assert "norm_stats_graphs" not in TrainConfig().identity()
    assert "norm_stats_graphs" in TrainConfig(norm_stats_graphs=64).identity()


@pytest.mark.parametrize("norm_stats", [0, 1000])
def test_final_parts_score_each_kept_epoch_as_every_epoch_evaluation_did(
        synthetic_clouds, tiny_pointnet, norm_stats):
    """``final_parts`` (the test parts scored only with each track's kept weights, after
    training) store the same metrics as evaluating them at every epoch, with and without
    recomputed batch-norm statistics; they leave the history and the training unchanged."""
    parts = {"train": synthetic_clouds(40, seed=0), "iid_val": synthetic_clouds(12, seed=1),
             "ood_val": synthetic_clouds(12, seed=2), "iid_test": synthetic_clouds(16, seed=3),
             "ood_test": synthetic_clouds(16, seed=4)}
    base = dict(max_epochs=4, batch_size=8, seed=0, lr=1e-2, task="binary", metric="accuracy",
                norm_stats_graphs=norm_stats)
    res = {}
    for final in ((), ("iid_test", "ood_test")):
        res[final] = fit_graph(tiny_pointnet(), parts, config=TrainConfig.gess(**base, final_parts=final))
    every, deferred = res[()], res[("iid_test", "ood_test")]
    assert [h["train_loss"] for h in every.history] == [h["train_loss"] for h in deferred.history]
    assert all("iid_test" not in h["metrics"] for h in deferred.history)
    for name, tr in every.tracks.items():
        assert deferred.tracks[name].epoch == tr.epoch
        for part in ("iid_test", "ood_test"):
            for key, v in tr.metrics[part].items():
                assert deferred.tracks[name].metrics[part][key] == pytest.approx(v, rel=1e-5, abs=1e-6)


def test_final_parts_are_checked_and_left_out_of_identities():
    with pytest.raises(ValueError, match="final_parts"):
        TrainConfig(final_parts="iid_test")
    with pytest.raises(ValueError, match="must not hold a selection part"):
        TrainConfig(select_on=("iid_val",), final_parts=("iid_val",))
    assert TrainConfig(final_parts=("iid_test",)).identity() == TrainConfig().identity()


def test_which_parts_are_scored_does_not_move_training(synthetic_clouds, tiny_pointnet):
    """Scoring a part draws nothing from the global RNG (a torch ``DataLoader`` iterator takes
    its base seed from it unless given a generator): with dropout on, the training losses are the
    same whether the test parts are scored every epoch, only at the end, or not at all."""
    parts = {"train": synthetic_clouds(40, seed=0), "iid_val": synthetic_clouds(12, seed=1),
             "ood_val": synthetic_clouds(12, seed=2), "iid_test": synthetic_clouds(16, seed=3),
             "ood_test": synthetic_clouds(16, seed=4)}
    base = dict(max_epochs=4, batch_size=8, seed=0, lr=1e-2, task="binary", metric="accuracy")
    losses = []
    for extra in ({}, {"final_parts": ("iid_test", "ood_test")},
                  {"eval_parts": ("iid_val", "ood_val")}):
        res = fit_graph(tiny_pointnet(dropout=0.5), parts, config=TrainConfig.gess(**base, **extra))
        losses.append([h["train_loss"] for h in res.history])
    assert losses[0] == losses[1] == losses[2]
