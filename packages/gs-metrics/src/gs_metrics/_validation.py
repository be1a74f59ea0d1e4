"""Input conversion and validation shared by every public function (torch-free).

Torch tensors are accepted by duck typing: anything whose type lives in a ``torch`` module
is converted with ``.detach().cpu().numpy()``; no torch import happens here.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

#: Default absolute tolerance on ``|sum_c p_c - 1|`` for a row of probabilities.
PROB_ATOL = 1e-4


class EmptyEvaluationWarning(RuntimeWarning):
    """Warned when a metric is evaluated on an empty set; the metric is then NaN."""


def to_numpy(x: Any, name: str) -> np.ndarray:
    """Convert ``x`` (numpy array, torch tensor, list, ...) to a numpy array.

    Torch tensors are detected by the module of their type (no torch import).
    """
    if x is None:
        raise TypeError(f"{name} is required, got None")
    module = type(x).__module__ or ""
    if module.startswith("torch"):
        x = x.detach().cpu().numpy()
    elif hasattr(x, "toarray") and module.startswith("scipy"):
        x = x.toarray()
    try:
        return np.asarray(x)
    except (TypeError, ValueError) as exc:  # pragma: no cover - exotic inputs
        raise TypeError(
            f"{name} must be array-like (numpy array, torch tensor or list), got {type(x)!r}"
        ) from exc


def warn_empty(what: str) -> float:
    """Warn that ``what`` is empty and return NaN (the documented result for empty sets)."""
    warnings.warn(
        f"{what} is empty: the metric is undefined and NaN is returned",
        EmptyEvaluationWarning,
        stacklevel=3,
    )
    return float("nan")


def check_probs(probs: Any, name: str = "probs", atol: float = PROB_ATOL) -> np.ndarray:
    """Validate a ``(n, C)`` array of class probabilities; returns float64."""
    p = to_numpy(probs, name)
    if p.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D array of shape (n, num_classes), got shape {p.shape}"
        )
    if p.shape[1] < 1:
        raise ValueError(f"{name} must have at least one class column, got shape {p.shape}")
    if not np.issubdtype(p.dtype, np.floating):
        if np.issubdtype(p.dtype, np.integer) or p.dtype == np.bool_:
            p = p.astype(np.float64)
        else:
            raise TypeError(f"{name} must hold floating-point probabilities, got dtype {p.dtype}")
    if p.dtype != np.float32:
        p = p.astype(np.float64, copy=False)
    if p.size:
        if not np.isfinite(p).all():
            raise ValueError(
                f"{name} contains NaN or infinite values; probabilities must be finite"
            )
        if p.min() < -atol or p.max() > 1 + atol:
            raise ValueError(
                f"{name} must lie in [0, 1] (tolerance {atol}); got values in [{p.min()}, {p.max()}]"
            )
        dev = np.abs(p.sum(axis=1, dtype=np.float64) - 1.0)
        worst = int(np.argmax(dev))
        if dev[worst] > atol:
            # the classes along the rows instead: every column sums to 1
            transposed = p.shape[0] > 1 and bool(
                np.all(np.abs(p.sum(axis=0, dtype=np.float64) - 1.0) <= atol)
            )
            hint = (
                f" (probabilities of shape (C, N)? pass {name}.T)"
                if transposed
                else ". Pass probabilities (apply softmax to logits)"
            )
            raise ValueError(
                f"rows of {name} must sum to 1 (tolerance {atol}); row {worst} sums to "
                f"{float(p[worst].sum(dtype=np.float64))!r}{hint}"
            )
    return p


def check_labels(
    labels: Any,
    num_classes: int | None,
    n: int | None,
    name: str = "labels",
    mask: np.ndarray | None = None,
) -> np.ndarray:
    """Validate integer class labels in ``[0, num_classes)`` of length ``n``; returns int64.

    With a boolean ``mask`` (from :func:`check_mask`) the range is checked on the masked
    entries only, so unlabelled nodes outside it may hold anything integral (PyG marks them
    ``-1``); the caller must not index with those labels.
    """
    y = to_numpy(labels, name)
    if y.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of class indices, got shape {y.shape}")
    if n is not None and y.shape[0] != n:
        raise ValueError(
            f"{name} has length {y.shape[0]} but {n} predictions were given; lengths must match"
        )
    if np.issubdtype(y.dtype, np.floating):
        if y.size and not np.isfinite(y).all():
            raise ValueError(
                f"{name} contains NaN or infinite values; labels must be integer class indices"
            )
        if y.size and not np.all(y == np.round(y)):
            raise TypeError(f"{name} must be integer class indices, got non-integral floats")
    elif not (np.issubdtype(y.dtype, np.integer) or y.dtype == np.bool_):
        raise TypeError(f"{name} must be integer class indices, got dtype {y.dtype}")
    y = y.astype(np.int64, copy=False)
    checked = y if mask is None else y[mask]
    if checked.size and num_classes is not None and (
        checked.min() < 0 or checked.max() >= num_classes
    ):
        where = "" if mask is None else " on the nodes in mask (the others are not checked)"
        raise ValueError(
            f"{name} must lie in [0, {num_classes}) (the number of probability columns){where}; "
            f"got values in [{checked.min()}, {checked.max()}]"
        )
    return y


def check_labels_and_mask(
    labels: Any, mask: Any, num_classes: int | None, n: int, name: str = "labels"
) -> tuple[np.ndarray, np.ndarray]:
    """``(labels, mask)`` validated for ``n`` nodes: the mask by :func:`check_mask`, the labels
    by :func:`check_labels`, their range on the masked nodes only when a mask is given."""
    m = check_mask(mask, n)
    return check_labels(labels, num_classes, n, name, None if mask is None else m), m


def check_binary(target: Any, n: int | None, name: str) -> np.ndarray:
    """Validate a binary 0/1 (or boolean) target of length ``n``; returns bool."""
    t = to_numpy(target, name)
    if t.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of 0/1 or booleans, got shape {t.shape}")
    if n is not None and t.shape[0] != n:
        raise ValueError(
            f"{name} has length {t.shape[0]} but {n} scores were given; lengths must match"
        )
    if t.dtype == np.bool_:
        return t
    if np.issubdtype(t.dtype, np.floating) and t.size and not np.isfinite(t).all():
        raise ValueError(f"{name} contains NaN; it must hold 0/1 or booleans")
    if t.size and not np.isin(t, (0, 1)).all():
        raise ValueError(f"{name} must hold only 0/1 or booleans, got values {np.unique(t)[:5]}")
    return t.astype(bool)


def check_scores(scores: Any, name: str, n: int | None = None) -> np.ndarray:
    """Validate a 1-D finite float array (uncertainties, confidences, predictions)."""
    s = to_numpy(scores, name)
    if s.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array, got shape {s.shape}")
    if n is not None and s.shape[0] != n:
        raise ValueError(
            f"{name} has length {s.shape[0]} but {n} were expected; lengths must match"
        )
    if not (np.issubdtype(s.dtype, np.number) or s.dtype == np.bool_):
        raise TypeError(f"{name} must be numeric, got dtype {s.dtype}")
    s = s.astype(np.float64, copy=False)
    if s.size and not np.isfinite(s).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return s


def check_mask(mask: Any, n: int, name: str = "mask") -> np.ndarray:
    """A boolean mask of length ``n`` from a boolean mask or an integer index array (None: all)."""
    if mask is None:
        return np.ones(n, dtype=bool)
    m = to_numpy(mask, name)
    if m.ndim != 1:
        raise ValueError(f"{name} must be a 1-D boolean mask or index array, got shape {m.shape}")
    if m.dtype == np.bool_:
        if m.shape[0] != n:
            raise ValueError(
                f"{name} has length {m.shape[0]} but there are {n} nodes; lengths must match"
            )
        return m
    if np.issubdtype(m.dtype, np.integer):
        if m.size and (m.min() < 0 or m.max() >= n):
            raise ValueError(f"{name} indices must lie in [0, {n}); got [{m.min()}, {m.max()}]")
        out = np.zeros(n, dtype=bool)
        out[m] = True
        return out
    raise TypeError(f"{name} must be a boolean mask or an integer index array, got dtype {m.dtype}")


def check_confidences(conf: Any, name: str = "confidences", n: int | None = None) -> np.ndarray:
    """Validate confidences in ``[0, 1]``."""
    c = check_scores(conf, name, n)
    if c.size and (c.min() < 0 or c.max() > 1):
        raise ValueError(f"{name} must lie in [0, 1]; got values in [{c.min()}, {c.max()}]")
    return c


def check_edge_index(edge_index: Any, num_nodes: int) -> np.ndarray:
    """Validate a PyG ``edge_index`` of shape ``(2, E)`` with node indices in ``[0, num_nodes)``;
    returns int64."""
    ei = to_numpy(edge_index, "edge_index")
    if ei.ndim != 2 or ei.shape[0] != 2:
        raise ValueError(
            f"edge_index must have shape (2, num_edges) (PyG convention), got shape {ei.shape}"
        )
    if not np.issubdtype(ei.dtype, np.integer):
        raise TypeError(f"edge_index must hold integer node indices, got dtype {ei.dtype}")
    if ei.shape[1] and (ei.min() < 0 or ei.max() >= num_nodes):
        raise ValueError(
            f"edge_index must hold node indices in [0, {num_nodes}) (the number of nodes); "
            f"got values in [{ei.min()}, {ei.max()}]"
        )
    return ei.astype(np.int64, copy=False)


def check_matrix(x: Any, name: str, what: str = "(n, num_classes)") -> np.ndarray:
    """Validate a finite, real 2-D array (logits, embeddings, scores of shape ``what``); float64."""
    a = to_numpy(x, name)
    if a.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of shape {what}, got shape {a.shape}")
    if not (np.issubdtype(a.dtype, np.number) or a.dtype == np.bool_) or np.iscomplexobj(a):
        raise TypeError(f"{name} must hold real numbers, got dtype {a.dtype}")
    a = a.astype(np.float64, copy=False)
    if a.size and not np.isfinite(a).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return a


def check_positive(value: Any, name: str, *, allow_zero: bool = False) -> float:
    """A finite real number ``> 0`` (or ``>= 0`` with ``allow_zero``), as a float."""
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if not ok or not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number {bound}, got {value!r}")
    return float(value)


def check_unit_interval(value: Any, name: str, *, closed: bool = False) -> float:
    """A real number in ``(0, 1)`` (or ``[0, 1]`` with ``closed``), as a float."""
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    inside = ok and (0 <= value <= 1 if closed else 0 < value < 1)
    if not inside:
        interval = "[0, 1]" if closed else "(0, 1)"
        raise ValueError(f"{name} must be a number in {interval}, got {value!r}")
    return float(value)


def check_rng(rng: Any, name: str = "rng") -> np.random.Generator:
    """A ``numpy.random.Generator`` from a Generator or an integer seed (no global state)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng >= 0:
        return np.random.default_rng(int(rng))
    raise TypeError(
        f"{name} must be a numpy.random.Generator or a non-negative integer seed, got {rng!r}"
    )
