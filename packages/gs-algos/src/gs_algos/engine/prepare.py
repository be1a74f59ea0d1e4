"""The one set-up of a training run, shared by :func:`~gs_algos.engine.fit_node` and
:func:`~gs_algos.engine.fit_graph`: each of them checks its inputs and builds a :class:`Level`
(what differs between node and graph level: the probe forward pass, the task's shape, an
epoch's batches and the evaluation); :func:`train_level` then runs the common part, in the
forked RNG and on the training device: the probe, the output check, :meth:`Method.setup`,
the epoch loop and the folding of standardised targets."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, TypedDict

import torch
from torch import Tensor, nn

from gs_algos.batch import Batch, TaskSpec
from gs_algos.config import TrainConfig
from gs_algos.device import fork_rng_of, module_device
from gs_algos.engine.loop import _Loop, batch_norm_updates
from gs_algos.engine.results import EpochInfo, FitResult
from gs_algos.engine.scale import TargetScale, _fold_result
from gs_algos.methods.base import Method

log = logging.getLogger(__name__)


class RunOptions(TypedDict, total=False):
    """The keyword options that :func:`~gs_algos.engine.fit_node` and
    :func:`~gs_algos.engine.fit_graph` share (``**run``).

    ``callback``: called after every epoch with an :class:`EpochInfo`; returning ``False``
    stops. ``checkpoint_dir``, ``checkpoint_every`` (default 1), ``resume`` (default
    ``False``): write ``checkpoint_dir/last.pt`` atomically every ``checkpoint_every`` epochs;
    with ``resume=True`` an existing checkpoint is continued exactly.
    """

    callback: Callable[[EpochInfo], Any] | None
    checkpoint_dir: str | Path | None
    checkpoint_every: int
    resume: bool


class Level(Protocol):
    """What :func:`train_level` needs of one level's prepared inputs."""

    level: str  # "node" or "graph"
    what: str  # the labels the output width is checked against, for the error message
    num_classes: int | None
    scale: TargetScale | None

    def probe(self, model: nn.Module) -> tuple[Tensor, Tensor]:
        """``(embeddings, outputs)`` of one forward pass (eval mode, no gradients), before
        training: the output check and the :class:`TaskSpec` read them."""

    def train_domains(self) -> Tensor | None:
        """The domain id of every training item (``None``: no domains)."""

    def spec_fields(self) -> dict[str, Any]:
        """The level's :class:`TaskSpec` fields beyond the task, the output and embedding
        widths, the number of domains, ``max_epochs`` and the device."""

    def train_epoch(self, model: nn.Module, meth: Method, epoch: int, opt: torch.optim.Optimizer,
                    gen: torch.Generator) -> tuple[float, dict]:
        """One epoch's steps (:func:`train_steps`)."""

    def evaluate(self, model: nn.Module, meth: Method) -> dict:
        """``{part: metrics}`` of every evaluated part (:class:`_Loop`)."""

    def final_evaluate(self, model: nn.Module, meth: Method) -> Callable[[], dict] | None:
        """The scoring of :attr:`TrainConfig.final_parts` (``None``: none)."""


def train_level(model: nn.Module, meth: Method, cfg: TrainConfig, dev: torch.device, level: Level, *,
                callback: Callable[[EpochInfo], Any] | None = None,
                checkpoint_dir: str | Path | None = None, checkpoint_every: int = 1,
                resume: bool = False) -> FitResult:
    """Run the prepared ``level``: in a forked RNG seeded with ``config.seed`` and with the
    model and method on ``dev`` (moved back afterwards), probe the model, check its outputs,
    set the method up for the :class:`TaskSpec`, run the loop with the batch-norm updates per
    step and fold standardised targets into the model. The keywords: :class:`RunOptions`."""
    with fork_rng_of(dev), _on_device(model, meth, dev):
        torch.manual_seed(cfg.seed)
        model.eval()
        with torch.no_grad():
            emb0, out0 = level.probe(model)
        _check_outputs(out0, cfg.task, level.num_classes, level.what)
        spec = TaskSpec(
            level=level.level,
            task=cfg.task,
            num_outputs=out0.size(1),
            embedding_dim=emb0.size(-1),
            num_domains=_num_domains(level.train_domains()),
            max_epochs=int(cfg.max_epochs),
            device=dev,
            **level.spec_fields(),
        )
        _setup_method(meth, spec, model, dev)

        def train_epoch(epoch: int, opt: torch.optim.Optimizer, gen: torch.Generator) -> tuple[float, dict]:
            return level.train_epoch(model, meth, epoch, opt, gen)

        loop = _Loop(
            model, meth, cfg, train_epoch, lambda: level.evaluate(model, meth), callback,
            checkpoint_dir, checkpoint_every, resume, dev,
            final_evaluate=level.final_evaluate(model, meth),
        )
        with batch_norm_updates(model, int(cfg.norm_updates_per_step)):
            return _fold_result(model, level.scale, loop.run())


def train_steps(model: nn.Module, meth: Method, opt: torch.optim.Optimizer, batches: Iterable[Batch],
                n: int, epoch: int) -> tuple[float, dict]:
    """One optimiser step per batch of ``batches`` (``n`` of them); the mean training loss and
    the means of the method's logs."""
    total, logs_acc = 0.0, {}
    for b in batches:
        opt.zero_grad(set_to_none=True)
        loss, logs = meth.training_loss(model, b, epoch)
        loss.backward()
        opt.step()
        total += float(loss.detach())
        for k, v in logs.items():
            logs_acc[k] = logs_acc.get(k, 0.0) + float(v) / n
    return total / n, logs_acc


@contextmanager
def _on_device(model: nn.Module, method: Method, device: torch.device):
    """Move ``model`` and ``method`` to ``device`` for the block; afterwards (also on an
    error) both go back to the device the model came in on."""
    home = module_device(model)
    model.to(device)
    try:
        yield
    except BaseException:
        try:  # the run's own error is the one to see, not a failure to move back
            model.to(home)
            method.to(home)
        except Exception:  # noqa: BLE001
            log.debug("could not move the model / method back to %s after an error", home)
        raise
    model.to(home)
    method.to(home)


def _setup_method(meth: Method, spec: TaskSpec, model: nn.Module, device: torch.device) -> None:
    """:meth:`Method.setup` and :meth:`Method.attach` with the method's modules created on
    ``device`` directly (``torch.device`` as the default device of the block), then anything
    still elsewhere moved there."""
    with torch.device(device):
        meth.setup(spec)
        meth.attach(model)
    meth.to(device)


def _check_outputs(out: Tensor, task: str, num_classes: int | None, what: str) -> None:
    if out.dim() != 2:
        raise ValueError(f"model outputs must be 2-d (items, outputs), got shape {tuple(out.shape)}")
    if task == "multiclass":
        if num_classes is not None and out.size(1) != num_classes:
            raise ValueError(
                f"model output size {out.size(1)} does not match the {num_classes} classes of "
                f"{what}; build the model with out_channels={num_classes}"
            )
    elif out.size(1) != 1:
        raise ValueError(
            f"a {task} task needs a model with 1 output, got output size {out.size(1)}"
        )



def _num_domains(domain: Tensor | None) -> int:
    if domain is None or domain.numel() == 0:
        return 0
    if int(domain.min()) < 0:
        raise ValueError("domain ids must be non-negative integers")
    return int(domain.max()) + 1


def _resolve_method(method: Method | None) -> Method:
    if method is None:
        from gs_algos.methods.robust import ERM

        return ERM()
    if not isinstance(method, Method):
        raise TypeError(f"method must be a gs_algos Method instance, got {type(method).__name__}")
    return method

