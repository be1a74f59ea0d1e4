"""Node-level training on one graph (:func:`fit_node`: full batch, or mini-batches of
training nodes with sampled neighbourhoods) and prediction (:func:`predict_node`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor, nn

from gs_algos.batch import Batch, call_model
from gs_algos.config import TrainConfig
from gs_algos.device import as_device, data_to, module_device
from gs_algos.engine.prepare import RunOptions, _resolve_method, train_level, train_steps
from gs_algos.engine.results import FitResult, evaluate_outputs
from gs_algos.engine.scale import TargetScale, _output_layer
from gs_algos.methods.base import Method

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["fit_node", "predict_node"]


def _node_masks(data: Any, masks: Mapping[str, Tensor] | None,
                device: torch.device) -> dict[str, Tensor]:
    n = data.num_nodes
    if masks is None:
        masks = {
            k[: -len("_mask")]: v
            for k, v in data.to_dict().items()
            if k.endswith("_mask") and isinstance(v, Tensor)
        }
    out = {}
    for k, v in masks.items():
        v = torch.as_tensor(v, device=device)
        if v.dtype != torch.bool or v.shape != (n,):
            raise ValueError(
                f"mask {k!r} must be a bool tensor of shape ({n},), got {v.dtype} {tuple(v.shape)}"
            )
        out[k] = v
    return out



def fit_node(
    model: nn.Module,
    data: Any,
    method: Method | None = None,
    config: TrainConfig | None = None,
    *,
    masks: Mapping[str, Tensor] | None = None,
    domain: Tensor | None = None,
    target_part: str | None = None,
    num_classes: int | None = None,
    **run: Unpack[RunOptions],
) -> FitResult:
    """Train a node-level model on one graph.

    Parameters
    ----------
    model
        ``forward(x, edge_index) -> (embeddings, logits)`` (gs-models contract).
    data
        PyG ``Data`` with ``x``, ``edge_index``, ``y`` and, unless ``masks`` is given,
        bool attributes ``<part>_mask`` (``in_train_mask``, ``in_valid_mask``, ...).
    method
        A :class:`~gs_algos.methods.Method` (default :class:`~gs_algos.methods.ERM`).
    config
        :class:`~gs_algos.config.TrainConfig` (default: structural-shifts preset).
        ``batch_size`` set = mini-batches of training nodes with neighbourhoods sampled
        per ``num_neighbors``; evaluation is always full batch.
    masks
        ``{part: bool tensor (num_nodes,)}``; overrides the ``*_mask`` attributes.
    domain
        Domain id per node (default ``data.domain`` if present), used by domain methods.
    target_part
        A part whose nodes are unlabeled target-domain items (domain adaptation).
    num_classes
        Expected output width (default: ``max(y) + 1``).
    **run
        ``callback`` (after every epoch, with an :class:`EpochInfo`; ``False`` stops),
        ``checkpoint_dir``, ``checkpoint_every``, ``resume`` (:class:`RunOptions`).

    Returns
    -------
    FitResult
        The model holds the weights of the best epoch of the first selection track. It
        trained on ``config.device`` and is back on the device it was given on.
    """
    cfg = config if config is not None else TrainConfig.structural_shifts()
    dev = as_device(cfg.device, "TrainConfig.device")
    meth = _resolve_method(method)
    level = _NodeLevel.of(model, data, cfg, dev, masks, domain, target_part, num_classes)
    return train_level(model, meth, cfg, dev, level, **run)


@dataclass
class _NodeLevel:
    """The checked inputs of a node-level run, on the training device (:func:`train_level`)."""

    cfg: TrainConfig
    data: Any
    parts: dict[str, Tensor]
    y: Tensor
    y_fit: Tensor  # the labels the model trains on (standardised with standardize_targets)
    train_idx: Tensor
    domain: Tensor | None
    target_idx: Tensor | None
    eval_parts: list[str]
    num_classes: int | None
    scale: TargetScale | None
    level: str = "node"
    what: str = "the labels"

    @classmethod
    def of(cls, model: nn.Module, data: Any, cfg: TrainConfig, dev: torch.device,
           masks: Mapping[str, Tensor] | None, domain: Tensor | None, target_part: str | None,
           num_classes: int | None) -> _NodeLevel:
        parts = _node_masks(data, masks, dev)
        _check_parts(parts, cfg)
        domain = _node_domain(data, domain, dev)
        if target_part is not None and target_part not in parts:
            raise ValueError(f"target part {target_part!r} not among the masks {sorted(parts)}")
        # everything the run touches lives on the training device from here on
        data = data_to(data, dev)
        target_idx = None
        if target_part is not None:
            target_idx = torch.nonzero(parts[target_part]).flatten()
        y = data.y
        if cfg.task == "multiclass" and num_classes is None:
            num_classes = int(y[y >= 0].max()) + 1
        train_idx = torch.nonzero(parts[cfg.train_part]).flatten()
        eval_parts = [p for p in (cfg.eval_parts or parts.keys()) if p in parts]
        scale = None
        y_fit = y
        if cfg.standardize_targets:
            _output_layer(model)
            scale = TargetScale.of(y[train_idx])
            y_fit = scale.to_model(y.float())
        return cls(cfg, data, parts, y, y_fit, train_idx, domain, target_idx, eval_parts,
                   num_classes, scale)

    def probe(self, model: nn.Module) -> tuple[Tensor, Tensor]:
        return call_model(model, "node", self.data)

    def train_domains(self) -> Tensor | None:
        return self.domain[self.train_idx] if self.domain is not None else None

    def spec_fields(self) -> dict[str, Any]:
        return {
            "has_target": self.target_idx is not None and self.target_idx.numel() > 0,
            "feature_dim": self.data.x.size(-1) if self.data.x is not None else 0,
        }

    def full_batch(self) -> Batch:
        return Batch(
            level="node",
            task=self.cfg.task,
            data=self.data,
            labeled=self.train_idx,
            y=self.y_fit[self.train_idx],
            domain=self.domain[self.train_idx] if self.domain is not None else None,
            target=self.target_idx,
        )

    def train_epoch(self, model: nn.Module, meth: Method, epoch: int, opt: torch.optim.Optimizer,
                    gen: torch.Generator) -> tuple[float, dict]:
        if self.cfg.batch_size is None:
            batches = [self.full_batch()]
        else:
            batches = _node_minibatches(self.data, self.train_idx, self.y_fit, self.domain, self.cfg, gen)
        return train_steps(model, meth, opt, batches, len(batches), epoch)

    def evaluate(self, model: nn.Module, meth: Method) -> dict:
        parts, y = self.parts, self.y
        _, out = meth.predict(model, "node", self.data)
        if self.scale is not None:
            out = self.scale.to_targets(out)
        res = {p: evaluate_outputs(out[parts[p]], y[parts[p]], self.cfg.task) for p in self.eval_parts}
        # a method whose training objective is not the cross-entropy of its outputs
        # (e.g. the Bayesian loss of Dirichlet models) reports its own loss per part
        own = meth.evaluation_losses(model, "node", self.data, {p: parts[p] for p in self.eval_parts}, y)
        for p, v in own.items():
            if res.get(p):
                res[p]["loss"] = v
        return res

    def final_evaluate(self, model: nn.Module, meth: Method) -> None:
        return None


def _check_parts(parts: dict[str, Tensor], cfg: TrainConfig) -> None:
    """The training and selection parts are among the masks and not empty."""
    if cfg.train_part not in parts:
        raise ValueError(
            f"training part {cfg.train_part!r} not among the masks {sorted(parts)}"
        )
    if int(parts[cfg.train_part].sum()) == 0:
        raise ValueError(f"the training part {cfg.train_part!r} is empty (no node selected)")
    for p in cfg.select_on:
        if p not in parts:
            raise ValueError(f"selection part {p!r} not among the masks {sorted(parts)}")
        if int(parts[p].sum()) == 0:
            raise ValueError(f"the selection part {p!r} is empty (no node selected)")


def _node_domain(data: Any, domain: Tensor | None, dev: torch.device) -> Tensor | None:
    """The domain id per node (``data.domain`` unless given) on ``dev``, checked."""
    if domain is None:
        domain = getattr(data, "domain", None)
    if domain is not None:
        domain = torch.as_tensor(domain, device=dev).long()
        if domain.shape != (data.num_nodes,):
            raise ValueError(
                f"domain must have one id per node ({data.num_nodes}), got shape {tuple(domain.shape)}"
            )
    return domain


def _generator_on(gen: torch.Generator, device: torch.device) -> torch.Generator:
    """``gen`` itself on its own device type, else a generator on ``device`` seeded with
    ``gen``'s seed (the epoch's seed, :class:`_Loop`)."""
    if gen.device.type == device.type:
        return gen
    return torch.Generator(device=device).manual_seed(gen.initial_seed())


def _node_minibatches(data, train_idx, y, domain, cfg: TrainConfig, gen) -> list[Batch]:
    from torch_geometric.data import Data

    from gs_models.sampling import sample_neighbors

    if cfg.num_neighbors is None:
        raise ValueError("node-level mini-batches need config.num_neighbors (one entry per hop)")
    dev = data.edge_index.device
    gen = _generator_on(gen, dev)
    perm = train_idx[torch.randperm(train_idx.numel(), generator=gen, device=dev)]
    out = []
    for s in range(0, perm.numel(), cfg.batch_size):
        seeds = perm[s : s + cfg.batch_size]
        nodes, sub_ei, n_seeds = sample_neighbors(
            data.edge_index, data.num_nodes, seeds, cfg.num_neighbors, gen
        )
        sub = Data(x=data.x[nodes], edge_index=sub_ei, num_nodes=nodes.numel())
        lab = torch.arange(n_seeds, device=dev)
        out.append(
            Batch(
                level="node",
                task=cfg.task,
                data=sub,
                labeled=lab,
                y=y[seeds],
                domain=domain[seeds] if domain is not None else None,
            )
        )
    return out


def predict_node(model: nn.Module, data: Any, method: Method | None = None):
    """``(embeddings, outputs)`` of all nodes in eval mode, without gradients, computed on
    the model's device (``data`` is moved there; the outputs stay there)."""
    model.eval()
    data = data_to(data, module_device(model))
    with torch.no_grad():
        if method is not None:
            return method.predict(model, "node", data)
        return call_model(model, "node", data)
