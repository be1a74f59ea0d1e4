"""Split conformal prediction for classification: APS and RAPS non-conformity scores, DAPS's
diffusion of scores over a graph, the calibration quantile, prediction sets, coverage and set
size (numpy / scipy only).

Convention: a **non-conformity** score, lower = the class fits better; a class enters the
prediction set when its score is at most the calibrated threshold,
``C(x) = {y : s(x, y) <= q_hat}``. (The DAPS authors' code negates APS into a conformity score
and keeps ``score > threshold``; the sets are the same up to ties.)

The recipe (split conformal, e.g. Angelopoulos & Bates, "A gentle introduction to conformal
prediction", section 1):

1. scores of every node and class: :func:`aps_scores` / :func:`raps_scores` (optionally
   diffused over the graph with :func:`daps_scores`);
2. ``q_hat = conformal_threshold(scores[cal], labels[cal], alpha)``;
3. ``sets = prediction_sets(scores[test], q_hat)``; :func:`set_coverage`, :func:`mean_set_size`.

When the calibration and test nodes are exchangeable, ``P(y in C(x)) >= 1 - alpha``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from gs_metrics._graph import neighbour_mean
from gs_metrics._validation import (
    check_labels,
    check_matrix,
    check_positive,
    check_probs,
    check_rng,
    check_scores,
    check_unit_interval,
    to_numpy,
    warn_empty,
)

__all__ = [
    "aps_scores",
    "conformal_quantile",
    "conformal_threshold",
    "daps_scores",
    "mean_set_size",
    "prediction_sets",
    "raps_scores",
    "set_coverage",
]

#: DAPS's diffusion weight ``lambda`` (the authors' ``neigh_coef``): 0.6, the value their
#: notebooks fix most often (``transductive-inductive.ipynb``, ``other-stats.ipynb``,
#: ``synthetic-data.ipynb``; 0.55 in ``pred-sets.ipynb``; tuned elsewhere).
DAPS_LAMBDA = 0.6


def conformal_quantile(scores: Any, alpha: float) -> float:
    """Split-conformal calibration quantile: the ``ceil((n + 1)(1 - alpha))``-th smallest of the
    ``n`` calibration scores, i.e. their empirical quantile at level
    ``ceil((n + 1)(1 - alpha)) / n`` (the finite-sample correction; Vovk et al. 2005, Lei et al.
    2018; Angelopoulos & Bates, "A gentle introduction to conformal prediction", section 1).

    With exchangeable calibration and test points, ``P(s_test <= q_hat) >= 1 - alpha``. When
    ``ceil((n + 1)(1 - alpha)) > n`` (too few calibration points for this ``alpha``) the
    quantile is ``+inf``: every class enters every set. A product ``(n + 1)(1 - alpha)`` within
    ``1e-9`` of an integer counts as that integer (``0.9 * 10`` is ``9.000000000000002`` in
    floating point).

    Parameters
    ----------
    scores : array-like, shape (n,)
        Non-conformity scores of the calibration points at their true class.
    alpha : float
        Miscoverage level in ``(0, 1)``.
    """
    s = check_scores(scores, "scores")
    a = check_unit_interval(alpha, "alpha")
    n = s.shape[0]
    if n == 0:
        raise ValueError("scores is empty: conformal calibration needs at least one score")
    level = (n + 1) * (1.0 - a)
    k = math.ceil(level - 1e-9)
    if k > n:
        return float("inf")
    return float(np.partition(s, k - 1)[k - 1])


def conformal_threshold(scores: Any, labels: Any, alpha: float) -> float:
    """:func:`conformal_quantile` of the calibration points' scores at their true class,
    ``s_i = scores[i, labels[i]]``.

    Parameters
    ----------
    scores : array-like, shape (n, C)
        Non-conformity scores of every class for the calibration points.
    labels : array-like of int, shape (n,)
        Their true classes in ``[0, C)``.
    """
    s = check_matrix(scores, "scores")
    y = check_labels(labels, s.shape[1], s.shape[0], "labels")
    return conformal_quantile(s[np.arange(s.shape[0]), y], alpha)


def prediction_sets(scores: Any, threshold: float) -> np.ndarray:
    """Prediction sets ``C(x_i) = {y : s(x_i, y) <= q_hat}`` as a boolean array (n, C).

    ``threshold`` is the calibrated ``q_hat`` (:func:`conformal_threshold`); ``+inf`` gives
    every class.
    """
    s = check_matrix(scores, "scores")
    q = float(threshold)
    if math.isnan(q):
        raise ValueError("threshold must be a number (the calibrated quantile), got nan")
    return s <= q


def _check_sets(sets: Any) -> np.ndarray:
    c = to_numpy(sets, "sets")
    if c.ndim != 2:
        raise ValueError(f"sets must be a 2-D boolean array of shape (n, C), got shape {c.shape}")
    if c.dtype != np.bool_:
        if c.size and not np.isin(c, (0, 1)).all():
            raise ValueError("sets must hold booleans or 0/1 (from prediction_sets)")
        c = c.astype(bool)
    return c


def set_coverage(sets: Any, labels: Any) -> float:
    """Empirical marginal coverage ``1/n sum_i 1(y_i in C(x_i))``.

    NaN with an :class:`~gs_metrics.EmptyEvaluationWarning` for no point.
    """
    c = _check_sets(sets)
    y = check_labels(labels, c.shape[1], c.shape[0], "labels")
    if c.shape[0] == 0:
        return warn_empty("sets")
    return float(c[np.arange(c.shape[0]), y].mean())


def mean_set_size(sets: Any, *, exclude_empty: bool = False) -> float:
    """Mean prediction-set size ``1/n sum_i |C(x_i)|``.

    ``exclude_empty=True`` averages over the non-empty sets only, as the DAPS authors'
    ``GraphCP.average_set_size`` does (``torch-conformal/gnn_cp/cp/graph_cp.py``); the default
    counts an empty set as size 0. NaN with an :class:`~gs_metrics.EmptyEvaluationWarning` when
    nothing is averaged.
    """
    c = _check_sets(sets)
    sizes = c.sum(axis=1)
    if exclude_empty:
        sizes = sizes[sizes > 0]
    if sizes.size == 0:
        return warn_empty("sets")
    return float(sizes.mean())


def _sorted_cumulative(p: np.ndarray):
    """Each class's 1-based rank ``o(y)`` (decreasing probability, ties by class index) and the
    cumulative probability of the classes ranked up to and including it."""
    order = np.argsort(-p, axis=1, kind="stable")
    cum_sorted = np.cumsum(np.take_along_axis(p, order, axis=1), axis=1)
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(p.shape[1])[None, :], axis=1)
    return rank + 1, np.take_along_axis(cum_sorted, rank, axis=1)


def _uniforms(randomized: bool, rng: Any, n: int) -> np.ndarray | None:
    if not randomized:
        if rng is not None:
            raise ValueError("rng is used only with randomized=True; drop it or set randomized=True")
        return None
    if rng is None:
        raise ValueError(
            "randomized=True needs rng: a numpy.random.Generator or an integer seed (no hidden "
            "global random state)"
        )
    return check_rng(rng).random(n)


def _aps(p: np.ndarray, u: np.ndarray | None):
    """Ranks ``o(y)`` and APS scores: mass above ``y`` plus ``u p_y`` (``u = 1`` without ``u``)."""
    rank, cum = _sorted_cumulative(p)
    return rank, (cum if u is None else cum - (1.0 - u)[:, None] * p)


def aps_scores(
    probs: Any, *, randomized: bool = False, rng: Any = None, atol: float = 1e-4
) -> np.ndarray:
    """Adaptive prediction sets (APS) non-conformity scores of every class (Romano, Sesia,
    Candès 2020, "Classification with valid and adaptive coverage"):

        ``E(x, y, u) = sum_{j: o(j) < o(y)} p_j(x) + u p_y(x)``,

    the probability mass of the classes ranked above ``y`` plus a uniform share ``u`` of its
    own, with ``o(y)`` the rank of ``y`` by decreasing ``p(x)`` (ties by class index). Without
    randomisation ``u = 1``: the mass of ``y`` and every class ranked above it.

    Parameters
    ----------
    probs : array-like, shape (n, C)
        Class probabilities (softmax outputs), rows summing to 1 within ``atol``.
    randomized : bool
        Draw ``u ~ U(0, 1)``, one per sample (row), shared by its classes: ``u = rng.random(n)``.
        The randomised sets attain coverage ``1 - alpha`` almost exactly; the non-randomised
        are conservative.
    rng : numpy.random.Generator or int, required with ``randomized=True``
        The source of ``u`` (a seed makes the scores reproducible).

    Returns
    -------
    ndarray, shape (n, C)
        ``E(x_i, c)`` for every class ``c``; lower = conforms better.

    Notes
    -----
    The DAPS authors' ``APSTransformation`` (``torch-conformal/gnn_cp/cp/transformations.py``)
    draws one ``u`` per sample *and class* and negates the score; coverage is valid either way
    (the true class's score has the same law), but only a shared ``u`` gives nested sets.
    """
    p = check_probs(probs, "probs", atol).astype(np.float64, copy=False)
    return _aps(p, _uniforms(randomized, rng, p.shape[0]))[1]


def raps_scores(
    probs: Any,
    *,
    lam: float,
    k_reg: int,
    randomized: bool = False,
    rng: Any = None,
    atol: float = 1e-4,
) -> np.ndarray:
    """Regularised adaptive prediction sets (RAPS) non-conformity scores (Angelopoulos, Bates,
    Malik, Jordan 2021, "Uncertainty sets for image classifiers using conformal prediction"):

        ``E(x, y, u) = sum_{j: o(j) < o(y)} p_j(x) + u p_y(x) + lam (o(y) - k_reg)^+``,

    the APS score (:func:`aps_scores`, same ``u`` and ranking) plus a penalty ``lam`` for each
    rank beyond ``k_reg`` (``o(y)`` is 1-based: with ``k_reg = 1`` the top class is free, the
    second costs ``lam``, the third ``2 lam``). ``lam = 0`` gives APS.

    Parameters
    ----------
    lam : float
        Penalty ``lambda >= 0``. The paper tunes ``lam`` and ``k_reg`` on held-out data; the
        DAPS authors' ``RegularizerPenalty`` defaults to ``penalty=0.1, k_reg=3``.
    k_reg : int
        Number of free ranks ``k_reg >= 0``.
    randomized, rng, atol
        As in :func:`aps_scores`.
    """
    lam_ = check_positive(lam, "lam", allow_zero=True)
    if isinstance(k_reg, bool) or not isinstance(k_reg, (int, np.integer)) or k_reg < 0:
        raise ValueError(f"k_reg must be a non-negative integer (free ranks), got {k_reg!r}")
    p = check_probs(probs, "probs", atol).astype(np.float64, copy=False)
    rank, base = _aps(p, _uniforms(randomized, rng, p.shape[0]))
    return base + lam_ * np.maximum(rank - int(k_reg), 0)


def daps_scores(scores: Any, graph: Any, *, lam: float = DAPS_LAMBDA) -> np.ndarray:
    """Diffusion-adaptive prediction sets (DAPS; Zargarbashi, Antonelli, Bojchevski, ICML 2023,
    "Conformal prediction sets for graph neural networks", section on diffusion-adaptive
    prediction sets): each node's scores are mixed
    with the mean of its neighbours',

        ``S_hat = (1 - lam) S + lam D^{-1} A S``,  i.e.
        ``s_hat(x_i, y) = (1 - lam) s(x_i, y) + lam / |N_i| sum_{j in N_i} s(x_j, y)``,

    as the authors' ``VertexMPTransformation.transform`` computes it
    (``torch-conformal/gnn_cp/cp/graph_transformations.py`` in their DAPS repository; argument
    ``neigh_coef`` = ``lam``):

    * ``A[i, j] = 1`` for the ``edge_index`` column ``(i, j)`` and ``D`` its row sums: node
      ``i`` averages over the *targets* of its outgoing edges (on an undirected graph, both
      directions stored, its neighbours). An edge stored twice counts twice.
    * a node without neighbours gets ``(1 - lam) s`` (the code divides by ``deg + 1e-10``, so
      its neighbour term is 0; the paper's ``1/|N_i|`` is undefined there).
    * the scores of **all** nodes (calibration, test and the rest) are diffused before the
      calibration split, as the paper does transductively. The diffusion is linear: it
      commutes with the authors' sign flip of APS.

    Parameters
    ----------
    scores : array-like, shape (N, C)
        Non-conformity scores of every node of the graph and class, e.g. :func:`aps_scores`
        (the paper's base score).
    graph : array-like of int, shape (2, E), or scipy.sparse matrix (N, N)
        ``edge_index`` (PyG layout), or ``A`` with ``A[i, j]`` = weight of the edge ``i -> j``.
    lam : float
        Diffusion weight in ``[0, 1]`` (default 0.6, see ``DAPS_LAMBDA``; the code's default
        ``neigh_coef=0`` is no diffusion).
    """
    s = check_matrix(scores, "scores", "(num_nodes, num_classes)")
    a = check_unit_interval(lam, "lam", closed=True)
    m = neighbour_mean(graph, s.shape[0], "out")
    return (1.0 - a) * s + a * (m @ s)
