"""The names gs-algos owns, importable without torch: its methods, their aliases and the
values of the settings that pick among their formulations.

This module imports neither torch nor anything of gs-algos that does (a test imports it in
a fresh process and checks), so a CLI, a suite check or a report reads the names here at
module top instead of copying them. The classes and factories that *implement* the names
are built from these tables: :data:`gs_algos.methods.METHODS` (name -> :class:`~gs_algos.methods.Method`
class) from :data:`BUILTIN_METHODS`' ``implementation``, and
:data:`gs_algos.node_methods.NODE_METHODS` (the structural-shifts paper's named node methods)
from its ``node`` kind.

* :data:`BUILTIN_METHODS`: the one table of the methods shipped with gs-algos, in GeSS
  table 3's order (GeSS section 4.1; ``irm`` is ours), then the structural-shifts paper's
  EERM and uncertainty methods (section 4). A runner that lists methods takes them from
  here (the gess suite: the graph-level ones; structural-shifts: the named node methods).
* :data:`ALIASES` / :func:`canonical_method`: ``se`` (the structural-shifts paper's "SE",
  the uncertainty view of ERM, section 4) is ``erm``.
* :data:`ROBUSTNESS_VARIANTS` / :data:`DEFAULT_ROBUSTNESS_VARIANT`: the formulations of DANN,
  CORAL, Mixup and EERM (:mod:`gs_algos.methods.robust`, :mod:`gs_algos.methods.eerm`) and
  the default of the structural-shifts route (gs-bench's ``robustness_variant`` setting).
* :data:`STRUCTURAL_PROTOCOLS`: the training protocols of
  :meth:`gs_algos.config.TrainConfig.structural_shifts` (gs-bench's ``protocol`` setting).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ALIASES",
    "BUILTIN_METHODS",
    "DEFAULT_ROBUSTNESS_VARIANT",
    "GESS_VARIANTS",
    "MethodName",
    "NODE_KINDS",
    "ROBUSTNESS_METHODS",
    "ROBUSTNESS_VARIANTS",
    "STOPPING_RULES",
    "STRUCTURAL_PROTOCOLS",
    "builtin_method_names",
    "builtin_node_method_names",
    "canonical_method",
]

#: How a named node method (:data:`gs_algos.node_methods.NODE_METHODS`) trains and scores:
#: ``single`` one model, softmax entropy (SE); ``robust`` one model of a robustness method
#: with a formulation from :data:`ROBUSTNESS_VARIANTS`; ``ensemble`` a Deep Ensemble of its
#: ``family``'s members; ``dirichlet`` a posterior network; ``dirichlet-ensemble`` the
#: Bayesian combination of its ``family``'s members.
NODE_KINDS = ("single", "robust", "ensemble", "dirichlet", "dirichlet-ensemble")


@dataclass(frozen=True)
class MethodName:
    """One method shipped with gs-algos.

    ``implementation``: ``"module:Class"`` of its :class:`~gs_algos.methods.Method` subclass (the
    training objective; ``None`` for the composites DE, GPN, ... that
    :mod:`gs_algos.node_methods` builds); ``levels``: where that class trains (``"node"``,
    ``"graph"``; the class's own ``levels``, a test checks); ``node``: its kind as a named
    node method of the structural-shifts route (one of :data:`NODE_KINDS`; ``None``: not
    one); ``family``: the single model whose runs an ensemble combines."""

    implementation: str | None
    levels: tuple[str, ...] = ()
    node: str | None = None
    family: str | None = None


_ROBUST = "gs_algos.methods.robust"
_BOTH = ("node", "graph")

#: The methods shipped with gs-algos, name -> :class:`MethodName`; the order is GeSS table 3's
#: (and within it the structural-shifts paper's table 1 for the node methods), which the
#: runners' tables keep.
BUILTIN_METHODS: dict[str, MethodName] = {
    "erm": MethodName(f"{_ROBUST}:ERM", _BOTH, node="single"),
    "vrex": MethodName(f"{_ROBUST}:VREx", _BOTH),
    "groupdro": MethodName(f"{_ROBUST}:GroupDRO", _BOTH),
    "dir": MethodName("gs_algos.methods.geometric:DIR", ("graph",)),
    "lri": MethodName("gs_algos.methods.geometric:LRIBernoulli", ("graph",)),
    "mixup": MethodName(f"{_ROBUST}:Mixup", _BOTH, node="robust"),
    "irm": MethodName(f"{_ROBUST}:IRM", _BOTH),
    "dann": MethodName(f"{_ROBUST}:DANN", _BOTH, node="robust"),
    "coral": MethodName(f"{_ROBUST}:DeepCoral", _BOTH, node="robust"),
    "eerm": MethodName("gs_algos.methods.eerm:EERM", ("node",), node="robust"),
    "de": MethodName(None, node="ensemble", family="erm"),
    "gpn": MethodName(None, node="dirichlet"),
    "natpn": MethodName(None, node="dirichlet"),
    "gpe": MethodName(None, node="dirichlet-ensemble", family="gpn"),
    "natpe": MethodName(None, node="dirichlet-ensemble", family="natpn"),
}

#: Other names of methods: ``se`` (the structural-shifts paper's SE, the uncertainty view of
#: ERM: the same training, scored by softmax entropy) is ``erm``.
ALIASES: dict[str, str] = {"se": "erm"}

#: The OOD-robustness methods of the structural-shifts paper (section 4; trained "using the
#: experimental framework from the GOOD benchmark"), the ones :data:`ROBUSTNESS_VARIANTS` applies to.
ROBUSTNESS_METHODS = tuple(n for n, m in BUILTIN_METHODS.items() if m.node == "robust")

#: Formulations of DANN, DeepCoral, Mixup and EERM: ``"ours-v1"`` (our earlier formulation,
#: the default of the classes) and ``"good"`` (the GOOD benchmark's code, divelab/GOOD, which
#: the structural-shifts paper used for these four methods, section 4: "we use the
#: experimental framework from the GOOD benchmark").
ROBUSTNESS_VARIANTS = ("ours-v1", "good")
#: The structural-shifts route's formulation (:func:`gs_algos.node_methods.node_method`,
#: gs-bench's ``robustness_variant``): GOOD's, as the paper ran them (section 4).
DEFAULT_ROBUSTNESS_VARIANT = "good"
#: Formulations of IRM and GroupDRO: ours, or GeSS's code (``GESS/algorithms/baselines``).
GESS_VARIANTS = ("ours-v1", "gess")

#: Named training protocols of :meth:`gs_algos.config.TrainConfig.structural_shifts`: the authors'
#: (200 epochs, lowest Valid-In loss) and our earlier early stopping.
STRUCTURAL_PROTOCOLS = ("authors", "early-stop")

#: Early-stopping rules of :class:`gs_algos.config.TrainConfig` (``stopping``): patience on the
#: selection metric, or the edgewise-calibration authors' rule (``src/train.py``: patience
#: resets when validation accuracy >= best or NLL <= best).
STOPPING_RULES = ("patience", "acc_or_nll", "gess")


def canonical_method(name: str) -> str:
    """The method ``name`` stands for (``se`` -> ``erm``; any other name is itself)."""
    return ALIASES.get(name, name)


def builtin_method_names(level: str | None = None) -> list[str]:
    """The shipped training methods (those with a :class:`~gs_algos.methods.Method` class), in the
    order of :data:`BUILTIN_METHODS`; with ``level``, those that train at that level."""
    return [n for n, m in BUILTIN_METHODS.items()
            if m.implementation is not None and (level is None or level in m.levels)]


def builtin_node_method_names() -> list[str]:
    """The shipped named node methods of the structural-shifts route, in table order."""
    return [n for n, m in BUILTIN_METHODS.items() if m.node is not None]
