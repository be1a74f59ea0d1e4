"""OOD-robustness methods that work at node and graph level.

ERM, IRM, VREx, GroupDRO (group/domain based), DeepCORAL and DANN (domain alignment,
with source domains and/or unlabeled target items) and Mixup (on representations).
"""

from __future__ import annotations

import itertools
import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from gs_algos.batch import Batch, TaskSpec, head_of, item_losses
from gs_algos.methods.base import Method, domain_embeddings, group_risks
from gs_algos.names import GESS_VARIANTS, ROBUSTNESS_VARIANTS

__all__ = [
    "ERM",
    "IRM",
    "VREx",
    "GroupDRO",
    "DeepCoral",
    "DANN",
    "Mixup",
    "coral_distance",
    "feature_covariance",
    "good_reversal_coefficient",
    "check_variant",
    "VARIANTS",
    "GradientReversal",
]


def _need_domain(batch: Batch, name: str) -> Tensor:
    if batch.domain is None:
        raise ValueError(
            f"method {name!r} needs domain ids on the labelled items (batch.domain is None)"
        )
    return batch.domain


class ERM(Method):
    """Empirical risk minimisation: the mean loss over the labelled items."""

    name = "erm"

    def training_loss(self, model, batch, epoch):
        _, out = batch.forward(model)
        loss = batch.losses(out).mean()
        return loss, {"loss": float(loss.detach())}


class IRM(Method):
    """IRMv1 (Arjovsky et al. 2019, eq. IRMv1): risk + ``penalty_weight`` x the squared
    gradient of each domain's risk with respect to a dummy output scale ``w = 1``."""

    name = "irm"
    requires_domains = True

    def __init__(self, penalty_weight: float = 1.0) -> None:
        super().__init__()
        if penalty_weight < 0:
            raise ValueError(f"penalty_weight must be >= 0, got {penalty_weight!r}")
        self.penalty_weight = float(penalty_weight)

    def training_loss(self, model, batch, epoch):
        dom = _need_domain(batch, self.name)
        _, out = batch.forward(model)
        out_l = out[batch.labeled]
        scale = torch.ones((), device=out.device, requires_grad=True)
        losses = item_losses(out_l * scale, batch.y, batch.task)
        risks, _ = group_risks(losses, dom)
        penalty = out.new_zeros(())
        for r in risks:
            (g,) = torch.autograd.grad(r, scale, create_graph=True)
            penalty = penalty + g.pow(2)
        penalty = penalty / risks.numel()
        erm = losses.mean()
        loss = erm + self.penalty_weight * penalty
        return loss, {"loss": float(erm.detach()), "penalty": float(penalty.detach())}


class VREx(Method):
    """V-REx (Krueger et al. 2021, eq. 8): mean of the per-domain risks plus
    ``penalty_weight`` x their variance.

    ``variant="gess"`` (GeSS ``GESS/algorithms/baselines/VREx.py``): the mean loss over the
    items of the batch (not over domains) plus ``penalty_weight`` x the *unbiased* variance
    of the per-domain risks (``torch.var``; 0 with a single domain in the batch)."""

    name = "vrex"
    requires_domains = True

    def __init__(self, penalty_weight: float = 1.0, variant: str = "ours-v1") -> None:
        super().__init__()
        if penalty_weight < 0:
            raise ValueError(f"penalty_weight must be >= 0, got {penalty_weight!r}")
        if variant not in GESS_VARIANTS:
            raise ValueError(f"variant must be 'ours-v1' or 'gess', got {variant!r}")
        self.penalty_weight = float(penalty_weight)
        self.variant = variant

    def training_loss(self, model, batch, epoch):
        dom = _need_domain(batch, self.name)
        _, out = batch.forward(model)
        losses = batch.losses(out)
        risks, _ = group_risks(losses, dom)
        if self.variant == "gess":
            var = risks.var() if risks.numel() > 1 else risks.sum() * 0
            loss = losses.mean() + self.penalty_weight * var
            return loss, {"loss": float(losses.mean().detach()), "variance": float(var.detach())}
        var = risks.var(unbiased=False) if risks.numel() > 1 else risks.sum() * 0
        loss = risks.mean() + self.penalty_weight * var
        return loss, {"loss": float(risks.mean().detach()), "variance": float(var.detach())}


class GroupDRO(Method):
    """Group DRO with the online exponentiated-gradient weights of Sagawa et al. (2020,
    algorithm 1): ``q_g <- q_g * exp(step_size * risk_g)``, renormalised, and the
    optimised loss is ``sum_g q_g risk_g``. ``step_size`` is the exponent (GeSS table 7).

    ``variant="gess"`` (GeSS ``GESS/algorithms/baselines/groupdro.py``): the weights are not
    carried from step to step; every batch uses ``q = softmax(step_size * risk)`` over the
    domains present in it (``exp_coeff``). The paper cites Sagawa et al.'s online algorithm;
    its code is this per-batch weighting."""

    name = "groupdro"
    requires_domains = True

    def __init__(self, step_size: float = 0.01, variant: str = "ours-v1") -> None:
        super().__init__()
        if step_size < 0:
            raise ValueError(f"step_size must be >= 0, got {step_size!r}")
        if variant not in GESS_VARIANTS:
            raise ValueError(f"variant must be 'ours-v1' or 'gess', got {variant!r}")
        self.step_size = float(step_size)
        self.variant = variant
        self.register_buffer("q", torch.ones(0))

    def build(self, spec: TaskSpec) -> None:
        n = max(spec.num_domains, 1)
        self.q = torch.full((n,), 1.0 / n)

    def training_loss(self, model, batch, epoch):
        dom = _need_domain(batch, self.name)
        _, out = batch.forward(model)
        risks, ids = group_risks(batch.losses(out), dom)
        if self.variant == "gess":
            w = torch.softmax(self.step_size * risks.detach(), 0)
            loss = (w * risks).sum()
            return loss, {"loss": float(risks.mean().detach()), "max_q": float(w.max())}
        if int(ids.max()) >= self.q.numel():
            raise ValueError(
                f"domain id {int(ids.max())} out of range for {self.q.numel()} domains"
            )
        with torch.no_grad():
            q = self.q.clone().to(risks.device)
            q[ids] = q[ids] * torch.exp(self.step_size * risks.detach())
            q = q / q.sum()
            self.q.copy_(q.to(self.q.device))
        loss = (self.q.to(risks.device)[ids] * risks).sum()
        return loss, {"loss": float(risks.mean().detach()), "max_q": float(self.q.max())}


#: Named variants of DANN, DeepCoral, Mixup and EERM: ``"ours-v1"`` (our earlier
#: formulation, the default of the classes) and ``"good"`` (the GOOD benchmark's code,
#: divelab/GOOD, which the structural-shifts paper used for these four methods, section 4:
#: "we use the experimental framework from the GOOD benchmark"; the default of the
#: structural-shifts route, :mod:`gs_algos.node_methods`). The one list is
#: :data:`gs_algos.names.ROBUSTNESS_VARIANTS`.
VARIANTS = ROBUSTNESS_VARIANTS

#: Covariance estimators of :func:`coral_distance`.
COVARIANCES = ("centred", "good")


def check_variant(variant: str, extra: tuple[str, ...] = ()) -> str:
    """``variant`` if it is one of :data:`VARIANTS` (or ``extra``), else ``ValueError``."""
    accepted = (*VARIANTS, *extra)
    if variant not in accepted:
        raise ValueError(f"variant must be one of {list(accepted)}, got {variant!r}")
    return variant


def gess_reversal_coefficient(step: int, max_iters: int = 1000, alpha: float = 1.0,
                              lo: float = 0.0, hi: float = 1.0) -> float:
    """The warm-start gradient-reversal coefficient of GeSS's DANN
    (``WarmStartGradientReverseLayer`` in ``GESS/models/models/DANN_model.py``, from the
    Transfer-Learning-Library): ``2 (hi - lo) / (1 + exp(-alpha * step / max_iters)) - (hi -
    lo) + lo``, ``step`` the number of earlier training steps (``auto_step``: +1 per forward).
    With GeSS's ``alpha = 1``, ``max_iters = 1000`` it rises from 0 to 0.46 at step 1000 and
    to 1 only asymptotically (Ganin et al.'s schedule uses ``alpha = 10``)."""
    if max_iters < 1:
        raise ValueError(f"max_iters must be >= 1, got {max_iters!r}")
    return float(2.0 * (hi - lo) / (1.0 + math.exp(-alpha * step / max_iters)) - (hi - lo) + lo)


def feature_covariance(z: Tensor, kind: str = "centred") -> Tensor:
    """``(d, d)`` covariance estimate of the rows of ``z`` (``n >= 2`` rows).

    * ``"centred"``: the unbiased covariance ``(Z^T Z - n m m^T) / (n - 1)``
      (``m`` the column means), as in Sun & Saenko (2016, eq. 1).
    * ``"good"``: ``(Z^T Z - m m^T) / (n - 1) = centred + m m^T``, the estimate of GOOD's
      ``compute_covariance`` (``GOOD/ood_algorithms/algorithms/Coral.py``, lines 29-36: the
      outer product of the means is subtracted once, not ``n`` times), so two domains with
      equal centred covariances but different means still differ.
    """
    if kind not in COVARIANCES:
        raise ValueError(f"covariance must be one of {list(COVARIANCES)}, got {kind!r}")
    n = z.size(0)
    m = z.mean(0, keepdim=True)
    if kind == "centred":
        zc = z - m
        return zc.t() @ zc / (n - 1)
    return (z.t() @ z - m.t() @ m) / (n - 1)


def coral_distance(a: Tensor, b: Tensor, covariance: str = "centred") -> Tensor:
    """CORAL loss of Sun & Saenko (2016, eq. 1): ``||C_a - C_b||_F^2 / (4 d^2)``.

    ``C`` is the feature covariance of the rows of ``a`` (``b``) estimated as
    ``covariance`` says (:func:`feature_covariance`: ``"centred"``, or GOOD's ``"good"``),
    ``d`` the feature dimension. GOOD's ``torch.mean(dis * dis) / 4`` (``Coral.py`` line
    105) is the same scaling. Differentiable in both inputs.
    """
    if a.dim() != 2 or b.dim() != 2 or a.size(1) != b.size(1):
        raise ValueError(
            f"coral_distance needs two 2-d tensors of equal width, got {tuple(a.shape)} "
            f"and {tuple(b.shape)}"
        )
    if a.size(0) < 2 or b.size(0) < 2:
        raise ValueError("coral_distance needs at least 2 rows in each input")
    d = a.size(1)
    diff = feature_covariance(a, covariance) - feature_covariance(b, covariance)
    return diff.pow(2).sum() / (4 * d * d)


class DeepCoral(Method):
    """Deep CORAL (Sun & Saenko 2016): task loss + ``penalty_weight`` x the mean CORAL
    distance between the embeddings of every pair of domains present in the batch
    (source domains, and the unlabeled target as one more domain). With
    ``source_domains=False`` all labelled items form one source domain (source vs target,
    the GeSS O-Feature setting).

    Variants (``variant``):

    * ``"ours-v1"`` (default): centred covariances; ``penalty_weight`` 1.
    * ``"good"``: GOOD's ``Coral`` (``GOOD/ood_algorithms/algorithms/Coral.py``): the
      covariance ``(Z^T Z - m m^T) / (n - 1)`` of ``compute_covariance`` (lines 13-38; it
      also aligns the means, :func:`feature_covariance`), the mean over every (ordered) pair
      of training environments with at least 2 nodes of ``mean((C_i - C_j)^2) / 4`` (lines
      91-111; the mean over ordered pairs equals ours over unordered ones), a NaN penalty
      counted as 0 (line 113), on the encoder output (``CoralGCNs.py``: ``out_readout``, our
      embeddings). ``penalty_weight`` = ``ood_param`` of GOODCora/degree/covariate
      (``configs/GOOD_configs/GOODCora/degree/covariate/Coral.yaml``: 1.0). Loss
      ``L = CE + penalty_weight * coral`` (line 116).

    GeSS (O-Feature level) uses the centred covariance ``(F^T F - (1^T F)^T (1^T F) / n) /
    (n - 1)`` and ``mean((C_s - C_t)^2) / 4`` between the source and the target batch
    (``GESS/algorithms/baselines/coral.py``): ``variant="ours-v1"`` with
    ``source_domains=False`` and ``penalty_weight`` = GeSS ``algo.coeff``. **The paper and
    the GeSS code disagree**: the code averages the penalty with
    ``torch.tensor(coral_loss_list).mean()``, which builds a new tensor without gradient, so
    its DeepCoral trains exactly as ERM (the penalty is only logged); we keep the gradient,
    i.e. the method the paper describes (appendix D.2).
    """

    name = "coral"
    requires_domains = True

    def __init__(
        self,
        penalty_weight: float | None = None,
        source_domains: bool = True,
        variant: str = "ours-v1",
    ) -> None:
        super().__init__()
        self.variant = check_variant(variant)
        if penalty_weight is None:
            penalty_weight = 1.0  # ours-v1 and GOOD's GOODCora/degree/covariate ood_param
        if penalty_weight < 0:
            raise ValueError(f"penalty_weight must be >= 0, got {penalty_weight!r}")
        self.penalty_weight = float(penalty_weight)
        self.source_domains = bool(source_domains)
        self.covariance = "good" if self.variant == "good" else "centred"

    def build(self, spec: TaskSpec) -> None:
        if not self.source_domains and not spec.has_target:
            raise ValueError("DeepCoral(source_domains=False) needs unlabeled target items")

    def penalty(self, emb: Tensor, dom: Tensor) -> Tensor:
        """Mean pairwise CORAL distance between domains with at least 2 items."""
        present = [d for d in torch.unique(dom).tolist() if int((dom == d).sum()) >= 2]
        terms = [
            coral_distance(emb[dom == i], emb[dom == j], self.covariance)
            for i, j in itertools.combinations(present, 2)
        ]
        if not terms:
            return emb.sum() * 0
        pen = torch.stack(terms).mean()
        if self.variant == "good" and torch.isnan(pen):
            return emb.sum() * 0  # GOOD Coral.py line 113: a NaN penalty counts as 0
        return pen

    def training_loss(self, model, batch, epoch):
        emb, out = batch.forward(model)
        task = batch.losses(out).mean()
        e, d = domain_embeddings(
            batch, model, emb, self.spec.num_domains, self.source_domains
        )
        pen = self.penalty(e, d)
        loss = task + self.penalty_weight * pen
        return loss, {"loss": float(task.detach()), "coral": float(pen.detach())}


class _ReverseGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, coeff):
        ctx.coeff = coeff
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return -ctx.coeff * grad, None


class GradientReversal(nn.Module):
    """Identity forward, gradient multiplied by ``-coeff`` backward (Ganin et al. 2016)."""

    def __init__(self, coeff: float = 1.0) -> None:
        super().__init__()
        self.coeff = float(coeff)

    def forward(self, x: Tensor) -> Tensor:
        return _ReverseGrad.apply(x, self.coeff)


def good_reversal_coefficient(epoch: int, max_epochs: int, step: int = 0, steps: int = 1) -> float:
    """GOOD's gradient-reversal coefficient ``alpha = 2 / (1 + exp(-10 p)) - 1`` with
    ``p = (step / steps + epoch) / max_epochs`` (``GOOD/kernel/pipelines/basic_pipeline.py``
    lines 108-110, the schedule of Ganin et al. 2016, section 5.2.2): 0 at the first step,
    rising towards 1. Full batch: one step per epoch, ``p = epoch / max_epochs``."""
    if max_epochs < 1:
        raise ValueError(f"max_epochs must be >= 1, got {max_epochs!r}")
    p = (step / steps + epoch) / max_epochs
    return 2.0 / (1.0 + math.exp(-10.0 * p)) - 1.0


class DANN(Method):
    """Domain-adversarial training (Ganin et al. 2016).

    A domain classifier predicts the domain of each embedding through a gradient-reversal
    layer; the loss is the task loss plus ``domain_weight`` x the domain cross-entropy, so
    the classifier learns the domains while the encoder learns to hide them. Domains: the
    labelled items' domain ids (structural shifts: k = 10 property bins) and/or the
    unlabeled target as one domain (GeSS O-Feature level: source vs target;
    ``source_domains=False`` ignores the labelled items' own domain ids so that only source
    vs target is classified).

    Variants (``variant``):

    * ``"ours-v1"`` (default): an MLP domain classifier (``hidden`` units, ReLU), reversal
      coefficient fixed at 1, ``domain_weight`` 1.
    * ``"good"``: GOOD's ``DANN`` (``GOOD/ood_algorithms/algorithms/DANN.py`` with the
      model ``GOOD/networks/models/DANNGCNs.py``): a *linear* domain classifier
      ``nn.Linear(dim_hidden, num_envs)`` on the encoder output (``DANNGCNs.py`` line 36),
      the reversal coefficient ramped by :func:`good_reversal_coefficient` (``alpha`` of
      ``basic_pipeline.py`` lines 108-110, from 0 at epoch 0; full batch, so
      ``p = epoch / max_epochs``), the loss ``CE + ood_param * mean domain CE`` over the
      training nodes (``DANN.py`` lines 61-70), ``domain_weight`` = ``ood_param`` of
      GOODCora/degree/covariate (``configs/GOOD_configs/GOODCora/degree/covariate/
      DANN.yaml``: 0.01). Needs ``TaskSpec.max_epochs`` (the engine sets it).
    * ``"gess"``: GeSS's ``DANN`` (``GESS/algorithms/baselines/dann.py``, ``DANNModel``), the
      O-Feature level: a discriminator ``MLP(H, 256, 256, 1)`` (GeSS ``MLP``: batch norm,
      ReLU, dropout 0.2; ``disc_hidden = 256``) on the pooled embeddings behind a warm-start
      reversal layer (:func:`gess_reversal_coefficient`, ``max_iters = 1000``, one step per
      training step), trained with binary cross-entropy, source = 1, target = 0; loss ``task +
      domain_weight * BCE`` (``domain_weight`` = GeSS ``algo.coeff``, tuned per shift, table 7).
      This is the binary source-vs-target head; with ``source_domains=True`` the head has one
      output per source subgroup plus one for the target and uses cross-entropy (our option,
      not in GeSS). Difference kept: GeSS runs source and target through one forward pass
      (its batch norms see both); our engine encodes the target batch in a second pass.
    """

    name = "dann"
    requires_domains = True

    def __init__(
        self,
        domain_weight: float | None = None,
        hidden: int = 64,
        source_domains: bool = True,
        variant: str = "ours-v1",
        max_iters: int = 1000,
        disc_hidden: int = 256,
    ) -> None:
        super().__init__()
        self.variant = check_variant(variant, ("gess",))
        self.max_iters = int(max_iters)
        self.disc_hidden = int(disc_hidden)
        if self.variant == "gess":  # the warm-start step counter, saved in checkpoints
            self.register_buffer("steps", torch.zeros((), dtype=torch.long))
        self.source_domains = bool(source_domains)
        if domain_weight is None:
            domain_weight = 0.01 if self.variant == "good" else 1.0
        if domain_weight < 0:
            raise ValueError(f"domain_weight must be >= 0, got {domain_weight!r}")
        self.domain_weight = float(domain_weight)
        self.hidden = int(hidden)
        self.reverse = GradientReversal(1.0)
        self.domain_classifier: nn.Module | None = None

    def num_domain_classes(self, spec: TaskSpec) -> int:
        n_src = max(spec.num_domains, 1) if self.source_domains else 1
        return n_src + (1 if spec.has_target else 0)

    def build(self, spec: TaskSpec) -> None:
        if not self.source_domains and not spec.has_target:
            raise ValueError("DANN(source_domains=False) needs unlabeled target items")
        if self.variant == "gess":
            from gs_algos.methods.geometric import gess_mlp

            if not spec.has_target:
                raise ValueError("DANN(variant='gess') is GeSS's O-Feature method and needs "
                                 "unlabeled target items (fit_graph(..., target=...))")
            k = self.num_domain_classes(spec)
            h = self.disc_hidden
            self.domain_classifier = gess_mlp([spec.embedding_dim, h, h, 1 if k == 2 else k])
        elif self.variant == "good":
            if spec.max_epochs is None:
                raise ValueError(
                    "DANN(variant='good') ramps its reversal coefficient over training and "
                    "needs TaskSpec.max_epochs (fit_node / fit_graph set it)"
                )
            self.domain_classifier = nn.Linear(spec.embedding_dim, self.num_domain_classes(spec))
        else:
            self.domain_classifier = nn.Sequential(
                nn.Linear(spec.embedding_dim, self.hidden),
                nn.ReLU(),
                nn.Linear(self.hidden, self.num_domain_classes(spec)),
            )

    def reversal_coefficient(self, epoch: int) -> float:
        """The gradient-reversal coefficient used at ``epoch`` (0-based; ``"gess"``: at the
        current training step)."""
        if self.variant == "gess":
            return gess_reversal_coefficient(int(self.steps), self.max_iters)
        if self.variant == "good":
            return good_reversal_coefficient(epoch, int(self.spec.max_epochs))
        return 1.0

    def training_loss(self, model, batch, epoch):
        emb, out = batch.forward(model)
        task = batch.losses(out).mean()
        e, d = domain_embeddings(
            batch, model, emb, self.spec.num_domains, self.source_domains
        )
        self.reverse.coeff = self.reversal_coefficient(epoch)
        dom_logits = self.domain_classifier(self.reverse(e))
        if self.variant == "gess":
            self.steps += 1  # GeSS's auto_step: one warm-start step per training forward
        if self.variant == "gess" and dom_logits.size(1) == 1:
            # binary source-vs-target head (GeSS): source 1, target 0 (target id is 1 here)
            is_source = (d == 0).float()
            dom_loss = F.binary_cross_entropy_with_logits(dom_logits.view(-1), is_source)
        else:
            dom_loss = F.cross_entropy(dom_logits, d)
        loss = task + self.domain_weight * dom_loss
        return loss, {"loss": float(task.detach()), "domain_loss": float(dom_loss.detach()),
                      "reversal": self.reverse.coeff}


class Mixup(Method):
    """Mixup of node (or graph) representations.

    Variants (``variant``):

    * ``"ours-v1"`` (default), on the last hidden layer (after Wang et al. 2021, *Mixup for
      node and graph classification*): a labelled node ``i`` is paired with a random
      labelled node ``j``; their final hidden representations — each an aggregate of the
      node and its neighbourhood — are mixed, ``h = lam h_i + (1 - lam) h_j``, the model's
      head is applied to ``h`` and the loss is ``lam l(y_i) + (1 - lam) l(y_j)``. Graph
      level: the same on pooled graph embeddings. ``lam ~ Beta(alpha, alpha)`` (``alpha``
      1); each batch is mixed with probability ``prob`` (the hyperparameter GeSS tunes),
      otherwise the plain ERM loss is used.
    * ``"good"`` (node level, GCN-type :class:`gs_models.NodeGNN`): GOOD's ``Mixup``
      (``GOOD/ood_algorithms/algorithms/Mixup.py``) with its two-branch model
      (``GOOD/networks/models/MixupGCNs.py``), Wang et al.'s mixing at every layer. Every
      layer gets a centre-node term: ``conv_l(h_nb, h_c) = A_hat h_nb W_l + h_c W_l^c + b_l``
      (``MixUpGCNConv``, lines 263-270; ``W^c`` the bias-free glorot ``lin_cen``), created
      by :meth:`attach` (:attr:`centre`) and **kept at evaluation**. Training step
      (``MixupGCNs.py`` lines 90-136): every training node ``i`` gets a partner
      ``j = pi(i)``, a random permutation of the training nodes (``shuffleData``, lines
      56-86; other nodes are their own partner); a plain pass ``h^a_{l+1} =
      f_l(conv_l(h^a_l, h^a_l))`` (``f_l`` the model's activation / norm / dropout);
      ``h^b_l = h^a_l[pi]`` propagated over the partners' own neighbourhoods (the relabelled
      graph, so its neighbourhood term is that of ``a`` at ``pi(i)``); the mixed
      representation ``h^m_0 = lam x + (1 - lam) x[pi]``, ``h^m_{l+1} = dropout(lam
      f_l(conv_l(h^a_l, h^m_l)) + (1 - lam) f_l(conv_l^b(h^b_l, h^m_l)))``; logits =
      head(``h^m_L``); loss ``lam CE(y_i) + (1 - lam) CE(y_{pi(i)})`` over the training
      nodes (``Mixup.py`` lines 177-183). ``lam ~ Beta(alpha, alpha)`` each step with
      ``alpha`` = ``ood_param`` of GOODCora/degree/covariate
      (``configs/GOOD_configs/GOODCora/degree/covariate/Mixup.yaml``: 0.4). At evaluation
      GOOD sets ``lam = 1`` and ``pi`` = identity (``Mixup.py`` lines 148-150), i.e. the
      model with the centre terms: :meth:`predict`. GOOD mixes every step (``prob`` 1).
      Each norm sees three train-mode passes per step (plain, branch a, branch b), as in
      GOOD. GOOD's own layer is conv -> batch norm -> ReLU with hidden 300 and dropout 0.5
      (GOOD configs); we keep the model's layers (the paper's appendix F architecture).
    """

    name = "mixup"

    def __init__(self, alpha: float | None = None, prob: float = 1.0,
                 variant: str = "ours-v1") -> None:
        super().__init__()
        self.variant = check_variant(variant)
        if alpha is None:
            alpha = 0.4 if self.variant == "good" else 1.0
        if alpha <= 0:
            raise ValueError(f"alpha must be > 0, got {alpha!r}")
        if not 0 <= prob <= 1:
            raise ValueError(f"prob must be in [0, 1], got {prob!r}")
        self.alpha = float(alpha)
        self.prob = float(prob)
        #: GOOD variant: the centre-node linear map of every message-passing layer
        self.centre: nn.ModuleList | None = None

    def build(self, spec: TaskSpec) -> None:
        if self.variant == "good" and spec.level != "node":
            raise ValueError("Mixup(variant='good') is GOOD's node-level Mixup-GCN; use "
                             "variant='ours-v1' at graph level")

    def attach(self, model: nn.Module) -> None:
        if self.variant != "good" or self.centre is not None:
            return
        layers = _mixup_layers(model)
        self.centre = nn.ModuleList()
        for layer in layers:
            lin = nn.Linear(int(layer.in_channels), int(layer.out_channels), bias=False)
            nn.init.xavier_uniform_(lin.weight)  # GOOD: Linear(..., weight_initializer='glorot')
            self.centre.append(lin)
        p = next(model.parameters(), None)
        if p is not None:
            self.centre.to(device=p.device, dtype=p.dtype)

    def _sample_lam(self, device: torch.device | None = None) -> float:
        """``lam ~ Beta(alpha, alpha)``, drawn on ``device`` (the batch's)."""
        a = torch.tensor(self.alpha, device=device)
        return float(torch.distributions.Beta(a, a).sample())

    def training_loss(self, model, batch, epoch):
        if self.variant == "good":
            return self._good_loss(model, batch)
        emb, out = batch.forward(model)
        if torch.rand((), device=emb.device).item() >= self.prob or batch.num_labeled < 2:
            loss = batch.losses(out).mean()
            return loss, {"loss": float(loss.detach()), "mixed": 0.0}
        lam = self._sample_lam(emb.device)
        perm = torch.randperm(batch.num_labeled, device=emb.device)
        h = emb[batch.labeled]
        mixed = lam * h + (1 - lam) * h[perm]
        logits = head_of(model)(mixed)
        loss = (
            lam * item_losses(logits, batch.y, batch.task)
            + (1 - lam) * item_losses(logits, batch.y[perm], batch.task)
        ).mean()
        return loss, {"loss": float(loss.detach()), "mixed": 1.0, "lam": lam}

    # ------------------------------------------------------------------ GOOD variant
    def _good_loss(self, model, batch):
        if self.centre is None:
            self.attach(model)
        data = batch.data
        n = int(data.num_nodes)
        partner = torch.arange(n, device=data.x.device)
        mix = torch.rand((), device=data.x.device).item() < self.prob and batch.num_labeled >= 2
        lam = self._sample_lam(data.x.device) if mix else 1.0
        if mix:
            lab = batch.labeled.to(partner.device)
            partner[lab] = lab[torch.randperm(lab.numel(), device=lab.device)]
        _, logits = self.mixup_forward(model, data.x, data.edge_index, lam, partner)
        out = logits[batch.labeled]
        pos = torch.full((n,), -1, dtype=torch.long, device=partner.device)
        pos[batch.labeled] = torch.arange(batch.num_labeled, device=partner.device)
        y_b = batch.y[pos[partner[batch.labeled]]]
        loss = (
            lam * item_losses(out, batch.y, batch.task)
            + (1 - lam) * item_losses(out, y_b, batch.task)
        ).mean()
        return loss, {"loss": float(loss.detach()), "mixed": float(mix), "lam": lam}

    def mixup_forward(self, model: nn.Module, x: Tensor, edge_index: Tensor, lam: float,
                      partner: Tensor | None) -> tuple[Tensor, Tensor]:
        """GOOD's two-branch Mixup-GCN pass (see the class docstring): ``(h^m_L, logits)``.

        ``partner`` (``(N,)`` node ids, ``None`` = identity) and ``lam`` as in GOOD's
        training step; ``lam = 1`` with ``partner=None`` is GOOD's evaluation pass, the model
        with its centre terms (one plain pass only: the branches coincide)."""
        if self.centre is None:
            raise RuntimeError("Mixup(variant='good') has no centre terms yet: attach(model) "
                               "first (fit_node does)")
        layers = _mixup_layers(model)
        cfg = model.config
        n = x.size(0)
        graph = model._fast_graph(edge_index, n)
        xf = model._fast_features(x)
        last = len(layers) - 1
        drop = lambda h: F.dropout(h, cfg.dropout, model.training)  # noqa: E731

        def post(i: int, out: Tensor) -> Tensor:
            # the model's own layer order (gs_models NodeGNN.encode)
            if i < last or cfg.last_activation:
                if model._act_first:
                    return model.norms[i](model.act(out))
                return model.act(model.norms[i](out))
            return out

        plain = partner is None and lam == 1.0
        # plain pass (GOOD "pre-run features" h_a), keeping each layer's neighbourhood term
        h_a, nbr = [xf], []
        c0 = _linear_any(self.centre[0], xf)
        for i, layer in enumerate(layers):
            nb = model._conv(layer, h_a[i], graph)
            nbr.append(nb)
            centre = c0 if i == 0 else self.centre[i](h_a[i])
            h_a.append(drop(post(i, nb + centre)))
        if plain:
            h = h_a[-1]
            return h, model.head(h)
        p = partner if partner is not None else torch.arange(n, device=x.device)
        # mixed input: lam x + (1 - lam) x[pi]; its centre term by linearity of W^c_0
        c = lam * c0 + (1 - lam) * c0[p]
        h_m = None
        for i in range(len(layers)):
            if i > 0:
                c = self.centre[i](h_m)
            a = post(i, nbr[i] + c)
            b = post(i, nbr[i][p] + c)
            h_m = drop(lam * a + (1 - lam) * b)
        return h_m, model.head(h_m)

    def predict(self, model, level, data):
        if self.variant != "good":
            return super().predict(model, level, data)
        # GOOD evaluates with lam = 1 and no partner: the model with its centre terms
        return self.mixup_forward(model, data.x, data.edge_index, 1.0, None)


def _mixup_layers(model: nn.Module) -> nn.ModuleList:
    """The message-passing layers of a :class:`gs_models.NodeGNN` that GOOD's Mixup-GCN
    can run (no pre-processing linear, residuals, input dropout or message-passing head)."""
    from gs_models.node import NodeGNN

    if not isinstance(model, NodeGNN):
        raise TypeError(
            f"Mixup(variant='good') runs GOOD's Mixup-GCN on a gs_models NodeGNN, got "
            f"{type(model).__name__}"
        )
    cfg = model.config
    if cfg.model == "mlp" or cfg.pre_linear or cfg.residual or cfg.input_dropout > 0 \
            or getattr(model, "_graph_head", False):
        raise TypeError(
            "Mixup(variant='good') needs a message-passing NodeGNN with a linear head and no "
            "pre-processing linear, residual connections or input dropout (GOOD's Mixup-GCN)"
        )
    return model.layers


def _linear_any(lin: nn.Module, h) -> Tensor:
    """``lin(h)`` for dense ``h`` or gs-models' prepared sparse features."""
    from gs_models.node import apply_linear

    return apply_linear(lin, h)
