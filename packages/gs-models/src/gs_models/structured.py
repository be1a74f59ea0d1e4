r"""Structured-prediction models of the edgewise-calibration paper: GMNN and EPFGNN.

Edge marginals everywhere in gs follow one convention: for an edge ``e = (s, t)`` of
``edge_index`` (``s = edge_index[0, e]``, ``t = edge_index[1, e]``), ``marginals[e, a, b]``
is the predicted probability ``p(y_s = a, y_t = b)``; every ``(C, C)`` slice sums to one.

Plain GNNs give *naive mean-field* edge marginals ``p(y_s) p(y_t)^T``
(edgewise paper, section 3; :func:`mean_field_edge_marginals`).

This module holds the networks and their inference only; the EM training loops are in
gs-algos (:func:`gs_algos.em.fit_gmnn`, :func:`gs_algos.em.fit_epfgnn`).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.nn import GCNConv
from torch_geometric.utils import scatter

from gs_models._validation import check_edge_index, check_node_features, check_positive_int
from gs_models.configs import EPFGNNConfig, GMNNConfig
from gs_models.node import NodeGNN

__all__ = [
    "EPFGNN",
    "GMNN",
    "LBPResult",
    "greedy_coloring",
    "loopy_belief_propagation",
    "mean_field_edge_marginals",
    "undirected_pairs",
]

logger = logging.getLogger(__name__)

#: Log-potential given to excluded states (observed labels clamp the others); finite to avoid NaN.
_CLAMP = -1e4

def _rows(x: Tensor, index: Tensor) -> Tensor:
    """``x[index]`` along dim 0 through ``index_select``, whose backward (``index_add_``)
    sums repeated rows in a fixed order; the backward of ``x[index]`` (``index_put_`` with
    accumulation) does not on a multi-threaded CPU, so a seeded training would not repeat
    bit for bit."""
    return x.index_select(0, index)


def mean_field_edge_marginals(probs: Tensor, edge_index: Tensor) -> Tensor:
    r"""Naive mean-field edge marginals ``p(y_s = a, y_t = b) = p_s(a) p_t(b)``.

    The joint is assumed to factorise over nodes (edgewise-calibration paper, section 3:
    "their predicted edgewise marginals are simply products of the neighboring node marginals").

    Parameters
    ----------
    probs : Tensor, shape (N, C)
        Node marginals (rows sum to one).
    edge_index : Tensor, shape (2, E)
        Edges ``(source, target)``.

    Returns
    -------
    Tensor, shape (E, C, C)
        ``out[e, a, b] = probs[s, a] * probs[t, b]``.
    """
    if not isinstance(probs, Tensor) or probs.dim() != 2:
        raise ValueError(
            f"probs must be a tensor of shape (num_nodes, num_classes), got {getattr(probs, 'shape', type(probs))}"
        )
    check_edge_index(edge_index, probs.size(0))
    return _rows(probs, edge_index[0]).unsqueeze(2) * _rows(probs, edge_index[1]).unsqueeze(1)


def undirected_pairs(edge_index: Tensor, num_nodes: int) -> tuple[Tensor, Tensor, Tensor]:
    """Unique undirected pairs ``(i < j)`` of ``edge_index`` (self-loops dropped).

    Returns
    -------
    pairs : Tensor, shape (2, M)
        ``pairs[0] < pairs[1]``.
    pair_of_edge : Tensor, shape (E,)
        Index of each input edge's pair (``-1`` for self-loops).
    flipped : Tensor, shape (E,), bool
        ``True`` where the input edge runs ``j -> i`` relative to its pair ``(i, j)``.
    """
    src, dst = edge_index[0].long(), edge_index[1].long()
    lo, hi = torch.minimum(src, dst), torch.maximum(src, dst)
    key = lo * num_nodes + hi
    valid = src != dst
    uniq, inverse = torch.unique(key[valid], return_inverse=True)
    pair_of_edge = torch.full_like(src, -1)
    pair_of_edge[valid] = inverse
    pairs = torch.stack([uniq // num_nodes, uniq % num_nodes])
    return pairs, pair_of_edge, src > dst


def greedy_coloring(edge_index: Tensor, num_nodes: int, *, seed: int = 0) -> Tensor:
    """Proper vertex colouring by parallel random-priority independent sets (Jones-Plassmann).

    Nodes of one colour are never adjacent, so a Gibbs sampler may update them together.

    Returns
    -------
    Tensor, shape (N,), long
        Colour of every node, ``0 .. num_colors - 1``.
    """
    gen = torch.Generator().manual_seed(seed)
    device = edge_index.device
    prio = torch.rand(num_nodes, generator=gen).to(device)
    src, dst = edge_index[0].long(), edge_index[1].long()
    keep = src != dst
    src, dst = torch.cat([src[keep], dst[keep]]), torch.cat([dst[keep], src[keep]])
    color = torch.full((num_nodes,), -1, dtype=torch.long, device=device)
    c = 0
    while bool((color < 0).any()):
        uncolored = color < 0
        live = uncolored[src] & uncolored[dst]
        neigh_max = scatter(prio[src[live]], dst[live], dim=0, dim_size=num_nodes, reduce="max")
        has_neigh = (
            scatter(
                torch.ones_like(prio[src[live]]), dst[live], dim=0, dim_size=num_nodes, reduce="sum"
            )
            > 0
        )
        pick = uncolored & (~has_neigh | (prio > neigh_max))
        color[pick] = c
        c += 1
    return color


def _clamp_unary(log_unary: Tensor, y: Tensor | None, observed: Tensor | None) -> Tensor:
    if observed is None:
        return log_unary
    if y is None:
        raise ValueError(
            "observed_mask was given without y: pass the labels y of shape (N,) as well"
        )
    clamped = torch.full_like(log_unary, _CLAMP)
    clamped.scatter_(1, y.long().view(-1, 1), 0.0)
    return torch.where(observed.view(-1, 1), clamped, log_unary)


def _check_labels(
    y: Tensor | None, observed: Tensor | None, num_nodes: int, num_classes: int
) -> None:
    if observed is None:
        return
    if observed.dtype != torch.bool or observed.shape != (num_nodes,):
        raise ValueError(
            f"observed_mask must be a bool tensor of shape ({num_nodes},), got {observed.dtype} {tuple(observed.shape)}"
        )
    if y is None or y.shape != (num_nodes,):
        raise ValueError(
            f"y must be a label tensor of shape ({num_nodes},) when observed_mask is given"
        )
    if observed.any():
        yo = y[observed]
        if int(yo.min()) < 0 or int(yo.max()) >= num_classes:
            raise ValueError(f"observed labels must lie in [0, {num_classes - 1}]")


# --------------------------------------------------------------------------------------------
# Loopy belief propagation on a pairwise MRF with one shared compatibility matrix
# --------------------------------------------------------------------------------------------


@dataclass
class LBPResult:
    """Output of :func:`loopy_belief_propagation`.

    Attributes
    ----------
    node_marginals : Tensor (N, C)
    pair_marginals : Tensor (M, C, C)
        Beliefs of the undirected pairs ``pairs[:, m] = (i, j)``, ``[m, a, b] = b(y_i=a, y_j=b)``.
    pairs : Tensor (2, M)
    iterations : int
        Iterations run.
    residual : float
        Largest absolute change of a message in the last iteration (convergence check).
    """

    node_marginals: Tensor
    pair_marginals: Tensor
    pairs: Tensor
    iterations: int
    residual: float


def loopy_belief_propagation(
    log_unary: Tensor,
    log_pairwise: Tensor,
    edge_index: Tensor,
    *,
    iterations: int = 100,
    damping: float = 0.5,
    tolerance: float = 1e-6,
    edge_scales: Tensor | None = None,
    product: str = "sum",
) -> LBPResult:
    r"""Sum-product (or max-product) loopy belief propagation (Murphy, Weiss & Jordan 1999), vectorised.

    Model: :math:`p(y) \propto \exp\big(\sum_i u_i(y_i) + \sum_{\{i,j\}} W(y_i, y_j)\big)`
    over the unique undirected pairs of ``edge_index`` (EPFGNN's MRF; edgewise paper,
    appendix C.2 uses 100 iterations). Messages (log space, normalised):

    .. math:: m_{s\to t}(b) = \log\sum_a \exp\big(u_s(a) + \textstyle\sum_{k\in N(s)\setminus t} m_{k\to s}(a) + W(a, b)\big)

    with damping ``m <- (1 - damping) m_new + damping m_old`` in probability space. Pair
    beliefs are :math:`b_{ij}(a,b) \propto \exp(u_i(a) + u_j(b) + W(a,b) + \ldots)` with the
    incoming messages except each other's; on a tree they are the exact marginals, and at a
    fixed point they are consistent with the node beliefs.

    Parameters
    ----------
    log_unary : Tensor (N, C)
    log_pairwise : Tensor (C, C)
        Must be symmetric for an undirected model (it is symmetrised).
    edge_index : Tensor (2, E)
    iterations, damping, tolerance
        Stop after ``iterations`` or when the largest message change is below ``tolerance``.
    edge_scales : Tensor (M,), optional
        One weight per undirected pair (in the order of :func:`undirected_pairs`) multiplying
        the pairwise log-potential of that pair (EPFGNN's ReZero weights; the released
        ``LoopyBP.pairwise`` in ``src/model/lbp.py``).
    product : ``"sum"`` or ``"max"``
        ``"max"``: max-product messages (``max_a`` instead of ``log sum_a``), as the released
        ``LoopyBP.update_msg_f2n``; node and pair beliefs are then softmax-normalised
        max-marginals (``LoopyBP.node_marginals`` / ``edge_marginals``).
    """
    n, c = log_unary.shape
    check_positive_int(iterations, "iterations")
    if product not in ("sum", "max"):
        raise ValueError(f"product must be 'sum' or 'max', got {product!r}")
    w = 0.5 * (log_pairwise + log_pairwise.T)
    pairs, _, _ = undirected_pairs(edge_index, n)
    m = pairs.size(1)
    if edge_scales is not None:
        if edge_scales.shape != (m,):
            raise ValueError(f"edge_scales must have shape ({m},) (one per undirected pair), got {tuple(edge_scales.shape)}")
        w_dir = edge_scales.view(-1, 1, 1) * w.unsqueeze(0)  # (M, C, C)
        w_msg = torch.cat([w_dir, w_dir])  # (2M, C, C), symmetric per pair
    else:
        w_dir = w.unsqueeze(0)
        w_msg = w.unsqueeze(0)
    # directed messages: d < m runs i->j, d >= m runs j->i
    src = torch.cat([pairs[0], pairs[1]])
    dst = torch.cat([pairs[1], pairs[0]])
    rev = torch.cat([torch.arange(m, 2 * m), torch.arange(0, m)]).to(src.device)
    msg = torch.full((2 * m, c), -math.log(c), dtype=log_unary.dtype, device=log_unary.device)
    residual = float("inf")
    done = 0
    for step in range(1, iterations + 1):
        done = step
        incoming = scatter(msg, dst, dim=0, dim_size=n, reduce="sum")
        cavity = _rows(log_unary, src) + _rows(incoming, src) - _rows(msg, rev)  # (2M, C) over a = y_src
        joint = cavity.unsqueeze(2) + w_msg
        new = torch.logsumexp(joint, dim=1) if product == "sum" else joint.amax(dim=1)  # (2M, C) over b
        new = new - torch.logsumexp(new, dim=1, keepdim=True)
        if damping > 0:
            new = torch.log((1 - damping) * new.exp() + damping * msg.exp())
        residual = float((new.exp() - msg.exp()).abs().max()) if m else 0.0
        msg = new
        if residual < tolerance:
            break
    incoming = scatter(msg, dst, dim=0, dim_size=n, reduce="sum")
    node_log = log_unary + incoming
    node_marg = torch.softmax(node_log, dim=1)
    i, j = pairs[0], pairs[1]
    ci = _rows(node_log, i) - msg[m:]  # exclude message j -> i (directed index m + k runs j -> i)
    cj = _rows(node_log, j) - msg[:m]  # exclude message i -> j
    pair_log = ci.unsqueeze(2) + cj.unsqueeze(1) + w_dir
    pair_marg = torch.softmax(pair_log.reshape(m, -1), dim=1).reshape(m, c, c)
    return LBPResult(node_marg, pair_marg, pairs, done, residual)


def _pair_to_edge_marginals(
    pair_marg: Tensor, pair_of_edge: Tensor, flipped: Tensor, node_marg: Tensor, edge_index: Tensor
) -> Tensor:
    """Map pair beliefs back to the input edges; self-loops get ``diag(p_i)``."""
    e = edge_index.size(1)
    c = node_marg.size(1)
    out = torch.empty((e, c, c), dtype=node_marg.dtype, device=node_marg.device)
    valid = pair_of_edge >= 0
    pm = pair_marg[pair_of_edge[valid]]
    pm = torch.where(flipped[valid].view(-1, 1, 1), pm.transpose(1, 2), pm)
    out[valid] = pm
    if (~valid).any():
        out[~valid] = torch.diag_embed(node_marg[edge_index[0, ~valid]])
    return out


# --------------------------------------------------------------------------------------------
# EPFGNN
# --------------------------------------------------------------------------------------------


class _StructuredModel(nn.Module):
    """What EPFGNN and GMNN share: the in/out sizes, the config and whether it is the authors'
    released variant (``config.variant == "released"``)."""

    def __init__(self, in_channels: int, out_channels: int, config: Any) -> None:
        super().__init__()
        self.config = config
        self.in_channels, self.out_channels = in_channels, out_channels
        self.released = config.variant == "released"


class EPFGNN(_StructuredModel):
    r"""Explicit Pairwise Factorized GNN (Wang, Shen & Cremers, UAI 2021).

    A GNN backbone produces unary log-potentials ``u = logits`` (N, C); a shared learnable
    compatibility matrix ``W`` (C, C, symmetric) gives the pairwise log-potentials of the MRF
    :math:`p(y | x) \propto \exp(\sum_i u_i(y_i) + \sum_{\{i,j\} \in E} W(y_i, y_j))`.

    - ``forward(x, edge_index) -> (embeddings, log_q)``: backbone embeddings and the log of the
      naive mean-field marginals ``q`` (``softmax(log_q) = q``), mean field as at training
      time (:meth:`mean_field`).
    - ``edge_marginals(x, edge_index) -> (E, C, C)``: loopy BP (evaluation, 100 iterations in
      the edgewise paper) or mean field (``method="mean_field"``).
    - training: :func:`gs_algos.em.fit_epfgnn` (EM, edgewise paper, appendix C.2).

    ``config.variant == "released"`` (default) is the authors' model
    (hans66hsu/structured_uncertainty_metrics, ``src/model/model.py``, class ``EPFGNN``):
    ``W`` starts at ``(randn + I) / C`` (drawn from the global RNG at construction), every
    undirected pair ``e`` carries a ReZero weight ``r_e`` (``rezero_coefficients``, zeros)
    so that its log-potential is ``r_e W``; the weights are sized by :meth:`bind_graph`
    (called by the EM training; unbound means all zero). ``"ours-v1"``: ``W`` from zeros and
    no edge weights.
    """

    def __init__(
        self, in_channels: int, out_channels: int, config: EPFGNNConfig | None = None
    ) -> None:
        super().__init__(in_channels, out_channels, config if config is not None else EPFGNNConfig())
        self.backbone = NodeGNN(in_channels, out_channels, self.config.backbone)
        if self.released:  # model.py: (torch.randn(C, C) + torch.eye(C)) / C
            init = (torch.randn(out_channels, out_channels) + torch.eye(out_channels)) / out_channels
        else:
            init = torch.zeros(out_channels, out_channels)
        self.compat_raw = nn.Parameter(init)
        self.rezero = nn.Parameter(torch.zeros(0))

    @property
    def compatibility(self) -> Tensor:
        """Symmetric pairwise log-potential ``W`` (C, C)."""
        return 0.5 * (self.compat_raw + self.compat_raw.T)

    def bind_graph(self, edge_index: Tensor) -> None:
        """Size the ReZero edge weights (zeros, one per undirected pair) for ``edge_index``
        (``released`` only; ``model.py`` ``rezero_coefficients = zeros(E / 2)``). Create the
        optimiser after this call."""
        if not self.released:
            return
        m = undirected_pairs(edge_index, int(edge_index.max()) + 1 if edge_index.numel() else 0)[0].size(1)
        if self.rezero.numel() != m:
            self.rezero = nn.Parameter(torch.zeros(m, dtype=self.compat_raw.dtype, device=self.compat_raw.device))

    def edge_weights(self, edge_index: Tensor, num_nodes: int) -> Tensor | None:
        """ReZero weight of every undirected pair (``None`` for ``ours-v1``: all one)."""
        if not self.released:
            return None
        m = undirected_pairs(edge_index, num_nodes)[0].size(1)
        if self.rezero.numel() == 0:
            return torch.zeros(m, dtype=self.compat_raw.dtype, device=self.compat_raw.device)
        if self.rezero.numel() != m:
            raise ValueError(
                f"the edge weights were bound to a graph with {self.rezero.numel()} undirected pairs, "
                f"this one has {m}: call bind_graph(edge_index) before training on it"
            )
        return self.rezero

    def redistributed_unary(self, log_unary: Tensor, edge_index: Tensor) -> Tensor:
        """Unaries divided by ``deg + 1`` (``model.py`` ``get_energies``: ``unary / self.deg``
        with ``deg = degree(row) + 1``): each node's unary is shared by its own star piece
        and those of its ``deg`` neighbours."""
        n = log_unary.size(0)
        pairs, _, _ = undirected_pairs(edge_index, n)
        ones = torch.ones(pairs.size(1), dtype=log_unary.dtype, device=log_unary.device)
        deg = scatter(torch.cat([ones, ones]), torch.cat([pairs[0], pairs[1]]), dim=0, dim_size=n, reduce="sum")
        return log_unary / (deg + 1).view(-1, 1)

    def star_piecewise_nll(self, log_unary: Tensor, edge_index: Tensor, targets: Tensor) -> Tensor:
        r"""The released M-step objective (``src/model/PWEM.py``: ``BPLeafToRoot_edge_rezero`` and
        ``PWLoss_edge_rezero``; ``Trainer_PWEM.update_edge_rezero``).

        One piece per node ``i``: its star ``{i} + N(i)`` with unaries ``x = u / (deg + 1)``
        (:meth:`redistributed_unary`) and pairwise ``r_ij W / 2``,

        .. math:: \log Z_i = \log\sum_b \exp\big(x_i(b) + \textstyle\sum_{j\in N(i)} \log\sum_a \exp(x_j(a) + r_{ij} W(a,b)/2)\big),

        and the loss is :math:`-\frac1N\sum_i \big[x_i^\top t_i + \sum_{j} (x_j^\top t_j + r_{ij}\, t_i^\top W t_j / 2) - \log Z_i\big]`
        with soft targets ``t`` (one-hot for labelled nodes, the E-step proposal otherwise).
        """
        n = log_unary.size(0)
        pairs, _, _ = undirected_pairs(edge_index, n)
        ctr = torch.cat([pairs[0], pairs[1]])  # the piece's centre i
        nb = torch.cat([pairs[1], pairs[0]])  # its neighbour j
        r = self.edge_weights(edge_index, n)
        r2 = torch.cat([r, r]) if r is not None else torch.ones(ctr.numel(), dtype=log_unary.dtype, device=log_unary.device)
        x = self.redistributed_unary(log_unary, edge_index)
        wh = self.compatibility / 2
        msg = torch.logsumexp(x[nb].unsqueeze(2) + r2.view(-1, 1, 1) * wh.unsqueeze(0), dim=1)  # (2M, C) over y_i
        log_z = torch.logsumexp(x + scatter(msg, ctr, dim=0, dim_size=n, reduce="sum"), dim=1)
        gain_e = (x[nb] * targets[nb]).sum(1) + r2 * ((targets[ctr] @ wh) * targets[nb]).sum(1)
        gain = (x * targets).sum(1) + scatter(gain_e, ctr, dim=0, dim_size=n, reduce="sum") - log_z
        return -gain.mean()

    def mean_field_step(self, log_unary: Tensor, edge_index: Tensor, q: Tensor) -> Tensor:
        r"""One mean-field update from ``q`` (N, C):
        :math:`q'_i = \mathrm{softmax}(u_i + \sum_{j\in N(i)} r_{ij} W q_j)` (``src/model/PWEM.py``
        ``MFUpdate_edge_rezero``, used by ``EPFGNN.inference``: the E-step and the released
        test-time mean field). Returns probabilities."""
        n = log_unary.size(0)
        pairs, _, _ = undirected_pairs(edge_index, n)
        src = torch.cat([pairs[0], pairs[1]])
        dst = torch.cat([pairs[1], pairs[0]])
        r = self.edge_weights(edge_index, n)
        msg = _rows(q, src) @ self.compatibility.T
        if r is not None:
            msg = torch.cat([r, r]).view(-1, 1) * msg
        return torch.softmax(log_unary + scatter(msg, dst, dim=0, dim_size=n, reduce="sum"), dim=1)

    def unary(self, x: Tensor, edge_index: Tensor) -> tuple[Tensor, Tensor]:
        """Backbone ``(embeddings, unary log-potentials)``."""
        return self.backbone(x, edge_index)

    def mean_field(
        self,
        log_unary: Tensor,
        edge_index: Tensor,
        *,
        iterations: int | None = None,
        y: Tensor | None = None,
        observed_mask: Tensor | None = None,
    ) -> Tensor:
        r"""Naive mean field: :math:`q_i(a) \propto \exp(u_i(a) + \sum_{j \in N(i)} \sum_b W(a,b) q_j(b))`.

        Neighbourhoods are the unique undirected pairs. Returns ``log q`` (N, C).
        """
        n = log_unary.size(0)
        its = self.config.mean_field_iterations if iterations is None else iterations
        u = _clamp_unary(log_unary, y, observed_mask)
        pairs, _, _ = undirected_pairs(edge_index, n)
        src = torch.cat([pairs[0], pairs[1]])
        dst = torch.cat([pairs[1], pairs[0]])
        w = self.compatibility
        r = self.edge_weights(edge_index, n)
        r2 = torch.cat([r, r]).view(-1, 1) if r is not None else None
        log_q = torch.log_softmax(u, dim=1)
        for _ in range(its):
            q = log_q.exp()
            msg = _rows(q, src) @ w.T
            field = scatter(msg if r2 is None else r2 * msg, dst, dim=0, dim_size=n, reduce="sum")
            log_q = torch.log_softmax(u + field, dim=1)
        return log_q

    def forward(self, x: Tensor, edge_index: Tensor) -> tuple[Tensor, Tensor]:
        """Return ``(embeddings, log mean-field marginals)``, shapes ``(N, D)`` and ``(N, C)``."""
        emb, u = self.unary(x, edge_index)
        return emb, self.mean_field(u, edge_index)

    def released_clamped_unary(
        self, log_unary: Tensor, y: Tensor | None, observed_mask: Tensor | None
    ) -> Tensor:
        r"""The unaries the released loopy BP runs on (``EPFGNN.loopy_bp``, ``src/model/model.py``).

        On energies ``E = -u``: ``E[train] = 1e5``, then ``E.scatter_(1, gt, gt_ue)`` with
        ``gt = y[train]`` and ``gt_ue`` the training nodes' gold energies (training nodes in
        index order), then ``E - min_c E`` capped at 20. The scatter runs on the full
        ``(N, C)`` tensor, so the k-th training node's gold energy is written to **row k**,
        column ``gt[k]``. The training rows stay flat (all 1e5, so 0 after the shift), and
        rows ``0 .. n_train - 1`` get one class overwritten.
        ``config.lbp_clamp == "observed"`` instead writes it to the k-th training node (gold
        0, others -20). Returns negative energies: row maximum 0, gaps at most 20.
        """
        u = log_unary
        if observed_mask is not None and bool(observed_mask.any()):
            gt = y.long()[observed_mask].view(-1, 1)
            gold_u = u[observed_mask].gather(1, gt)
            if self.config.lbp_clamp == "as-released":
                rows = torch.arange(gt.size(0), device=u.device)
            else:
                rows = observed_mask.nonzero().view(-1)
            u = torch.where(observed_mask.view(-1, 1), torch.full_like(u, -1e5), u)
            u = u.index_put((rows, gt.view(-1)), gold_u.view(-1))
        return (u - u.amax(1, keepdim=True)).clamp(min=-20.0)

    @torch.no_grad()
    def lbp(
        self,
        x: Tensor,
        edge_index: Tensor,
        *,
        y: Tensor | None = None,
        observed_mask: Tensor | None = None,
    ) -> LBPResult:
        """Loopy BP on the MRF defined by ``x`` (optionally clamping observed labels).

        ``released``: as ``EPFGNN.loopy_bp`` in ``src/model/model.py``: max-product, no damping,
        pairwise ``r_e W``, unaries shifted to a row maximum of 0 with gaps capped at 20
        (``unary.clamp_(max=20)`` on energies). Observed labels: see
        :meth:`released_clamped_unary` (``config.lbp_clamp``).
        """
        _, u = self.unary(x, edge_index)
        _check_labels(y, observed_mask, x.size(0), self.out_channels)
        cfg = self.config
        if self.released:
            u = self.released_clamped_unary(u, y, observed_mask)
        else:
            u = _clamp_unary(u, y, observed_mask)
        damping = cfg.lbp_damping if cfg.lbp_damping is not None else (0.0 if self.released else 0.5)
        res = loopy_belief_propagation(
            u,
            self.compatibility,
            edge_index,
            iterations=cfg.lbp_iterations,
            damping=damping,
            tolerance=cfg.lbp_tolerance,
            edge_scales=self.edge_weights(edge_index, x.size(0)),
            product="max" if self.released else "sum",
        )
        if res.residual > 1e-3:
            logger.warning(
                "loopy BP did not converge: residual %.2e after %d iterations",
                res.residual,
                res.iterations,
            )
        return res

    @torch.no_grad()
    def node_marginals(
        self,
        x: Tensor,
        edge_index: Tensor,
        *,
        method: str = "lbp",
        y: Tensor | None = None,
        observed_mask: Tensor | None = None,
        proposal: Tensor | None = None,
    ) -> Tensor:
        """Node marginals ``(N, C)`` by loopy BP (default) or mean field.

        ``method="mean_field"`` with ``proposal`` (N, C): one update from it
        (:meth:`mean_field_step`), the released test-time inference (``src/train_epfgnn.py``
        evaluates ``model.inference(target_p, ...)`` with the last E-step proposal).
        """
        if method == "lbp":
            return self.lbp(x, edge_index, y=y, observed_mask=observed_mask).node_marginals
        if method == "mean_field":
            _, u = self.unary(x, edge_index)
            _check_labels(y, observed_mask, x.size(0), self.out_channels)
            if proposal is not None:
                return self.mean_field_step(u, edge_index, proposal)
            return self.mean_field(u, edge_index, y=y, observed_mask=observed_mask).exp()
        raise ValueError(f"method={method!r} is not accepted; choose 'lbp' or 'mean_field'")

    @torch.no_grad()
    def edge_marginals(
        self, x: Tensor, edge_index: Tensor, *, method: str = "lbp", **options: Tensor | None
    ) -> Tensor:
        """Edge marginals ``(E, C, C)`` (``[e, a, b] = p(y_src = a, y_dst = b)``).

        ``method="lbp"``: loopy BP pair beliefs (edgewise paper, appendix C.2);
        ``"mean_field"``: products of the mean-field node marginals. ``options``: the observed
        labels to clamp, ``y`` and ``observed_mask``, as :meth:`node_marginals` and :meth:`lbp`
        declare them (with ``"mean_field"`` also ``node_marginals``' ``proposal``).
        """
        check_edge_index(edge_index, x.size(0))
        if method == "mean_field":
            return mean_field_edge_marginals(
                self.node_marginals(x, edge_index, method=method, **options), edge_index
            )
        if method != "lbp":
            raise ValueError(f"method={method!r} is not accepted; choose 'lbp' or 'mean_field'")
        res = self.lbp(x, edge_index, **options)
        _, pair_of_edge, flipped = undirected_pairs(edge_index, x.size(0))
        return _pair_to_edge_marginals(
            res.pair_marginals, pair_of_edge, flipped, res.node_marginals, edge_index
        )

    def piecewise_nll(self, log_unary: Tensor, edge_index: Tensor, targets: Tensor) -> Tensor:
        r"""Negative piecewise log-likelihood (Sutton & McCallum 2005), EPFGNN's M-step objective.

        Every undirected pair is an independently normalised piece
        :math:`p_{ij}(a,b) \propto \exp(u_i(a) + u_j(b) + W(a,b))`; the loss is
        :math:`-\frac{1}{M}\sum_{\{i,j\}} \sum_{a,b} t_i(a) t_j(b) \log p_{ij}(a,b)` with soft
        targets ``t`` (one-hot for labelled nodes, the E-step's mean-field ``q`` otherwise).
        """
        n = log_unary.size(0)
        pairs, _, _ = undirected_pairs(edge_index, n)
        i, j = pairs[0], pairs[1]
        logits = (
            _rows(log_unary, i).unsqueeze(2) + _rows(log_unary, j).unsqueeze(1) + self.compatibility.unsqueeze(0)
        )
        logp = logits - torch.logsumexp(logits.flatten(1), dim=1).view(-1, 1, 1)
        t = _rows(targets, i).unsqueeze(2) * _rows(targets, j).unsqueeze(1)
        return -(t * logp).sum((1, 2)).mean()


# --------------------------------------------------------------------------------------------
# GMNN
# --------------------------------------------------------------------------------------------


class NeighbourLabelNet(nn.Module):
    """GMNN's ``p_phi(y_n | y_NB(n))``: GCN propagation of neighbour labels without self-loops + linear.

    Input ``(N, C)`` label distributions (one-hot samples); output ``(N, C)`` logits. Node
    ``n``'s own input row never reaches its output row (no self-loop, one propagation).
    """

    def __init__(self, num_classes: int, hidden: int, dropout: float) -> None:
        super().__init__()
        self.conv = GCNConv(num_classes, hidden, add_self_loops=False)
        self.lin = nn.Linear(hidden, num_classes)
        self.dropout = dropout

    def forward(self, labels: Tensor, edge_index: Tensor) -> Tensor:
        h = F.relu(self.conv(labels, edge_index))
        return self.lin(F.dropout(h, self.dropout, self.training))


class LabelGCN(nn.Module):
    """The released GMNN ``p`` network: a 2-layer GCN (with self-loops) on label distributions.

    ``src/model/model.py`` (hans66hsu/structured_uncertainty_metrics): ``gnnp = GCN(C, C,
    num_hidden=64, drop_rate=0.5, num_layers=2)``, class ``GCN`` (conv, ReLU, dropout, conv).
    Input ``(N, C)`` (one-hot label samples), output ``(N, C)`` logits. The self-loops let a
    node's own input label reach its output, so this is not a conditional ``p(y_n | y_NB(n))``.
    """

    def __init__(self, num_classes: int, hidden: int, dropout: float) -> None:
        super().__init__()
        self.conv1 = GCNConv(num_classes, hidden)
        self.conv2 = GCNConv(hidden, num_classes)
        self.dropout = dropout

    def forward(self, labels: Tensor, edge_index: Tensor) -> Tensor:
        h = F.dropout(F.relu(self.conv1(labels, edge_index)), self.dropout, self.training)
        return self.conv2(h, edge_index)


class GMNN(_StructuredModel):
    r"""Graph Markov Neural Network (Qu, Bengio & Tang, ICML 2019) as used in the edgewise paper.

    - ``q`` (:class:`NodeGNN`) is the object classifier :math:`q_\theta(y_n | x)`;
      ``forward(x, edge_index) -> (embeddings, logits)`` is ``q``'s.
    - ``p`` (:class:`NeighbourLabelNet`) models the CRF through its conditionals
      :math:`p_\phi(y_n | y_{NB(n)})`, trained by pseudo-likelihood (M-step).
    - Structured marginals come from ``num_samples`` label samples drawn from ``q`` (then
      optionally refined by ``gibbs_sweeps`` chromatic Gibbs sweeps of ``p``; 0 by default,
      the paper's "draw 32 samples" procedure; observed labels may be clamped). With the
      chains' states :math:`y^{(s)}` and the conditionals :math:`\pi^{(s)}_i = p_\phi(y_i | y^{(s)}_{NB(i)})`
      the Rao-Blackwellised estimates are

      .. math::
         \hat p(y_i=a, y_j=b) = \frac{1}{2S}\sum_s \big[\pi^{(s)}_i(a)\,1(y^{(s)}_j=b) + 1(y^{(s)}_i=a)\,\pi^{(s)}_j(b)\big],
         \qquad \hat p(y_i=a) = \frac{1}{2S}\sum_s \big[\pi^{(s)}_i(a) + 1(y^{(s)}_i=a)\big],

      so every edge marginal sums to one and its marginals equal the node marginals exactly
      (``config.variant == "ours-v1"``).
    - ``config.variant == "released"`` (default): ``p`` is :class:`LabelGCN` and the node
      marginals are ``softmax`` of ``p``'s logits averaged over the ``num_samples`` label sets
      (``GMNN.forward`` with ``args.inference == "p"`` in the released ``src/model/model.py``);
      the edge marginals are their products (the released ``src/evaluation.py``).
    """

    def __init__(
        self, in_channels: int, out_channels: int, config: GMNNConfig | None = None
    ) -> None:
        super().__init__(in_channels, out_channels, config if config is not None else GMNNConfig())
        self.q = NodeGNN(in_channels, out_channels, self.config.q)
        net = LabelGCN if self.released else NeighbourLabelNet
        self.p = net(out_channels, self.config.p_hidden_channels, self.config.p_dropout)

    @property
    def _dtype(self) -> torch.dtype:
        return next(self.p.parameters()).dtype

    @torch.no_grad()
    def sample_labels(
        self, x: Tensor, edge_index: Tensor, num: int, generator: torch.Generator,
        y: Tensor | None = None, observed: Tensor | None = None,
    ) -> Tensor:
        """``num`` label sets ``(num, N)`` drawn from ``q`` (eval mode, ``tau = 1``), observed
        nodes set to ``y`` (``update_p_data`` with ``draw="smp"``, ``use_gold=1``)."""
        was_training = self.q.training
        self.q.eval()
        q_prob = torch.softmax(self.q(x, edge_index)[1].float(), dim=1)
        self.q.train(was_training)
        states = torch.multinomial(q_prob.cpu(), num, replacement=True, generator=generator).T.to(x.device)
        if observed is not None:
            states[:, observed] = y[observed].long()
        return states

    @torch.no_grad()
    def p_logits(self, states: Tensor, edge_index: Tensor) -> Tensor:
        """``p``'s logits ``(S, N, C)`` on each label set of ``states`` ``(S, N)`` (one batched
        graph of ``S`` copies; ``p`` in its current train/eval mode)."""
        s, n = states.shape
        c = self.out_channels
        offs = (torch.arange(s, device=states.device) * n).view(-1, 1, 1)
        big = (edge_index.long().unsqueeze(0) + offs).permute(1, 0, 2).reshape(2, -1)
        onehot = F.one_hot(states.reshape(-1), c).to(self._dtype)
        return self.p(onehot, big).view(s, n, c)

    def forward(self, x: Tensor, edge_index: Tensor) -> tuple[Tensor, Tensor]:
        """``q``'s ``(embeddings, logits)``."""
        return self.q(x, edge_index)

    def pseudo_likelihood_nll(
        self, labels: Tensor, edge_index: Tensor, mask: Tensor | None = None
    ) -> Tensor:
        r"""Negative pseudo-log-likelihood :math:`-\frac1N\sum_n \log p_\phi(y_n | y_{NB(n)})` (GMNN, eq. 8)."""
        logits = self.p(F.one_hot(labels, self.out_channels).to(self._dtype), edge_index)
        if mask is not None:
            return F.cross_entropy(logits[mask], labels[mask])
        return F.cross_entropy(logits, labels)

    @torch.no_grad()
    def _chains(
        self, x: Tensor, edge_index: Tensor, y: Tensor | None, observed: Tensor | None, seed: int
    ) -> tuple[Tensor, Tensor, Tensor]:
        """Run the chains; return (states (S, N), conditionals (S, N, C), replicated edge_index)."""
        n, c, s = x.size(0), self.out_channels, self.config.num_samples
        gen = torch.Generator(device="cpu").manual_seed(seed)
        was_training = self.training
        self.eval()
        q_prob = torch.softmax(self.q(x, edge_index)[1].float(), dim=1)
        states = torch.multinomial(q_prob.cpu(), s, replacement=True, generator=gen).T.to(
            x.device
        )  # (S, N)
        if observed is not None:
            states[:, observed] = y[observed].long()
        offs = (torch.arange(s, device=x.device) * n).view(-1, 1, 1)
        big_edges = (edge_index.long().unsqueeze(0) + offs).permute(1, 0, 2).reshape(2, -1)
        sweeps = self.config.gibbs_sweeps if n else 0
        colors = greedy_coloring(edge_index, n, seed=seed) if sweeps else None
        free = torch.ones(n, dtype=torch.bool, device=x.device) if observed is None else ~observed

        def conditionals(st: Tensor) -> Tensor:
            onehot = F.one_hot(st.reshape(-1), c).to(self._dtype)
            return torch.softmax(self.p(onehot, big_edges), dim=1).view(s, n, c)

        for _ in range(sweeps):
            for col in range(int(colors.max()) + 1):
                upd = (colors == col) & free
                if not bool(upd.any()):
                    continue
                pi = conditionals(states)[:, upd]  # (S, n_upd, C)
                draw = (
                    torch.multinomial(pi.reshape(-1, c).cpu(), 1, generator=gen)
                    .view(s, -1)
                    .to(x.device)
                )
                states[:, upd] = draw
        pi = conditionals(states)
        if observed is not None:
            pi[:, observed] = F.one_hot(y[observed].long(), c).to(pi.dtype)
        self.train(was_training)
        return states, pi, big_edges

    @torch.no_grad()
    def node_and_edge_marginals(
        self,
        x: Tensor,
        edge_index: Tensor,
        *,
        y: Tensor | None = None,
        observed_mask: Tensor | None = None,
        seed: int = 0,
    ) -> tuple[Tensor, Tensor]:
        """Structured node marginals ``(N, C)`` and edge marginals ``(E, C, C)`` from one set of chains."""
        check_node_features(x, self.in_channels)
        check_edge_index(edge_index, x.size(0))
        _check_labels(y, observed_mask, x.size(0), self.out_channels)
        c = self.out_channels
        if self.released:
            gen = torch.Generator(device="cpu").manual_seed(seed)
            was_training = self.training
            self.eval()
            states = self.sample_labels(x, edge_index, self.config.num_samples, gen, y, observed_mask)
            node = torch.softmax(self.p_logits(states, edge_index).mean(0), dim=1)
            self.train(was_training)
            return node, mean_field_edge_marginals(node, edge_index)
        states, pi, _ = self._chains(x, edge_index, y, observed_mask, seed)
        ind = F.one_hot(states, c).to(pi.dtype)  # (S, N, C)
        node = 0.5 * (pi + ind).mean(0)
        s_, t_ = edge_index[0].long(), edge_index[1].long()
        edge = (
            0.5
            * (
                torch.einsum("sea,seb->eab", pi[:, s_], ind[:, t_])
                + torch.einsum("sea,seb->eab", ind[:, s_], pi[:, t_])
            )
            / states.size(0)
        )
        return node, edge

    def node_marginals(self, x: Tensor, edge_index: Tensor, **kwargs) -> Tensor:
        """Structured node marginals ``(N, C)`` (see :meth:`node_and_edge_marginals`)."""
        return self.node_and_edge_marginals(x, edge_index, **kwargs)[0]

    def edge_marginals(self, x: Tensor, edge_index: Tensor, **kwargs) -> Tensor:
        """Structured edge marginals ``(E, C, C)``, ``[e, a, b] = p(y_src = a, y_dst = b)``."""
        return self.node_and_edge_marginals(x, edge_index, **kwargs)[1]
