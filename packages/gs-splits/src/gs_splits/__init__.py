"""gs-splits: structural and scientific distribution-shift splits (numpy + scipy + numba, no torch)."""

from gs_splits.__about__ import __version__
from gs_splits.diagnostics import (
    SplitStatistics,
    distance_distribution,
    split_statistics,
    summarize_split,
)
from gs_splits.graph import CSRGraph, as_csr_graph
from gs_splits.properties import (
    approximate_betweenness,
    clustering_coefficient,
    core_number,
    degree,
    eigenvector_centrality,
    pagerank,
    personalized_pagerank,
    triangles,
)
from gs_splits.scientific import (
    INFO_LEVELS,
    SCIENTIFIC_PARTS,
    ScientificSplitConfig,
    ordered_domain_split,
    par_label_indices,
    scientific_split,
)
from gs_splits.split import (
    DOMAIN_SCOPES,
    PAPER_SIZES,
    STRUCTURAL_PARTS,
    Split,
    StructuralSplitConfig,
    property_domains,
    split_sizes,
    structural_split,
)
from gs_splits.strategies import (
    PAPER_STRATEGIES,
    STRATEGIES,
    SplitStrategy,
    available_strategies,
    get_strategy,
    register_strategy,
    unregister_strategy,
)

__all__ = [
    "__version__",
    "CSRGraph",
    "as_csr_graph",
    "pagerank",
    "personalized_pagerank",
    "clustering_coefficient",
    "triangles",
    "degree",
    "core_number",
    "eigenvector_centrality",
    "approximate_betweenness",
    "Split",
    "StructuralSplitConfig",
    "structural_split",
    "split_sizes",
    "property_domains",
    "DOMAIN_SCOPES",
    "PAPER_SIZES",
    "STRUCTURAL_PARTS",
    "STRATEGIES",
    "PAPER_STRATEGIES",
    "SplitStrategy",
    "available_strategies",
    "get_strategy",
    "register_strategy",
    "unregister_strategy",
    "scientific_split",
    "ordered_domain_split",
    "par_label_indices",
    "ScientificSplitConfig",
    "INFO_LEVELS",
    "SCIENTIFIC_PARTS",
    "summarize_split",
    "split_statistics",
    "SplitStatistics",
    "distance_distribution",
]
