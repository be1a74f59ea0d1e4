"""The epoch loop shared by both levels (:class:`_Loop`): early stopping, selection tracks,
best-checkpoint restore, exact resume from a disk checkpoint and the per-epoch callback."""

from __future__ import annotations

import copy
import logging
import math
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch
from torch import nn

from gs_algos.checkpoint import CHECKPOINT_NAME, atomic_save, load_checkpoint
from gs_algos.config import TrainConfig
from gs_algos.engine.results import EpochInfo, FitResult, Track
from gs_algos.methods.base import Method

__all__ = ["batch_norm_updates"]

log = logging.getLogger(__name__)


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

    def _resume(self, opt: torch.optim.Optimizer) -> tuple[dict[str, Track], list[dict], int, int, bool]:
        """Load the checkpoint into the model, the method, ``opt`` and the RNGs; the run's
        ``(tracks, history, next epoch, bad epochs, stopped)``."""
        ck = load_checkpoint(self.ckpt_path, safe_globals=(Track,))
        if ck.get("config") != _config_key(self.config):
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
        log.info("resumed from %s at epoch %d", self.ckpt_path, ck["epoch"] + 1)
        return tracks, ck["history"], ck["epoch"] + 1, ck["bad"], ck["stopped"]

    def _train_epoch(self, epoch: int, opt: torch.optim.Optimizer, gen: torch.Generator) -> tuple[float, dict]:
        """One epoch of training, ``gen`` reseeded from ``(seed, epoch)``."""
        gen.manual_seed(self.config.seed * 1_000_003 + epoch)
        self.model.train()
        self.method.train()
        loss, logs = self.train_epoch(epoch, opt, gen)
        if not math.isfinite(loss):
            raise FloatingPointError(f"training loss became {loss} at epoch {epoch}")
        self.method.on_epoch_end(epoch)
        return loss, logs

    def _evaluate(self, epoch: int, tracks: dict[str, Track]) -> tuple[dict, dict[str, bool], bool]:
        """Evaluate, update the tracks that improved; ``(metrics, improved, reset patience)``."""
        cfg = self.config
        self.model.eval()
        self.method.eval()
        with torch.no_grad():
            metrics = self.evaluate()
        reset = False
        improved: dict[str, bool] = {}
        primary = cfg.select_on[0]
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
        return metrics, improved, reset

    def _save(self, opt: torch.optim.Optimizer, tracks: dict[str, Track], history: list[dict],
              epoch: int, bad: int, stopped: bool) -> None:
        atomic_save(
            {
                "config": _config_key(self.config),
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

    def _finish(self, tracks: dict[str, Track], history: list[dict], stopped: bool) -> FitResult:
        """Score the kept states on the final parts, restore the primary track's state."""
        cfg = self.config
        if self.final_evaluate is not None:
            self._score_kept(tracks)
        primary = cfg.select_on[0]
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

    def run(self) -> FitResult:
        cfg = self.config
        params = list(self.model.parameters()) + list(self.method.optimizer_parameters())
        opt = torch.optim.Adam(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
        tracks = {p: Track(part=p) for p in cfg.select_on}
        history: list[dict] = []
        start, bad, stopped = 0, 0, False
        torch.manual_seed(cfg.seed)
        if self.resume and self.ckpt_path is not None and self.ckpt_path.is_file():
            tracks, history, start, bad, stopped = self._resume(opt)
        gen = torch.Generator()
        primary = cfg.select_on[0]
        for epoch in range(start, cfg.max_epochs):
            if stopped:
                break
            loss, logs = self._train_epoch(epoch, opt, gen)
            rec = {"epoch": epoch, "train_loss": loss, **logs}
            improved: dict[str, bool] = {}
            metrics: dict = {}
            last = epoch == cfg.max_epochs - 1
            if (epoch + 1) % cfg.eval_every == 0 or last:
                metrics, improved, reset = self._evaluate(epoch, tracks)
                rec["metrics"] = metrics
                bad = 0 if reset else bad + 1
                if cfg.patience is not None and bad >= cfg.patience:
                    stopped = True
            history.append(rec)
            if log.isEnabledFor(logging.INFO) and (epoch % 10 == 0 or stopped or last):
                sel = metrics.get(primary, {}).get(cfg.metric, math.nan) if metrics else math.nan
                log.info(
                    "epoch %d/%d  train loss %.4f  %s %s %.4f  (best epoch %d)",
                    epoch, cfg.max_epochs, loss, primary, cfg.metric, sel, tracks[primary].epoch,
                )
            if self.ckpt_path is not None and ((epoch + 1) % self.checkpoint_every == 0 or stopped or last):
                self._save(opt, tracks, history, epoch, bad, stopped)
            if self.callback is not None and self.callback(
                EpochInfo(epoch, cfg.max_epochs, loss, logs, metrics, improved)
            ) is False:
                stopped = True
        return self._finish(tracks, history, stopped)


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

