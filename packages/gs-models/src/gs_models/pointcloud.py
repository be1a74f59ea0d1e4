r"""Geometric backbones for point clouds (GeSS): EGNN, DGCNN and Point Transformer.

Every backbone embeds the point features ``x`` (categorical atom types through
``nn.Embedding``, or float features such as Track's all-ones through a linear layer), runs
``num_layers`` message-passing layers on a kNN graph of the coordinates ``pos`` (built with
:func:`gs_models.knn.knn_graph`), each followed by normalisation, activation and dropout
(GeSS: 4 layers, batch norm, ReLU, dropout 0.2), sum-pools the point representations per
cloud and applies GeSS's 3-layer MLP head ``[h, 2h, h, out]`` with batch norm, activation and
dropout after each hidden layer (the ``classifier`` of the GeSS code, appendix B).

``forward(x, pos, batch=None) -> (graph_embeddings, outputs)`` with shapes
``(B, hidden_channels)`` and ``(B, out_channels)``; ``B = batch.max() + 1``.

Two keyword inputs serve the interpretable / rationale methods of GeSS (DIR and LRI, run in
gs-algos), which must act on embeddings or message weights and never on the categorical
atom types:

* ``point_weight`` (N,) in [0, 1]: every message ``j -> i`` of every layer is multiplied by
  ``w_i * w_j``. This is the node-to-edge attention of the GeSS reference implementation
  (``LRIBern.node_attn_to_edge_attn``: ``edge_attn = attn[src] * attn[dst]``, applied to the
  messages of every layer in its EGNN, DGCNN and Point Transformer convolutions,
  ``msg * edge_attn``). In EGNN a zero weight cuts the point off; in Point Transformer the
  weight multiplies the message after the neighbourhood softmax, so the point still enters
  its neighbours' attention normalisation, and DGCNN's later layers build their kNN graph in
  feature space (both as in the GeSS code).
* ``features`` (N, hidden_channels) float: point features used instead of the embedding of
  ``x`` (the ``with_enc=False`` path of the GeSS encoders, by which DIR feeds the
  rationale generator's embeddings to the classifier encoder).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.nn import EdgeConv, PointTransformerConv, global_add_pool
from torch_geometric.utils import scatter, softmax

from gs_models._validation import check_positive_int
from gs_models.configs import PointCloudConfig
from gs_models.knn import knn_graph
from gs_models.node import make_activation, make_norm

__all__ = ["DGCNN", "EGNN", "EGNNLayer", "PointCloudBackbone", "PointTransformer"]


class _WeightedEdgeConv(EdgeConv):
    """PyG ``EdgeConv`` whose message ``j -> i`` is multiplied by ``w_i * w_j`` when point
    weights are given (same parameters and state-dict keys as ``EdgeConv``)."""

    def forward(self, x: Tensor, edge_index: Tensor, point_weight: Tensor | None = None) -> Tensor:  # type: ignore[override]
        w = None if point_weight is None else (point_weight.view(-1, 1),) * 2
        # propagate_type: (x: PairTensor, w: Optional[PairTensor])
        return self.propagate(edge_index, x=(x, x), w=w)

    def message(self, x_i: Tensor, x_j: Tensor, w_i: Tensor | None = None,  # type: ignore[override]
                w_j: Tensor | None = None) -> Tensor:
        msg = self.nn(torch.cat([x_i, x_j - x_i], dim=-1))
        return msg if w_i is None else msg * (w_i * w_j)


class _WeightedPointTransformerConv(PointTransformerConv):
    """PyG ``PointTransformerConv`` whose (attention-weighted) message ``j -> i`` is multiplied
    by ``w_i * w_j`` when point weights are given, after the softmax, as the GeSS reference
    implementation (``msg * edge_attn``)."""

    def forward(self, x: Tensor, pos: Tensor, edge_index: Tensor,  # type: ignore[override]
                point_weight: Tensor | None = None) -> Tensor:
        from torch_geometric.utils import add_self_loops, remove_self_loops

        alpha = (self.lin_src(x), self.lin_dst(x))
        xs = (self.lin(x), x)
        if self.add_self_loops:
            edge_index, _ = remove_self_loops(edge_index)
            edge_index, _ = add_self_loops(edge_index, num_nodes=pos.size(0))
        w = None if point_weight is None else (point_weight.view(-1, 1),) * 2
        # propagate_type: (x: PairTensor, pos: PairTensor, alpha: PairTensor, w: Optional[PairTensor])
        return self.propagate(edge_index, x=xs, pos=(pos, pos), alpha=alpha, w=w)

    def message(self, x_j: Tensor, pos_i: Tensor, pos_j: Tensor,  # type: ignore[override]
                alpha_i: Tensor, alpha_j: Tensor, index: Tensor, ptr: Tensor | None,
                size_i: int | None, w_i: Tensor | None = None,
                w_j: Tensor | None = None) -> Tensor:
        delta = self.pos_nn(pos_i - pos_j)
        alpha = alpha_i - alpha_j + delta
        if self.attn_nn is not None:
            alpha = self.attn_nn(alpha)
        alpha = softmax(alpha, index, ptr, size_i)
        msg = alpha * (x_j + delta)
        return msg if w_i is None else msg * (w_i * w_j)


def _mlp(sizes: list[int], act: str, *, last_act: bool = False) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2 or last_act:
            layers.append(make_activation(act))
    return nn.Sequential(*layers)


def _head_norm(name: str | None, channels: int) -> nn.Module:
    """Normalisation of the head's graph embeddings. Batch norm takes PyG's ``BatchNorm``
    with ``allow_single_element`` (a batch holding one graph uses the running statistics)
    as the GeSS code does, so a last batch of one graph trains."""
    if name == "batch":
        from torch_geometric.nn import BatchNorm

        return BatchNorm(channels, allow_single_element=True)
    return make_norm(name, channels)


class PointCloudBackbone(nn.Module):
    """Shared input embedding, validation, pooling and head of the point-cloud backbones."""

    model_name = ""

    def __init__(
        self, in_channels: int, out_channels: int, config: PointCloudConfig | None = None
    ) -> None:
        super().__init__()
        cfg = config if config is not None else PointCloudConfig(model=self.model_name)
        if not isinstance(cfg, PointCloudConfig):
            raise TypeError(f"config must be a PointCloudConfig, got {type(cfg).__name__}")
        if cfg.model != self.model_name:
            raise ValueError(
                f"config.model={cfg.model!r} but this class builds {self.model_name!r}"
            )
        self.config = cfg
        self.in_channels = check_positive_int(in_channels, "in_channels")
        self.out_channels = check_positive_int(out_channels, "out_channels")
        h = cfg.hidden_channels
        self.embed: nn.Module = (
            nn.Embedding(in_channels, h) if cfg.categorical else nn.Linear(in_channels, h)
        )
        self.norms = nn.ModuleList(make_norm(cfg.norm, h) for _ in range(cfg.num_layers))
        self.act = make_activation(cfg.activation)
        self.head = nn.Sequential(
            nn.Linear(h, 2 * h),
            _head_norm(cfg.norm, 2 * h),
            make_activation(cfg.activation),
            nn.Dropout(cfg.dropout),
            nn.Linear(2 * h, h),
            _head_norm(cfg.norm, h),
            make_activation(cfg.activation),
            nn.Dropout(cfg.dropout),
            nn.Linear(h, out_channels),
        )

    # -- input handling --------------------------------------------------------------------
    def _embed(self, x: Tensor, pos: Tensor) -> Tensor:
        cfg = self.config
        n = pos.size(0)
        if cfg.categorical:
            if x.dim() == 2 and x.size(1) == 1:
                x = x.view(-1)
            if x.shape != (n,) or torch.is_floating_point(x):
                raise ValueError(
                    f"x must hold integer categories of shape ({n},) or ({n}, 1) for a categorical backbone, "
                    f"got {x.dtype} {tuple(x.shape)}"
                )
            if n and (int(x.min()) < 0 or int(x.max()) >= self.in_channels):
                raise ValueError(
                    f"x holds categories outside [0, {self.in_channels - 1}] (in_channels={self.in_channels})"
                )
            return self.embed(x.long())
        if x.dim() != 2 or x.shape != (n, self.in_channels) or not torch.is_floating_point(x):
            raise ValueError(
                f"x has shape {tuple(x.shape)} ({x.dtype}); this backbone was built with in_channels={self.in_channels}: "
                f"pass a float tensor of shape ({n}, {self.in_channels}) (e.g. all ones for Track)"
            )
        return self.embed(x)

    def _check(self, x: Tensor | None, pos: Tensor, batch: Tensor | None,
               has_features: bool = False) -> Tensor:
        d = self.config.pos_dim
        if (
            not isinstance(pos, Tensor)
            or pos.dim() != 2
            or pos.size(1) != d
            or not torch.is_floating_point(pos)
        ):
            raise ValueError(
                f"pos must be a float tensor of shape (num_points, {d}), got {getattr(pos, 'shape', type(pos))}"
            )
        if not has_features and not isinstance(x, Tensor):
            raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
        if batch is None:
            return torch.zeros(pos.size(0), dtype=torch.long, device=pos.device)
        if batch.shape != (pos.size(0),) or batch.dtype not in (torch.int64, torch.int32):
            raise ValueError(
                f"batch must be an integer tensor of shape ({pos.size(0)},), got {batch.dtype} {tuple(batch.shape)}"
            )
        return batch.long()

    def _block(self, i: int, h: Tensor, out: Tensor) -> Tensor:
        out = F.dropout(self.act(self.norms[i](out)), self.config.dropout, self.training)
        return h + out if self.config.residual and h.shape == out.shape else out

    def _inputs(
        self, x: Tensor | None, pos: Tensor, point_weight: Tensor | None, features: Tensor | None
    ) -> tuple[Tensor, Tensor | None]:
        """The layer-0 point features (embedding of ``x`` or ``features``) and the checked
        point weights (``(N, 1)`` or ``None``)."""
        n = pos.size(0)
        if features is not None:
            h = self.config.hidden_channels
            if not isinstance(features, Tensor) or features.shape != (n, h) \
                    or not torch.is_floating_point(features):
                raise ValueError(
                    f"features must be a float tensor of shape ({n}, {h}) (hidden_channels), "
                    f"got {getattr(features, 'dtype', type(features).__name__)} "
                    f"{tuple(getattr(features, 'shape', ()))}"
                )
            h0 = features
        else:
            if not isinstance(x, Tensor):
                raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
            h0 = self._embed(x, pos)
        w = None
        if point_weight is not None:
            if not isinstance(point_weight, Tensor) or point_weight.numel() != n \
                    or point_weight.dim() > 2 or not torch.is_floating_point(point_weight):
                raise ValueError(
                    f"point_weight must be a float tensor of shape ({n},) (one weight per point), "
                    f"got {getattr(point_weight, 'dtype', type(point_weight).__name__)} "
                    f"{tuple(getattr(point_weight, 'shape', ()))}"
                )
            w = point_weight.reshape(n, 1)
        return h0, w

    def point_embeddings(
        self,
        x: Tensor | None,
        pos: Tensor,
        batch: Tensor | None = None,
        *,
        point_weight: Tensor | None = None,
        features: Tensor | None = None,
    ) -> Tensor:
        """Point representations after the last layer, ``(N, hidden_channels)`` (before pooling).

        ``point_weight`` and ``features`` as in the module docstring.
        """
        batch = self._check(x, pos, batch, features is not None)
        h0, w = self._inputs(x, pos, point_weight, features)
        return self._layers(h0, pos, batch, w)

    def _layers(self, h: Tensor, pos: Tensor, batch: Tensor, w: Tensor | None) -> Tensor:  # pragma: no cover
        raise NotImplementedError

    def forward(
        self,
        x: Tensor | None,
        pos: Tensor,
        batch: Tensor | None = None,
        *,
        point_weight: Tensor | None = None,
        features: Tensor | None = None,
    ) -> tuple[Tensor, Tensor]:
        """Return ``(graph_embeddings (B, hidden), outputs (B, out_channels))``.

        ``point_weight`` (N,) weights every message ``j -> i`` by ``w_i * w_j``; ``features``
        (N, hidden) replaces the embedding of ``x`` (module docstring).
        """
        h = self.point_embeddings(x, pos, batch, point_weight=point_weight, features=features)
        batch = self._check(x, pos, batch, features is not None)
        g = global_add_pool(h, batch, size=int(batch.max()) + 1 if batch.numel() else 0)
        return g, self.head(g)

    def knn(self, pos: Tensor, batch: Tensor) -> Tensor:
        """The kNN graph of the coordinates (``k = config.k``; a point is one of its own
        neighbours when ``config.self_loops``)."""
        return knn_graph(pos, self.config.k, batch, loop=self.config.self_loops)


class EGNNLayer(nn.Module):
    r"""E(n)-equivariant graph convolution (Satorras, Hoogeboom & Welling, ICML 2021, eqs. 3-6).

    .. math::
        m_{ij} = \phi_e(h_i, h_j, \lVert x_i - x_j\rVert^2),\quad
        x_i' = x_i + \frac{1}{|N(i)|}\sum_{j \in N(i)} (x_i - x_j)\,\phi_x(m_{ij}),\quad
        h_i' = \phi_h\big(h_i, \textstyle\sum_{j} m_{ij}\big).

    Shapes: ``h`` (N, H), ``pos`` (N, D), ``edge_index`` (2, E) -> ``(h' (N, H), pos' (N, D))``.
    ``point_weight`` (N,): each message :math:`m_{ij}` is multiplied by :math:`w_i w_j`.
    """

    def __init__(self, channels: int, activation: str = "relu", update_pos: bool = True) -> None:
        super().__init__()
        self.phi_e = _mlp([2 * channels + 1, channels, channels], activation, last_act=True)
        self.phi_h = _mlp([2 * channels, channels, channels], activation)
        self.update_pos = update_pos
        self.phi_x = _mlp([channels, channels, 1], activation) if update_pos else None

    def forward(self, h: Tensor, pos: Tensor, edge_index: Tensor,
                point_weight: Tensor | None = None) -> tuple[Tensor, Tensor]:
        j, i = edge_index[0], edge_index[1]  # message j -> i
        # index_select, not h[i]: the backward of advanced indexing accumulates with
        # index_put_, whose order on a multi-threaded CPU varies from run to run (a seeded
        # training would not repeat bit for bit); index_select's backward is index_add_
        rel = pos.index_select(0, i) - pos.index_select(0, j)
        d2 = (rel * rel).sum(-1, keepdim=True)
        m = self.phi_e(torch.cat([h.index_select(0, i), h.index_select(0, j), d2], dim=-1))
        if point_weight is not None:  # GeSS E_GCL_mask: edge_feat = edge_attn * edge_feat
            w = point_weight.view(-1, 1)
            m = m * (w.index_select(0, i) * w.index_select(0, j))
        agg = scatter(m, i, dim=0, dim_size=h.size(0), reduce="sum")
        if self.phi_x is not None:
            pos = pos + scatter(rel * self.phi_x(m), i, dim=0, dim_size=h.size(0), reduce="mean")
        return self.phi_h(torch.cat([h, agg], dim=-1)), pos


class EGNN(PointCloudBackbone):
    """EGNN backbone (GeSS): E(n)-equivariant layers on the kNN graph; invariant graph outputs.

    The kNN graph is built once from the input coordinates. Graph-level outputs depend on the
    invariant features only, so they are invariant to rotations, reflections and translations
    of ``pos`` and to permutations of the points.
    """

    model_name = "egnn"

    def __init__(
        self, in_channels: int, out_channels: int, config: PointCloudConfig | None = None
    ) -> None:
        super().__init__(in_channels, out_channels, config)
        cfg = self.config
        self.layers = nn.ModuleList(
            EGNNLayer(cfg.hidden_channels, cfg.activation, cfg.update_pos)
            for _ in range(cfg.num_layers)
        )

    def _layers(self, h: Tensor, pos: Tensor, batch: Tensor, w: Tensor | None) -> Tensor:
        edge_index = self.knn(pos, batch)
        for i, layer in enumerate(self.layers):
            out, pos = layer(h, pos, edge_index, w)
            h = self._block(i, h, out)
        return h


class DGCNN(PointCloudBackbone):
    r"""Dynamic Graph CNN (Wang et al., TOG 2019) backbone (GeSS).

    EdgeConv :math:`h_i' = \max_{j \in N(i)} \mathrm{MLP}([h_i, h_j - h_i])`; layer 1 uses the
    kNN graph of the coordinates with input ``[embed(x), pos]``, every later layer recomputes
    the kNN graph in its input feature space (the dynamic graph).
    """

    model_name = "dgcnn"

    def __init__(
        self, in_channels: int, out_channels: int, config: PointCloudConfig | None = None
    ) -> None:
        super().__init__(in_channels, out_channels, config)
        cfg = self.config
        h = cfg.hidden_channels
        self.layers = nn.ModuleList()
        for i in range(cfg.num_layers):
            width = h + cfg.pos_dim if i == 0 else h
            self.layers.append(
                _WeightedEdgeConv(_mlp([2 * width, h, h], cfg.activation), aggr="max")
            )

    def _layers(self, h: Tensor, pos: Tensor, batch: Tensor, w: Tensor | None) -> Tensor:
        h = torch.cat([h, pos], dim=-1)
        for i, layer in enumerate(self.layers):
            edge_index = (
                self.knn(pos, batch) if i == 0 else knn_graph(h.detach(), self.config.k, batch)
            )
            h = self._block(i, h, layer(h, edge_index, w))
        return h


class PointTransformer(PointCloudBackbone):
    r"""Point Transformer (Zhao et al., ICCV 2021) backbone (GeSS), PyG's ``PointTransformerConv``.

    Vector self-attention over the kNN neighbourhood with the position encoding
    :math:`\delta_{ij} = \theta(p_i - p_j)` (a 2-layer MLP) and attention MLP :math:`\gamma`.
    """

    model_name = "pointtransformer"

    def __init__(
        self, in_channels: int, out_channels: int, config: PointCloudConfig | None = None
    ) -> None:
        if config is None:
            config = PointCloudConfig(model="pointtransformer", hidden_channels=32)
        super().__init__(in_channels, out_channels, config)
        cfg = self.config
        h = cfg.hidden_channels
        self.layers = nn.ModuleList(
            _WeightedPointTransformerConv(
                h,
                h,
                pos_nn=_mlp([cfg.pos_dim, h, h], cfg.activation),
                attn_nn=_mlp([h, h, h], cfg.activation),
            )
            for _ in range(cfg.num_layers)
        )

    def _layers(self, h: Tensor, pos: Tensor, batch: Tensor, w: Tensor | None) -> Tensor:
        edge_index = self.knn(pos, batch)
        for i, layer in enumerate(self.layers):
            h = self._block(i, h, layer(h, pos, edge_index, w))
        return h
