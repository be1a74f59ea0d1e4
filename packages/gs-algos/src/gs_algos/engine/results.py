"""What a training run returns (:class:`FitResult`, :class:`Track`, :class:`EpochInfo`), the
selection metrics of outputs (:func:`evaluate_outputs`) and :func:`seeded` model building."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from gs_algos.batch import item_losses
from gs_metrics import auroc, available_metrics, get_metric

__all__ = ["EpochInfo", "FitResult", "Track", "evaluate_outputs", "seeded"]

@dataclass
class Track:
    """The best epoch seen on one selection part.

    Attributes
    ----------
    part
        The validation part this track selects on.
    epoch
        Best epoch (0-based); -1 before the first evaluation.
    value
        The selection metric on ``part`` at that epoch.
    metrics
        ``{part: {metric: value}}`` for every evaluated part at that epoch.
    state
        The model's ``state_dict`` (CPU copy) at that epoch.
    bests
        ``stopping="acc_or_nll"`` only: the best validation ``accuracy`` and ``loss`` seen so
        far (each updated on its own, not necessarily at ``epoch``).
    """

    part: str
    epoch: int = -1
    value: float = math.nan
    metrics: dict = field(default_factory=dict)
    state: dict | None = None
    method_state: dict | None = None
    bests: dict = field(default_factory=dict)


@dataclass
class EpochInfo:
    """What the per-epoch callback receives."""

    epoch: int
    max_epochs: int
    train_loss: float
    logs: dict
    metrics: dict
    improved: dict


@dataclass
class FitResult:
    """Outcome of a training run.

    Attributes
    ----------
    tracks
        One :class:`Track` per selection part, in ``config.select_on`` order.
    history
        One dict per epoch: ``epoch``, ``train_loss``, method logs and, on evaluated
        epochs, ``metrics`` (``{part: {metric: value}}``).
    epochs_run
        Number of epochs trained in total (including those before a resume).
    stopped_early
        Whether early stopping ended the run.
    """

    tracks: dict[str, Track]
    history: list[dict]
    epochs_run: int
    stopped_early: bool

    @property
    def best(self) -> Track:
        """The first (primary) selection track."""
        return next(iter(self.tracks.values()))


def seeded(factory: Callable[[], nn.Module], seed: int) -> nn.Module:
    """Build a module with a fixed seed without touching the caller's global RNG."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        return factory()


def evaluate_outputs(out: Tensor, y: Tensor, task: str) -> dict[str, float]:
    """Selection metrics of outputs ``out`` against labels ``y``.

    multiclass: ``accuracy``, ``loss`` (mean cross-entropy); binary: ``accuracy``
    (threshold 0 on the logit), ``auroc`` (:func:`gs_metrics.auroc`), ``loss``; regression: ``mae``, ``loss`` (MSE);
    plus every metric registered in gs-metrics for the task (:func:`gs_metrics.register_metric`).
    """
    if y.numel() == 0:
        return {}
    res = {"loss": float(item_losses(out, y, task).mean())}
    if task == "multiclass":
        res["accuracy"] = float((out.argmax(-1) == y.long()).float().mean())
    elif task == "binary":
        o = out.reshape(-1)
        res["accuracy"] = float(((o > 0).long() == y.reshape(-1).long()).float().mean())
        res["auroc"] = auroc(o.detach().double().cpu().numpy(), y.reshape(-1).cpu().numpy())
    else:
        res["mae"] = float((out.reshape(-1) - y.reshape(-1).float()).abs().mean())
    # metrics registered in gs-metrics (gs_metrics.register_metric) beyond the built-ins above
    extra = [m for m in available_metrics(task) if m not in res]
    if extra:
        o = out.detach().cpu().numpy()
        t = y.detach().cpu().numpy()
        for name in extra:
            res[name] = get_metric(name)(o, t)
    return res

