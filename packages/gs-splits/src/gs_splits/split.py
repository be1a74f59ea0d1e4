"""The :class:`Split` container and structural shift splits (structural-shifts paper, sec. 3-4).

Algorithm of :func:`structural_split` (paper section 3.1 and section 4 "Datasets"):

1. compute the node property ``x`` (PageRank for *popularity*, Personalized PageRank from the
   top-PageRank node for *locality*, clustering coefficient for *density*, a random
   permutation for *random*, or any user array / callable);
2. ``sigma = -x``; sort nodes by ascending ``sigma``, ties broken by a seeded random
   permutation (so ties never depend on node ids);
3. the first ``floor(n * (s_train + s_valid_in + s_test_in))`` sorted nodes are ID; they are
   shuffled (seeded) and cut into ``in_train`` / ``in_valid`` / ``in_test``;
4. the OOD rest keeps the sigma order: ``out_valid`` (the less shifted, smaller sigma) then
   ``out_test`` (the most shifted).

Part sizes: each part except the last of its group (ID or OOD) gets ``floor(n * s)`` nodes and
the last part of each group absorbs the remainder. This is exactly what the authors' published
CoraML splits do (n = 2995 -> 898 / 299 / 300 / 299 / 1199).
"""

from __future__ import annotations

import errno
import json
import logging
import math
import os
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gs_splits.__about__ import __version__
from gs_splits._atomic import atomic_write as _atomic_write
from gs_splits.graph import CSRGraph, as_csr_graph
from gs_splits.names import DOMAIN_SCOPES, PAPER_SIZES, STRUCTURAL_PARTS
from gs_splits.strategies import get_strategy

__all__ = [
    "Split",
    "StructuralSplitConfig",
    "structural_split",
    "split_sizes",
    "property_domains",
    "DOMAIN_SCOPES",
    "STRUCTURAL_PARTS",
    "PAPER_SIZES",
    "TIE_WARNING_FRACTION",
    "TiedPropertyError",
    "tie_summary",
]

log = logging.getLogger(__name__)

# STRUCTURAL_PARTS, PAPER_SIZES and DOMAIN_SCOPES: gs_splits.names (no numba), re-exported here.


@dataclass
class Split:
    """Named boolean node (or sample) masks plus everything needed to explain them.

    Attributes
    ----------
    masks : dict[str, numpy.ndarray of bool]
        Structural splits: ``in_train, in_valid, in_test, out_valid, out_test``; scientific
        splits: ``train, iid_val, iid_test, ood_val, ood_test`` (+ ``train_target``,
        ``ood_labeled``). Each mask is also an attribute: ``split.in_train``.
    sigma : numpy.ndarray of float64 or None
        The splitting value per node (minus the property; ascending = ID first).
    domains : numpy.ndarray of int64 or None
        Domain id per node/sample (appendix F discretisation, or scientific domains).
    groups : numpy.ndarray of int64 or None
        Subgroup ids inside the source (scientific splits); -1 outside.
    metadata : dict
        JSON-serialisable description: strategy, sizes, seed, graph fingerprint, counts, ...
    """

    masks: dict[str, np.ndarray]
    sigma: np.ndarray | None = None
    domains: np.ndarray | None = None
    groups: np.ndarray | None = None
    metadata: dict = field(default_factory=dict)

    def __getattr__(self, name: str) -> np.ndarray:
        masks = self.__dict__.get("masks")
        if masks is not None and name in masks:
            return masks[name]
        raise AttributeError(f"Split has no attribute or mask {name!r}")

    @property
    def num_nodes(self) -> int:
        """Number of nodes (samples) the masks cover."""
        return int(next(iter(self.masks.values())).size)

    @property
    def in_distribution(self) -> np.ndarray:
        """Union of the ID parts (structural: ``in_*``; scientific: ``train, iid_*``)."""
        names = [k for k in self.masks if k.startswith("in_") or k in ("train", "iid_val", "iid_test")]
        return np.logical_or.reduce([self.masks[k] for k in names])

    @property
    def out_of_distribution(self) -> np.ndarray:
        """Union of the OOD evaluation parts (``out_*`` or ``ood_val, ood_test``)."""
        names = [k for k in self.masks if k.startswith("out_") or k in ("ood_val", "ood_test")]
        return np.logical_or.reduce([self.masks[k] for k in names])

    def indices(self, name: str) -> np.ndarray:
        """Sorted node ids of part ``name``."""
        return np.flatnonzero(self.masks[name])

    def sizes(self) -> dict[str, int]:
        """Number of nodes per part."""
        return {k: int(v.sum()) for k, v in self.masks.items()}

    def to_pyg_masks(self) -> dict[str, np.ndarray]:
        """Masks under PyG attribute names (``in_train_mask``, ...), still numpy arrays."""
        return {f"{k}_mask": v for k, v in self.masks.items()}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Split):
            return NotImplemented

        def same(a, b):
            if a is None or b is None:
                return a is None and b is None
            return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()

        return (
            self.masks.keys() == other.masks.keys()
            and all(same(self.masks[k], other.masks[k]) for k in self.masks)
            and same(self.sigma, other.sigma)
            and same(self.domains, other.domains)
            and same(self.groups, other.groups)
            and json.dumps(self.metadata, sort_keys=True) == json.dumps(other.metadata, sort_keys=True)
        )

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | os.PathLike) -> Path:
        """Write ``<path>.npz`` (arrays) and ``<path>.json`` (metadata), atomically.

        ``path`` may end in ``.npz`` or have no suffix. Returns the ``.npz`` path.
        """
        npz, js = _paths(path)
        arrays = {f"mask__{k}": v for k, v in self.masks.items()}
        for name in ("sigma", "domains", "groups"):
            value = getattr(self, name)
            if value is not None:
                arrays[name] = value
        meta = dict(self.metadata)
        meta["masks"] = list(self.masks)
        meta.setdefault("gs_splits_version", __version__)
        for target in (npz, js):  # else os.replace names the temporary file (issue 34)
            if target.is_dir():
                raise IsADirectoryError(errno.EISDIR, "is a directory, not a file name for the split "
                                        "(choose another --out / path)", str(target))
        try:
            npz.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise type(exc)(exc.errno, f"cannot create the output folder ({exc.strerror})", str(npz.parent)) from None
        _atomic_write(npz, lambda f: _write_npz(f, arrays))
        _atomic_write(js, lambda f: f.write(json.dumps(meta, indent=2, sort_keys=True).encode()))
        return npz

    @classmethod
    def load(cls, path: str | os.PathLike) -> Split:
        """Read a split written by :meth:`save` (give the ``.npz`` path or the stem)."""
        npz, js = _paths(path)
        if not npz.exists():
            if Path(path).is_file() and Path(path) != js:  # e.g. the graph file given instead
                raise ValueError(f"{path}: not a split file (give the .npz that Split.save / "
                                 "'gs-splits make' wrote)")
            raise FileNotFoundError(f"split file not found: {npz}")
        try:
            meta = json.loads(js.read_text(encoding="utf-8")) if js.exists() else {}
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            raise ValueError(f"{js}: cannot read the split's metadata (truncated or damaged: {exc})") from None
        if not isinstance(meta, dict):
            raise ValueError(f"{js}: not the metadata of a split (a JSON {type(meta).__name__})")
        try:
            with np.load(npz, allow_pickle=False) as data:
                order = meta.get("masks") or [k[6:] for k in data.files if k.startswith("mask__")]
                masks = {k: np.asarray(data[f"mask__{k}"], dtype=bool) for k in order}
                extra = {n: (data[n] if n in data.files else None) for n in ("sigma", "domains", "groups")}
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            raise ValueError(
                f"{npz}: cannot read this split file (truncated, damaged or not written by "
                f"gs-splits: {type(exc).__name__}: {exc})"
            ) from None
        if not masks or len({m.shape for m in masks.values()}) != 1:
            raise ValueError(f"{npz}: no masks of one common length in this split file")
        meta.pop("masks", None)
        return cls(masks=masks, metadata=meta, **extra)


#: Arrays of a split file written without compression: ``sigma`` holds float64 property values
#: that deflate by a few percent at a tenth of the write speed (papers100M: 0.9 GB).
_STORED = frozenset({"sigma"})


def _write_npz(f: Any, arrays: dict[str, np.ndarray]) -> None:
    """An ``.npz`` (``np.load`` reads it) as ``np.savez_compressed`` writes it, but deflated at
    level 1 (masks and domains: about 1.4x the size of level 6 at 20x its speed) and with
    :data:`_STORED` arrays not compressed; deterministic bytes (zip entries dated 1980)."""
    with zipfile.ZipFile(f, mode="w", compression=zipfile.ZIP_DEFLATED, compresslevel=1, allowZip64=True) as zf:
        for name, value in arrays.items():
            zf.compression = zipfile.ZIP_STORED if name in _STORED else zipfile.ZIP_DEFLATED
            with zf.open(name + ".npy", "w", force_zip64=True) as fid:
                np.lib.format.write_array(fid, np.asanyarray(value), allow_pickle=False)


def _paths(path: str | os.PathLike) -> tuple[Path, Path]:
    p = Path(path)
    stem = p.with_suffix("") if p.suffix in (".npz", ".json") else p
    return stem.with_name(stem.name + ".npz"), stem.with_name(stem.name + ".json")


# ---------------------------------------------------------------------- seeds and ties
#: A structural split warns (or, with ``on_ties="raise"``, fails) when more than this fraction
#: of the nodes share one property value. Inside a tie group the order, and so the ID / OOD
#: assignment, comes from the seeded tie-break permutation: such a split is largely random,
#: whatever its strategy's name says (a bipartite graph's clustering is 0 everywhere; CiteSeer's
#: clustering is 0 for 69.6 % of its nodes).
TIE_WARNING_FRACTION = 0.5


class TiedPropertyError(ValueError):
    """The split property has a tie group larger than the allowed fraction (``on_ties="raise"``)."""


def resolve_seed(seed: int | np.random.Generator | None) -> tuple[int | np.random.Generator, Any]:
    """``(seed to draw with, value to record)``: ``None`` draws a fresh 128-bit seed from the
    OS entropy and records it, so the split can be made again with ``seed=<recorded value>``;
    a Generator is used as is and recorded as ``"generator"`` (its state is not a seed)."""
    if seed is None:
        drawn = int(np.random.SeedSequence().entropy)
        return drawn, drawn
    if isinstance(seed, np.random.Generator):
        return seed, "generator"
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, a numpy Generator or None, got {seed!r}")
    return int(seed), int(seed)


def tie_summary(prop: np.ndarray, order: np.ndarray, n_id: int, n_out_valid: int,
                threshold: float = TIE_WARNING_FRACTION) -> dict[str, Any]:
    """Summary of the largest group of nodes sharing one property value (``metadata["ties"]``).

    ``spans_id_ood_boundary`` / ``spans_ood_boundary``: the group has nodes on both sides of the
    ID / OOD cut (or of the out_valid / out_test cut), so which side a node of the group lands
    on is decided by the seeded tie-break, not by the property.
    """
    n = prop.size
    ranked = prop[order]
    if n and bool(np.all(ranked[:-1] >= ranked[1:])):
        # the split's order (descending property): every tie group is one run of ``ranked``, so
        # no second sort (np.unique) is needed; among groups of equal size np.unique's choice,
        # the smallest value, is the last run
        starts = np.flatnonzero(np.concatenate(([True], ranked[1:] != ranked[:-1])))
        counts = np.diff(np.append(starts, n))
        g = counts.size - 1 - int(np.argmax(counts[::-1]))
        first, value = int(starts[g]), float(ranked[starts[g]])
        last = first + int(counts[g]) - 1
    else:
        values, inverse, counts = np.unique(prop, return_inverse=True, return_counts=True)
        g = int(counts.argmax())
        value = float(values[g])
        rank_in = (inverse.reshape(-1) == g)[order]
        first, last = int(np.argmax(rank_in)), n - 1 - int(np.argmax(rank_in[::-1]))
    cut_ood = n_id + n_out_valid
    return {
        "largest_group_size": int(counts[g]),
        "largest_group_fraction": float(counts[g] / n),
        "largest_group_value": value,
        "tied_nodes_fraction": float(counts[counts > 1].sum() / n),
        "spans_id_ood_boundary": bool(first < n_id <= last),
        "spans_ood_boundary": bool(first < cut_ood <= last),
        "warning_fraction": float(threshold),
    }


# ---------------------------------------------------------------------- sizes and domains
def _check_sizes(sizes: Sequence[float], nparts: int, what: str = "sizes") -> np.ndarray:
    s = np.asarray(sizes, dtype=np.float64)
    if s.shape != (nparts,):
        raise ValueError(f"{what} must have {nparts} fractions, got {len(s)}")
    if not np.all(np.isfinite(s)) or np.any(s < 0):
        raise ValueError(f"{what} must be finite non-negative fractions, got {tuple(sizes)}")
    total = float(s.sum())
    if not math.isclose(total, 1.0, rel_tol=0, abs_tol=1e-9):
        # every digit of the sum: ``:.6g`` printed "(sum 1)" for a sum of 1.00000001
        raise ValueError(f"{what} must sum to 1 (within 1e-9), got {tuple(sizes)} (sum {total!r}, "
                         f"{total - 1:+.3g} from 1)")
    return s


def _floor(x: float) -> int:
    return int(math.floor(x + 1e-9))


def split_sizes(
    n: int, sizes: Sequence[float], groups: Sequence[int] | None = None
) -> list[int]:
    """Part sizes: ``floor(n * s)`` for each part, the last part of each group takes the rest.

    The one part-size rule of gs: structural splits, scientific splits and gs-data's
    Track splits all count their parts with it.

    ``groups`` gives how many consecutive parts form a group; each group gets
    ``floor(n * sum of its fractions)`` items (the last group the remainder). By default five
    fractions form the structural ID / OOD groups ``(3, 2)`` and any other number of fractions
    one group (``floor(n * f)`` for every part but the last, which gets the rest; GeSS
    table 4).

    >>> split_sizes(2995, (0.3, 0.1, 0.1, 0.1, 0.4))
    [898, 299, 300, 299, 1199]
    >>> split_sizes(19753, (0.75, 0.125, 0.125))
    [14814, 2469, 2470]

    Raises
    ------
    ValueError
        ``n`` not an int >= 0; fractions negative, not finite or not summing to 1; ``groups``
        not positive counts adding up to the number of fractions.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be an int >= 0, got {n!r}")
    n = int(n)
    if groups is None:
        groups = (3, 2) if len(sizes) == 5 else (len(sizes),)
    groups = tuple(groups)
    if not groups or any(isinstance(g, bool) or not isinstance(g, (int, np.integer)) or g < 1
                         for g in groups):
        raise ValueError(f"groups must be positive part counts, got {groups!r}")
    s = _check_sizes(sizes, int(sum(groups)), "sizes").tolist()
    out: list[int] = []
    start = 0
    used = 0
    for gi, g in enumerate(groups):
        frac = s[start : start + g]
        total = n - used if gi == len(groups) - 1 else min(n - used, _floor(n * sum(frac)))
        parts = [min(_floor(n * f), total) for f in frac[:-1]]
        while sum(parts) > total:  # only possible with degenerate fractions
            parts[parts.index(max(parts))] -= 1
        parts.append(total - sum(parts))
        out.extend(parts)
        used += total
        start += g
    return out


def property_domains(
    values: np.ndarray,
    k: int = 10,
    *,
    method: str = "quantile",
    within: np.ndarray | None = None,
) -> np.ndarray:
    """Discretise a node property into ``k`` non-intersecting domains (paper appendix F).

    Parameters
    ----------
    values : array (n,)
        Property (or sigma) per node.
    k : int, default 10
        Number of domains (the paper uses k = 10).
    method : {"quantile", "uniform"}
        ``quantile``: domain ``d`` holds the nodes of ranks ``[d m / k, (d + 1) m / k)`` in
        ascending value order (ties by node id) among the ``m`` nodes the bins are cut over,
        so those domains are equally sized (counts differ by at most 1) and contiguous in
        value; ``uniform``: ``k`` equal-width bins between their min and max.
    within : bool array (n,), optional
        Cut the bins over these nodes only (e.g. the training nodes: appendix F, "which
        nodes in the training set belong to which domain", and the GOOD benchmark, whose
        ``num_envs`` environments partition the training nodes). Every other node gets the
        domain of the closest node of ``within`` at or below it in value order (domain 0
        below the first), i.e. the bin its value falls in, clipped to ``0..k-1``.
        ``None``: bins over all nodes.

    Returns
    -------
    numpy.ndarray of int64 in ``0..k-1`` (0 = smallest values).
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1 or v.size == 0:
        raise ValueError("values must be a non-empty 1-D array")
    if not np.all(np.isfinite(v)):
        raise ValueError("values contain NaN or inf")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    if method not in ("quantile", "uniform"):
        raise ValueError(f"method must be 'quantile' or 'uniform', got {method!r}")
    n = v.size
    if within is not None:
        within = np.asarray(within)
        if within.dtype != np.bool_ or within.shape != (n,):
            raise ValueError(f"within must be a bool array of shape ({n},), got {within.dtype} {within.shape}")
        if not within.any():
            raise ValueError("within selects no node: the domain bins need at least one node")
    if method == "quantile":
        return _rank_domains(np.argsort(v, kind="stable"), k, within)
    ref = v if within is None else v[within]
    lo, hi = ref.min(), ref.max()
    if hi == lo:
        return np.zeros(n, dtype=np.int64)
    return np.clip(np.floor((v - lo) / (hi - lo) * k), 0, k - 1).astype(np.int64)


def _rank_domains(order: np.ndarray, k: int, within: np.ndarray | None) -> np.ndarray:
    """Equal-count bins along ``order`` (node ids, ascending value): over every node, or
    over the nodes of ``within`` with the others in the bin of the last such node before
    them (0 if none)."""
    n = order.size
    dom = np.empty(n, dtype=np.int64)
    if within is None:
        dom[order] = (np.arange(n, dtype=np.int64) * k) // n
        return dom
    sel = within[order]
    m = int(sel.sum())
    # rank among the selected nodes of the last selected node at or before each position
    rank = np.maximum(np.cumsum(sel, dtype=np.int64) - 1, 0)
    dom[order] = (rank * k) // m
    return dom


# ---------------------------------------------------------------------- structural split
#: The number of appendix-F property domains when none is given (the paper's 10; a graph with
#: fewer nodes gets one domain per node).
DEFAULT_NUM_DOMAINS = 10


@dataclass(frozen=True)
class StructuralSplitConfig:
    """Settings of a structural split (defaults: structural-shifts paper, section 4).

    Attributes
    ----------
    strategy : str
        A name of :data:`gs_splits.strategies.STRATEGIES`: ``popularity`` (PageRank, sec.
        3.2), ``locality`` (PPR from the top-PageRank node), ``density`` (clustering
        coefficient), ``random``, an extra built-in (``degree``, ``kcore``, ``eigenvector``,
        ``betweenness``) or a registered one.
    sizes : tuple of 5 floats
        in_train, in_valid, in_test, out_valid, out_test fractions (30/10/10/10/40, sec. 4).
    num_domains : int
        k of appendix F (10).
    seed : int
    domain_scope : str
        Nodes the domain bins are cut over (``"in_train"``; see :func:`structural_split`).
    """

    strategy: str = "popularity"
    sizes: tuple[float, float, float, float, float] = (0.3, 0.1, 0.1, 0.1, 0.4)
    num_domains: int = 10
    seed: int = 0
    domain_scope: str = "in_train"


def _requires_two(f: Any) -> bool:
    """Whether ``f`` must be called with two positional arguments (``f(graph, rng)``, the
    form :func:`gs_splits.register_strategy` takes) rather than one (``f(graph)``)."""
    import inspect

    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):  # a builtin without a signature: the documented f(graph)
        return False
    try:
        sig.bind(None)
    except TypeError:
        try:
            sig.bind(None, None)
        except TypeError:
            return False
        return True
    return False


def structural_split(
    graph: Any,
    strategy: str | np.ndarray | Callable[[CSRGraph], Any] = "popularity",
    *,
    sizes: Sequence[float] | str = (0.3, 0.1, 0.1, 0.1, 0.4),
    seed: int | np.random.Generator | None = 0,
    num_nodes: int | None = None,
    num_domains: int | None = None,
    domain_scope: str = "in_train",
    on_ties: str = "warn",
    tie_fraction: float = TIE_WARNING_FRACTION,
    memory: int | str | None = None,
    path: str = "auto",
    workdir: str | os.PathLike | None = None,
) -> Split:
    """Split the nodes of a graph by a structural property (structural-shifts paper, sec. 3-4).

    Parameters
    ----------
    graph : any input accepted by :func:`gs_splits.as_csr_graph`, or an on-disk CSR folder
        Edge index (2, E), scipy.sparse, networkx graph, torch tensor, PyG Data, an
        :class:`~gs_splits.ondisk.OnDiskCSR` (:func:`gs_splits.ondisk.open_ondisk`) or the path of its folder.
    strategy : str, array (n,) or callable
        A name of the strategy registry :data:`gs_splits.strategies.STRATEGIES`
        (``"popularity"``, ``"locality"``, ``"density"``, ``"random"``, the extra built-ins
        ``"degree"``, ``"kcore"``, ``"eigenvector"``, ``"betweenness"``, and whatever
        :func:`gs_splits.register_strategy` added), called as ``f(graph, rng)`` with this
        split's generator; or the property itself as an array; or a callable
        ``f(CSRGraph) -> array``, or ``f(CSRGraph, rng)`` like a registered strategy's
        (called with the generator when it requires two arguments; a second argument with a
        default, ``f(graph, rng=None)``, is not given it, so seed it yourself or make it
        required). Nodes with the *largest* property are ID
        (``sigma = -property``).
    sizes : 5 fractions or a key of :data:`PAPER_SIZES`
        ``in_train, in_valid, in_test, out_valid, out_test``; must sum to 1.
    seed : int, numpy.random.Generator or None
        Drives the tie-break permutation, the ID shuffle and the random strategy. ``None``
        draws a fresh seed and records it in ``metadata["seed"]``, so passing that value
        again gives the same split.
    num_nodes : int, optional
        Passed to :func:`as_csr_graph` (isolated trailing nodes).
    num_domains : int, optional
        k of the appendix-F domain discretisation stored in ``split.domains``: from 1 to the
        number of nodes. Default: :data:`DEFAULT_NUM_DOMAINS` (10, the paper's), or the number of
        nodes of a graph with fewer.
    domain_scope : {"in_train", "all"}, default "in_train"
        Which nodes the ``num_domains`` equal-count bins of the sigma rank are cut over.
        ``"in_train"``: the training nodes (appendix F: domains say "which nodes in the
        training set belong to which domain"; the GOOD benchmark, whose framework trained
        DANN / CORAL / EERM / Mixup in the paper, splits its training nodes into
        ``num_envs = 10`` environments, ``GOOD/data/good_datasets/good_cora.py``
        ``get_covariate_shift_graph``), so the training nodes take all ``num_domains``
        values with counts equal within 1; every other node gets the bin of the closest
        training node at or below it in sigma order (OOD nodes: the last bin).
        ``"all"``: our earlier rule, bins over all nodes (on a 50:50 split the training
        nodes then fall into the first 5 of 10 domains only).
    on_ties : {"warn", "raise", "ignore"}, default "warn"
        What to do when more than ``tie_fraction`` of the nodes share one property value (the
        split is then largely the seeded tie-break, not the property): log a warning, raise
        :class:`TiedPropertyError`, or nothing. ``metadata["ties"]`` (:func:`tie_summary`)
        is recorded in every case.
    tie_fraction : float, default :data:`TIE_WARNING_FRACTION` (0.5)
    memory : int or str, optional
        Memory budget in bytes or as ``"16G"`` (default: 60 % of the RAM,
        :func:`gs_splits.ondisk.default_memory`); decides ``path="auto"`` and bounds the
        out-of-core kernels.
    path : {"auto", "memory", "ondisk"}, default "auto"
        ``"auto"``: out of core when the in-memory path's estimated need
        (:func:`gs_splits.ondisk.in_memory_bytes`: CSR, degree-ordered copy, vectors)
        exceeds ``memory``, else in memory. ``"ondisk"``: the out-of-core properties of
        :mod:`gs_splits.ondisk.properties` (popularity, locality, density, degree; other strategies
        run on the memory-mapped CSR) over an on-disk CSR (an in-memory input is written to a
        temporary one under ``workdir``). Both paths give the same split, bit for bit. One
        INFO log line says which path ran and why.
    workdir : path, optional
        Where an in-memory graph is written for ``path="ondisk"`` (default: the system's
        temporary folder; removed afterwards).

    Returns
    -------
    Split
        Masks ``in_train, in_valid, in_test, out_valid, out_test``, ``sigma``, ``domains``
        (0 = most ID-like decile of sigma) and metadata.

    Raises
    ------
    ValueError
        Unknown strategy, sizes not 5 fractions summing to 1, fewer nodes than non-empty parts,
        NaN/inf or wrong length in a user property, bad graph (see :func:`as_csr_graph`).
    """
    if isinstance(sizes, str):
        if sizes not in PAPER_SIZES:
            raise ValueError(f"sizes: unknown preset {sizes!r}; use one of {sorted(PAPER_SIZES)}")
        sizes = PAPER_SIZES[sizes]
    s = _check_sizes(sizes, 5)
    if num_domains is not None and (isinstance(num_domains, bool) or not isinstance(num_domains, (int, np.integer))
                                    or num_domains < 1):
        raise ValueError(f"num_domains must be an integer >= 1, got {num_domains!r}")
    if domain_scope not in DOMAIN_SCOPES:
        raise ValueError(f"domain_scope must be one of {list(DOMAIN_SCOPES)}, got {domain_scope!r}")
    if on_ties not in ("warn", "raise", "ignore"):
        raise ValueError(f"on_ties must be 'warn', 'raise' or 'ignore', got {on_ties!r}")
    if not 0 < tie_fraction <= 1:
        raise ValueError(f"tie_fraction must be in (0, 1], got {tie_fraction!r}")
    seed, seed_record = resolve_seed(seed)
    with _GraphView.open(graph, num_nodes, memory, path, workdir) as g:
        return _structural_split(g, strategy, s, seed, seed_record, num_domains, domain_scope, on_ties,
                                 tie_fraction)


class _GraphView:
    """What a structural split reads of its graph, on either path: ``num_nodes``,
    ``num_edges``, ``stats``, ``fingerprint``, the strategy's property and (for callables and
    strategies without an out-of-core kernel) a :class:`CSRGraph`, memory-mapped on disk."""

    def __init__(self, csr: CSRGraph | None, ondisk: Any, budget: int | None, cleanup: str | None):
        self._csr = csr
        self.ondisk = ondisk
        self.budget = budget
        self._cleanup = cleanup
        src = ondisk if ondisk is not None else csr
        self.num_nodes = int(src.num_nodes)
        self.num_edges = int(src.num_edges)
        self.stats = dict(src.stats)

    @classmethod
    def open(cls, graph: Any, num_nodes: int | None, memory: Any, path: str, workdir: Any) -> _GraphView:
        from gs_splits.ondisk import OnDiskCSR, open_ondisk
        from gs_splits.ondisk import properties as outofcore

        if path not in ("auto", "memory", "ondisk"):
            raise ValueError(f"path must be 'auto', 'memory' or 'ondisk', got {path!r}")
        budget = outofcore._budget(memory)
        if isinstance(graph, (str, os.PathLike)) and Path(graph).is_dir():
            graph = open_ondisk(graph)
        if isinstance(graph, OnDiskCSR):
            if num_nodes is not None and num_nodes != graph.num_nodes:
                raise ValueError(f"num_nodes={num_nodes} disagrees with the graph ({graph.num_nodes} nodes)")
            which, why = outofcore.choose_path(graph.num_nodes, 2 * graph.num_edges, budget, path)
            log.info("structural_split: %s path: %s", _PATH_NAMES[which], why)
            if which == "memory":
                return cls(graph.to_csr_graph(), graph, None, None)
            return cls(None, graph, budget, None)
        g = as_csr_graph(graph, num_nodes)
        which, why = outofcore.choose_path(g.num_nodes, g.indices.size, budget, path, g.indices.itemsize)
        log.info("structural_split: %s path: %s", _PATH_NAMES[which], why)
        if which == "memory":
            return cls(g, None, None, None)
        tmp = tempfile.mkdtemp(prefix="gs-splits-csr-", dir=workdir)
        return cls(g, outofcore.save_ondisk(g, Path(tmp) / "csr"), budget, tmp)

    def __enter__(self) -> _GraphView:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._cleanup is not None:
            shutil.rmtree(self._cleanup, ignore_errors=True)

    def csr(self) -> CSRGraph:
        if self._csr is None:
            self._csr = self.ondisk.to_csr_graph()
        return self._csr

    def fingerprint(self) -> str:
        # the on-disk checksum is CSRGraph.fingerprint() of the same arrays (gs_splits.ondisk.csr)
        return self.ondisk.checksum if self.ondisk is not None else self.csr().fingerprint()

    def strategy_property(self, name: str, rng: np.random.Generator) -> Any:
        if self.budget is not None:  # the out-of-core path
            from gs_splits.ondisk.properties import ONDISK_STRATEGIES

            f = ONDISK_STRATEGIES.get(name)
            if f is not None:
                return f(self.ondisk, self.budget, rng)
            get_strategy(name)  # an unknown name fails here, before any mapping
            log.info("structural_split: %r has no out-of-core kernel; it runs on the memory-mapped CSR", name)
        return get_strategy(name)(self.csr(), rng)  # the registry of gs_splits.strategies


_PATH_NAMES = {"memory": "in-memory", "ondisk": "out-of-core"}


def _structural_split(g: _GraphView, strategy: Any, s: np.ndarray, seed: Any, seed_record: Any,
                      num_domains: int | None, domain_scope: str, on_ties: str, tie_fraction: float) -> Split:
    n = g.num_nodes
    nonempty = int(np.count_nonzero(s > 0))
    if n < nonempty:
        raise ValueError(
            f"graph has {n} node(s), fewer than the {nonempty} non-empty parts requested by sizes"
        )
    if num_domains is None:
        num_domains = min(DEFAULT_NUM_DOMAINS, n)
    elif num_domains > n:
        raise ValueError(f"num_domains must be at most the graph's {n} node(s) (each domain is an equal-count "
                         f"bin of nodes), got {num_domains}")
    rng = np.random.default_rng(seed)

    if isinstance(strategy, str):
        name = strategy
        prop = g.strategy_property(strategy, rng)
    elif callable(strategy):
        name = getattr(strategy, "__name__", "callable")
        prop = strategy(g.csr(), rng) if _requires_two(strategy) else strategy(g.csr())
    else:
        name = "array"
        prop = strategy
    prop = _check_property(prop, n)
    sigma = -prop

    tiebreak = rng.permutation(n)
    order = _order_by(sigma, tiebreak)
    counts = split_sizes(n, s)
    if n >= nonempty and any(c == 0 for c, f in zip(counts, s, strict=True) if f > 0):
        log.warning("structural_split: a part with a positive fraction got 0 nodes (n=%d)", n)
    n_id = counts[0] + counts[1] + counts[2]
    ties = tie_summary(prop, order, n_id, counts[3], tie_fraction)
    if ties["largest_group_fraction"] > tie_fraction and on_ties != "ignore":
        msg = (
            f"{ties['largest_group_fraction']:.1%} of the nodes ({ties['largest_group_size']} of {n}) "
            f"have the same {name} value {ties['largest_group_value']:.6g}, more than "
            f"{tie_fraction:.0%}: inside that group the split is the seeded random tie-break, "
            f"not {name}"
            + (" (the group spans the ID/OOD boundary)" if ties["spans_id_ood_boundary"] else "")
        )
        if on_ties == "raise":
            raise TiedPropertyError(msg + "; use another strategy, or accept it with on_ties='warn' (gs-splits make: without --fail-on-ties)")
        log.warning("structural_split: %s", msg)
    id_nodes = order[:n_id][rng.permutation(n_id)]
    ood_nodes = order[n_id:]
    masks = {}
    bounds = np.cumsum([0, *counts[:3]])
    for i, part in enumerate(STRUCTURAL_PARTS[:3]):
        m = np.zeros(n, dtype=bool)
        m[id_nodes[bounds[i] : bounds[i + 1]]] = True
        masks[part] = m
    m = np.zeros(n, dtype=bool)
    m[ood_nodes[: counts[3]]] = True
    masks["out_valid"] = m
    m = np.zeros(n, dtype=bool)
    m[ood_nodes[counts[3] :]] = True
    masks["out_test"] = m

    within = masks["in_train"] if domain_scope == "in_train" and masks["in_train"].any() else None
    domains = _rank_domains(order, int(num_domains), within)
    metadata = {
        "kind": "structural",
        "strategy": name,
        "sizes": [float(x) for x in s],
        "counts": dict(zip(STRUCTURAL_PARTS, map(int, counts), strict=True)),
        "seed": seed_record,
        "ties": ties,
        "num_nodes": int(n),
        "num_edges": g.num_edges,
        "graph_fingerprint": g.fingerprint(),
        "graph_normalisation": g.stats,
        "num_domains": int(num_domains),
        "domain_scope": domain_scope if within is not None else "all",
        "domains_rule": (
            "rank of sigma (ties by the seeded permutation) among the in_train nodes cut into "
            "equal-size bins, 0 = most ID-like; other nodes: the bin of the closest in_train "
            "node at or below them in that order"
            if within is not None else
            "rank of sigma (ties by the seeded permutation) cut into equal-size bins, 0 = most ID-like"
        ),
        "sigma_rule": "sigma = -property; ascending sigma = ID first",
        "id_boundary_sigma": [float(sigma[order[n_id - 1]]) if n_id else None,
                              float(sigma[order[n_id]]) if n_id < n else None],
        "gs_splits_version": __version__,
    }
    return Split(masks=masks, sigma=sigma, domains=domains.astype(np.int64), metadata=metadata)


def _order_by(sigma: np.ndarray, tiebreak: np.ndarray) -> np.ndarray:
    """``np.lexsort((tiebreak, sigma))`` for a permutation ``tiebreak`` (ascending ``sigma``,
    ties by ascending ``tiebreak``), with one stable sort instead of lexsort's two: the nodes
    in tiebreak order, then a stable argsort of their ``sigma``. The same permutation."""
    by_tie = np.empty(tiebreak.size, dtype=np.int64)
    by_tie[tiebreak] = np.arange(tiebreak.size, dtype=np.int64)
    return by_tie[np.argsort(sigma[by_tie], kind="stable")]


def _check_property(prop: Any, n: int) -> np.ndarray:
    if type(prop).__module__.split(".")[0] == "torch" and hasattr(prop, "detach"):
        prop = prop.detach().cpu().numpy()
    try:
        v = np.asarray(prop, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"property: could not convert to a float array ({exc})") from exc
    if v.shape != (n,):
        raise ValueError(f"property must have one value per node, shape ({n},), got {v.shape}")
    bad = ~np.isfinite(v)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"property contains {int(bad.sum())} NaN/inf value(s) (first at node {first}: {v[first]})"
        )
    return v
