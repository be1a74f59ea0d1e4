"""Typed configurations of every model in gs-models.

Defaults are the papers' settings (each class cites its source). Every config validates
itself in ``__post_init__`` and raises :class:`ValueError` naming the field and the
accepted values. Configs are frozen dataclasses: derive variants with
:func:`dataclasses.replace` (or pass overrides to :func:`gs_models.build_model`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gs_models._validation import check_positive_int, check_probability

__all__ = [
    "ACTIVATIONS",
    "LAYER_ORDERS",
    "NODE_MODELS",
    "NORMS",
    "POINT_CLOUD_MODELS",
    "EDGE_FEATURES",
    "POOLS",
    "CERTAINTY_BUDGETS",
    "EVIDENCE_ACTIVATIONS",
    "GPN_CLASS_FACTORS",
    "NATPN_PREDICTORS",
    "DirichletConfig",
    "EPFGNNConfig",
    "GMNNConfig",
    "GPNConfig",
    "NatPNConfig",
    "NodeGNNConfig",
    "PointCloudConfig",
    "TrainingDefaults",
    "EDGEWISE_GCN",
    "GESS_KNN_K",
]

NODE_MODELS = ("mlp", "gcn", "sage", "gat", "gin")
POINT_CLOUD_MODELS = ("egnn", "dgcnn", "pointtransformer")
#: ``PointCloudConfig.edge_features``: what each coordinate-kNN edge carries into the messages.
EDGE_FEATURES = ("distance_direction", "distance", "none", "distance_direction_beam",
                 "distance_direction_beam_abs")
NORMS = (None, "batch", "layer")
#: ``PointCloudConfig.pool``: how the point representations of a cloud become its embedding.
POOLS = ("sum", "mean", "max")
#: Point Transformer's positional term (``PointCloudConfig.pt_delta``).
PT_DELTAS = ("position", "edge_mlp")
LAYER_ORDERS = ("conv-norm-act", "conv-act-norm")
ACTIVATIONS = ("relu", "gelu", "elu", "leaky_relu", "silu", "tanh", "identity")
EVIDENCE_ACTIVATIONS = ("softplus", "exp", "relu")
GPN_CLASS_FACTORS = ("count", "frequency")
NATPN_PREDICTORS = ("latent", "representation")
CERTAINTY_BUDGETS = ("constant", "exp-half", "exp", "normal")
#: ``variant`` of GMNN / EPFGNN: the authors' released code, or our first implementation
STRUCTURED_VARIANTS = ("released", "ours-v1")
#: ``EPFGNNConfig.lbp_clamp``: where the released loopy BP writes the gold unaries
EPFGNN_LBP_CLAMPS = ("as-released", "observed")

#: Number of nearest neighbours of the kNN graph per GeSS dataset (GeSS, appendix B / D.1).
GESS_KNN_K: dict[str, int] = {"track": 5, "qmof": 10, "drugood-3d": 3}


def _choice(value: object, name: str, accepted: tuple) -> None:
    if value not in accepted:
        raise ValueError(f"{name}={value!r} is not accepted; choose one of {list(accepted)}")


@dataclass(frozen=True)
class NodeGNNConfig:
    """Node-level GNN (MLP, GCN, SAGE, GAT, GIN) built from PyG layers.

    The defaults are the *base* architecture of the structural-shifts paper (Bazhenov et al.,
    appendix F): three GCN layers, hidden 256, dropout 0.2, batch normalisation, GELU, and a
    single linear layer as the task head.

    Parameters
    ----------
    model : {"mlp", "gcn", "sage", "gat", "gin"}
        Message-passing layer (``"mlp"`` uses linear layers and ignores the graph).
    hidden_channels : int
        Width of hidden layers. For GAT this is the *total* width: ``heads`` heads of
        ``hidden_channels // heads`` channels each, concatenated.
    num_layers : int
        With ``head="linear"``: number of encoder layers below the linear head. With
        ``head="conv"``: total number of message-passing layers, the last one mapping to the
        outputs (the classic Kipf-Welling / Velickovic layout).
    embedding_channels : int or None
        Width of the last encoder layer (the returned embeddings); ``None`` means
        ``hidden_channels``. LeBed uses hidden 256 and embeddings of width 32.
    dropout : float
        Dropout probability between layers (and before the head).
    input_dropout : float
        Dropout on the input features.
    norm : {None, "batch", "layer"}
        Normalisation after each hidden message-passing layer.
    activation : str
        One of :data:`ACTIVATIONS`.
    residual : bool
        Skip connections ``h <- h + layer(h)`` between layers of equal width.
    pre_linear : bool
        A linear pre-processing layer (``in -> hidden`` + activation) before the first graph
        layer (structural-shifts, section 5.3: the "improved" architecture).
    layer_order : {"conv-norm-act", "conv-act-norm"}
        Order inside a hidden layer. ``"conv-norm-act"``: ``act(norm(conv(h)))``, a skip
        connection added after the activation (our earlier layout). ``"conv-act-norm"``:
        ``norm(act(conv(h)) + h)``, the skip added before the norm, and the pre-processing
        linear layer also followed by the norm: the structural-shifts authors' layout
        (``source/layers/general.py``, ``ConvolutionLayer`` / ``FeedForwardLayer``; repository
        yandex-research/structural-graph-shifts).
    pre_dropout : float or None
        Dropout after the pre-processing linear layer; ``None`` = ``dropout``. The authors'
        "improved" config (``configs/method_configs/mpn/improved_method_config.yaml``) uses 0.
    head : {"linear", "conv"}
        Output layer type (see ``num_layers``).
    heads : int
        GAT attention heads in hidden layers (the output GAT layer has one head).
    attention_dropout : float
        GAT dropout on attention coefficients.
    gin_train_eps : bool
        Learn GIN's epsilon.
    sage_aggr : str
        SAGE neighbourhood aggregation (``"mean"``, ``"max"``, ``"sum"``).
    sage_self_loops : bool
        SAGE: count every node among its own neighbours (one self-loop per node, added where
        the graph has none) before aggregating, so the mean runs over ``N(v) + {v}`` beside the
        separate root weight. The structural-shifts authors' graphs pass through
        ``dgl.add_self_loop`` (``source/data/utils.py``, ``process_homogenous_graph``) before
        DGL's ``SAGEConv`` sees them; PyG's mean aggregates over ``N(v)`` only (and gives an
        isolated node 0).
    sage_init : {"pyg", "dgl"}
        SAGE weight initialisation: ``"pyg"``, PyG's ``Linear`` default (kaiming-uniform with
        ``a = sqrt(5)``, bound ``1 / sqrt(fan_in)``, bias uniform in the same bound); ``"dgl"``,
        DGL's ``SAGEConv.reset_parameters`` (xavier-uniform with gain ``sqrt(2)`` on the root and
        neighbour weights, bias zero), the authors' library.
    head_init : {"torch", "xavier"}
        Initialisation of the linear head (``head="linear"``): ``"torch"``, ``nn.Linear``'s
        default (kaiming-uniform with ``a = sqrt(5)``, bias uniform in ``1 / sqrt(fan_in)``);
        ``"xavier"``, xavier-uniform weight (gain 1) and zero bias, as the LeBed authors'
        classifier (``pretrain-lebed.py:89-90``, ``pretrain_gnn_domain.py:94-95`` of
        Amanda-Zheng/LEBED: ``nn.init.xavier_uniform_(cls_model[0].weight)``,
        ``nn.init.constant_(cls_model[0].bias, 0.0)``). LeBed re-trains from this initial
        state, so it sets where every re-training starts (issue 30).
    pre_activation : bool
        Apply the activation after the pre-processing linear layer (``pre_linear``). The
        structural-shifts authors' "improved" model has none there: its pre-processing block is
        ``final: True`` (``improved_method_config.yaml``), and a final layer's activation is
        ``nn.Identity()`` (``source/layers/general.py``); appendix F calls it a "pre-processing
        step based on linear layer".
    last_activation : bool
        Apply the activation (and norm) after the last encoder layer too. ``False`` gives raw
        embeddings, as PyG's ``BasicGNN`` / ``MLP`` that the LeBed authors use (their
        ``torch_geometric.nn.GCN(...)`` encoders end without an activation).
    """

    model: str = "gcn"
    hidden_channels: int = 256
    num_layers: int = 3
    embedding_channels: int | None = None
    dropout: float = 0.2
    input_dropout: float = 0.0
    norm: str | None = "batch"
    activation: str = "gelu"
    residual: bool = False
    pre_linear: bool = False
    layer_order: str = "conv-norm-act"
    pre_dropout: float | None = None
    head: str = "linear"
    heads: int = 1
    attention_dropout: float = 0.0
    gin_train_eps: bool = False
    sage_aggr: str = "mean"
    sage_self_loops: bool = False
    sage_init: str = "pyg"
    head_init: str = "torch"
    pre_activation: bool = True
    last_activation: bool = True

    def __post_init__(self) -> None:
        _choice(self.model, "model", NODE_MODELS)
        check_positive_int(self.hidden_channels, "hidden_channels")
        check_positive_int(self.num_layers, "num_layers")
        if self.embedding_channels is not None:
            check_positive_int(self.embedding_channels, "embedding_channels")
        check_probability(self.dropout, "dropout")
        check_probability(self.input_dropout, "input_dropout")
        check_probability(self.attention_dropout, "attention_dropout")
        _choice(self.norm, "norm", NORMS)
        _choice(self.activation, "activation", ACTIVATIONS)
        _choice(self.head, "head", ("linear", "conv"))
        _choice(self.layer_order, "layer_order", LAYER_ORDERS)
        if self.pre_dropout is not None:
            check_probability(self.pre_dropout, "pre_dropout")
        _choice(self.sage_aggr, "sage_aggr", ("mean", "max", "sum"))
        _choice(self.sage_init, "sage_init", ("pyg", "dgl"))
        _choice(self.head_init, "head_init", ("torch", "xavier"))
        if self.head_init != "torch" and self.head != "linear":
            raise ValueError(
                f"head_init={self.head_init!r} needs head='linear' (got head={self.head!r}); "
                "accepted with a graph-layer head: 'torch'"
            )
        check_positive_int(self.heads, "heads")
        if self.model == "gat":
            for width_name in ("hidden_channels", "embedding_channels"):
                width = getattr(self, width_name)
                if width is not None and width % self.heads:
                    raise ValueError(
                        f"{width_name}={width} must be divisible by heads={self.heads} for GAT "
                        f"(accepted: multiples of {self.heads})"
                    )

    @property
    def embedding_width(self) -> int:
        """Width of the embeddings returned by ``forward``."""
        return (
            self.embedding_channels if self.embedding_channels is not None else self.hidden_channels
        )


#: The GCN of the edgewise-calibration paper (appendix C.2: 2 layers x 64, dropout 0.5, ReLU,
#: no normalisation, a GCN layer as output): the one definition, used by the ``edgewise-gcn``
#: preset and as the default GMNN ``q`` / EPFGNN backbone.
EDGEWISE_GCN = NodeGNNConfig(
    model="gcn",
    hidden_channels=64,
    num_layers=2,
    dropout=0.5,
    norm=None,
    activation="relu",
    head="conv",
)


@dataclass(frozen=True)
class GMNNConfig:
    """Graph Markov Neural Network (Qu, Bengio & Tang, ICML 2019) as set up in the edgewise paper.

    ``q`` is the GNN backbone (object classifier ``q_theta(y_n | x)``); the second network
    ``p_phi(y_n | y_NB(n))`` approximates the CRF and is trained by pseudo-likelihood. Both
    use the baseline GCN settings (edgewise paper, appendix C.2: 2 layers x 64, dropout 0.5).
    The ``p`` network propagates the neighbours' labels once *without* the node's own label
    (a GCN layer without self-loops) followed by a linear layer, so that its output is a
    genuine conditional ``p(y_n | y_NB(n))`` (a second propagation would route ``y_n`` back
    through the neighbours).

    ``variant="released"`` (default) follows the authors' released code
    (hans66hsu/structured_uncertainty_metrics, ``src/model/model.py``, class ``GMNN``): ``p``
    is a 2-layer GCN (``C -> p_hidden_channels -> C``, with self-loops, dropout ``p_dropout``)
    and the node marginals are ``softmax`` of ``p``'s logits averaged over ``num_samples``
    label sets drawn from ``q`` (gold labels on observed nodes; ``GMNN.forward`` with
    ``--inference p --num_samples 32``); the edge joints are the products of those node
    marginals (their ``src/evaluation.py`` scores every model on node log-probabilities).

    ``variant="ours-v1"`` is our earlier model: ``p`` propagates the neighbours' labels once
    *without* the node's own label (a GCN layer without self-loops) followed by a linear
    layer, so that its output is a genuine conditional ``p(y_n | y_NB(n))``, and the
    ``num_samples`` chains give Rao-Blackwellised node and edge marginals. Each chain is drawn
    from ``q`` and then refined by ``gibbs_sweeps`` chromatic Gibbs sweeps of ``p``'s
    conditionals (``ours-v1`` only). More sweeps move the samples towards ``p``'s own joint,
    which ignores the features: use them only together with observed labels (``y``,
    ``observed_mask``), which anchor the chains.
    """

    q: NodeGNNConfig = EDGEWISE_GCN
    p_hidden_channels: int = 64
    p_dropout: float = 0.5
    num_samples: int = 32
    gibbs_sweeps: int = 0
    variant: str = "released"

    def __post_init__(self) -> None:
        if not isinstance(self.q, NodeGNNConfig):
            raise TypeError(f"q must be a NodeGNNConfig, got {type(self.q).__name__}")
        _choice(self.variant, "variant", STRUCTURED_VARIANTS)
        if self.variant == "released" and self.gibbs_sweeps:
            raise ValueError("gibbs_sweeps > 0 needs variant='ours-v1' (the released GMNN does not resample)")
        check_positive_int(self.p_hidden_channels, "p_hidden_channels")
        check_probability(self.p_dropout, "p_dropout")
        check_positive_int(self.num_samples, "num_samples")
        check_positive_int(self.gibbs_sweeps, "gibbs_sweeps", minimum=0)


@dataclass(frozen=True)
class EPFGNNConfig:
    """Explicit Pairwise Factorized GNN (Wang, Shen & Cremers, UAI 2021) as in the edgewise paper.

    A GCN backbone gives the unary log-potentials of a pairwise MRF whose pairwise
    log-potential is one shared (symmetric) ``C x C`` compatibility matrix. Mean field
    (``mean_field_iterations``) is the training-time inference; loopy belief propagation with
    ``lbp_iterations`` (100 in the paper) gives the edge marginals for evaluation.

    ``variant="released"`` (default) follows the authors' ``src/model/model.py`` (class
    ``EPFGNN``) and ``src/model/PWEM.py``: the compatibility starts at ``(randn + I) / C``,
    every undirected edge carries a ReZero weight (starting at zero) that scales the
    compatibility, the M-step objective is over star pieces with degree-redistributed unaries
    (``unary / (deg + 1)``) and halved compatibility, mean field is one update from the EM
    proposal, and loopy BP is *max-product* without damping (``src/model/lbp.py``) on unaries
    whose gaps are capped at 20. ``variant="ours-v1"``: compatibility from zero, no edge
    weights, edge pieces, sum-product loopy BP with damping ``lbp_damping``.
    ``lbp_damping=None``: 0 for ``released``, 0.5 for ``ours-v1``.

    ``lbp_clamp`` (``released`` only) says how loopy BP treats the observed (training) labels.
    ``"as-released"`` (default) does what ``EPFGNN.loopy_bp`` in ``src/model/model.py`` does:
    it sets every class of the training nodes to energy ``1e5`` and then writes the gold
    energies back with ``unary.scatter_(1, gt, gt_ue)`` on the full ``(N, C)`` tensor. The
    k-th gold energy therefore lands on node ``k`` (rows ``0 .. n_train - 1``), not on the
    k-th training node. The training nodes end up with flat unaries, and the low-index nodes,
    most of them test nodes, get one class overwritten. The paper's Table 1 / 3 EPFGNN
    numbers come from this (issue 15). ``"observed"``: the clamp that was intended, gold
    label on the training rows.
    """

    backbone: NodeGNNConfig = EDGEWISE_GCN
    mean_field_iterations: int = 10
    lbp_iterations: int = 100
    lbp_damping: float | None = None
    lbp_tolerance: float = 1e-6
    variant: str = "released"
    lbp_clamp: str = "as-released"

    def __post_init__(self) -> None:
        if not isinstance(self.backbone, NodeGNNConfig):
            raise TypeError(f"backbone must be a NodeGNNConfig, got {type(self.backbone).__name__}")
        _choice(self.variant, "variant", STRUCTURED_VARIANTS)
        _choice(self.lbp_clamp, "lbp_clamp", EPFGNN_LBP_CLAMPS)
        check_positive_int(self.mean_field_iterations, "mean_field_iterations", minimum=0)
        check_positive_int(self.lbp_iterations, "lbp_iterations")
        if self.lbp_damping is not None:
            check_probability(self.lbp_damping, "lbp_damping")
        if not self.lbp_tolerance >= 0:
            raise ValueError(f"lbp_tolerance must be >= 0, got {self.lbp_tolerance}")


@dataclass(frozen=True)
class DirichletConfig:
    """Dirichlet evidence head on a node-level GNN (structural-shifts paper, appendix F).

    The backbone's linear head predicts evidence ``e = act(logits) >= 0``; the Dirichlet
    parameters are ``alpha = prior + e``.
    """

    backbone: NodeGNNConfig = field(default_factory=NodeGNNConfig)
    evidence: str = "softplus"
    prior: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.backbone, NodeGNNConfig):
            raise TypeError(f"backbone must be a NodeGNNConfig, got {type(self.backbone).__name__}")
        _choice(self.evidence, "evidence", EVIDENCE_ACTIVATIONS)
        if not self.prior > 0:
            raise ValueError(f"prior must be > 0 (Dirichlet concentration), got {self.prior}")


@dataclass(frozen=True)
class GPNConfig:
    """Graph Posterior Network (Stadler et al., NeurIPS 2021), the GPN of the structural-shifts paper.

    A feature encoder (no graph) maps each node to a ``latent_dim`` latent code, one radial
    flow of ``flow_layers`` transformations per class gives ``p(z | c)``, the class evidence
    ``beta_c = f_c * p(z | c)`` is scaled by the certainty budget, then APPNP propagation
    (``appnp_K`` steps, teleport ``appnp_alpha``) spreads the evidence over the graph.

    The defaults are the GPN paper's model: encoder MLP with one hidden layer
    (``hidden_channels`` = 64, ReLU, ``dropout`` 0.5), 10 radial layers, K = 10,
    alpha = 0.1, class factor ``f_c = N_c`` (training count). The structural-shifts
    authors' model (preset ``structural-shifts-gpn``) sets ``encoder`` instead.

    Parameters
    ----------
    encoder : NodeGNNConfig or None
        The feature encoder as a graph-free :class:`NodeGNNConfig` (``model="mlp"``; its linear
        head maps to ``latent_dim``). ``None``: the GPN paper's MLP built from
        ``hidden_channels``, ``dropout`` and ``input_dropout``. The structural-shifts authors'
        encoder is 3 x (linear 256 -> GELU -> batch norm -> dropout 0.2) and a linear
        projector 256 -> 16 (``configs/method_configs/gpn/standard_method_config.yaml``
        ``encoder_config`` / ``projector_config``; layer order of
        ``source/layers/general.py`` ``FeedForwardLayer``).
    class_factor : {"count", "frequency"}
        ``f_c`` of the evidence: ``"count"`` = the training class count ``N_c`` (GPN paper,
        eq. 4), ``"frequency"`` = ``N_c / N`` (the structural-shifts authors'
        ``graph_posterior_network_model.py`` ``get_class_probas``), which lowers every
        log-evidence by ``log N``.
    """

    hidden_channels: int = 64
    latent_dim: int = 16
    flow_layers: int = 10
    appnp_K: int = 10
    appnp_alpha: float = 0.1
    dropout: float = 0.5
    input_dropout: float = 0.0
    budget: str = "normal"
    prior: float = 1.0
    encoder: NodeGNNConfig | None = None
    class_factor: str = "count"

    def __post_init__(self) -> None:
        check_positive_int(self.hidden_channels, "hidden_channels")
        check_positive_int(self.latent_dim, "latent_dim")
        check_positive_int(self.flow_layers, "flow_layers", minimum=0)
        check_positive_int(self.appnp_K, "appnp_K", minimum=0)
        check_probability(self.appnp_alpha, "appnp_alpha", allow_one=True)
        check_probability(self.dropout, "dropout")
        check_probability(self.input_dropout, "input_dropout")
        _choice(self.budget, "budget", CERTAINTY_BUDGETS)
        _choice(self.class_factor, "class_factor", GPN_CLASS_FACTORS)
        if not self.prior > 0:
            raise ValueError(f"prior must be > 0, got {self.prior}")
        if self.encoder is not None:
            if not isinstance(self.encoder, NodeGNNConfig):
                raise TypeError(
                    f"encoder must be a NodeGNNConfig or None, got {type(self.encoder).__name__}"
                )
            if self.encoder.model != "mlp" or self.encoder.head != "linear":
                raise ValueError(
                    "GPN's feature encoder ignores the graph: encoder must have model='mlp' and "
                    f"head='linear', got model={self.encoder.model!r}, head={self.encoder.head!r}"
                )


@dataclass(frozen=True)
class NatPNConfig:
    """Natural Posterior Network (Charpentier et al., ICLR 2022) for node classification.

    As in the structural-shifts paper, the encoder has the architecture of the SE model
    (``encoder``: the base GCN, whose linear head is the projector to the ``latent_dim``
    latent space), one radial flow (``flow_layers``) gives the density ``p(z)``, a linear
    predictor gives class probabilities ``chi``, and the posterior update is
    ``alpha = prior + N_H * p(z) * chi`` with the certainty budget ``N_H`` (``budget``).

    Parameters
    ----------
    predictor : {"representation", "latent"}
        What the class predictor reads. ``"representation"`` (default): the encoder's
        ``hidden``-wide representation, the same (dropped-out) tensor the projector reads, and
        the latent code enters the flow as it is (the structural-shifts authors'
        ``natural_posterior_network_model.py``: ``predictor_config`` 256 -> C on
        ``representations``, ``projector`` output straight into the flow). ``"latent"``: our
        earlier layout, a batch norm on the latent code and the predictor on the normalised
        latent code.
    """

    encoder: NodeGNNConfig = field(default_factory=NodeGNNConfig)
    latent_dim: int = 16
    flow_layers: int = 8
    budget: str = "normal"
    prior: float = 1.0
    predictor: str = "representation"

    def __post_init__(self) -> None:
        if not isinstance(self.encoder, NodeGNNConfig):
            raise TypeError(f"encoder must be a NodeGNNConfig, got {type(self.encoder).__name__}")
        check_positive_int(self.latent_dim, "latent_dim")
        check_positive_int(self.flow_layers, "flow_layers", minimum=0)
        _choice(self.budget, "budget", CERTAINTY_BUDGETS)
        _choice(self.predictor, "predictor", NATPN_PREDICTORS)
        if self.predictor == "representation" and self.encoder.head != "linear":
            raise ValueError(
                "predictor='representation' needs an encoder with head='linear' (the projector), "
                f"got head={self.encoder.head!r}"
            )
        if not self.prior > 0:
            raise ValueError(f"prior must be > 0, got {self.prior}")


@dataclass(frozen=True)
class PointCloudConfig:
    """Geometric backbone for point clouds (GeSS, section 4.1, appendices B, D.1 and F).

    GeSS settings: 4 layers, hidden 64 (32 for Point Transformer), dropout 0.2, batch
    normalisation, ReLU, sum pooling, a kNN graph on the coordinates with ``k`` = 5 (Track),
    10 (QMOF) or 3 (DrugOOD-3D) (see :data:`GESS_KNN_K`), and a 2-layer MLP head.

    Parameters
    ----------
    model : {"egnn", "dgcnn", "pointtransformer"}
    hidden_channels, num_layers, dropout, norm, activation
        As in GeSS.
    k : int
        Neighbours in the kNN graph (DGCNN recomputes it in feature space after layer 1).
    categorical : bool
        ``True``: ``x`` holds integer categories (atom types) in ``[0, in_channels)``,
        embedded by ``nn.Embedding``; ``False``: ``x`` is a float tensor ``(N, in_channels)``
        (Track uses all-ones, ``in_channels=1``).
    pos_dim : int
        Dimension of the coordinates (3).
    residual : bool
        Skip connections between layers.
    update_pos : bool
        EGNN only: equivariant coordinate updates (Satorras et al., eq. 4). Off by default, as
        in the GeSS code (its ``E_GCL_mask`` deletes the coordinate MLP and never moves the
        points); the paper does not say.
    self_loops : bool
        Whether a point is one of its own ``k`` neighbours in the coordinate kNN graph. On by
        default: the GeSS code builds ``knn_graph(pos, k, batch, loop=True)`` for every
        backbone (``BaseModel.calc_geo_feat``).
    edge_features : {"distance_direction", "distance", "none", "distance_direction_beam", \
"distance_direction_beam_abs"}
        What every edge ``j -> i`` of the coordinate kNN graph carries into the messages of
        every layer, through a linear edge encoder to ``hidden_channels``.
        ``"distance_direction"`` (default): ``[|p_j - p_i|, (p_j - p_i) / (|p_j - p_i| +
        1e-6)]``, the ``edge_attr`` of the GeSS code (``BaseModel.calc_edge_attr``, encoded by
        ``FeatEncoder`` and fed to every EGNN / DGCNN / Point Transformer layer); the paper
        does not mention it. The direction is a vector in the frame of the coordinates, so
        with it a backbone is invariant to translations but not to rotations.
        ``"distance"``: the distance alone (EGNN then stays E(3)-invariant). ``"none"``: no
        edge features (EGNN as Satorras et al.; the pre-0.2 gs-models backbones).
        ``"distance_direction_beam"`` (not in GeSS; a Track probe of issue 29): the distance
        and the direction's components in the spherical frame (r, theta, phi) of the centre
        ``p_i`` about the z axis, so invariant to rotations about the beam axis only.
        ``"distance_direction_beam_abs"`` (not in GeSS; the Track setting of the gess ``ci``
        profile, issue 29): the same with the absolute value of each component, so also
        invariant to the reflections ``phi -> -phi``, ``theta -> -theta`` (a track and its
        charge conjugate): whether an edge runs along phi or
        theta is then one ReLU away from the input, and ci-size EGNN starts learning
        the straight tracks in 3 epochs instead of 20-28 (apps/bench README).
    pool : {"sum", "mean", "max"}
        Graph pooling before the head. ``"sum"`` (default): GeSS's ``global_add_pool``.
        ``"mean"`` / ``"max"`` (not GeSS; Track probes of issue 29): embeddings whose scale does
        not follow the number of points. The head after the pooling is GeSS's classifier
        ``MLP([h, 2h, h, out])`` with ``norm``, activation and dropout after each hidden
        layer (``BaseModel.classifier``). Its batch norm normalises the sum-pooled graph
        embeddings, whose scale grows with the number of points.
    pt_delta : {"position", "edge_mlp"}
        Point Transformer only: the positional term ``delta_ij`` added to the attention
        logits and to the values. ``"position"`` (default): GeSS's ``pos_nn``, a linear map of
        ``p_i - p_j``, the edge features added to the values only. ``"edge_mlp"`` (not
        GeSS; a Track probe of issue 29): a two-layer MLP (ReLU) of the edge features, in both
        the logits and the values, so the attention sees each edge's geometry through a
        non-linearity. On Track's unit coordinates ``p_i - p_j`` of kNN neighbours is
        tiny, so with GeSS's term the first layer's attention is nearly uniform.
    pt_norm : {None, "batch", "layer"}
        Point Transformer only: a normalisation inside each block, after ``lin_out`` and
        before its ReLU, ``relu(norm(lin_out(sum_j alpha_ij * v_ij)))``, the place of the norm
        in GeSS's ``EdgeConv`` (``act(norm(post(out)))``). ``None`` (default): GeSS's
        ``TransformerBlock``, which has none. ``"batch"`` (not GeSS; the gess ``ci`` profile's
        Track setting, issue 29): with GeSS's all-ones point features every point enters the
        first block with the same vector, so the block's output is a large constant plus a
        small term from the edge geometry; batch norm removes the constant over the points.
        Without it ci-size Point Transformer stays at the hit count's loss for 60 epochs; with
        it, it learns the tracks within 3 (apps/bench/measured/ci-gess/probes-issue29).
    """

    model: str = "egnn"
    hidden_channels: int = 64
    num_layers: int = 4
    dropout: float = 0.2
    norm: str | None = "batch"
    activation: str = "relu"
    k: int = 5
    categorical: bool = False
    pos_dim: int = 3
    residual: bool = True
    update_pos: bool = False
    self_loops: bool = True
    edge_features: str = "distance_direction"
    pool: str = "sum"
    pt_delta: str = "position"
    pt_norm: str | None = None

    def __post_init__(self) -> None:
        _choice(self.model, "model", POINT_CLOUD_MODELS)
        _choice(self.edge_features, "edge_features", EDGE_FEATURES)
        _choice(self.pool, "pool", POOLS)
        _choice(self.pt_delta, "pt_delta", PT_DELTAS)
        _choice(self.pt_norm, "pt_norm", NORMS)
        if self.pt_delta == "edge_mlp" and self.edge_features == "none":
            raise ValueError("pt_delta='edge_mlp' needs edge features: edge_features='none' gives none")
        check_positive_int(self.hidden_channels, "hidden_channels")
        check_positive_int(self.num_layers, "num_layers")
        check_probability(self.dropout, "dropout")
        _choice(self.norm, "norm", NORMS)
        _choice(self.activation, "activation", ACTIVATIONS)
        check_positive_int(self.k, "k")
        check_positive_int(self.pos_dim, "pos_dim")


@dataclass(frozen=True)
class TrainingDefaults:
    """Optimiser settings a paper used with a preset (consumed by gs-algos; informative here)."""

    lr: float
    weight_decay: float
    max_epochs: int | None = None
    source: str = ""
