"""Engine tests on SYNTHETIC graphs / point clouds: determinism, exact resume, tracks,
early stopping with best-checkpoint restore, callbacks, mini-batches, bad input."""

from __future__ import annotations

import math

import pytest
import torch

from gs_algos.checkpoint import load_checkpoint
from gs_algos.config import TrainConfig
from gs_algos.engine import fit_graph, fit_node, predict_node
from gs_algos.methods import DANN, ERM, VREx


def _cfg(**kw):
    base = dict(lr=0.01, weight_decay=5e-4, max_epochs=12, patience=None, seed=3)
    base.update(kw)
    return TrainConfig.structural_shifts("early-stop", **base)


def _same_state(a, b):
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), k


def test_presets_carry_the_papers_settings():
    ss = TrainConfig.structural_shifts()
    assert (ss.lr, ss.weight_decay) == (3e-4, 1e-5)
    ew = TrainConfig.edgewise()
    assert (ew.lr, ew.weight_decay, ew.max_epochs, ew.patience) == (0.01, 5e-4, 2000, 100)
    g = TrainConfig.gess()
    assert (g.lr, g.weight_decay, g.batch_size, g.max_epochs) == (1e-3, 1e-5, 256, 100)
    assert g.select_on == ("iid_val", "ood_val") and g.patience is None
    assert TrainConfig.gess("pileup").max_epochs == 200
    assert TrainConfig.gess("pileup", level="o-feature").batch_size == 128
    assert TrainConfig.gess(level="o-feature").iterations_per_epoch == 150
    with pytest.raises(ValueError, match="metric"):
        TrainConfig(metric="f1")
    with pytest.raises(ValueError, match="level"):
        TrainConfig.gess(level="full")


def test_same_seed_gives_identical_results_on_cpu(synthetic_graph, tiny_gcn):
    runs = []
    for _ in range(2):
        model = tiny_gcn(8, 3, seed=1)
        res = fit_node(model, synthetic_graph, ERM(), _cfg())
        runs.append((model.state_dict(), res))
    _same_state(runs[0][0], runs[1][0])
    assert [h["train_loss"] for h in runs[0][1].history] == [
        h["train_loss"] for h in runs[1][1].history
    ]
    # and a different seed changes the run (dropout draws differ)
    other = tiny_gcn(8, 3, seed=1)
    res = fit_node(other, synthetic_graph, ERM(), _cfg(seed=4))
    assert [h["train_loss"] for h in res.history] != [h["train_loss"] for h in runs[0][1].history]


def test_global_rng_is_left_untouched(synthetic_graph, tiny_gcn):
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    fit_node(tiny_gcn(8, 3), synthetic_graph, ERM(), _cfg(max_epochs=2))
    assert torch.equal(torch.rand(3), expected)


@pytest.mark.parametrize("method_factory", [ERM, lambda: DANN(domain_weight=0.5)])
def test_interrupted_run_resumes_exactly(tmp_path, synthetic_graph, tiny_gcn, method_factory):
    cfg = _cfg(max_epochs=10)
    ref_model = tiny_gcn(8, 3, seed=2)
    ref = fit_node(ref_model, synthetic_graph, method_factory(), cfg)

    model = tiny_gcn(8, 3, seed=2)
    part = fit_node(
        model, synthetic_graph, method_factory(), cfg, checkpoint_dir=tmp_path,
        callback=lambda info: info.epoch < 4,  # "interrupted" after epoch 4
    )
    assert part.epochs_run == 5
    assert load_checkpoint(tmp_path / "last.pt")["epoch"] == 4
    fresh = tiny_gcn(8, 3, seed=99)  # a new process would build a new model
    res = fit_node(fresh, synthetic_graph, method_factory(), cfg, checkpoint_dir=tmp_path,
                   resume=True)
    assert res.epochs_run == 10
    _same_state(fresh.state_dict(), ref_model.state_dict())
    assert [h["train_loss"] for h in res.history] == [h["train_loss"] for h in ref.history]
    assert res.best.epoch == ref.best.epoch and res.best.value == ref.best.value


def test_resume_refuses_a_checkpoint_of_another_config(tmp_path, synthetic_graph, tiny_gcn):
    fit_node(tiny_gcn(8, 3), synthetic_graph, ERM(), _cfg(max_epochs=2), checkpoint_dir=tmp_path)
    with pytest.raises(ValueError, match="different config"):
        fit_node(tiny_gcn(8, 3), synthetic_graph, ERM(), _cfg(max_epochs=3),
                 checkpoint_dir=tmp_path, resume=True)


def test_checkpoint_writes_leave_no_temporary_files(tmp_path, synthetic_graph, tiny_gcn):
    fit_node(tiny_gcn(8, 3), synthetic_graph, ERM(), _cfg(max_epochs=3), checkpoint_dir=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["last.pt"]


def test_early_stopping_restores_the_best_epoch(synthetic_graph, tiny_gcn):
    model = tiny_gcn(8, 3)
    cfg = _cfg(max_epochs=200, patience=5, lr=0.05)
    res = fit_node(model, synthetic_graph, ERM(), cfg)
    assert res.stopped_early and res.epochs_run == res.best.epoch + 1 + 5
    vals = [h["metrics"]["in_valid"]["accuracy"] for h in res.history]
    assert res.best.value == max(vals) and vals.index(max(vals)) == res.best.epoch
    # the model holds the best epoch's weights: re-evaluating reproduces its metrics
    _, out = predict_node(model, synthetic_graph)
    m = synthetic_graph.in_valid_mask
    acc = float((out[m].argmax(-1) == synthetic_graph.y[m]).float().mean())
    assert acc == pytest.approx(res.best.value)


def test_two_selection_tracks_are_kept(synthetic_graph_factory, tiny_gcn):
    data = synthetic_graph_factory(num_domains=3, seed=1)
    cfg = _cfg(max_epochs=15, select_on=("in_valid", "out_valid"))
    res = fit_node(tiny_gcn(8, 3), data, ERM(), cfg)
    assert list(res.tracks) == ["in_valid", "out_valid"]
    for part, tr in res.tracks.items():
        vals = [h["metrics"][part]["accuracy"] for h in res.history]
        assert tr.value == max(vals) and tr.epoch == vals.index(max(vals))
        assert tr.metrics == res.history[tr.epoch]["metrics"]


def test_callback_receives_every_epoch(synthetic_graph, tiny_gcn):
    seen = []
    fit_node(tiny_gcn(8, 3), synthetic_graph, ERM(), _cfg(max_epochs=4),
             callback=lambda info: seen.append((info.epoch, info.max_epochs, "in_valid" in info.metrics)))
    assert seen == [(e, 4, True) for e in range(4)]


def test_neighbour_sampler_respects_fanout():
    # one neighbour sampler in gs (issue 20): gs-algos trains with gs-models' own
    from gs_models.sampling import sample_neighbors

    g = torch.Generator().manual_seed(0)
    # star: node 0 receives edges from 1..9
    ei = torch.stack([torch.arange(1, 10), torch.zeros(9, dtype=torch.long)])
    nodes, sub, n_seeds = sample_neighbors(ei, 10, torch.tensor([0]), [3], g)
    assert n_seeds == 1 and nodes[0] == 0
    assert sub.size(1) == 3 and nodes.numel() == 4
    assert set(nodes[sub[0]].tolist()) <= set(range(1, 10)) and (nodes[sub[1]] == 0).all()
    nodes, sub, _ = sample_neighbors(ei, 10, torch.tensor([0]), [-1], g)
    assert sub.size(1) == 9


def test_minibatch_training_learns_and_is_deterministic(synthetic_graph, tiny_gcn):
    cfg = _cfg(max_epochs=8, batch_size=32, num_neighbors=(5, 5), lr=0.02)
    a, b = tiny_gcn(8, 3), tiny_gcn(8, 3)
    ra = fit_node(a, synthetic_graph, ERM(), cfg)
    fit_node(b, synthetic_graph, ERM(), cfg)
    _same_state(a.state_dict(), b.state_dict())
    assert ra.best.value > 0.6  # 3 classes: chance is 1/3


def test_bad_input_fails_early(synthetic_graph, tiny_gcn):
    d = synthetic_graph
    empty = {**{k: getattr(d, f"{k}_mask") for k in ("in_valid", "in_test")},
             "in_train": torch.zeros(d.num_nodes, dtype=torch.bool)}
    with pytest.raises(ValueError, match="training part 'in_train' is empty"):
        fit_node(tiny_gcn(8, 3), d, ERM(), _cfg(), masks=empty)
    no_dom = d.clone()
    del no_dom.domain
    with pytest.raises(ValueError, match="needs domains"):
        fit_node(tiny_gcn(8, 3), no_dom, VREx(), _cfg())
    with pytest.raises(ValueError, match="output size 5 does not match the 3 classes"):
        fit_node(tiny_gcn(8, 5), d, ERM(), _cfg())
    with pytest.raises(ValueError, match="not among the masks"):
        fit_node(tiny_gcn(8, 3), d, ERM(), _cfg(select_on=("nope",)))
    with pytest.raises(TypeError, match="Method"):
        fit_node(tiny_gcn(8, 3), d, "erm", _cfg())
    with pytest.raises(ValueError, match="num_neighbors"):
        fit_node(tiny_gcn(8, 3), d, ERM(), _cfg(batch_size=8))


def test_graph_level_gess_protocol(synthetic_clouds, tiny_pointnet):
    parts = {
        "train": synthetic_clouds(48, seed=0),
        "iid_val": synthetic_clouds(16, seed=1),
        "iid_test": synthetic_clouds(16, seed=2),
        "ood_val": synthetic_clouds(16, seed=3, shift=2.0),
        "ood_test": synthetic_clouds(16, seed=4, shift=2.0),
    }
    cfg = TrainConfig.gess(max_epochs=6, batch_size=16, task="binary", metric="auroc", seed=0)
    res = fit_graph(tiny_pointnet(), parts, ERM(), cfg)
    assert list(res.tracks) == ["iid_val", "ood_val"]
    for h in res.history:
        assert set(h["metrics"]) == {"iid_val", "iid_test", "ood_val", "ood_test"}
        assert {"auroc", "accuracy", "loss"} <= set(h["metrics"]["ood_test"])
    for part, tr in res.tracks.items():
        vals = [h["metrics"][part]["auroc"] for h in res.history]
        assert tr.value == max(v for v in vals if not math.isnan(v))
    with pytest.raises(ValueError, match="'train' is empty"):
        fit_graph(tiny_pointnet(), {**parts, "train": []}, ERM(), cfg)
    with pytest.raises(ValueError, match="1 output"):
        fit_graph(tiny_pointnet(out_ch=2), parts, ERM(), cfg)


def test_graph_level_resume_with_target_is_exact(tmp_path, synthetic_clouds, tiny_pointnet):
    parts = {"train": synthetic_clouds(24, seed=0), "iid_val": synthetic_clouds(8, seed=1),
             "ood_val": synthetic_clouds(8, seed=3, shift=2.0)}
    target = synthetic_clouds(16, seed=5, shift=2.0)
    cfg = TrainConfig.gess(level="o-feature", max_epochs=4, batch_size=8, task="binary",
                           iterations_per_epoch=3, seed=1)
    ref = tiny_pointnet(seed=2)
    fit_graph(ref, parts, DANN(), cfg, target=target)
    m = tiny_pointnet(seed=2)
    fit_graph(m, parts, DANN(), cfg, target=target, checkpoint_dir=tmp_path,
              callback=lambda i: i.epoch < 1)
    m2 = tiny_pointnet(seed=7)
    fit_graph(m2, parts, DANN(), cfg, target=target, checkpoint_dir=tmp_path, resume=True)
    _same_state(m2.state_dict(), ref.state_dict())


# ---------------------------------------------------------------- stopping rules, scripted curve
#: (validation accuracy, validation NLL) per epoch
_CURVE = [
    (0.50, 1.00),  # 0: first epoch: both improve -> kept
    (0.50, 0.90),  # 1: accuracy ties, NLL improves -> kept (both "improve": >= and <=)
    (0.60, 0.95),  # 2: accuracy improves, NLL worse -> patience resets, not kept
    (0.55, 0.92),  # 3: neither -> 1 bad epoch
    (0.55, 0.85),  # 4: NLL improves only -> resets, not kept
    (0.60, 0.80),  # 5: accuracy ties the best, NLL improves -> kept
    (0.50, 1.00),  # 6, 7, 8: neither -> stop after the third
    (0.50, 1.00),
    (0.50, 1.00),
    (0.90, 0.10),  # 9: never reached
]


def _scripted_run(stopping: str):
    """Run the engine loop on a scripted validation curve; the model's only weight records
    the epoch it was trained in, so the restored weight names the kept epoch."""
    from gs_algos.engine.loop import _Loop
    from gs_algos.methods import ERM

    model = torch.nn.Linear(1, 1, bias=False)
    epoch_box = {}

    def train_epoch(epoch, opt, gen):
        with torch.no_grad():
            model.weight.fill_(float(epoch))
        epoch_box["e"] = epoch
        return 0.0, {}

    def evaluate():
        acc, nll = _CURVE[epoch_box["e"]]
        return {"valid": {"accuracy": acc, "loss": nll}}

    cfg = TrainConfig.edgewise(max_epochs=len(_CURVE), patience=3, stopping=stopping, lr=1e-3)
    res = _Loop(model, ERM(), cfg, train_epoch, evaluate, None, None, 1, False).run()
    return res, int(model.weight.item())


def test_acc_or_nll_stopping_on_a_scripted_validation_curve():
    """The edgewise authors' rule (src/train.py): patience resets on acc >= best OR NLL <= best,
    the checkpoint is kept only when both hold."""
    res, kept = _scripted_run("acc_or_nll")
    assert kept == 5 and res.best.epoch == 5
    assert res.epochs_run == 9 and res.stopped_early  # epochs 6, 7, 8 without a reset
    assert res.best.value == 0.60 and res.best.bests == {"accuracy": 0.60, "loss": 0.80}


def test_patience_stopping_on_the_same_curve_keeps_the_best_accuracy():
    """Our rule (``stopping="patience"``): strictly better accuracy only."""
    res, kept = _scripted_run("patience")
    assert kept == 2 and res.best.epoch == 2  # first epoch with accuracy 0.60
    assert res.epochs_run == 6 and res.stopped_early  # epochs 3, 4, 5 do not beat 0.60


def test_gess_stopping_keeps_a_tie_with_a_lower_loss():
    """GeSS's rule (``update_metrics`` in GESS/utils/metrics.py): strictly better accuracy, or
    the same accuracy with a strictly lower validation loss. On the scripted curve epoch 1
    (0.50 again, loss 0.90 < 1.00) and epoch 5 (0.60 again, loss 0.80 < 0.95) are kept, where
    ``"patience"`` keeps epoch 2."""
    res, kept = _scripted_run("gess")
    assert kept == 5 and res.best.epoch == 5 and res.best.value == 0.60
    assert res.best.metrics["valid"]["loss"] == 0.80
    assert res.epochs_run == 9 and res.stopped_early  # epoch 5 reset the patience
    assert TrainConfig.gess().stopping == "gess"


def test_stopping_option_is_validated():
    assert TrainConfig.edgewise().stopping == "acc_or_nll"
    assert TrainConfig.structural_shifts().stopping == "patience"
    with pytest.raises(ValueError, match="stopping must be one of"):
        TrainConfig(stopping="loss")
    with pytest.raises(ValueError, match="multiclass"):
        TrainConfig(stopping="acc_or_nll", task="regression", metric="mae")
