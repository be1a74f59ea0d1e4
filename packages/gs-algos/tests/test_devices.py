"""``TrainConfig.device`` (issue 18): every method family trains with ``device="cpu"`` and
``"auto"``, and every tensor the engine creates lives on the training device.

The device check runs on a CPU-only machine: inside :func:`strict_device` a tensor that *our*
code (the engine, a method, ensemble, sampler, LeBed, or a test) creates without naming a
device lands on the ``meta`` device, a device that holds no data, and the first operation that
mixes it with the real tensors of the run fails ("Tensor on device meta is not on the expected
device cpu"), as would a CPU tensor mixed into a CUDA run. Tensors that torch or PyTorch
Geometric create inside their own code are left alone: where they put them is their business,
and it changes between releases (torch 2.11's Adam creates its ``step`` tensor on the default
device, 2.13's on the parameter's; a plain ``with torch.device("meta")`` failed 36 tests here
on 2.11). Only the caller's code (building the model and the data) runs outside it.
:func:`test_the_strict_check_catches_a_tensor_created_without_a_device` shows that the check
does catch such a tensor, and :func:`test_the_strict_check_leaves_torchs_own_tensors_alone`
that it ignores torch's.

Everything here is SYNTHETIC (tests/conftest.py).
"""

from __future__ import annotations

import copy
import math
import os
import sys
from contextlib import contextmanager

import pytest
import torch
import torch_geometric
from torch.overrides import TorchFunctionMode
from torch.utils._device import _device_constructors

from gs_algos.config import TrainConfig
from gs_algos.device import check_device, module_device, resolve_device
from gs_algos.engine import fit_graph, fit_node, predict_node, seeded
from gs_algos.methods import DIR, ERM, GroupDRO, LRIBernoulli, Method
from gs_algos.node_methods import node_method

DEVICES = ["cpu", "auto"]
# 'auto' is the GPU where one is present (tests/conftest.py hides it from unmarked tests)
pytestmark = pytest.mark.gpu


#: folders whose code may create tensors on the default device without failing the check
_LIBRARIES = tuple(os.path.dirname(m.__file__) + os.sep for m in (torch, torch_geometric))


class _OurTensorsOnMeta(TorchFunctionMode):
    """A factory call (``torch.zeros``, ``torch.tensor``, ...) without ``device=`` made by code
    outside torch and PyTorch Geometric creates a ``meta`` tensor; theirs run unchanged."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func in _device_constructors() and kwargs.get("device") is None:
            caller = sys._getframe(1).f_code.co_filename  # the frame that called the factory
            if not caller.startswith(_LIBRARIES):
                kwargs["device"] = "meta"
        return func(*args, **kwargs)


@contextmanager
def strict_device():
    """Inside the block, a tensor that our code creates without an explicit device is a
    data-less meta tensor, and mixing it into the run raises (module docstring)."""
    with _OurTensorsOnMeta():
        yield


def on_cpu(factory):
    """The caller's own code (a model factory) runs outside the check: build it on the CPU."""

    def build():
        with torch.device("cpu"):
            return factory()

    return build


def _assert_real(model: torch.nn.Module, device: torch.device) -> None:
    for name, t in [*model.named_parameters(), *model.named_buffers()]:
        assert t.device == device, (name, t.device)


def _node_cfg(device: str, **kw) -> TrainConfig:
    return TrainConfig.structural_shifts(**{"max_epochs": 4, "lr": 0.01, "device": device, **kw})


# ----------------------------------------------------------------------------- the setting
def test_device_setting_accepts_auto_cpu_cuda_and_an_index():
    for name in ("auto", "cpu", "cuda", "cuda:0", "cuda:1"):
        assert TrainConfig(device=name).device == name
    assert check_device(torch.device("cpu")) == "cpu"


@pytest.mark.parametrize("bad", ["gpu", "CUDA", "cuda:", "cuda:x", "mps0", "", 0, None])
def test_a_bad_device_names_the_field_and_what_is_accepted(bad):
    with pytest.raises(ValueError) as err:
        TrainConfig(device=bad)
    msg = str(err.value)
    assert "TrainConfig.device" in msg and "'auto'" in msg and "'cuda:<index>'" in msg
    assert repr(bad) in msg


def test_auto_is_cuda_when_available_else_cpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto") == torch.device("cpu")
    with pytest.raises(ValueError, match=r"'cuda:1' needs a CUDA GPU.*use 'cpu' or 'auto'"):
        resolve_device("cuda:1")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    assert resolve_device("auto") == torch.device("cuda", 0)
    assert resolve_device("cuda") == torch.device("cuda", 0)
    assert resolve_device("cuda:1") == torch.device("cuda", 1)
    with pytest.raises(ValueError, match=r"has 2 CUDA device\(s\)"):
        resolve_device("cuda:2")


def test_as_device_takes_a_resolved_device_as_it_is_and_resolves_a_name(monkeypatch):
    import gs_algos.device as dev

    calls = []
    monkeypatch.setattr(dev, "resolve_device", lambda v="auto", what="device": calls.append(v) or torch.device("cpu"))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    # resolved devices pass through untouched, even a CUDA one on a machine without CUDA (the
    # caller resolved it where it runs)
    assert dev.as_device(torch.device("cpu")) == torch.device("cpu")
    assert dev.as_device(torch.device("cuda", 1)) == torch.device("cuda", 1)
    assert calls == []
    # names and an index-less CUDA device are resolved
    for value in ("auto", "cpu", torch.device("cuda")):
        dev.as_device(value, "X.device")
    assert calls == ["auto", "cpu", torch.device("cuda")]


def test_a_missing_gpu_fails_before_training_with_the_reason(monkeypatch, synthetic_graph, tiny_gcn):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    model = tiny_gcn(8, 3)
    before = copy.deepcopy(model.state_dict())
    with pytest.raises(ValueError, match="TrainConfig.device 'cuda' needs a CUDA GPU"):
        fit_node(model, synthetic_graph, None, _node_cfg("cuda"))
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())


def test_the_device_is_not_part_of_what_is_trained():
    a, b = TrainConfig(device="cpu"), TrainConfig(device="cuda:1")
    assert a.identity() == b.identity() and "device" not in a.identity()
    assert a.identity() != TrainConfig(device="cpu", seed=1).identity()
    # the identity is the dataclass repr without the device and without standardize_targets /
    # norm_stats_graphs / final_parts at their defaults (fields added later: member-cache keys of earlier
    # configs are unchanged)
    assert repr(a).replace(", device='cpu'", "").replace(", standardize_targets=False", "").replace(
        ", norm_stats_graphs=0", "").replace(", final_parts=()", "") == a.identity()
    on = TrainConfig(device="cpu", task="regression", metric="mae", standardize_targets=True)
    assert "standardize_targets=True" in on.identity() and on.identity() != a.identity()


# ----------------------------------------------------------------------------- the check itself
class _Sloppy(Method):
    """A method that creates a tensor without a device (the bug the check must catch)."""

    name = "sloppy"

    def training_loss(self, model, batch, epoch):
        _, out = batch.forward(model)
        noise = torch.zeros(out.size(0))  # no device=: lands on the default device
        return batch.losses(out + noise.unsqueeze(-1)).mean(), {}


def test_the_strict_check_catches_a_tensor_created_without_a_device(synthetic_graph, tiny_gcn):
    model = tiny_gcn(8, 3)
    with strict_device(), pytest.raises((RuntimeError, NotImplementedError), match="meta"):
        fit_node(model, synthetic_graph, _Sloppy(), _node_cfg("cpu"))
    # and the same method runs outside it: the failure is the device, nothing else
    fit_node(tiny_gcn(8, 3), synthetic_graph, _Sloppy(), _node_cfg("cpu"))


def test_the_strict_check_leaves_torchs_own_tensors_alone():
    """The same factory call is a meta tensor from our code and a real one from torch's (as
    torch 2.11's Adam creating its ``step`` on the default device)."""
    code = "out = torch.zeros(2)"
    ours, theirs = {"torch": torch}, {"torch": torch}
    with strict_device():
        exec(compile(code, __file__, "exec"), ours)
        exec(compile(code, os.path.join(_LIBRARIES[0], "optim", "_fake.py"), "exec"), theirs)
        explicit = torch.zeros(2, device="cpu")
    assert ours["out"].device.type == "meta"
    assert theirs["out"].device.type == "cpu" and explicit.device.type == "cpu"
    assert torch.zeros(2).device.type == "cpu"  # and nothing is left behind after the block


# ----------------------------------------------------------------------------- method families
@pytest.mark.parametrize("device", DEVICES)
def test_erm_full_batch_and_sampled_minibatches(device, synthetic_graph, tiny_gcn):
    data = synthetic_graph
    x_before = data.x
    for cfg in (_node_cfg(device),
                _node_cfg(device, batch_size=32, num_neighbors=(4, 2))):  # neighbour sampling
        model = tiny_gcn(8, 3)
        with strict_device():
            res = fit_node(model, data, ERM(), cfg)
            _, out = predict_node(model, data)
        assert res.epochs_run == 4 and res.best.epoch >= 0
        _assert_real(model, torch.device("cpu"))  # handed back where it came from
        assert out.device.type == "cpu" and torch.isfinite(out).all()
    assert data.x is x_before and data.x.device.type == "cpu"  # the caller's data untouched


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["dann", "coral", "mixup", "eerm"])
@pytest.mark.parametrize("variant", ["good", "ours-v1"])
def test_robustness_methods(device, name, variant, synthetic_graph_factory):
    from gs_models import build_model

    data = synthetic_graph_factory(n=120, num_domains=3)
    meth = node_method(name, robustness_variant=variant)
    with strict_device():
        pred = meth.fit(on_cpu(lambda: build_model("gcn", 8, 3, hidden_channels=8)), data,
                        _node_cfg(device, max_epochs=3), domain=data.domain)
    assert pred.probs.shape == (data.num_nodes, 3) and pred.probs.device.type == "cpu"
    assert torch.isfinite(pred.ood_score).all()
    _assert_real(pred.models[0], torch.device("cpu"))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("batched", [True, False])
def test_deep_ensemble_stacked_and_member_by_member(device, batched, synthetic_graph):
    from gs_algos.node_methods import DeepEnsemble
    from gs_models import build_model

    meth = DeepEnsemble(num_members=2, batched=batched)
    with strict_device():
        pred = meth.fit(on_cpu(lambda: build_model("gcn", 8, 3, hidden_channels=8)),
                        synthetic_graph, _node_cfg(device))
    assert len(pred.best_epochs) == 2 and all(e >= 0 for e in pred.best_epochs)
    assert torch.isfinite(pred.ood_score).all() and pred.ood_score.device.type == "cpu"
    for m in pred.models:
        _assert_real(m, torch.device("cpu"))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["gpn", "gpe"])
def test_posterior_networks(device, name, synthetic_graph):
    from gs_models import build_model

    meth = node_method(name, num_members=2)
    with strict_device():
        pred = meth.fit(
            on_cpu(lambda: build_model("gpn", 8, 3, hidden_channels=8, latent_dim=4, flow_layers=2)),
            synthetic_graph, _node_cfg(device, max_epochs=2),
        )
    assert pred.probs.shape == (synthetic_graph.num_nodes, 3)
    assert torch.isfinite(pred.ood_score).all()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("method", [ERM, GroupDRO, DIR, LRIBernoulli])
def test_geometric_backbone(device, method, synthetic_clouds, tiny_pointnet):
    parts = {
        "train": synthetic_clouds(24, seed=0),
        "iid_val": synthetic_clouds(8, seed=1),
        "ood_val": synthetic_clouds(8, seed=2, shift=1.0),
    }
    model = tiny_pointnet()
    cfg = TrainConfig.gess(max_epochs=2, batch_size=8, task="binary", device=device,
                           eval_parts=("iid_val", "ood_val"))
    with strict_device():
        res = fit_graph(model, parts, method(), cfg)
    assert set(res.tracks) == {"iid_val", "ood_val"} and res.epochs_run == 2
    assert all(math.isfinite(t.value) for t in res.tracks.values())
    _assert_real(model, torch.device("cpu"))


@pytest.mark.parametrize("device", DEVICES)
def test_lebed_pretraining_and_retraining(device, synthetic_graph):
    from gs_algos.lebed import LeBedConfig, lebed_score, pretrain
    from gs_models import build_model

    model = seeded(on_cpu(lambda: build_model("lebed-gcn", 8, 3)), 0)
    init = copy.deepcopy(model.state_dict())
    cfg = TrainConfig(lr=0.01, max_epochs=3, patience=None, train_part="train",
                      select_on=("valid",), device=device)
    lcfg = LeBedConfig(max_steps=6, min_steps=2, epsilon=0.0, device=device)
    g = synthetic_graph
    with strict_device():
        pretrain(model, g, g, train_mask=g.in_train_mask, valid_mask=g.in_valid_mask,
                 num_classes=3, config=cfg)
        res = lebed_score(model, init, g.x, g.edge_index, config=lcfg, seed=0)
    assert res.stop_step == 6 and math.isfinite(res.score) and res.score > 0
    _assert_real(model, torch.device("cpu"))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["gmnn", "epfgnn"])
def test_structured_models_em_training(device, name, synthetic_graph):
    from gs_algos.em import EMConfig, fit_epfgnn, fit_gmnn
    from gs_models import build_model

    kw = {"num_samples": 4} if name == "gmnn" else {}
    model = seeded(lambda: build_model(f"edgewise-{name}", 8, 3, hidden_channels=8, **kw), 0)
    masks = {"train": synthetic_graph.in_train_mask, "valid": synthetic_graph.in_valid_mask}
    preset, fit = (EMConfig.gmnn, fit_gmnn) if name == "gmnn" else (EMConfig.epfgnn, fit_epfgnn)
    cfg = preset(pretrain_epochs=3, pretrain_patience=None, m_epochs=2, e_epochs=2, em_rounds=1,
                 device=device)
    res = fit(model, synthetic_graph, masks, cfg, seed=0)
    assert res.epochs_run >= 3 + 2
    assert module_device(model).type == "cpu"
    if res.proposal is not None:
        assert res.proposal.device.type == "cpu"


def test_auto_and_cpu_train_the_same_model_on_a_machine_without_gpu(synthetic_graph, tiny_gcn):
    if torch.cuda.is_available():
        pytest.skip("'auto' is the GPU here (compared in test_gpu_run_selects_like_the_cpu_run)")
    a, b = tiny_gcn(8, 3), tiny_gcn(8, 3)
    ra = fit_node(a, synthetic_graph, None, _node_cfg("cpu"))
    rb = fit_node(b, synthetic_graph, None, _node_cfg("auto"))
    assert ra.best.epoch == rb.best.epoch and ra.history == rb.history
    assert all(torch.equal(a.state_dict()[k], v) for k, v in b.state_dict().items())


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (none on this machine)")
def test_gpu_run_selects_like_the_cpu_run(synthetic_graph, tiny_gcn):
    """On a GPU machine: the same selection as on the CPU, values within float tolerance."""
    a, b = tiny_gcn(8, 3, dropout=0.0), tiny_gcn(8, 3, dropout=0.0)
    cfg = TrainConfig.structural_shifts(max_epochs=30, lr=0.01)
    ra = fit_node(a, synthetic_graph, None, cfg.replace(device="cpu"))
    rb = fit_node(b, synthetic_graph, None, cfg.replace(device="cuda"))
    assert ra.best.epoch == rb.best.epoch
    for ha, hb in zip(ra.history, rb.history, strict=True):
        assert ha["train_loss"] == pytest.approx(hb["train_loss"], rel=1e-3, abs=1e-4)
    _assert_real(b, torch.device("cpu"))
