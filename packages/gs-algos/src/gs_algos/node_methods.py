"""The named node-classification methods of the structural-shifts paper (section 4).

Each entry of :data:`NODE_METHODS` trains one *run* of a method from a model factory and
returns a :class:`NodePrediction`: predictive probabilities, the OOD-detection score the
paper uses for it and the uncertainty measures. The runner only names the method; the
training objective, the number of members and how members are combined live here.

* Single models (``erm``/``se``, ``dann``, ``coral``, ``eerm``, ``mixup``):
  :class:`SingleModel` with a :mod:`gs_algos.methods` training method; SE scores OOD by
  the softmax entropy (paper section 4). DANN, CORAL, Mixup and EERM use the GOOD
  benchmark's formulations (``variant="good"``; the paper trained them "using the
  experimental framework from the GOOD benchmark", section 4) unless
  ``robustness_variant="ours-v1"`` is asked for (:func:`node_method`). The training
  protocol stays the paper's (the structural-shifts preset: Adam lr 3e-4, weight decay
  1e-5, appendix F; the checkpoint of the lowest Valid-In loss, section 3.1), where GOOD's
  own GOODCora configs use lr 1e-3 (EERM 5e-3), no weight decay, 100 epochs (EERM 50) of
  10 GraphSAINT steps and keep the checkpoints of the best ID- and OOD-validation
  *accuracy* (``basic_pipeline.py`` ``save_epoch``).
* ``de``: :class:`DeepEnsemble`, members trained side by side
  (:func:`gs_algos.ensemble.fit_stacked_node`) when they can be stacked, otherwise one by
  one; OOD score = knowledge uncertainty (mutual information; section 4, "DE ...
  separate[s] the knowledge uncertainty that is used for OOD detection"), as the authors'
  ``DefaultEnsembleLightningModule.get_knowledge_uncertainty``.
* ``gpn``, ``natpn``: :class:`DirichletModel`, the Bayesian loss (UCE minus
  ``entropy_weight`` x Dirichlet entropy) with the authors' weight ``beta = 0.001``
  (``configs/method_configs/{gpn,natpn}/standard_method_config.yaml``, ``loss_config``);
  OOD score = knowledge uncertainty, the mutual information of the Dirichlet (the authors'
  ``DirichletNetworkModel.get_knowledge_uncertainty``, ``source/layers/
  dirichlet_network_model.py``: total minus expected entropy; the ``-alpha_0`` version
  there is commented out).
* ``gpe``, ``natpe``: :class:`DirichletEnsemble`, the Bayesian combination of the
  members (:func:`gs_algos.uncertainty.bayesian_combination`); OOD score = minus the total
  evidence ``alpha_0`` (the authors' ``DirichletEnsembleLightningModule.
  get_knowledge_uncertainty``). The authors'
  ``DirichletEnsembleLightningModule`` sums the members' ``alpha`` *including* each
  member's prior (``alpha = sum_m alpha_m``); we follow the NatPN paper's combination
  (Charpentier et al. 2022, section 3.4: one prior plus the summed evidence), which the
  structural-shifts paper cites for GPE / NatPE. The two differ by ``(M - 1) * prior`` in
  every ``alpha_c``.

Shared members (:class:`MemberCache`): the authors train the single models and the ensembles
as separate experiments with the same configuration and seeds (``mpn`` runs 1..3 and
``mpe`` runs 1..5 of ``default_message_passing_network``; ``gpn`` / ``natpn`` runs 1..5,
which ``gpe`` / ``natpe`` ensemble), so SE run ``i`` *is* DE member ``i`` and GPN run ``i``
is GPE member ``i``. With a cache passed to :meth:`NodeMethod.fit`, a member is trained
once and loaded by every method of its family (``erm``/``de``, ``gpn``/``gpe``,
``natpn``/``natpe``); the cache key holds everything the member's training depends on.

Seeds (:func:`member_seeds`): the authors seed run ``i`` (1-based) with ``42 + i``
(``ExperimentConfiguration.random_seed = 42``, ``sync_configs_during_experiment``:
``random_seed += init_no``); an ensemble's members are runs 1..5 of the single model
(``abstract_config: start_init_no 1, end_init_no 5``).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from gs_algos.config import TrainConfig
from gs_algos.device import as_device
from gs_algos.engine import fit_node, predict_node, seeded
from gs_algos.methods.base import Method
from gs_algos.methods.robust import check_variant
from gs_algos.names import (
    ALIASES,
    BUILTIN_METHODS,
    DEFAULT_ROBUSTNESS_VARIANT,
    ROBUSTNESS_METHODS,
    ROBUSTNESS_VARIANTS,
    canonical_method,
)
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
    "BUILTIN_NODE_METHODS",
    "DeepEnsemble",
    "DirichletEnsemble",
    "DirichletModel",
    "MemberCache",
    "NODE_METHODS",
    "NodePrediction",
    "ROBUSTNESS_METHODS",
    "ROBUSTNESS_VARIANTS",
    "SingleModel",
    "available_node_methods",
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


class MemberCache:
    """Trained members on disk, shared by the methods of one family (see the module
    docstring): ``root/<key>.pt`` holds a member's restored weights and epoch.

    ``tag`` names what the caller knows and the member's training does not show: the
    dataset and its split, the model preset. :meth:`key` adds the family, the seed, the
    :class:`~gs_algos.config.TrainConfig` and the model's parameter shapes. Writes are atomic, and a
    member missing from the cache is trained under a lock (``<key>.pt.lock``), so processes
    that need it at once train it once.
    """

    def __init__(self, root: str | Path, tag: str) -> None:
        self.root = Path(root)
        self.tag = str(tag)
        self.hits = 0

    def key(self, family: str, seed: int, config: TrainConfig, model: nn.Module,
            extra: str = "") -> str:
        shapes = ";".join(f"{k}:{tuple(v.shape)}" for k, v in model.state_dict().items())
        # identity(): the config without its device (a member is the same on CPU and GPU)
        text = "\n".join([self.tag, family, str(int(seed)), config.replace(seed=int(seed)).identity(),
                          type(model).__qualname__, shapes, extra])
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def path(self, key: str) -> Path:
        return self.root / f"{key}.pt"

    def load(self, key: str, model: nn.Module) -> int | None:
        """Load the member ``key`` into ``model`` (eval mode) and return its restored epoch,
        or ``None`` if it is not cached (an unreadable file counts as not cached)."""
        path = self.path(key)
        if not path.is_file():
            return None
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
            model.load_state_dict(state["model"])
        except Exception as exc:  # noqa: BLE001 - a damaged entry is retrained, not fatal
            log.warning("member cache: ignoring unreadable %s (%s)", path, exc)
            return None
        model.eval()
        self.hits += 1
        return int(state["epoch"])

    def load_or_train(self, key: str, model: nn.Module,
                      train: Callable[[nn.Module], int]) -> tuple[int, bool]:
        """The member ``key`` loaded into ``model``, or trained with ``train(model) -> epoch``
        and stored; returns ``(epoch, loaded)``. A missing member is trained under a lock
        (``<key>.pt.lock``, :func:`gs_algos.checkpoint.member_lock`; issue 34): a second process
        that needs it meanwhile waits and loads what the first stored instead of training it
        again."""
        from gs_algos.checkpoint import member_lock

        epoch = self.load(key, model)
        if epoch is not None:
            return epoch, True
        with member_lock(self.path(key)):
            epoch = self.load(key, model)
            if epoch is not None:
                return epoch, True
            epoch = int(train(model))
            self.save(key, model, epoch)
        return epoch, False

    def save(self, key: str, model: nn.Module, epoch: int) -> None:
        from gs_algos.checkpoint import atomic_save

        state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
        try:
            atomic_save({"model": state, "epoch": int(epoch)}, self.path(key))
        except (OSError, RuntimeError) as exc:  # torch.save on a full disk: RuntimeError
            # the cache is optional: the job has its member in memory and goes on (issue 34)
            log.warning("member cache: could not write %s (%s); the job goes on without "
                        "caching this member", self.path(key), " ".join(str(exc).split())[:200])


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
        cache: MemberCache | None = None,
    ) -> NodePrediction:
        """Train run ``run`` (members seeded by :meth:`seeds`) and predict every node.
        With ``cache``, members already trained by a method of the same family are
        loaded instead of trained again, and new ones are stored."""
        raise NotImplementedError

    #: methods with the same family train identical members (``erm`` and ``de``)
    family = "base"

    def _member(self, build, seed, config, cache, train: Callable[[nn.Module], int],
                extra: str = "") -> tuple[nn.Module, int]:
        """Build the member of ``seed`` and train it with ``train(model) -> epoch``, or
        load it from ``cache``."""
        model = seeded(build, seed)
        if cache is None:
            return model, train(model)
        epoch, _ = cache.load_or_train(cache.key(self.family, seed, config, model, extra), model, train)
        return model, epoch

    def seeds(self, run: int) -> list[int]:
        return member_seeds(run, self.num_members)

    def _train(self, build, data, config, seed, masks, domain, num_classes, method: Method,
               cache: MemberCache | None = None):
        def train(model: nn.Module) -> int:
            res = fit_node(model, data, method, config.replace(seed=seed), masks=masks,
                           domain=domain, num_classes=num_classes)
            return res.best.epoch

        return self._member(build, seed, config, cache, train)


class SingleModel(NodeMethod):
    """One model trained with a :mod:`gs_algos.methods` method; SE uncertainty.

    ``norm_updates`` (if given) replaces the config's ``norm_updates_per_step``: the
    robustness methods of the structural-shifts paper were trained in the GOOD framework,
    whose training step runs the model once, not with the authors' modules (4 passes).
    """

    def __init__(self, name: str, method: Callable[[], Method],
                 norm_updates: int | None = None) -> None:
        self.name = name
        self.family = name
        self.method_factory = method
        self.norm_updates = norm_updates

    def fit(self, build, data, config, *, run=0, masks=None, domain=None, num_classes=None,
            cache=None):
        (seed,) = self.seeds(run)
        if self.norm_updates is not None:
            config = config.replace(norm_updates_per_step=self.norm_updates)
        with torch.device(as_device(config.device, "TrainConfig.device")):
            meth = self.method_factory()  # its buffers on the training device from the start
        # only ERM members are shared (with DE); a robustness method's trained state (e.g.
        # EERM's explorers) is not part of a member
        model, epoch = self._train(build, data, config, seed, masks, domain, num_classes, meth,
                                   cache if self.name == "erm" else None)
        _, logits = predict_node(model, data, meth)
        probs = torch.softmax(logits, -1)
        h = entropy(probs)
        return NodePrediction(probs, h, {"total": h, "data": h, "knowledge": h}, [epoch], [model])


class DeepEnsemble(NodeMethod):
    """Deep Ensemble of ``num_members`` cross-entropy members (5 in the paper).

    ``batched=True`` trains stackable members (:func:`gs_algos.ensemble.stackable`) side
    by side without early stopping; otherwise (or with early stopping, or with a member
    cache) one by one, each exactly as the ``erm`` run of its seed (the same family).
    """

    name = "de"
    family = "erm"

    def __init__(self, num_members: int = 5, batched: bool = True) -> None:
        if num_members < 2:
            raise ValueError(f"an ensemble needs num_members >= 2, got {num_members}")
        self.num_members = int(num_members)
        self.batched = bool(batched)

    def fit(self, build, data, config, *, run=0, masks=None, domain=None, num_classes=None,
            cache=None):
        from gs_algos.ensemble import fit_stacked_node, stackable
        from gs_algos.methods.robust import ERM

        seeds = self.seeds(run)
        if cache is not None:
            models, epochs = [], []
            for s in seeds:
                model, epoch = self._train(build, data, config, s, masks, domain, num_classes,
                                           ERM(), cache)
                models.append(model)
                epochs.append(epoch)
            return self._combine(models, data, epochs)
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
        return self._combine(models, data, epochs)

    @staticmethod
    def _combine(models, data, epochs) -> NodePrediction:
        member_probs = torch.stack([torch.softmax(predict_node(m, data)[1], -1) for m in models])
        unc = ensemble_uncertainties(member_probs)
        return NodePrediction(member_probs.mean(0), unc["knowledge"], unc, epochs, models)


class DirichletModel(NodeMethod):
    """GPN / NatPN: a model returning ``(embeddings, alpha)`` trained with the Bayesian
    loss; OOD score = the knowledge uncertainty (mutual information), as the authors'
    single Dirichlet models.

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
                 flow_lr: float = 1e-3, family: str | None = None) -> None:
        self.name = name
        self.family = family or name
        self.entropy_weight = float(entropy_weight)
        self.flow_stages = bool(flow_stages)
        self.flow_lr = float(flow_lr)

    def _train(self, build, data, config, seed, masks, domain, num_classes, method, cache=None):
        def train(model: nn.Module) -> int:
            flow = getattr(model, "flow", None)
            stages = (["flow", "all", "flow"] if self.flow_stages and isinstance(flow, nn.Module)
                      else ["all"])
            epoch = -1
            for i, stage in enumerate(stages):
                cfg = config.replace(seed=seed + 1000 * i)
                if stage == "flow":
                    # the authors' flow modules run the model once per step
                    cfg = cfg.replace(lr=self.flow_lr, weight_decay=0.0, norm_updates_per_step=1)
                elif cfg.norm_updates_per_step > 1:
                    # their GPN / NatPN modules: the loss's pass + data (1) + knowledge (total
                    # and data: 2) + total (1) uncertainty passes, one more than MPN's
                    cfg = cfg.replace(norm_updates_per_step=cfg.norm_updates_per_step + 1)
                epoch = _fit_stage(model, data, method, cfg, masks, domain, num_classes,
                                   only=flow if stage == "flow" else None)
            return epoch

        extra = f"bayes {self.entropy_weight!r} stages {self.flow_stages} flow_lr {self.flow_lr!r}"
        return self._member(build, seed, config, cache, train, extra)

    def _fit_members(self, build, data, config, seeds, masks, domain, num_classes, cache=None):
        alphas, epochs, models = [], [], []
        for s in seeds:
            meth = BayesianLoss(self.entropy_weight)
            model, epoch = self._train(build, data, config, s, masks, domain, num_classes, meth,
                                       cache)
            alphas.append(dirichlet_alpha(model, data))
            epochs.append(epoch)
            models.append(model)
        return alphas, epochs, models

    #: which of :func:`~gs_algos.uncertainty.dirichlet_uncertainties` scores OOD
    ood_measure = "knowledge"

    def _prediction(self, alpha, epochs, models) -> NodePrediction:
        unc = dirichlet_uncertainties(alpha)
        probs = alpha / alpha.sum(-1, keepdim=True)
        return NodePrediction(probs, unc[self.ood_measure], unc, epochs, models)

    def fit(self, build, data, config, *, run=0, masks=None, domain=None, num_classes=None,
            cache=None):
        alphas, epochs, models = self._fit_members(
            build, data, config, self.seeds(run), masks, domain, num_classes, cache
        )
        return self._prediction(alphas[0], epochs, models)


class DirichletEnsemble(DirichletModel):
    """GPE / NatPE: Bayesian combination of ``num_members`` Dirichlet models; OOD score =
    ``-alpha_0`` of the combination (the authors' ensemble module)."""

    ood_measure = "evidence"

    def __init__(self, name: str, num_members: int = 5, entropy_weight: float = 1e-3,
                 family: str | None = None) -> None:
        super().__init__(name, entropy_weight, family=family)
        if num_members < 2:
            raise ValueError(f"an ensemble needs num_members >= 2, got {num_members}")
        self.num_members = int(num_members)

    def fit(self, build, data, config, *, run=0, masks=None, domain=None, num_classes=None,
            cache=None):
        alphas, epochs, models = self._fit_members(
            build, data, config, self.seeds(run), masks, domain, num_classes, cache
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


def _robust(name: str, **kwargs: Any) -> Callable[[], Method]:
    def make() -> Method:
        from gs_algos.methods import METHODS

        return METHODS[name](**kwargs)

    return make


# ROBUSTNESS_METHODS, ROBUSTNESS_VARIANTS and DEFAULT_ROBUSTNESS_VARIANT come from
# gs_algos.names (the one definition, importable without torch) and stay importable here.


def _robust_model(name: str, variant: str = DEFAULT_ROBUSTNESS_VARIANT) -> NodeMethod:
    # ``variant`` is checked by node_method, the boundary that receives it, not here again.
    # GOOD's training step runs the model once per pass: no extra batch-norm updates
    return SingleModel(name, _robust(name, variant=variant), norm_updates=1)


def _robust_factory(name: str) -> Callable[..., NodeMethod]:
    return lambda k, variant=DEFAULT_ROBUSTNESS_VARIANT: _robust_model(name, variant)


#: how each kind of :data:`gs_algos.names.NODE_KINDS` builds a method: (name, family) -> factory
_NODE_FACTORIES: dict[str, Callable[[str, str | None], Callable[..., NodeMethod]]] = {
    "single": lambda name, family: lambda k: SingleModel(name, _robust(name)),
    "robust": lambda name, family: _robust_factory(name),
    "ensemble": lambda name, family: lambda k: DeepEnsemble(k),
    "dirichlet": lambda name, family: lambda k: DirichletModel(name),
    "dirichlet-ensemble": lambda name, family: lambda k: DirichletEnsemble(name, k, family=family),
}

#: name -> factory ``(num_members) -> NodeMethod`` (``num_members`` is used by ensembles),
#: one per named node method of :data:`gs_algos.names.BUILTIN_METHODS`.
#: The robustness methods' factories also take ``variant`` (see :func:`node_method`).
NODE_METHODS: dict[str, Callable[..., NodeMethod]] = {
    name: _NODE_FACTORIES[m.node](name, m.family)
    for name, m in BUILTIN_METHODS.items() if m.node is not None
}
#: the named methods shipped with gs-algos; :func:`gs_algos.registry.register_method` adds more
BUILTIN_NODE_METHODS = frozenset(NODE_METHODS)


def available_node_methods() -> list[str]:
    """Names :func:`node_method` accepts (``se`` is also accepted, as ``erm``)."""
    return list(NODE_METHODS)


def node_method(name: str, num_members: int = 5,
                robustness_variant: str = DEFAULT_ROBUSTNESS_VARIANT) -> NodeMethod:
    """The named method ``name`` (one of :data:`NODE_METHODS`; ``se`` is ``erm``).

    ``robustness_variant`` picks the formulation of DANN, CORAL, Mixup and EERM:
    ``"good"`` (default; the GOOD benchmark's code, which the paper used, section 4) or
    ``"ours-v1"`` (our earlier formulation); see :mod:`gs_algos.methods.robust` and
    :mod:`gs_algos.methods.eerm`. Other methods ignore it; it is checked here, for every
    method (the factories of :data:`NODE_METHODS` do not check it again; the method class
    checks the ``variant`` it is built with, as it does for any caller)."""
    key = canonical_method(name)
    if key not in NODE_METHODS:
        raise ValueError(f"unknown node method {name!r}; accepted: {sorted([*NODE_METHODS, *ALIASES])}")
    check_variant(robustness_variant)
    if key in ROBUSTNESS_METHODS:
        return NODE_METHODS[key](num_members, variant=robustness_variant)
    return NODE_METHODS[key](num_members)

