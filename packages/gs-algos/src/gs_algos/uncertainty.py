"""Uncertainty estimation methods (structural-shifts section 2.2).

* SE — softmax entropy of one model (:func:`softmax_entropy`).
* MC dropout — ``T`` stochastic passes with dropout active, batch norm frozen
  (:func:`mc_dropout_probs`).
* Deep Ensemble — members trained from different seeds (:func:`train_ensemble`) and
  the total / data / knowledge decomposition of their predictions
  (:func:`ensemble_uncertainties`).
* Dirichlet methods (GPN, NatPN) trained with the Bayesian loss
  (:class:`BayesianLoss`), their measures (:func:`dirichlet_uncertainties`), and GPE /
  NatPE as the Bayesian combination of several of them (:func:`bayesian_combination`).
* Post-hoc temperature scaling fitted on the validation part
  (:class:`TemperatureScaling`).

All uncertainties follow "higher = more uncertain", so they can be used directly as
OOD-detection scores (positive class = OOD).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

import gs_metrics
from gs_algos.batch import call_model
from gs_algos.device import data_to, fork_rng_of, module_device
from gs_algos.methods.base import Method

__all__ = [
    "softmax_entropy",
    "entropy",
    "ensemble_uncertainties",
    "mc_dropout_probs",
    "train_ensemble",
    "ensemble_probs",
    "uce_loss",
    "dirichlet_entropy",
    "dirichlet_uncertainties",
    "BayesianLoss",
    "bayesian_combination",
    "dirichlet_alpha",
    "TemperatureScaling",
]

def _from_numpy(values, like: Tensor) -> Tensor:
    """A gs-metrics result (numpy) as a tensor of ``like``'s dtype on ``like``'s device
    (``from_numpy``: a CPU tensor whatever the default device, then moved)."""
    return torch.from_numpy(np.ascontiguousarray(values)).to(device=like.device, dtype=like.dtype)


# The measures themselves are gs-metrics' (one implementation, issue 20); these functions
# convert at the boundary (tensor -> numpy -> tensor of the input's dtype and device). They
# are scores of finished predictions: no gradient flows through them.
def entropy(probs: Tensor, dim: int = -1) -> Tensor:
    """Shannon entropy ``-sum p log p`` (natural log, ``0 log 0 = 0``) along ``dim``:
    :func:`gs_metrics.entropy` on a tensor (no gradient), in ``probs``' dtype. ``probs`` must be
    probabilities along ``dim`` (logits raise a ValueError); a half-precision tensor is read as
    float32 with its own rounding as the tolerance (its rows sum to 1 within ``eps`` only:
    each ``p_l`` is off by at most ``p_l * eps / 2``)."""
    atol = 1e-4
    if probs.dtype in (torch.float16, torch.bfloat16):
        atol = max(atol, torch.finfo(probs.dtype).eps)
        return _from_numpy(gs_metrics.entropy(probs.float(), axis=dim, atol=atol), probs)
    return _from_numpy(gs_metrics.entropy(probs, axis=dim), probs)


def softmax_entropy(logits: Tensor) -> Tensor:
    """SE: entropy of ``softmax(logits)`` per row (structural-shifts section 4)."""
    return entropy(torch.softmax(logits, -1))


def ensemble_uncertainties(member_probs: Tensor) -> dict[str, Tensor]:
    """Total / data / knowledge uncertainty of an ensemble (Malinin & Gales 2018, eq. 8):
    :func:`gs_metrics.ensemble_uncertainty` on a tensor, as a dict of tensors.

    ``member_probs`` has shape ``(M, N, C)``. ``total = H(mean_m p_m)``,
    ``data = mean_m H(p_m)`` (expected entropy) and ``knowledge = total - data`` (the
    mutual information between prediction and model, >= 0). Computed in float64 (the
    knowledge term can be as small as 1e-6 when the members agree, below float32's
    resolution) and returned in the input's dtype.
    """
    if member_probs.dim() != 3:
        raise ValueError(
            f"member_probs must have shape (members, items, classes), got {tuple(member_probs.shape)}"
        )
    u = gs_metrics.ensemble_uncertainty(member_probs)
    return {k: _from_numpy(getattr(u, k), member_probs) for k in ("total", "data", "knowledge")}


def _set_dropout_only(model: nn.Module) -> None:
    model.train()
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.eval()


def mc_dropout_probs(
    model: nn.Module, data: Any, num_samples: int = 20, seed: int = 0, level: str = "node"
) -> Tensor:
    """MC dropout (Gal & Ghahramani 2016): ``num_samples`` passes with dropout active.

    Batch-norm layers stay in eval mode (running statistics are neither used for the
    batch nor updated). Returns member probabilities ``(num_samples, N, C)`` on the
    model's device (``data`` is moved there); the caller's global RNG is not touched.
    """
    if num_samples < 2:
        raise ValueError(f"num_samples must be >= 2, got {num_samples}")
    was_training = model.training
    dev = module_device(model)
    data = data_to(data, dev)
    out = []
    with fork_rng_of(dev), torch.no_grad():
        torch.manual_seed(int(seed))
        _set_dropout_only(model)
        for _ in range(num_samples):
            _, logits = call_model(model, level, data)
            out.append(torch.softmax(logits, -1))
    model.train(was_training)
    if not was_training:
        model.eval()
    return torch.stack(out)


def train_ensemble(
    build: Callable[[int], nn.Module],
    fit: Callable[[nn.Module, int], Any],
    num_members: int = 5,
    seed: int = 0,
) -> tuple[list[nn.Module], list[Any]]:
    """Deep Ensemble (Lakshminarayanan et al. 2017): ``num_members`` models, member ``m``
    built and trained with seed ``seed + m``.

    Parameters
    ----------
    build
        ``build(seed) -> model``; use :func:`gs_algos.engine.seeded` inside to draw the
        initialisation from the seed.
    fit
        ``fit(model, seed) -> result`` trains the model in place (e.g. a lambda calling
        :func:`gs_algos.engine.fit_node` with ``config.replace(seed=seed)``).
    """
    if num_members < 2:
        raise ValueError(f"an ensemble needs num_members >= 2, got {num_members}")
    models, results = [], []
    for m in range(num_members):
        model = build(seed + m)
        results.append(fit(model, seed + m))
        models.append(model)
    return models, results


def ensemble_probs(models: Sequence[nn.Module], data: Any, level: str = "node") -> Tensor:
    """Member probabilities ``(M, N, C)`` of trained models in eval mode, each computed on
    its member's device and gathered on the first member's."""
    out = []
    with torch.no_grad():
        for m in models:
            m.eval()
            _, logits = call_model(m, level, data_to(data, module_device(m)))
            out.append(torch.softmax(logits, -1))
    return torch.stack([o.to(out[0].device) for o in out])


# --------------------------------------------------------------------------- Dirichlet
def uce_loss(alpha: Tensor, y: Tensor) -> Tensor:
    """Uncertainty-aware cross-entropy, per item: ``E_{p ~ Dir(alpha)}[-log p_y] =
    digamma(alpha_0) - digamma(alpha_y)`` (Charpentier et al. 2020, eq. 3; the Bayesian
    loss of NatPN, Charpentier et al. 2022, eq. 6, for the categorical likelihood)."""
    a0 = alpha.sum(-1)
    return torch.digamma(a0) - torch.digamma(alpha.gather(-1, y.long().view(-1, 1)).squeeze(-1))


def dirichlet_entropy(alpha: Tensor) -> Tensor:
    """Differential entropy of ``Dir(alpha)`` per row:
    ``log B(alpha) + (alpha_0 - C) psi(alpha_0) - sum_c (alpha_c - 1) psi(alpha_c)``."""
    a0 = alpha.sum(-1)
    c = alpha.size(-1)
    log_b = torch.lgamma(alpha).sum(-1) - torch.lgamma(a0)
    return log_b + (a0 - c) * torch.digamma(a0) - ((alpha - 1) * torch.digamma(alpha)).sum(-1)


def dirichlet_uncertainties(alpha: Tensor) -> dict[str, Tensor]:
    """Measures of a Dirichlet prediction (Malinin & Gales 2018, section 3):
    :func:`gs_metrics.dirichlet_uncertainty` on a tensor, as a dict of tensors.

    ``total``: entropy of the expected categorical ``alpha / alpha_0``; ``data``: expected
    entropy ``sum_c (alpha_c / alpha_0) (psi(alpha_0 + 1) - psi(alpha_c + 1))``;
    ``knowledge``: their difference (mutual information, evaluated without cancellation for
    large ``alpha_0``); ``evidence``: ``-alpha_0`` (less evidence = more uncertain, the GPN /
    NatPN OOD score).
    """
    u = gs_metrics.dirichlet_uncertainty(alpha)
    out = {"total": u.total, "data": u.expected_entropy, "knowledge": u.mutual_information,
           "evidence": -u.alpha0}
    return {k: _from_numpy(v, alpha) for k, v in out.items()}


class BayesianLoss(Method):
    """Training method for Dirichlet models (GPN, NatPN, evidential heads): the Bayesian
    loss ``UCE(alpha, y) - entropy_weight * H(Dir(alpha))`` averaged over the labelled
    items (NatPN eq. 6; GPN eq. 6). The model returns ``(embeddings, alpha)``.

    If the model has ``set_class_counts`` (GPN's ``N_c``) it is given the training
    labels. Evaluation outputs are ``log(alpha / alpha_0)`` (log-probabilities, usable
    as logits for accuracy and NLL). ``entropy_weight`` default 1e-5 (PostNet / NatPN).
    """

    name = "bayesian"
    tasks = ("multiclass",)

    def __init__(self, entropy_weight: float = 1e-5) -> None:
        super().__init__()
        if entropy_weight < 0:
            raise ValueError(f"entropy_weight must be >= 0, got {entropy_weight!r}")
        self.entropy_weight = float(entropy_weight)

    def training_loss(self, model, batch, epoch):
        if hasattr(model, "set_class_counts"):
            model.set_class_counts(batch.y)
        _, alpha = batch.forward(model)
        if bool((alpha <= 0).any()):
            raise ValueError("a Dirichlet model must output alpha > 0")
        a = alpha[batch.labeled]
        uce = uce_loss(a, batch.y).mean()
        ent = dirichlet_entropy(a).mean()
        loss = uce - self.entropy_weight * ent
        return loss, {"loss": float(uce.detach()), "entropy": float(ent.detach())}

    def predict(self, model, level, data):
        emb, alpha = call_model(model, level, data)
        return emb, torch.log(alpha / alpha.sum(-1, keepdim=True))

    def evaluation_losses(self, model, level, data, parts, y):
        """The Bayesian loss on each part: what the structural-shifts authors monitor on
        Valid-In for their Dirichlet models (``DirichletBayesianLoss`` in
        ``source/layers/loss.py``, logged by ``BaseLightningModule.log_loss``)."""
        _, alpha = call_model(model, level, data)
        out = {}
        for p, mask in parts.items():
            if int(mask.sum()) == 0:
                continue
            a = alpha[mask]
            loss = uce_loss(a, y[mask]).mean() - self.entropy_weight * dirichlet_entropy(a).mean()
            out[p] = float(loss)
        return out


def dirichlet_alpha(model: nn.Module, data: Any, level: str = "node") -> Tensor:
    """``alpha`` of a Dirichlet model in eval mode, without gradients, on the model's device."""
    model.eval()
    with torch.no_grad():
        return call_model(model, level, data_to(data, module_device(model)))[1]


def bayesian_combination(alphas: Sequence[Tensor], prior: float = 1.0) -> Tensor:
    """GPE / NatPE: Bayesian combination of Dirichlet posteriors (Charpentier et al. 2022,
    section 3.4): the members' evidences add up, ``alpha = prior + sum_m (alpha_m - prior)``.
    """
    if len(alphas) == 0:
        raise ValueError("bayesian_combination needs at least one alpha")
    stack = torch.stack(list(alphas))
    return prior + (stack - prior).sum(0)


# --------------------------------------------------------------------------- temperature
class TemperatureScaling(nn.Module):
    """Post-hoc temperature scaling (Guo et al. 2017, section 4.2): ``softmax(z / T)``
    with the scalar ``T > 0`` minimising the NLL on a validation part."""

    def __init__(self) -> None:
        super().__init__()
        self.log_t = nn.Parameter(torch.zeros(()))

    @property
    def temperature(self) -> float:
        return float(self.log_t.detach().exp())

    def fit(self, logits: Tensor, y: Tensor, max_iter: int = 200) -> TemperatureScaling:
        """Fit ``T`` on validation ``logits`` (N, C) and labels ``y`` (N,) with L-BFGS."""
        if logits.dim() != 2 or y.shape != (logits.size(0),):
            raise ValueError(
                f"logits must be (N, C) and y (N,), got {tuple(logits.shape)} and {tuple(y.shape)}"
            )
        if logits.size(0) == 0:
            raise ValueError("temperature scaling needs a non-empty validation part")
        logits, y = logits.detach().double(), y.long()
        with torch.no_grad():
            self.log_t.zero_()
        log_t = self.log_t.detach().double().clone().requires_grad_(True)
        opt = torch.optim.LBFGS([log_t], lr=0.1, max_iter=max_iter, line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = nn.functional.cross_entropy(logits / log_t.exp(), y)
            loss.backward()
            return loss

        opt.step(closure)
        with torch.no_grad():
            self.log_t.copy_(log_t.detach().float())
        return self

    def forward(self, logits: Tensor) -> Tensor:
        """Scaled logits ``logits / T``."""
        return logits / self.log_t.exp()
