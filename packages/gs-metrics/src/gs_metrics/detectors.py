"""OOD detector scores from logits and embeddings (numpy only): MSP, Energy, ODIN's score,
Mahalanobis, and GNNSafe's energy propagation over a graph.

Sign convention: every score here is an **in-distribution score**, higher = more
in-distribution (as in GNNSafe's evaluation, which ranks with the ID nodes as the positive
class). Evaluate them with :func:`gs_metrics.id_positive_detection_metrics`; to use one with
:func:`gs_metrics.ood_detection_metrics` (OOD = positive, an *uncertainty* as score), pass its
negation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import logsumexp, softmax

from gs_metrics._graph import neighbour_mean
from gs_metrics._validation import (
    check_labels,
    check_matrix,
    check_positive,
    check_unit_interval,
    to_numpy,
)

__all__ = [
    "MahalanobisDetector",
    "energy_score",
    "fit_mahalanobis",
    "gnnsafe_propagation",
    "mahalanobis_score",
    "msp_score",
    "odin_score",
]

#: ODIN's temperature (Liang et al. 2018 use T = 1000 throughout their experiments).
ODIN_TEMPERATURE = 1000.0


def msp_score(logits: Any) -> np.ndarray:
    """Maximum softmax probability ``MSP(x) = max_c softmax(f(x))_c`` (Hendrycks & Gimpel 2017,
    "A baseline for detecting misclassified and out-of-distribution examples").

    Parameters
    ----------
    logits : array-like, shape (n, C)
        Pre-softmax outputs ``f(x)``. For probabilities already, ``probs.max(1)`` is the MSP
        (:func:`gs_metrics.max_prob_uncertainty` is ``1 - MSP``).

    Returns
    -------
    ndarray, shape (n,)
        In ``[1/C, 1]``; higher = more in-distribution.
    """
    f = check_matrix(logits, "logits")
    return softmax(f, axis=1).max(axis=1) if f.size else np.zeros(f.shape[0])


def energy_score(logits: Any, temperature: float = 1.0) -> np.ndarray:
    """Negative free energy ``-E(x) = T log sum_c exp(f_c(x) / T)`` (Liu, Wang, Owens, Li 2020,
    "Energy-based out-of-distribution detection", section 2: the free energy
    ``E(x; f) = -T log sum_i e^{f_i(x)/T}`` of a classifier's logits).

    The paper detects OOD inputs by a *high* energy; this returns ``-E(x)`` so that, as every
    score in this module, higher = more in-distribution (GNNSafe's ``detect`` returns the same
    ``neg_energy``, ``GNNSafe/gnnsafe.py``). Computed with a stable log-sum-exp.

    Parameters
    ----------
    logits : array-like, shape (n, C)
    temperature : float
        ``T > 0`` (default 1, the paper's and GNNSafe's default).
    """
    f = check_matrix(logits, "logits")
    t = check_positive(temperature, "temperature")
    if f.shape[1] == 0:
        raise ValueError("logits must have at least one class column")
    return t * logsumexp(f / t, axis=1)


def odin_score(logits: Any, temperature: float = ODIN_TEMPERATURE) -> np.ndarray:
    """ODIN's score ``S(x; T) = max_c exp(f_c(x) / T) / sum_j exp(f_j(x) / T)`` (Liang, Li,
    Srikant 2018, "Enhancing the reliability of out-of-distribution image detection in neural
    networks", section 3, temperature scaling): the temperature-scaled maximum softmax
    probability.

    Only the score part of ODIN: its input pre-processing (a step of size epsilon against the
    gradient of the loss, ``x~ = x - eps sign(-grad_x log S_y(x; T))``) needs the model and its
    gradients, so it belongs to gs-algos (to come); pass the logits of the perturbed inputs
    here to complete it. Default ``T = 1000``, the paper's.

    Returns
    -------
    ndarray, shape (n,)
        Higher = more in-distribution.
    """
    f = check_matrix(logits, "logits")
    t = check_positive(temperature, "temperature")
    return softmax(f / t, axis=1).max(axis=1) if f.size else np.zeros(f.shape[0])


@dataclass(frozen=True)
class MahalanobisDetector:
    """Class means and shared (tied) covariance fitted on training embeddings (Lee, Lee, Lee,
    Shin 2018, "A simple unified framework for detecting out-of-distribution samples and
    adversarial attacks", eq. 1).

    Attributes
    ----------
    classes : ndarray of int, shape (C,)
        The training labels, sorted; ``means[k]`` belongs to ``classes[k]``.
    means : ndarray, shape (C, d)
        ``mu_c = 1/N_c sum_{i: y_i = c} x_i``.
    covariance : ndarray, shape (d, d)
        ``Sigma = 1/N sum_c sum_{i: y_i = c} (x_i - mu_c)(x_i - mu_c)^T`` (maximum likelihood,
        divided by ``N``, as the authors' ``sklearn.covariance.EmpiricalCovariance``).
    precision : ndarray, shape (d, d)
        ``Sigma^{-1}`` (the pseudo-inverse when ``Sigma`` is singular, as scikit-learn's).
    """

    classes: np.ndarray
    means: np.ndarray
    covariance: np.ndarray
    precision: np.ndarray

    def distances(self, embeddings: Any) -> np.ndarray:
        """Squared Mahalanobis distances ``(x - mu_c)^T Sigma^{-1} (x - mu_c)``, shape (n, C)."""
        x = check_matrix(embeddings, "embeddings", "(n, embedding_dim)")
        if x.shape[1] != self.means.shape[1]:
            raise ValueError(
                f"embeddings have dimension {x.shape[1]} but the detector was fitted on "
                f"dimension {self.means.shape[1]}"
            )
        xp = x @ self.precision
        mp = self.means @ self.precision
        d2 = (
            np.einsum("nd,nd->n", xp, x)[:, None]
            - 2.0 * xp @ self.means.T
            + np.einsum("cd,cd->c", mp, self.means)[None, :]
        )
        return np.maximum(d2, 0.0)

    def score(self, embeddings: Any) -> np.ndarray:
        """``M(x) = max_c -(x - mu_c)^T Sigma^{-1} (x - mu_c)`` (Lee et al. 2018, eq. 2), shape
        (n,); higher = more in-distribution."""
        d2 = self.distances(embeddings)
        return -d2.min(axis=1) if d2.size else np.zeros(d2.shape[0])


def fit_mahalanobis(embeddings: Any, labels: Any) -> MahalanobisDetector:
    """Fit the class means and the shared covariance of Lee et al. 2018 (eq. 1) on training
    embeddings; see :class:`MahalanobisDetector`.

    Parameters
    ----------
    embeddings : array-like, shape (N, d)
        Features of the training samples (e.g. a GNN's penultimate layer).
    labels : array-like of int, shape (N,)
        Their classes; each class present gets a mean. At least two samples are needed.
    """
    x = check_matrix(embeddings, "embeddings", "(n, embedding_dim)")
    y = check_labels(labels, None, x.shape[0], "labels")
    if x.shape[0] < 2:
        raise ValueError(f"embeddings needs at least 2 training samples, got {x.shape[0]}")
    from scipy.linalg import pinvh

    classes, inverse = np.unique(y, return_inverse=True)
    counts = np.bincount(inverse, minlength=classes.size).astype(np.float64)
    means = np.zeros((classes.size, x.shape[1]))
    np.add.at(means, inverse, x)
    means /= counts[:, None]
    centred = x - means[inverse]
    cov = centred.T @ centred / x.shape[0]
    return MahalanobisDetector(classes=classes, means=means, covariance=cov, precision=pinvh(cov))


def mahalanobis_score(embeddings: Any, train_embeddings: Any, train_labels: Any) -> np.ndarray:
    """Mahalanobis confidence score ``M(x) = max_c -(x - mu_c)^T Sigma^{-1} (x - mu_c)`` (Lee et
    al. 2018, eq. 2) of ``embeddings``, with the means and the shared covariance fitted on
    ``train_embeddings`` / ``train_labels`` (:func:`fit_mahalanobis`).

    The paper's score without its input pre-processing and feature ensemble (both need the
    model: gs-algos). GNNSafe's Mahalanobis baseline (``GNNSafe/baselines.py``, after Lee et al.'s
    code) scores ``-0.5`` times the distance, which ranks the same.
    Higher = more in-distribution.
    """
    return fit_mahalanobis(train_embeddings, train_labels).score(embeddings)


def gnnsafe_propagation(
    scores: Any, graph: Any, *, k: int = 2, alpha: float = 0.5
) -> np.ndarray:
    """GNNSafe's energy belief propagation (Wu, Chen, Sun, Yan 2023, "Energy-based
    out-of-distribution detection for graph neural networks", ICLR 2023, energy belief
    propagation): ``K`` steps of

        ``e^(l) = alpha e^(l-1) + (1 - alpha) D^{-1} A e^(l-1)``,

    as the authors' ``GNNSafe.propagation`` (``GNNSafe/gnnsafe.py``, called by ``detect`` on the
    negative energy) computes it:

    * node ``i`` averages the scores of the *sources* of its incoming edges: ``edge_index``
      column ``(j, i)`` sends ``e_j`` to ``i``, divided by ``i``'s in-degree (PyG's
      ``degree(col)``); on an undirected graph (both directions stored) the plain neighbour
      mean. An edge stored twice counts twice.
    * no self-loops are added: the node's own score enters only through ``alpha``.
    * a node with no incoming edge receives nothing from its neighbours, so its score shrinks
      to ``alpha^K e_i`` (the code's behaviour; the paper's ``D^{-1}`` is undefined there).
    * the step is linear, so propagating the negative energy (the code) or the energy (the
      paper) gives the same result up to the sign.

    Higher = more in-distribution when ``scores`` are (the negative energy).

    Parameters
    ----------
    scores : array-like, shape (N,)
        A score per node of the whole graph, e.g. :func:`energy_score` of all nodes' logits
        (GNNSafe propagates before selecting the evaluated nodes).
    graph : array-like of int, shape (2, E), or scipy.sparse matrix (N, N)
        ``edge_index`` (PyG layout), or ``A`` with ``A[i, j]`` = weight of the edge ``i -> j``.
    k : int
        Number of propagation steps ``K`` (default 2, the authors' ``--K``).
    alpha : float
        Weight of the node's own score, in ``[0, 1]`` (default 0.5, the authors' ``--alpha``).
    """
    e = to_numpy(scores, "scores")
    if e.ndim != 1:
        raise ValueError(f"scores must be a 1-D array (one score per node), got shape {e.shape}")
    e = check_matrix(e[:, None], "scores", "(N,)")[:, 0]
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise ValueError(f"k must be a non-negative integer (propagation steps), got {k!r}")
    a = check_unit_interval(alpha, "alpha", closed=True)
    m = neighbour_mean(graph, e.shape[0], "in")
    for _ in range(int(k)):
        e = a * e + (1.0 - a) * (m @ e)
    return e
