"""Training methods: OOD robustness (node and graph level) and Dirichlet training.

:data:`METHODS` is an explicit name -> class table (nothing registers itself on import), built
from the one table of gs-algos' method names, :data:`gs_algos.names.BUILTIN_METHODS`.
"""

import importlib

from gs_algos.methods.base import Method, domain_embeddings, group_risks
from gs_algos.methods.eerm import EERM, GoodGraphEditor, StructureExplorer, good_eerm_beta
from gs_algos.methods.geometric import DIR, LRIBernoulli, bernoulli_kl, dir_loss_of, split_by_score
from gs_algos.methods.robust import (
    DANN,
    ERM,
    IRM,
    VARIANTS,
    DeepCoral,
    GradientReversal,
    GroupDRO,
    Mixup,
    VREx,
    coral_distance,
    feature_covariance,
    good_reversal_coefficient,
)
from gs_algos.names import BUILTIN_METHODS


def _implementation(path: str) -> type[Method]:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


METHODS: dict[str, type[Method]] = {
    name: _implementation(m.implementation)
    for name, m in BUILTIN_METHODS.items() if m.implementation is not None
}
"""Method name -> class. The Bayesian loss of Dirichlet models is
:class:`gs_algos.uncertainty.BayesianLoss`."""

__all__ = [
    "DANN",
    "DIR",
    "EERM",
    "ERM",
    "IRM",
    "METHODS",
    "DeepCoral",
    "GoodGraphEditor",
    "GradientReversal",
    "GroupDRO",
    "LRIBernoulli",
    "Method",
    "Mixup",
    "StructureExplorer",
    "VARIANTS",
    "VREx",
    "bernoulli_kl",
    "coral_distance",
    "feature_covariance",
    "good_eerm_beta",
    "good_reversal_coefficient",
    "domain_embeddings",
    "group_risks",
    "dir_loss_of",
    "split_by_score",
]
