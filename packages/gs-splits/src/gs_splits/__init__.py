"""gs-splits: structural and scientific distribution-shift splits (numpy + scipy + numba, no torch).

``import gs_splits`` imports the in-memory API below eagerly: plain modules over numpy and
scipy. The numba kernels (:mod:`gs_splits._kernels`) load on the first call that runs one,
and the out-of-core path is the sub-package :mod:`gs_splits.ondisk`, imported only when asked
for (``import gs_splits.ondisk``); ``tests/test_namespace.py`` checks that neither loads here.
"""

from __future__ import annotations

from gs_splits import names, properties
from gs_splits.__about__ import __version__
from gs_splits.diagnostics import (
    SplitStatistics,
    distance_distribution,
    split_statistics,
    summarize_split,
)
from gs_splits.graph import CSRGraph, as_csr_graph
from gs_splits.names import *  # noqa: F403  (the fixed tables: all of names.__all__)
from gs_splits.properties import *  # noqa: F403  (the node properties: all of properties.__all__)
from gs_splits.scientific import (
    ScientificSplitConfig,
    ordered_domain_split,
    par_label_indices,
    scientific_split,
)
from gs_splits.split import (
    Split,
    StructuralSplitConfig,
    TiedPropertyError,
    property_domains,
    split_sizes,
    structural_split,
)
from gs_splits.strategies import (
    STRATEGIES,
    SplitStrategy,
    available_strategies,
    get_strategy,
    register_strategy,
    unregister_strategy,
)

__all__ = [
    "__version__",
    # diagnostics
    "SplitStatistics",
    "distance_distribution",
    "split_statistics",
    "summarize_split",
    # graph
    "CSRGraph",
    "as_csr_graph",
    # scientific splits
    "ScientificSplitConfig",
    "ordered_domain_split",
    "par_label_indices",
    "scientific_split",
    # structural splits
    "Split",
    "StructuralSplitConfig",
    "TiedPropertyError",
    "property_domains",
    "split_sizes",
    "structural_split",
    # the strategy registry
    "STRATEGIES",
    "SplitStrategy",
    "available_strategies",
    "get_strategy",
    "register_strategy",
    "unregister_strategy",
]
# the modules the package gives whole (in forms type checkers follow)
__all__ += names.__all__
__all__ += properties.__all__
