"""The names and fixed tables of gs-splits, importable without numba (or scipy).

``import gs_splits`` itself loads nothing heavy (its names resolve on first use), and this
module imports only the standard library, so a CLI, a suite check or a report reads the
accepted values of a split setting here instead of copying them (a test imports it in a
fresh process and checks that neither numba nor torch is loaded). The split functions
(:mod:`gs_splits.split`, :mod:`gs_splits.scientific`, :mod:`gs_splits.strategies`) use
these tables and re-export them.
"""

from __future__ import annotations

__all__ = [
    "BUILTIN_STRATEGIES",
    "DOMAIN_SCOPES",
    "INFO_LEVELS",
    "PAPER_SIZES",
    "PAPER_STRATEGIES",
    "SCIENTIFIC_PARTS",
    "STRUCTURAL_PARTS",
]

#: The masks of a structural split (:func:`gs_splits.structural_split`).
STRUCTURAL_PARTS = ("in_train", "in_valid", "in_test", "out_valid", "out_test")

#: Paper split ratios (section 4: 50:50 ID:OOD; appendix B: 70:30 and 90:10 ID:OOD). For the
#: appendix-B ratios the paper gives only the ID:OOD ratio; we keep the base 3:1:1 ID ratio and
#: the 1:4 OOD ratio of the base setup.
PAPER_SIZES: dict[str, tuple[float, float, float, float, float]] = {
    "50:50": (0.3, 0.1, 0.1, 0.1, 0.4),
    "70:30": (0.42, 0.14, 0.14, 0.06, 0.24),
    "90:10": (0.54, 0.18, 0.18, 0.02, 0.08),
}

#: Which nodes the appendix-F domain bins are cut over (:func:`gs_splits.structural_split`,
#: :func:`gs_splits.property_domains`): ``"in_train"`` (the paper's "which nodes in the
#: training set belong to which domain"), ``"all"`` (our earlier rule: bins over every node).
DOMAIN_SCOPES = ("in_train", "all")

#: The structural-shifts paper's strategies (section 3.2) and its random baseline, in the
#: order of its tables (the registry, :data:`gs_splits.STRATEGIES`, may hold more).
PAPER_STRATEGIES = ("popularity", "locality", "density", "random")
#: Every built-in strategy of :data:`gs_splits.strategies.STRATEGIES`, in its order: the paper's,
#: then the extras (a test checks the two agree). For a caller that lists the names without
#: importing the kernels (numba), e.g. a suite check refusing a misspelt strategy.
BUILTIN_STRATEGIES = (*PAPER_STRATEGIES, "degree", "kcore", "eigenvector", "betweenness")

#: GeSS's levels of OOD information (section 3) and the parts of a scientific split.
INFO_LEVELS = ("no_info", "o_feature", "par_label")
SCIENTIFIC_PARTS = ("train", "iid_val", "iid_test", "ood_val", "ood_test")
