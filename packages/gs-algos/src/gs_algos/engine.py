"""The training engine: node-level (full batch or sampled mini-batches) and graph-level
loops with early stopping, selection tracks, best-checkpoint restore, deterministic
seeding, exact resume from disk checkpoints and a per-epoch callback.

Determinism: the whole run executes inside ``torch.random.fork_rng`` seeded with
``config.seed`` (the caller's global RNG is left untouched); shuffling and neighbour
sampling use a generator reseeded from ``(seed, epoch)`` at every epoch, so an epoch's
order does not depend on history; dropout and the methods' draws use the forked global
torch RNG whose state is saved in every checkpoint. Resuming a run from its checkpoint
therefore replays exactly the epochs that an uninterrupted run would have (on CPU).

Devices: ``config.device`` (:mod:`gs_algos.device`) picks where a run trains. The model, the
method and the data are moved there for the run and the model and method are handed back on
the device the model came in on (as Lightning's ``Trainer`` does), so code that predicts after
training needs no change; every tensor the engine creates (indices, batches, neighbour
samples, the methods' modules and buffers) is created on the training device. Shuffling of
graph-level loaders stays on a CPU generator (the same batches on every device); neighbour
sampling draws from a generator on the training device, seeded alike (on CPU it is the CPU
generator itself, so CPU runs are unchanged).
"""

from __future__ import annotations

import copy
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor, nn

from gs_algos.batch import Batch, TaskSpec, call_model, item_losses
from gs_algos.checkpoint import CHECKPOINT_NAME, atomic_save, load_checkpoint
from gs_algos.config import TrainConfig
from gs_algos.device import as_device, data_to, fork_rng_of, module_device
from gs_algos.methods.base import Method
from gs_metrics import auroc, available_metrics, get_metric

if TYPE_CHECKING:
    from gs_models.sampling import sample_neighbors

__all__ = [
    "FitResult",
    "Track",
    "EpochInfo",
    "fit_node",
    "fit_graph",
    "predict_node",
    "predict_graph",
    "evaluate_outputs",
    "fold_target_scale",
    "TargetScale",
    "seeded",
    "sample_neighbors",
]

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------- results
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


# --------------------------------------------------------------------------- metrics
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


# --------------------------------------------------------------------------- sampling
# ``sample_neighbors`` is gs-models' (:func:`gs_models.sampling.sample_neighbors`), the one
# neighbour sampler of gs (issue 20); it stays importable from here and from ``gs_algos``.
# It is imported on first use: gs_models.sampling imports PyTorch Geometric (~5 s), which
# importing the engine (the named methods, gs-bench's checks and report) should not pay.
def __getattr__(name: str) -> Any:
    if name == "sample_neighbors":
        from gs_models.sampling import sample_neighbors

        return sample_neighbors
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --------------------------------------------------------------------------- the loop
class _Loop:
    """Shared epoch loop; the level-specific parts are callables."""

    def __init__(
        self,
        model: nn.Module,
        method: Method,
        config: TrainConfig,
        train_epoch: Callable[[int, torch.optim.Optimizer, torch.Generator], tuple[float, dict]],
        evaluate: Callable[[], dict],
        callback: Callable[[EpochInfo], Any] | None,
        checkpoint_dir: str | Path | None,
        checkpoint_every: int,
        resume: bool,
        device: torch.device | None = None,
        final_evaluate: Callable[[], dict] | None = None,
    ) -> None:
        self.model, self.method, self.config = model, method, config
        self.final_evaluate = final_evaluate
        self.device = device if device is not None else torch.device("cpu")
        self.train_epoch, self.evaluate = train_epoch, evaluate
        self.callback = callback
        self.ckpt_path = Path(checkpoint_dir) / CHECKPOINT_NAME if checkpoint_dir else None
        if checkpoint_every < 1:
            raise ValueError(f"checkpoint_every must be >= 1, got {checkpoint_every!r}")
        self.checkpoint_every = int(checkpoint_every)
        self.resume = resume

    def _acc_or_nll(self, tr: Track, m: dict) -> tuple[bool, bool]:
        """The edgewise authors' rule (``src/train.py``): ``(keep checkpoint, reset patience)``."""
        acc, nll = m.get("accuracy", math.nan), m.get("loss", math.nan)
        if math.isnan(acc) or math.isnan(nll):
            return False, False
        acc_ok = acc >= tr.bests.get("accuracy", -math.inf)
        nll_ok = nll <= tr.bests.get("loss", math.inf)
        if acc_ok or nll_ok:
            tr.bests["accuracy"] = max(acc, tr.bests.get("accuracy", -math.inf))
            tr.bests["loss"] = min(nll, tr.bests.get("loss", math.inf))
        return acc_ok and nll_ok, acc_ok or nll_ok

    @staticmethod
    def _tie_lower_loss(val: float, tr: Track, m: dict, part: str) -> bool:
        """GeSS's tie rule (``stopping="gess"``): the metric equals the kept epoch's and the
        part's loss is strictly lower than the kept epoch's."""
        if math.isnan(val) or val != tr.value:
            return False
        new, old = m.get("loss", math.nan), tr.metrics.get(part, {}).get("loss", math.nan)
        return not math.isnan(new) and not math.isnan(old) and new < old

    def _better(self, new: float, old: float) -> bool:
        if math.isnan(new):
            return False
        if math.isnan(old):
            return True
        return new > old if self.config.higher_is_better else new < old

    def _score_kept(self, tracks: dict[str, Track]) -> None:
        """:attr:`TrainConfig.final_parts`: each track's kept weights and method state (batch
        norms included, as they were when that epoch was evaluated) scored once on those parts,
        merged into the track's metrics; tracks that kept the same epoch share one scoring."""
        done: dict[int, dict] = {}
        for tr in tracks.values():
            if tr.state is None:
                continue
            if tr.epoch not in done:
                self.model.load_state_dict(tr.state)
                self.method.load_state_dict(tr.method_state)
                self.model.eval()
                self.method.eval()
                with torch.no_grad():
                    done[tr.epoch] = self.final_evaluate()
            tr.metrics = {**tr.metrics, **copy.deepcopy(done[tr.epoch])}

    def run(self) -> FitResult:
        cfg = self.config
        params = list(self.model.parameters()) + list(self.method.optimizer_parameters())
        opt = torch.optim.Adam(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
        tracks = {p: Track(part=p) for p in cfg.select_on}
        history: list[dict] = []
        start, bad, stopped = 0, 0, False
        torch.manual_seed(cfg.seed)
        if self.resume and self.ckpt_path is not None and self.ckpt_path.is_file():
            ck = load_checkpoint(self.ckpt_path, safe_globals=(Track,))
            if ck.get("config") != _config_key(cfg):
                raise ValueError(
                    f"checkpoint {self.ckpt_path} was written with a different config; "
                    "remove it or use another checkpoint_dir"
                )
            self.model.load_state_dict(ck["model"])
            self.method.load_state_dict(ck["method"])
            self.method.load_extra_checkpoint_state(ck["method_extra"])
            opt.load_state_dict(ck["optimizer"])
            torch.set_rng_state(ck["torch_rng"])
            if self.device.type == "cuda" and ck.get("cuda_rng") is not None:
                torch.cuda.set_rng_state(ck["cuda_rng"], self.device)
            # plain dicts since issue 34 (a checkpoint holds no class); Track objects before
            tracks = {p: t if isinstance(t, Track) else Track(**t) for p, t in ck["tracks"].items()}
            history = ck["history"]
            start, bad, stopped = ck["epoch"] + 1, ck["bad"], ck["stopped"]
            log.info("resumed from %s at epoch %d", self.ckpt_path, start)
        gen = torch.Generator()
        primary = cfg.select_on[0]
        for epoch in range(start, cfg.max_epochs):
            if stopped:
                break
            gen.manual_seed(cfg.seed * 1_000_003 + epoch)
            self.model.train()
            self.method.train()
            loss, logs = self.train_epoch(epoch, opt, gen)
            if not math.isfinite(loss):
                raise FloatingPointError(f"training loss became {loss} at epoch {epoch}")
            self.method.on_epoch_end(epoch)
            rec = {"epoch": epoch, "train_loss": loss, **logs}
            improved: dict[str, bool] = {}
            metrics: dict = {}
            if (epoch + 1) % cfg.eval_every == 0 or epoch == cfg.max_epochs - 1:
                self.model.eval()
                self.method.eval()
                with torch.no_grad():
                    metrics = self.evaluate()
                rec["metrics"] = metrics
                reset = False
                for part, tr in tracks.items():
                    if cfg.stopping == "acc_or_nll":
                        improved[part], ok = self._acc_or_nll(tr, metrics.get(part, {}))
                        val = metrics.get(part, {}).get("accuracy", math.nan)
                        reset = reset or (ok and part == primary)
                    else:
                        val = metrics.get(part, {}).get(cfg.metric, math.nan)
                        improved[part] = self._better(val, tr.value) or (
                            cfg.stopping == "gess" and self._tie_lower_loss(val, tr, metrics.get(part, {}), part))
                        reset = reset or (improved[part] and part == primary)
                    if improved[part]:
                        tr.epoch, tr.value = epoch, val
                        tr.metrics = copy.deepcopy(metrics)
                        tr.state = {k: v.detach().cpu().clone() for k, v in self.model.state_dict().items()}
                        tr.method_state = {
                            k: v.detach().cpu().clone() for k, v in self.method.state_dict().items()
                        }
                bad = 0 if reset else bad + 1
                if cfg.patience is not None and bad >= cfg.patience:
                    stopped = True
            history.append(rec)
            if log.isEnabledFor(logging.INFO) and (epoch % 10 == 0 or stopped or epoch == cfg.max_epochs - 1):
                sel = metrics.get(primary, {}).get(cfg.metric, math.nan) if metrics else math.nan
                log.info(
                    "epoch %d/%d  train loss %.4f  %s %s %.4f  (best epoch %d)",
                    epoch, cfg.max_epochs, loss, primary, cfg.metric, sel, tracks[primary].epoch,
                )
            if self.ckpt_path is not None and (
                (epoch + 1) % self.checkpoint_every == 0 or stopped or epoch == cfg.max_epochs - 1
            ):
                atomic_save(
                    {
                        "config": _config_key(cfg),
                        "model": self.model.state_dict(),
                        "method": self.method.state_dict(),
                        "method_extra": self.method.extra_checkpoint_state(),
                        "optimizer": opt.state_dict(),
                        "torch_rng": torch.get_rng_state(),
                        "cuda_rng": (torch.cuda.get_rng_state(self.device)
                                     if self.device.type == "cuda" else None),
                        "tracks": {p: dict(vars(t)) for p, t in tracks.items()},  # no class in the file
                        "history": history,
                        "epoch": epoch,
                        "bad": bad,
                        "stopped": stopped,
                    },
                    self.ckpt_path,
                )
            if self.callback is not None:
                info = EpochInfo(epoch, cfg.max_epochs, loss, logs, metrics, improved)
                if self.callback(info) is False:
                    stopped = True
        if self.final_evaluate is not None:
            self._score_kept(tracks)
        best = tracks[primary]
        log.info(
            "trained %d epochs (%s); best epoch %d by %s %s = %.4f",
            len(history), "early stop" if stopped else "epoch limit", best.epoch, primary,
            cfg.metric, best.value,
        )
        if best.state is not None:
            self.model.load_state_dict(best.state)
            self.method.load_state_dict(best.method_state)
        self.model.eval()
        self.method.eval()
        return FitResult(
            tracks=tracks,
            history=history,
            epochs_run=len(history),
            stopped_early=stopped and len(history) < cfg.max_epochs,
        )


@contextmanager
def batch_norm_updates(model: nn.Module, k: int):
    """Within the block, every batch norm of ``model`` with momentum ``m`` updates its running
    statistics with momentum ``1 - (1 - m)^k``: one train-mode pass then leaves the statistics
    that ``k`` identical passes leave, ``r <- (1-m)^k r + (1 - (1-m)^k) mu``
    (:attr:`TrainConfig.norm_updates_per_step`). Momenta are restored on exit."""
    saved = []
    if k > 1:
        for mod in model.modules():
            if isinstance(mod, nn.modules.batchnorm._BatchNorm) and mod.momentum is not None:
                saved.append((mod, mod.momentum))
                mod.momentum = 1.0 - (1.0 - mod.momentum) ** k
    try:
        yield
    finally:
        for mod, m in saved:
            mod.momentum = m


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


def _config_key(cfg: TrainConfig) -> dict:
    """What a checkpoint must have been written with to be resumed: every field but the
    device (a run may resume on another device)."""
    from dataclasses import asdict

    from gs_algos.config import _IDENTITY_IF_SET

    key = asdict(cfg)
    key.pop("device", None)
    for name, default in _IDENTITY_IF_SET.items():  # left at their default: the key is as before
        if key.get(name) == default:
            key.pop(name)
    return key


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


# --------------------------------------------------------------------------- node level
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
    callback: Callable[[EpochInfo], Any] | None = None,
    checkpoint_dir: str | Path | None = None,
    checkpoint_every: int = 1,
    resume: bool = False,
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
    callback
        Called after every epoch with an :class:`EpochInfo`; returning ``False`` stops.
    checkpoint_dir, checkpoint_every, resume
        Write ``checkpoint_dir/last.pt`` atomically every ``checkpoint_every`` epochs;
        with ``resume=True`` an existing checkpoint is continued exactly.

    Returns
    -------
    FitResult
        The model holds the weights of the best epoch of the first selection track. It
        trained on ``config.device`` and is back on the device it was given on.
    """
    cfg = config if config is not None else TrainConfig.structural_shifts()
    dev = as_device(cfg.device, "TrainConfig.device")
    meth = _resolve_method(method)
    parts = _node_masks(data, masks, dev)
    if cfg.train_part not in parts:
        raise ValueError(
            f"training part {cfg.train_part!r} not among the masks {sorted(parts)}"
        )
    train_mask = parts[cfg.train_part]
    if int(train_mask.sum()) == 0:
        raise ValueError(f"the training part {cfg.train_part!r} is empty (no node selected)")
    for p in cfg.select_on:
        if p not in parts:
            raise ValueError(f"selection part {p!r} not among the masks {sorted(parts)}")
        if int(parts[p].sum()) == 0:
            raise ValueError(f"the selection part {p!r} is empty (no node selected)")
    if domain is None:
        domain = getattr(data, "domain", None)
    if domain is not None:
        domain = torch.as_tensor(domain, device=dev).long()
        if domain.shape != (data.num_nodes,):
            raise ValueError(
                f"domain must have one id per node ({data.num_nodes}), got shape {tuple(domain.shape)}"
            )
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
    train_idx = torch.nonzero(train_mask).flatten()
    eval_parts = [p for p in (cfg.eval_parts or parts.keys()) if p in parts]
    scale = None
    y_fit = y  # the labels the model trains on (standardised with standardize_targets)
    if cfg.standardize_targets:
        _output_layer(model)
        scale = TargetScale.of(y[train_idx])
        y_fit = scale.to_model(y.float())

    with fork_rng_of(dev), _on_device(model, meth, dev):
        torch.manual_seed(cfg.seed)
        model.eval()
        with torch.no_grad():
            emb0, out0 = call_model(model, "node", data)
        _check_outputs(out0, cfg.task, num_classes, "the labels")
        spec = TaskSpec(
            level="node",
            task=cfg.task,
            num_outputs=out0.size(1),
            embedding_dim=emb0.size(-1),
            num_domains=_num_domains(domain[train_idx] if domain is not None else None),
            has_target=target_idx is not None and target_idx.numel() > 0,
            feature_dim=data.x.size(-1) if data.x is not None else 0,
            max_epochs=int(cfg.max_epochs),
            device=dev,
        )
        _setup_method(meth, spec, model, dev)

        def full_batch() -> Batch:
            return Batch(
                level="node",
                task=cfg.task,
                data=data,
                labeled=train_idx,
                y=y_fit[train_idx],
                domain=domain[train_idx] if domain is not None else None,
                target=target_idx,
            )

        def train_epoch(epoch: int, opt, gen) -> tuple[float, dict]:
            if cfg.batch_size is None:
                batches = [full_batch()]
            else:
                batches = _node_minibatches(data, train_idx, y_fit, domain, cfg, gen)
            total, logs_acc = 0.0, {}
            for b in batches:
                opt.zero_grad(set_to_none=True)
                loss, logs = meth.training_loss(model, b, epoch)
                loss.backward()
                opt.step()
                total += float(loss.detach())
                for k, v in logs.items():
                    logs_acc[k] = logs_acc.get(k, 0.0) + float(v) / len(batches)
            return total / len(batches), logs_acc

        def evaluate() -> dict:
            _, out = meth.predict(model, "node", data)
            if scale is not None:
                out = scale.to_targets(out)
            res = {
                p: evaluate_outputs(out[parts[p]], y[parts[p]], cfg.task) for p in eval_parts
            }
            # a method whose training objective is not the cross-entropy of its outputs
            # (e.g. the Bayesian loss of Dirichlet models) reports its own loss per part
            own = meth.evaluation_losses(model, "node", data, {p: parts[p] for p in eval_parts}, y)
            for p, v in own.items():
                if res.get(p):
                    res[p]["loss"] = v
            return res

        with batch_norm_updates(model, int(cfg.norm_updates_per_step)):
            return _fold_result(model, scale, _Loop(
                model, meth, cfg, train_epoch, evaluate, callback, checkpoint_dir,
                checkpoint_every, resume, dev,
            ).run())


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


# --------------------------------------------------------------------------- graph level
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
    callback: Callable[[EpochInfo], Any] | None = None,
    checkpoint_dir: str | Path | None = None,
    checkpoint_every: int = 1,
    resume: bool = False,
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
    method, config
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
    from torch_geometric.data import Batch as PygBatch
    from torch_geometric.loader import DataLoader

    cfg = config if config is not None else TrainConfig.gess()
    dev = as_device(cfg.device, "TrainConfig.device")
    meth = _resolve_method(method)
    if cfg.train_part not in parts:
        raise ValueError(f"training part {cfg.train_part!r} not among the parts {sorted(parts)}")
    train = list(parts[cfg.train_part])
    if len(train) == 0:
        raise ValueError(f"the training part {cfg.train_part!r} is empty (no graph)")
    _graph_y(train, cfg.train_part)
    for p in cfg.select_on:
        if p not in parts or len(parts[p]) == 0:
            raise ValueError(f"selection part {p!r} missing or empty among {sorted(parts)}")
    bs = cfg.batch_size or 256
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

    with fork_rng_of(dev), _on_device(model, meth, dev):
        torch.manual_seed(cfg.seed)
        model.eval()
        with torch.device("cpu"):
            first = PygBatch.from_data_list(train[:2])
        with torch.no_grad():
            emb0, out0 = call_model(model, "graph", first.to(dev))
        _check_outputs(out0, cfg.task, num_classes, "the training labels")
        spec = TaskSpec(
            level="graph",
            task=cfg.task,
            num_outputs=out0.size(1),
            embedding_dim=emb0.size(-1),
            num_domains=_num_domains(domain_all),
            has_target=tgt is not None,
            feature_dim=train[0].x.size(-1) if getattr(train[0], "x", None) is not None else 0,
            pos_dim=train[0].pos.size(-1),
            max_epochs=int(cfg.max_epochs),
            device=dev,
        )
        _setup_method(meth, spec, model, dev)

        def make_batch(b, tb) -> Batch:
            b = b.to(dev)
            tb = tb.to(dev) if tb is not None else None
            d = getattr(b, "domain", None)
            y = b.y.reshape(-1) if cfg.task != "multiclass" else b.y.reshape(-1).long()
            return Batch(
                level="graph",
                task=cfg.task,
                data=b,
                labeled=torch.arange(b.num_graphs, device=dev),
                y=scale.to_model(y) if scale is not None else y,
                domain=d.reshape(-1).long() if d is not None else None,
                target_data=tb,
            )

        def train_epoch(epoch: int, opt, gen) -> tuple[float, dict]:
            loader = DataLoader(train, batch_size=bs, shuffle=True, generator=gen)
            t_loader = (
                DataLoader(tgt, batch_size=bs, shuffle=True, generator=gen) if tgt else None
            )
            n_steps = cfg.iterations_per_epoch or len(loader)
            it, t_it = _cpu_batches(loader), _cpu_batches(t_loader) if t_loader else None
            total, logs_acc = 0.0, {}
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
                opt.zero_grad(set_to_none=True)
                loss, logs = meth.training_loss(model, make_batch(b, tb), epoch)
                loss.backward()
                opt.step()
                total += float(loss.detach())
                for k, v in logs.items():
                    logs_acc[k] = logs_acc.get(k, 0.0) + float(v) / n_steps
            return total / n_steps, logs_acc

        stats_graphs = _norm_stats_subset(train, int(cfg.norm_stats_graphs), cfg.seed)

        def score(names: list[str]) -> dict:
            res = {}
            for p in names:
                _, out = predict_graph(model, parts[p], meth, bs)
                res[p] = evaluate_outputs(scale.to_targets(out) if scale is not None else out,
                                          eval_y[p], cfg.task)
            return res

        def evaluate() -> dict:
            if stats_graphs:
                recompute_norm_stats(model, meth, stats_graphs, bs, dev)
            return score(eval_parts)

        # the kept states hold the statistics recomputed before their epoch's evaluation
        final = (lambda: score(final_parts)) if final_parts else None
        with batch_norm_updates(model, int(cfg.norm_updates_per_step)):
            return _fold_result(model, scale, _Loop(
                model, meth, cfg, train_epoch, evaluate, callback, checkpoint_dir,
                checkpoint_every, resume, dev, final_evaluate=final,
            ).run())
