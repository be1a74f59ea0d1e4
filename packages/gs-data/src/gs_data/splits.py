"""Attach gs-splits results to PyG ``Data`` objects, with an on-disk cache of computed splits."""

from __future__ import annotations

import copy
import json
import logging
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gs_data._fingerprint import fingerprint
from gs_data._io import (
    CorruptRawFileError,
    MissingRawFileError,
    build_once,
    data_root,
    processed_root,
)

if TYPE_CHECKING:  # torch and PyG load in the functions that build or read tensors
    from torch_geometric.data import Data

__all__ = [
    "AUTHORS_SPLIT_KEYS",
    "attach_split",
    "authors_split",
    "authors_split_path",
    "data_fingerprint",
    "load_authors_split",
    "make_split",
]

logger = logging.getLogger("gs_data")

_MASK_ATTRS = ("in_train", "in_valid", "in_test", "out_valid", "out_test")


def data_fingerprint(data: Data) -> str:
    """SHA-256 of a graph's content: ``edge_index``, ``x`` and ``y`` (bytes, shapes, dtypes)
    and the node count, by :func:`gs_data.fingerprint` (the one content fingerprint of gs).

    Two ``Data`` objects with the same arrays have the same fingerprint whatever their name or
    other attributes; any change of an edge, a feature value or a label changes it.
    """
    from torch_geometric.data import Data

    if not isinstance(data, Data):
        raise TypeError(f"data must be a torch_geometric.data.Data, got {type(data).__name__}")
    fields: list[tuple[str, Any]] = []
    for key in ("edge_index", "x", "y"):
        t = data[key] if key in data else None
        if t is not None and t.is_sparse:
            t = t.coalesce()
            fields += [(key, t.indices()), (key, t.values())]
        else:
            fields.append((key, t))
    fields.append(("n", int(data.num_nodes)))
    return fingerprint(fields)


def _masks_of(split: Any) -> tuple[dict[str, np.ndarray], np.ndarray | None, np.ndarray | None, dict]:
    if hasattr(split, "masks"):
        masks = dict(split.masks)
        domains = getattr(split, "domains", None)
        sigma = getattr(split, "sigma", None)
        meta = dict(getattr(split, "metadata", {}) or {})
    elif isinstance(split, Mapping):
        masks = {k[:-5] if k.endswith("_mask") else k: v for k, v in split.items() if k != "domains"}
        domains = split.get("domains")
        sigma = None
        meta = {}
    else:
        raise TypeError(
            f"split must be a gs_splits.Split (with .masks) or a mapping name -> mask, got {type(split).__name__}"
        )
    out = {}
    for k, v in masks.items():
        a = v.detach().cpu().numpy() if type(v).__module__.startswith("torch") else np.asarray(v)
        if a.dtype != bool:
            raise TypeError(f"split mask {k!r} must be boolean, got dtype {a.dtype}")
        out[k] = a
    return out, (None if domains is None else np.asarray(domains)), (None if sigma is None else np.asarray(sigma)), meta


def attach_split(data: Data, split: Any, *, inplace: bool = False) -> Data:
    """Return ``data`` with the split's masks as ``<part>_mask`` and its domain ids as ``domain``.

    Parameters
    ----------
    data : torch_geometric.data.Data
    split : gs_splits.Split or mapping
        A :class:`gs_splits.Split` (``.masks`` with ``in_train, in_valid, in_test, out_valid,
        out_test`` or the scientific names, ``.domains``, ``.sigma``) or a plain mapping
        ``name -> bool array``.
    inplace : bool
        Modify ``data`` instead of a shallow copy.

    Returns
    -------
    Data
        With ``in_train_mask``, ... (torch.bool, (N,)), ``domain`` (torch.int64, (N,)) when the
        split has domains, ``split_sigma`` (float64) when it has sigma, and
        ``split_metadata`` (dict).
    """
    import torch
    from torch_geometric.data import Data

    if not isinstance(data, Data):
        raise TypeError(f"data must be a torch_geometric.data.Data, got {type(data).__name__}")
    masks, domains, sigma, meta = _masks_of(split)
    n = int(data.num_nodes)
    out = data if inplace else copy.copy(data)
    for k, m in masks.items():
        if m.shape != (n,):
            raise ValueError(f"split mask {k!r} has shape {m.shape}, but data has {n} nodes")
        out[f"{k}_mask"] = torch.from_numpy(np.ascontiguousarray(m))
    if domains is not None:
        if domains.shape != (n,):
            raise ValueError(f"split domains have shape {domains.shape}, but data has {n} nodes")
        out.domain = torch.from_numpy(np.ascontiguousarray(domains, dtype=np.int64))
    if sigma is not None and sigma.shape == (n,):
        out.split_sigma = torch.from_numpy(np.ascontiguousarray(sigma, dtype=np.float64))
    out.split_metadata = meta
    return out


def _cache_file(cache_dir: Path, fp: str, strategy: str, sizes: Any, seed: int, num_domains: int,
                domain_scope: str = "in_train") -> Path:
    key = {"fp": fp, "strategy": strategy, "sizes": sizes, "seed": seed, "num_domains": num_domains}
    if domain_scope != "all":  # "all" keeps the keys (and cache files) of the earlier rule
        key["domain_scope"] = domain_scope
    key = json.dumps(key, sort_keys=True)
    digest = fingerprint({"key": key}, length=24)
    return cache_dir / "splits" / f"{fp[:12]}-{strategy}-{digest}.npz"


def make_split(
    data: Data,
    strategy: str = "popularity",
    *,
    sizes: Sequence[float] | str = (0.3, 0.1, 0.1, 0.1, 0.4),
    seed: int = 0,
    num_domains: int = 10,
    domain_scope: str = "in_train",
    cache_dir: str | os.PathLike | None = None,
    use_cache: bool = True,
) -> Data:
    """Compute (or reload) a structural split of ``data`` and attach it (see :func:`attach_split`).

    The split comes from :func:`gs_splits.structural_split` (structural-shifts paper, Section 3
    and Section 4 "Datasets"; default sizes 30/10/10/10/40 %). It is cached on disk under
    ``<cache_dir>/splits/`` keyed by (dataset fingerprint (:func:`data_fingerprint`), strategy,
    sizes, seed, num_domains, domain_scope); ``cache_dir`` defaults to ``data_root()/processed``.
    ``domain_scope``: the nodes the ``num_domains`` domain bins are cut over, ``"in_train"``
    (appendix F; default) or ``"all"`` (our earlier rule); see
    :func:`gs_splits.structural_split`.

    Parameters
    ----------
    data : Data
        Graph to split (``edge_index`` and ``num_nodes`` are used).
    strategy : str
        ``"popularity"``, ``"locality"``, ``"density"``, ``"random"`` or another name of
        gs-splits' strategy registry (:func:`gs_splits.available_strategies`).
    sizes : 5 fractions or a preset name (``"50:50"``, ``"70:30"``, ``"90:10"``)
    seed : int
        Seed of the split (tie-breaks, ID shuffle).
    """
    from gs_splits import Split, structural_split

    if not isinstance(strategy, str):
        raise TypeError(f"strategy must be a str naming a gs-splits strategy, got {type(strategy).__name__}")
    if not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int (the cache key), got {type(seed).__name__}")
    sizes_key: Any = sizes if isinstance(sizes, str) else [float(s) for s in sizes]
    fp = data_fingerprint(data)
    path = _cache_file(processed_root(cache_dir), fp, strategy, sizes_key, int(seed), num_domains,
                       domain_scope)

    def compute() -> Split:
        return structural_split(
            data.edge_index.detach().cpu().numpy(),
            strategy,
            sizes=sizes,
            seed=int(seed),
            num_nodes=int(data.num_nodes),
            num_domains=num_domains,
            domain_scope=domain_scope,
        )

    # computed once when several processes miss together (issue 34)
    split = (build_once(path, Split.load, compute, lambda p, s: s.save(p), what="split cache")
             if use_cache else compute())
    out = attach_split(data, split)
    out.split_metadata = {**out.split_metadata, "cache_file": str(path), "data_fingerprint": fp}
    return out


#: Keys of the structural-shifts authors' split files -> our part names.
AUTHORS_SPLIT_KEYS = {
    "train": "in_train",
    "valid_in": "in_valid",
    "test_in": "in_test",
    "valid_out": "out_valid",
    "test_out": "out_test",
}


def authors_split_path(name: str, strategy: str, root: str | os.PathLike | None = None) -> Path:
    """Where the authors' split file of dataset ``name`` and ``strategy`` is (or must be
    placed): ``<root>/structural-shifts/<name>/splits/<strategy>.pth`` (the layout of
    ``datasets/<name>/splits/`` in yandex-research/structural-graph-shifts)."""
    from gs_data._registry import resolve_name

    key = resolve_name(name).name
    base = Path(root) if root is not None else data_root()
    return base / "structural-shifts" / key / "splits" / f"{strategy}.pth"


def load_authors_split(
    name: str, strategy: str, root: str | os.PathLike | None = None
) -> dict[str, np.ndarray]:
    """The structural-shifts authors' published masks for ``name`` / ``strategy``.

    The file is a ``torch.save`` dict of bool tensors with keys ``train, valid_in,
    test_in, valid_out, test_out``; returned as ``{in_train, in_valid, in_test, out_valid,
    out_test}`` boolean numpy arrays, unchanged. Raises :class:`MissingRawFileError` naming
    the path to place the file at, and :class:`ValueError` for a file with other keys.
    """
    import torch

    path = authors_split_path(name, strategy, root)
    if not path.is_file():
        raise MissingRawFileError(
            f"the authors' split file {path} is missing; copy datasets/<name>/splits/"
            f"{strategy}.pth of yandex-research/structural-graph-shifts there"
        )
    try:  # weights_only: tensors and containers only, a crafted file cannot run code
        raw = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - torch's message advises weights_only=False
        found = re.search(r"GLOBAL ([\w.]+)", str(exc))
        reason = (f"it asks for {found.group(1)}, which is not allowed" if found
                  else "it holds objects other than tensors" if "Weights only" in str(exc)
                  else " ".join(str(exc).split())[:200])
        raise CorruptRawFileError(
            f"{path}: cannot load this split file safely ({type(exc).__name__}: {reason}); it is "
            "damaged, not a torch file, or holds objects other than tensors (nothing from it was "
            f"run). Copy datasets/<name>/splits/{strategy}.pth of "
            "yandex-research/structural-graph-shifts there again"
        ) from exc
    if not isinstance(raw, Mapping) or set(raw) != set(AUTHORS_SPLIT_KEYS):
        got = sorted(raw) if isinstance(raw, Mapping) else type(raw).__name__
        raise ValueError(
            f"{path}: expected a dict with keys {sorted(AUTHORS_SPLIT_KEYS)}, got {got}"
        )
    return {ours: torch.as_tensor(raw[theirs]).cpu().numpy().astype(bool)
            for theirs, ours in AUTHORS_SPLIT_KEYS.items()}


def authors_split(
    data: Data,
    name: str,
    strategy: str,
    *,
    root: str | os.PathLike | None = None,
    num_domains: int = 10,
    domain_scope: str = "in_train",
) -> Data:
    """``data`` with the authors' published masks attached (see :func:`attach_split`).

    Domains for DANN / CORAL (appendix F, k = ``num_domains`` bins) come from the
    authors' per-node splitting values ``<strategy>-values.npy`` beside the ``.pth`` file
    (:func:`gs_splits.property_domains`); without that file no domains are attached.
    ``domain_scope="in_train"`` (default) cuts the bins over the training nodes (appendix F:
    "which nodes in the training set belong to which domain"), ``"all"`` over every node
    (our earlier rule).
    ``split_metadata["source"]`` is ``"authors"`` and names the file.
    """
    import torch

    from gs_splits import property_domains

    masks = load_authors_split(name, strategy, root)
    path = authors_split_path(name, strategy, root)
    split: dict[str, Any] = dict(masks)
    values = path.with_name(f"{strategy}-values.npy")
    sigma = None
    if values.is_file():
        sigma = np.load(values)
        from gs_splits import DOMAIN_SCOPES

        if domain_scope not in DOMAIN_SCOPES:
            raise ValueError(f"domain_scope must be one of {list(DOMAIN_SCOPES)}, got {domain_scope!r}")
        within = masks["in_train"] if domain_scope == "in_train" else None
        split["domains"] = property_domains(sigma, num_domains, within=within)
    out = attach_split(data, split)
    if sigma is not None and sigma.shape == (int(data.num_nodes),):
        out.split_sigma = torch.from_numpy(np.ascontiguousarray(sigma, dtype=np.float64))
    out.split_metadata = {"source": "authors", "file": str(path), "strategy": strategy}
    return out
