"""Edgewise calibration metrics: edgewise ECE (eq. 3-4), agree / disagree ECE (eq. 5-8),
edgewise accuracy, NLL and Brier (appendix B eq. 17, 19, 21), edge homophily (eq. 22) and the
K index (eq. 23) of the edgewise-calibration paper (``edgewise-calibration.md``).

Evaluated edges
    ``E_U = {(i, j) in E : i, j in U}``: both endpoints in the evaluated node set ``U``. Edges are
    treated as undirected: ``(i, j)`` and ``(j, i)`` are the same edge, duplicates count once and
    self-loops are dropped, so the results do not depend on whether an undirected edge is stored
    once or in both directions.
Edge joint distribution
    Either the naive mean-field product ``p_ij(a, b) = p_i(a) p_j(b)`` of the node marginals (the
    default, for ordinary GNNs; appendix A), or an edge-marginal array of shape ``(E, C, C)`` from a
    structured model, where ``edge_marginals[e, a, b]`` is ``p(y_src = a, y_dst = b)`` for the edge
    ``e = (src, dst)`` as stored in ``edge_index``. When an undirected edge appears several times,
    the first occurrence (in ``edge_index`` order) supplies its marginal.
Edge prediction, confidence and correctness
    The edge's prediction is the argmax ``(a, b)`` of its joint and its confidence the maximum
    ``c_ij = max_{a,b} p_ij(a, b)``; the edge is correct when ``(a, b) = (y_i, y_j)``. Under mean
    field this is exactly "both endpoints are correctly classified" (eq. 4) and
    ``c_ij = c_i c_j``.

Every function computes in chunks of edges (no Python loop over edges), so the memory held at
once stays bounded for graphs with tens of millions of edges.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gs_metrics._validation import (
    PROB_ATOL,
    check_edge_index,
    check_labels,
    check_labels_and_mask,
    check_mask,
    check_probs,
    to_numpy,
    warn_empty,
)
from gs_metrics.calibration import (
    DEFAULT_BINS,
    Binning,
    BinRule,
    ReliabilityBins,
    _bins_from_sums,
    _check_bins,
    _check_rule,
    _reliability_bins,
    bin_indices,
)

__all__ = [
    "EdgeSubsetMetrics",
    "EdgewiseMetrics",
    "EvaluatedEdges",
    "agree_ece",
    "disagree_ece",
    "edge_homophily",
    "edgewise_accuracy",
    "edgewise_brier",
    "edgewise_ece",
    "edgewise_metrics",
    "edgewise_nll",
    "evaluated_edges",
    "k_index",
]

#: Edges processed per chunk (bounds the temporary memory to a few hundred MB).
CHUNK_EDGES = 1 << 22
_SUBSETS = ("all", "agree", "disagree")


@dataclass(frozen=True)
class EvaluatedEdges:
    """The evaluated undirected edges ``E_U``, each once, as ``lo < hi`` node pairs.

    Attributes
    ----------
    lo, hi : ndarray of int64, shape (|E_U|,)
        Endpoints with ``lo < hi``, sorted by ``(lo, hi)``.
    num_nodes : int
    source_index : ndarray of int64 or None
        For each evaluated edge, the position of its first occurrence in the input
        ``edge_index`` (only when requested).
    flipped : ndarray of bool or None
        True where that occurrence was stored as ``(hi, lo)``.
    """

    lo: np.ndarray
    hi: np.ndarray
    num_nodes: int
    source_index: np.ndarray | None = None
    flipped: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.lo.shape[0])


def evaluated_edges(
    edge_index: Any, num_nodes: int, mask: Any = None, *, return_index: bool = False
) -> EvaluatedEdges:
    """The evaluated edge set ``E_U`` (section 2.1): undirected, deduplicated, no self-loops.

    Parameters
    ----------
    edge_index : array-like of int, shape (2, E)
        Edges in PyG convention (directed pairs; an undirected edge may appear once or twice).
    num_nodes : int
        Number of nodes ``N``.
    mask : bool array (N,) or int indices, optional
        Evaluated node set ``U``; default all nodes.
    return_index : bool
        Also return where each evaluated edge first occurs in ``edge_index`` (needed to pick
        rows of an edge-marginal array); this uses a stable argsort instead of an in-place sort.
    """
    if isinstance(num_nodes, bool) or not isinstance(num_nodes, (int, np.integer)) or num_nodes < 0:
        raise ValueError(f"num_nodes must be a non-negative integer, got {num_nodes!r}")
    n = int(num_nodes)
    ei = check_edge_index(edge_index, n)
    m = check_mask(mask, n)
    src, dst = ei[0], ei[1]
    keep = m[src]
    keep &= m[dst]
    # canonical key lo * n + hi of the undirected edge (self-loops are dropped after dedup)
    key = np.minimum(src, dst)
    tmp = np.maximum(src, dst)
    key *= n
    key += tmp
    del tmp
    idx = np.flatnonzero(keep) if return_index else None
    key = key[keep]
    del keep
    if return_index:
        order = np.argsort(key, kind="stable")
        key = key[order]
    else:
        key.sort()
        order = None
    first = np.empty(key.shape[0], dtype=bool)
    if key.shape[0]:
        first[0] = True
        np.not_equal(key[1:], key[:-1], out=first[1:])
    key = key[first]
    lo = key // max(n, 1)
    key -= lo * n
    loops = lo == key
    has_loops = bool(loops.any())
    if has_loops:
        lo, key = lo[~loops], key[~loops]
    source = flipped = None
    if return_index:
        source = idx[order[first]]
        if has_loops:
            source = source[~loops]
        flipped = src[source] > dst[source]
    return EvaluatedEdges(lo=lo, hi=key, num_nodes=n, source_index=source, flipped=flipped)


@dataclass(frozen=True)
class EdgeSubsetMetrics:
    """Edgewise metrics on one edge subset (``E_U``, ``E_A`` or ``E_D``).

    Attributes
    ----------
    ece, mce, l2 : float
        Edgewise ECE (eq. 3, resp. 5 and 7), maximum and L2 calibration error.
    accuracy : float
        Fraction of correct edges (eq. 17).
    nll : float
        Edgewise NLL, ``-mean log p_ij(y_i, y_j)`` (eq. 19; clipped below at ``eps``).
    brier : float
        Edgewise Brier score (eq. 21), summed over the ``C x C`` joint classes.
    k_index : float
        Fraction of evaluated nodes that are an endpoint of an edge of the subset (eq. 23).
    num_edges : int
    bins : ReliabilityBins
        Reliability-diagram data of the subset.
    """

    ece: float
    mce: float
    l2: float
    accuracy: float
    nll: float
    brier: float
    k_index: float
    num_edges: int
    bins: ReliabilityBins = field(repr=False)


@dataclass(frozen=True)
class EdgewiseMetrics:
    """All edgewise metrics of one evaluation (see :func:`edgewise_metrics`).

    Attributes
    ----------
    all, agree, disagree : EdgeSubsetMetrics
        Metrics on ``E_U``, on the agreeing edges ``E_A`` (``y_i = y_j``) and on the disagreeing
        edges ``E_D`` (``y_i != y_j``).
    homophily : float
        ``|E_A| / |E_U|`` (eq. 22).
    num_nodes_evaluated : int
        ``|U|``.
    """

    all: EdgeSubsetMetrics
    agree: EdgeSubsetMetrics
    disagree: EdgeSubsetMetrics
    homophily: float
    num_nodes_evaluated: int

    def as_dict(self) -> dict[str, float]:
        """Flat ``{name: value}`` dictionary (e.g. ``"edge_ece"``, ``"agree_ece"``, ``"homophily"``)."""
        out: dict[str, float] = {}
        for name, sub in (("edge", self.all), ("agree", self.agree), ("disagree", self.disagree)):
            for key in ("ece", "mce", "l2", "accuracy", "nll", "brier", "k_index"):
                out[f"{name}_{key}"] = getattr(sub, key)
            out[f"{name}_num_edges"] = sub.num_edges
        out["homophily"] = self.homophily
        return out


class _EdgeSums:
    """Streaming sums over edge chunks, per subset (agree = 0/1), for all edgewise metrics."""

    def __init__(self, n_bins: int, binning: Binning, eps: float, bin_rule: BinRule = "paper"):
        self.n_bins = _check_bins(n_bins)
        self.bin_rule = _check_rule(bin_rule)
        if binning not in ("width", "mass"):
            raise ValueError(f"binning must be 'width' or 'mass', got {binning!r}")
        self.binning = binning
        self.eps = float(eps)
        m = self.n_bins
        self.counts = np.zeros(2 * m, dtype=np.int64)  # index: bin + m * agree
        self.conf_sum = np.zeros(2 * m)
        self.corr_sum = np.zeros(2 * m)
        self.nll_sum = np.zeros(2)
        self.brier_sum = np.zeros(2)
        self.kept_nodes = np.zeros(3, dtype=np.int64)  # all, agree, disagree
        self.num_nodes_evaluated = 0
        self._mass: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def add(self, conf, correct, agree, pt, brier) -> None:
        m = self.n_bins
        a = agree.astype(np.intp)
        nll = -np.log(np.maximum(pt, self.eps))
        self.nll_sum += np.bincount(a, weights=nll, minlength=2)
        self.brier_sum += np.bincount(a, weights=brier, minlength=2)
        if self.binning == "width":
            idx = bin_indices(conf, m, self.bin_rule)
            idx += m * a
            self.counts += np.bincount(idx, minlength=2 * m)
            self.conf_sum += np.bincount(idx, weights=conf, minlength=2 * m)
            self.corr_sum += np.bincount(idx, weights=correct, minlength=2 * m)
        else:
            self._mass.append((conf.copy(), correct.copy(), agree.copy()))
            # only the per-subset totals are used in this mode: disagree at 0, agree at m
            n_agree = int(np.count_nonzero(agree))
            self.counts[0] += agree.shape[0] - n_agree
            self.counts[m] += n_agree

    def add_nodes(
        self, num_evaluated: int, covered_all: int, covered_agree: int, covered_disagree: int
    ):
        self.num_nodes_evaluated += int(num_evaluated)
        self.kept_nodes += np.array([covered_all, covered_agree, covered_disagree], dtype=np.int64)

    def _bins(self, which: str) -> ReliabilityBins:
        m = self.n_bins
        if self.binning == "width":
            sl = {"all": None, "agree": slice(m, 2 * m), "disagree": slice(0, m)}[which]
            if sl is None:
                counts = self.counts[:m] + self.counts[m:]
                cs = self.conf_sum[:m] + self.conf_sum[m:]
                rs = self.corr_sum[:m] + self.corr_sum[m:]
            else:
                counts, cs, rs = self.counts[sl], self.conf_sum[sl], self.corr_sum[sl]
            return _bins_from_sums(np.linspace(0.0, 1.0, m + 1), counts, cs, rs)
        if self._mass:
            conf = np.concatenate([c for c, _, _ in self._mass])
            corr = np.concatenate([r for _, r, _ in self._mass])
            agr = np.concatenate([a for _, _, a in self._mass])
        else:
            conf, corr, agr = np.zeros(0), np.zeros(0), np.zeros(0, dtype=bool)
        sel = {"all": slice(None), "agree": agr, "disagree": ~agr}[which]
        return _reliability_bins(conf[sel], corr[sel].astype(np.float64), m, "mass")

    def subset(self, which: str) -> EdgeSubsetMetrics:
        m = self.n_bins
        tot = {
            "all": self.counts.sum(),
            "agree": self.counts[m:].sum(),
            "disagree": self.counts[:m].sum(),
        }[which]
        pos = {"all": slice(None), "agree": slice(1, 2), "disagree": slice(0, 1)}[which]
        bins = self._bins(which)
        label = {
            "all": "evaluated edge set E_U",
            "agree": "agreeing edge set E_A",
            "disagree": "disagreeing edge set E_D",
        }[which]
        if tot == 0:
            nan = warn_empty(f"the {label}")
            k = 0.0 if self.num_nodes_evaluated else float("nan")
            return EdgeSubsetMetrics(nan, nan, nan, nan, nan, nan, k, 0, bins)
        k_all = {"all": 0, "agree": 1, "disagree": 2}[which]
        return EdgeSubsetMetrics(
            ece=bins.error("l1"),
            mce=bins.error("max"),
            l2=bins.error("l2"),
            accuracy=float(np.nansum(bins.accuracy * bins.counts) / tot),
            nll=float(self.nll_sum[pos].sum() / tot),
            brier=float(self.brier_sum[pos].sum() / tot),
            k_index=float(self.kept_nodes[k_all] / self.num_nodes_evaluated),
            num_edges=int(tot),
            bins=bins,
        )

    def result(self) -> EdgewiseMetrics:
        m = self.n_bins
        tot = self.counts.sum()
        hom = (
            float(self.counts[m:].sum() / tot) if tot else warn_empty("the evaluated edge set E_U")
        )
        return EdgewiseMetrics(
            all=self.subset("all"),
            agree=self.subset("agree"),
            disagree=self.subset("disagree"),
            homophily=hom,
            num_nodes_evaluated=self.num_nodes_evaluated,
        )


def _check_marginals(em: np.ndarray, num_edges: int, num_classes: int) -> np.ndarray:
    if em.ndim != 3 or em.shape[1:] != (num_classes, num_classes) or em.shape[0] != num_edges:
        raise ValueError(
            f"edge_marginals must have shape (num_edges, C, C) = ({num_edges}, {num_classes}, "
            f"{num_classes}) matching edge_index and probs, got shape {em.shape}"
        )
    if not np.issubdtype(em.dtype, np.floating):
        raise TypeError(
            f"edge_marginals must hold floating-point probabilities, got dtype {em.dtype}"
        )
    return em


def _accumulate(
    sums: _EdgeSums,
    probs: Any,
    labels: Any,
    edge_index: Any,
    mask: Any,
    edge_marginals: Any,
    atol: float,
    chunk_size: int = CHUNK_EDGES,
) -> None:
    p = check_probs(probs, "probs", atol)
    n, c = p.shape
    y, m = check_labels_and_mask(labels, mask, c, n)
    y = np.where(m, y, 0)  # labels outside the mask are unchecked (PyG: -1) and never used
    use_joint = edge_marginals is not None
    em = None
    if use_joint:
        em = to_numpy(edge_marginals, "edge_marginals")
        ei_len = to_numpy(edge_index, "edge_index").shape[-1]
        _check_marginals(em, ei_len, c)
    edges = evaluated_edges(edge_index, n, m, return_index=use_joint)
    lo_all, hi_all = edges.lo, edges.hi
    cov_agree = np.zeros(n, dtype=bool)
    cov_dis = np.zeros(n, dtype=bool)
    if not use_joint:
        # Per-node quantities packed in one 32-byte row, so that each endpoint costs a single
        # random memory access: [confidence, p_i(y_i), sum_l p_i(l)^2, 2 * y_i + correct_i].
        table = np.empty((n, 4))
        if n:
            pred = np.argmax(p, axis=1)
            rng_n = np.arange(n)
            table[:, 0] = p[rng_n, pred]  # the max, without a second pass over (N, C)
            table[:, 1] = p[rng_n, y]
            table[:, 2] = np.einsum("ij,ij->i", p, p, dtype=np.float64)
            table[:, 3] = y * 2 + (pred == y)
        rows = table.view(np.dtype((np.void, 32))).ravel()
    for start in range(0, len(edges), chunk_size):
        lo = lo_all[start : start + chunk_size]
        hi = hi_all[start : start + chunk_size]
        if not use_joint:
            a = np.take(rows, lo).view(np.float64).reshape(-1, 4)
            b = np.take(rows, hi).view(np.float64).reshape(-1, 4)
            conf = a[:, 0] * b[:, 0]
            pt = a[:, 1] * b[:, 1]
            brier = a[:, 2] * b[:, 2]
            brier -= 2.0 * pt
            brier += 1.0
            ca = a[:, 3].astype(np.int64)
            cb = b[:, 3].astype(np.int64)
            del a, b
            correct = (ca & cb & 1).astype(np.float64)
            ca >>= 1
            cb >>= 1
            agree = ca == cb
            del ca, cb
        else:
            ylo, yhi = y[lo], y[hi]
            agree = ylo == yhi
            sel = edges.source_index[start : start + chunk_size]
            joint = np.asarray(em[sel], dtype=np.float64)
            flip = edges.flipped[start : start + chunk_size]
            joint[flip] = joint[flip].transpose(0, 2, 1)
            if not np.isfinite(joint).all():
                raise ValueError("edge_marginals contains NaN or infinite values")
            if joint.min() < -atol or joint.max() > 1 + atol:
                raise ValueError(f"edge_marginals must lie in [0, 1] (tolerance {atol})")
            flat = joint.reshape(joint.shape[0], -1)
            dev = np.abs(flat.sum(axis=1) - 1.0)
            if dev.size and dev.max() > atol:
                bad = int(sel[np.argmax(dev)])
                raise ValueError(
                    f"each edge_marginals[e] must sum to 1 over its C x C entries (tolerance {atol}); "
                    f"edge {bad} sums to {float(em[bad].sum())!r}"
                )
            arg = np.argmax(flat, axis=1)
            conf = np.clip(flat[np.arange(flat.shape[0]), arg], 0.0, 1.0)
            correct = ((arg // c == ylo) & (arg % c == yhi)).astype(np.float64)
            pt = joint[np.arange(flat.shape[0]), ylo, yhi]
            brier = np.einsum("ij,ij->i", flat, flat) - 2.0 * pt + 1.0
        sums.add(conf, correct, agree, pt, brier)
        cov_agree[lo[agree]] = True
        cov_agree[hi[agree]] = True
        dis = ~agree
        cov_dis[lo[dis]] = True
        cov_dis[hi[dis]] = True
    cov_all = int(np.count_nonzero(cov_agree | cov_dis))
    sums.add_nodes(int(m.sum()), cov_all, int(cov_agree.sum()), int(cov_dis.sum()))


def edgewise_metrics(
    probs: Any,
    labels: Any,
    edge_index: Any,
    mask: Any = None,
    *,
    edge_marginals: Any = None,
    n_bins: int = DEFAULT_BINS,
    binning: Binning = "width",
    bin_rule: BinRule = "paper",
    eps: float = 1e-12,
    atol: float = PROB_ATOL,
) -> EdgewiseMetrics:
    """All edgewise metrics at once: ECE/MCE/L2, accuracy, NLL, Brier and K index on ``E_U``,
    ``E_A`` and ``E_D``, and the edge homophily (paper eq. 3-8, 17, 19, 21-23).

    Parameters
    ----------
    probs : array-like, shape (N, C)
        Node marginals (rows sum to 1 within ``atol``).
    labels : array-like of int, shape (N,)
        True node classes in ``[0, C)`` on the evaluated nodes; the labels outside ``mask`` are
        neither used nor range-checked (PyG's ``-1`` for unlabelled nodes is fine there).
    edge_index : array-like of int, shape (2, E)
        Graph edges (PyG convention); see :func:`evaluated_edges` for the edge semantics.
    mask : bool (N,) or int indices, optional
        Evaluated node set ``U`` (default: all nodes).
    edge_marginals : array-like, shape (E, C, C), optional
        Edge joint distributions of a structured model, aligned with ``edge_index``. Default:
        the naive mean-field product of ``probs``.
    n_bins : int
        Number of bins (default 15).
    binning : {"width", "mass"}
        Equal-width bins of eq. (3) or equal-mass bins.
    bin_rule : {"paper", "floor"}
        Equal-width bins ``(k-1)/m < c <= k/m`` (eq. 3, default) or the authors' released
        ``floor(c m)`` (see :func:`gs_metrics.bin_indices`).
    eps : float
        Lower clip of the probability inside the NLL's logarithm.

    Returns
    -------
    EdgewiseMetrics
        An empty subset gives NaN metrics with an :class:`~gs_metrics.EmptyEvaluationWarning`.

    Examples
    --------
    Appendix A, chain 1-2-3 with labels (w, b, b) and p(b) = (2/3, 2/3, 2/3):

    >>> import numpy as np
    >>> p = np.array([[1/3, 2/3]] * 3)
    >>> res = edgewise_metrics(p, [0, 1, 1], [[0, 1], [1, 2]], n_bins=1)
    >>> round(res.all.ece, 12) == round(1 / 18, 12)
    True
    """
    sums = _EdgeSums(n_bins, binning, eps, bin_rule)
    _accumulate(sums, probs, labels, edge_index, mask, edge_marginals, atol)
    return sums.result()


def _one(name: str, subset: str, probs, labels, edge_index, mask, kwargs) -> float:
    res = edgewise_metrics(probs, labels, edge_index, mask, **kwargs)
    return getattr(getattr(res, subset), name)


def edgewise_ece(probs, labels, edge_index, mask=None, **kwargs) -> float:
    """Edgewise ECE (eq. 3-4) over ``E_U``; keyword arguments as in :func:`edgewise_metrics`."""
    return _one("ece", "all", probs, labels, edge_index, mask, kwargs)


def agree_ece(probs, labels, edge_index, mask=None, **kwargs) -> float:
    """Agree ECE (eq. 5-6) over the edges of ``E_U`` whose true endpoint labels agree."""
    return _one("ece", "agree", probs, labels, edge_index, mask, kwargs)


def disagree_ece(probs, labels, edge_index, mask=None, **kwargs) -> float:
    """Disagree ECE (eq. 7-8) over the edges of ``E_U`` whose true endpoint labels differ."""
    return _one("ece", "disagree", probs, labels, edge_index, mask, kwargs)


def edgewise_accuracy(probs, labels, edge_index, mask=None, **kwargs) -> float:
    """Edgewise accuracy (appendix B eq. 17): fraction of evaluated edges predicted correctly."""
    return _one("accuracy", "all", probs, labels, edge_index, mask, kwargs)


def edgewise_nll(probs, labels, edge_index, mask=None, **kwargs) -> float:
    """Edgewise NLL (appendix B eq. 19): ``-mean log p_ij(y_i, y_j)`` over ``E_U``."""
    return _one("nll", "all", probs, labels, edge_index, mask, kwargs)


def edgewise_brier(probs, labels, edge_index, mask=None, **kwargs) -> float:
    """Edgewise Brier score (appendix B eq. 21) over ``E_U``."""
    return _one("brier", "all", probs, labels, edge_index, mask, kwargs)


def edge_homophily(
    labels: Any, edge_index: Any, mask: Any = None, *, num_nodes: int | None = None
) -> float:
    """Edge homophily of the evaluated edges, ``|E_A| / |E_U|`` (appendix C eq. 22).

    NaN with a warning when ``E_U`` is empty.
    """
    y = check_labels(labels, None, None)
    n = y.shape[0] if num_nodes is None else num_nodes
    if y.shape[0] != n:
        raise ValueError(f"labels has length {y.shape[0]} but num_nodes is {n}")
    e = evaluated_edges(edge_index, n, mask)
    if len(e) == 0:
        return warn_empty("the evaluated edge set E_U")
    return float(np.mean(y[e.lo] == y[e.hi]))


def k_index(
    edge_index: Any,
    mask: Any = None,
    *,
    num_nodes: int,
    labels: Any = None,
    subset: str = "all",
) -> float:
    """K index (appendix C eq. 23): fraction of evaluated nodes kept in an edge subset.

    ``subset`` is ``"all"`` (``E_U``), ``"agree"`` (``E_A``) or ``"disagree"`` (``E_D``); the
    latter two need ``labels``. NaN with a warning when the evaluated node set is empty.
    """
    if subset not in _SUBSETS:
        raise ValueError(f"subset must be one of {_SUBSETS}, got {subset!r}")
    m = check_mask(mask, int(num_nodes))
    if not m.any():
        return warn_empty("the evaluated node set U")
    e = evaluated_edges(edge_index, int(num_nodes), m)
    lo, hi = e.lo, e.hi
    if subset != "all":
        if labels is None:
            raise TypeError(f"k_index(subset={subset!r}) needs labels")
        y = check_labels(labels, None, int(num_nodes))
        agree = y[lo] == y[hi]
        sel = agree if subset == "agree" else ~agree
        lo, hi = lo[sel], hi[sel]
    kept = np.zeros(int(num_nodes), dtype=bool)
    kept[lo] = True
    kept[hi] = True
    return float(kept.sum() / m.sum())
