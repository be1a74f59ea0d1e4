"""Conformal prediction: the calibration quantile, APS / RAPS scores and sets, DAPS diffusion
(worked examples by hand), and the coverage guarantee on synthetic exchangeable data."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import softmax

import gs_metrics as gm

P = np.array([[0.5, 0.3, 0.2], [0.1, 0.6, 0.3]])


def test_conformal_quantile_worked_example():
    s = np.array([0.1, 0.5, 0.3, 0.9, 0.7])  # sorted: 0.1 0.3 0.5 0.7 0.9, n = 5
    # alpha = 0.4: (5 + 1)(1 - 0.4) = 3.6 -> ceil 4 -> the 4th smallest, 0.7
    assert gm.conformal_quantile(s, 0.4) == 0.7
    # alpha = 0.2: 6 * 0.8 = 4.8 -> 5 -> 0.9 (the largest)
    assert gm.conformal_quantile(s, 0.2) == 0.9
    # alpha = 0.1: 6 * 0.9 = 5.4 -> 6 > n: too few points, every class enters: +inf
    assert gm.conformal_quantile(s, 0.1) == math.inf
    # n = 9, alpha = 0.1: 10 * 0.9 = 9 exactly (9.000000000000002 in floating point) -> 9th
    assert gm.conformal_quantile(np.arange(1.0, 10.0), 0.1) == 9.0
    # numpy's inverted-CDF quantile at level ceil((n + 1)(1 - alpha)) / n is the same point
    rng = np.random.default_rng(0)
    for n, alpha in [(50, 0.1), (101, 0.05), (37, 0.2), (500, 0.01)]:
        x = rng.random(n)
        k = math.ceil((n + 1) * (1 - alpha))
        ref = np.quantile(x, k / n, method="inverted_cdf")
        assert gm.conformal_quantile(x, alpha) == ref


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: gm.conformal_quantile([0.1, 0.2], 0.0), r"alpha must be a number in \(0, 1\)"),
        (lambda: gm.conformal_quantile([0.1, 0.2], 1.5), r"alpha must be a number in \(0, 1\)"),
        (lambda: gm.conformal_quantile([], 0.1), "scores is empty"),
        (lambda: gm.conformal_quantile([[0.1]], 0.1), "scores must be a 1-D array"),
        (lambda: gm.conformal_threshold(P, [0, 3], 0.1), r"labels must lie in \[0, 3\)"),
        (lambda: gm.aps_scores(P, randomized=True), "randomized=True needs rng"),
        (lambda: gm.aps_scores(P, rng=0), "rng is used only with randomized=True"),
        (lambda: gm.aps_scores(P, randomized=True, rng="x"), "rng must be a numpy.random.Gen"),
        (lambda: gm.aps_scores([[2.0, -1.0]]), "probs must lie in"),
        (lambda: gm.raps_scores(P, lam=-0.1, k_reg=1), "lam must be a finite number >= 0"),
        (lambda: gm.raps_scores(P, lam=0.1, k_reg=-1), "k_reg must be a non-negative integer"),
        (lambda: gm.daps_scores(P, np.array([[0], [1]]), lam=2), r"lam must be a number in \[0, 1\]"),
        (lambda: gm.prediction_sets(P, float("nan")), "threshold must be a number"),
        (lambda: gm.set_coverage(np.ones(3, bool), [0]), "sets must be a 2-D boolean array"),
        (lambda: gm.mean_set_size([[2, 0]]), "sets must hold booleans or 0/1"),
    ],
)
def test_conformal_inputs_are_checked(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


def test_aps_and_raps_worked_example():
    # row 0: order 0 (0.5), 1 (0.3), 2 (0.2): cumulative 0.5, 0.8, 1.0
    # row 1: order 1 (0.6), 2 (0.3), 0 (0.1): class 1 -> 0.6, class 2 -> 0.9, class 0 -> 1.0
    aps = gm.aps_scores(P)
    assert aps == pytest.approx(np.array([[0.5, 0.8, 1.0], [1.0, 0.6, 0.9]]))
    # randomised: mass above + u * own, u = rng.random(n), one per row
    u = np.random.default_rng(7).random(2)
    ref = np.array(
        [
            [0.5 * u[0], 0.5 + 0.3 * u[0], 0.8 + 0.2 * u[0]],
            [0.9 + 0.1 * u[1], 0.6 * u[1], 0.6 + 0.3 * u[1]],
        ]
    )
    assert gm.aps_scores(P, randomized=True, rng=7) == pytest.approx(ref)
    assert gm.aps_scores(P, randomized=True, rng=np.random.default_rng(7)) == pytest.approx(ref)
    # RAPS, lam = 0.1, k_reg = 1: ranks (1, 2, 3) and (3, 1, 2) cost (0, .1, .2) and (.2, 0, .1)
    raps = gm.raps_scores(P, lam=0.1, k_reg=1)
    assert raps == pytest.approx(np.array([[0.5, 0.9, 1.2], [1.2, 0.6, 1.0]]))
    assert gm.raps_scores(P, lam=0.1, k_reg=1, randomized=True, rng=7) == pytest.approx(
        ref + np.array([[0.0, 0.1, 0.2], [0.2, 0.0, 0.1]])
    )
    assert gm.raps_scores(P, lam=0.0, k_reg=0) == pytest.approx(aps)  # lam = 0 is APS
    # ties go by class index: (0.4, 0.4, 0.2) -> class 0 first: 0.4, 0.8, 1.0
    assert gm.aps_scores([[0.4, 0.4, 0.2]]) == pytest.approx(np.array([[0.4, 0.8, 1.0]]))

    # sets at q = 0.85: APS row 0 {0, 1} (0.5, 0.8 <= 0.85), row 1 {1}; RAPS row 0 {0} (0.9 > q)
    aps_sets = gm.prediction_sets(aps, 0.85)
    assert aps_sets.tolist() == [[True, True, False], [False, True, False]]
    assert gm.prediction_sets(raps, 0.85).tolist() == [[True, False, False], [False, True, False]]
    # labels (1, 2): row 0 covered, row 1 not -> 1/2; sizes 2 and 1 -> 1.5
    assert gm.set_coverage(aps_sets, [1, 2]) == 0.5
    assert gm.mean_set_size(aps_sets) == 1.5
    # threshold from calibration rows with labels (1, 2): true-class scores 0.8, 0.9; n = 2,
    # alpha = 0.34: 3 * 0.66 = 1.98 -> 2nd smallest = 0.9
    assert gm.conformal_threshold(aps, [1, 2], 0.34) == pytest.approx(0.9)
    # empty sets: counted as 0, or left out as the DAPS authors' average_set_size does
    sets = np.array([[True, True, False], [False, False, False]])
    assert gm.mean_set_size(sets) == 1.0
    assert gm.mean_set_size(sets, exclude_empty=True) == 2.0


def test_daps_worked_example():
    s = np.array([[0.2, 0.8], [0.6, 0.4], [1.0, 0.0]])
    path = np.array([[0, 1, 1, 2], [1, 0, 2, 1]])  # 0 - 1 - 2, both directions
    # neighbour means: node 0 -> s1 = (.6, .4); node 1 -> (s0 + s2)/2 = (.6, .4); node 2 -> s1
    # lam = 0.5: (s + m) / 2 = (.4, .6), (.6, .4), (.8, .2)
    assert gm.daps_scores(s, path, lam=0.5) == pytest.approx(
        np.array([[0.4, 0.6], [0.6, 0.4], [0.8, 0.2]])
    )
    # default lam = 0.6, node 0: 0.4 (.2, .8) + 0.6 (.6, .4) = (.44, .56)
    assert gm.daps_scores(s, path)[0] == pytest.approx([0.44, 0.56])
    # directed 0 -> 1: node 0 averages its out-neighbour 1 (the authors' A @ S / deg, row =
    # source); node 1 and 2 have no out-edge: (1 - lam) s
    out = gm.daps_scores(s, np.array([[0], [1]]), lam=0.5)
    assert out == pytest.approx(np.array([[0.4, 0.6], [0.3, 0.2], [0.5, 0.0]]))
    # a scipy sparse adjacency is the same graph
    a = sp.csr_matrix(([1.0, 1.0, 1.0, 1.0], (path[0], path[1])), shape=(3, 3))
    assert gm.daps_scores(s, a, lam=0.5) == pytest.approx(gm.daps_scores(s, path, lam=0.5))
    assert gm.daps_scores(s, path, lam=0.0) == pytest.approx(s)


def _synthetic_case(rng, n, c=5):
    """Synthetic exchangeable nodes: i.i.d. logits, labels drawn from a *different* (miscalibrated)
    softmax, and an Erdos-Renyi graph independent of both (mean degree about 4)."""
    logits = rng.normal(size=(n, c)) * 2.0
    probs = softmax(logits, axis=1)
    truth = softmax(0.5 * logits + rng.normal(size=(n, c)), axis=1)
    labels = (truth.cumsum(1) < rng.random(n)[:, None]).sum(1)
    m = 2 * n
    edges = rng.integers(0, n, size=(2, m))
    edge_index = np.concatenate([edges, edges[::-1]], axis=1)  # undirected
    return probs, labels, edge_index


METHODS = {
    "aps": lambda p, ei, rng: gm.aps_scores(p),
    "aps_randomized": lambda p, ei, rng: gm.aps_scores(p, randomized=True, rng=rng),
    "raps_randomized": lambda p, ei, rng: gm.raps_scores(
        p, lam=0.05, k_reg=2, randomized=True, rng=rng
    ),
    "daps": lambda p, ei, rng: gm.daps_scores(
        gm.aps_scores(p, randomized=True, rng=rng), ei
    ),
}


@pytest.mark.parametrize("method", sorted(METHODS))
def test_split_conformal_coverage_on_synthetic_exchangeable_data(method):
    """Property: with exchangeable calibration and test points, the coverage is at least
    1 - alpha; with continuous scores it is exactly k / (n + 1), k = ceil((n + 1)(1 - alpha)).
    Over 1,500 seeds the mean coverage must lie within 4 standard errors of that value (a
    quantile without the finite-sample correction, k = ceil(n (1 - alpha)), gives 18/21 = 0.857
    here, far outside)."""
    alpha, n_cal, n_test, seeds = 0.1, 20, 200, 1500
    k = math.ceil((n_cal + 1) * (1 - alpha))  # 19: expected coverage 19/21 = 0.9048
    expected = k / (n_cal + 1)
    cov, size = np.empty(seeds), np.empty(seeds)
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        probs, labels, edge_index = _synthetic_case(rng, n_cal + n_test)
        scores = METHODS[method](probs, edge_index, rng)
        perm = rng.permutation(n_cal + n_test)
        cal, test = perm[:n_cal], perm[n_cal:]
        q = gm.conformal_threshold(scores[cal], labels[cal], alpha)
        sets = gm.prediction_sets(scores[test], q)
        cov[seed] = gm.set_coverage(sets, labels[test])
        size[seed] = gm.mean_set_size(sets)
    se = cov.std(ddof=1) / math.sqrt(seeds)
    assert cov.mean() >= 1 - alpha - 4 * se, (cov.mean(), se)
    assert abs(cov.mean() - expected) <= 4 * se, (cov.mean(), expected, se)
    assert 1.0 <= size.mean() < 5.0  # informative: not every class
