"""``TrainConfig.standardize_targets``: regression on standardised targets, outputs mapped
back to the targets' units and the map folded into the model at the end (SYNTHETIC point
clouds and node graph with targets far from zero, as band gaps of 5-7 eV are for a default
head)."""

from __future__ import annotations

import pytest
import torch

from gs_algos.config import TrainConfig
from gs_algos.engine import TargetScale, fit_graph, fit_node, fold_target_scale, predict_graph
from gs_algos.finetune import finetune_graph

OFFSET = 50.0  # targets far from a default head's outputs (about 0)


def _regression_clouds(make, n, seed, offset=OFFSET):
    """SYNTHETIC regression point clouds: y = offset + 3 * (label signal +-1) + noise."""
    graphs = make(n, seed=seed)
    gen = torch.Generator().manual_seed(seed)
    for g in graphs:
        sign = float(g.x[0, 1])  # +1 / -1: the label signal carried by the flagged points
        g.y = torch.tensor([offset + 3.0 * sign + 0.1 * float(torch.randn(1, generator=gen))])
    return graphs


def _parts(make, offset=OFFSET):
    return {"train": _regression_clouds(make, 48, 0, offset),
            "iid_val": _regression_clouds(make, 16, 1, offset),
            "ood_val": _regression_clouds(make, 16, 3, offset)}


def _cfg(**kw):
    base = dict(max_epochs=3, batch_size=16, task="regression", metric="mae", seed=0)
    base.update(kw)
    return TrainConfig.gess(**base)


def test_scale_round_trips_and_folds_into_the_head(synthetic_clouds, tiny_pointnet):
    """to_targets inverts to_model; folding makes the model output to_targets(before)."""
    graphs = _regression_clouds(synthetic_clouds, 20, 0)
    y = torch.cat([g.y for g in graphs])
    scale = TargetScale.of(y)
    assert scale.mean == pytest.approx(float(y.double().mean()))
    assert scale.std == pytest.approx(float(y.double().std()))
    torch.testing.assert_close(scale.to_targets(scale.to_model(y)), y)
    assert abs(float(scale.to_model(y).mean())) < 1e-5
    model = tiny_pointnet()
    _, before = predict_graph(model, graphs)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    fold_target_scale(model, scale, [state])
    _, after = predict_graph(model, graphs)
    torch.testing.assert_close(after, scale.to_targets(before), rtol=1e-5, atol=1e-4)
    fresh = tiny_pointnet(seed=7)
    fresh.load_state_dict(state)  # the folded copy of the kept weights predicts the same
    torch.testing.assert_close(predict_graph(fresh, graphs)[1], after)
    assert TargetScale.of(torch.full((4,), 3.0)) == TargetScale(3.0, 1.0)  # constant: a shift
    with pytest.raises(ValueError, match="finite"):
        TargetScale.of(torch.tensor([1.0, float("nan")]))


def test_standardised_run_equals_a_run_on_standardised_targets_folded(synthetic_clouds, tiny_pointnet):
    """The engine's standardisation is exactly: standardise y, train, map outputs back."""
    parts = _parts(synthetic_clouds)
    scale = TargetScale.of(torch.cat([g.y for g in parts["train"]]))
    by_hand = {k: [g.clone() for g in v] for k, v in parts.items()}
    for v in by_hand.values():
        for g in v:
            g.y = scale.to_model(g.y)
    m1, m2 = tiny_pointnet(), tiny_pointnet()
    manual = fit_graph(m1, by_hand, None, _cfg())
    engine = fit_graph(m2, parts, None, _cfg(standardize_targets=True))
    for part in ("iid_val", "ood_val"):
        assert engine.tracks[part].epoch == manual.tracks[part].epoch
        assert engine.tracks[part].metrics[part]["mae"] == pytest.approx(
            manual.tracks[part].metrics[part]["mae"] * scale.std, rel=1e-4)
    torch.testing.assert_close(predict_graph(m2, parts["iid_val"])[1],
                               scale.to_targets(predict_graph(m1, parts["iid_val"])[1]),
                               rtol=1e-4, atol=1e-3)


def test_predictions_are_in_target_units_after_a_few_steps(synthetic_clouds, tiny_pointnet):
    """With targets around 50, three epochs of 3 Adam steps leave a default head near 0
    (MAE about 50); on standardised targets the model predicts in the targets' units, and so
    do the kept weights of every track."""
    parts = _parts(synthetic_clouds)
    plain = fit_graph(tiny_pointnet(), parts, None, _cfg())
    model = tiny_pointnet()
    res = fit_graph(model, parts, None, _cfg(standardize_targets=True))
    assert plain.best.metrics["iid_val"]["mae"] > 40
    assert res.best.metrics["iid_val"]["mae"] < 4  # about the spread (3) or better
    _, out = predict_graph(model, parts["iid_val"])
    assert 45 < float(out.mean()) < 55  # eV in, eV out: no standardised values leak out
    assert float((out.reshape(-1) - torch.cat([g.y for g in parts["iid_val"]])).abs().mean()) \
        == pytest.approx(res.best.metrics["iid_val"]["mae"], rel=1e-4)
    other = tiny_pointnet(seed=3)
    other.load_state_dict(res.tracks["ood_val"].state)
    y = torch.cat([g.y for g in parts["ood_val"]])
    mae = float((predict_graph(other, parts["ood_val"])[1].reshape(-1) - y).abs().mean())
    assert mae == pytest.approx(res.tracks["ood_val"].metrics["ood_val"]["mae"], rel=1e-4)
    assert res.history[-1]["train_loss"] < 5  # logged in standardised units (raw: ~2500)


def test_node_level_regression_is_standardised_too(synthetic_graph, tiny_mlp):
    data = synthetic_graph.clone()
    data.y = OFFSET + 2.0 * data.x[:, 0]
    cfg = TrainConfig.structural_shifts(max_epochs=5, task="regression", metric="mae")
    plain = fit_node(tiny_mlp(8, 1), data, None, cfg)
    model = tiny_mlp(8, 1)
    res = fit_node(model, data, None, cfg.replace(standardize_targets=True))
    assert plain.best.metrics["in_valid"]["mae"] > 40
    assert res.best.metrics["in_valid"]["mae"] < 5
    model.eval()
    with torch.no_grad():
        out = model(data.x, data.edge_index)[1].reshape(-1)
    assert 40 < float(out.mean()) < 60


def test_option_is_checked_and_part_of_the_identity(synthetic_clouds, tiny_pointnet):
    with pytest.raises(ValueError, match="regression only"):
        TrainConfig.gess(task="binary", metric="auroc", standardize_targets=True)
    from gs_algos.engine.loop import _config_key

    a = _cfg()
    assert a.identity() != a.replace(standardize_targets=True).identity()
    # off: the keys of shared members and checkpoints are those from before the option existed
    assert "standardize_targets" not in a.identity() and "standardize_targets" not in _config_key(a)
    assert "standardize_targets=True" in a.replace(standardize_targets=True).identity()
    assert _config_key(a.replace(standardize_targets=True))["standardize_targets"] is True
    parts = _parts(synthetic_clouds)
    with pytest.raises(TypeError, match="one output"):  # refused before training
        fit_graph(tiny_pointnet(out_ch=2), parts, None, _cfg(standardize_targets=True))


def test_fine_tuning_uses_raw_targets_on_the_folded_model(synthetic_clouds, tiny_pointnet):
    """finetune_graph starts from a model that predicts in the targets' units: it does not
    standardise again, even when the fine-tuning config carries the option (as the gess
    runner's Par-Label config does)."""
    parts = _parts(synthetic_clouds)
    model = tiny_pointnet()
    fit_graph(model, parts, None, _cfg(standardize_targets=True))
    pool = _regression_clouds(synthetic_clouds, 8, 5, OFFSET + 1.0)
    seen = []
    tuned, res = finetune_graph(model, {**parts, "ood_labeled": pool}, 4,
                                _cfg(max_epochs=1, standardize_targets=True),
                                callback=lambda info: seen.append(info.train_loss))
    assert seen[0] > 0.1  # raw MSE of a model ~1 off; a standardised loss would be far smaller
    assert res.best.metrics["iid_val"]["mae"] < 4
    assert 45 < float(predict_graph(tuned, parts["iid_val"])[1].mean()) < 55
