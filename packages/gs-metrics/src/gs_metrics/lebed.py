"""LeBed score functions: label-free test-error estimation of a trained GNN (torch-free).

Reference: "Online GNN Evaluation Under Test-time Graph Distribution Shifts"
(``lebed-online-gnn-evaluation.txt``), section 2.2, eq. (6)-(8) and algorithm 1.

This module holds the *pure functions* of LeBed on plain arrays; the re-training loop that
produces their inputs trains a model and lives in :mod:`gs_algos.lebed` (architecture rule:
anything that trains a model is in gs-algos). Nothing here imports torch.

* :func:`structure_score`: ``g(s(Z), A)`` of eq. (7), the binary cross-entropy of
  ``sigmoid(cos(z_i, z_j))`` against the adjacency, on the edges (label 1) plus as many
  sampled non-edges (label 0) instead of all ``M^2`` pairs (the authors' code,
  ``LEBED-cora-amz/dataset_re.py``, samples ``E`` negatives with PyG ``negative_sampling``);
* :func:`sample_non_edges`: that negative sample, drawn once per test graph;
* :func:`structure_tolerance` and :func:`should_stop`: the stopping rule of algorithm 1
  (``D_stru = |g(Z_t) - g(Z*)|`` of eq. 6 below a tolerance, after a minimum number of steps);
* :func:`parameter_distance`: the LeBed score ``||theta* - theta_t||_2`` of eq. (8).

Inputs are array-like (numpy arrays, lists, or CPU tensors, which numpy converts;
:func:`parameter_distance` also detaches tensors that require grad, as
``model.named_parameters()`` gives them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

import numpy as np

from gs_metrics._validation import to_numpy, warn_empty

__all__ = [
    "parameter_distance",
    "sample_non_edges",
    "should_stop",
    "structure_score",
    "structure_tolerance",
]


def _edge_array(edge_index: Any, name: str = "edge_index") -> np.ndarray:
    ei = np.asarray(edge_index)
    if ei.ndim != 2 or ei.shape[0] != 2 or not np.issubdtype(ei.dtype, np.integer):
        raise ValueError(
            f"{name} must be an integer array of shape (2, E), got shape {ei.shape} dtype {ei.dtype}"
        )
    return ei.astype(np.int64, copy=False)


def sample_non_edges(
    edge_index: Any,
    num_nodes: int,
    num_samples: int,
    seed: int | np.random.Generator = 0,
    *,
    strict: bool = True,
) -> np.ndarray:
    """Sample ``num_samples`` distinct node pairs ``(i, j)``, ``i != j``, that are not edges in
    either direction; returns an int64 array of shape (2, num_samples).

    The negatives of eq. (7) (the authors sample ``E`` of them once per test graph with PyG
    ``negative_sampling``; ``LEBED-cora-amz/dataset_re.py``). ``strict=False`` returns all
    the non-edges there are when fewer than ``num_samples`` exist (tiny dense test graphs), as
    ``negative_sampling`` does; ``strict=True`` raises instead.
    """
    rng = np.random.default_rng(seed)
    ei = _edge_array(edge_index)
    n = int(num_nodes)
    if n < 2:
        raise ValueError(f"num_nodes must be >= 2 to sample non-edges, got {n}")
    lo, hi = np.minimum(ei[0], ei[1]), np.maximum(ei[0], ei[1])
    taken = np.unique(lo * n + hi)
    capacity = n * (n - 1) // 2 - taken.size
    if num_samples > capacity and not strict:
        num_samples = capacity
    if num_samples > capacity:
        raise ValueError(f"cannot sample {num_samples} non-edges: the graph has only {capacity}")
    found = np.zeros(0, dtype=np.int64)
    for _ in range(100):
        need = num_samples - found.size
        if need <= 0:
            break
        k = max(2 * need, 64)
        i = rng.integers(0, n, k)
        j = rng.integers(0, n, k)
        ok = i != j
        a, b = np.minimum(i, j)[ok], np.maximum(i, j)[ok]
        key = a * n + b
        pos = np.searchsorted(taken, key)
        pos[pos == taken.size] = 0
        key = key[taken[pos] != key] if taken.size else key
        key = key[~np.isin(key, found)]
        _, first = np.unique(key, return_index=True)
        key = key[np.sort(first)]  # distinct, in the random order drawn
        found = np.concatenate([found, key[:need]])
    else:  # pragma: no cover - only for nearly complete graphs
        raise RuntimeError("non-edge sampling did not converge; the graph is too dense")
    return np.stack([found // n, found % n])


def structure_score(embeddings: Any, pos: Any, neg: Any) -> float:
    """``g(s(Z), A)`` of eq. (7) on sampled pairs.

    Mean binary cross-entropy of ``sigmoid(cos(z_i, z_j))`` with target 1 on the edges ``pos``
    and 0 on the non-edges ``neg`` (the cosine similarity is the logit, as in the authors'
    ``F.binary_cross_entropy_with_logits(F.cosine_similarity(...))``). Computed in float64.

    Parameters
    ----------
    embeddings : array-like, shape (M, D)
    pos, neg : integer array-like, shape (2, E+) and (2, E-)

    Returns
    -------
    float
        NaN (with a warning) when there is no pair at all; the stopping rule then never
        fires (``NaN < tolerance`` is false) and the re-training runs to its step limit.
    """
    z = np.asarray(embeddings, dtype=np.float64)
    if z.ndim != 2:
        raise ValueError(f"embeddings must have shape (M, D), got {z.shape}")
    p, q = _edge_array(pos, "pos"), _edge_array(neg, "neg")
    norm = np.linalg.norm(z, axis=1, keepdims=True)
    z = z / np.maximum(norm, 1e-12)
    pairs = np.concatenate([p, q], axis=1)
    if pairs.shape[1] == 0:  # a test graph without edges and non-edges: no structure to score
        return warn_empty("the node-pair sample (no edge and no non-edge)")
    if pairs.min() < 0 or pairs.max() >= z.shape[0]:
        raise ValueError(f"pos / neg must hold node indices in [0, {z.shape[0]})")
    cos = np.einsum("ij,ij->i", z[pairs[0]], z[pairs[1]])
    target = np.concatenate([np.ones(p.shape[1]), np.zeros(q.shape[1])])
    # BCE with logits, numerically stable: max(x, 0) - x t + log(1 + exp(-|x|))
    loss = np.maximum(cos, 0.0) - cos * target + np.log1p(np.exp(-np.abs(cos)))
    return float(loss.mean())


def structure_tolerance(
    reference: float, epsilon: float, mode: Literal["absolute", "relative"] = "absolute"
) -> float:
    """The tolerance on ``D_stru`` (eq. 6): ``epsilon`` ("absolute": the authors'
    ``lp_margin`` for Cora / Amazon-Photo) or ``epsilon * |g(Z*)|`` ("relative": their
    ``lp_margin_rate`` for the domain and temporal shifts, the paper's "fixed ratio" of
    appendix D)."""
    if epsilon < 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon}")
    if mode == "absolute":
        return float(epsilon)
    if mode == "relative":
        return float(epsilon) * abs(float(reference))
    raise ValueError(f"mode must be 'absolute' or 'relative', got {mode!r}")


def should_stop(
    step: int, score: float, reference: float, tolerance: float, min_steps: int
) -> bool:
    """Stopping rule of algorithm 1 (lines 5-8): stop at step ``step`` when
    ``step >= min_steps`` and ``D_stru = |score - reference| < tolerance`` (strict, as in the
    authors' ``if epoch >= args.atleastepoch: if margin < best_margin: break``)."""
    return step >= min_steps and abs(float(score) - float(reference)) < tolerance


_NAMED_ARRAYS = (
    "a mapping of name -> array (e.g. dict(model.named_parameters()) or model.state_dict()) "
    "or an iterable of (name, array) pairs such as model.named_parameters()"
)


def _named_arrays(params: Any, name: str) -> dict[Any, Any]:
    """``params`` as a dict ``{name: array}`` from a mapping or from ``(name, array)`` pairs."""
    if isinstance(params, Mapping):
        return dict(params)
    if isinstance(params, (str, bytes)) or hasattr(params, "shape") or not isinstance(
        params, Iterable
    ):
        raise TypeError(f"{name} must be {_NAMED_ARRAYS}; got {type(params).__name__}")
    pairs = list(params)  # a generator (named_parameters()) is read once
    for item in pairs:
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)):
            raise TypeError(
                f"{name} must be {_NAMED_ARRAYS}; got an iterable of {type(item).__name__}"
            )
    out = dict(pairs)
    if len(out) != len(pairs):
        raise ValueError(f"{name} names a parameter more than once")
    return out


def parameter_distance(
    theta_star: Mapping[str, Any] | Iterable[tuple[str, Any]],
    theta: Mapping[str, Any] | Iterable[tuple[str, Any]],
) -> float:
    """``LeBed = ||theta* - theta_t||_2`` (eq. 8) over all parameters, flattened and joined.

    ``theta_star`` and ``theta`` each name the same parameters: a mapping of name -> array
    (e.g. ``dict(model.named_parameters())`` or ``model.state_dict()``) or an iterable of
    ``(name, array)`` pairs such as ``model.named_parameters()``. The arrays may be numpy
    arrays, lists or torch tensors (converted by duck typing, detached, no torch import).
    Orientation: grows with the test error (``ORIENTATION["lebed"] = +1``).
    """
    theta_star = _named_arrays(theta_star, "theta_star")
    theta = _named_arrays(theta, "theta")
    if set(theta_star) != set(theta):
        diff = sorted(set(theta_star) ^ set(theta))
        raise ValueError(f"theta_star and theta must name the same parameters; differ in {diff}")
    sq = 0.0
    for k in theta_star:
        a = np.asarray(to_numpy(theta_star[k], f"theta_star[{k!r}]"), dtype=np.float64)
        b = np.asarray(to_numpy(theta[k], f"theta[{k!r}]"), dtype=np.float64)
        if a.shape != b.shape:
            raise ValueError(f"parameter {k!r} has shape {a.shape} in theta_star, {b.shape} in theta")
        sq += float(np.sum((a - b) ** 2))
    return float(np.sqrt(sq))
