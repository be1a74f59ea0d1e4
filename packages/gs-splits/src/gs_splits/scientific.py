"""Scientific (GeSS) domain splits: source/target domains, subgroups and OOD-information levels.

Follows the GeSS paper (``gess-geometric-shifts.md``), section 4.1 "Dataset Splits" and
"Model Training & Evaluation", section 3.2 (subgroups) and appendix C (Par-Label pools).

Overlap rules (all enforced and tested):

* every sample is in the source, in the target, or unused (``metadata["unused"]`` counts
  them: samples of domains that are neither source nor target);
* the source is cut at random into ``train / iid_val / iid_test`` (default 0.75/0.125/0.125):
  three disjoint masks covering the source;
* the target is cut at random into ``ood_val / ood_test``; at the ``par_label`` level a labeled
  pool ``ood_labeled`` of ``par_label_pool`` samples (appendix C: 1000) is reserved FIRST,
  half from the future ``ood_val`` share and half from the ``ood_test`` share, so
  ``ood_labeled``, ``ood_val`` and ``ood_test`` are disjoint and cover the target; the
  fine-tuning set of ``N`` labels (100, 500 or 1000) is a seeded prefix of the pool
  (``par_label_indices(split, N)``; prefixes are nested: the 100 are among the 500);
* ``o_feature`` adds ``train_target``: the unlabeled target pool used for domain adaptation.
  As in GeSS (the DA methods see "the extra data feature info of the entire OOD dataset"),
  it is the whole target (so it overlaps ``ood_val``/``ood_test`` by design: features only,
  never labels);
* ``no_info`` has neither ``train_target`` nor ``ood_labeled``;
* subgroup ids ``groups`` are defined on source samples only (-1 elsewhere).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gs_splits.__about__ import __version__
from gs_splits.names import INFO_LEVELS, SCIENTIFIC_PARTS
from gs_splits.split import Split, _check_sizes, resolve_seed, split_sizes

__all__ = [
    "ScientificSplitConfig",
    "scientific_split",
    "ordered_domain_split",
    "par_label_indices",
    "INFO_LEVELS",
    "SCIENTIFIC_PARTS",
]

# INFO_LEVELS and SCIENTIFIC_PARTS: gs_splits.names (no numba), re-exported here.


@dataclass(frozen=True)
class ScientificSplitConfig:
    """Defaults of a GeSS split (GeSS section 4.1 and appendix C).

    Attributes
    ----------
    source_sizes : (train, iid_val, iid_test) fractions of the source, default 0.75/0.125/0.125
    target_sizes : (ood_val, ood_test) fractions of the target, default 0.5/0.5
    info_level : "no_info", "o_feature" or "par_label"
    par_label_pool : reserved labeled target samples at the Par-Label level (appendix C: 1000)
    par_label_sizes : fine-tuning sizes N (100, 500, 1000)
    """

    source_sizes: tuple[float, float, float] = (0.75, 0.125, 0.125)
    target_sizes: tuple[float, float] = (0.5, 0.5)
    info_level: str = "no_info"
    par_label_pool: int = 1000
    par_label_sizes: tuple[int, ...] = (100, 500, 1000)


def _labels(domain: Any, name: str) -> np.ndarray:
    if type(domain).__module__.split(".")[0] == "torch" and hasattr(domain, "detach"):
        domain = domain.detach().cpu().numpy()
    d = np.asarray(domain)
    if d.ndim != 1 or d.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array with one entry per sample")
    return d


def _as_set(values: Any, name: str) -> list:
    if values is None:
        return []
    if isinstance(values, (str, bytes)) or np.isscalar(values):
        return [values]
    return list(values)


def _cut(idx: np.ndarray, fracs: Sequence[float]) -> list[np.ndarray]:
    counts = split_sizes(idx.size, fracs, groups=(len(fracs),))
    return np.split(idx, np.cumsum(counts)[:-1])


def _mask(n: int, idx: np.ndarray) -> np.ndarray:
    m = np.zeros(n, dtype=bool)
    m[idx] = True
    return m


def scientific_split(
    domain: Any,
    source: Any,
    target: Any = None,
    *,
    attribute: Any = None,
    num_groups: int | None = None,
    info_level: str = "no_info",
    source_sizes: Sequence[float] = (0.75, 0.125, 0.125),
    target_sizes: Sequence[float] = (0.5, 0.5),
    par_label_pool: int = 1000,
    seed: int | np.random.Generator | None = 0,
) -> Split:
    """Source/target domain split of a scientific dataset (GeSS section 4.1).

    Parameters
    ----------
    domain : array (n,)
        Domain label per sample (pileup level, signal type, fidelity, assay, scaffold, size ...).
    source : label or list of labels
        Source (ID) domains.
    target : label or list of labels, optional
        Target (OOD) domains; default every domain that is not a source.
    attribute : array (n,), optional
        Continuous attribute (e.g. number of hits). With ``num_groups`` it defines the source
        subgroups as ``num_groups`` equal-width bins of the attribute over the source (GeSS
        3.2.1: Pileup subgroups by number of points); otherwise subgroups = source domains.
    num_groups : int, optional
        Number of equal-width attribute bins (requires ``attribute``).
    info_level : {"no_info", "o_feature", "par_label"}
        No-Info: source only. O-Feature: plus ``train_target`` (unlabeled target pool).
        Par-Label: plus ``ood_labeled`` (reserved labeled target pool, disjoint from
        ``ood_val``/``ood_test``; use :func:`par_label_indices` for N = 100/500/1000).
    source_sizes : 3 fractions, default (0.75, 0.125, 0.125)
    target_sizes : 2 fractions, default (0.5, 0.5)
    par_label_pool : int, default 1000 (GeSS appendix C)
    seed : int, numpy.random.Generator or None
        ``None`` draws a seed and records it in ``metadata["seed"]`` (reproducible).

    Returns
    -------
    Split
        Masks ``train, iid_val, iid_test, ood_val, ood_test`` (+ ``train_target`` or
        ``ood_labeled``), ``domains`` (integer code of each sample's domain in the sorted
        list ``metadata["domain_values"]``), ``groups`` (subgroup id on the source, -1
        elsewhere), metadata.

    Raises
    ------
    ValueError
        Unknown info level, source/target overlap or empty, unknown domain labels, sizes not
        summing to 1, a Par-Label pool larger than half the target, bad attribute.
    """
    d = _labels(domain, "domain")
    n = d.size
    if info_level not in INFO_LEVELS:
        raise ValueError(f"info_level must be one of {INFO_LEVELS}, got {info_level!r}")
    ss = _check_sizes(source_sizes, 3, "source_sizes")
    ts = _check_sizes(target_sizes, 2, "target_sizes")
    values, codes = np.unique(d, return_inverse=True)
    known = set(values.tolist())
    src = _as_set(source, "source")
    if not src:
        raise ValueError("source must name at least one domain")
    tgt = _as_set(target, "target") if target is not None else [v for v in values.tolist() if v not in src]
    for name, lst in (("source", src), ("target", tgt)):
        unknown = [v for v in lst if v not in known]
        if unknown:
            raise ValueError(f"{name}: unknown domain label(s) {unknown}; known: {values.tolist()}")
    overlap = set(src) & set(tgt)
    if overlap:
        raise ValueError(f"source and target domains overlap: {sorted(map(str, overlap))}")
    if not tgt:
        raise ValueError("target is empty: every domain is a source domain")
    seed, seed_record = resolve_seed(seed)
    rng = np.random.default_rng(seed)
    is_src = np.isin(d, np.asarray(src, dtype=d.dtype))
    is_tgt = np.isin(d, np.asarray(tgt, dtype=d.dtype))
    src_idx = np.flatnonzero(is_src)[rng.permutation(int(is_src.sum()))]
    tgt_idx = np.flatnonzero(is_tgt)[rng.permutation(int(is_tgt.sum()))]
    masks: dict[str, np.ndarray] = {}
    for part, idx in zip(SCIENTIFIC_PARTS[:3], _cut(src_idx, ss), strict=True):
        masks[part] = _mask(n, idx)
    labeled = np.zeros(0, dtype=np.int64)
    if info_level == "par_label":
        if par_label_pool < 0 or 2 * par_label_pool > tgt_idx.size:
            raise ValueError(
                f"par_label_pool={par_label_pool} must be between 0 and half the target "
                f"({tgt_idx.size} samples)"
            )
        val_share, test_share = _cut(tgt_idx, ts)
        half = par_label_pool // 2
        take_val = min(half, val_share.size)
        take_test = par_label_pool - take_val
        if take_test > test_share.size:
            raise ValueError("par_label_pool does not fit in the ood_test share of the target")
        labeled = np.concatenate([val_share[:take_val], test_share[:take_test]])
        labeled = labeled[rng.permutation(labeled.size)]
        masks["ood_val"] = _mask(n, val_share[take_val:])
        masks["ood_test"] = _mask(n, test_share[take_test:])
    else:
        ov, ot = _cut(tgt_idx, ts)
        masks["ood_val"] = _mask(n, ov)
        masks["ood_test"] = _mask(n, ot)
    if info_level == "o_feature":
        masks["train_target"] = is_tgt.copy()
    if info_level == "par_label":
        masks["ood_labeled"] = _mask(n, labeled)

    groups = np.full(n, -1, dtype=np.int64)
    if attribute is not None:
        a = np.asarray(attribute, dtype=np.float64)
        if a.shape != (n,):
            raise ValueError(f"attribute must have shape ({n},), got {a.shape}")
        if not np.all(np.isfinite(a[is_src])):
            raise ValueError("attribute contains NaN or inf on source samples")
        if num_groups is None or num_groups < 1:
            raise ValueError("num_groups (a positive integer) is required with attribute")
        lo, hi = a[is_src].min(), a[is_src].max()
        if hi > lo:
            groups[is_src] = np.minimum(((a[is_src] - lo) / (hi - lo) * num_groups).astype(np.int64), num_groups - 1)
        else:
            groups[is_src] = 0
        group_rule = f"{num_groups} equal-width bins of the attribute over the source [{lo}, {hi}]"
    else:
        if num_groups is not None:
            raise ValueError("num_groups needs attribute (subgroups are source domains otherwise)")
        src_codes = np.searchsorted(values, np.asarray(src, dtype=values.dtype))
        lookup = np.full(values.size, -1, dtype=np.int64)
        lookup[np.sort(src_codes)] = np.arange(len(src_codes))
        groups[is_src] = lookup[codes[is_src]]
        group_rule = "one subgroup per source domain (sorted order)"
    # GeSS draws half of a Par-Label fine-tuning set from the pool items removed from
    # ood_val and half from those removed from ood_test (appendix C.1): record which is which,
    # one entry per ood_labeled sample in index order (np.flatnonzero(masks["ood_labeled"]))
    origin = None
    if info_level == "par_label":
        from_val = np.isin(np.sort(labeled), val_share[:take_val])
        origin = np.where(from_val, "ood_val", "ood_test").tolist()
    metadata = {
        "kind": "scientific",
        "info_level": info_level,
        "source": [_jsonable(v) for v in src],
        "target": [_jsonable(v) for v in tgt],
        "domain_values": [_jsonable(v) for v in values.tolist()],
        "source_sizes": [float(x) for x in ss],
        "target_sizes": [float(x) for x in ts],
        "par_label_pool": int(labeled.size),
        **({"ood_labeled_origin": origin} if origin is not None else {}),
        "group_rule": group_rule,
        "unused": int(n - is_src.sum() - is_tgt.sum()),
        "seed": seed_record,
        "gs_splits_version": __version__,
    }
    return Split(masks=masks, domains=codes.astype(np.int64), groups=groups, metadata=metadata)


def _jsonable(v: Any) -> Any:
    return v.item() if hasattr(v, "item") else v


def ordered_domain_split(
    domain: Any,
    *,
    order: str | Sequence[Any] = "size",
    source_fraction: float = 0.6,
    descending: bool = True,
    **kwargs: Any,
) -> Split:
    """Domain-ordered split as DrugOOD does: sort domains, take the first ones as source.

    Domains are ordered by ``order`` (``"size"``: number of samples, largest first with
    ``descending=True``; ``"key"``: the domain label itself, e.g. molecule size; or an explicit
    list of labels). Source domains are the first ones until their cumulative share of samples
    reaches ``source_fraction``; the remaining domains are the target. Ties in size are
    broken by the domain label. Other keyword arguments go to :func:`scientific_split`.
    """
    d = _labels(domain, "domain")
    values, counts = np.unique(d, return_counts=True)
    if not 0.0 < source_fraction < 1.0:
        raise ValueError(f"source_fraction must be in (0, 1), got {source_fraction}")
    if isinstance(order, str):
        if order == "size":
            idx = np.lexsort((np.arange(values.size), -counts if descending else counts))
        elif order == "key":
            idx = np.arange(values.size)[::-1] if descending else np.arange(values.size)
        else:
            raise ValueError(f"order must be 'size', 'key' or a list of domain labels, got {order!r}")
        ordered = values[idx].tolist()
    else:
        ordered = list(order)
        if sorted(map(str, ordered)) != sorted(map(str, values.tolist())):
            raise ValueError("order must list every domain label exactly once")
    size = dict(zip(values.tolist(), counts.tolist(), strict=True))
    total = 0
    src = []
    for v in ordered:
        if total >= source_fraction * d.size and src:
            break
        src.append(v)
        total += size[v]
    if len(src) == len(ordered):
        src = src[:-1]
    tgt = [v for v in ordered if v not in src]
    split = scientific_split(d, src, tgt, **kwargs)
    split.metadata["domain_order"] = [_jsonable(v) for v in ordered]
    split.metadata["source_fraction"] = float(source_fraction)
    return split


def par_label_indices(split: Split, n_labels: int, *, seed: int | np.random.Generator = 0) -> np.ndarray:
    """The ``n_labels`` labeled target samples for Par-Label fine-tuning (100, 500 or 1000).

    A seeded prefix of a fixed permutation of ``ood_labeled``: prefixes are nested
    (the 100 are among the 500). Raises ``ValueError`` if the pool is smaller.
    """
    if "ood_labeled" not in split.masks:
        raise ValueError("split has no ood_labeled pool: make it with info_level='par_label'")
    pool = np.flatnonzero(split.masks["ood_labeled"])
    if not 0 < n_labels <= pool.size:
        raise ValueError(f"n_labels must be in 1..{pool.size} (the reserved pool), got {n_labels}")
    rng = np.random.default_rng(seed)
    return np.sort(pool[rng.permutation(pool.size)[:n_labels]])
