"""gs_models: backbones for graph and geometric deep learning under distribution shift.

Node-level GNNs (MLP, GCN, SAGE, GAT, GIN), structured-prediction models with edge
marginals (GMNN, EPFGNN), Dirichlet / posterior-network uncertainty modules (evidence head,
GPN, NatPN), point-cloud backbones (EGNN, DGCNN, Point Transformer) and a pure-torch kNN
graph. Create models with :func:`build_model` from a name or a paper preset.

``import gs_models`` imports the typed configs (all of :mod:`gs_models.configs`), the model
registry (:func:`build_model`, :func:`preset`, ...) and :func:`keep_freed_memory`: no torch,
no PyTorch Geometric. The models themselves live in their modules, which import PyTorch
Geometric (about 5 s) and are imported only when asked for (``build_model`` imports the one
it builds):

* :mod:`gs_models.node`: ``NodeGNN``;
* :mod:`gs_models.structured`: ``GMNN``, ``EPFGNN``, ``LBPResult``, ``loopy_belief_propagation``,
  ``mean_field_edge_marginals``, ``greedy_coloring``, ``undirected_pairs``;
* :mod:`gs_models.posterior`: ``DirichletHead``, ``GraphPosteriorNetwork``,
  ``NaturalPosteriorNetwork``, ``BatchedRadialFlow``, ``PosteriorOutput``, ``log_certainty_budget``;
* :mod:`gs_models.pointcloud`: ``EGNN``, ``DGCNN``, ``PointTransformer``, ``EGNNLayer``,
  ``PointCloudBackbone``;
* :mod:`gs_models.sampling`: ``neighbor_loader``, ``predict_in_batches``, ``sample_neighbors``,
  ``TorchNeighborSampler``, ``has_native_sampler``;
* :mod:`gs_models.knn`: ``knn_graph`` (torch only).
"""

from __future__ import annotations

from gs_models import configs
from gs_models.__about__ import __version__
from gs_models.configs import *  # noqa: F403  (the typed configs and their accepted values: configs.__all__)
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

__all__ = [
    "__version__",
    "available_models",
    "available_presets",
    "build_model",
    "keep_freed_memory",
    "preset",
    "register_model",
    "training_defaults",
    "unregister_model",
]
__all__ += configs.__all__
