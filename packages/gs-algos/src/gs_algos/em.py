r"""EM training of the structured models of the edgewise-calibration paper: GMNN and EPFGNN.

The models (:class:`gs_models.GMNN`, :class:`gs_models.EPFGNN`) hold the networks and the
inference (sampling, mean field, loopy BP); the training loops live here, so that seeds,
logging, callbacks and devices work as for every other method:

* **pre-training** of the GNN backbone runs through the engine (:func:`gs_algos.fit_node`)
  with the authors' acc-or-NLL early stopping (``pre_patience = 50`` in
  ``src/train_gmnn.py`` and ``src/train_epfgnn.py`` of hans66hsu/structured_uncertainty_metrics;
  the paper, appendix C.2, says "pre-train the GNN backbone for 200 epochs");
* **EM rounds**: GMNN (Qu et al. 2019) alternates an M-step (pseudo-likelihood of ``p`` on
  labels sampled from ``q``) and an E-step (``q`` fitted to ``p``'s conditionals);
  EPFGNN (Wang et al. 2021) alternates a mean-field E-step and a piecewise-likelihood M-step
  that stops when the validation accuracy has not improved for ``m_patience`` epochs
  (paper, appendix C.2: 10).

Everything runs inside ``torch.random.fork_rng`` seeded with ``seed`` (the caller's global
RNG is untouched); label draws use a generator seeded with ``seed``.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor

from gs_algos.config import TrainConfig
from gs_algos.engine import EpochInfo, FitResult, fit_node

__all__ = ["EMConfig", "EMResult", "fit_epfgnn", "fit_gmnn"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EMConfig:
    """EM schedule of the structured models (edgewise-calibration paper, appendix C.2).

    Parameters
    ----------
    pretrain_epochs
        At most this many pre-training epochs of the backbone (paper: 200).
    pretrain_patience
        Early stopping of the pre-training with the authors' acc-or-NLL rule
        (:class:`~gs_algos.TrainConfig` ``stopping="acc_or_nll"``; ``pre_patience = 50`` in
        ``src/train_gmnn.py`` / ``src/train_epfgnn.py``). ``None``: all ``pretrain_epochs``.
    m_epochs, e_epochs
        Epochs of the M-step and (GMNN only) of the E-step per round (paper: 100 and 100;
        EPFGNN's E-step is one mean-field inference).
    em_rounds
        Number of EM rounds (GMNN: ``--iter 1`` in the authors' ``src/utils.py``).
    m_patience
        EPFGNN: stop an M-step when the validation accuracy of the mean-field marginals has not
        improved (strictly) for this many epochs and restore the best epoch (paper: 10,
        following Wang et al.). ``None``: all ``m_epochs``.
    lr, weight_decay
        Adam, the paper's GCN settings (0.01 and 5e-4).
    """

    pretrain_epochs: int = 200
    pretrain_patience: int | None = 50
    m_epochs: int = 100
    e_epochs: int = 100
    em_rounds: int = 1
    m_patience: int | None = None
    lr: float = 0.01
    weight_decay: float = 5e-4

    def __post_init__(self) -> None:
        for name in ("pretrain_epochs", "m_epochs", "e_epochs", "em_rounds"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {v!r}")
        for name in ("pretrain_patience", "m_patience"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise ValueError(f"{name} must be None or an integer >= 1, got {v!r}")
        if not self.lr > 0:
            raise ValueError(f"lr must be > 0, got {self.lr!r}")
        if not self.weight_decay >= 0:
            raise ValueError(f"weight_decay must be >= 0, got {self.weight_decay!r}")

    def replace(self, **changes) -> EMConfig:
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)

    @classmethod
    def gmnn(cls, **changes) -> EMConfig:
        """GMNN (appendix C.2): 200 pre-training epochs, one round of 100 M and 100 E epochs."""
        return cls(**changes)

    @classmethod
    def epfgnn(cls, **changes) -> EMConfig:
        """EPFGNN (appendix C.2): 200 pre-training epochs, M-step with validation patience 10.

        The released ``src/train_epfgnn.py`` repeats up to 100 rounds of 50-epoch M-steps with
        an EM patience of 5 rounds; the paper's text and our default run one round of at most
        100 epochs (``em_rounds`` and ``m_epochs`` select the released schedule).
        """
        return cls(**{"m_patience": 10, **changes})


@dataclass
class EMResult:
    """Outcome of an EM training run.

    Attributes
    ----------
    pretrain
        The engine's :class:`~gs_algos.FitResult` of the backbone pre-training (``None`` when
        ``pretrain_epochs == 0``).
    history
        ``(stage, epoch, loss)`` per trained epoch, stage ``"pretrain"``, ``"m_step"`` or
        ``"e_step"``.
    epochs_run
        Epochs trained in total over all stages.
    """

    pretrain: FitResult | None
    history: list[tuple[str, int, float]] = field(default_factory=list)
    epochs_run: int = 0


Callback = Callable[[EpochInfo], Any]


def _masks(data: Any, masks: Mapping[str, Tensor], n: int) -> tuple[Tensor, Tensor | None]:
    if "train" not in masks:
        raise ValueError(f"masks must contain 'train' (and 'valid' for early stopping), got {sorted(masks)}")
    out = []
    for k in ("train", "valid"):
        m = masks.get(k)
        if m is not None:
            m = torch.as_tensor(m)
            if m.dtype != torch.bool or m.shape != (n,):
                raise ValueError(f"mask {k!r} must be a bool tensor of shape ({n},), got {m.dtype} {tuple(m.shape)}")
        out.append(m)
    if int(out[0].sum()) == 0:
        raise ValueError("the training mask 'train' selects no node")
    return out[0], out[1]


def _pretrain(backbone, data, train, valid, cfg: EMConfig, seed: int, callback, result: EMResult):
    if cfg.pretrain_epochs == 0:
        return
    parts = {"train": train, "valid": valid if valid is not None and bool(valid.any()) else train}
    tc = TrainConfig(
        lr=cfg.lr, weight_decay=cfg.weight_decay, max_epochs=cfg.pretrain_epochs,
        patience=cfg.pretrain_patience, train_part="train", select_on=("valid",),
        eval_parts=("valid",), metric="accuracy", stopping="acc_or_nll", seed=seed,
    )
    yl = data.y.clamp(min=0)
    d = copy.copy(data)
    d.y = yl
    res = fit_node(backbone, d, None, tc, masks=parts, callback=callback)
    result.pretrain = res
    result.history += [("pretrain", h["epoch"], float(h["train_loss"])) for h in res.history]
    result.epochs_run += res.epochs_run


def _report(result: EMResult, callback, stage: str, epoch: int, max_epochs: int, loss: Tensor) -> None:
    value = float(loss.detach())
    result.history.append((stage, epoch, value))
    result.epochs_run += 1
    if callback is not None:
        callback(EpochInfo(epoch, max_epochs, value, {"stage": stage}, {}, {}))


def fit_gmnn(
    model: torch.nn.Module,
    data: Any,
    masks: Mapping[str, Tensor],
    config: EMConfig | None = None,
    *,
    seed: int = 0,
    callback: Callback | None = None,
) -> EMResult:
    r"""Train a :class:`gs_models.GMNN` by EM (GMNN, Qu et al. 2019; edgewise paper, appendix C.2).

    1. Pre-train ``q`` on the labelled nodes (engine, acc-or-NLL early stopping on ``valid``).
    2. M-step, each epoch: draw :math:`\hat y_n \sim q_\theta` for unlabelled nodes (gold labels
       for labelled ones) and minimise ``p``'s negative pseudo-likelihood (GMNN eq. 8).
    3. E-step, each epoch: train ``q`` on the gold labels plus, for unlabelled nodes, the soft
       targets :math:`p_\phi(y_n | \hat y_{NB(n)})` with :math:`\hat y \sim q`.

    ``masks``: ``{"train": bool (N,), "valid": bool (N,)}``; labels are ``data.y``.
    ``callback(EpochInfo)`` after every epoch (``info.logs["stage"]`` names the stage).
    """
    cfg = config if config is not None else EMConfig.gmnn()
    x, ei = data.x, data.edge_index
    train, valid = _masks(data, masks, x.size(0))
    result = EMResult(pretrain=None)
    _pretrain(model.q, data, train, valid, cfg, seed, callback, result)
    devices = [x.device.index or 0] if x.device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        gen = torch.Generator().manual_seed(seed)
        c = model.out_channels
        yl = data.y.long().clamp(min=0)
        opt_q = torch.optim.Adam(model.q.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        opt_p = torch.optim.Adam(model.p.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)

        def sample_q() -> Tensor:
            model.q.eval()
            with torch.no_grad():
                prob = torch.softmax(model.q(x, ei)[1], dim=1)
            draw = torch.multinomial(prob.cpu(), 1, generator=gen).view(-1).to(x.device)
            return torch.where(train, yl, draw)

        unl = ~train
        for _ in range(cfg.em_rounds):
            for epoch in range(cfg.m_epochs):
                labels = sample_q()
                model.p.train()
                opt_p.zero_grad()
                loss = model.pseudo_likelihood_nll(labels, ei)
                loss.backward()
                opt_p.step()
                _report(result, callback, "m_step", epoch, cfg.m_epochs, loss)
            for epoch in range(cfg.e_epochs):
                labels = sample_q()
                model.p.eval()
                with torch.no_grad():
                    target = torch.softmax(model.p(F.one_hot(labels, c).to(x.dtype), ei), dim=1)
                model.q.train()
                opt_q.zero_grad()
                logq = torch.log_softmax(model.q(x, ei)[1], dim=1)
                loss = F.nll_loss(logq[train], yl[train])
                if bool(unl.any()):
                    loss = loss - (target[unl] * logq[unl]).sum(1).mean()
                loss.backward()
                opt_q.step()
                _report(result, callback, "e_step", epoch, cfg.e_epochs, loss)
    model.eval()
    log.info("GMNN: %d epochs in total (pre-training %d)", result.epochs_run,
             result.pretrain.epochs_run if result.pretrain else 0)
    return result


def fit_epfgnn(
    model: torch.nn.Module,
    data: Any,
    masks: Mapping[str, Tensor],
    config: EMConfig | None = None,
    *,
    seed: int = 0,
    callback: Callback | None = None,
) -> EMResult:
    r"""Train a :class:`gs_models.EPFGNN` by EM (Wang et al. 2021; edgewise paper, appendix C.2).

    1. Pre-train the backbone on the labelled nodes (engine, acc-or-NLL early stopping).
    2. Per round, E-step: mean-field marginals ``q`` with the labelled nodes clamped (no
       gradient); M-step: backbone and compatibility ``W`` jointly on the piecewise likelihood
       with targets one-hot (labelled) / ``q`` (others). With ``m_patience`` the M-step keeps
       the epoch of best validation accuracy of the clamped mean-field marginals (its first
       epoch at least, as ``train_p`` in the authors' ``src/train_epfgnn.py``) and stops after
       ``m_patience`` epochs without a strict improvement.
    """
    cfg = config if config is not None else EMConfig.epfgnn()
    x, ei = data.x, data.edge_index
    train, valid = _masks(data, masks, x.size(0))
    result = EMResult(pretrain=None)
    _pretrain(model.backbone, data, train, valid, cfg, seed, callback, result)
    yl = data.y.long().clamp(min=0)
    devices = [x.device.index or 0] if x.device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        onehot = F.one_hot(yl, model.out_channels).to(x.dtype)
        check = cfg.m_patience is not None and valid is not None and bool(valid.any())

        def val_acc() -> float:
            model.eval()
            with torch.no_grad():
                _, u = model.unary(x, ei)
                q = model.mean_field(u, ei, y=yl, observed_mask=train)
            return float((q.argmax(1)[valid] == yl[valid]).float().mean())

        for _ in range(cfg.em_rounds):
            model.eval()
            with torch.no_grad():
                _, u = model.unary(x, ei)
                q = model.mean_field(u, ei, y=yl, observed_mask=train).exp()
                targets = torch.where(train.view(-1, 1), onehot, q)
            # as src/train_epfgnn.py (train_p): the first M-step epoch is always kept
            best, best_state, bad = -1.0, None, 0
            for epoch in range(cfg.m_epochs):
                model.train()
                opt.zero_grad()
                _, u = model.unary(x, ei)
                loss = model.piecewise_nll(u, ei, targets)
                loss.backward()
                opt.step()
                _report(result, callback, "m_step", epoch, cfg.m_epochs, loss)
                if check:
                    acc = val_acc()
                    if acc > best:
                        best, best_state, bad = acc, copy.deepcopy(model.state_dict()), 0
                    else:
                        bad += 1
                        if bad >= cfg.m_patience:
                            break
            if best_state is not None:
                model.load_state_dict(best_state)
    model.eval()
    log.info("EPFGNN: %d epochs in total (pre-training %d)", result.epochs_run,
             result.pretrain.epochs_run if result.pretrain else 0)
    return result
