"""CoraML: our properties and splits against the structural-shifts authors' published files.

Remaining differences (see also the README):

* popularity / density: our default (converged, L1 change < 1e-11) PageRank is within 7e-5
  relative error of the authors' values on every node; clustering is identical.
* locality: the authors stopped their power iteration when the L1 change fell below 1e-6
  (starting from the personalization vector). Nodes far from the restart node have tiny PPR
  (down to 4e-8) that is not converged at that point: 69 of them differ from the exact
  stationary vector by up to 0.5 %. With the authors' stopping rule (``tol=1e-6``) we
  reproduce their three vectors to machine precision; the default (exact) values agree with
  theirs within 1e-3 on every node whose PPR is above 3e-6 (2606 of 2810) and order the ID/OOD boundary
  identically.
* density ties: 85 nodes share c = 1/6 at the ID/OOD boundary; the authors broke the tie at
  random (16 of the 85 are ID), we break it with our seeded permutation, so up to ~30 of
  those nodes can swap sides (agreement 99.2 % with seed 0); every other node agrees.
* random: a random permutation cannot match theirs; with their ``random-values.npy`` as a
  user property, our split reproduces their ID/OOD partition exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

import gs_splits as gs

PARTS = {"in_train": "train", "in_valid": "valid_in", "in_test": "test_in", "out_valid": "valid_out", "out_test": "test_out"}


def _rel(a, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.abs(a - b) / np.abs(b)


@pytest.fixture(scope="module")
def graph(coraml):
    return gs.as_csr_graph(coraml["edges"], coraml["num_nodes"])


def test_property_vectors_match_authors(coraml, graph):
    vals = coraml["values"]
    pr = gs.pagerank(graph)
    assert _rel(-pr, vals["popularity"]).max() <= 1e-3
    top = int(np.argmax(pr))
    assert top == int(np.argmin(vals["popularity"]))
    c = gs.clustering_coefficient(graph)
    assert np.array_equal(-c, vals["density"])
    # authors' stopping rule (L1 change < 1e-6, start at p): machine precision on all three
    pr6 = gs.pagerank(graph, tol=1e-6)
    ppr6 = gs.personalized_pagerank(graph, top, tol=1e-6)
    assert _rel(-pr6, vals["popularity"]).max() <= 1e-12
    loc = vals["locality"]
    reach = loc != 0
    assert np.all(ppr6[~reach] == 0)  # other components get exactly 0 PPR
    assert _rel(-ppr6[reach], loc[reach]).max() <= 1e-12
    # default (exact) PPR: within 1e-3 wherever the value is resolved by their tolerance
    ppr = gs.personalized_pagerank(graph)
    big = reach & (np.abs(loc) > 3e-6)
    assert _rel(-ppr[big], loc[big]).max() <= 1e-3
    assert big.sum() > 2600
    # ... and the 69 that differ more are all tiny (|PPR| < 2e-6): unconverged in their file
    off = reach & (_rel(-ppr, loc) > 1e-3)
    assert off.sum() == 69 and np.abs(loc[off]).max() < 2e-6


@pytest.mark.parametrize("strategy", ["popularity", "locality", "density"])
def test_split_agrees_with_authors_masks(coraml, graph, author_masks, strategy):
    s = gs.structural_split(graph, strategy, seed=0)
    assert list(s.sizes().values()) == [898, 299, 300, 299, 1199]  # authors' part sizes
    theirs_id = author_masks[f"{strategy}__train"] | author_masks[f"{strategy}__valid_in"] | author_masks[f"{strategy}__test_in"]
    agree = (s.in_distribution == theirs_id).mean()
    assert agree >= 0.99, agree
    for ours, theirs in (("out_valid", "valid_out"), ("out_test", "test_out")):
        assert (s.masks[ours] == author_masks[f"{strategy}__{theirs}"]).mean() >= 0.99
    if strategy != "density":
        assert agree == 1.0


def test_random_with_authors_values_reproduces_partition(coraml, graph, author_masks):
    s = gs.structural_split(graph, -coraml["values"]["random"], seed=0)
    theirs_id = author_masks["random__train"] | author_masks["random__valid_in"] | author_masks["random__test_in"]
    assert np.array_equal(s.in_distribution, theirs_id)
    assert np.array_equal(s.out_test, author_masks["random__test_out"])
    r = gs.structural_split(graph, "random", seed=0)
    assert list(r.sizes().values()) == [898, 299, 300, 299, 1199]


def test_summary_on_coraml(coraml, graph):
    s = gs.structural_split(graph, "locality", seed=0)
    st = gs.split_statistics(s, graph, coraml["labels"], num_sources=16)
    # appendix A: locality makes OOD nodes farther apart than ID nodes
    def mean(dd):
        r = {int(k): v for k, v in dd.items() if k != "unreachable"}
        return sum(k * v for k, v in r.items()) / sum(r.values())

    assert mean(st.distances["OOD"]) > mean(st.distances["ID"]) + 1
    md = gs.summarize_split(s, graph, coraml["labels"], num_sources=16)
    for section in ("Part sizes", "Property distribution", "Degree distribution", "Class balance", "Pairwise graph distances"):
        assert section in md
