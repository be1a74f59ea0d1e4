r"""EM training of the structured models of the edgewise-calibration paper: GMNN and EPFGNN.

The models (:class:`gs_models.GMNN`, :class:`gs_models.EPFGNN`) hold the networks and the
inference (sampling, mean field, loopy BP); the training loops live here, so that seeds,
logging, callbacks and devices work as for every other method:

* **pre-training** of the GNN backbone runs through the engine (:func:`gs_algos.engine.fit_node`)
  with the authors' acc-or-NLL early stopping (``pre_patience = 50`` in
  ``src/train_gmnn.py`` and ``src/train_epfgnn.py`` of hans66hsu/structured_uncertainty_metrics;
  the paper, appendix C.2, says "pre-train the GNN backbone for 200 epochs");
* **EM rounds**: GMNN (Qu et al. 2019) alternates an M-step (pseudo-likelihood of ``p`` on
  labels sampled from ``q``) and an E-step (``q`` fitted to ``p``'s conditionals);
  EPFGNN (Wang et al. 2021) alternates a mean-field E-step and a piecewise-likelihood M-step
  that stops when the validation accuracy has not improved for ``m_patience`` epochs
  (paper, appendix C.2: 10).

``variant="released"`` (the presets' default) follows the authors' released code
(hans66hsu/structured_uncertainty_metrics, ``src/train_gmnn.py``, ``src/train_epfgnn.py``,
``src/trainer/``); ``variant="ours-v1"`` keeps our first implementation. The model's
``config.variant`` must be the same.

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
from gs_algos.device import as_device, check_device, data_to, module_device
from gs_algos.engine import EpochInfo, FitResult, fit_node
from gs_models.configs import STRUCTURED_VARIANTS

__all__ = ["EMConfig", "EMResult", "fit_epfgnn", "fit_gmnn", "run_em_rounds"]

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
        (:class:`~gs_algos.config.TrainConfig` ``stopping="acc_or_nll"``; ``pre_patience = 50`` in
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
    em_patience
        Stop the EM rounds when the best validation accuracy has not improved for this many
        rounds (``em_patience = 5`` in the released ``src/train_epfgnn.py``). ``None``: all
        ``em_rounds``.
    lr, weight_decay
        Adam, the paper's GCN settings (0.01 and 5e-4).
    variant
        ``"released"`` or ``"ours-v1"`` (see :meth:`gmnn` and :meth:`epfgnn`).
    device
        Where the EM training runs (:mod:`gs_algos.device`): ``"auto"`` (default: CUDA when
        available), ``"cpu"``, ``"cuda"``, ``"cuda:<index>"``. The model and the graph are
        moved there for the run; the model comes back on the device it was given on and
        :attr:`EMResult.proposal` is put there too.
    """

    pretrain_epochs: int = 200
    pretrain_patience: int | None = 50
    m_epochs: int = 100
    e_epochs: int = 100
    em_rounds: int = 1
    m_patience: int | None = None
    em_patience: int | None = None
    lr: float = 0.01
    weight_decay: float = 5e-4
    variant: str = "released"
    device: str = "auto"

    def __post_init__(self) -> None:
        check_device(self.device, "EMConfig.device")
        for name in ("pretrain_epochs", "m_epochs", "e_epochs", "em_rounds"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{name} must be an integer >= 0, got {v!r}")
        if self.variant not in STRUCTURED_VARIANTS:
            raise ValueError(f"variant must be 'released' or 'ours-v1', got {self.variant!r}")
        for name in ("pretrain_patience", "m_patience", "em_patience"):
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
    def gmnn(cls, variant: str = "released", **changes) -> EMConfig:
        """GMNN (appendix C.2): 200 pre-training epochs, one round of 100 M and 100 E epochs.

        Both variants share the numbers (``pre_epoch, epoch = 200, 100`` and ``--iter 1`` in
        the released ``src/train_gmnn.py`` / ``src/utils.py``); they differ in the loop
        (:func:`fit_gmnn`).
        """
        return cls(**{"variant": variant, **changes})

    @classmethod
    def epfgnn(cls, variant: str = "released", **changes) -> EMConfig:
        """EPFGNN (appendix C.2): 200 pre-training epochs, M-steps with validation patience 10.

        ``"released"``: up to 100 EM rounds (``--epf_iter 100`` in ``src/utils.py``) of
        M-steps of at most 50 epochs (``pre_epoch, epoch = 200, 50``), validation patience 10
        and EM patience 5 rounds (``patience``, ``em_patience`` in ``src/train_epfgnn.py``).
        ``"ours-v1"``: one round with an M-step of at most 100 epochs and patience 10 (the
        paper's text read alone).
        """
        if variant == "released":
            base = {"em_rounds": 100, "m_epochs": 50, "m_patience": 10, "em_patience": 5}
        else:
            base = {"m_patience": 10}
        return cls(**{**base, "variant": variant, **changes})


@dataclass
class EMResult:
    """Outcome of an EM training run.

    Attributes
    ----------
    pretrain
        The engine's :class:`~gs_algos.engine.FitResult` of the backbone pre-training (``None`` when
        ``pretrain_epochs == 0``).
    history
        ``(stage, epoch, loss)`` per trained epoch, stage ``"pretrain"``, ``"m_step"`` or
        ``"e_step"``.
    epochs_run
        Epochs trained in total over all stages.
    em_rounds_run
        EM rounds run.
    proposal
        EPFGNN ``released``: the last E-step proposal ``(N, C)`` (probabilities, gold labels
        on the training nodes), from which the released test-time mean field makes one update.
    """

    pretrain: FitResult | None
    history: list[tuple[str, int, float]] = field(default_factory=list)
    epochs_run: int = 0
    em_rounds_run: int = 0
    proposal: Tensor | None = None


Callback = Callable[[EpochInfo], Any]


def _masks(data: Any, masks: Mapping[str, Tensor], n: int,
           device: torch.device) -> tuple[Tensor, Tensor | None]:
    if "train" not in masks:
        raise ValueError(f"masks must contain 'train' (and 'valid' for early stopping), got {sorted(masks)}")
    out = []
    for k in ("train", "valid"):
        m = masks.get(k)
        if m is not None:
            m = torch.as_tensor(m, device=device)
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
        device=cfg.device,
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


def _check_variant(model: torch.nn.Module, cfg: EMConfig) -> None:
    variant = getattr(getattr(model, "config", None), "variant", "ours-v1")
    if variant != cfg.variant:
        raise ValueError(
            f"the model's config.variant is {variant!r} but the EMConfig's is {cfg.variant!r}; "
            "build both with the same variant"
        )


def run_em_rounds(
    rounds: int, em_patience: int | None, m_step: Callable[[], float], e_step: Callable[[], Any]
) -> int:
    """The released EM loop (``src/train_epfgnn.py``, ``main``): per round an M-step, which
    returns the best validation accuracy so far, then an E-step; stop when that accuracy has
    not improved (strictly, from 0.0) for ``em_patience`` rounds. Returns the rounds run."""
    best, bad, done = 0.0, 0, 0
    for _ in range(rounds):
        acc = m_step()
        e_step()
        done += 1
        if acc > best:
            best, bad = acc, 0
        else:
            bad += 1
            if em_patience is not None and bad >= em_patience:
                break
    return done


def fit_gmnn(model: torch.nn.Module, data: Any, masks: Mapping[str, Tensor],
             config: EMConfig | None = None, *, seed: int = 0,
             callback: Callback | None = None) -> EMResult:
    r"""Train a :class:`gs_models.GMNN` by EM (GMNN, Qu et al. 2019; edgewise paper, appendix C.2).

    1. Pre-train ``q`` on the labelled nodes (engine, acc-or-NLL early stopping on ``valid``).
    2. M-step, each epoch: draw :math:`\hat y_n \sim q_\theta` for unlabelled nodes (gold labels
       for labelled ones) and minimise ``p``'s negative pseudo-likelihood (GMNN eq. 8).
    3. E-step, each epoch: train ``q`` on the gold labels plus, for unlabelled nodes, the soft
       targets :math:`p_\phi(y_n | \hat y_{NB(n)})` with :math:`\hat y \sim q`.

    ``masks``: ``{"train": bool (N,), "valid": bool (N,)}``; labels are ``data.y``.
    ``callback(EpochInfo)`` after every epoch (``info.logs["stage"]`` names the stage).

    ``config.variant == "released"`` (``src/train_gmnn.py``, ``train_p`` / ``train_q``): one
    label set is drawn from ``q`` per round (gold labels on training nodes) and kept for the
    whole round; the M-step trains ``p`` on all nodes to predict that label set from itself,
    the E-step trains ``q`` on all nodes towards ``softmax(p)`` on the same label set (gold on
    training nodes), both with the mean soft cross-entropy (``Trainer.update_soft``) and no
    early stopping. ``"ours-v1"``: the steps above, a fresh draw every epoch.
    """
    return _run_em(_fit_gmnn, model, data, masks, config or EMConfig.gmnn(), seed, callback)


def _run_em(fit, model, data, masks, cfg: EMConfig, seed: int, callback) -> EMResult:
    """Run ``fit`` with the model, graph and masks on ``cfg.device``, after checking that the
    model and ``cfg`` are of the same variant; the model (and the result's proposal) go back
    to the device the model came in on, also after an error."""
    _check_variant(model, cfg)
    dev = as_device(cfg.device, "EMConfig.device")
    home = module_device(model)
    model.to(dev)
    try:
        result = fit(model, data_to(data, dev), _masks(data, masks, data.x.size(0), dev), cfg,
                     seed, callback)
    finally:
        model.to(home)
    if result.proposal is not None:
        result.proposal = result.proposal.to(home)
    return result


def _fit_gmnn(model, data, masks, cfg: EMConfig, seed: int, callback) -> EMResult:
    x, ei = data.x, data.edge_index
    train, valid = masks
    result = EMResult(pretrain=None)
    _pretrain(model.q, data, train, valid, cfg, seed, callback, result)
    if cfg.variant == "released":
        _gmnn_released(model, x, ei, data.y.long().clamp(min=0), train, cfg, seed, callback, result)
        model.eval()
        return result
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
            result.em_rounds_run += 1
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


def _gmnn_released(model, x, ei, yl, train, cfg: EMConfig, seed: int, callback, result: EMResult) -> None:
    devices = [x.device.index or 0] if x.device.type == "cuda" else []
    c = model.out_channels
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        gen = torch.Generator().manual_seed(seed)
        opt_q = torch.optim.Adam(model.q.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        opt_p = torch.optim.Adam(model.p.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        gold = F.one_hot(yl, c).to(x.dtype)
        for _ in range(cfg.em_rounds):
            result.em_rounds_run += 1
            labels = model.sample_labels(x, ei, 1, gen, yl, train)[0]  # update_p_data
            inputs = F.one_hot(labels, c).to(x.dtype)
            for epoch in range(cfg.m_epochs):  # train_p
                model.p.train()
                opt_p.zero_grad()
                loss = F.cross_entropy(model.p(inputs, ei), labels)
                loss.backward()
                opt_p.step()
                _report(result, callback, "m_step", epoch, cfg.m_epochs, loss)
            model.p.eval()  # update_q_data: Trainer.predict
            with torch.no_grad():
                target = torch.softmax(model.p(inputs, ei), dim=1)
            target = torch.where(train.view(-1, 1), gold, target)
            for epoch in range(cfg.e_epochs):  # train_q
                model.q.train()
                opt_q.zero_grad()
                loss = -(target * torch.log_softmax(model.q(x, ei)[1], dim=1)).sum(1).mean()
                loss.backward()
                opt_q.step()
                _report(result, callback, "e_step", epoch, cfg.e_epochs, loss)


def _epfgnn_released(model, x, ei, yl, train, valid, cfg: EMConfig, seed: int, callback, result: EMResult) -> None:
    """``src/train_epfgnn.py`` (``init_target_p``, ``train_p``, ``update_target_p``, ``main``)
    with ``src/trainer/trainer_pwem.py``: the best validation accuracy and its model and
    optimiser state are kept across rounds, and every M-step ends by restoring them."""
    devices = [x.device.index or 0] if x.device.type == "cuda" else []
    c = model.out_channels
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        model.bind_graph(ei)
        opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        gold = F.one_hot(yl, c).to(x.dtype)
        has_valid = valid is not None and bool(valid.any())

        def proposal_step(target: Tensor) -> Tensor:
            model.eval()
            with torch.no_grad():
                return model.mean_field_step(model.unary(x, ei)[1], ei, target)

        model.eval()
        with torch.no_grad():  # init_target_p
            q0 = torch.softmax(model.unary(x, ei)[1], dim=1)
        state = {"target": torch.where(train.view(-1, 1), gold, q0), "best": 0.0, "saved": None}

        def m_step() -> float:
            bad = 0
            for epoch in range(cfg.m_epochs):
                model.train()
                opt.zero_grad()
                loss = model.star_piecewise_nll(model.unary(x, ei)[1], ei, state["target"])
                loss.backward()
                opt.step()
                _report(result, callback, "m_step", epoch, cfg.m_epochs, loss)
                q = proposal_step(state["target"])
                acc = float((q.argmax(1)[valid] == yl[valid]).float().mean()) if has_valid else 0.0
                if acc > state["best"]:
                    state["best"] = acc
                    state["saved"] = (copy.deepcopy(model.state_dict()), copy.deepcopy(opt.state_dict()))
                    bad = 0
                else:
                    bad += 1
                    if cfg.m_patience is not None and bad >= cfg.m_patience:
                        break
            if state["saved"] is not None:
                model.load_state_dict(state["saved"][0])
                opt.load_state_dict(state["saved"][1])
            return state["best"]

        def e_step() -> None:
            state["target"] = torch.where(train.view(-1, 1), gold, proposal_step(state["target"]))

        result.em_rounds_run = run_em_rounds(cfg.em_rounds, cfg.em_patience, m_step, e_step)
        result.proposal = state["target"]


def fit_epfgnn(model: torch.nn.Module, data: Any, masks: Mapping[str, Tensor],
               config: EMConfig | None = None, *, seed: int = 0,
               callback: Callback | None = None) -> EMResult:
    r"""Train a :class:`gs_models.EPFGNN` by EM (Wang et al. 2021; edgewise paper, appendix C.2).

    1. Pre-train the backbone on the labelled nodes (engine, acc-or-NLL early stopping).
    2. Per round, E-step: mean-field marginals ``q`` with the labelled nodes clamped (no
       gradient); M-step: backbone and compatibility ``W`` jointly on the piecewise likelihood
       with targets one-hot (labelled) / ``q`` (others). With ``m_patience`` the M-step keeps
       the epoch of best validation accuracy of the clamped mean-field marginals (its first
       epoch at least, as ``train_p`` in the authors' ``src/train_epfgnn.py``) and stops after
       ``m_patience`` epochs without a strict improvement.

    ``config.variant == "released"`` (``src/train_epfgnn.py``): the proposal starts at the
    pre-trained backbone's softmax (gold labels on training nodes); each round's M-step
    trains backbone, compatibility and ReZero edge weights on the star-piece objective
    (:meth:`gs_models.EPFGNN.star_piecewise_nll`) for at most ``m_epochs`` epochs, scoring
    each epoch by the validation accuracy of one mean-field update from the proposal, and
    restores the best state seen so far (in any round); the E-step replaces the proposal by one
    mean-field update from it; rounds stop on ``em_patience`` (:func:`run_em_rounds`).
    ``result.proposal`` is the last proposal.
    """
    return _run_em(_fit_epfgnn, model, data, masks, config or EMConfig.epfgnn(), seed, callback)


def _fit_epfgnn(model, data, masks, cfg: EMConfig, seed: int, callback) -> EMResult:
    x, ei = data.x, data.edge_index
    train, valid = masks
    result = EMResult(pretrain=None)
    _pretrain(model.backbone, data, train, valid, cfg, seed, callback, result)
    yl = data.y.long().clamp(min=0)
    if cfg.variant == "released":
        _epfgnn_released(model, x, ei, yl, train, valid, cfg, seed, callback, result)
        model.eval()
        return result
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
            result.em_rounds_run += 1
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
