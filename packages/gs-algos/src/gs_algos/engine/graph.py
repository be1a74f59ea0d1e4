"""Graph-level (point-cloud) training (:func:`fit_graph`, GeSS protocol by default),
prediction (:func:`predict_graph`) and the recomputed batch-norm statistics of
:attr:`TrainConfig.norm_stats_graphs` (:func:`recompute_norm_stats`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor, nn

from gs_algos.batch import Batch, call_model
from gs_algos.config import TrainConfig
from gs_algos.device import as_device, module_device
from gs_algos.engine.prepare import RunOptions, _resolve_method, train_level, train_steps
from gs_algos.engine.results import FitResult, evaluate_outputs
from gs_algos.engine.scale import TargetScale, _output_layer
from gs_algos.methods.base import Method

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["fit_graph", "predict_graph", "recompute_norm_stats"]


def _in_order(loader_cls, graphs, batch_size: int):
    """A loader over ``graphs`` in order, with a private generator: each iterator of a torch
    ``DataLoader`` draws its base seed from the global RNG unless given its own, so scoring one
    more part (``eval_parts`` / ``final_parts``) moved the dropout masks of every later training
    step, and the record depended on which parts were evaluated."""
    return loader_cls(list(graphs), batch_size=batch_size, shuffle=False, generator=torch.Generator())


def _cpu_batches(loader):
    """The batches of a PyG ``DataLoader``, collated with the CPU as default device (the
    graphs live there; a global ``torch.set_default_device`` must not move half a batch)."""
    with torch.device("cpu"):
        it = iter(loader)
    while True:
        with torch.device("cpu"):
            try:
                b = next(it)
            except StopIteration:
                return
        yield b


def _graph_y(graphs: Sequence[Any], part: str) -> None:
    for g in graphs[:1]:
        if getattr(g, "y", None) is None:
            raise ValueError(f"graphs of part {part!r} have no label attribute y")


def predict_graph(
    model: nn.Module, graphs: Sequence[Any], method: Method | None = None, batch_size: int = 256
) -> tuple[Tensor, Tensor]:
    """``(graph_embeddings, outputs)`` for a sequence of graphs, in order, eval mode, computed
    on the model's device (batches are collated on the CPU and moved there)."""
    from torch_geometric.loader import DataLoader

    model.eval()
    dev = module_device(model)
    embs, outs = [], []
    with torch.no_grad():
        for b in _cpu_batches(_in_order(DataLoader, graphs, batch_size)):
            b = b.to(dev)
            e, o = (method.predict(model, "graph", b) if method is not None
                    else call_model(model, "graph", b))
            embs.append(e)
            outs.append(o)
    return torch.cat(embs), torch.cat(outs)


def fit_graph(
    model: nn.Module,
    parts: Mapping[str, Sequence[Any]],
    method: Method | None = None,
    config: TrainConfig | None = None,
    *,
    target: Sequence[Any] | None = None,
    num_classes: int | None = None,
    **run: Unpack[RunOptions],
) -> FitResult:
    """Train a graph-level (point-cloud) model; GeSS protocol by default.

    Parameters
    ----------
    model
        ``forward(x, pos, batch) -> (graph_embeddings, outputs)`` (gs-models contract).
    parts
        ``{part: sequence of PyG Data}``; each graph has ``x``, ``pos``, ``y`` and, for
        domain methods, a scalar ``domain``. GeSS: ``train``, ``iid_val``, ``iid_test``,
        ``ood_val``, ``ood_test``.
    method, config, run
        As in :func:`fit_node`; default config: :meth:`TrainConfig.gess`. Every epoch
        evaluates ``config.eval_parts``; one selection track per ``config.select_on``
        part (GeSS: best on ID validation and best on OOD validation, appendix E).
    target
        Unlabeled target graphs (O-Feature level: DANN / DeepCoral). One target batch is
        drawn per step; with ``config.iterations_per_epoch`` an epoch is that many steps.

    Notes
    -----
    The graphs stay where they are (the CPU, as a rule): every batch is collated there and
    moved to ``config.device``; the model trains there and comes back as in :func:`fit_node`.
    """
    cfg = config if config is not None else TrainConfig.gess()
    dev = as_device(cfg.device, "TrainConfig.device")
    meth = _resolve_method(method)
    level = _GraphLevel.of(model, parts, cfg, dev, target, num_classes)
    return train_level(model, meth, cfg, dev, level, **run)


@dataclass
class _GraphLevel:
    """The checked inputs of a graph-level run (:func:`train_level`); the graphs stay where
    they are, the labels of the scored parts are on the training device."""

    cfg: TrainConfig
    dev: torch.device
    parts: Mapping[str, Sequence[Any]]
    train: list
    target: list | None
    batch_size: int
    eval_parts: list[str]
    final_parts: list[str]
    eval_y: dict[str, Tensor]
    domain: Tensor | None
    num_classes: int | None
    scale: TargetScale | None
    stats_graphs: list
    level: str = "graph"
    what: str = "the training labels"

    @classmethod
    def of(cls, model: nn.Module, parts: Mapping[str, Sequence[Any]], cfg: TrainConfig,
           dev: torch.device, target: Sequence[Any] | None, num_classes: int | None) -> _GraphLevel:
        train = _graph_train(parts, cfg)
        final_parts = [p for p in cfg.final_parts if p in parts and len(parts[p])]
        eval_parts = [p for p in (cfg.eval_parts or parts.keys())
                      if p in parts and len(parts[p]) and p not in cfg.final_parts]
        tgt = list(target) if target is not None else None
        if tgt is not None and len(tgt) == 0:
            raise ValueError("target is empty; pass None when no unlabeled target data is used")
        doms = [getattr(g, "domain", None) for g in train]
        domain_all = (
            torch.as_tensor([int(d) for d in doms], device=dev)
            if all(d is not None for d in doms) else None
        )
        if cfg.task == "multiclass" and num_classes is None:
            num_classes = int(torch.cat([g.y.reshape(-1) for g in train]).max()) + 1
        eval_y = {p: torch.cat([g.y.reshape(-1) for g in parts[p]]).to(dev) for p in eval_parts + final_parts}
        scale = None
        if cfg.standardize_targets:
            _output_layer(model)  # a head the standardisation can be folded into, before training
            scale = TargetScale.of(torch.cat([g.y.reshape(-1) for g in train]))
        stats_graphs = _norm_stats_subset(train, int(cfg.norm_stats_graphs), cfg.seed)
        return cls(cfg, dev, parts, train, tgt, cfg.batch_size or 256, eval_parts, final_parts,
                   eval_y, domain_all, num_classes, scale, stats_graphs)

    def probe(self, model: nn.Module) -> tuple[Tensor, Tensor]:
        from torch_geometric.data import Batch as PygBatch

        with torch.device("cpu"):
            first = PygBatch.from_data_list(self.train[:2])
        return call_model(model, "graph", first.to(self.dev))

    def train_domains(self) -> Tensor | None:
        return self.domain

    def spec_fields(self) -> dict[str, Any]:
        g = self.train[0]
        return {
            "has_target": self.target is not None,
            "feature_dim": g.x.size(-1) if getattr(g, "x", None) is not None else 0,
            "pos_dim": g.pos.size(-1),
        }

    def make_batch(self, b, tb) -> Batch:
        dev, task, scale = self.dev, self.cfg.task, self.scale
        b = b.to(dev)
        tb = tb.to(dev) if tb is not None else None
        d = getattr(b, "domain", None)
        y = b.y.reshape(-1) if task != "multiclass" else b.y.reshape(-1).long()
        return Batch(
            level="graph",
            task=task,
            data=b,
            labeled=torch.arange(b.num_graphs, device=dev),
            y=scale.to_model(y) if scale is not None else y,
            domain=d.reshape(-1).long() if d is not None else None,
            target_data=tb,
        )

    def batches(self, gen: torch.Generator) -> tuple[Iterator[Batch], int]:
        """An epoch's training batches (each with a target batch when there are target
        graphs; a loader that runs out starts again) and their number."""
        from torch_geometric.loader import DataLoader

        bs, tgt = self.batch_size, self.target
        loader = DataLoader(self.train, batch_size=bs, shuffle=True, generator=gen)
        t_loader = (
            DataLoader(tgt, batch_size=bs, shuffle=True, generator=gen) if tgt else None
        )
        n_steps = self.cfg.iterations_per_epoch or len(loader)

        def steps() -> Iterator[Batch]:
            it, t_it = _cpu_batches(loader), _cpu_batches(t_loader) if t_loader else None
            for _ in range(n_steps):
                try:
                    b = next(it)
                except StopIteration:
                    it = _cpu_batches(loader)
                    b = next(it)
                tb = None
                if t_it is not None:
                    try:
                        tb = next(t_it)
                    except StopIteration:
                        t_it = _cpu_batches(t_loader)
                        tb = next(t_it)
                yield self.make_batch(b, tb)

        return steps(), n_steps

    def train_epoch(self, model: nn.Module, meth: Method, epoch: int, opt: torch.optim.Optimizer,
                    gen: torch.Generator) -> tuple[float, dict]:
        batches, n_steps = self.batches(gen)
        return train_steps(model, meth, opt, batches, n_steps, epoch)

    def score(self, model: nn.Module, meth: Method, names: list[str]) -> dict:
        res = {}
        for p in names:
            _, out = predict_graph(model, self.parts[p], meth, self.batch_size)
            res[p] = evaluate_outputs(self.scale.to_targets(out) if self.scale is not None else out,
                                      self.eval_y[p], self.cfg.task)
        return res

    def evaluate(self, model: nn.Module, meth: Method) -> dict:
        if self.stats_graphs:
            recompute_norm_stats(model, meth, self.stats_graphs, self.batch_size, self.dev)
        return self.score(model, meth, self.eval_parts)

    def final_evaluate(self, model: nn.Module, meth: Method) -> Callable[[], dict] | None:
        # the kept states hold the statistics recomputed before their epoch's evaluation
        if not self.final_parts:
            return None
        return lambda: self.score(model, meth, self.final_parts)


def _graph_train(parts: Mapping[str, Sequence[Any]], cfg: TrainConfig) -> list:
    """The training graphs, checked, after checking the selection parts."""
    if cfg.train_part not in parts:
        raise ValueError(f"training part {cfg.train_part!r} not among the parts {sorted(parts)}")
    train = list(parts[cfg.train_part])
    if len(train) == 0:
        raise ValueError(f"the training part {cfg.train_part!r} is empty (no graph)")
    _graph_y(train, cfg.train_part)
    for p in cfg.select_on:
        if p not in parts or len(parts[p]) == 0:
            raise ValueError(f"selection part {p!r} missing or empty among {sorted(parts)}")
    return train


def _norm_stats_subset(train: list, n: int, seed: int) -> list:
    """The training graphs :func:`recompute_norm_stats` reads (a fixed random subset of
    ``n``; all of them when there are fewer; none when ``n = 0``)."""
    if n <= 0:
        return []
    if len(train) <= n:
        return train
    gen = torch.Generator().manual_seed(seed * 7_919 + 17)
    idx = torch.randperm(len(train), generator=gen)[:n].sort().values
    return [train[int(i)] for i in idx]


def _norms(model: nn.Module) -> list[nn.modules.batchnorm._BatchNorm]:
    return [m for m in model.modules()
            if isinstance(m, nn.modules.batchnorm._BatchNorm) and m.track_running_stats]


@torch.no_grad()
def recompute_norm_stats(model: nn.Module, method: Method | None, graphs: Sequence[Any],
                         batch_size: int, device: torch.device) -> int:
    """Replace every batch norm's running mean and variance by their cumulative averages
    over ``graphs`` under the current weights ("precise BN"; :attr:`TrainConfig.norm_stats_graphs`).

    Only the batch norms run in train mode (dropout and everything else in eval mode); the
    model's and the norms' modes are restored. Returns the number of batch norms updated.
    """
    from torch_geometric.loader import DataLoader

    owners = [model, *([method] if isinstance(method, nn.Module) else [])]
    norms = [m for o in owners for m in _norms(o)]
    if not norms or not graphs:
        return 0
    modes = {m: m.training for o in owners for m in o.modules()}
    momenta = [m.momentum for m in norms]
    try:
        for o in owners:
            o.eval()
        for m in norms:
            m.reset_running_stats()
            m.momentum = None  # cumulative moving average over the passes below
            m.train()
        for b in _cpu_batches(_in_order(DataLoader, graphs, batch_size)):
            b = b.to(device)
            if method is not None:
                method.predict(model, "graph", b)
            else:
                call_model(model, "graph", b)
    finally:
        for m, mo in zip(norms, momenta, strict=True):
            m.momentum = mo
        for m, was in modes.items():
            m.train(was)
    return len(norms)
