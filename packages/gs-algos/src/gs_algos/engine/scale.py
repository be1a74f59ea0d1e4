"""Standardised regression targets (:attr:`TrainConfig.standardize_targets`): the training
part's :class:`TargetScale` and its folding into the model's last linear layer after a run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from gs_algos.engine.results import FitResult

__all__ = ["TargetScale", "fold_target_scale"]


@dataclass(frozen=True)
class TargetScale:
    """Standardisation of regression targets (:attr:`TrainConfig.standardize_targets`):
    ``mean`` and ``std`` of the training part's targets; the model trains on
    :meth:`to_model` values and its outputs are read back with :meth:`to_targets`."""

    mean: float
    std: float

    def to_model(self, y: Tensor) -> Tensor:
        """``(y - mean) / std``: the values the model is trained to output."""
        return (y - self.mean) / self.std

    def to_targets(self, out: Tensor) -> Tensor:
        """``out * std + mean``: outputs in the targets' units (the inverse of :meth:`to_model`)."""
        return out * self.std + self.mean

    @classmethod
    def of(cls, y: Tensor) -> TargetScale:
        """Mean and standard deviation (``n - 1``) of ``y``; a std of 0 (constant targets) or
        of a single target is taken as 1, so the map is then a shift."""
        yf = y.detach().reshape(-1).double()
        if yf.numel() == 0 or not bool(torch.isfinite(yf).all()):
            raise ValueError("standardize_targets needs finite training targets")
        std = float(yf.std()) if yf.numel() > 1 else 0.0
        return cls(float(yf.mean()), std if std > 0 else 1.0)


def _output_layer(model: nn.Module) -> tuple[str, nn.Linear]:
    """The qualified name and module of the last ``nn.Linear`` of ``model``'s task head
    (:func:`gs_algos.batch.head_of`), which must have one output and a bias."""
    from gs_algos.batch import head_of

    head = head_of(model)
    linears = [m for m in head.modules() if isinstance(m, nn.Linear)]
    last = linears[-1] if linears else None
    if last is None or last.out_features != 1 or last.bias is None:
        what = "none" if last is None else (
            f"one with {last.out_features} outputs" if last.out_features != 1 else "one without bias")
        raise TypeError(
            f"standardize_targets needs the head of {type(model).__name__} to end in an nn.Linear "
            f"with one output and a bias (the standardisation is folded into it), found {what}"
        )
    name = next(n for n, m in model.named_modules() if m is last)
    return name, last


def fold_target_scale(model: nn.Module, scale: TargetScale,
                      states: Sequence[dict[str, Tensor]] = ()) -> None:
    """Fold ``scale`` into the last linear layer of ``model``'s head (weights times ``std``,
    bias times ``std`` plus ``mean``), so the model outputs ``scale.to_targets`` of what it
    output before; the same for each state dict in ``states`` (kept weights of the tracks)."""
    name, last = _output_layer(model)
    with torch.no_grad():
        last.weight.mul_(scale.std)
        last.bias.mul_(scale.std).add_(scale.mean)
    for st in states:
        st[f"{name}.weight"] = st[f"{name}.weight"] * scale.std
        st[f"{name}.bias"] = st[f"{name}.bias"] * scale.std + scale.mean


def _fold_result(model: nn.Module, scale: TargetScale | None, res: FitResult) -> FitResult:
    """After a standardised run: the model and every track's kept weights predict in the
    targets' units."""
    if scale is not None:
        fold_target_scale(model, scale, [tr.state for tr in res.tracks.values() if tr.state is not None])
    return res
