"""The registry of structural split strategies: one table, read by every consumer.

A strategy is a function ``f(graph, rng) -> property`` of a :class:`~gs_splits.CSRGraph` (the
undirected simple graph) and a seeded :class:`numpy.random.Generator`, returning one finite
value per node; the nodes with the *largest* values are in-distribution
(:func:`gs_splits.structural_split` sorts by ``sigma = -property``). Deterministic strategies
ignore ``rng``; ``random`` draws from it (the same generator that then breaks ties and
shuffles the ID nodes, so a split is a function of the graph, the strategy and the seed).

:data:`STRATEGIES` is built explicitly below (no registration by import side effect). The
consumers read it instead of keeping their own name lists: :func:`gs_splits.structural_split`,
the ``gs-splits make --strategy`` choices and help text, gs-data's ``make_split`` /
``StructuralNodeSplit`` and gs-bench's structural-shifts runner. Add your own with
:func:`register_strategy`; nothing else needs editing:

>>> import numpy as np
>>> from gs_splits import register_strategy, structural_split, unregister_strategy
>>> _ = register_strategy("node-id", lambda g, rng: np.arange(g.num_nodes, dtype=float),
...                       "the node id itself (a toy)")
>>> split = structural_split(np.array([[0, 1, 2, 3], [1, 2, 3, 0]]), "node-id",
...                          sizes=(0.25, 0.25, 0.25, 0.0, 0.25))
>>> split.metadata["strategy"], bool(split.out_test[0])
('node-id', True)
>>> unregister_strategy("node-id")
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gs_splits.graph import CSRGraph
from gs_splits.names import PAPER_STRATEGIES
from gs_splits.properties import (
    approximate_betweenness,
    clustering_coefficient,
    core_number,
    degree,
    eigenvector_centrality,
    pagerank,
    personalized_pagerank,
)

__all__ = [
    "SplitStrategy",
    "STRATEGIES",
    "PAPER_STRATEGIES",
    "StrategyFunction",
    "available_strategies",
    "get_strategy",
    "register_strategy",
    "unregister_strategy",
]

#: ``f(graph, rng) -> one value per node`` (largest = ID).
StrategyFunction = Callable[[CSRGraph, np.random.Generator], "np.ndarray"]

# PAPER_STRATEGIES (the paper's strategies, in its tables' order): gs_splits.names, re-exported.

_NAME = re.compile(r"^[a-z0-9][a-z0-9_+.-]*$")


@dataclass(frozen=True)
class SplitStrategy:
    """One named strategy.

    Attributes
    ----------
    name : str
        Lower-case name (``[a-z0-9][a-z0-9_+.-]*``), as the CLI and suites spell it.
    function : callable
        ``f(graph: CSRGraph, rng: numpy.random.Generator) -> array (n,)``.
    description : str
        One line for ``gs-splits make --help`` and the docs.
    builtin : bool
        Shipped with gs-splits (cannot be unregistered).
    """

    name: str
    function: StrategyFunction
    description: str = ""
    builtin: bool = False

    def __call__(self, graph: CSRGraph, rng: np.random.Generator) -> np.ndarray:
        return self.function(graph, rng)


def _random(g: CSRGraph, rng: np.random.Generator) -> np.ndarray:
    # the first draw of the split's generator (bit-identical to the splits before the registry)
    return -rng.permutation(g.num_nodes).astype(np.float64)


STRATEGIES: dict[str, SplitStrategy] = {
    s.name: s
    for s in (
        SplitStrategy("popularity", lambda g, rng: pagerank(g), "PageRank (sec. 3.2)", True),
        SplitStrategy("locality", lambda g, rng: personalized_pagerank(g),
                      "Personalized PageRank from the top-PageRank node (sec. 3.2)", True),
        SplitStrategy("density", lambda g, rng: clustering_coefficient(g),
                      "local clustering coefficient (sec. 3.2)", True),
        SplitStrategy("random", _random, "uniformly random order: the no-shift baseline", True),
        SplitStrategy("degree", lambda g, rng: degree(g), "node degree (extra)", True),
        SplitStrategy("kcore", lambda g, rng: core_number(g), "k-core number (extra)", True),
        SplitStrategy("eigenvector", lambda g, rng: eigenvector_centrality(g),
                      "eigenvector centrality (extra)", True),
        SplitStrategy("betweenness", lambda g, rng: approximate_betweenness(g),
                      "approximate betweenness centrality (extra)", True),
    )
}
"""Strategy name -> :class:`SplitStrategy`: the paper's four first, then the extras, then
whatever :func:`register_strategy` added (in registration order)."""


def available_strategies() -> tuple[str, ...]:
    """Names of the registered strategies (the paper's first, then extras, then yours)."""
    return tuple(STRATEGIES)


def get_strategy(name: str) -> SplitStrategy:
    """The strategy called ``name``; ``ValueError`` listing the accepted names otherwise."""
    if not isinstance(name, str):
        raise TypeError(f"strategy name must be a str, got {type(name).__name__}")
    try:
        return STRATEGIES[name]
    except KeyError:
        raise ValueError(
            f"strategy: unknown {name!r}; accepted: {', '.join(STRATEGIES)}, an array of one "
            "value per node, or a callable graph -> array (or register_strategy(name, f))"
        ) from None


def register_strategy(name: str, function: StrategyFunction, description: str = "", *,
                      overwrite: bool = False) -> SplitStrategy:
    """Add a strategy ``function(graph, rng) -> property`` under ``name``; returns its entry.

    ``overwrite=True`` replaces a strategy you registered earlier (built-ins cannot be
    replaced). Registration is explicit and process-wide: call it from your own code before
    the split is made (for gs-bench's worker processes: from code the workers import too).
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"strategy name must match {_NAME.pattern} (lower case), got {name!r}")
    if not callable(function):
        raise TypeError(f"strategy function must be callable (graph, rng) -> array, got "
                        f"{type(function).__name__}")
    old = STRATEGIES.get(name)
    if old is not None and (old.builtin or not overwrite):
        raise ValueError(f"strategy {name!r} exists already"
                         + ("" if old.builtin else "; pass overwrite=True to replace it"))
    entry = SplitStrategy(name, function, str(description))
    STRATEGIES[name] = entry
    return entry


def unregister_strategy(name: str) -> None:
    """Remove a strategy added by :func:`register_strategy` (built-ins stay)."""
    entry = get_strategy(name)
    if entry.builtin:
        raise ValueError(f"strategy {name!r} is built in and cannot be unregistered")
    del STRATEGIES[name]
