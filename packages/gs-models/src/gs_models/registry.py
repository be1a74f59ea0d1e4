"""Build models by name, from paper presets or typed configs.

The registry is a plain dict defined here (no import-time side effects elsewhere). Add
your own model with :func:`register_model`; :func:`build_model` and
:func:`available_models` then accept it without another edit::

    from dataclasses import dataclass
    from gs_models import build_model, register_model

    @dataclass(frozen=True)
    class LinearConfig:
        bias: bool = True

    class Linear(torch.nn.Module):
        def __init__(self, in_channels, out_channels, config):
            super().__init__()
            self.lin = torch.nn.Linear(in_channels, out_channels, bias=config.bias)
        def forward(self, x, edge_index):
            return x, self.lin(x)          # (embeddings, outputs)

    register_model("linear", LinearConfig, Linear)
    model = build_model("linear", 16, 3, bias=False)
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gs_models.configs import (
    EDGEWISE_GCN,
    DirichletConfig,
    EPFGNNConfig,
    GMNNConfig,
    GPNConfig,
    NatPNConfig,
    NodeGNNConfig,
    PointCloudConfig,
    TrainingDefaults,
)

if TYPE_CHECKING:  # the models' modules, and torch with them, load at the first model built
    from torch import nn

__all__ = [
    "available_models",
    "available_presets",
    "build_model",
    "preset",
    "register_model",
    "training_defaults",
    "unregister_model",
]

# composite configs: overrides naming NodeGNNConfig fields go to this nested node config
_NESTED: dict[type, str] = {
    GMNNConfig: "q",
    EPFGNNConfig: "backbone",
    DirichletConfig: "backbone",
    NatPNConfig: "encoder",
}


def _lazy(module: str, name: str) -> Callable[..., nn.Module]:
    """The constructor ``gs_models.<module>.<name>``, imported at the first model built: the
    registry (presets, names, configs) does not import PyTorch Geometric (~5 s), so
    ``gs-bench report`` and the CLI's checks do not either."""
    def build(*args: Any, **kwargs: Any) -> nn.Module:
        return getattr(importlib.import_module(f"gs_models.{module}"), name)(*args, **kwargs)

    build.__name__ = build.__qualname__ = name
    return build


_NODE_GNN = _lazy("node", "NodeGNN")

# model name -> (config class, constructor, default config factory)
_MODELS: dict[str, tuple[type, Callable[..., nn.Module], Callable[[], Any]]] = {
    "mlp": (NodeGNNConfig, _NODE_GNN, lambda: NodeGNNConfig(model="mlp")),
    "gcn": (NodeGNNConfig, _NODE_GNN, lambda: NodeGNNConfig(model="gcn")),
    "sage": (NodeGNNConfig, _NODE_GNN, lambda: NodeGNNConfig(model="sage")),
    "gat": (NodeGNNConfig, _NODE_GNN, lambda: NodeGNNConfig(model="gat")),
    "gin": (NodeGNNConfig, _NODE_GNN, lambda: NodeGNNConfig(model="gin")),
    "gmnn": (GMNNConfig, _lazy("structured", "GMNN"), GMNNConfig),
    "epfgnn": (EPFGNNConfig, _lazy("structured", "EPFGNN"), EPFGNNConfig),
    "dirichlet": (DirichletConfig, _lazy("posterior", "DirichletHead"), DirichletConfig),
    "gpn": (GPNConfig, _lazy("posterior", "GraphPosteriorNetwork"), GPNConfig),
    "natpn": (NatPNConfig, _lazy("posterior", "NaturalPosteriorNetwork"), NatPNConfig),
    "egnn": (PointCloudConfig, _lazy("pointcloud", "EGNN"), lambda: PointCloudConfig(model="egnn")),
    "dgcnn": (PointCloudConfig, _lazy("pointcloud", "DGCNN"), lambda: PointCloudConfig(model="dgcnn")),
    "pointtransformer": (
        PointCloudConfig,
        _lazy("pointcloud", "PointTransformer"),
        lambda: PointCloudConfig(model="pointtransformer", hidden_channels=32),
    ),
}

# Structural shifts, appendix F, in the authors' layer order (conv -> GELU -> batch norm ->
# dropout; ``configs/method_configs/mpn/standard_method_config.yaml`` and
# ``source/layers/general.py`` of yandex-research/structural-graph-shifts).
_SS_BASE = NodeGNNConfig(
    model="gcn",
    hidden_channels=256,
    num_layers=3,
    dropout=0.2,
    norm="batch",
    activation="gelu",
    head="linear",
    layer_order="conv-act-norm",
)
# "+mod" (section 5.3) as the authors' ``improved_method_config.yaml``: linear -> LayerNorm
# pre-processing without activation (the block is ``final: True``, whose activation is the
# identity: ``source/layers/general.py``) or dropout, 2 SAGE (mean) layers with the skip added
# before LayerNorm, dropout 0.2, linear head. SAGE as DGL's on the authors' graphs: the mean
# over the node and its neighbours (``dgl.add_self_loop`` in ``source/data/utils.py``) and
# DGL's initialisation (xavier, gain sqrt(2), zero bias). The three were GELU, the neighbours
# only and PyG's initialisation before issue 30 (apps/bench/checks/structural_mod_architecture.py:
# mean |delta| to the paper 1.37 -> 0.48 points over 18 cells).
_SS_MOD = NodeGNNConfig(
    model="sage",
    hidden_channels=256,
    num_layers=2,
    dropout=0.2,
    norm="layer",
    activation="gelu",
    head="linear",
    pre_linear=True,
    residual=True,
    layer_order="conv-act-norm",
    pre_dropout=0.0,
    pre_activation=False,
    sage_self_loops=True,
    sage_init="dgl",
)
# Our earlier layouts (conv -> batch norm -> GELU; "+mod" with batch norm and dropout after
# the input linear), kept as the "early-stop" protocol of the structural-shifts suite.
# GPN of the structural-shifts authors (``configs/method_configs/gpn/standard_method_config.yaml``):
# a graph-free encoder of 3 x (linear 256 -> GELU -> batch norm -> dropout 0.2) and a linear
# projector 256 -> 16, 8 radial flows, APPNP K = 5, alpha = 0.2, class factor N_c / N.
_SS_GPN = GPNConfig(
    encoder=dataclasses.replace(_SS_BASE, model="mlp"),
    flow_layers=8,
    appnp_K=5,
    appnp_alpha=0.2,
    class_factor="frequency",
)
# GOOD's node-level GCN (divelab/GOOD ``GOOD/networks/models/GCNs.py`` GCNEncoder with
# ``configs/GOOD_configs/base.yaml`` / ``GOODCora/base.yaml``): 3 GCN layers x 300, each
# conv -> batch norm -> ReLU -> dropout 0.5 but the last (conv -> batch norm -> dropout, no
# ReLU), a linear classifier. Here the last layer has no batch norm either (our
# ``last_activation=False`` drops both), the one difference.
_GOOD_GCN = NodeGNNConfig(
    model="gcn",
    hidden_channels=300,
    num_layers=3,
    dropout=0.5,
    norm="batch",
    activation="relu",
    head="linear",
    layer_order="conv-norm-act",
    last_activation=False,
)
_SS_BASE_EARLY = dataclasses.replace(_SS_BASE, layer_order="conv-norm-act")
_SS_MOD_EARLY = dataclasses.replace(_SS_MOD, norm="batch", layer_order="conv-norm-act", pre_dropout=None,
                                    pre_activation=True, sage_self_loops=False, sage_init="pyg")
#: GAT of the edgewise paper (appendix C.2: 2 layers, 8 heads x 8 hidden) as in the authors'
#: ``src/model/model.py``: dropout 0.5 on the input of every layer (input dropout and the
#: dropout before the output layer) and attention dropout 0.5 (``GATConv(dropout=0.5)``).
_EW_GAT = NodeGNNConfig(
    model="gat",
    hidden_channels=64,
    heads=8,
    num_layers=2,
    dropout=0.5,
    input_dropout=0.5,
    attention_dropout=0.5,
    norm=None,
    activation="elu",
    head="conv",
)


def _lebed(model: str) -> NodeGNNConfig:
    """The encoders of the LeBed authors' code (PyG ``GCN`` / ``GraphSAGE`` / ``GAT`` / ``GIN`` /
    ``MLP`` with 256 hidden and 32 output channels, 2 layers, PyG's defaults) plus a linear
    classifier. PyG's ``MLP`` normalises by default (``norm="batch_norm"``: Linear, BatchNorm,
    ReLU, Linear; the BasicGNN models do not), as the authors' saved initial MLP parameters
    show (``init_cora_amazon/init_params/MLP_256_32/init_encoder.pt`` holds ``norms.0``); the
    paper does not describe the MLP. Without the batch norm LeBed's re-training of the MLP on
    the Cora feature shift runs about 6x as many steps (issue 30,
    ``apps/bench/checks/lebed_stop_steps.py``). The classifier starts as the authors' (xavier
    weight, zero bias): with torch's default there, the ACMv9 SAGE re-training ran longer on
    the masked and edge-dropped graphs and LeBed's ρ over the 36 ``ci`` graphs was 0.35
    instead of 0.52 (``lebed_stop_steps.py --dataset acmv9 --model sage``)."""
    return NodeGNNConfig(
        model=model,
        hidden_channels=256,
        embedding_channels=32,
        num_layers=2,
        dropout=0.0,
        # the norm of the last encoder layer exists but is never applied (no last activation)
        norm="batch" if model == "mlp" else None,
        activation="relu",
        head="linear",
        # the authors' classifier: xavier-uniform weight, zero bias (pretrain-lebed.py:89-90,
        # pretrain_gnn_domain.py:94-95); LeBed re-trains from this initial state
        head_init="xavier",
        last_activation=False,  # PyG BasicGNN encoders of the authors' code end without one
    )


# preset name -> (model name, config, training defaults)
_PRESETS: dict[str, tuple[str, Any, TrainingDefaults]] = {
    "structural-shifts-base": (
        "gcn",
        _SS_BASE,
        TrainingDefaults(lr=3e-4, weight_decay=1e-5, source="structural-shifts, appendix F"),
    ),
    "structural-shifts-mod": (
        "sage",
        _SS_MOD,
        TrainingDefaults(
            lr=3e-4, weight_decay=1e-5, source="structural-shifts, section 5.3 / appendix F"
        ),
    ),
    "good-gcn": (
        "gcn",
        _GOOD_GCN,
        TrainingDefaults(lr=1e-3, weight_decay=0.0, source="GOOD benchmark, GOODCora configs"),
    ),
    "structural-shifts-base-early-stop": (
        "gcn",
        _SS_BASE_EARLY,
        TrainingDefaults(lr=3e-4, weight_decay=1e-5, source="our earlier structural-shifts layout"),
    ),
    "structural-shifts-mod-early-stop": (
        "sage",
        _SS_MOD_EARLY,
        TrainingDefaults(lr=3e-4, weight_decay=1e-5, source="our earlier structural-shifts layout"),
    ),
    "structural-shifts-dirichlet": (
        "dirichlet",
        DirichletConfig(backbone=_SS_BASE),
        TrainingDefaults(lr=3e-4, weight_decay=1e-5, source="structural-shifts, appendix F"),
    ),
    "structural-shifts-gpn": (
        "gpn",
        _SS_GPN,
        TrainingDefaults(
            lr=3e-4,
            weight_decay=1e-5,
            source="structural-shifts, appendix F; authors' gpn/standard_method_config.yaml",
        ),
    ),
    "structural-shifts-gpn-stadler2021": (
        "gpn",
        GPNConfig(),
        TrainingDefaults(
            lr=3e-4, weight_decay=1e-5, source="structural-shifts, appendix F; GPN paper defaults"
        ),
    ),
    "structural-shifts-natpn": (
        "natpn",
        NatPNConfig(encoder=_SS_BASE),
        TrainingDefaults(
            lr=3e-4,
            weight_decay=1e-5,
            source="structural-shifts, section 4 / appendix F; authors' natpn model",
        ),
    ),
    "structural-shifts-natpn-latent-head": (
        "natpn",
        NatPNConfig(encoder=_SS_BASE, predictor="latent"),
        TrainingDefaults(lr=3e-4, weight_decay=1e-5, source="our earlier NatPN layout"),
    ),
    "edgewise-gcn": (
        "gcn",
        EDGEWISE_GCN,
        TrainingDefaults(
            lr=0.01, weight_decay=5e-4, max_epochs=2000, source="edgewise-calibration, appendix C.2"
        ),
    ),
    "edgewise-gat": (
        "gat",
        _EW_GAT,
        TrainingDefaults(
            lr=0.01, weight_decay=5e-4, max_epochs=2000, source="edgewise-calibration, appendix C.2"
        ),
    ),
    "edgewise-gmnn": (
        "gmnn",
        GMNNConfig(q=EDGEWISE_GCN),
        TrainingDefaults(lr=0.01, weight_decay=5e-4, source="edgewise-calibration, appendix C.2"),
    ),
    "edgewise-epfgnn": (
        "epfgnn",
        EPFGNNConfig(backbone=EDGEWISE_GCN),
        TrainingDefaults(lr=0.01, weight_decay=5e-4, source="edgewise-calibration, appendix C.2"),
    ),
    **{
        f"lebed-{m}": (
            m,
            _lebed(m),
            TrainingDefaults(
                lr=0.01, weight_decay=5e-4, source="LeBed, section 3.1 (settings from the gs issue)"
            ),
        )
        for m in ("gcn", "sage", "gat", "gin", "mlp")
    },
    "gess-egnn": (
        "egnn",
        PointCloudConfig(model="egnn", hidden_channels=64),
        TrainingDefaults(lr=1e-3, weight_decay=1e-5, source="GeSS, appendix F"),
    ),
    "gess-dgcnn": (
        "dgcnn",
        PointCloudConfig(model="dgcnn", hidden_channels=64),
        TrainingDefaults(lr=1e-3, weight_decay=1e-5, source="GeSS, appendix F"),
    ),
    "gess-pointtransformer": (
        "pointtransformer",
        PointCloudConfig(model="pointtransformer", hidden_channels=32),
        TrainingDefaults(lr=1e-3, weight_decay=1e-5, source="GeSS, appendix F"),
    ),
}


#: the models shipped with gs-models (cannot be replaced or unregistered)
_BUILTIN_MODELS = frozenset(_MODELS)


def register_model(name: str, config_class: type, constructor: Callable[..., nn.Module],
                   default_config: Callable[[], Any] | None = None, *,
                   overwrite: bool = False) -> None:
    """Add a model: ``constructor(in_channels, out_channels, config) -> nn.Module``.

    ``config_class`` is a (frozen) dataclass of the model's hyperparameters, whose defaults
    should be the paper's settings; ``default_config`` builds the default config (default:
    ``config_class()``). :func:`build_model` then accepts ``name`` with field overrides or
    ``config=``. Node-level models return ``(embeddings, outputs)`` from
    ``forward(x, edge_index)``, as the engine of gs-algos expects. ``overwrite=True`` replaces
    a model you registered before; the shipped ones cannot be replaced.
    """
    if not isinstance(name, str) or not name or name != name.strip().lower():
        raise ValueError(f"model name must be a non-empty lower-case str, got {name!r}")
    if not dataclasses.is_dataclass(config_class) or not isinstance(config_class, type):
        raise TypeError(f"config_class must be a dataclass type, got {config_class!r}")
    if not callable(constructor):
        raise TypeError("constructor must be callable (in_channels, out_channels, config) -> nn.Module")
    if name in _BUILTIN_MODELS or name in _PRESETS:
        raise ValueError(f"model {name!r} ships with gs-models and cannot be replaced")
    if name in _MODELS and not overwrite:
        raise ValueError(f"model {name!r} exists already; pass overwrite=True to replace it")
    _MODELS[name] = (config_class, constructor, default_config or config_class)


def unregister_model(name: str) -> None:
    """Remove a model added by :func:`register_model` (the shipped ones stay)."""
    if name in _BUILTIN_MODELS or name in _PRESETS:
        raise ValueError(f"model {name!r} ships with gs-models and cannot be unregistered")
    if name not in _MODELS:
        raise ValueError(f"no registered model {name!r}")
    del _MODELS[name]


def available_models() -> list[str]:
    """Names accepted by :func:`build_model` (models, then presets)."""
    return sorted(_MODELS) + sorted(_PRESETS)


def available_presets() -> list[str]:
    """Names accepted by :func:`preset`."""
    return sorted(_PRESETS)


def preset(name: str) -> Any:
    """Typed config of a paper preset (e.g. ``"structural-shifts-base"``, ``"gess-egnn"``).

    Raises
    ------
    ValueError
        For an unknown name; the message lists the accepted names.
    """
    if name not in _PRESETS:
        raise ValueError(f"unknown preset {name!r}; accepted presets: {available_presets()}")
    return _PRESETS[name][1]


def training_defaults(name: str) -> TrainingDefaults:
    """Optimiser settings the paper used with preset ``name``."""
    if name not in _PRESETS:
        raise ValueError(f"unknown preset {name!r}; accepted presets: {available_presets()}")
    return _PRESETS[name][2]


def build_model(
    name: str, in_channels: int, out_channels: int, **overrides_or_config: Any
) -> nn.Module:
    """Create a model by model name or preset name.

    Parameters
    ----------
    name : str
        A model (``"mlp"``, ``"gcn"``, ``"sage"``, ``"gat"``, ``"gin"``, ``"gmnn"``,
        ``"epfgnn"``, ``"dirichlet"``, ``"gpn"``, ``"natpn"``, ``"egnn"``, ``"dgcnn"``,
        ``"pointtransformer"``) or a preset (:func:`available_presets`).
    in_channels : int
        Input feature width (number of categories for categorical point features).
    out_channels : int
        Number of outputs (classes / regression targets).
    **overrides_or_config
        Either ``config=<typed config>`` and/or field overrides of the config
        (e.g. ``hidden_channels=64``), applied on top of the preset / model defaults. For
        composite models (GMNN, EPFGNN, Dirichlet head, NatPN) fields of the nested
        :class:`NodeGNNConfig` (``q`` / ``backbone`` / ``encoder``) may be overridden directly.

    Returns
    -------
    torch.nn.Module
        Node-level models: ``forward(x, edge_index) -> (embeddings, logits)``; point-cloud
        backbones: ``forward(x, pos, batch) -> (graph_embeddings, outputs)``; Dirichlet
        modules: ``forward(x, edge_index) -> (embeddings, alpha)``.

    Raises
    ------
    ValueError
        Unknown name, unknown override field or invalid value; the message lists what is
        accepted.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, one of {available_models()}")
    if name in _PRESETS:
        model_name, base, _ = _PRESETS[name]
    elif name in _MODELS:
        model_name, base = name, None
    else:
        raise ValueError(f"unknown model {name!r}; accepted names: {available_models()}")
    cfg_cls, ctor, default = _MODELS[model_name]
    overrides = dict(overrides_or_config)
    config = overrides.pop("config", None)
    if config is None:
        config = base if base is not None else default()
    if not isinstance(config, cfg_cls):
        raise TypeError(
            f"config for {name!r} must be a {cfg_cls.__name__}, got {type(config).__name__}"
        )
    if overrides:
        fields = {f.name for f in dataclasses.fields(cfg_cls)}
        nested = _NESTED.get(cfg_cls)
        node_fields = {f.name for f in dataclasses.fields(NodeGNNConfig)} if nested else set()
        own = {k: v for k, v in overrides.items() if k in fields}
        inner = {k: v for k, v in overrides.items() if k not in fields and k in node_fields}
        unknown = sorted(set(overrides) - set(own) - set(inner))
        if unknown:
            accepted = sorted(fields | node_fields | {"config"})
            raise ValueError(f"unknown option(s) {unknown} for {name!r}; accepted: {accepted}")
        if inner:
            own[nested] = dataclasses.replace(own.get(nested, getattr(config, nested)), **inner)
        config = dataclasses.replace(config, **own)
    if cfg_cls is NodeGNNConfig and config.model != model_name:
        raise ValueError(
            f"{name!r} builds model {model_name!r} but config.model={config.model!r}; "
            f"use build_model({config.model!r}, ...) or drop the model override"
        )
    if cfg_cls is PointCloudConfig and config.model != model_name:
        raise ValueError(f"{name!r} builds model {model_name!r} but config.model={config.model!r}")
    return ctor(in_channels, out_channels, config)
