"""Deep Ensemble members trained side by side in one batched forward pass.

Members of a Deep Ensemble (Lakshminarayanan et al. 2017) share the graph, the features,
the labels and the training protocol; only their initialisation (and dropout draws)
differ. :class:`StackedNodeGNN` holds ``M`` :class:`gs_models.NodeGNN` members with every
parameter stacked along a leading member axis and computes all members' logits at once:

* the shared input enters one matrix product with the members' first weight matrices
  side by side (``X @ [W_1^T ... W_M^T]``; a sparse CSR ``X`` is multiplied once);
* graph propagation is one sparse-dense product of the GCN adjacency with the members'
  hidden states side by side (``(N, M * hidden)``);
* hidden linear maps are one batched matrix product (``torch.bmm``);
* batch norm over the ``M * hidden`` columns is exactly ``M`` independent batch norms
  (each column is normalised on its own), layer norm is taken per member.

:func:`fit_stacked_node` trains the stack with one Adam over the stacked parameters on the
*sum* of the members' mean cross-entropies. Every member's gradient depends only on its
own parameters and Adam's update is elementwise, so each member follows exactly the
trajectory it would follow alone (to float rounding; dropout masks are drawn for the
whole stack at once, so with dropout the draws differ from sequential training, not their
distribution). Each member keeps its own best epoch on the selection part.
"""

from __future__ import annotations

import copy
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from gs_algos.config import TrainConfig
from gs_algos.device import as_device, fork_rng_of

__all__ = ["StackedNodeGNN", "StackedFitResult", "fit_stacked_node", "stackable"]

log = logging.getLogger(__name__)

_SUPPORTED_MODELS = ("gcn", "mlp")


def stackable(models: Sequence[nn.Module]) -> bool:
    """Whether ``models`` can be trained as one :class:`StackedNodeGNN`: at least two
    :class:`gs_models.NodeGNN` of the same shape, GCN or MLP layers, a linear head and no
    input dropout."""
    from gs_models.node import NodeGNN

    if len(models) < 2 or not all(type(m) is NodeGNN for m in models):
        return False
    c = models[0].config
    return (
        c.model in _SUPPORTED_MODELS
        and c.head == "linear"
        and c.input_dropout == 0
        and all(m.config == c and m.in_channels == models[0].in_channels
                and m.out_channels == models[0].out_channels for m in models)
    )


class StackedNodeGNN(nn.Module):
    """``M`` NodeGNN members with stacked parameters; ``forward`` returns ``(emb, logits)``
    of shapes ``(M, N, D)`` and ``(M, N, C)``.

    Build it from trained or freshly initialised members (:meth:`from_members`) and write
    the weights back with :meth:`member_state_dicts` (keys as in ``NodeGNN.state_dict``).
    """

    def __init__(self, members: Sequence[nn.Module]) -> None:
        super().__init__()
        if not stackable(members):
            raise ValueError(
                "members must be >= 2 gs_models.NodeGNN of identical config with model in "
                f"{list(_SUPPORTED_MODELS)}, head='linear' and input_dropout=0"
            )
        self.num_members = len(members)
        self.config = members[0].config
        self._template = [members[0]]  # a plain list: not a submodule (no duplicate params)
        self._keys = list(members[0].state_dict().keys())
        states = [m.state_dict() for m in members]
        self._names: dict[str, str] = {}
        for key in self._keys:
            stacked = torch.stack([s[key].detach().clone() for s in states])
            name = key.replace(".", "__")
            self._names[key] = name
            ref = dict(members[0].named_parameters())
            if key in ref:
                self.register_parameter(name, nn.Parameter(stacked))
            else:
                self.register_buffer(name, stacked)
        self._act_first = self.config.layer_order == "conv-act-norm"
        self.act = members[0].act.__class__()
        self._n_layers = len(members[0].layers)
        self._residual = list(members[0]._residual)
        self._norm_kind = self.config.norm
        #: batch-norm momentum of every member (torch's default, as ``NodeGNN``'s norms);
        #: ``fit_stacked_node`` raises it for ``TrainConfig.norm_updates_per_step > 1``
        self.norm_momentum = 0.1

    @classmethod
    def from_members(cls, members: Sequence[nn.Module]) -> StackedNodeGNN:
        return cls(members)

    def p(self, key: str) -> Tensor:
        return getattr(self, self._names[key])

    def member_state_dicts(self) -> list[dict[str, Tensor]]:
        """One ``NodeGNN`` state dict per member (CPU copies)."""
        return [
            {k: self.p(k)[m].detach().cpu().clone() for k in self._keys}
            for m in range(self.num_members)
        ]

    # ------------------------------------------------------------------ pieces
    def _linear_shared(self, x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
        """Shared input ``(N, in)`` times every member's ``(out, in)`` -> ``(N, M * out)``."""
        m, out, inp = w.shape
        w_all = w.reshape(m * out, inp).t()
        h = x @ w_all if not x.is_sparse_csr else torch.sparse.mm(x, w_all)
        return h + b.reshape(1, -1) if b is not None else h

    def _linear_members(self, h: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
        """Per-member input ``(N, M * in)`` times ``(M, out, in)`` -> ``(N, M * out)``."""
        m, out, inp = w.shape
        n = h.size(0)
        hm = h.reshape(n, m, inp).transpose(0, 1)  # (M, N, in)
        o = torch.bmm(hm, w.transpose(1, 2))  # (M, N, out)
        if b is not None:
            o = o + b.unsqueeze(1)
        return o.transpose(0, 1).reshape(n, m * out)

    def _norm(self, prefix: str, h: Tensor) -> Tensor:
        kind = self._norm_kind
        if kind is None:
            return h
        w, b = self.p(f"{prefix}.weight"), self.p(f"{prefix}.bias")
        m, width = w.shape
        if kind == "batch":
            rm = self.p(f"{prefix}.running_mean").view(-1)
            rv = self.p(f"{prefix}.running_var").view(-1)
            if self.training:
                self.p(f"{prefix}.num_batches_tracked").add_(1)
            return F.batch_norm(h, rm, rv, w.reshape(-1), b.reshape(-1), self.training,
                                self.norm_momentum, 1e-5)
        n = h.size(0)
        hm = F.layer_norm(h.reshape(n, m, width), (width,), eps=1e-5)
        return (hm * w + b).reshape(n, m * width)

    def _layer(self, i: int, h: Tensor, adj: Any, first: bool) -> Tensor:
        prefix = f"layers.{i}"
        if self.config.model == "gcn":
            w, b = self.p(f"{prefix}.lin.weight"), self.p(f"{prefix}.bias")
            hw = self._linear_shared(h, w, None) if first else self._linear_members(h, w, None)
            if adj is not None:
                hw = torch.sparse.mm(adj, hw) if adj.is_sparse_csr else adj @ hw
            return hw + b.reshape(1, -1)
        w, b = self.p(f"{prefix}.weight"), self.p(f"{prefix}.bias")
        return self._linear_shared(h, w, b) if first else self._linear_members(h, w, b)

    # ------------------------------------------------------------------ forward
    def forward(self, x: Tensor, edge_index: Tensor) -> tuple[Tensor, Tensor]:
        cfg, tpl = self.config, self._template[0]
        n = x.size(0)
        # the template member's caches: sparse CSR features and the normalised GCN
        # adjacency, built once per graph (its fast path, forced on for the stack)
        fast, tpl.fast_path = tpl.fast_path, True
        try:
            x = tpl._fast_features(x)
            x = getattr(x, "x", x)  # prepared sparse features: the CSR matrix itself
            g = tpl._fast_graph(edge_index, n) if cfg.model == "gcn" else None
        finally:
            tpl.fast_path = fast
        # no edges: GCN's self-loops alone make the propagation the identity
        adj = g.adj_t if g is not None and not isinstance(g, Tensor) else None
        h, first = x, True
        if "pre.weight" in self._names:
            h = self.act(self._linear_shared(x, self.p("pre.weight"), self.p("pre.bias")))
            if self._act_first:
                h = self._norm("pre_norm", h)
            pre_p = cfg.dropout if cfg.pre_dropout is None else cfg.pre_dropout
            h = F.dropout(h, pre_p, self.training)
            first = False
        for i in range(self._n_layers):
            conv = self._layer(i, h, adj, first)
            if self._act_first:
                out = self.act(conv)
                h_new = self._norm(f"norms.{i}", h + out if self._residual[i] else out)
            else:
                out = self.act(self._norm(f"norms.{i}", conv))
                h_new = h + out if self._residual[i] else out
            first = False
            h = h_new if i == self._n_layers - 1 else F.dropout(h_new, cfg.dropout, self.training)
        emb = h
        hd = F.dropout(emb, cfg.dropout, self.training) if self._n_layers else emb
        w, b = self.p("head.weight"), self.p("head.bias")
        logits = self._linear_shared(hd, w, b) if first else self._linear_members(hd, w, b)
        m = self.num_members
        return (
            emb.reshape(n, m, -1).transpose(0, 1),
            logits.reshape(n, m, -1).transpose(0, 1),
        )


@dataclass
class StackedFitResult:
    """Outcome of :func:`fit_stacked_node`.

    ``best_epochs`` / ``best_values``: per member, the restored epoch and its selection
    value; ``history``: per epoch, ``train_loss`` (the mean of the members' losses) and the
    members' selection values on the selection part; ``epochs_run``: epochs trained.
    """

    best_epochs: list[int]
    best_values: list[float]
    history: list[dict]
    epochs_run: int


def _member_metric(logits: Tensor, y: Tensor, metric: str) -> Tensor:
    """Per member selection values ``(M,)`` from logits ``(M, n, C)``."""
    if metric == "loss":
        m, n, c = logits.shape
        return F.cross_entropy(
            logits.reshape(m * n, c), y.repeat(m), reduction="none"
        ).reshape(m, n).mean(1)
    return (logits.argmax(-1) == y.unsqueeze(0)).float().mean(1)


def _stacked_masks(config: TrainConfig, data: Any,
                   masks: Mapping[str, Tensor] | None) -> Mapping[str, Tensor]:
    """The masks (``data``'s ``*_mask`` attributes unless given), after checking that
    ``config`` asks for what batched training does and that its two parts are there."""
    if config.patience is not None:
        raise ValueError(
            f"batched ensemble training runs every member for max_epochs; got patience="
            f"{config.patience!r} (accepted: None; train early-stopped members with fit_node)"
        )
    if config.batch_size is not None or config.task != "multiclass":
        raise ValueError(
            "batched ensemble training is full batch and multiclass; got batch_size="
            f"{config.batch_size!r}, task={config.task!r}"
        )
    if config.metric not in ("loss", "accuracy"):
        raise ValueError(f"metric must be 'loss' or 'accuracy' here, got {config.metric!r}")
    if masks is None:
        masks = {k[: -len("_mask")]: v for k, v in data.to_dict().items() if k.endswith("_mask")}
    for part in (config.train_part, config.select_on[0]):
        if part not in masks or int(masks[part].sum()) == 0:
            raise ValueError(f"part {part!r} missing or empty among the masks {sorted(masks)}")
    return masks


def fit_stacked_node(
    members: Sequence[nn.Module],
    data: Any,
    config: TrainConfig,
    *,
    masks: Mapping[str, Tensor] | None = None,
) -> StackedFitResult:
    """Train ``members`` (cross-entropy, full batch) side by side; the members are updated
    in place with the weights of their own best epoch.

    Protocol as :func:`gs_algos.engine.fit_node` with the same ``config``: Adam (``lr``,
    ``weight_decay``), ``max_epochs``, selection on ``config.select_on[0]`` with
    ``config.metric`` (``"loss"``: strictly lower replaces, ``"accuracy"``: strictly
    higher). Only full-batch multiclass training without early stopping is batched
    (``patience=None``, ``batch_size=None``): with early stopping each member stops at its
    own epoch, so train those one by one with :func:`gs_algos.engine.fit_node`.

    The stack trains on ``config.device`` (the data is moved there); the members get their
    best weights on the device they are on.
    """
    masks = _stacked_masks(config, data, masks)
    dev = as_device(config.device, "TrainConfig.device")
    stack = StackedNodeGNN(members).to(dev)
    k = int(config.norm_updates_per_step)
    stack.norm_momentum = 1.0 - (1.0 - stack.norm_momentum) ** k  # see batch_norm_updates
    data = copy.copy(data).to(dev)
    train = masks[config.train_part].to(dev)
    sel = masks[config.select_on[0]].to(dev)
    y = data.y
    m = stack.num_members
    lower = config.metric == "loss"
    best_val = torch.full((m,), math.inf if lower else -math.inf, dtype=torch.float64, device=dev)
    best_ep = [-1] * m
    best_state: list[dict | None] = [None] * m
    history: list[dict] = []
    with fork_rng_of(dev):
        torch.manual_seed(config.seed)
        opt = torch.optim.Adam(stack.parameters(), lr=config.lr, weight_decay=config.weight_decay)
        for epoch in range(config.max_epochs):
            stack.train()
            opt.zero_grad(set_to_none=True)
            _, logits = stack(data.x, data.edge_index)
            lt = logits[:, train]
            per_member = _member_metric(lt, y[train], "loss")
            loss = per_member.sum()
            loss.backward()
            opt.step()
            rec: dict = {"epoch": epoch, "train_loss": float(per_member.mean().detach())}
            if (epoch + 1) % config.eval_every == 0 or epoch == config.max_epochs - 1:
                stack.eval()
                with torch.no_grad():
                    _, out = stack(data.x, data.edge_index)
                    vals = _member_metric(out[:, sel], y[sel], config.metric).double()
                rec["selection"] = vals.tolist()
                better = vals < best_val if lower else vals > best_val
                if bool(better.any()):
                    states = stack.member_state_dicts()
                    for i in torch.nonzero(better).flatten().tolist():
                        best_val[i], best_ep[i], best_state[i] = vals[i], epoch, states[i]
            history.append(rec)
    for i, member in enumerate(members):
        if best_state[i] is not None:
            member.load_state_dict(best_state[i])
        member.eval()
    log.info("trained %d members side by side for %d epochs; best epochs %s", m,
             config.max_epochs, best_ep)
    return StackedFitResult(best_ep, best_val.tolist(), history, config.max_epochs)
