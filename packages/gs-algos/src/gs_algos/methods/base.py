"""The common interface of training methods."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor, nn

from gs_algos.batch import Batch, TaskSpec, call_model

__all__ = ["Method", "group_risks", "domain_embeddings"]


class Method(nn.Module):
    """A training method: turns a batch and the model into the loss to minimise.

    A method is an ``nn.Module`` so that it can own extra modules (a domain classifier,
    structure explorers, a rationale scorer); their parameters are optimised together
    with the model's unless :meth:`optimizer_parameters` says otherwise, and they are
    saved in checkpoints (``state_dict`` plus :meth:`extra_checkpoint_state`).

    Subclasses set the class attributes and implement :meth:`training_loss`; they may
    override :meth:`build` (create modules once the task is known), :meth:`predict`
    (how the trained model predicts, e.g. through a rationale), :meth:`on_epoch_end`.

    Attributes
    ----------
    name
        Short identifier (the key in :data:`gs_algos.methods.METHODS`).
    requires_domains
        Needs domain ids on the labelled items (or unlabeled target items).
    levels, tasks
        Where the method applies.
    """

    name: str = "method"
    requires_domains: bool = False
    levels: tuple[str, ...] = ("node", "graph")
    tasks: tuple[str, ...] = ("multiclass", "binary", "regression")

    def __init__(self) -> None:
        super().__init__()
        self.spec: TaskSpec | None = None

    # ----------------------------------------------------------------- set-up
    def setup(self, spec: TaskSpec) -> None:
        """Check that the method applies to ``spec`` and build its modules."""
        if spec.level not in self.levels:
            raise ValueError(
                f"method {self.name!r} works at level(s) {self.levels}, got level {spec.level!r}"
            )
        if spec.task not in self.tasks:
            raise ValueError(
                f"method {self.name!r} supports task(s) {self.tasks}, got task {spec.task!r}"
            )
        if self.requires_domains and spec.num_domains < 2 and not spec.has_target:
            raise ValueError(
                f"method {self.name!r} needs domains: give domain ids with at least 2 distinct "
                "values on the training items (e.g. data.domain, the k=10 discretised "
                "property bins) or unlabeled target items; got "
                f"{spec.num_domains} domain(s) and no target"
            )
        self.spec = spec
        self.build(spec)

    def build(self, spec: TaskSpec) -> None:
        """Create the method's own modules (default: none)."""

    def attach(self, model: nn.Module) -> None:
        """Called by the engine once after :meth:`setup`, with the model to be trained and
        before the optimiser is built: a method may create modules whose shapes depend on
        the model (GOOD's Mixup: a centre-node linear map per layer) or mark parts of the
        model as not trained (GOOD's EERM: the head). Default: nothing."""

    # ----------------------------------------------------------------- training
    def training_loss(self, model: nn.Module, batch: Batch, epoch: int) -> tuple[Tensor, dict]:
        """The scalar loss for one step and a dict of float logs."""
        raise NotImplementedError

    def optimizer_parameters(self) -> list[nn.Parameter]:
        """The method's parameters optimised by the main optimiser (default: all)."""
        return list(self.parameters())

    def on_epoch_end(self, epoch: int) -> None:
        """Hook called after every training epoch."""

    def predict(self, model: nn.Module, level: str, data: Any):
        """``(embeddings, outputs)`` used for evaluation (default: the plain model)."""
        return call_model(model, level, data)

    def evaluation_losses(
        self, model: nn.Module, level: str, data: Any, parts: dict[str, Tensor], y: Tensor
    ) -> dict[str, float]:
        """``{part: loss}`` replacing the cross-entropy of :meth:`predict`'s outputs as the
        ``"loss"`` selection metric (node level; default: none, keep the cross-entropy)."""
        return {}

    def extra_checkpoint_state(self) -> dict:
        """State outside ``state_dict`` that a checkpoint must hold (e.g. an optimiser)."""
        return {}

    def load_extra_checkpoint_state(self, state: dict) -> None:
        """Restore what :meth:`extra_checkpoint_state` returned."""


def group_risks(losses: Tensor, groups: Tensor) -> tuple[Tensor, Tensor]:
    """Mean loss of every group present, with the gradient kept.

    Parameters
    ----------
    losses
        Per-item losses, shape ``(n,)``.
    groups
        Group (domain) id of each item, shape ``(n,)``, non-negative integers.

    Returns
    -------
    risks, ids
        ``risks[k]`` is the mean loss of the items of group ``ids[k]``; only groups
        with at least one item appear. Built with ``index_add`` (never with
        ``torch.tensor(list_of_tensors)``, which would drop the gradient).
    """
    if losses.shape != groups.shape:
        raise ValueError(
            f"losses and groups must have the same shape, got {tuple(losses.shape)} and "
            f"{tuple(groups.shape)}"
        )
    groups = groups.long()
    n_groups = int(groups.max().item()) + 1 if groups.numel() else 0
    sums = torch.zeros(n_groups, dtype=losses.dtype, device=losses.device).index_add(
        0, groups, losses
    )
    counts = torch.bincount(groups, minlength=n_groups).to(losses.dtype)
    ids = torch.nonzero(counts > 0).flatten()
    return sums[ids] / counts[ids], ids


def domain_embeddings(
    batch: Batch,
    model: nn.Module,
    emb: Tensor,
    num_source_domains: int,
    source_domains: bool = True,
) -> tuple[Tensor, Tensor]:
    """Embeddings and domain ids of every item that has a domain.

    Labelled items carry ``batch.domain`` (or domain 0 when none is given or when
    ``source_domains`` is false, i.e. plain source-vs-target as in GeSS O-Feature);
    unlabeled target items get the id ``max(num_source_domains, 1)``.
    """
    parts, ids = [], []
    src = emb[batch.labeled]
    if batch.domain is not None and source_domains:
        dom = batch.domain.long()
    else:
        dom = torch.zeros(src.size(0), dtype=torch.long, device=src.device)
    parts.append(src)
    ids.append(dom)
    tgt = batch.forward_target(model, emb)
    if tgt is not None and tgt.size(0) > 0:
        n_src = max(int(num_source_domains), 1) if source_domains else 1
        parts.append(tgt)
        ids.append(torch.full((tgt.size(0),), n_src, dtype=torch.long, device=tgt.device))
    return torch.cat(parts), torch.cat(ids)
