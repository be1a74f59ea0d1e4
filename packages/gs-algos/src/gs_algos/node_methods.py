"""The named node-classification methods of the structural-shifts paper (section 4).

Each entry of :data:`NODE_METHODS` trains one *run* of a method from a model factory and
returns a :class:`NodePrediction`: predictive probabilities, the OOD-detection score the
paper uses for it and the uncertainty measures. The runner only names the method; the
training objective, the number of members and how members are combined live here.

* Single models (``erm``/``se``, ``dann``, ``coral``, ``eerm``, ``mixup``):
  :class:`SingleModel` with a :mod:`gs_algos.methods` training method; SE scores OOD by
  the softmax entropy (paper section 4).
* ``de``: :class:`DeepEnsemble`, members trained side by side
  (:func:`gs_algos.ensemble.fit_stacked_node`) when they can be stacked, otherwise one by
  one; OOD score = knowledge uncertainty (mutual information; section 4, "DE ...
  separate[s] the knowledge uncertainty that is used for OOD detection"), as the authors'
  ``DefaultEnsembleLightningModule.get_knowledge_uncertainty``.
* ``gpn``, ``natpn``: :class:`DirichletModel`, the Bayesian loss (UCE minus
  ``entropy_weight`` x Dirichlet entropy) with the authors' weight ``beta = 0.001``
  (``configs/method_configs/{gpn,natpn}/standard_method_config.yaml``, ``loss_config``);
  OOD score = minus the total evidence ``alpha_0`` (authors' ``get_knowledge_uncertainty``
  of their Dirichlet models).
* ``gpe``, ``natpe``: :class:`DirichletEnsemble`, the Bayesian combination of the
  members (:func:`gs_algos.uncertainty.bayesian_combination`). The authors'
  ``DirichletEnsembleLightningModule`` sums the members' ``alpha`` *including* each
  member's prior (``alpha = sum_m alpha_m``); we follow the NatPN paper's combination
  (Charpentier et al. 2022, section 3.4: one prior plus the summed evidence), which the
  structural-shifts paper cites for GPE / NatPE. The two differ by ``(M - 1) * prior`` in
  every ``alpha_c``.

Seeds (:func:`member_seeds`): the authors seed run ``i`` (1-based) with ``42 + i``
(``ExperimentConfiguration.random_seed = 42``, ``sync_configs_during_experiment``:
``random_seed += init_no``); an ensemble's members are runs 1..5 of the single model
(``abstract_config: start_init_no 1, end_init_no 5``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor, nn

from gs_algos.config import TrainConfig
from gs_algos.engine import fit_node, predict_node, seeded
from gs_algos.methods.base import Method
from gs_algos.uncertainty import (
    BayesianLoss,
    bayesian_combination,
    dirichlet_alpha,
    dirichlet_uncertainties,
    ensemble_uncertainties,
    entropy,
)

__all__ = [
    "AUTHORS_BASE_SEED",
    "DeepEnsemble",
    "DirichletEnsemble",
    "DirichletModel",
    "NODE_METHODS",
    "NodePrediction",
    "SingleModel",
    "member_seeds",
    "node_method",
]

log = logging.getLogger(__name__)

#: ``ExperimentConfiguration.random_seed`` of the structural-shifts authors' code.
AUTHORS_BASE_SEED = 42


def member_seeds(run: int, num_members: int = 1, base: int = AUTHORS_BASE_SEED) -> list[int]:
    """Seeds of the members of run ``run`` (0-based): ``base + run * num_members + i`` for
    ``i = 1..num_members``. Run 0 of a single model is seed 43; run 0 of a 5-member
    ensemble is seeds 43..47, the authors' ``init_no`` 1..5 (see the module docstring)."""
    if run < 0 or num_members < 1:
        raise ValueError(f"run must be >= 0 and num_members >= 1, got {run!r}, {num_members!r}")
    return [base + run * num_members + i for i in range(1, num_members + 1)]


@dataclass
class NodePrediction:
    """One trained run of a named method.

    Attributes
    ----------
    probs
        ``(N, C)`` predictive probabilities.
    ood_score
        ``(N,)`` the method's OOD-detection score (higher = more likely OOD).
    measures
        ``{"total", "data", "knowledge"}`` uncertainties ``(N,)`` (higher = more uncertain).
    best_epochs
        The restored epoch of every member.
    models
        The trained members (best weights, eval mode).
    """

    probs: Tensor
    ood_score: Tensor
    measures: dict[str, Tensor]
    best_epochs: list[int]
    models: list[nn.Module] = field(default_factory=list)


Build = Callable[[], nn.Module]


class NodeMethod:
    """A named method: :meth:`fit` trains one run and predicts every node."""

    name = "base"
    num_members = 1

    def fit(
        self,
        build: Build,
        data: Any,
        config: TrainConfig,
        *,
        run: int = 0,
        masks: Mapping[str, Tensor] | None = None,
        domain: Tensor | None = None,
        num_classes: int | None = None,
    ) -> NodePrediction:
        raise NotImplementedError

    def seeds(self, run: int) -> list[int]:
        return member_seeds(run, self.num_members)

    def _train(self, build, data, config, seed, masks, domain, num_classes, method: Method):
        model = seeded(build, seed)
        res = fit_node(model, data, method, config.replace(seed=seed), masks=masks,
                       domain=domain, num_classes=num_classes)
        return model, res.best.epoch


class SingleModel(NodeMethod):
    """One model trained with a :mod:`gs_algos.methods` method; SE uncertainty."""

    def __init__(self, name: str, method: Callable[[], Method]) -> None:
        self.name = name
        self.method_factory = method

    def fit(self, build, data, config, *, run=0, masks=None, domain=None, num_classes=None):
        (seed,) = self.seeds(run)
        meth = self.method_factory()
        model, epoch = self._train(build, data, config, seed, masks, domain, num_classes, meth)
        _, logits = predict_node(model, data, meth)
        probs = torch.softmax(logits, -1)
        h = entropy(probs)
        return NodePrediction(probs, h, {"total": h, "data": h, "knowledge": h}, [epoch], [model])


class DeepEnsemble(NodeMethod):
    """Deep Ensemble of ``num_members`` cross-entropy members (5 in the paper).

    ``batched=True`` trains stackable members (:func:`gs_algos.ensemble.stackable`) side
    by side without early stopping; otherwise (or with early stopping) one by one.
    """

    name = "de"

    def __init__(self, num_members: int = 5, batched: bool = True) -> None:
        if num_members < 2:
            raise ValueError(f"an ensemble needs num_members >= 2, got {num_members}")
        self.num_members = int(num_members)
        self.batched = bool(batched)

    def fit(self, build, data, config, *, run=0, masks=None, domain=None, num_classes=None):
        from gs_algos.ensemble import fit_stacked_node, stackable
        from gs_algos.methods.robust import ERM

        seeds = self.seeds(run)
        models = [seeded(build, s) for s in seeds]
        if self.batched and config.patience is None and config.batch_size is None and stackable(models):
            # one seed for the shared dropout draws of the stack: the first member's
            res = fit_stacked_node(models, data, config.replace(seed=seeds[0]), masks=masks)
            epochs = res.best_epochs
        else:
            epochs = []
            for s, model in zip(seeds, models, strict=True):
                r = fit_node(model, data, ERM(), config.replace(seed=s), masks=masks,
                             domain=domain, num_classes=num_classes)
                epochs.append(r.best.epoch)
        member_probs = torch.stack([torch.softmax(predict_node(m, data)[1], -1) for m in models])
        unc = ensemble_uncertainties(member_probs)
        return NodePrediction(member_probs.mean(0), unc["knowledge"], unc, epochs, models)


class DirichletModel(NodeMethod):
    """GPN / NatPN: a model returning ``(embeddings, alpha)`` trained with the Bayesian
    loss; OOD score = ``-alpha_0``.

    ``flow_stages=True`` (default) runs the authors' three stages, each with the full
    protocol (``config.max_epochs``, lowest Valid-In loss restored) and starting from the
    previous stage's restored weights: a flow-only warm-up, the training of every
    parameter, a flow-only fine-tuning (``configs/method_configs/{gpn,natpn}/
    standard_method_config.yaml``: ``warmup_module`` / ``train_module`` /
    ``finetune_module``; the flow stages use Adam lr ``flow_lr`` = 1e-3 without weight
    decay, ``Graph/NaturalPosteriorFlowLightningModule.configure_optimizers``). A model
    without a ``flow`` submodule trains in one stage.
    """

    def __init__(self, name: str, entropy_weight: float = 1e-3, flow_stages: bool = True,
                 flow_lr: float = 1e-3) -> None:
        self.name = name
        self.entropy_weight = float(entropy_weight)
        self.flow_stages = bool(flow_stages)
        self.flow_lr = float(flow_lr)

    def _train(self, build, data, config, seed, masks, domain, num_classes, method):
        model = seeded(build, seed)
        flow = getattr(model, "flow", None)
        stages = ["flow", "all", "flow"] if self.flow_stages and isinstance(flow, nn.Module) else ["all"]
        epoch = -1
        for i, stage in enumerate(stages):
            cfg = config.replace(seed=seed + 1000 * i)
            if stage == "flow":
                cfg = cfg.replace(lr=self.flow_lr, weight_decay=0.0)
            epoch = _fit_stage(model, data, method, cfg, masks, domain, num_classes,
                               only=flow if stage == "flow" else None)
        return model, epoch

    def _fit_members(self, build, data, config, seeds, masks, domain, num_classes):
        alphas, epochs, models = [], [], []
        for s in seeds:
            meth = BayesianLoss(self.entropy_weight)
            model, epoch = self._train(build, data, config, s, masks, domain, num_classes, meth)
            alphas.append(dirichlet_alpha(model, data))
            epochs.append(epoch)
            models.append(model)
        return alphas, epochs, models

    @staticmethod
    def _prediction(alpha, epochs, models) -> NodePrediction:
        unc = dirichlet_uncertainties(alpha)
        probs = alpha / alpha.sum(-1, keepdim=True)
        return NodePrediction(probs, unc["evidence"], unc, epochs, models)

    def fit(self, build, data, config, *, run=0, masks=None, domain=None, num_classes=None):
        alphas, epochs, models = self._fit_members(
            build, data, config, self.seeds(run), masks, domain, num_classes
        )
        return self._prediction(alphas[0], epochs, models)


class DirichletEnsemble(DirichletModel):
    """GPE / NatPE: Bayesian combination of ``num_members`` Dirichlet models."""

    def __init__(self, name: str, num_members: int = 5, entropy_weight: float = 1e-3) -> None:
        super().__init__(name, entropy_weight)
        if num_members < 2:
            raise ValueError(f"an ensemble needs num_members >= 2, got {num_members}")
        self.num_members = int(num_members)

    def fit(self, build, data, config, *, run=0, masks=None, domain=None, num_classes=None):
        alphas, epochs, models = self._fit_members(
            build, data, config, self.seeds(run), masks, domain, num_classes
        )
        return self._prediction(bayesian_combination(alphas), epochs, models)


def _fit_stage(model, data, method, cfg, masks, domain, num_classes, only=None) -> int:
    """One training stage; with ``only`` set, every other parameter is frozen."""
    frozen = []
    if only is not None:
        keep = {id(p) for p in only.parameters()}
        frozen = [p for p in model.parameters() if id(p) not in keep and p.requires_grad]
        for p in frozen:
            p.requires_grad_(False)
    try:
        res = fit_node(model, data, method, cfg, masks=masks, domain=domain,
                       num_classes=num_classes)
    finally:
        for p in frozen:
            p.requires_grad_(True)
    return res.best.epoch


def _robust(name: str) -> Callable[[], Method]:
    def make() -> Method:
        from gs_algos.methods import METHODS

        return METHODS[name]()

    return make


#: name -> factory ``(num_members) -> NodeMethod`` (``num_members`` is used by ensembles).
NODE_METHODS: dict[str, Callable[[int], NodeMethod]] = {
    "erm": lambda k: SingleModel("erm", _robust("erm")),
    "dann": lambda k: SingleModel("dann", _robust("dann")),
    "coral": lambda k: SingleModel("coral", _robust("coral")),
    "eerm": lambda k: SingleModel("eerm", _robust("eerm")),
    "mixup": lambda k: SingleModel("mixup", _robust("mixup")),
    "de": lambda k: DeepEnsemble(k),
    "gpn": lambda k: DirichletModel("gpn"),
    "natpn": lambda k: DirichletModel("natpn"),
    "gpe": lambda k: DirichletEnsemble("gpe", k),
    "natpe": lambda k: DirichletEnsemble("natpe", k),
}


def node_method(name: str, num_members: int = 5) -> NodeMethod:
    """The named method ``name`` (one of :data:`NODE_METHODS`; ``se`` is ``erm``)."""
    key = {"se": "erm"}.get(name, name)
    if key not in NODE_METHODS:
        raise ValueError(f"unknown node method {name!r}; accepted: {sorted([*NODE_METHODS, 'se'])}")
    return NODE_METHODS[key](num_members)

