"""gs_models: backbones for graph and geometric deep learning under distribution shift.

Node-level GNNs (MLP, GCN, SAGE, GAT, GIN), structured-prediction models with edge
marginals (GMNN, EPFGNN), Dirichlet / posterior-network uncertainty modules (evidence head,
GPN, NatPN), point-cloud backbones (EGNN, DGCNN, Point Transformer) and a pure-torch kNN
graph. Create models with :func:`build_model` from a name or a paper preset.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from gs_models.__about__ import __version__

# Public name -> the submodule that defines it, imported on first use (PEP 562): the configs,
# presets and registry names do not pay for PyTorch Geometric (~5 s), which the models import.
_LAZY: dict[str, str] = {
    "EDGEWISE_GCN": "configs",
    "GESS_KNN_K": "configs",
    "DirichletConfig": "configs",
    "EPFGNNConfig": "configs",
    "GMNNConfig": "configs",
    "GPNConfig": "configs",
    "NatPNConfig": "configs",
    "NodeGNNConfig": "configs",
    "PointCloudConfig": "configs",
    "TrainingDefaults": "configs",
    "knn_graph": "knn",
    "keep_freed_memory": "runtime",
    "NodeGNN": "node",
    "DGCNN": "pointcloud",
    "EGNN": "pointcloud",
    "EGNNLayer": "pointcloud",
    "PointCloudBackbone": "pointcloud",
    "PointTransformer": "pointcloud",
    "BatchedRadialFlow": "posterior",
    "DirichletHead": "posterior",
    "GraphPosteriorNetwork": "posterior",
    "NaturalPosteriorNetwork": "posterior",
    "PosteriorOutput": "posterior",
    "log_certainty_budget": "posterior",
    "available_models": "registry",
    "available_presets": "registry",
    "build_model": "registry",
    "preset": "registry",
    "register_model": "registry",
    "training_defaults": "registry",
    "unregister_model": "registry",
    "TorchNeighborSampler": "sampling",
    "has_native_sampler": "sampling",
    "neighbor_loader": "sampling",
    "predict_in_batches": "sampling",
    "sample_neighbors": "sampling",
    "EPFGNN": "structured",
    "GMNN": "structured",
    "LBPResult": "structured",
    "greedy_coloring": "structured",
    "loopy_belief_propagation": "structured",
    "mean_field_edge_marginals": "structured",
    "undirected_pairs": "structured",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'gs_models' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"gs_models.{module}"), name)
    globals()[name] = value  # later lookups skip this hook
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


if TYPE_CHECKING:  # the names for type checkers and IDEs
    from gs_models.configs import (
        EDGEWISE_GCN,
        GESS_KNN_K,
        DirichletConfig,
        EPFGNNConfig,
        GMNNConfig,
        GPNConfig,
        NatPNConfig,
        NodeGNNConfig,
        PointCloudConfig,
        TrainingDefaults,
    )
    from gs_models.knn import knn_graph
    from gs_models.node import NodeGNN
    from gs_models.pointcloud import DGCNN, EGNN, EGNNLayer, PointCloudBackbone, PointTransformer
    from gs_models.posterior import (
        BatchedRadialFlow,
        DirichletHead,
        GraphPosteriorNetwork,
        NaturalPosteriorNetwork,
        PosteriorOutput,
        log_certainty_budget,
    )
    from gs_models.registry import (
        available_models,
        available_presets,
        build_model,
        preset,
        register_model,
        training_defaults,
        unregister_model,
    )
    from gs_models.runtime import keep_freed_memory
    from gs_models.sampling import (
        TorchNeighborSampler,
        has_native_sampler,
        neighbor_loader,
        predict_in_batches,
        sample_neighbors,
    )
    from gs_models.structured import (
        EPFGNN,
        GMNN,
        LBPResult,
        greedy_coloring,
        loopy_belief_propagation,
        mean_field_edge_marginals,
        undirected_pairs,
    )

__all__ = [
    "BatchedRadialFlow",
    "DGCNN",
    "DirichletConfig",
    "DirichletHead",
    "EGNN",
    "EGNNLayer",
    "EPFGNN",
    "EPFGNNConfig",
    "EDGEWISE_GCN",
    "GESS_KNN_K",
    "GMNN",
    "GMNNConfig",
    "GPNConfig",
    "GraphPosteriorNetwork",
    "LBPResult",
    "NatPNConfig",
    "NaturalPosteriorNetwork",
    "NodeGNN",
    "NodeGNNConfig",
    "PointCloudBackbone",
    "PointCloudConfig",
    "PointTransformer",
    "PosteriorOutput",
    "TorchNeighborSampler",
    "TrainingDefaults",
    "__version__",
    "available_models",
    "available_presets",
    "build_model",
    "greedy_coloring",
    "has_native_sampler",
    "keep_freed_memory",
    "knn_graph",
    "log_certainty_budget",
    "loopy_belief_propagation",
    "mean_field_edge_marginals",
    "neighbor_loader",
    "sample_neighbors",
    "predict_in_batches",
    "preset",
    "register_model",
    "unregister_model",
    "training_defaults",
    "undirected_pairs",
]
