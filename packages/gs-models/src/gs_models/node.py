"""Node-level GNNs (MLP, GCN, SAGE, GAT, GIN) built from PyG layers."""

from __future__ import annotations

import warnings

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.nn import GATConv, GCNConv, GINConv, SAGEConv

from gs_models._validation import check_edge_index, check_node_features, check_positive_int
from gs_models.configs import NodeGNNConfig

__all__ = ["NodeGNN", "apply_linear", "make_activation", "make_norm"]

#: Dense node features with at most this fraction of non-zeros are multiplied as a sparse
#: CSR matrix by the first linear map (bag-of-words features are ~1-2% dense).
SPARSE_FEATURE_DENSITY = 0.05


def make_activation(name: str, *, inplace: bool = False) -> nn.Module:
    """Activation module by name (one of :data:`gs_models.configs.ACTIVATIONS`); ``inplace``
    overwrites its input where the activation has that option (ReLU, ELU, leaky ReLU, SiLU)."""
    table = {
        "relu": nn.ReLU,
        "gelu": nn.GELU,
        "elu": nn.ELU,
        "leaky_relu": nn.LeakyReLU,
        "silu": nn.SiLU,
        "tanh": nn.Tanh,
        "identity": nn.Identity,
    }
    if name not in table:
        raise ValueError(f"activation={name!r} is not accepted; choose one of {sorted(table)}")
    if inplace and name in ("relu", "elu", "leaky_relu", "silu"):
        return table[name](inplace=True)
    return table[name]()


def make_norm(name: str | None, channels: int) -> nn.Module:
    """Normalisation over nodes/points: ``None`` (identity), ``"batch"`` or ``"layer"``."""
    if name is None:
        return nn.Identity()
    if name == "batch":
        return nn.BatchNorm1d(channels)
    if name == "layer":
        return nn.LayerNorm(channels)
    raise ValueError(f"norm={name!r} is not accepted; choose one of [None, 'batch', 'layer']")


def _make_layer(cfg: NodeGNNConfig, in_ch: int, out_ch: int, *, is_output: bool) -> nn.Module:
    model = cfg.model
    if model == "mlp":
        return nn.Linear(in_ch, out_ch)
    if model == "gcn":
        return GCNConv(in_ch, out_ch)
    if model == "sage":
        return SAGEConv(in_ch, out_ch, aggr=cfg.sage_aggr)
    if model == "gat":
        if is_output:
            return GATConv(in_ch, out_ch, heads=1, concat=False, dropout=cfg.attention_dropout)
        return GATConv(
            in_ch, out_ch // cfg.heads, heads=cfg.heads, concat=True, dropout=cfg.attention_dropout
        )
    if model == "gin":
        mlp = nn.Sequential(
            nn.Linear(in_ch, out_ch), make_activation(cfg.activation), nn.Linear(out_ch, out_ch)
        )
        return GINConv(mlp, train_eps=cfg.gin_train_eps)
    raise ValueError(
        f"model={model!r} is not accepted; choose one of ['mlp', 'gcn', 'sage', 'gat', 'gin']"
    )


def _input_dropout(x, p: float, training: bool):
    """Dropout of the input features; on sparse features only the stored values are drawn.

    Same distribution as dense dropout (a dropped zero stays zero), far fewer random draws on
    bag-of-words features; the dense path is :func:`torch.nn.functional.dropout` itself.
    ``x`` is a dense tensor, a sparse CSR tensor or the prepared :class:`_CSRFeatures` (whose
    cached transpose is rebuilt from the dropped matrix, so both stay the same matrix).
    """
    if not training:
        return x
    if isinstance(x, _CSRFeatures):
        dropped = _input_dropout(x.x, p, training)
        return _CSRFeatures(dropped, dropped.t().to_sparse_csr())
    if x.layout != torch.sparse_csr:
        return F.dropout(x, p, training)
    return torch.sparse_csr_tensor(
        x.crow_indices(), x.col_indices(), F.dropout(x.values(), p, True), x.shape,
        check_invariants=False, device=x.device,
    )


class _GCNAdjacency:
    """A weighted, transposed adjacency (sparse CSR, row = target) prepared by
    :class:`NodeGNN`, and its transpose for the backward pass: GCN's normalised
    ``D^-1/2 (A + I) D^-1/2``, SAGE-mean's ``D_in^-1 A``, or the plain ``A`` of SAGE-sum and GIN."""

    __slots__ = ("adj_t", "adj")

    def __init__(self, adj_t: Tensor, adj: Tensor) -> None:
        self.adj_t, self.adj = adj_t, adj


class _CSRPropagate(torch.autograd.Function):
    """``adj_t @ h`` (sum aggregation of weighted messages) with the transposed CSR matrix
    prepared once, so that backward does not transpose the adjacency at every step."""

    @staticmethod
    def forward(ctx, h: Tensor, adj_t: Tensor, adj: Tensor) -> Tensor:  # type: ignore[override]
        ctx.adj = adj
        return adj_t @ h

    @staticmethod
    def backward(ctx, grad: Tensor):  # type: ignore[override]
        return ctx.adj @ grad.contiguous(), None, None


class _CSRFeatures:
    """Sparse node features for the first linear map: ``x`` and ``x.T`` as CSR matrices, so
    that the weight gradient ``x.T @ grad`` needs no per-step transposition."""

    __slots__ = ("x", "xt")

    def __init__(self, x: Tensor, xt: Tensor) -> None:
        self.x, self.xt = x, xt


class _CSRLinear(torch.autograd.Function):
    """``x @ weight.T`` for CSR ``x`` (no gradient) with the transposed CSR kept for backward."""

    @staticmethod
    def forward(ctx, weight: Tensor, x: Tensor, xt: Tensor) -> Tensor:  # type: ignore[override]
        ctx.xt = xt
        return x @ weight.t().contiguous()

    @staticmethod
    def backward(ctx, grad: Tensor):  # type: ignore[override]
        return (ctx.xt @ grad.contiguous()).t(), None, None


def apply_linear(lin: nn.Module, h: Tensor | _CSRFeatures) -> Tensor:
    """``lin(h)`` for a dense ``h`` or the sparse features that :class:`NodeGNN` prepares for its
    first layer (gs-algos' GOOD Mixup applies the layers one by one through it)."""
    if not isinstance(h, _CSRFeatures):
        return lin(h)
    out = _CSRLinear.apply(lin.weight, h.x, h.xt)
    return out + lin.bias if lin.bias is not None else out


def _matmul_t(h: Tensor | _CSRFeatures, weight: Tensor) -> Tensor:
    """``h @ weight.T`` (no bias) for a dense ``h`` or prepared sparse features."""
    if isinstance(h, _CSRFeatures):
        return _CSRLinear.apply(weight, h.x, h.xt)
    return F.linear(h, weight)


def _dense(h: Tensor | _CSRFeatures) -> Tensor:
    return h.x.to_dense() if isinstance(h, _CSRFeatures) else h


def _first_linear_shape(layer: nn.Module) -> tuple[int, int]:
    """``(out, in)`` of the linear map that SAGE / GIN apply to the aggregated features."""
    lin = layer.nn[0] if isinstance(layer, GINConv) else layer.lin_l
    return int(lin.weight.shape[0]), int(lin.weight.shape[1])


def _sage_csr(layer: SAGEConv, h: Tensor | _CSRFeatures, graph: _GCNAdjacency) -> Tensor:
    r""":class:`~torch_geometric.nn.SAGEConv` (mean or sum aggregation, root weight, no
    projection or normalisation) on a prepared adjacency:
    :math:`x_i' = W_1 x_i + W_2 \cdot \mathrm{agg}_{j \in N(i)} x_j + b` (Hamilton et al.
    2017, eq. 1 of PyG's docs). The aggregation is linear, so when the layer narrows the
    features ``W_2`` acts first and only ``out`` columns are propagated; one product with
    ``[W_2; W_1]`` serves both maps."""
    w_agg, w_root = layer.lin_l.weight, layer.lin_r.weight
    out_ch, in_ch = w_agg.shape
    if in_ch > out_ch:
        both = _matmul_t(h, torch.cat([w_agg, w_root], 0))
        out = _CSRPropagate.apply(both[:, :out_ch], graph.adj_t, graph.adj) + both[:, out_ch:]
    else:
        x = _dense(h)
        out = F.linear(_CSRPropagate.apply(x, graph.adj_t, graph.adj), w_agg) + F.linear(x, w_root)
    return out + layer.lin_l.bias if layer.lin_l.bias is not None else out


def _gin_csr(layer: GINConv, h: Tensor | _CSRFeatures, graph: _GCNAdjacency) -> Tensor:
    r""":class:`~torch_geometric.nn.GINConv` on a prepared adjacency:
    :math:`x_i' = h_\Theta\big((1 + \epsilon) x_i + \sum_{j \in N(i)} x_j\big)` (Xu et al.
    2019, eq. 4.1). The first linear map of :math:`h_\Theta` distributes over the sum, so when
    it narrows the features it acts first: ``(1 + eps) W x_i + sum_j W x_j + b``."""
    first, rest = layer.nn[0], layer.nn[1:]
    scale = 1 + layer.eps
    out_ch, in_ch = first.weight.shape
    if in_ch > out_ch:
        p = _matmul_t(h, first.weight)
        z = _CSRPropagate.apply(p, graph.adj_t, graph.adj) + scale * p
        z = z + first.bias if first.bias is not None else z
    else:
        x = _dense(h)
        z = first(_CSRPropagate.apply(x, graph.adj_t, graph.adj) + scale * x)
    return rest(z)


class NodeGNN(nn.Module):
    r"""Node-level GNN: optional linear pre-processing, message-passing layers, output head.

    Shapes
    ------
    - input ``x``: ``(N, in_channels)`` float; ``edge_index``: ``(2, E)`` long
      (``edge_index[0]`` = source, ``edge_index[1]`` = target).
    - output: a tuple ``(embeddings, logits)`` with ``embeddings`` ``(N, D)``, the
      representation right before the final head (``D = config.embedding_width``), and
      ``logits`` ``(N, out_channels)``.

    Parameters
    ----------
    in_channels, out_channels : int
        Input feature width and number of outputs (classes).
    config : NodeGNNConfig
        Architecture; see :class:`~gs_models.configs.NodeGNNConfig`.

    Examples
    --------
    >>> import torch
    >>> from gs_models import build_model
    >>> model = build_model("gcn", 8, 3, hidden_channels=16, num_layers=2)
    >>> x = torch.randn(5, 8); edge_index = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 4]])
    >>> emb, logits = model(x, edge_index)
    >>> tuple(emb.shape), tuple(logits.shape)
    ((5, 16), (5, 3))
    """

    def __init__(
        self, in_channels: int, out_channels: int, config: NodeGNNConfig | None = None
    ) -> None:
        super().__init__()
        self.in_channels = check_positive_int(in_channels, "in_channels")
        self.out_channels = check_positive_int(out_channels, "out_channels")
        cfg = config if config is not None else NodeGNNConfig()
        if not isinstance(cfg, NodeGNNConfig):
            raise TypeError(f"config must be a NodeGNNConfig, got {type(cfg).__name__}")
        self.config = cfg
        self.uses_graph = cfg.model != "mlp"

        width = in_channels
        self.pre = None
        self._act_first = cfg.layer_order == "conv-act-norm"
        if cfg.pre_linear:
            self.pre = nn.Linear(in_channels, cfg.hidden_channels)
            if self._act_first:
                self.pre_norm = make_norm(cfg.norm, cfg.hidden_channels)
            width = cfg.hidden_channels

        n_encoder = cfg.num_layers if cfg.head == "linear" else cfg.num_layers - 1
        emb = cfg.embedding_width
        self.layers = nn.ModuleList()
        self.norms = nn.ModuleList()
        self._residual: list[bool] = []
        for i in range(n_encoder):
            out = emb if i == n_encoder - 1 else cfg.hidden_channels
            self.layers.append(_make_layer(cfg, width, out, is_output=False))
            self.norms.append(make_norm(cfg.norm, out))
            self._residual.append(cfg.residual and width == out)
            width = out
        self.embedding_channels = width
        if cfg.head == "linear":
            self.head: nn.Module = nn.Linear(width, out_channels)
            self._graph_head = False
        else:
            self.head = _make_layer(cfg, width, out_channels, is_output=True)
            self._graph_head = cfg.model != "mlp"
        self.act = make_activation(cfg.activation)
        # Fast CPU/GPU path (same function, fewer operations): sparse features enter the
        # first linear map as a CSR matrix, and GCN layers propagate with a sparse adjacency
        # (one SpMM) instead of gather / scatter over edges. Both caches are keyed on the
        # identity and version of the input tensors, so an unchanged graph is converted once.
        self.fast_path = True
        # (input dropout then acts on the stored non-zeros only: a dropped zero stays zero)
        # SAGE (mean or sum) and GIN aggregate linearly, so their first linear map may act
        # before the aggregation (project, then propagate: fewer columns to move) and their
        # aggregation is one SpMM with a fixed weighted adjacency, like GCN's.
        self._adjacency_ok = cfg.model in ("gcn", "gin") or (
            cfg.model == "sage" and cfg.sage_aggr in ("mean", "sum")
        )
        projects_first = (
            self._adjacency_ok
            and cfg.model != "gcn"
            and len(self.layers) > 0
            and _first_linear_shape(self.layers[0])[1] > _first_linear_shape(self.layers[0])[0]
        )
        self._sparse_first = cfg.pre_linear or cfg.model in ("gcn", "mlp", "gat") or projects_first
        self._x_cache: tuple | None = None
        self._adj_cache: tuple | None = None
        self.reset_parameters()

    @staticmethod
    def _key(t: Tensor) -> tuple:
        # the cache keeps ``t`` alive, so its address cannot be reused by another tensor;
        # the version counter catches in-place changes
        return (t, t.data_ptr(), t._version, tuple(t.shape), t.dtype, t.device)

    @staticmethod
    def _hit(cache: tuple | None, key: tuple) -> bool:
        return cache is not None and cache[0][0] is key[0] and cache[0][1:] == key[1:]

    def __getstate__(self) -> dict:
        state = super().__getstate__() if hasattr(super(), "__getstate__") else self.__dict__
        state = dict(state)
        state["_x_cache"] = state["_adj_cache"] = None
        return state

    def _fast_features(self, x: Tensor) -> Tensor | _CSRFeatures:
        """``x`` as sparse CSR matrices (``x`` and ``x.T``) when that is cheaper for the first
        linear map."""
        if not (self.fast_path and self._sparse_first) or x.requires_grad or x.dim() != 2:
            return x
        if x.layout != torch.strided or not x.is_floating_point() or x.numel() < 65536:
            return x
        key = self._key(x)
        if self._hit(self._x_cache, key):
            return self._x_cache[1]
        nnz = int(torch.count_nonzero(x))
        out = x
        if nnz <= SPARSE_FEATURE_DENSITY * x.numel():
            with warnings.catch_warnings():  # torch flags its CSR support as beta
                warnings.filterwarnings("ignore", "Sparse CSR tensor support", UserWarning)
                out = _CSRFeatures(x.to_sparse_csr(), x.t().contiguous().to_sparse_csr())
        self._x_cache = (key, out)
        return out

    def _fast_graph(self, edge_index: Tensor, num_nodes: int) -> Tensor | _GCNAdjacency:
        """GCN, SAGE (mean / sum) and GIN: the aggregation as a sparse CSR matrix, computed once
        per graph.

        GCN: ``D^-1/2 (A + I) D^-1/2`` exactly as :class:`torch_geometric.nn.GCNConv` builds it
        from ``edge_index`` (:func:`~torch_geometric.nn.conv.gcn_conv.gcn_norm`, remaining
        self-loops, source-to-target flow). SAGE mean: ``1 / in-degree`` per edge (duplicates
        count, no self-loops added unless ``sage_self_loops``: PyG's mean aggregation); SAGE sum and
        GIN: weight 1.
        Stored transposed (row = target) so that every layer propagates with one sparse-dense
        product.
        """
        if not (self.fast_path and self._adjacency_ok) or (
            edge_index.numel() == 0 and not self._adds_self_loops
        ):
            return self._with_self_loops(edge_index, num_nodes)
        dtype = next(self.parameters()).dtype
        key = (*self._key(edge_index), num_nodes, dtype)
        if self._hit(self._adj_cache, key):
            return self._adj_cache[1]
        edge_index = self._with_self_loops(edge_index, num_nodes)
        if self.config.model == "gcn":
            from torch_geometric.nn.conv.gcn_conv import gcn_norm

            ei, weight = gcn_norm(
                edge_index.long(), None, num_nodes, False, True, "source_to_target", dtype
            )
        else:
            ei = edge_index.long()
            weight = torch.ones(ei.size(1), dtype=dtype, device=ei.device)
            if self.config.model == "sage" and self.config.sage_aggr == "mean":
                deg = torch.bincount(ei[1], minlength=num_nodes).to(dtype)
                weight = weight / deg[ei[1]]
        row, col = ei[1], ei[0]  # transposed: row = target
        order = torch.argsort(row * num_nodes + col)
        crow = torch.zeros(num_nodes + 1, dtype=torch.long, device=row.device)
        crow[1:] = torch.cumsum(torch.bincount(row, minlength=num_nodes), 0)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Sparse CSR tensor support", UserWarning)
            adj = torch.sparse_csr_tensor(
                crow, col[order], weight[order], (num_nodes, num_nodes), check_invariants=False,
                device=row.device,
            )
            order_t = torch.argsort(col * num_nodes + row)  # the transpose: row = source
            crow_t = torch.zeros(num_nodes + 1, dtype=torch.long, device=row.device)
            crow_t[1:] = torch.cumsum(torch.bincount(col, minlength=num_nodes), 0)
            adj_src = torch.sparse_csr_tensor(
                crow_t, row[order_t], weight[order_t], (num_nodes, num_nodes), check_invariants=False,
                device=row.device,
            )
        out = _GCNAdjacency(adj, adj_src)
        self._adj_cache = (key, out)
        return out

    def _conv(self, layer: nn.Module, h: Tensor, graph: Tensor | _GCNAdjacency) -> Tensor:
        if isinstance(graph, _GCNAdjacency) and isinstance(layer, SAGEConv):
            return _sage_csr(layer, h, graph)
        if isinstance(graph, _GCNAdjacency) and isinstance(layer, GINConv):
            return _gin_csr(layer, h, graph)
        if isinstance(graph, _GCNAdjacency):
            # GCNConv.forward with the normalisation done once: lin, propagate, bias
            # == layer.propagate(graph.adj_t, ...): GCNConv's message_and_aggregate is a sum SpMM
            out = _CSRPropagate.apply(apply_linear(layer.lin, h), graph.adj_t, graph.adj)
            return out + layer.bias if layer.bias is not None else out
        return layer(h.x if isinstance(h, _CSRFeatures) else h, graph)

    def reset_parameters(self) -> None:
        """Re-initialise every parameter (PyG / torch defaults; SAGE layers as DGL with
        ``sage_init="dgl"``; the linear head xavier-uniform with zero bias with
        ``head_init="xavier"``, after everything else, so the encoder's draws stay those of
        ``"torch"``)."""
        for module in self.modules():
            if module is not self and hasattr(module, "reset_parameters"):
                module.reset_parameters()
        if self.config.sage_init == "dgl":
            gain = nn.init.calculate_gain("relu")
            for module in self.modules():
                if isinstance(module, SAGEConv):
                    for lin in (module.lin_l, module.lin_r):
                        nn.init.xavier_uniform_(lin.weight, gain=gain)
                        if lin.bias is not None:
                            nn.init.zeros_(lin.bias)
        if self.config.head_init == "xavier":
            nn.init.xavier_uniform_(self.head.weight)
            nn.init.zeros_(self.head.bias)

    @property
    def _adds_self_loops(self) -> bool:
        return self.config.model == "sage" and self.config.sage_self_loops

    def _with_self_loops(self, edge_index: Tensor, num_nodes: int) -> Tensor:
        """``edge_index`` with one self-loop per node where it has none, for SAGE with
        ``sage_self_loops`` (else unchanged)."""
        if not self._adds_self_loops:
            return edge_index
        from torch_geometric.utils import add_remaining_self_loops

        return add_remaining_self_loops(edge_index, num_nodes=num_nodes)[0]

    def _apply_layer(self, layer: nn.Module, h: Tensor, edge_index: Tensor) -> Tensor:
        return apply_linear(layer, h) if self.config.model == "mlp" else self._conv(layer, h, edge_index)

    def encode(self, x: Tensor, edge_index: Tensor) -> Tensor:
        """Embeddings ``(N, D)``: everything below the output head (no validation)."""
        cfg = self.config
        h = _input_dropout(x, cfg.input_dropout, self.training) if cfg.input_dropout > 0 else x
        pre_p = cfg.dropout if cfg.pre_dropout is None else cfg.pre_dropout
        if self.pre is not None:
            h = apply_linear(self.pre, h)
            h = self.act(h) if cfg.pre_activation else h
            h = F.dropout(self.pre_norm(h) if self._act_first else h, pre_p, self.training)
        last = len(self.layers) - 1
        for i, (layer, norm) in enumerate(zip(self.layers, self.norms, strict=True)):
            out = self._apply_layer(layer, h, edge_index)
            if (i < last or cfg.last_activation) and self._act_first:
                # the structural-shifts authors' order: norm(act(conv(h)) + h)
                out = self.act(out)
                h_new = norm(h + out if self._residual[i] else out)
            else:
                if i < last or cfg.last_activation:
                    out = self.act(norm(out))
                h_new = h + out if self._residual[i] else out
            h = h_new if i == len(self.layers) - 1 else F.dropout(h_new, cfg.dropout, self.training)
        return h

    def decode(self, embeddings: Tensor, edge_index: Tensor) -> Tensor:
        """Logits ``(N, out_channels)`` from embeddings (dropout, then the head)."""
        h = (
            F.dropout(embeddings, self.config.dropout, self.training)
            if len(self.layers)
            else embeddings
        )
        if self._graph_head:
            return self._conv(self.head, h, edge_index)
        return self.head(h)

    def forward(self, x: Tensor, edge_index: Tensor) -> tuple[Tensor, Tensor]:
        """Return ``(embeddings, logits)``; see the class docstring for shapes."""
        emb, graph = self._embed(x, edge_index)
        return emb, self.decode(emb, graph)

    def embed(self, x: Tensor, edge_index: Tensor) -> Tensor:
        """Embeddings ``(N, D)`` only (inputs validated, fast paths used): the representation a
        caller feeds to heads of its own, e.g. NatPN's projector and class predictor."""
        return self._embed(x, edge_index)[0]

    def _embed(self, x: Tensor, edge_index: Tensor) -> tuple[Tensor, Tensor | _GCNAdjacency]:
        check_node_features(x, self.in_channels)
        check_edge_index(edge_index, x.size(0))
        if self.uses_graph:
            graph = self._fast_graph(edge_index, x.size(0))
        else:
            graph = edge_index
        return self.encode(self._fast_features(x), graph), graph

    def extra_repr(self) -> str:
        return f"in_channels={self.in_channels}, out_channels={self.out_channels}, model={self.config.model!r}"
