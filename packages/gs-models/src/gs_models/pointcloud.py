r"""Geometric backbones for point clouds (GeSS): EGNN, DGCNN and Point Transformer.

The three backbones follow the GeSS authors' code (Graph-COM/GESS, ``GESS/models/backbones``
and ``GESS/models/models/base_model.py``); the paper (section 4.1, appendices B and F) names
the backbones and their widths but not their layers. Every backbone

1. embeds the point features ``x`` (categorical atom types through ``nn.Embedding``, or float
   features such as Track's all-ones through a linear layer);
2. builds the kNN graph of the coordinates ``pos`` with self loops (``k`` = 5 for Track, GeSS
   ``BaseModel.calc_geo_feat``; :func:`gs_models.knn.knn_graph`), or takes it precomputed
   (``edge_index=``, so a training run builds each cloud's graph once, not once per epoch);
3. gives every edge ``j -> i`` the features ``[|p_j - p_i|, (p_j - p_i) / (|p_j - p_i| +
   1e-6)]`` (GeSS ``calc_edge_attr``), linearly encoded to ``hidden_channels``
   (``config.edge_features``);
4. runs ``num_layers`` layers, each ``h <- dropout(h + layer(h))`` (GeSS ``BaseGDLEncoder``:
   residual first, then dropout 0.2);
5. sum-pools the points of each cloud and applies GeSS's classifier ``MLP([h, 2h, h, out])``
   with batch norm, ReLU and dropout after each hidden layer.

The layers (``E_GCL_mask``, ``EdgeConv`` and ``TransformerBlock`` of the GeSS code):

* **EGNN** (Satorras et al. 2021, eq. 3 and 5): :math:`m_{ij} = \phi_e(h_j, h_i, d_{ij}^2,
  e_{ij})`, :math:`h_j' = \mathrm{ReLU}(\mathrm{BN}(\phi_h(h_j, \sum_i m_{ij})))`. As in the
  GeSS code the messages are summed at the *source* ``j`` of each kNN edge (its
  ``unsorted_segment_sum(edge_feat, row)`` with ``row = edge_index[0]``): a point collects one
  message from every point that counts it among its ``k`` nearest, so the number of messages
  varies from point to point. Coordinates are not updated (``update_pos`` adds eq. 4).
* **DGCNN** (Wang et al. 2019) as GeSS runs it: a *static* EdgeConv on the coordinate kNN
  graph, :math:`h_i' = \mathrm{ReLU}(\mathrm{BN}(W\,\mathrm{mean}_j\,\mathrm{MLP}([h_i, h_j -
  h_i, e_{ij}])))` with ``MLP = [3h, 2h, h]`` (batch norm and ReLU inside). The original
  DGCNN rebuilds the graph in feature space at every layer; the GeSS code does not.
* **Point Transformer** (Zhao et al. 2021) as GeSS's ``TransformerBlock``: ``lin_in`` + ReLU,
  vector attention :math:`\alpha_{ij} = \mathrm{softmax}_j(W_d h_i - W_s h_j + \delta_{ij})`
  with :math:`\delta_{ij} = \theta(p_i - p_j)` (one linear layer), message
  :math:`\alpha_{ij} \odot (W h_j + \delta_{ij} + e_{ij})` summed at ``i``, ``lin_out`` +
  ReLU; no normalisation.

``forward(x, pos, batch=None) -> (graph_embeddings, outputs)`` with shapes
``(B, hidden_channels)`` and ``(B, out_channels)``; ``B = batch.max() + 1``.

Two keyword inputs serve the interpretable / rationale methods of GeSS (DIR and LRI, run in
gs-algos), which must act on embeddings or message weights and never on the categorical
atom types:

* ``point_weight`` (N,) in [0, 1]: every message ``j -> i`` of every layer is multiplied by
  ``w_i * w_j``. This is the node-to-edge attention of the GeSS reference implementation
  (``LRIBern.node_attn_to_edge_attn``: ``edge_attn = attn[src] * attn[dst]``, applied to the
  messages of every layer, ``msg * edge_attn``). In EGNN and DGCNN a zero weight cuts the
  point off; in Point Transformer the weight multiplies the message after the neighbourhood
  softmax, so the point still enters its neighbours' attention normalisation (as in the
  GeSS code).
* ``features`` (N, hidden_channels) float: point features used instead of the embedding of
  ``x`` (the ``with_enc=False`` path of the GeSS encoders, by which DIR feeds the
  rationale generator's embeddings to the classifier encoder).

Cost: the first linear layer of every message MLP acts on a concatenation ``[h_i, h_j,
...]``; it is computed as ``h W_a`` and ``h W_b`` once per point, then gathered per edge,
and the linear edge encoder is folded into it (``e_ij`` enters as ``geom_ij (W_e W_enc)``).
That is the same function with the same parameters as the concatenated form, with a
fraction of the multiply-adds (``k + 1`` edges per point).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.nn import global_add_pool
from torch_geometric.utils import scatter, softmax

from gs_models._validation import check_positive_int
from gs_models.configs import PointCloudConfig
from gs_models.knn import knn_graph
from gs_models.node import make_activation, make_norm

__all__ = ["DGCNN", "EGNN", "EGNNLayer", "PointCloudBackbone", "PointTransformer", "edge_geometry"]


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


def edge_geometry(pos: Tensor, edge_index: Tensor, kind: str = "distance_direction") -> Tensor:
    r"""Geometric features of the edges ``j -> i`` (``edge_index[0] = j``, ``[1] = i``).

    ``"distance_direction"``: ``[|p_j - p_i|, (p_j - p_i) / (|p_j - p_i| + 1e-6)]`` of shape
    ``(E, D + 1)`` (GeSS ``BaseModel.calc_edge_attr``; a self loop gets zeros);
    ``"distance"``: ``(E, 1)``; ``"none"``: ``(E, 0)``;
    ``"distance_direction_beam"`` (not GeSS; a probe for Track, issue 29): the distance and the
    direction written in the spherical frame ``(r, theta, phi)`` of the centre ``p_i`` about the
    ``z`` (beam) axis, ``(E, 4)``: invariant to rotations about the beam axis and not to
    translations, so a straight track from the axis (constant ``phi``) is seen as such at
    every centre.
    ``"distance_direction_beam_abs"`` (not GeSS; the gess ``ci`` profile's Track setting): the
    same four columns in absolute value, ``[d, |u.r|, |u.theta|, |u.phi|]``: also invariant to
    the reflections ``phi -> -phi`` and ``theta -> -theta`` of the direction.
    """
    j, i = edge_index[0], edge_index[1]
    rel = pos.index_select(0, j) - pos.index_select(0, i)
    dist = torch.linalg.vector_norm(rel, dim=-1, keepdim=True)
    if kind == "distance_direction":
        return torch.cat([dist, rel / (dist + 1e-6)], dim=-1)
    if kind in ("distance_direction_beam", "distance_direction_beam_abs"):
        u = rel / (dist + 1e-6)
        c = pos.index_select(0, i)
        r_hat = c / (torch.linalg.vector_norm(c, dim=-1, keepdim=True) + 1e-9)
        rho = torch.sqrt(c[:, 0:1] ** 2 + c[:, 1:2] ** 2)
        phi_hat = torch.cat([-c[:, 1:2], c[:, 0:1], torch.zeros_like(rho)], dim=-1) / (rho + 1e-9)
        theta_hat = torch.linalg.cross(phi_hat, r_hat)
        comps = torch.stack([(u * r_hat).sum(-1), (u * theta_hat).sum(-1), (u * phi_hat).sum(-1)], dim=-1)
        return torch.cat([dist, comps.abs() if kind.endswith("_abs") else comps], dim=-1)
    if kind == "distance":
        return dist
    return rel.new_zeros(rel.size(0), 0)


class _SplitLinear(nn.Module):
    r"""A linear layer over the concatenation ``[h_a[idx_a], h_b[idx_b], extra, encoded edge]``
    of each edge, computed without building it: ``A[idx_a] + B[idx_b] + extra W_x + geom
    (W_e W_enc)^T + (b + W_e b_enc)`` with ``A = h_a W_a^T`` and ``B = h_b W_b^T`` per point.

    The parameters are those of ``nn.Linear(2 * channels + extra + enc, out)`` (``weight``
    and ``bias``), so the module computes exactly that layer on the concatenation.
    """

    def __init__(self, channels: int, extra: int, enc: int, out: int) -> None:
        super().__init__()
        self.channels, self.extra, self.enc = channels, extra, enc
        lin = nn.Linear(2 * channels + extra + enc, out)
        self.weight, self.bias = lin.weight, lin.bias

    def edge_part(self, extra: Tensor | None, geom: Tensor | None,
                  encoder: nn.Linear | None) -> tuple[Tensor | None, Tensor | None, Tensor]:
        """The per-edge inputs and what multiplies them: ``(cols, w_c, bias)`` with ``cols =
        [extra, geom]`` (E, extra + G), ``w_c`` (extra + G, out) contiguous (the raw edge
        features' weights folded with the encoder's) and the folded bias; ``cols`` and
        ``w_c`` are ``None`` when the layer has no per-edge inputs."""
        c, w = self.channels, self.weight
        cols, mats, bias = [], [], self.bias
        if self.extra:
            cols.append(extra)
            mats.append(w[:, 2 * c : 2 * c + self.extra])
        if self.enc:
            w_e = w[:, 2 * c + self.extra :]
            cols.append(geom)
            mats.append(w_e @ encoder.weight)
            bias = bias + w_e @ encoder.bias
        if not cols:
            return None, None, bias
        # the (in, out) matrix contiguous, not a transposed view: its gradient is then taken
        # as cols^T @ grad, which MKL computes ~8x faster than the (grad^T @ cols)^T that
        # autograd takes for a transposed view when cols has a handful of columns
        return torch.cat(cols, dim=-1).contiguous(), torch.cat(mats, dim=-1).t().contiguous(), bias

    def forward(self, h_a: Tensor, h_b: Tensor, idx_a: Tensor, idx_b: Tensor,
                extra: Tensor | None, geom: Tensor | None, encoder: nn.Linear | None) -> Tensor:
        c = self.channels
        w = self.weight
        # the per-edge inputs (extra, raw edge features) in one matrix product with the
        # bias, then the two gathered per-point products: 2 additions of (E, out)
        cols, w_c, bias = self.edge_part(extra, geom, encoder)
        gathered = F.linear(h_a, w[:, :c]).index_select(0, idx_a)
        if cols is not None:
            out = torch.addmm(bias, cols, w_c)
            out = out.add_(gathered)  # in place: addmm's backward does not keep its output
        else:
            out = gathered + bias
        b = F.linear(h_b, w[:, c : 2 * c])
        r = _repeat_count(idx_b, b.size(0))
        if r:  # idx_b = [0]*r + [1]*r + ...: a broadcast add, whose backward is a sum, not a scatter
            # (out of place: an in-place op on a view makes autograd copy the whole gradient)
            return (out.view(-1, r, out.size(1)) + b.unsqueeze(1)).view(out.shape)
        return out.add_(b.index_select(0, idx_b))


def _repeat_count(index: Tensor, size: int) -> int:
    """``r`` if ``index`` is ``arange(size).repeat_interleave(r)`` (each of the ``size``
    points the centre of ``r`` consecutive edges, as in a kNN graph of clouds that all have
    at least ``k`` points), else 0."""
    n = index.numel()
    if size == 0 or n == 0 or n % size:
        return 0
    r = n // size
    first = index.view(size, r)
    expect = torch.arange(size, device=index.device, dtype=index.dtype).unsqueeze(1)
    return r if bool((first == expect).all()) else 0


def _dropout(h: Tensor, p: float, training: bool) -> Tensor:
    """Inverted dropout, as ``F.dropout``: each entry kept with probability ``1 - p`` and scaled
    by ``1 / (1 - p)``. The mask is ``max(sign(u - p), 0) / (1 - p)`` for ``u = rand_like(h)``
    (kept where ``u > p``; ``u == p`` has probability 2^-24 at float32): on a CPU about twice
    as fast as the ``bernoulli_`` draw of ``F.dropout`` (6 % of a Track training step), and the
    mask built with float arithmetic, not a comparison: this torch's bool tensors and their
    conversion take about 5x a float pass on the development machine. Same distribution as
    ``F.dropout``, another random stream."""
    if not training or p == 0.0:
        return h
    if p >= 1.0:
        return h * 0.0
    return h * torch.rand_like(h).sub_(p).sign_().clamp_min_(0.0).mul_(1.0 / (1.0 - p))


def _sum_at(values: Tensor, index: Tensor, size: int) -> Tensor:
    """``out[n] = sum of values[e] with index[e] == n`` by ``index_add_`` (its backward is an
    ``index_select``, cheaper than the ``gather`` of a broadcast ``scatter_add``)."""
    return values.new_zeros(size, values.size(1)).index_add_(0, index, values)


#: rows of edges per block in :class:`_FusedEGNNMessages`: a block's (rows, 64) float32
#: intermediates (about 1 MB at 4,096 rows) stay in a core's L2 cache between the steps
EGNN_FUSED_BLOCK = 4096


class _FusedEGNNMessages(torch.autograd.Function):
    r"""EGNN's message MLP and sum, block by block over the edges, forward and backward.

    .. math::
        z_e = A_{j_e} + B_{i_e} + c_e W_c + b,\quad
        m_e = \mathrm{ReLU}(\mathrm{ReLU}(z_e) W_2^\top + b_2),\quad
        \mathrm{agg}_n = \textstyle\sum_{e:\, j_e = n} m_e

    (``A = h W_a^T``, ``B = h W_b^T`` per point, ``c`` the per-edge columns ``[d^2, edge
    features]`` with ``W_c`` the folded weights of :class:`_SplitLinear`): the function
    ``EGNNLayer`` computes with ``phi_e_rest`` and :func:`_sum_at`, with the same parameters.
    Computed in blocks of :data:`EGNN_FUSED_BLOCK` edges, each block's gather, two products,
    activations and scatter in one pass while it is in cache; autograd's version makes about
    ten passes over ``(E, H)`` tensors in memory and runs the ``(E, H) x (H, H)`` products on
    the whole matrix, at about two thirds of the rate MKL reaches on cache-sized blocks on
    the development machine. The backward is written out (tested against autograd's in
    float64). Saved for it: ``z`` and ``m`` (E, H), as autograd would.

    ``r > 0``: ``i = arange(N).repeat_interleave(r)`` (the kNN centres), so ``B`` is added by
    broadcast and its gradient is a block sum; else ``i`` is gathered and scattered.
    """

    @staticmethod
    def forward(ctx, a, b, cols, w_c, bias, w2, b2, j, i, r: int, block: int):
        e_count, hid = j.numel(), a.size(1)
        if r:
            block = max(r, block - block % r)
        j, i = j.long(), i.long()  # int32 indices would be converted in every block's call
        # for a backward, z and m are kept whole; without one (evaluation) two block-sized
        # buffers serve every block: fresh (E, H) arrays are page-faulted in on their first
        # write, which made an evaluation pass slower than autograd's
        keep = any(ctx.needs_input_grad)
        z = a.new_empty(e_count if keep else min(block, e_count), hid)
        m = a.new_empty(z.shape)
        agg = a.new_zeros(a.size(0), hid)
        w2t = w2.t().contiguous()
        for s in range(0, e_count, block):
            e = min(e_count, s + block)
            o, f = (s, e) if keep else (0, e - s)  # where this block's rows go in z and m
            zc = torch.addmm(bias, cols[s:e], w_c, out=z[o:f])
            zc.add_(a.index_select(0, j[s:e]))
            if r:
                zc.view(-1, r, hid).add_(b[s // r: e // r].unsqueeze(1))
            else:
                zc.add_(b.index_select(0, i[s:e]))
            mc = torch.clamp_min(torch.addmm(b2, zc.clamp_min(0), w2t), 0, out=m[o:f])
            agg.index_add_(0, j[s:e], mc)
        if keep:
            ctx.save_for_backward(z, m, cols, w2, j, i)
        ctx.r, ctx.block = r, block
        return agg

    @staticmethod
    def backward(ctx, g_agg):
        z, m, cols, w2, j, i = ctx.saved_tensors
        relu_grad = torch.ops.aten.threshold_backward  # grad * (x > 0) in one pass
        r, block = ctx.r, ctx.block
        e_count, hid = z.shape
        g_agg = g_agg.contiguous()
        g_a = z.new_zeros(g_agg.size(0), hid)
        g_b = torch.zeros_like(g_a)  # B has a row per point, as A
        g_wc = z.new_zeros(cols.size(1), hid)
        g_bias = z.new_zeros(hid)
        g_w2t = z.new_zeros(hid, hid)  # (in, out)
        g_b2 = z.new_zeros(hid)
        for s in range(0, e_count, block):
            e = min(e_count, s + block)
            zc = z[s:e]
            gv = relu_grad(g_agg.index_select(0, j[s:e]), m[s:e], 0.0)
            g_w2t.addmm_(zc.clamp_min(0).t(), gv)
            g_b2.add_(gv.sum(0))
            gz = relu_grad(torch.mm(gv, w2), zc, 0.0)
            g_a.index_add_(0, j[s:e], gz)
            if r:
                g_b[s // r: e // r].add_(gz.view(-1, r, hid).sum(1))
            else:
                g_b.index_add_(0, i[s:e], gz)
            g_wc.addmm_(cols[s:e].t(), gz)
            g_bias.add_(gz.sum(0))
        return g_a, g_b, None, g_wc, g_bias, g_w2t.t().contiguous(), g_b2, None, None, None, None


class PointCloudBackbone(nn.Module):
    """Shared input embedding, kNN graph, edge features, validation, pooling and head of the
    point-cloud backbones."""

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
        #: width of the raw edge features (0: none) and their linear encoder (GeSS
        #: ``edge_encoder = FeatEncoder(h, [], pos_dim + 1)``)
        self.edge_dim = {"distance_direction": cfg.pos_dim + 1, "distance": 1, "none": 0,
                         "distance_direction_beam": 4, "distance_direction_beam_abs": 4}[cfg.edge_features]
        if cfg.edge_features.startswith("distance_direction_beam") and cfg.pos_dim != 3:
            raise ValueError(f"edge_features={cfg.edge_features!r} needs 3-D coordinates, got pos_dim={cfg.pos_dim}")
        self.edge_encoder = nn.Linear(self.edge_dim, h) if self.edge_dim else None
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
        #: the ``config.num_layers`` message-passing layers, built last (after the head), each
        #: by the subclass's :meth:`_layer`
        self.layers = nn.ModuleList(self._layer(cfg) for _ in range(cfg.num_layers))

    def _layer(self, cfg: PointCloudConfig) -> nn.Module:
        """One message-passing layer of this backbone (subclasses define it)."""
        raise NotImplementedError(f"{type(self).__name__} must define _layer(config)")

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

    def _check_edges(self, edge_index: Tensor | None, pos: Tensor, batch: Tensor) -> Tensor:
        """The given coordinate kNN graph, checked, or the one built from ``pos``."""
        if edge_index is None:
            return self.knn(pos, batch)
        n = pos.size(0)
        if (not isinstance(edge_index, Tensor) or edge_index.dim() != 2 or edge_index.size(0) != 2
                or edge_index.dtype not in (torch.int64, torch.int32)):
            raise ValueError(
                "edge_index must be an integer tensor of shape (2, num_edges) holding the kNN graph "
                f"of pos (as knn_graph(pos, k, batch, loop=self_loops)), got "
                f"{getattr(edge_index, 'dtype', type(edge_index).__name__)} "
                f"{tuple(getattr(edge_index, 'shape', ()))}"
            )
        if edge_index.numel() and (int(edge_index.min()) < 0 or int(edge_index.max()) >= n):
            raise ValueError(f"edge_index refers to points outside [0, {n - 1}] (pos has {n} points)")
        return edge_index.long()

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
        edge_index: Tensor | None = None,
        point_weight: Tensor | None = None,
        features: Tensor | None = None,
    ) -> Tensor:
        """Point representations after the last layer, ``(N, hidden_channels)`` (before pooling).

        ``edge_index`` (2, E): the coordinate kNN graph of ``pos`` if already built (e.g. cached
        with the data; it must equal ``self.knn(pos, batch)``; otherwise it is built here);
        ``point_weight`` (N,) weights every message ``j -> i`` by ``w_i * w_j``; ``features``
        (N, hidden) replaces the embedding of ``x`` (module docstring).
        """
        batch = self._check(x, pos, batch, features is not None)
        h0, w = self._inputs(x, pos, point_weight, features)
        edge_index = self._check_edges(edge_index, pos, batch)
        geom = edge_geometry(pos, edge_index, self.config.edge_features)
        ew = None
        if w is not None:  # GeSS: edge_attn = attn[src] * attn[dst]
            ew = w.index_select(0, edge_index[0]) * w.index_select(0, edge_index[1])
        h = h0
        for layer in self.layers:
            out = layer(h, pos, edge_index, geom, self.edge_encoder, ew)
            h = h + out if self.config.residual and h.shape == out.shape else out
            h = _dropout(h, self.config.dropout, self.training)
        return h

    def forward(
        self, x: Tensor | None, pos: Tensor, batch: Tensor | None = None, **inputs: Tensor | None
    ) -> tuple[Tensor, Tensor]:
        """Return ``(graph_embeddings (B, hidden), outputs (B, out_channels))``: the sum (or
        ``config.pool``) of :meth:`point_embeddings` per cloud, and the head on it.

        ``inputs``: the keyword inputs of :meth:`point_embeddings` (``edge_index``,
        ``point_weight``, ``features``), declared there; any other is a ``TypeError``.
        """
        h = self.point_embeddings(x, pos, batch, **inputs)
        batch = self._check(x, pos, batch, inputs.get("features") is not None)
        size = int(batch.max()) + 1 if batch.numel() else 0
        pool = self.config.pool
        g = global_add_pool(h, batch, size=size) if pool == "sum" else scatter(h, batch, 0, dim_size=size, reduce=pool)
        return g, self.head(g)

    def knn(self, pos: Tensor, batch: Tensor) -> Tensor:
        """The kNN graph of the coordinates (``k = config.k``; a point is one of its own
        neighbours when ``config.self_loops``)."""
        return knn_graph(pos, self.config.k, batch, loop=self.config.self_loops)


class EGNNLayer(nn.Module):
    r"""E(n)-equivariant graph convolution as GeSS's ``E_GCL_mask`` (Satorras, Hoogeboom &
    Welling, ICML 2021, eqs. 3-6), on the edges ``j -> i`` of a kNN graph.

    .. math::
        m_{ji} = \phi_e(h_j, h_i, \lVert x_j - x_i\rVert^2, e_{ji}),\quad
        h_j' = \mathrm{act}\big(\mathrm{norm}\big(\phi_h(h_j, \textstyle\sum_{i} m_{ji})\big)\big),

    the messages summed at the source ``j`` of each edge (GeSS: ``row = edge_index[0]``).
    With ``update_pos``: :math:`x_j' = x_j + \frac{1}{|\{i\}|}\sum_i (x_j - x_i)\phi_x(m_{ji})`.

    Shapes: ``h`` (N, H), ``pos`` (N, D), ``edge_index`` (2, E), ``geom`` (E, G) raw edge
    features (:func:`edge_geometry`) with their ``encoder`` ``nn.Linear(G, H)`` (or ``None``
    and G = 0), ``edge_weight`` (E, 1) or ``None`` -> ``h'`` (N, H) (and the new positions
    when called through :meth:`forward_with_pos`).
    """

    def __init__(self, channels: int, activation: str = "relu", update_pos: bool = False,
                 edge_channels: int = 0, norm: str | None = None) -> None:
        super().__init__()
        self.edge_in = _SplitLinear(channels, 1, channels if edge_channels else 0, channels)
        # the second activation in place (the linear's output is not kept by its backward); not
        # the first: its input may be a view (the broadcast path), and an in-place op on a view
        # makes autograd copy the whole (E, H) gradient in the backward
        self.phi_e_rest = nn.Sequential(make_activation(activation), nn.Linear(channels, channels),
                                        make_activation(activation, inplace=True))
        self.phi_h = _mlp([2 * channels, channels, channels], activation)
        self.norm = make_norm(norm, channels)
        self.act = make_activation(activation)
        self.update_pos = update_pos
        self.phi_x = _mlp([channels, channels, 1], activation) if update_pos else None
        #: compute the messages with :class:`_FusedEGNNMessages` where :meth:`_fusable`
        self.fused = True

    def forward_with_pos(self, h: Tensor, pos: Tensor, edge_index: Tensor, geom: Tensor | None = None,
                         encoder: nn.Linear | None = None,
                         edge_weight: Tensor | None = None) -> tuple[Tensor, Tensor]:
        j, i = edge_index[0], edge_index[1]
        # index_select, not h[i]: the backward of advanced indexing accumulates with
        # index_put_, whose order on a multi-threaded CPU varies from run to run (a seeded
        # training would not repeat bit for bit); index_select's backward is index_add_
        rel = pos.index_select(0, j) - pos.index_select(0, i)
        d2 = (rel * rel).sum(-1, keepdim=True)
        if self._fusable(d2, geom, edge_weight):
            agg = self._fused_sum(h, j, i, d2, geom, encoder)
        else:
            # phi_e's first layer on [h_j, h_i, d2, e_ji] (GeSS: h[row], h[col], radial, edge_attr)
            m = self.phi_e_rest(self.edge_in(h, h, j, i, d2, geom, encoder))
            if edge_weight is not None:  # GeSS E_GCL_mask: edge_feat = edge_attn * edge_feat
                m = m * edge_weight
            agg = _sum_at(m, j, h.size(0))
            if self.phi_x is not None:
                pos = pos + scatter(rel * self.phi_x(m), j, dim=0, dim_size=h.size(0), reduce="mean")
        return self.act(self.norm(self.phi_h(torch.cat([h, agg], dim=-1)))), pos

    def forward(self, h: Tensor, pos: Tensor, edge_index: Tensor, geom: Tensor | None = None,
                encoder: nn.Linear | None = None, edge_weight: Tensor | None = None) -> Tensor:
        return self.forward_with_pos(h, pos, edge_index, geom, encoder, edge_weight)[0]

    def _fusable(self, d2: Tensor, geom: Tensor | None, edge_weight: Tensor | None) -> bool:
        """Whether :class:`_FusedEGNNMessages` computes this layer's messages: on a CPU (its
        blocks are sized for a core's cache; on a GPU they would be hundreds of small kernel
        launches per layer), ReLU activations (GeSS's), no message weights (DIR / LRI) and no
        coordinate update, edge inputs without gradient; ``fused=False`` turns it off."""
        return (self.fused and d2.device.type == "cpu" and edge_weight is None and self.phi_x is None
                and isinstance(self.phi_e_rest[0], nn.ReLU) and isinstance(self.phi_e_rest[2], nn.ReLU)
                and not d2.requires_grad and (geom is None or not geom.requires_grad))

    def _fused_sum(self, h: Tensor, j: Tensor, i: Tensor, d2: Tensor, geom: Tensor | None,
                   encoder: nn.Linear | None) -> Tensor:
        lin, c = self.edge_in, self.edge_in.channels
        cols, w_c, bias = lin.edge_part(d2, geom, encoder)  # d2 always: EGNN's extra column
        second = self.phi_e_rest[1]
        return _FusedEGNNMessages.apply(
            F.linear(h, lin.weight[:, :c]), F.linear(h, lin.weight[:, c: 2 * c]), cols, w_c, bias,
            second.weight, second.bias, j, i, _repeat_count(i, h.size(0)), EGNN_FUSED_BLOCK)


class EGNN(PointCloudBackbone):
    """EGNN backbone (GeSS ``EGNN`` of ``E_GCL_mask`` layers); see the module docstring.

    With ``edge_features="distance"`` or ``"none"`` the graph outputs are invariant to
    rotations, reflections and translations of ``pos``; with GeSS's default
    ``"distance_direction"`` to translations only. Always invariant to point permutations.
    With ``update_pos`` the layers move the points (Satorras et al., eq. 4); the kNN graph
    stays the one of the input coordinates.
    """

    model_name = "egnn"

    def _layer(self, cfg: PointCloudConfig) -> nn.Module:
        return EGNNLayer(cfg.hidden_channels, cfg.activation, cfg.update_pos, self.edge_dim, cfg.norm)

    def point_embeddings(self, x, pos, batch=None, *, edge_index=None, point_weight=None,
                         features=None) -> Tensor:
        if not self.config.update_pos:
            return super().point_embeddings(x, pos, batch, edge_index=edge_index,
                                            point_weight=point_weight, features=features)
        batch = self._check(x, pos, batch, features is not None)
        h, w = self._inputs(x, pos, point_weight, features)
        edge_index = self._check_edges(edge_index, pos, batch)
        geom = edge_geometry(pos, edge_index, self.config.edge_features)
        ew = None if w is None else w.index_select(0, edge_index[0]) * w.index_select(0, edge_index[1])
        for layer in self.layers:
            out, pos = layer.forward_with_pos(h, pos, edge_index, geom, self.edge_encoder, ew)
            h = h + out if self.config.residual else out
            h = _dropout(h, self.config.dropout, self.training)
        return h


class _EdgeConv(nn.Module):
    """GeSS's ``EdgeConv``: ``act(norm(post(mean_j MLP([h_i, h_j - h_i, e_ij]))))`` with
    ``MLP = [3h, 2h, h]`` (norm and activation after the hidden layer, no dropout)."""

    def __init__(self, channels: int, activation: str, norm: str | None, edge_channels: int) -> None:
        super().__init__()
        c = channels
        # Linear(3c) over [h_i, h_j - h_i, e] == h_i (W_a - W_b) + h_j W_b + e W_e
        self.first = _SplitLinear(c, 0, c if edge_channels else 0, 2 * c)
        self.rest = nn.Sequential(make_norm(norm, 2 * c), make_activation(activation),
                                  nn.Linear(2 * c, c))
        self.post = nn.Linear(c, c)
        self.norm = make_norm(norm, c)
        self.act = make_activation(activation)

    def forward(self, h: Tensor, pos: Tensor, edge_index: Tensor, geom: Tensor | None,
                encoder: nn.Linear | None, edge_weight: Tensor | None) -> Tensor:
        j, i = edge_index[0], edge_index[1]
        c = self.first.channels
        w = self.first.weight
        # [h_i, h_j - h_i] W^T = h_i (W_a - W_b)^T + h_j W_b^T
        h_dst = F.linear(h, w[:, :c] - w[:, c : 2 * c])
        pre = h_dst.index_select(0, i) + F.linear(h, w[:, c : 2 * c]).index_select(0, j)
        bias = self.first.bias
        if self.first.enc:
            w_e = w[:, 2 * c :]
            pre = pre + F.linear(geom, w_e @ encoder.weight)
            bias = bias + w_e @ encoder.bias
        msg = self.rest(pre + bias)
        if edge_weight is not None:
            msg = msg * edge_weight
        counts = torch.bincount(i, minlength=h.size(0)).clamp(min=1).unsqueeze(-1)
        out = _sum_at(msg, i, h.size(0)) / counts.to(msg.dtype)
        return self.act(self.norm(self.post(out)))


class DGCNN(PointCloudBackbone):
    r"""DGCNN backbone as the GeSS code runs it: static EdgeConv layers on the coordinate kNN
    graph with mean aggregation (module docstring). The original DGCNN (Wang et al., TOG
    2019) recomputes the graph in feature space at every layer; GeSS's ``DGCNN`` builds it
    once from the coordinates."""

    model_name = "dgcnn"

    def _layer(self, cfg: PointCloudConfig) -> nn.Module:
        return _EdgeConv(cfg.hidden_channels, cfg.activation, cfg.norm, self.edge_dim)


class _TransformerBlock(nn.Module):
    r"""GeSS's ``TransformerBlock``: ``relu(lin_out(conv(relu(lin_in(h)))))`` with the vector
    attention conv :math:`\sum_j \mathrm{softmax}_j(W_d h_i - W_s h_j + \delta_{ij}) \odot
    (W h_j + \delta_{ij} + e_{ij})`, :math:`\delta_{ij} = \theta(p_i - p_j)` linear; ``norm``
    (``PointCloudConfig.pt_norm``, not GeSS) sits between ``lin_out`` and its ReLU."""

    def __init__(self, channels: int, pos_dim: int, edge_channels: int, delta: str = "position",
                 norm: str | None = None) -> None:
        super().__init__()
        c = channels
        self.lin_in = nn.Linear(c, c)
        self.lin_out = nn.Linear(c, c)
        self.lin = nn.Linear(c, c, bias=False)
        self.lin_src = nn.Linear(c, c, bias=False)
        self.lin_dst = nn.Linear(c, c, bias=False)
        self.delta = delta
        if delta == "edge_mlp":  # PointCloudConfig.pt_delta: not GeSS (issue 29 probe)
            self.pos_nn = nn.Sequential(nn.Linear(edge_channels, c), nn.ReLU(), nn.Linear(c, c))
        else:
            self.pos_nn = nn.Linear(pos_dim, c)
        self.uses_edges = bool(edge_channels) and delta == "position"
        self.norm = make_norm(norm, c)  # nn.Identity for GeSS's block (norm=None)

    def forward(self, h: Tensor, pos: Tensor, edge_index: Tensor, geom: Tensor | None,
                encoder: nn.Linear | None, edge_weight: Tensor | None) -> Tensor:
        j, i = edge_index[0], edge_index[1]
        x = F.relu(self.lin_in(h))
        if self.delta == "edge_mlp":
            delta = self.pos_nn(geom)
        else:
            delta = self.pos_nn(pos.index_select(0, i) - pos.index_select(0, j))
        alpha = self.lin_dst(x).index_select(0, i) - self.lin_src(x).index_select(0, j) + delta
        alpha = softmax(alpha, i, num_nodes=h.size(0))
        val = self.lin(x).index_select(0, j) + delta
        if self.uses_edges:
            val = val + encoder(geom)
        msg = alpha * val
        if edge_weight is not None:
            msg = msg * edge_weight
        return F.relu(self.norm(self.lin_out(_sum_at(msg, i, h.size(0)))))


class PointTransformer(PointCloudBackbone):
    r"""Point Transformer backbone (Zhao et al., ICCV 2021) as GeSS's ``TransformerBlock``
    layers (module docstring; hidden 32 in GeSS)."""

    model_name = "pointtransformer"

    def __init__(
        self, in_channels: int, out_channels: int, config: PointCloudConfig | None = None
    ) -> None:
        if config is None:
            config = PointCloudConfig(model="pointtransformer", hidden_channels=32)
        super().__init__(in_channels, out_channels, config)
        if self.config.pt_delta == "edge_mlp":  # each block's MLP reads the raw edge features
            self.edge_encoder = None

    def _layer(self, cfg: PointCloudConfig) -> nn.Module:
        return _TransformerBlock(cfg.hidden_channels, cfg.pos_dim, self.edge_dim, cfg.pt_delta, cfg.pt_norm)
