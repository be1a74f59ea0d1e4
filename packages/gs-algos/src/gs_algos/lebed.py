"""LeBed re-training: the parameter-free-optimality criterion of a trained GNN on a test graph.

Reference: "Online GNN Evaluation Under Test-time Graph Distribution Shifts"
(``lebed-online-gnn-evaluation.txt``), section 2.2, eq. (4)-(8), algorithm 1, appendix D;
authors' code Amanda-Zheng/LEBED (``LEBED-cora-amz/evaluator_lebed_cora-amz.py``,
``LEBED-acm-dblp-citation/evaluator_lebed_domain.py``, ``LEBED-tempo-arxiv/evaluator_lebed_arxiv.py``
and their ``param_space.txt``).

S1 (eq. 4)
    Run the trained model (``theta*``) on the test graph: embeddings ``Z*`` and pseudo-labels
    ``argmax Y*``; the reference structure score ``g(Z*)`` (eq. 6-7,
    :func:`gs_metrics.lebed.structure_score`).
S2 (eq. 5, algorithm 1 lines 2-10)
    Re-train a copy of the model from its saved initial parameters ``theta_0`` with Adam and
    cross-entropy on the pseudo-labels. At each step compare ``g(Z_t)`` with ``g(Z*)``
    (:func:`gs_metrics.lebed.should_stop`); stop at the first step allowed by ``min_steps``
    whose discrepancy is below the tolerance, else after ``max_steps``.
S3 (eq. 8)
    ``LeBed = ||theta* - theta_t||_2`` (:func:`gs_metrics.lebed.parameter_distance`).

Where the paper is silent, the authors' code decides (each setting below says which):

* ``Z_t`` is the embedding of the *training* forward pass of step ``t`` (taken before that
  step's update), the parameters are those after the update (``train_norm`` in the authors'
  evaluators); ``structure_from="eval_forward"`` adds a separate forward after the update
  (our former behaviour).
* steps are counted from 0 as the authors' ``epoch``; the rule may fire at ``epoch >=
  min_steps`` (``atleastepoch``); ``stop_step`` reports ``epoch + 1`` updates.
* per-(dataset, model) learning rate, weight decay, step limit, ``min_steps`` and tolerance:
  :func:`authors_config` (their ``param_space.txt``).
* a model with batch norm (the authors' MLP, PyG ``MLP``'s default; gs-models ``lebed-mlp``):
  ``Z*`` and the pseudo-labels come from eval mode (the running averages of pre-training),
  ``Z_t`` from the train-mode forward (the test graph's own batch statistics); ``theta`` is the
  parameters without the buffers (their ``model.parameters()``). On the Cora feature shift this
  is what makes the MLP's rule fire after about 10 updates (paper Table A1: 9) instead of about
  60 (``apps/bench/checks/lebed_stop_steps.py``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import torch
import torch.nn.functional as F

from gs_algos.config import TrainConfig
from gs_algos.device import as_device, check_device, fork_rng_of, module_device
from gs_metrics.lebed import (
    parameter_distance,
    sample_non_edges,
    should_stop,
    structure_score,
    structure_tolerance,
)

__all__ = [
    "AUTHORS_SETTINGS",
    "LeBedConfig",
    "LeBedResult",
    "authors_config",
    "dataset_family",
    "lebed_score",
    "pretrain",
]


@dataclass(frozen=True)
class LeBedConfig:
    """Settings of the LeBed re-training (section 2.2, algorithm 1, appendix D).

    The defaults are the authors' values for Cora / GCN (``param_space.txt``:
    ``lr_frominit=0.001, wd_frominit=0.0005, epochs_frominit=500, lp_margin=0.03,
    atleastepoch=5``); :func:`authors_config` gives every (dataset, model) of their tables and
    :meth:`legacy` our former settings.

    Attributes
    ----------
    lr, weight_decay : float
        Adam settings of the re-training from ``theta_0`` (the paper does not state them).
    max_steps : int
        ``q`` of algorithm 1 (``epochs_frominit``). When the rule never fires the last step's
        parameters are used (as the authors do).
    min_steps : int
        The rule may fire at 0-based step (epoch) ``>= min_steps`` (``atleastepoch``).
    epsilon : float
        Tolerance on ``D_stru`` (eq. 6): absolute (``lp_margin``) or a fraction of ``|g(Z*)|``
        (``lp_margin_rate``, ``epsilon_mode="relative"``).
    epsilon_mode : {"absolute", "relative"}
    structure_from : {"train_forward", "eval_forward"}
        Which embedding ``Z_t`` the rule compares (module docstring).
    source : str
        Where the values come from (shown in reports).
    device : str
        Where the re-training runs (:mod:`gs_algos.device`): ``"auto"`` (default: CUDA when
        available), ``"cpu"``, ``"cuda"``, ``"cuda:<index>"``. The test graph and a copy of
        the model are moved there; the trained model is not touched.
    """

    lr: float = 1e-3
    weight_decay: float = 5e-4
    max_steps: int = 500
    min_steps: int = 5
    epsilon: float = 0.03
    epsilon_mode: Literal["absolute", "relative"] = "absolute"
    structure_from: Literal["train_forward", "eval_forward"] = "train_forward"
    source: str = "authors' param_space.txt, cora GCN"
    device: str = "auto"

    def __post_init__(self) -> None:
        check_device(self.device, "LeBedConfig.device")
        if self.max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {self.max_steps}")
        if not 0 <= self.min_steps < self.max_steps:
            raise ValueError(
                f"min_steps must lie in [0, max_steps={self.max_steps}), got {self.min_steps}"
            )
        if self.epsilon < 0:
            raise ValueError(f"epsilon must be >= 0, got {self.epsilon}")
        if self.epsilon_mode not in ("absolute", "relative"):
            raise ValueError(
                f"epsilon_mode must be 'absolute' or 'relative', got {self.epsilon_mode!r}"
            )
        if self.structure_from not in ("train_forward", "eval_forward"):
            raise ValueError(
                "structure_from must be 'train_forward' or 'eval_forward', "
                f"got {self.structure_from!r}"
            )
        if self.lr < 0 or self.weight_decay < 0:
            raise ValueError(f"lr and weight_decay must be >= 0, got {self.lr}, {self.weight_decay}")

    @classmethod
    def legacy(cls) -> LeBedConfig:
        """Our settings before the authors' protocol (gs 0.x): Adam lr 0.01, up to 300 steps,
        the rule from 1-based step 5 with absolute epsilon 0.01 on a separate evaluation
        forward. Kept as a named option; on real Cora it ranks graphs by stopping time."""
        return cls(
            lr=0.01, weight_decay=5e-4, max_steps=300, min_steps=4, epsilon=0.01,
            structure_from="eval_forward", source="gs legacy defaults",
        )

    def with_changes(self, **changes: Any) -> LeBedConfig:
        """A copy with some fields replaced (e.g. from a suite's settings)."""
        return replace(self, **changes)


# (dataset family, model) -> (lr, weight decay, max steps, min steps, epsilon, epsilon mode),
# transcribed from the authors' param_space.txt (Amanda-Zheng/LEBED). Families: "cora",
# "amazon-photo" (feature shift, absolute lp_margin), "acm" / "dblp" / "citation" (domain shift,
# source domain; their "network" is Citation; relative lp_margin_rate), "arxiv" (temporal).
AUTHORS_SETTINGS: dict[tuple[str, str], tuple[float, float, int, int, float, str]] = {
    ("cora", "gcn"): (1e-3, 5e-4, 500, 5, 0.03, "absolute"),
    ("cora", "gat"): (1e-3, 5e-4, 500, 5, 0.03, "absolute"),
    ("cora", "sage"): (1e-3, 5e-4, 500, 5, 0.03, "absolute"),
    ("cora", "gin"): (1e-4, 0.0, 500, 5, 0.04, "absolute"),
    ("cora", "mlp"): (1e-3, 5e-4, 500, 5, 0.03, "absolute"),
    ("amazon-photo", "gcn"): (5e-4, 0.0, 500, 5, 0.03, "absolute"),
    ("amazon-photo", "sage"): (5e-4, 0.0, 500, 5, 0.03, "absolute"),
    ("amazon-photo", "gat"): (5e-4, 0.0, 500, 5, 0.03, "absolute"),
    ("amazon-photo", "gin"): (5e-5, 0.0, 500, 5, 0.03, "absolute"),
    ("amazon-photo", "mlp"): (5e-5, 0.0, 500, 5, 0.0005, "absolute"),
    ("acm", "gcn"): (2e-3, 1e-4, 100, 10, 0.2, "relative"),
    ("acm", "gat"): (1e-4, 1e-4, 300, 30, 0.05, "relative"),
    ("acm", "sage"): (1e-3, 1e-5, 100, 5, 0.2, "relative"),
    ("acm", "gin"): (5e-4, 1e-5, 100, 10, 0.1, "relative"),
    ("acm", "mlp"): (1e-4, 1e-4, 100, 10, 0.03, "relative"),
    ("dblp", "gcn"): (5e-5, 1e-4, 200, 5, 0.03, "relative"),
    ("dblp", "gat"): (5e-5, 1e-5, 100, 10, 0.05, "relative"),
    ("dblp", "sage"): (5e-5, 5e-5, 300, 5, 0.1, "relative"),
    ("dblp", "gin"): (5e-5, 1e-4, 200, 5, 0.05, "relative"),
    ("dblp", "mlp"): (1e-5, 1e-3, 100, 30, 0.05, "relative"),
    ("citation", "gcn"): (5e-5, 1e-4, 100, 10, 0.05, "relative"),
    ("citation", "gat"): (5e-5, 1e-4, 100, 10, 0.03, "relative"),
    ("citation", "sage"): (1e-3, 1e-4, 100, 10, 0.15, "relative"),
    ("citation", "gin"): (5e-4, 5e-5, 300, 20, 0.15, "relative"),
    ("citation", "mlp"): (5e-5, 1e-4, 300, 20, 0.2, "relative"),
    ("arxiv", "gcn"): (5e-3, 1e-3, 1000, 50, 0.03, "relative"),
    ("arxiv", "gat"): (1e-2, 1e-3, 2000, 50, 0.05, "relative"),
    ("arxiv", "sage"): (5e-3, 1e-3, 2000, 50, 0.03, "relative"),
    ("arxiv", "gin"): (1e-2, 1e-3, 1000, 50, 0.25, "relative"),
    ("arxiv", "mlp"): (5e-3, 5e-3, 1000, 200, 0.03, "relative"),
}

_FAMILY = (
    ("amazon-photo", "amazon-photo"), ("photo", "amazon-photo"), ("cora", "cora"),
    ("acm", "acm"), ("dblp", "dblp"), ("citation", "citation"), ("network", "citation"),
    ("arxiv", "arxiv"),
)


def dataset_family(dataset: str) -> str | None:
    """The ``param_space.txt`` family of a gs dataset name (``"planetoid-cora"`` -> ``"cora"``,
    ``"acmv9"`` / ``"udagcn-acmv9"`` -> ``"acm"``, ...), or ``None``."""
    name = dataset.lower()
    for key, fam in _FAMILY:
        if key in name:
            return fam
    return None


def authors_config(dataset: str, model: str) -> LeBedConfig:
    """The authors' re-training settings for ``(dataset, model)`` (their ``param_space.txt``).

    Datasets outside their tables (e.g. the synthetic graph) get the Cora values of the same
    model, flagged in ``source``.
    """
    model = model.lower()
    fam = dataset_family(dataset)
    key = (fam or "cora", model)
    if key not in AUTHORS_SETTINGS:
        models = sorted({m for _, m in AUTHORS_SETTINGS})
        raise ValueError(f"no LeBed settings for model {model!r}; accepted: {', '.join(models)}")
    lr, wd, steps, min_steps, eps, mode = AUTHORS_SETTINGS[key]
    src = f"authors' param_space.txt, {key[0]} {model.upper()}"
    if fam is None:
        src += f" (used for {dataset}, which the authors did not run)"
    return LeBedConfig(
        lr=lr, weight_decay=wd, max_steps=steps, min_steps=min_steps, epsilon=eps,
        epsilon_mode=mode, source=src,  # type: ignore[arg-type]
    )


@dataclass(frozen=True)
class LeBedResult:
    """Outcome of :func:`lebed_score`.

    Attributes
    ----------
    score : float
        ``||theta* - theta_t||_2`` (eq. 8).
    stop_step : int
        Number of re-training updates whose parameters were used.
    stopped_early : bool
        True when the stopping rule fired, False when ``max_steps`` was reached.
    reference : float
        ``g(Z*)``.
    tolerance : float
        The absolute tolerance applied to ``D_stru``.
    structure_scores : list of float
        ``g(Z_t)`` at each step.
    """

    score: float
    stop_step: int
    stopped_early: bool
    reference: float
    tolerance: float
    structure_scores: list[float] = field(repr=False)


def _forward(model: torch.nn.Module, x, edge_index):
    out = model(x, edge_index)
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(
            "LeBed needs a model whose forward(x, edge_index) returns (embeddings, logits); "
            f"got {type(out).__name__}"
        )
    return out


def _params(model: torch.nn.Module) -> dict[str, np.ndarray]:
    return {k: v.detach().cpu().numpy() for k, v in model.named_parameters() if v.requires_grad}


def _checked_edges(model: torch.nn.Module, x: Any, edge_index: Any) -> np.ndarray:
    """``edge_index`` as a numpy array, after checking ``model``, ``x`` and the edges."""
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model)!r}")
    if not isinstance(x, torch.Tensor) or x.ndim != 2:
        raise TypeError("x must be a 2-D torch tensor of node features")
    ei_np = np.asarray(edge_index.detach().cpu() if isinstance(edge_index, torch.Tensor) else edge_index)
    if ei_np.ndim != 2 or ei_np.shape[0] != 2 or not np.issubdtype(ei_np.dtype, np.integer):
        raise ValueError(f"edge_index must be an integer array of shape (2, E), got {ei_np.shape}")
    n = x.shape[0]
    if ei_np.size and (ei_np.min() < 0 or ei_np.max() >= n):
        raise ValueError(f"edge_index must hold node indices in [0, {n})")
    return ei_np


def _eval_output(model: torch.nn.Module, x: torch.Tensor, ei_np: np.ndarray):
    """``model``'s eval-mode ``(embeddings, logits)`` on its own device; its mode is kept."""
    home = module_device(model)
    was_training = model.training
    model.eval()
    with torch.no_grad():
        out = _forward(model, x.to(home), torch.as_tensor(ei_np, dtype=torch.long, device=home))
    model.train(was_training)
    return out


def _step(model: torch.nn.Module, opt: torch.optim.Optimizer, x: torch.Tensor, ei: torch.Tensor,
          pseudo: torch.Tensor, structure_from: str) -> torch.Tensor:
    """One re-training step on the pseudo-labels; the embeddings the structure score reads
    (of the training forward pass, or of an eval-mode pass after the step)."""
    opt.zero_grad()
    z, logits = _forward(model, x, ei)
    F.cross_entropy(logits, pseudo).backward()
    opt.step()
    if structure_from == "eval_forward":
        model.eval()
        with torch.no_grad():
            z, _ = _forward(model, x, ei)
        model.train()
    return z


def lebed_score(
    model: torch.nn.Module,
    init_state: Mapping[str, torch.Tensor],
    x: torch.Tensor,
    edge_index: torch.Tensor,
    *,
    config: LeBedConfig | None = None,
    seed: int = 0,
    reference_output: tuple[torch.Tensor, torch.Tensor] | None = None,
    callback: Callable[[int, float, float], None] | None = None,
) -> LeBedResult:
    """LeBed score of a trained ``model`` on an unlabeled test graph ``(x, edge_index)``.

    Parameters
    ----------
    model : torch.nn.Module
        The trained model (``theta*``); ``forward(x, edge_index) -> (embeddings, logits)``.
        It is not modified (a deep copy is re-trained).
    init_state : mapping
        The model's saved initial ``state_dict`` (``theta_0``).
    x : Tensor, shape (M, d)
    edge_index : Tensor of int64, shape (2, E)
    config : LeBedConfig, optional
    seed : int
        Seeds the non-edge sample and torch's RNG inside a forked RNG state (dropout), so the
        result is reproducible and the global RNG is untouched.
    reference_output : (embeddings, logits), optional
        The trained model's eval-mode output on this graph, when the caller has it already
        (saves one forward pass).
    callback : callable, optional
        ``callback(step, structure_score, discrepancy)`` after each step.
    """
    cfg = config or LeBedConfig()
    ei_np = _checked_edges(model, x, edge_index)
    dev = as_device(cfg.device, "LeBedConfig.device")
    neg = sample_non_edges(ei_np, x.shape[0], ei_np.shape[1], np.random.default_rng(seed), strict=False)
    theta_star = _params(model)
    if reference_output is None:
        reference_output = _eval_output(model, x, ei_np)
    x = x.to(dev)
    ei = torch.as_tensor(ei_np, dtype=torch.long, device=dev)
    z_star, logits_star = reference_output
    pseudo = logits_star.detach().argmax(dim=1).to(dev)
    has_pairs = ei_np.shape[1] + neg.shape[1] > 0  # else g is NaN and the rule never fires
    reference = structure_score(z_star.detach().cpu().numpy(), ei_np, neg)
    tol = structure_tolerance(reference, cfg.epsilon, cfg.epsilon_mode)

    scores: list[float] = []
    stopped = False
    epoch = 0
    with fork_rng_of(dev):
        torch.manual_seed(seed)
        retrained = copy.deepcopy(model).to(dev)
        retrained.load_state_dict(init_state)
        params = [p for p in retrained.parameters() if p.requires_grad]
        # the fused kernel: one pass over all parameters (the per-tensor loop of the default
        # CPU Adam costs more than the forward pass of a small GNN)
        fused = all(p.device.type in ("cpu", "cuda") and p.is_floating_point() for p in params)
        opt = torch.optim.Adam(params, lr=cfg.lr, weight_decay=cfg.weight_decay, fused=fused or None)
        retrained.train()
        for epoch in range(cfg.max_steps):
            z = _step(retrained, opt, x, ei, pseudo, cfg.structure_from)
            g = structure_score(z.detach().cpu().numpy(), ei_np, neg) if has_pairs else float("nan")
            scores.append(g)
            if callback is not None:
                callback(epoch + 1, g, abs(g - reference))
            if should_stop(epoch, g, reference, tol, cfg.min_steps):
                stopped = True
                break
    return LeBedResult(
        score=parameter_distance(theta_star, _params(retrained)),
        stop_step=epoch + 1,
        stopped_early=stopped,
        reference=reference,
        tolerance=tol,
        structure_scores=scores,
    )


def pretrain(
    model: torch.nn.Module,
    train: Any,
    valid: Any,
    *,
    train_mask: torch.Tensor | None = None,
    valid_mask: torch.Tensor | None = None,
    num_classes: int | None = None,
    config: TrainConfig | None = None,
) -> Any:
    """Train the "well-trained" model of a LeBed set (section 3.1, "Online GNN Evaluation
    Protocol"): fit on the training graph, keep the epoch with the best validation accuracy.

    The authors' loop (``pretrain-lebed.py:117-155``; ``pretrain_gnn_domain.py``, the same):
    each epoch one full-batch Adam step on the training graph alone (train mode, cross-entropy
    over ``train_mask``), then the accuracy on the validation graph (eval mode, over
    ``valid_mask``); the parameters of the first epoch with the highest validation accuracy
    are kept (strictly higher than the best so far, from 0). The two graphs are run apart,
    so a batch norm's statistics (the ``lebed-mlp`` encoder) come from the training graph
    only; ``train`` and ``valid`` may also be the same graph with two masks (the domain shift
    with ``domain_pretrain = "masks"``). A mask of ``None`` is every node.

    ``config`` (a :class:`TrainConfig`) gives ``lr``, ``weight_decay``, ``max_epochs``,
    ``patience`` (stop after that many epochs without a better accuracy; ``None``: never),
    ``seed`` and ``device``; its default is the authors' ``pretrain-lebed.py`` (Adam lr 1e-3,
    weight decay 5e-4, 200 epochs, no patience). The model ends with the kept parameters, on
    the device it came in on. Returns a :class:`~gs_algos.engine.FitResult` with one track,
    ``"valid"``.
    """
    from gs_algos.engine import FitResult

    cfg = _pretrain_config(config)
    if train.x.shape[1] != valid.x.shape[1]:
        raise ValueError(
            f"train and valid graphs must share the feature width, got {train.x.shape[1]} "
            f"and {valid.x.shape[1]}"
        )
    dev = as_device(cfg.device, "TrainConfig.device")
    home = module_device(model)
    train_on, valid_on = _on_dev(train, train_mask, dev), _on_dev(valid, valid_mask, dev)
    model.to(dev)
    try:
        with fork_rng_of(dev):
            torch.manual_seed(int(cfg.seed))
            track, history = _pretrain_epochs(model, train_on, valid_on, cfg, num_classes)
        if track.state is not None:
            model.load_state_dict(track.state)
    finally:
        model.to(home)
    return FitResult(tracks={"valid": track}, history=history, epochs_run=len(history),
                     stopped_early=len(history) < int(cfg.max_epochs))


def _pretrain_config(config: TrainConfig | None) -> TrainConfig:
    """``config``, or the authors' ``pretrain-lebed.py`` settings; refused where it asks for
    what :func:`pretrain` would ignore."""
    cfg = config or TrainConfig(
        lr=1e-3, weight_decay=5e-4, max_epochs=200, patience=None,
        train_part="train", select_on=("valid",), metric="accuracy",
    )
    if cfg.metric != "accuracy" or cfg.batch_size is not None:
        raise ValueError(
            f"pretrain trains full-batch and keeps the best validation accuracy (the authors' loop); "
            f"config.metric={cfg.metric!r} and config.batch_size={cfg.batch_size!r} are not accepted "
            "here (use metric='accuracy', batch_size=None)"
        )
    return cfg


def _on_dev(g: Any, mask: torch.Tensor | None, dev: torch.device) -> tuple[torch.Tensor, ...]:
    """``(x, edge_index, y, mask)`` of graph ``g`` on ``dev`` (``mask=None``: every node)."""
    m = mask if mask is not None else torch.ones(g.num_nodes, dtype=torch.bool)
    m = m.to(dev)
    if int(m.sum()) == 0:
        raise ValueError("a pre-training mask selects no node")
    return g.x.to(dev), g.edge_index.to(dev), g.y.to(dev), m


def _pretrain_epochs(model: torch.nn.Module, train: tuple, valid: tuple, cfg: TrainConfig,
                     num_classes: int | None) -> tuple[Any, list[dict]]:
    """The authors' epochs (:func:`pretrain`): the kept :class:`~gs_algos.engine.Track` and
    the history."""
    from gs_algos.engine import Track

    (xt, et, yt, mt), (xv, ev, yv, mv) = train, valid
    track = Track(part="valid", value=0.0)
    history: list[dict] = []
    bad = 0
    opt = torch.optim.Adam(model.parameters(), lr=float(cfg.lr), weight_decay=float(cfg.weight_decay))
    for epoch in range(int(cfg.max_epochs)):
        model.train()
        opt.zero_grad(set_to_none=True)
        _, logits = model(xt, et)
        if num_classes is not None and logits.size(1) != int(num_classes):
            raise ValueError(f"the model outputs {logits.size(1)} classes, the labels "
                             f"have {num_classes}")
        loss = F.cross_entropy(logits[mt], yt[mt])
        loss.backward()
        opt.step()
        model.eval()
        with torch.no_grad():
            _, lv = model(xv, ev)
        acc = float((lv[mv].argmax(1) == yv[mv]).float().mean())
        history.append({"epoch": epoch, "train_loss": float(loss.detach()),
                        "metrics": {"valid": {"accuracy": acc}}})
        if acc > track.value:
            track = Track(part="valid", epoch=epoch, value=acc,
                          metrics={"valid": {"accuracy": acc}},
                          state={k: v.detach().cpu().clone() for k, v in model.state_dict().items()})
            bad = 0
        else:
            bad += 1
            if cfg.patience is not None and bad >= int(cfg.patience):
                break
    return track, history
