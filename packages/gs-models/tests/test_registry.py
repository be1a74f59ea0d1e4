"""build_model / preset: names, overrides, the papers' settings, and bad input."""

from __future__ import annotations

import dataclasses

import pytest
import torch

import gs_models as gm
from gs_models import build_model, preset


def test_available_models_lists_models_and_presets():
    names = gm.available_models()
    for n in (
        "mlp",
        "gcn",
        "sage",
        "gat",
        "gin",
        "gmnn",
        "epfgnn",
        "dirichlet",
        "gpn",
        "natpn",
        "egnn",
        "dgcnn",
        "pointtransformer",
    ):
        assert n in names
    for p in (
        "structural-shifts-base",
        "structural-shifts-mod",
        "edgewise-gcn",
        "edgewise-gat",
        "lebed-gcn",
        "gess-egnn",
        "gess-dgcnn",
        "gess-pointtransformer",
    ):
        assert p in names and p in gm.available_presets()


def test_structural_shifts_presets_match_paper():
    base = preset("structural-shifts-base")  # appendix F
    assert (base.model, base.num_layers, base.hidden_channels, base.dropout) == ("gcn", 3, 256, 0.2)
    assert (base.norm, base.activation, base.head, base.pre_linear, base.residual) == (
        "batch",
        "gelu",
        "linear",
        False,
        False,
    )
    mod = preset(
        "structural-shifts-mod"
    )  # section 5.3: linear pre-processing, 2 SAGE layers, skips
    assert (mod.model, mod.num_layers, mod.pre_linear, mod.residual, mod.hidden_channels) == (
        "sage",
        2,
        True,
        True,
        256,
    )
    td = gm.training_defaults("structural-shifts-base")
    assert (td.lr, td.weight_decay) == (3e-4, 1e-5)
    assert preset("structural-shifts-natpn").encoder == base  # "encoder as in SE"
    m = build_model("structural-shifts-base", 10, 4)
    assert sum(isinstance(layer, gm.node.GCNConv) for layer in m.layers) == 3
    assert isinstance(m.head, torch.nn.Linear) and m.head.in_features == 256


def test_edgewise_presets_match_paper():
    gcn = preset("edgewise-gcn")  # appendix C.2: 2 layers x 64, dropout 0.5
    assert (gcn.model, gcn.num_layers, gcn.hidden_channels, gcn.dropout, gcn.head) == (
        "gcn",
        2,
        64,
        0.5,
        "conv",
    )
    gat = preset("edgewise-gat")  # 2 layers, 8 heads x 8 hidden
    assert (
        gat.model,
        gat.num_layers,
        gat.heads,
        gat.hidden_channels // gat.heads,
        gat.dropout,
    ) == ("gat", 2, 8, 8, 0.5)
    m = build_model("edgewise-gat", 10, 3)
    assert m.layers[0].heads == 8 and m.layers[0].out_channels == 8
    assert preset("edgewise-gmnn").q == gcn and preset("edgewise-epfgnn").backbone == gcn
    assert preset("edgewise-epfgnn").lbp_iterations == 100
    assert preset("edgewise-gmnn").num_samples == 32
    td = gm.training_defaults("edgewise-gcn")
    assert (td.lr, td.weight_decay, td.max_epochs) == (0.01, 5e-4, 2000)


@pytest.mark.parametrize("model", ["gcn", "sage", "gat", "gin", "mlp"])
def test_lebed_presets(model):
    cfg = preset(f"lebed-{model}")
    assert (cfg.num_layers, cfg.hidden_channels, cfg.embedding_channels, cfg.head) == (
        2,
        256,
        32,
        "linear",
    )
    # the authors' classifier starts xavier-uniform with a zero bias (pretrain-lebed.py:89-90)
    assert cfg.head_init == "xavier"
    assert torch.count_nonzero(build_model(f"lebed-{model}", 7, 5).head.bias) == 0
    emb, logits = build_model(f"lebed-{model}", 7, 5)(
        torch.randn(6, 7), torch.tensor([[0, 1], [1, 2]])
    )
    assert emb.shape == (6, 32) and logits.shape == (6, 5)


def test_lebed_mlp_is_pyg_mlp_with_batch_norm():
    """lebed-mlp computes what the LeBed authors' encoder computes: PyG ``MLP(in, 256, 32,
    num_layers=2)`` with its default batch norm (Linear, BatchNorm, ReLU, Linear), then a linear
    classifier; checked against PyG's class with the same weights, in train mode (batch
    statistics, running averages updated) and in eval mode (running averages)."""
    from torch_geometric.nn import MLP

    assert preset("lebed-mlp").norm == "batch"
    assert all(preset(f"lebed-{m}").norm is None for m in ("gcn", "sage", "gat", "gin"))
    torch.manual_seed(0)
    ours = build_model("lebed-mlp", 12, 4)
    ref = MLP(in_channels=12, hidden_channels=256, out_channels=32, num_layers=2)
    assert isinstance(ref.norms[0].module, torch.nn.BatchNorm1d)  # PyG's default
    with torch.no_grad():
        for i in range(2):
            ref.lins[i].weight.copy_(ours.layers[i].weight)
            ref.lins[i].bias.copy_(ours.layers[i].bias)
        ours.norms[0].weight.uniform_(0.5, 1.5)
        ours.norms[0].bias.uniform_(-0.5, 0.5)
        ref.norms[0].module.weight.copy_(ours.norms[0].weight)
        ref.norms[0].module.bias.copy_(ours.norms[0].bias)
    x = torch.randn(40, 12) * 3 + 1
    ei = torch.zeros(2, 0, dtype=torch.long)
    for mode in (True, False):
        ours.train(mode)
        ref.train(mode)
        emb, logits = ours(x, ei)
        want = ref(x)
        torch.testing.assert_close(emb, want, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(logits, ours.head(want), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(ours.norms[0].running_mean, ref.norms[0].module.running_mean)
    # train mode normalises with the batch: shifting every input row by the same vector
    # leaves the embeddings unchanged (an un-normalised MLP would change)
    ours.train()
    shift = torch.randn(1, 12)
    torch.testing.assert_close(ours(x + shift, ei)[0], ours(x, ei)[0], rtol=1e-4, atol=1e-4)


def test_gess_presets_match_paper():
    for name, width in (("gess-egnn", 64), ("gess-dgcnn", 64), ("gess-pointtransformer", 32)):
        cfg = preset(name)
        assert (cfg.num_layers, cfg.hidden_channels, cfg.dropout, cfg.norm, cfg.activation) == (
            4,
            width,
            0.2,
            "batch",
            "relu",
        )
        assert gm.training_defaults(name).lr == 1e-3
    assert gm.GESS_KNN_K == {"track": 5, "qmof": 10, "drugood-3d": 3}
    # plain names use the GeSS settings as defaults
    assert build_model("pointtransformer", 1, 1).config.hidden_channels == 32
    assert build_model("egnn", 1, 1).config == preset("gess-egnn")


def test_overrides_and_config():
    m = build_model("gcn", 5, 2, hidden_channels=16, num_layers=1)
    assert m.config.hidden_channels == 16 and len(m.layers) == 1
    cfg = dataclasses.replace(preset("edgewise-gcn"), hidden_channels=32)
    m = build_model("gcn", 5, 2, config=cfg)
    assert m.layers[0].out_channels == 32
    m = build_model("gess-egnn", 4, 1, k=10, categorical=True)
    assert m.config.k == 10 and isinstance(m.embed, torch.nn.Embedding)


def test_unknown_name_lists_accepted():
    with pytest.raises(ValueError, match="accepted names.*gcn"):
        build_model("gnc", 3, 2)
    with pytest.raises(ValueError, match="accepted presets"):
        preset("nope")


def test_bad_config_values_list_accepted():
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['hiden'\].*hidden_channels"):
        build_model("gcn", 3, 2, hiden=4)
    with pytest.raises(ValueError, match="k must be an int >= 1"):
        build_model("egnn", 3, 2, k=0)
    with pytest.raises(ValueError, match="norm=.*choose one of"):
        build_model("gcn", 3, 2, norm="group")
    with pytest.raises(ValueError, match="divisible by heads"):
        build_model("gat", 3, 2, hidden_channels=10, heads=4)
    with pytest.raises(ValueError, match="dropout"):
        build_model("sage", 3, 2, dropout=1.5)
    with pytest.raises(ValueError, match="in_channels must be an int >= 1"):
        build_model("gcn", 0, 2)
    with pytest.raises(ValueError, match="config.model"):
        build_model("gcn", 3, 2, model="sage")
    with pytest.raises(TypeError, match="NodeGNNConfig"):
        build_model("gcn", 3, 2, config=preset("gess-egnn"))


def test_wrong_input_dimension_names_accepted_shape():
    m = build_model("gcn", 8, 2)
    with pytest.raises(ValueError, match=r"in_channels=8.*\(num_nodes, 8\)"):
        m(torch.randn(4, 5), torch.tensor([[0], [1]]))
    with pytest.raises(ValueError, match=r"ids in \[0, 3\]"):
        m(torch.randn(4, 8), torch.tensor([[0], [7]]))
    pc = build_model("egnn", 1, 2)
    with pytest.raises(ValueError, match=r"in_channels=1.*\(5, 1\)"):
        pc(torch.ones(5, 3), torch.randn(5, 3))
    with pytest.raises(ValueError, match=r"pos must be .*\(num_points, 3\)"):
        pc(torch.ones(5, 1), torch.randn(5, 2))
    cat = build_model("egnn", 4, 2, categorical=True)
    with pytest.raises(ValueError, match=r"outside \[0, 3\]"):
        cat(torch.tensor([0, 1, 9]), torch.randn(3, 3))


def test_docstring_examples_run():
    import doctest

    import gs_models.node

    result = doctest.testmod(gs_models.node, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_structural_shifts_layer_order_is_the_authors():
    """Authors' ``ConvolutionLayer.forward`` (source/layers/general.py): conv -> GELU ->
    (+ skip) -> norm -> dropout. Checked against a hand-written forward pass."""
    torch.manual_seed(0)
    m = build_model("structural-shifts-base", 6, 3, hidden_channels=8).train()
    assert m.config.layer_order == "conv-act-norm"
    x = torch.randn(9, 6)
    ei = torch.tensor([[0, 1, 2, 3, 4, 5, 6, 7], [1, 2, 3, 4, 5, 6, 7, 8]])
    ei = torch.cat([ei, ei.flip(0)], 1)
    m.config = dataclasses.replace(m.config, dropout=0.0)
    h = x
    for conv, bn in zip(m.layers, m.norms, strict=True):
        h = bn(torch.nn.functional.gelu(conv(h, ei)))  # batch norm follows the activation
    torch.testing.assert_close(m(x, ei)[0], h, atol=1e-5, rtol=1e-5)
    # the earlier layout (batch norm before the activation) differs and stays available
    early = preset("structural-shifts-base-early-stop")
    assert early.layer_order == "conv-norm-act" and early.norm == "batch"


def test_structural_shifts_mod_is_the_authors_improved_config():
    """``improved_method_config.yaml``: linear -> LayerNorm (no activation: the block is
    ``final``; no dropout), then SAGE layers ``LayerNorm(GELU(sage(h)) + h)`` with dropout 0.2
    on the graph with self-loops (``dgl.add_self_loop``), then a linear head; the early-stop
    layout keeps the earlier GELU, neighbours-only mean and PyG initialisation."""
    from torch_geometric.utils import add_self_loops

    mod = preset("structural-shifts-mod")
    assert (mod.norm, mod.pre_dropout, mod.residual, mod.layer_order) == (
        "layer", 0.0, True, "conv-act-norm"
    )
    assert (mod.pre_activation, mod.sage_self_loops, mod.sage_init) == (False, True, "dgl")
    early = preset("structural-shifts-mod-early-stop")
    assert (early.pre_activation, early.sage_self_loops, early.sage_init) == (True, False, "pyg")
    torch.manual_seed(1)
    m = build_model("structural-shifts-mod", 5, 3, hidden_channels=8).eval()
    assert isinstance(m.pre_norm, torch.nn.LayerNorm)
    x = torch.randn(7, 5)
    ei = torch.tensor([[0, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 6]])
    looped = add_self_loops(ei, num_nodes=7)[0]
    h = m.pre_norm(m.pre(x))
    for conv, ln in zip(m.layers, m.norms, strict=True):
        h = ln(torch.nn.functional.gelu(conv(h, looped)) + h)
    emb, logits = m(x, ei)
    torch.testing.assert_close(emb, h, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(logits, m.head(h), atol=1e-5, rtol=1e-5)


def test_good_gcn_preset_is_goods_gcn_encoder():
    """GOOD's ``GCNEncoder`` (``GOOD/networks/models/GCNs.py``, ``configs/GOOD_configs/
    base.yaml``): 3 GCN layers x 300, conv -> batch norm -> ReLU -> dropout 0.5 on the hidden
    layers, the last conv without ReLU, a linear classifier."""
    cfg = preset("good-gcn")
    assert (cfg.model, cfg.hidden_channels, cfg.num_layers, cfg.dropout, cfg.activation) == (
        "gcn", 300, 3, 0.5, "relu")
    torch.manual_seed(0)
    m = build_model("good-gcn", 6, 3, hidden_channels=8).eval()
    x = torch.randn(9, 6)
    ei = torch.tensor([[0, 1, 2, 3, 4, 5, 6, 7], [1, 2, 3, 4, 5, 6, 7, 8]])
    ei = torch.cat([ei, ei.flip(0)], 1)
    h = x
    for i, (conv, bn) in enumerate(zip(m.layers, m.norms, strict=True)):
        h = conv(h, ei)
        if i < len(m.layers) - 1:
            h = torch.relu(bn(h))  # batch norm before the activation, none after the last conv
    emb, logits = m(x, ei)
    torch.testing.assert_close(emb, h, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(logits, m.head(h), atol=1e-5, rtol=1e-5)


def test_register_model_makes_build_model_accept_it():
    import dataclasses

    import pytest
    import torch

    from gs_models import available_models, build_model, register_model, unregister_model

    @dataclasses.dataclass(frozen=True)
    class ScaleConfig:
        scale: float = 2.0

    class Scale(torch.nn.Module):
        def __init__(self, in_channels, out_channels, config):
            super().__init__()
            self.config = config
            self.lin = torch.nn.Linear(in_channels, out_channels)

        def forward(self, x, edge_index):
            return x, self.config.scale * self.lin(x)

    register_model("toy-scale", ScaleConfig, Scale)
    try:
        assert "toy-scale" in available_models()
        assert build_model("toy-scale", 4, 2, scale=3.0).config.scale == 3.0
        with pytest.raises(ValueError, match="unknown option"):
            build_model("toy-scale", 4, 2, hidden_channels=8)
        with pytest.raises(ValueError, match="overwrite=True"):
            register_model("toy-scale", ScaleConfig, Scale)
    finally:
        unregister_model("toy-scale")
    assert "toy-scale" not in available_models()
    with pytest.raises(ValueError, match="cannot be replaced"):
        register_model("gcn", ScaleConfig, Scale)
    with pytest.raises(ValueError, match="cannot be unregistered"):
        unregister_model("gcn")
