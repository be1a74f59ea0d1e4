"""Graph-level methods that act on the points of a geometric graph: DIR and LRI-Bernoulli.

Both score every point with a small point-wise network on ``[x, pos - centroid]``. The
gs-models backbone contract (``forward(x, pos, batch)``) gives no access to messages or
edge weights, so the selection reaches the backbone through its inputs: DIR removes the
non-rationale points and scales the kept points' features by their score (the path by
which the scorer is trained); LRI multiplies every point's features by its sampled
Bernoulli mask. This replaces the message masking of the original implementations.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from gs_algos.batch import TaskSpec, call_model, item_losses
from gs_algos.methods.base import Method

__all__ = ["DIR", "LRIBernoulli", "bernoulli_kl", "split_by_score"]


def _centered(pos: Tensor, batch: Tensor) -> Tensor:
    from torch_geometric.utils import scatter

    mean = scatter(pos, batch, dim=0, reduce="mean")
    return pos - mean[batch]


def _point_scorer(in_dim: int, hidden: int) -> nn.Module:
    return nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, 1))


def _batch_vec(data) -> Tensor:
    b = getattr(data, "batch", None)
    return b if b is not None else torch.zeros(data.pos.size(0), dtype=torch.long,
                                               device=data.pos.device)


def split_by_score(scores: Tensor, batch: Tensor, ratio: float) -> Tensor:
    """Bool mask of the top ``ceil(ratio * n_g)`` points of every graph by ``scores``.

    Every graph keeps at least one point and (when it has two or more) leaves at least
    one point out.
    """
    n_graphs = int(batch.max()) + 1 if batch.numel() else 0
    counts = torch.bincount(batch, minlength=n_graphs)
    k = torch.clamp(torch.ceil(ratio * counts.double()).long(), min=1)
    k = torch.minimum(k, torch.clamp(counts - 1, min=1))
    order = torch.argsort(scores.detach(), descending=True, stable=True)
    order = order[torch.argsort(batch[order], stable=True)]
    starts = torch.cumsum(counts, 0) - counts
    rank = torch.empty_like(order)
    rank[order] = torch.arange(order.numel(), device=order.device) - starts[batch[order]]
    return rank < k[batch]


def _subset(data, keep: Tensor, x: Tensor):
    from torch_geometric.data import Data

    b = _batch_vec(data)
    return Data(x=x[keep], pos=data.pos[keep], batch=b[keep])


class DIR(Method):
    """Discovering Invariant Rationales (Wu et al., ICLR 2022), for point clouds.

    A scorer ranks the points of each graph; the top ``causal_ratio`` fraction is the
    causal rationale ``C`` (features scaled by the sigmoid of the score), the rest the
    non-causal part ``S``. The backbone encodes both; a separate spurious head predicts
    from ``S`` alone (trained on its own loss, on detached embeddings). Interventional
    augmentation pairs every graph's causal logits with the spurious logits of another
    graph of the batch, ``logits = out_C[i] * sigmoid(out_S[perm[i]])``, for
    ``num_interventions`` random permutations; the loss is the mean of these
    interventional risks plus ``penalty_weight`` times their variance plus the spurious
    loss (DIR eq. 9). Prediction uses the rationale only.
    """

    name = "dir"
    levels = ("graph",)
    tasks = ("multiclass", "binary")

    def __init__(
        self,
        causal_ratio: float = 0.6,
        penalty_weight: float = 1.0,
        num_interventions: int = 4,
        hidden: int = 64,
    ) -> None:
        super().__init__()
        if not 0 < causal_ratio < 1:
            raise ValueError(f"causal_ratio must be in (0, 1), got {causal_ratio!r}")
        self.causal_ratio = float(causal_ratio)
        self.penalty_weight = float(penalty_weight)
        self.num_interventions = int(num_interventions)
        self.hidden = int(hidden)

    def build(self, spec: TaskSpec) -> None:
        if spec.feature_dim == 0:
            raise ValueError("DIR needs point features x (feature_dim > 0)")
        self.scorer = _point_scorer(spec.feature_dim + spec.pos_dim, self.hidden)
        self.spurious_head = nn.Linear(spec.embedding_dim, spec.num_outputs)

    def scores(self, data) -> Tensor:
        """One score per point."""
        b = _batch_vec(data)
        return self.scorer(torch.cat([data.x, _centered(data.pos, b)], -1)).squeeze(-1)

    def split(self, data):
        """``(causal_data, spurious_data, scores)``."""
        s = self.scores(data)
        b = _batch_vec(data)
        causal = split_by_score(s, b, self.causal_ratio)
        counts = torch.bincount(b)
        single = counts[b] == 1
        gate = torch.sigmoid(s).unsqueeze(-1)
        c = _subset(data, causal, data.x * gate)
        sp = _subset(data, ~causal | single, data.x * (1 - gate))
        return c, sp, s

    def training_loss(self, model, batch, epoch):
        c, sp, _ = self.split(batch.data)
        _, out_c = call_model(model, "graph", c)
        emb_s, _ = call_model(model, "graph", sp)
        out_s = self.spurious_head(emb_s.detach())
        spurious = item_losses(out_s, batch.y, batch.task).mean()
        n = out_c.size(0)
        risks = []
        for _ in range(self.num_interventions):
            perm = torch.randperm(n, device=out_c.device)
            logits = out_c * torch.sigmoid(out_s.detach()[perm])
            risks.append(item_losses(logits, batch.y, batch.task).mean())
        risks_t = torch.stack(risks)
        var = risks_t.var(unbiased=False)
        loss = risks_t.mean() + self.penalty_weight * var + spurious
        return loss, {
            "loss": float(risks_t.mean().detach()),
            "variance": float(var.detach()),
            "spurious": float(spurious.detach()),
        }

    def predict(self, model, level, data):
        c, _, _ = self.split(data)
        return call_model(model, "graph", c)


def bernoulli_kl(p: Tensor, r: float, eps: float = 1e-6) -> Tensor:
    """``KL(Bern(p) || Bern(r)) = p log(p/r) + (1-p) log((1-p)/(1-r))`` elementwise
    (the information term of LRI-Bernoulli, Miao et al. 2023, eq. 5)."""
    p = p.clamp(eps, 1 - eps)
    return p * torch.log(p / r) + (1 - p) * torch.log((1 - p) / (1 - r))


class LRIBernoulli(Method):
    """LRI-Bernoulli (Miao et al., *Interpretable geometric deep learning via learnable
    randomness injection*, ICLR 2023).

    An extractor gives every point a keep-probability ``p_i``; during training a relaxed
    Bernoulli mask ``m_i`` (binary concrete, ``temperature``) multiplies the point's
    features, and the loss is the task loss plus ``info_loss_coef`` times the mean
    ``KL(Bern(p_i) || Bern(r))``. The prior ``r`` decays from ``init_r = 0.9`` by
    ``decay_r = 0.1`` every ``decay_interval = 10`` epochs down to ``final_r = 0.7``.
    At evaluation the features are multiplied by ``p_i`` (the expected mask).
    """

    name = "lri"
    levels = ("graph",)

    def __init__(
        self,
        info_loss_coef: float = 1.0,
        init_r: float = 0.9,
        final_r: float = 0.7,
        decay_r: float = 0.1,
        decay_interval: int = 10,
        temperature: float = 1.0,
        hidden: int = 64,
    ) -> None:
        super().__init__()
        if not 0 < final_r <= init_r < 1:
            raise ValueError(f"need 0 < final_r <= init_r < 1, got {final_r!r}, {init_r!r}")
        if info_loss_coef < 0:
            raise ValueError(f"info_loss_coef must be >= 0, got {info_loss_coef!r}")
        self.info_loss_coef = float(info_loss_coef)
        self.init_r, self.final_r = float(init_r), float(final_r)
        self.decay_r, self.decay_interval = float(decay_r), int(decay_interval)
        self.temperature = float(temperature)
        self.hidden = int(hidden)

    def r(self, epoch: int) -> float:
        """The Bernoulli prior at ``epoch``: ``max(final_r, init_r - decay_r * floor(epoch / decay_interval))``."""
        return max(self.final_r, self.init_r - self.decay_r * math.floor(epoch / self.decay_interval))

    def build(self, spec: TaskSpec) -> None:
        if spec.feature_dim == 0:
            raise ValueError("LRI needs point features x (feature_dim > 0)")
        self.extractor = _point_scorer(spec.feature_dim + spec.pos_dim, self.hidden)

    def keep_logits(self, data) -> Tensor:
        b = _batch_vec(data)
        return self.extractor(torch.cat([data.x, _centered(data.pos, b)], -1)).squeeze(-1)

    def training_loss(self, model, batch, epoch):
        data = batch.data
        logits = self.keep_logits(data)
        p = torch.sigmoid(logits)
        u = torch.rand_like(logits).clamp(1e-6, 1 - 1e-6)
        m = torch.sigmoid((logits + torch.log(u) - torch.log1p(-u)) / self.temperature)
        _, out = call_model(model, "graph", data, x=data.x * m.unsqueeze(-1))
        task = item_losses(out, batch.y, batch.task).mean()
        info = bernoulli_kl(p, self.r(epoch)).mean()
        loss = task + self.info_loss_coef * info
        return loss, {"loss": float(task.detach()), "info": float(info.detach()),
                      "mean_p": float(p.mean().detach())}

    def predict(self, model, level, data):
        p = torch.sigmoid(self.keep_logits(data))
        return call_model(model, "graph", data, x=data.x * p.unsqueeze(-1))
