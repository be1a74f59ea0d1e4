"""gs_algos: training engine, OOD-robustness and uncertainty methods.

Train with :func:`fit_node` / :func:`fit_graph` and a :class:`TrainConfig` (paper presets
:meth:`TrainConfig.structural_shifts`, :meth:`TrainConfig.edgewise`,
:meth:`TrainConfig.gess`); methods live in :mod:`gs_algos.methods` (:data:`METHODS`; add your own with
:func:`register_method`),
uncertainty estimators in :mod:`gs_algos.uncertainty`, devices (``TrainConfig.device``:
``"auto"``, ``"cpu"``, ``"cuda"``, ``"cuda:1"``) in :mod:`gs_algos.device`, the named structural-shifts methods
(SE, DE, GPN, NatPN, GPE, NatPE and the robustness methods, one trained run each) in
:mod:`gs_algos.node_methods`, batched Deep Ensemble training in :mod:`gs_algos.ensemble`,
fine-tuning (Par-Label) in :mod:`gs_algos.finetune`, the GeSS search in
:mod:`gs_algos.search` and the EM training of the structured models (GMNN, EPFGNN) in
:mod:`gs_algos.em`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from gs_algos.__about__ import __version__

# Public name -> the submodule that defines it. The submodules are imported on first use
# (PEP 562): ``from gs_algos.device import resolve_device`` or ``gs_algos.TrainConfig``
# should not pay for PyTorch Geometric (~5 s, mostly ``torch._dynamo``), which the engine
# imports; gs-bench's worker processes and CLI checks need only the light parts.
_LAZY: dict[str, str] = {
    **dict.fromkeys(("Batch", "TaskSpec", "call_model"), "batch"),
    "TrainConfig": "config",
    **dict.fromkeys(("DEVICE_CHOICES", "as_device", "check_device", "resolve_device"), "device"),
    **dict.fromkeys(("EMConfig", "EMResult", "fit_epfgnn", "fit_gmnn"), "em"),
    **dict.fromkeys(
        ("EpochInfo", "FitResult", "Track", "evaluate_outputs", "fit_graph", "fit_node",
         "predict_graph", "predict_node", "seeded"),
        "engine",
    ),
    **dict.fromkeys(
        ("PAR_LABEL_SIZES", "choose_labeled", "choose_labeled_per_half", "finetune_graph",
         "finetune_node"),
        "finetune",
    ),
    **dict.fromkeys(("METHODS", "Method"), "methods"),
    **dict.fromkeys(("available_methods", "register_method", "unregister_method"), "registry"),
    **dict.fromkeys(("GESS_SEARCH_SPACES", "SearchResult", "SearchSpace", "grid_search"), "search"),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'gs_algos' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"gs_algos.{module}"), name)
    globals()[name] = value  # later lookups skip this hook
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


if TYPE_CHECKING:  # the names for type checkers and IDEs
    from gs_algos.batch import Batch, TaskSpec, call_model
    from gs_algos.config import TrainConfig
    from gs_algos.device import DEVICE_CHOICES, as_device, check_device, resolve_device
    from gs_algos.em import EMConfig, EMResult, fit_epfgnn, fit_gmnn
    from gs_algos.engine import (
        EpochInfo,
        FitResult,
        Track,
        evaluate_outputs,
        fit_graph,
        fit_node,
        predict_graph,
        predict_node,
        seeded,
    )
    from gs_algos.finetune import (
        PAR_LABEL_SIZES,
        choose_labeled,
        choose_labeled_per_half,
        finetune_graph,
        finetune_node,
    )
    from gs_algos.methods import METHODS, Method
    from gs_algos.registry import available_methods, register_method, unregister_method
    from gs_algos.search import GESS_SEARCH_SPACES, SearchResult, SearchSpace, grid_search

__all__ = [
    "DEVICE_CHOICES",
    "Batch",
    "EMConfig",
    "EMResult",
    "EpochInfo",
    "FitResult",
    "GESS_SEARCH_SPACES",
    "METHODS",
    "Method",
    "PAR_LABEL_SIZES",
    "SearchResult",
    "SearchSpace",
    "TaskSpec",
    "Track",
    "TrainConfig",
    "__version__",
    "as_device",
    "available_methods",
    "register_method",
    "unregister_method",
    "call_model",
    "check_device",
    "choose_labeled",
    "choose_labeled_per_half",
    "evaluate_outputs",
    "fit_epfgnn",
    "fit_gmnn",
    "fit_graph",
    "fit_node",
    "finetune_graph",
    "finetune_node",
    "grid_search",
    "predict_graph",
    "predict_node",
    "resolve_device",
    "seeded",
]
