"""Graph-level methods that act on the points of a geometric graph: DIR and LRI-Bernoulli.

Both follow the GeSS reference implementation (Graph-COM/GESS,
``GESS/algorithms/baselines/{dir,lri_bern}.py`` with ``GESS/models/models/{DIR,LRI}_model.py``)
and act on *embeddings and message weights*, never on the input features: GeSS's point
features are categorical atom types (QMOF, DrugOOD-3D) or all ones (Track), and a float mask
multiplied into a category is meaningless (it was the ``x must hold integer categories``
failure of our first version). They need a backbone with the gs-models point-cloud hooks
(:class:`gs_models.pointcloud.PointCloudBackbone`):

* ``point_embeddings(x, pos, batch)``: point representations before pooling (GeSS
  ``get_emb``);
* ``forward(..., point_weight=w)``: every message ``j -> i`` of every layer scaled by
  ``w_i * w_j`` (GeSS ``node_attn_to_edge_attn`` and ``msg * edge_attn``);
* ``forward(None, ..., features=h)``: the encoder run on given point features instead of the
  embedding of ``x`` (GeSS ``with_enc=False``).

Where GeSS's code and the papers disagree, or where we deviate, the class docstrings say so.
"""

from __future__ import annotations

import copy
import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from gs_algos.batch import TaskSpec, item_losses, knn_kwargs
from gs_algos.methods.base import Method

__all__ = ["DIR", "LRIBernoulli", "bernoulli_kl", "dir_loss_of", "split_by_score", "gess_mlp"]


class _BatchNorm(nn.BatchNorm1d):
    """``BatchNorm1d`` that normalises a single row with its running statistics instead of
    failing (a last training batch of one graph)."""

    def forward(self, x: Tensor) -> Tensor:
        if self.training and x.size(0) == 1:
            return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                                False, 0.0, self.eps)
        return super().forward(x)


def gess_mlp(sizes: list[int], dropout: float = 0.2) -> nn.Sequential:
    """GeSS's ``MLP`` (``GESS/models/models/tools.py``): ``Linear`` then batch norm, ReLU and
    dropout between layers (not after the last), with GeSS's backbone dropout 0.2."""
    layers: list[nn.Module] = []
    for i in range(1, len(sizes)):
        layers.append(nn.Linear(sizes[i - 1], sizes[i]))
        if i < len(sizes) - 1:
            layers += [_BatchNorm(sizes[i]), nn.ReLU(), nn.Dropout(dropout)]
    return nn.Sequential(*layers)


def _batch_vec(data) -> Tensor:
    b = getattr(data, "batch", None)
    return b if b is not None else torch.zeros(data.pos.size(0), dtype=torch.long,
                                               device=data.pos.device)


def _need_hooks(model: nn.Module, name: str) -> None:
    if not callable(getattr(model, "point_embeddings", None)):
        raise TypeError(
            f"{name} acts on point embeddings and message weights and needs a gs-models "
            f"point-cloud backbone (egnn, dgcnn, pointtransformer: point_embeddings(), "
            f"forward(..., point_weight=, features=)); got {type(model).__name__}"
        )


def split_by_score(scores: Tensor, batch: Tensor, ratio: float) -> Tensor:
    """Bool mask of the top ``ceil(ratio * n_g)`` points of every graph by ``scores``.

    Every graph keeps at least one point and (when it has two or more) leaves at least
    one point out. (GeSS's DIR keeps ``int(ratio * E_g)`` *edges* per graph.)
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


def _reset(module: nn.Module) -> None:
    """Fresh parameters for every submodule that can reset itself (the GeSS DIR rationale
    encoder is a newly built encoder, not a copy of the classifier's weights)."""
    for m in module.modules():
        if m is not module and callable(getattr(m, "reset_parameters", None)):
            m.reset_parameters()


def dir_loss_of(out_c: Tensor, out_s: Tensor, y: Tensor, task: str) -> Tensor:
    """GeSS's DIR loss ``mean_k R_k + var_k(B R_k)`` (``DIR.forward_pass``, DIR eq. 9).

    ``R_k = mean_i l(sigmoid(out_s[k]) * out_c[i], y_i)``: every causal output combined with
    the (detached) spurious output of graph ``k``; ``B`` graphs, unbiased variance as
    ``torch.var``. Shapes: ``out_c``, ``out_s`` (B, C); ``y`` (B,).
    """
    conf = torch.sigmoid(out_s.detach())
    n = out_c.size(0)
    comb = (conf.unsqueeze(1) * out_c.unsqueeze(0)).reshape(n * n, -1)
    env = item_losses(comb, y.repeat(n), task).reshape(n, n).mean(1)
    var = torch.var(env * n) if n > 1 else env.sum() * 0
    return env.mean() + var


class DIR(Method):
    """Discovering Invariant Rationales (Wu et al., ICLR 2022) as run by GeSS (section 4.1,
    appendix D.2), on point clouds.

    Modules (GeSS ``DIRModel``): a *rationale encoder* (a second, freshly initialised
    backbone of the same architecture, GeSS ``emb_model``) gives every point an embedding
    ``e_i``; an extractor ``MLP(H, 2H, H, 1)`` scores it, ``s_i``; a spurious head
    ``MLP(H, 2H, H, out)`` (GeSS ``classifier_conf``).

    Step (GeSS ``DIR.forward_pass``): the top ``causal_ratio`` share of the points of every
    graph (by ``s``) is the causal rationale ``C``, the rest the non-causal part ``S``. The
    model's encoder runs on ``C`` with the rationale embeddings as its input features
    (``features=e[C]``: the embedding of the atom types is *not* gated, the encoder reads the
    rationale encoder's embeddings, GeSS ``with_enc=False``) and message weights
    ``sigmoid(s)``; on ``S`` with weights ``sigmoid(-s)`` and detached. Losses:

    * ``L_c = l(out_C, y)`` (model prediction from the rationale);
    * ``L_s = l(head_s(rep_S), y)`` trains the spurious head only (``rep_S`` detached);
    * interventional risks: for every graph ``k`` of the batch, ``R_k = l(sigmoid(
      head_s(rep_S)[k]).detach() * out_C, y)`` (every causal output combined with the
      spurious output of graph ``k``; DIR eq. 5-6, GeSS ``get_comb_pred``);
    * ``L_DIR = mean_k R_k + var_k(B R_k)`` (GeSS: ``torch.var(env_loss * B)``, unbiased;
      DIR eq. 9 with lambda absorbed);
    * loss ``= L_c + alpha * epoch**1.6 * L_DIR + L_s`` (GeSS ``alpha_prime``; the epoch is
      0-based, so the first epoch trains ``L_c`` only).

    Prediction: the model's output on the rationale ``C``.

    Hyperparameters: ``causal_ratio`` (GeSS tunes it, table 7; every released GeSS config
    uses 0.5, ``algo.coeff``) and ``alpha`` (``algo.extra.alpha`` = 1e-4 in every config).

    Deviations (ours): GeSS ranks *edges* of the kNN graph (``extractor([e_i, e_j])``, the
    top ``int(ratio * E_g)`` edges per graph, the subgraph they touch) and weights them by
    the raw extractor output (``-s`` on the non-causal edges); we rank *points* (our DGCNN
    and Point Transformer build their own kNN graphs, and the gs-models contract exposes
    points) and weight the messages between kept points by ``sigmoid(+-s)``, which keeps the
    weights in [0, 1]. GeSS trains the spurious head with its own Adam optimiser; since its
    input is detached and its output is detached in the interventional risks, one optimiser
    over the sum of the losses gives the same gradients. DIR applies to classification
    (binary, multiclass); GeSS does not run it on the regression fidelity shift, and the
    combination ``sigmoid(spurious) * causal`` assumes logits, so regression is rejected.
    """

    name = "dir"
    levels = ("graph",)
    tasks = ("multiclass", "binary")

    def __init__(self, causal_ratio: float = 0.5, alpha: float = 1e-4) -> None:
        super().__init__()
        if not 0 < causal_ratio < 1:
            raise ValueError(f"causal_ratio must be in (0, 1), got {causal_ratio!r}")
        if alpha < 0:
            raise ValueError(f"alpha must be >= 0, got {alpha!r}")
        self.causal_ratio = float(causal_ratio)
        self.alpha = float(alpha)
        self.encoder: nn.Module | None = None

    def build(self, spec: TaskSpec) -> None:
        h = spec.embedding_dim
        self.extractor = gess_mlp([h, 2 * h, h, 1])
        self.spurious_head = gess_mlp([h, 2 * h, h, spec.num_outputs])

    def attach(self, model: nn.Module) -> None:
        _need_hooks(model, "DIR")
        if self.encoder is None:
            enc = copy.deepcopy(model)
            _reset(enc)
            self.encoder = enc

    def alpha_at(self, epoch: int) -> float:
        """GeSS's weight of the DIR loss at ``epoch`` (0-based): ``alpha * epoch ** 1.6``."""
        return self.alpha * float(epoch) ** 1.6

    def scores(self, data) -> tuple[Tensor, Tensor]:
        """``(s, e)``: one score per point and the rationale embeddings ``(N, H)``."""
        if self.encoder is None:
            raise RuntimeError("DIR has no rationale encoder yet: attach(model) first (fit_graph does)")
        e = self.encoder.point_embeddings(data.x, data.pos, _batch_vec(data), **knn_kwargs(data))
        return self.extractor(e).squeeze(-1), e

    def split(self, data) -> tuple[Tensor, Tensor, Tensor]:
        """``(causal mask, scores, rationale embeddings)``."""
        s, e = self.scores(data)
        return split_by_score(s, _batch_vec(data), self.causal_ratio), s, e

    @staticmethod
    def _part(model, data, keep: Tensor, e: Tensor, w: Tensor):
        b = _batch_vec(data)
        n_graphs = int(b.max()) + 1
        emb, out = model(None, data.pos[keep], b[keep], point_weight=w[keep], features=e[keep])
        if emb.size(0) != n_graphs:  # a graph without points in this part: zero rows
            full_e = emb.new_zeros(n_graphs, emb.size(1))
            full_o = out.new_zeros(n_graphs, out.size(1))
            present = torch.unique(b[keep])
            full_e[present], full_o[present] = emb[present], out[present]
            emb, out = full_e, full_o
        return emb, out

    def training_loss(self, model, batch, epoch):
        data = batch.data
        causal, s, e = self.split(data)
        _, out_c = self._part(model, data, causal, e, torch.sigmoid(s))
        b = _batch_vec(data)
        single = torch.bincount(b)[b] == 1  # a 1-point graph keeps its point in both parts
        rep_s, _ = self._part(model, data, ~causal | single, e, torch.sigmoid(-s))
        out_s = self.spurious_head(rep_s.detach())
        causal_loss = item_losses(out_c, batch.y, batch.task).mean()
        spurious_loss = item_losses(out_s, batch.y, batch.task).mean()
        dir_loss = dir_loss_of(out_c, out_s, batch.y, batch.task)
        weight = self.alpha_at(epoch)
        loss = causal_loss + weight * dir_loss + spurious_loss
        return loss, {"loss": float(causal_loss.detach()), "dir": float(dir_loss.detach()),
                      "spurious": float(spurious_loss.detach()), "dir_weight": weight}

    def predict(self, model, level, data):
        causal, s, e = self.split(data)
        return self._part(model, data, causal, e, torch.sigmoid(s))


def bernoulli_kl(p: Tensor, r: float, eps: float = 1e-6) -> Tensor:
    """``KL(Bern(p) || Bern(r)) = p log(p/r) + (1-p) log((1-p)/(1-r))`` elementwise
    (the information term of LRI-Bernoulli, Miao et al. 2023, eq. 5)."""
    p = p.clamp(eps, 1 - eps)
    return p * torch.log(p / r) + (1 - p) * torch.log((1 - p) / (1 - r))


class LRIBernoulli(Method):
    """LRI-Bernoulli (Miao et al., *Interpretable geometric deep learning via learnable
    randomness injection*, ICLR 2023) as run by GeSS (appendix D.2; ``LRIBern``).

    The model's own encoder gives every point an embedding ``e_i`` (GeSS ``get_emb``); an
    extractor ``MLP(H, 2H, H, 1)`` turns it into a keep logit ``a_i``, ``p_i = sigmoid(a_i)``.
    During training a relaxed Bernoulli mask ``m_i = sigmoid((a_i + log u - log(1 - u)) / T)``
    (binary concrete, ``u ~ U(0, 1)``, temperature ``T``) weights every message ``j -> i`` of
    every layer by ``m_i m_j`` (``node_attn_to_edge_attn``); the model predicts from the
    masked pass. Loss (LRI eq. 5): task loss ``+ info_loss_coef * mean_i KL(Bern(p_i) ||
    Bern(r))``, the prior ``r`` decaying from ``init_r = 0.9`` by ``decay_r = 0.1`` every
    ``decay_interval = 10`` epochs down to ``final_r = 0.7`` (GeSS configs ``algo.extra``).
    ``info_loss_coef`` is the hyperparameter GeSS tunes (table 7, ``algo.coeff``).

    Evaluation: messages weighted by ``p_i p_j`` (the expected mask). GeSS's code samples the
    mask at evaluation too (``forward_pass`` ignores the phase, ``sampling(...,
    do_sampling=True)``), which makes its evaluation random; ``eval_sampling=True`` does the
    same. GeSS's info loss ``attn log(attn / r + 1e-6) + ...`` differs from the KL only in
    the placement of ``1e-6``.
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
        eval_sampling: bool = False,
    ) -> None:
        super().__init__()
        if not 0 < final_r <= init_r < 1:
            raise ValueError(f"need 0 < final_r <= init_r < 1, got {final_r!r}, {init_r!r}")
        if info_loss_coef < 0:
            raise ValueError(f"info_loss_coef must be >= 0, got {info_loss_coef!r}")
        if not temperature > 0:
            raise ValueError(f"temperature must be > 0, got {temperature!r}")
        self.info_loss_coef = float(info_loss_coef)
        self.init_r, self.final_r = float(init_r), float(final_r)
        self.decay_r, self.decay_interval = float(decay_r), int(decay_interval)
        self.temperature = float(temperature)
        self.eval_sampling = bool(eval_sampling)

    def r(self, epoch: int) -> float:
        """The Bernoulli prior at ``epoch``: ``max(final_r, init_r - decay_r * floor(epoch / decay_interval))``."""
        return max(self.final_r, self.init_r - self.decay_r * math.floor(epoch / self.decay_interval))

    def build(self, spec: TaskSpec) -> None:
        h = spec.embedding_dim
        self.extractor = gess_mlp([h, 2 * h, h, 1])

    def attach(self, model: nn.Module) -> None:
        _need_hooks(model, "LRI")

    def keep_logits(self, model, data) -> Tensor:
        """The keep logit ``a_i`` of every point (from the model's own point embeddings)."""
        e = model.point_embeddings(data.x, data.pos, _batch_vec(data), **knn_kwargs(data))
        return self.extractor(e).squeeze(-1)

    def sample_mask(self, logits: Tensor) -> Tensor:
        """Binary-concrete relaxed Bernoulli sample ``sigmoid((a + log u - log(1-u)) / T)``."""
        u = torch.rand_like(logits).clamp(1e-10, 1 - 1e-10)
        return torch.sigmoid((logits + torch.log(u) - torch.log1p(-u)) / self.temperature)

    def training_loss(self, model, batch, epoch):
        data = batch.data
        logits = self.keep_logits(model, data)
        p = torch.sigmoid(logits)
        m = self.sample_mask(logits)
        _, out = model(data.x, data.pos, _batch_vec(data), point_weight=m, **knn_kwargs(data))
        task = item_losses(out, batch.y, batch.task).mean()
        info = bernoulli_kl(p, self.r(epoch)).mean()
        loss = task + self.info_loss_coef * info
        return loss, {"loss": float(task.detach()), "info": float(info.detach()),
                      "mean_p": float(p.mean().detach()), "r": self.r(epoch)}

    def predict(self, model, level, data):
        logits = self.keep_logits(model, data)
        w = self.sample_mask(logits) if self.eval_sampling else torch.sigmoid(logits)
        return model(data.x, data.pos, _batch_vec(data), point_weight=w, **knn_kwargs(data))
