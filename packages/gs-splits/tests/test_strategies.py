"""The strategy registry (gs_splits.strategies): one table read by the split, the CLI and gs-data."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import gs_splits
from gs_splits import (
    PAPER_STRATEGIES,
    available_strategies,
    register_strategy,
    structural_split,
    unregister_strategy,
)
from gs_splits import strategies as strategies_module
from gs_splits.cli import main

# a ring of 20 nodes with a few chords (degrees 2..4)
EDGES = np.concatenate([np.stack([np.arange(20), (np.arange(20) + 1) % 20]),
                        np.array([[0, 0, 5, 10, 3], [10, 5, 15, 15, 12]])], axis=1)


@pytest.fixture
def negated_degree():
    entry = register_strategy("neg-degree", lambda g, rng: -gs_splits.degree(g), "minus the degree")
    yield entry.name
    unregister_strategy(entry.name)


def test_docstring_example():
    res = doctest.testmod(strategies_module)
    assert res.failed == 0 and res.attempted > 0


def test_the_paper_strategies_come_first_and_the_builtins_stay():
    assert available_strategies()[:4] == PAPER_STRATEGIES
    assert set(available_strategies()) >= {"degree", "kcore", "eigenvector", "betweenness"}
    from gs_splits.names import BUILTIN_STRATEGIES  # the light copy of the names agrees

    assert tuple(n for n, e in strategies_module.STRATEGIES.items() if e.builtin) == BUILTIN_STRATEGIES
    with pytest.raises(ValueError, match="built in"):
        unregister_strategy("popularity")
    with pytest.raises(ValueError, match="exists already"):
        register_strategy("density", lambda g, rng: np.zeros(g.num_nodes))


def test_a_registered_strategy_splits_and_is_offered_by_the_cli(negated_degree, capsys, tmp_path):
    split = structural_split(EDGES, negated_degree, seed=3)
    ref = structural_split(EDGES, -gs_splits.degree(EDGES), seed=3)  # the same property as an array
    assert split.masks.keys() == ref.masks.keys()
    assert all(np.array_equal(split.masks[k], ref.masks[k]) for k in split.masks)
    with pytest.raises(SystemExit):
        main(["make", "--help"])
    out = capsys.readouterr().out
    assert "neg-degree" in out and "minus the degree" in out
    with pytest.raises(ValueError, match="overwrite=True"):
        register_strategy(negated_degree, lambda g, rng: np.zeros(g.num_nodes))
    register_strategy(negated_degree, lambda g, rng: -gs_splits.degree(g), "again", overwrite=True)


def test_unknown_names_and_bad_registrations_are_refused():
    with pytest.raises(ValueError, match="accepted: popularity, locality, density, random"):
        structural_split(EDGES, "pagerank")
    for bad in ("", "Upper", "has space"):
        with pytest.raises(ValueError, match="strategy name"):
            register_strategy(bad, lambda g, rng: np.zeros(g.num_nodes))
    with pytest.raises(TypeError, match="callable"):
        register_strategy("not-callable", 3)
    with pytest.raises(ValueError, match="unknown"):
        unregister_strategy("never-registered")


def test_random_draws_from_the_split_generator():
    """``random`` takes the first draw of the split's seeded generator (as before the registry)."""
    a = structural_split(EDGES, "random", seed=5)
    rng = np.random.default_rng(5)
    prop = -rng.permutation(20).astype(np.float64)
    assert np.array_equal(a.sigma, -prop)
