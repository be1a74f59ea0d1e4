"""Graph normalisation: accepted inputs, documented edge handling, bad input."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from gs_splits import CSRGraph, as_csr_graph


def test_normalisation_counts_and_structure():
    # (0,1) twice (duplicate), (1,0) reverse (reciprocal), (2,2) self-loop, (1,2) one-directional
    e = np.array([[0, 0, 1, 2, 1], [1, 1, 0, 2, 2]])
    g = as_csr_graph(e, num_nodes=5)
    assert g.num_nodes == 5 and g.num_edges == 2
    assert g.stats == {
        "input_edges": 5,
        "self_loops": 1,
        "duplicate_edges": 1,
        "one_directional_pairs": 1,
        "num_edges": 2,
        "isolated_nodes": 2,
    }
    assert g.neighbors(1).tolist() == [0, 2]
    assert g.degree.tolist() == [1, 2, 1, 0, 0]
    assert g.edge_index().tolist() == [[0, 1], [1, 2]]


def test_normalisation_is_logged(caplog):
    with caplog.at_level("INFO", logger="gs_splits.graph"):
        as_csr_graph(np.array([[0, 1, 1], [1, 1, 2]]))
    text = caplog.text
    assert "self-loop" in text and "one direction" in text


@pytest.mark.parametrize("kind", ["edges", "scipy", "networkx", "torchlike", "pyglike", "csr"])
def test_all_inputs_give_same_graph(kind):
    rng = np.random.default_rng(3)
    e = rng.integers(0, 30, size=(2, 80))
    ref = as_csr_graph(e, 32)
    if kind == "edges":
        obj = e.tolist()
    elif kind == "scipy":
        obj = sp.coo_matrix((np.ones(e.shape[1]), (e[0], e[1])), shape=(32, 32)).tocsr()
    elif kind == "networkx":
        obj = nx.Graph()
        obj.add_nodes_from(range(32))
        obj.add_edges_from(e.T.tolist())
    elif kind in ("torchlike", "pyglike"):

        class Tensor:  # duck-typed stand-in: module name 'torch', .detach().cpu().numpy()
            def __init__(self, a):
                self.a = a

            def detach(self):
                return self

            def cpu(self):
                return self

            def numpy(self):
                return self.a

        Tensor.__module__ = "torch"
        t = Tensor(e)
        if kind == "torchlike":
            obj = t
        else:

            class Data:
                edge_index = t
                num_nodes = 32

            obj = Data()
    else:
        obj = ref
    g = as_csr_graph(obj, None if kind in ("pyglike", "csr", "scipy", "networkx") else 32)
    assert g.num_nodes == 32
    assert np.array_equal(g.indptr, ref.indptr) and np.array_equal(g.indices, ref.indices)
    assert g.fingerprint() == ref.fingerprint()


def test_scipy_matches_symmetrised_pattern():
    a = sp.random(50, 50, density=0.1, random_state=1, format="csr")
    g = as_csr_graph(a)
    sym = ((a + a.T) != 0).astype(float)
    sym.setdiag(0)
    sym.eliminate_zeros()
    assert (abs(g.to_scipy() - sym)).sum() == 0
    # the input has what the normaliser must remove or complete, and the counts say so
    loops = int(np.count_nonzero(a.diagonal()))
    assert loops > 0 and g.stats["self_loops"] == loops
    off = a.copy()
    off.setdiag(0)
    off.eliminate_zeros()
    both_ways = int((off != 0).multiply(off.T != 0).nnz)  # entries whose mirror is given too
    one_way = off.nnz - both_ways
    assert both_ways > 0
    assert one_way > 0 and g.stats["one_directional_pairs"] == one_way
    assert g.num_nodes == 50 and g.num_edges == sym.nnz // 2
    assert g.stats["input_edges"] == a.nnz and g.stats["duplicate_edges"] == 0


def test_isolated_trailing_nodes_kept():
    g = as_csr_graph(np.array([[0], [1]]), num_nodes=10)
    assert g.num_nodes == 10 and g.stats["isolated_nodes"] == 8


@pytest.mark.parametrize(
    ("edges", "num_nodes", "match"),
    [
        (np.array([[0, 1, 5], [1, 2, 0]]), 4, r"edge 2 \(5, 0\)"),
        (np.array([[0, -1], [1, 2]]), 4, r"edge 1 \(-1, 2\)"),
        (np.zeros((2, 0), dtype=int), None, "empty"),
        (np.zeros((2, 0), dtype=int), 0, "empty"),
        (np.array([[0, 1, 2]]), None, r"shape \(2, E\)"),
        (np.array([[0, 1], [1, 2], [2, 3]]), None, r"pass np.asarray\(edges\).T"),
        (np.array([[0.5, 1], [1, 2]]), None, "integers"),
    ],
)
def test_bad_input(edges, num_nodes, match):
    with pytest.raises(ValueError, match=match):
        as_csr_graph(edges, num_nodes)


def test_bad_type():
    with pytest.raises(TypeError, match="unsupported type"):
        as_csr_graph({"a": 1})


def test_non_square_sparse():
    with pytest.raises(ValueError, match="square"):
        as_csr_graph(sp.csr_matrix((3, 4)))


def test_subgraph_and_scipy_roundtrip():
    g = as_csr_graph(np.array([[0, 1, 2, 3], [1, 2, 3, 0]]))
    s = g.subgraph(np.array([0, 1, 2]))
    assert isinstance(s, CSRGraph) and s.num_edges == 2
    assert as_csr_graph(g.to_scipy()).fingerprint() == g.fingerprint()


def test_a_dense_adjacency_gets_a_hint():
    with pytest.raises(ValueError, match=r"dense adjacency matrix\? pass scipy.sparse.csr_matrix"):
        as_csr_graph(np.eye(5, dtype=np.int64))
