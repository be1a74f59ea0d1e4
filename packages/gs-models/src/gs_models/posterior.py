r"""Dirichlet evidence heads, radial flows, Graph Posterior Network and Natural Posterior Network.

All uncertainty modules return Dirichlet parameters ``alpha`` (N, C), ``alpha > 0``:
``forward(x, edge_index) -> (embeddings, alpha)``. The predictive distribution is
``alpha / alpha.sum(-1)``; ``alpha.sum(-1)`` is the total evidence (+ prior), the usual OOD
score. :meth:`forward_details` returns a :class:`PosteriorOutput` with the intermediate
quantities (latent codes, log-densities, pre-propagation evidence). The training losses
(Bayesian / UCE loss with entropy regulariser) live with the methods in gs-algos.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.nn import APPNP

from gs_models._validation import check_edge_index, check_node_features, check_positive_int
from gs_models.configs import DirichletConfig, GPNConfig, NatPNConfig
from gs_models.node import NodeGNN

__all__ = [
    "BatchedRadialFlow",
    "DirichletHead",
    "GraphPosteriorNetwork",
    "NaturalPosteriorNetwork",
    "PosteriorOutput",
    "log_certainty_budget",
]

_LOG_EVIDENCE_CLAMP = 30.0


def log_certainty_budget(budget: str, dim: int) -> float:
    r"""Log of the certainty budget :math:`N_H` of NatPN (Charpentier et al. 2022, section 3.2).

    ``"constant"``: :math:`N_H = 1`; ``"exp-half"``: :math:`e^{H/2}`; ``"exp"``: :math:`e^{H}`;
    ``"normal"``: :math:`e^{\frac12 \log(4\pi) H}` (the scale at which a standard normal
    density in :math:`H` dimensions integrates its own square to one).
    """
    table = {
        "constant": 0.0,
        "exp-half": 0.5 * dim,
        "exp": float(dim),
        "normal": 0.5 * math.log(4 * math.pi) * dim,
    }
    if budget not in table:
        raise ValueError(f"budget={budget!r} is not accepted; choose one of {sorted(table)}")
    return table[budget]


class BatchedRadialFlow(nn.Module):
    r"""``num_flows`` independent radial flows of ``num_layers`` layers each on ``R^dim``.

    One radial layer (Rezende & Mohamed 2015, eq. 14):
    :math:`f(z) = z + \beta\,h(\alpha, r)\,(z - z_0)`, :math:`r = \lVert z - z_0 \rVert`,
    :math:`h = 1/(\alpha + r)`, with :math:`\alpha = \mathrm{softplus}(\tilde\alpha) > 0` and
    :math:`\beta = -\alpha + \mathrm{softplus}(\tilde\beta) \ge -\alpha` (invertible), and

    .. math:: \log\lvert\det J_f\rvert = (d-1)\log(1 + \beta h) + \log(1 + \beta h + \beta h' r),
       \qquad h' = -1/(\alpha + r)^2.

    The density of :math:`z` is :math:`\log p(z) = \log\mathcal N(f_L \circ\cdots\circ f_1(z); 0, I) + \sum_l \log\lvert\det J_{f_l}\rvert`.

    Shapes: ``log_prob(z)`` maps ``(N, dim)`` to ``(N, num_flows)``.
    """

    def __init__(self, dim: int, num_layers: int, num_flows: int = 1) -> None:
        super().__init__()
        self.dim = check_positive_int(dim, "dim")
        self.num_layers = check_positive_int(num_layers, "num_layers", minimum=0)
        self.num_flows = check_positive_int(num_flows, "num_flows")
        self.z0 = nn.Parameter(torch.empty(num_flows, num_layers, dim))
        self.alpha_raw = nn.Parameter(torch.empty(num_flows, num_layers))
        self.beta_raw = nn.Parameter(torch.empty(num_flows, num_layers))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.dim)
        nn.init.uniform_(self.z0, -bound, bound)
        nn.init.uniform_(self.alpha_raw, -bound, bound)
        nn.init.uniform_(self.beta_raw, -bound, bound)

    def transform(self, z: Tensor) -> tuple[Tensor, Tensor]:
        """Push ``z`` (N, dim) through every flow: ``(f(z) (F, N, dim), sum log|det J| (F, N))``."""
        out = z.unsqueeze(0).expand(self.num_flows, -1, -1)
        logdet = z.new_zeros(self.num_flows, z.size(0))
        d = self.dim
        for layer in range(self.num_layers):
            z0 = self.z0[:, layer].unsqueeze(1)  # (F, 1, d)
            alpha = F.softplus(self.alpha_raw[:, layer]).view(-1, 1)  # (F, 1)
            beta = -alpha + F.softplus(self.beta_raw[:, layer]).view(-1, 1)
            diff = out - z0
            r = diff.norm(dim=-1)  # (F, N)
            h = 1.0 / (alpha + r)
            bh = beta * h
            out = out + bh.unsqueeze(-1) * diff
            dh = -h * h
            logdet = logdet + (d - 1) * torch.log1p(bh) + torch.log1p(bh + beta * dh * r)
        return out, logdet

    def log_prob(self, z: Tensor) -> Tensor:
        """Log-density of ``z`` under every flow, shape ``(N, num_flows)``."""
        out, logdet = self.transform(z)
        base = -0.5 * (out * out).sum(-1) - 0.5 * self.dim * math.log(2 * math.pi)
        return (base + logdet).T


@dataclass
class PosteriorOutput:
    """Everything a posterior module computes for one forward pass.

    Attributes
    ----------
    embeddings : Tensor (N, D)
        Representation returned as the first element of ``forward``.
    alpha : Tensor (N, C)
        Dirichlet parameters (``> 0``).
    log_evidence : Tensor or None
        GPN: ``(N, C)`` log of the per-class evidence before propagation;
        NatPN: ``(N,)`` log of the total evidence ``N_H p(z)``.
    log_density : Tensor or None
        GPN: ``(N, C)`` ``log p(z | c)``; NatPN: ``(N,)`` ``log p(z)``.
    feature_alpha : Tensor or None
        GPN: Dirichlet parameters before APPNP propagation (``prior + beta_ft``).
    """

    embeddings: Tensor
    alpha: Tensor
    log_evidence: Tensor | None = None
    log_density: Tensor | None = None
    feature_alpha: Tensor | None = None


class DirichletHead(nn.Module):
    r"""Dirichlet evidence head on a node-level GNN: :math:`\alpha = \text{prior} + g(\text{logits})`.

    ``g`` is softplus (default), exp (clamped) or ReLU. ``forward -> (embeddings, alpha)``,
    shapes ``(N, D)`` and ``(N, C)``.
    """

    def __init__(
        self, in_channels: int, out_channels: int, config: DirichletConfig | None = None
    ) -> None:
        super().__init__()
        self.config = config if config is not None else DirichletConfig()
        self.backbone = NodeGNN(in_channels, out_channels, self.config.backbone)
        self.in_channels, self.out_channels = in_channels, out_channels

    def evidence(self, logits: Tensor) -> Tensor:
        """Non-negative evidence from logits."""
        kind = self.config.evidence
        if kind == "softplus":
            return F.softplus(logits)
        if kind == "exp":
            return torch.exp(logits.clamp(max=_LOG_EVIDENCE_CLAMP))
        return F.relu(logits)

    def forward_details(self, x: Tensor, edge_index: Tensor) -> PosteriorOutput:
        emb, logits = self.backbone(x, edge_index)
        return PosteriorOutput(emb, self.config.prior + self.evidence(logits))

    def forward(self, x: Tensor, edge_index: Tensor) -> tuple[Tensor, Tensor]:
        """Return ``(embeddings, alpha)``."""
        out = self.forward_details(x, edge_index)
        return out.embeddings, out.alpha


class GraphPosteriorNetwork(nn.Module):
    r"""Graph Posterior Network (Stadler, Charpentier, Geisler, Zügner & Günnemann, NeurIPS 2021).

    1. Feature encoder (MLP, no graph): :math:`z_v = \mathrm{MLP}(x_v) \in \mathbb R^H`
       (the GPN paper's one-hidden-layer MLP, or ``config.encoder``).
    2. One radial flow per class on the latent space: :math:`\log p(z_v | c)`.
    3. Feature evidence (GPN eq. 4): :math:`\beta^{ft}_{vc} = f_c \, p(z_v | c)` times the
       certainty budget :math:`N_H` (``budget``), computed in log space and clamped to
       :math:`[-30, 30]`. :math:`f_c` is the training class count :math:`N_c` (GPN paper) or
       the class frequency :math:`N_c / N` (the structural-shifts authors, ``class_factor``);
       counts come from :meth:`set_class_counts` (ones until set).
    4. APPNP propagation of the evidence (GPN eq. 5):
       :math:`\beta^{agg} = \mathrm{APPNP}_{K,\alpha}(\beta^{ft})`, and
       :math:`\alpha_v = \text{prior} + \beta^{agg}_v`.

    ``forward(x, edge_index) -> (z, alpha)`` with ``z`` (N, latent_dim) and ``alpha`` (N, C).
    """

    def __init__(
        self, in_channels: int, out_channels: int, config: GPNConfig | None = None
    ) -> None:
        super().__init__()
        cfg = config if config is not None else GPNConfig()
        self.config = cfg
        self.in_channels = check_positive_int(in_channels, "in_channels")
        self.out_channels = check_positive_int(out_channels, "out_channels")
        self.encoder: nn.Module
        if cfg.encoder is None:  # the GPN paper's encoder
            self.encoder = nn.Sequential(
                nn.Dropout(cfg.input_dropout),
                nn.Linear(in_channels, cfg.hidden_channels),
                nn.ReLU(),
                nn.Dropout(cfg.dropout),
                nn.Linear(cfg.hidden_channels, cfg.latent_dim),
            )
        else:  # graph-free NodeGNN (model "mlp"): its linear head is the projector
            self.encoder = NodeGNN(in_channels, cfg.latent_dim, cfg.encoder)
        self.flow = BatchedRadialFlow(cfg.latent_dim, cfg.flow_layers, num_flows=out_channels)
        self.propagation = APPNP(K=cfg.appnp_K, alpha=cfg.appnp_alpha)
        self.register_buffer("class_counts", torch.ones(out_channels))
        self.log_budget = log_certainty_budget(cfg.budget, cfg.latent_dim)

    def set_class_counts(self, y: Tensor, mask: Tensor | None = None) -> None:
        """Set ``N_c`` from training labels ``y`` (N,) (optionally restricted to ``mask``)."""
        labels = y[mask] if mask is not None else y
        counts = torch.bincount(labels.long(), minlength=self.out_channels).to(self.class_counts)
        if counts.numel() != self.out_channels:
            raise ValueError(f"labels must lie in [0, {self.out_channels - 1}]")
        self.class_counts.copy_(counts.clamp(min=1))

    def log_class_factor(self) -> Tensor:
        """``log f_c`` (C,): ``log N_c`` (``class_factor="count"``) or ``log(N_c / N)``
        (``"frequency"``, ``N`` = the sum of the counts, each clamped to at least 1)."""
        log_counts = torch.log(self.class_counts)
        if self.config.class_factor == "frequency":
            return log_counts - torch.log(self.class_counts.sum())
        return log_counts

    def forward_details(self, x: Tensor, edge_index: Tensor) -> PosteriorOutput:
        check_node_features(x, self.in_channels)
        check_edge_index(edge_index, x.size(0))
        z = self.encoder(x) if self.config.encoder is None else self.encoder(x, edge_index)[1]
        log_density = self.flow.log_prob(z)  # (N, C)
        log_ev = (log_density + self.log_class_factor().to(z) + self.log_budget).clamp(
            -_LOG_EVIDENCE_CLAMP, _LOG_EVIDENCE_CLAMP
        )
        beta_ft = log_ev.exp()
        beta = self.propagation(beta_ft, edge_index)
        prior = self.config.prior
        return PosteriorOutput(z, prior + beta, log_ev, log_density, prior + beta_ft)

    def forward(self, x: Tensor, edge_index: Tensor) -> tuple[Tensor, Tensor]:
        """Return ``(z, alpha)``."""
        out = self.forward_details(x, edge_index)
        return out.embeddings, out.alpha


class NaturalPosteriorNetwork(nn.Module):
    r"""Natural Posterior Network (Charpentier et al., ICLR 2022) for node classification.

    Encoder = the SE architecture (a :class:`NodeGNN` whose linear head, the projector, maps
    its representation :math:`h` to the latent code :math:`z` of width ``latent_dim``), one
    radial flow density :math:`p(z)` on the latent space, a linear predictor giving the class
    probabilities :math:`\chi = \mathrm{softmax}(W h + b)` (``predictor="representation"``,
    the structural-shifts authors' model; ``"latent"``: :math:`W\,\mathrm{BN}(z) + b` with the
    flow on :math:`\mathrm{BN}(z)`), and the Bayesian update
    (NatPN eq. 4 for the categorical likelihood)
    :math:`\alpha = \text{prior} + N_H\, p(z)\, \chi` with the certainty budget :math:`N_H`.

    ``forward(x, edge_index) -> (z, alpha)``.
    """

    def __init__(
        self, in_channels: int, out_channels: int, config: NatPNConfig | None = None
    ) -> None:
        super().__init__()
        cfg = config if config is not None else NatPNConfig()
        self.config = cfg
        self.in_channels = check_positive_int(in_channels, "in_channels")
        self.out_channels = check_positive_int(out_channels, "out_channels")
        self.encoder = NodeGNN(in_channels, cfg.latent_dim, cfg.encoder)
        self.flow = BatchedRadialFlow(cfg.latent_dim, cfg.flow_layers, num_flows=1)
        if cfg.predictor == "latent":  # our earlier layout
            self.latent_norm = nn.BatchNorm1d(cfg.latent_dim)
            self.decoder = nn.Linear(cfg.latent_dim, out_channels)
        else:
            self.decoder = nn.Linear(self.encoder.embedding_channels, out_channels)
        self.log_budget = log_certainty_budget(cfg.budget, cfg.latent_dim)

    def forward_details(self, x: Tensor, edge_index: Tensor) -> PosteriorOutput:
        if self.config.predictor == "latent":
            _, z = self.encoder(x, edge_index)
            z = self.latent_norm(z)
            logits = self.decoder(z)
        else:
            # one dropped-out representation feeds both the projector and the predictor
            # (the authors' encoder ends each layer with dropout)
            h = self.encoder.embed(x, edge_index)
            if len(self.encoder.layers):
                h = F.dropout(h, self.encoder.config.dropout, self.training)
            z = self.encoder.head(h)
            logits = self.decoder(h)
        log_density = self.flow.log_prob(z)[:, 0]
        log_ev = (log_density + self.log_budget).clamp(-_LOG_EVIDENCE_CLAMP, _LOG_EVIDENCE_CLAMP)
        chi = torch.softmax(logits, dim=-1)
        alpha = self.config.prior + log_ev.exp().unsqueeze(-1) * chi
        return PosteriorOutput(z, alpha, log_ev, log_density)

    def forward(self, x: Tensor, edge_index: Tensor) -> tuple[Tensor, Tensor]:
        """Return ``(z, alpha)``."""
        out = self.forward_details(x, edge_index)
        return out.embeddings, out.alpha
