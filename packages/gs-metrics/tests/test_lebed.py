"""LeBed score functions (lebed-online-gnn-evaluation, eq. 6-8, algorithm 1): worked examples
and independent references, all without torch. The re-training that feeds them is tested in
gs-algos (``packages/gs-algos/tests/test_lebed.py``)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import log_loss

from gs_metrics.lebed import (
    parameter_distance,
    sample_non_edges,
    should_stop,
    structure_score,
    structure_tolerance,
)


def test_structure_score_worked_example():
    """Eq. (7) by hand: an edge with cos = 1 and a non-edge with cos = 0 (logits of the
    sigmoid): BCE = (-log s(1) - log(1 - s(0))) / 2."""
    z = np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 3.0]])  # lengths must not matter
    pos = np.array([[0], [1]])
    neg = np.array([[0], [2]])
    expected = (-np.log(1 / (1 + np.exp(-1.0))) - np.log(1 - 0.5)) / 2
    assert structure_score(z, pos, neg) == pytest.approx(expected, rel=1e-12)


def test_structure_score_matches_sklearn_log_loss():
    """Independent reference: scikit-learn's log loss of sigmoid(cosine) on the pair labels."""
    rng = np.random.default_rng(0)
    z = rng.normal(size=(40, 5))
    pos = rng.integers(0, 40, (2, 30))
    neg = rng.integers(0, 40, (2, 50))
    pairs = np.concatenate([pos, neg], axis=1)
    zn = z / np.linalg.norm(z, axis=1, keepdims=True)
    cos = (zn[pairs[0]] * zn[pairs[1]]).sum(1)
    prob = 1 / (1 + np.exp(-cos))
    labels = np.r_[np.ones(30), np.zeros(50)]
    ref = log_loss(labels, prob, labels=[0, 1])
    assert structure_score(z, pos, neg) == pytest.approx(ref, rel=1e-10)
    with pytest.raises(ValueError, match="node indices"):
        structure_score(z, pos + 100, neg)
    with pytest.raises(ValueError, match="shape"):
        structure_score(z[0], pos, neg)


def test_stopping_rule():
    """Algorithm 1 as the authors run it: ``epoch >= atleastepoch and |g - g*| < margin``."""
    assert structure_tolerance(0.8, 0.03) == 0.03
    assert structure_tolerance(-0.8, 0.05, "relative") == pytest.approx(0.04)
    assert not should_stop(4, 0.70, 0.70, 0.03, min_steps=5)  # too early
    assert should_stop(5, 0.72, 0.70, 0.03, min_steps=5)
    assert not should_stop(5, 0.73, 0.70, 0.03, min_steps=5)  # strict: |d| = tol does not stop
    assert should_stop(9, 0.68, 0.70, 0.03, min_steps=5)  # from below as well
    assert not should_stop(9, 0.70, 0.70, 0.0, min_steps=0)  # zero tolerance never stops
    with pytest.raises(ValueError, match="epsilon"):
        structure_tolerance(1.0, -0.1)
    with pytest.raises(ValueError, match="mode"):
        structure_tolerance(1.0, 0.1, "percent")


def test_parameter_distance_worked_example():
    """Eq. (8): the L2 norm over all parameters joined: sqrt(3^2 + 4^2 + 12^2) = 13."""
    a = {"w": np.array([[3.0, 4.0]]), "b": np.array([4.0])}
    b = {"w": np.array([[0.0, 0.0]]), "b": np.array([-8.0])}
    assert parameter_distance(a, b) == pytest.approx(13.0)
    assert parameter_distance(a, a) == 0.0
    with pytest.raises(ValueError, match="same parameters"):
        parameter_distance(a, {"w": a["w"]})
    with pytest.raises(ValueError, match="shape"):
        parameter_distance(a, {"w": np.zeros(2), "b": a["b"]})


def test_non_edge_sample():
    ei = np.array([[0, 1, 2, 3], [1, 2, 3, 0]])
    neg = sample_non_edges(ei, 10, 30, seed=1)
    assert neg.shape == (2, 30)
    assert np.all(neg[0] != neg[1])
    pairs = {(min(a, b), max(a, b)) for a, b in neg.T}
    assert len(pairs) == 30
    assert not pairs & {(0, 1), (1, 2), (2, 3), (0, 3)}
    assert np.array_equal(neg, sample_non_edges(ei, 10, 30, seed=1))
    # not biased towards small node ids: high ids appear
    assert neg.max() >= 8
    with pytest.raises(ValueError, match="only"):
        sample_non_edges(ei, 4, 5)
    # non-strict: every non-edge of a tiny dense graph (4 nodes, 4 edges: 2 non-edges)
    few = sample_non_edges(ei, 4, 5, seed=0, strict=False)
    assert {(min(a, b), max(a, b)) for a, b in few.T} == {(0, 2), (1, 3)}
    with pytest.raises(ValueError, match="shape"):
        sample_non_edges(np.zeros((3, 2), dtype=int), 4, 1)


def test_structure_score_without_pairs_is_nan_and_never_stops():
    empty = np.zeros((2, 0), dtype=np.int64)
    with pytest.warns(Warning, match="node-pair"):
        g = structure_score(np.eye(3), empty, empty)
    assert np.isnan(g)
    assert not should_stop(10, g, g, 1.0, min_steps=0)


def test_parameter_distance_takes_named_parameter_pairs():
    """What the docstring promised: (name, array) pairs as ``named_parameters()`` yields them
    (a generator, read once) as well as mappings; the result does not depend on the form."""
    a = {"w": np.array([[1.0, 2.0]]), "b": np.array([3.0])}
    b = {"w": np.array([[4.0, 6.0]]), "b": np.array([15.0])}
    ref = parameter_distance(a, b)
    assert parameter_distance((kv for kv in a.items()), list(b.items())) == ref
    assert parameter_distance(list(a.items()), (kv for kv in b.items())) == ref
    with pytest.raises(ValueError, match="same parameters"):
        parameter_distance(iter(a.items()), [("w", b["w"])])
    with pytest.raises(ValueError, match="theta names a parameter more than once"):
        parameter_distance(a, [("w", b["w"]), ("b", b["b"]), ("w", b["w"])])


@pytest.mark.parametrize(
    "bad",
    [np.zeros(2), [np.zeros(2), np.ones(2)], 3.0, "w", [("w",)], [(0, np.zeros(2))]],
    ids=["array", "list-of-arrays", "float", "str", "1-tuples", "int-names"],
)
def test_parameter_distance_rejects_anything_but_named_arrays(bad):
    accepted = r"must be a mapping of name -> array \(e\.g\. dict\(model\.named_parameters\(\)\)"
    with pytest.raises(TypeError, match="^theta_star " + accepted):
        parameter_distance(bad, {"w": np.zeros(2)})
    with pytest.raises(TypeError, match="^theta " + accepted):
        parameter_distance({"w": np.zeros(2)}, bad)


def test_parameter_distance_of_torch_named_parameters():
    """Tensors that require grad (as named_parameters() gives them) are detached by duck typing."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    m1, m2 = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    ref = np.sqrt(sum(
        float(np.sum((p.detach().numpy().astype(np.float64) - q.detach().numpy()) ** 2))
        for p, q in zip(m1.parameters(), m2.parameters(), strict=True)
    ))
    assert parameter_distance(m1.named_parameters(), m2.named_parameters()) == pytest.approx(ref)
    assert parameter_distance(dict(m1.named_parameters()), m2.state_dict()) == pytest.approx(ref)
    with pytest.raises(TypeError, match="got Tensor"):
        parameter_distance(torch.zeros(2), torch.ones(2))
