"""gs-splits: structural and scientific distribution-shift splits (numpy + scipy + numba, no torch).

The names below resolve on first use (PEP 562): ``import gs_splits`` and the fixed tables of
:mod:`gs_splits.names` cost no numba import (seconds); the first split function used loads its
module and the compiled kernels.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from gs_splits.__about__ import __version__

# Public name -> the submodule that defines it.
_LAZY: dict[str, str] = {
    **dict.fromkeys(("SplitStatistics", "distance_distribution", "split_statistics",
                     "summarize_split"), "diagnostics"),
    **dict.fromkeys(("CSRGraph", "as_csr_graph"), "graph"),
    **dict.fromkeys(("OnDiskCSR", "convert_edges", "open_ondisk"), "ondisk"),
    **dict.fromkeys(("clustering_coefficient_ondisk", "pagerank_ondisk", "personalized_pagerank_ondisk",
                     "triangles_ondisk"), "outofcore"),
    **dict.fromkeys(("approximate_betweenness", "clustering_coefficient", "core_number", "degree",
                     "eigenvector_centrality", "pagerank", "personalized_pagerank", "triangles"),
                    "properties"),
    **dict.fromkeys(("ScientificSplitConfig", "ordered_domain_split", "par_label_indices",
                     "scientific_split"), "scientific"),
    **dict.fromkeys(("Split", "StructuralSplitConfig", "TiedPropertyError", "property_domains",
                     "split_sizes", "structural_split"), "split"),
    **dict.fromkeys(("STRATEGIES", "SplitStrategy", "available_strategies", "get_strategy",
                     "register_strategy", "unregister_strategy"), "strategies"),
    **dict.fromkeys(("BUILTIN_STRATEGIES", "DOMAIN_SCOPES", "INFO_LEVELS", "PAPER_SIZES", "PAPER_STRATEGIES",
                     "SCIENTIFIC_PARTS", "STRUCTURAL_PARTS"), "names"),
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'gs_splits' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"gs_splits.{module}"), name)
    globals()[name] = value  # later lookups skip this hook
    return value


def __dir__() -> list[str]:
    # the public names only: not the helpers this module imports (Any, importlib, ...)
    return sorted({*__all__, *(n for n in globals() if n.startswith("__"))})


# The names for type checkers and IDEs. A module whose whole ``__all__`` the package gives is
# imported with ``*``: its ``__all__`` is the list; the others name the part they give
# (tests/test_namespace.py checks both against ``_LAZY``).
if TYPE_CHECKING:
    from gs_splits.diagnostics import (
        SplitStatistics,
        distance_distribution,
        split_statistics,
        summarize_split,
    )
    from gs_splits.graph import CSRGraph, as_csr_graph
    from gs_splits.names import *  # noqa: F403
    from gs_splits.ondisk import OnDiskCSR, convert_edges, open_ondisk
    from gs_splits.outofcore import (
        clustering_coefficient_ondisk,
        pagerank_ondisk,
        personalized_pagerank_ondisk,
        triangles_ondisk,
    )
    from gs_splits.properties import *  # noqa: F403
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

__all__ = ["__version__", *_LAZY]
