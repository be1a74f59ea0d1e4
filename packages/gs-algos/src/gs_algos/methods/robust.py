"""OOD-robustness methods that work at node and graph level.

ERM, IRM, VREx, GroupDRO (group/domain based), DeepCORAL and DANN (domain alignment,
with source domains and/or unlabeled target items) and Mixup (on representations).
"""

from __future__ import annotations

import itertools

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from gs_algos.batch import Batch, TaskSpec, head_of, item_losses
from gs_algos.methods.base import Method, domain_embeddings, group_risks

__all__ = [
    "ERM",
    "IRM",
    "VREx",
    "GroupDRO",
    "DeepCoral",
    "DANN",
    "Mixup",
    "coral_distance",
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
    ``penalty_weight`` x their variance."""

    name = "vrex"
    requires_domains = True

    def __init__(self, penalty_weight: float = 1.0) -> None:
        super().__init__()
        if penalty_weight < 0:
            raise ValueError(f"penalty_weight must be >= 0, got {penalty_weight!r}")
        self.penalty_weight = float(penalty_weight)

    def training_loss(self, model, batch, epoch):
        dom = _need_domain(batch, self.name)
        _, out = batch.forward(model)
        risks, _ = group_risks(batch.losses(out), dom)
        var = risks.var(unbiased=False) if risks.numel() > 1 else risks.sum() * 0
        loss = risks.mean() + self.penalty_weight * var
        return loss, {"loss": float(risks.mean().detach()), "variance": float(var.detach())}


class GroupDRO(Method):
    """Group DRO with the online exponentiated-gradient weights of Sagawa et al. (2020,
    algorithm 1): ``q_g <- q_g * exp(step_size * risk_g)``, renormalised, and the
    optimised loss is ``sum_g q_g risk_g``. ``step_size`` is the exponent (GeSS table 7)."""

    name = "groupdro"
    requires_domains = True

    def __init__(self, step_size: float = 0.01) -> None:
        super().__init__()
        if step_size < 0:
            raise ValueError(f"step_size must be >= 0, got {step_size!r}")
        self.step_size = float(step_size)
        self.register_buffer("q", torch.ones(0))

    def build(self, spec: TaskSpec) -> None:
        n = max(spec.num_domains, 1)
        self.q = torch.full((n,), 1.0 / n)

    def training_loss(self, model, batch, epoch):
        dom = _need_domain(batch, self.name)
        _, out = batch.forward(model)
        risks, ids = group_risks(batch.losses(out), dom)
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


def coral_distance(a: Tensor, b: Tensor) -> Tensor:
    """CORAL loss of Sun & Saenko (2016, eq. 1): ``||C_a - C_b||_F^2 / (4 d^2)``.

    ``C`` is the unbiased feature covariance of the rows of ``a`` (``b``), ``d`` the
    feature dimension. Differentiable in both inputs.
    """
    if a.dim() != 2 or b.dim() != 2 or a.size(1) != b.size(1):
        raise ValueError(
            f"coral_distance needs two 2-d tensors of equal width, got {tuple(a.shape)} "
            f"and {tuple(b.shape)}"
        )
    if a.size(0) < 2 or b.size(0) < 2:
        raise ValueError("coral_distance needs at least 2 rows in each input")
    d = a.size(1)

    def cov(z: Tensor) -> Tensor:
        zc = z - z.mean(0, keepdim=True)
        return zc.t() @ zc / (z.size(0) - 1)

    return (cov(a) - cov(b)).pow(2).sum() / (4 * d * d)


class DeepCoral(Method):
    """Deep CORAL (Sun & Saenko 2016): task loss + ``penalty_weight`` x the mean CORAL
    distance between the embeddings of every pair of domains present in the batch
    (source domains, and the unlabeled target as one more domain). With
    ``source_domains=False`` all labelled items form one source domain (source vs target,
    the GeSS O-Feature setting)."""

    name = "coral"
    requires_domains = True

    def __init__(self, penalty_weight: float = 1.0, source_domains: bool = True) -> None:
        super().__init__()
        if penalty_weight < 0:
            raise ValueError(f"penalty_weight must be >= 0, got {penalty_weight!r}")
        self.penalty_weight = float(penalty_weight)
        self.source_domains = bool(source_domains)

    def build(self, spec: TaskSpec) -> None:
        if not self.source_domains and not spec.has_target:
            raise ValueError("DeepCoral(source_domains=False) needs unlabeled target items")

    def penalty(self, emb: Tensor, dom: Tensor) -> Tensor:
        """Mean pairwise CORAL distance between domains with at least 2 items."""
        present = [d for d in torch.unique(dom).tolist() if int((dom == d).sum()) >= 2]
        terms = [
            coral_distance(emb[dom == i], emb[dom == j])
            for i, j in itertools.combinations(present, 2)
        ]
        if not terms:
            return emb.sum() * 0
        return torch.stack(terms).mean()

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


class DANN(Method):
    """Domain-adversarial training (Ganin et al. 2016).

    A domain classifier (MLP, ``hidden`` units) predicts the domain of each embedding
    through a gradient-reversal layer; the loss is the task loss plus
    ``domain_weight`` x the domain cross-entropy, so the classifier learns the domains
    while the encoder learns to hide them. Domains: the labelled items' domain ids
    (structural shifts: k = 10 property bins) and/or the unlabeled target as one domain
    (GeSS O-Feature level: source vs target; ``source_domains=False`` ignores the
    labelled items' own domain ids so that only source vs target is classified).
    """

    name = "dann"
    requires_domains = True

    def __init__(
        self, domain_weight: float = 1.0, hidden: int = 64, source_domains: bool = True
    ) -> None:
        super().__init__()
        self.source_domains = bool(source_domains)
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
        self.domain_classifier = nn.Sequential(
            nn.Linear(spec.embedding_dim, self.hidden),
            nn.ReLU(),
            nn.Linear(self.hidden, self.num_domain_classes(spec)),
        )

    def training_loss(self, model, batch, epoch):
        emb, out = batch.forward(model)
        task = batch.losses(out).mean()
        e, d = domain_embeddings(
            batch, model, emb, self.spec.num_domains, self.source_domains
        )
        dom_logits = self.domain_classifier(self.reverse(e))
        dom_loss = F.cross_entropy(dom_logits, d)
        loss = task + self.domain_weight * dom_loss
        return loss, {"loss": float(task.detach()), "domain_loss": float(dom_loss.detach())}


class Mixup(Method):
    """Mixup on hidden representations.

    Node level (after Wang et al. 2021, *Mixup for node and graph classification*): a
    labelled node ``i`` is paired with a random labelled node ``j``; their final hidden
    representations — each an aggregate of the node and its neighbourhood — are mixed,
    ``h = lam h_i + (1 - lam) h_j``, the model's head is applied to ``h`` and the loss is
    ``lam l(y_i) + (1 - lam) l(y_j)``. Graph level: the same on pooled graph embeddings.
    ``lam ~ Beta(alpha, alpha)``; each batch is mixed with probability ``prob`` (the
    hyperparameter GeSS tunes), otherwise the plain ERM loss is used.

    Simplification: Wang et al. mix at every layer inside a two-branch GNN; through the
    gs-models contract we only reach the last hidden layer (the head's input).
    """

    name = "mixup"

    def __init__(self, alpha: float = 1.0, prob: float = 1.0) -> None:
        super().__init__()
        if alpha <= 0:
            raise ValueError(f"alpha must be > 0, got {alpha!r}")
        if not 0 <= prob <= 1:
            raise ValueError(f"prob must be in [0, 1], got {prob!r}")
        self.alpha = float(alpha)
        self.prob = float(prob)

    def training_loss(self, model, batch, epoch):
        emb, out = batch.forward(model)
        if torch.rand(()).item() >= self.prob or batch.num_labeled < 2:
            loss = batch.losses(out).mean()
            return loss, {"loss": float(loss.detach()), "mixed": 0.0}
        lam = float(
            torch.distributions.Beta(torch.tensor(self.alpha), torch.tensor(self.alpha)).sample()
        )
        perm = torch.randperm(batch.num_labeled, device=emb.device)
        h = emb[batch.labeled]
        mixed = lam * h + (1 - lam) * h[perm]
        logits = head_of(model)(mixed)
        loss = (
            lam * item_losses(logits, batch.y, batch.task)
            + (1 - lam) * item_losses(logits, batch.y[perm], batch.task)
        ).mean()
        return loss, {"loss": float(loss.detach()), "mixed": 1.0, "lam": lam}
