"""PyTorch Geometric entry points: a split transform, a dataset class, OGB-style index splits.

Thin adapters over the rest of gs-data and gs-splits, for code written the PyG way:

* :class:`StructuralNodeSplit` — a :class:`torch_geometric.transforms.BaseTransform` that adds
  the structural-shift masks of :func:`gs_splits.structural_split` to a ``Data`` (like PyG's
  ``RandomNodeSplit``, but seeded and fingerprinted): works in ``Planetoid(...,
  transform=...)``, ``Compose([...])`` or called on a ``Data``.
* :class:`NodeDataset` — an :class:`~torch_geometric.data.InMemoryDataset` for every dataset
  :func:`gs_data.load` knows (``cora-ml``, ``citeseer``, ``planetoid-cora``, ...) with the usual
  ``root`` / ``transform`` / ``pre_transform`` / ``pre_filter`` semantics.
* :func:`get_idx_split` — the OGB-style ``{"train": idx, "valid": idx, "test": idx,
  "valid_ood": idx, "test_ood": idx}`` dict of any :class:`gs_splits.Split` (or of a ``Data``
  carrying its masks).

The splits are those of Bazhenov et al., "Evaluating robustness and uncertainty of graph models
under structural distributional shifts": section 3 (a node property, ``sigma = -property``,
nodes sorted by ascending sigma, the smallest half ID), section 3.2 (popularity = PageRank,
locality = Personalized PageRank from the top-PageRank node, density = local clustering
coefficient), section 4 "Datasets" (ID cut at random into Train / Valid-In / Test-In
30 : 10 : 10 %, OOD into Valid-Out / Test-Out 10 : 40 % in sigma order), appendix B (ID:OOD
70:30 and 90:10) and appendix F (k = 10 property domains for DANN / CORAL).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch_geometric.data import Data, InMemoryDataset
from torch_geometric.transforms import BaseTransform

from gs_data._registry import resolve_name

__all__ = [
    "StructuralNodeSplit",
    "MASK_NAMES",
    "PYG_MASKS",
    "NodeDataset",
    "get_idx_split",
    "structural_strategies",
    "IDX_SPLIT_NAMES",
]

#: Mask name of a :class:`gs_splits.Split` -> key of :func:`get_idx_split` (OGB's ``train`` /
#: ``valid`` / ``test`` for the in-distribution parts, ``*_ood`` for the out-of-distribution
#: ones). Structural splits: ``in_*`` / ``out_*``; scientific splits: ``iid_*`` / ``ood_*``.
IDX_SPLIT_NAMES: dict[str, str] = {
    "in_train": "train",
    "in_valid": "valid",
    "in_test": "test",
    "out_valid": "valid_ood",
    "out_test": "test_ood",
    "train": "train",
    "iid_val": "valid",
    "iid_test": "test",
    "ood_val": "valid_ood",
    "ood_test": "test_ood",
    "train_target": "train_target",
    "ood_labeled": "ood_labeled",
    "id_train": "train",
    "id_val": "valid",
    "id_test": "test",
}

#: gs-splits' structural parts (``gs_splits.STRUCTURAL_PARTS``), in their order
_PARTS = ("in_train", "in_valid", "in_test", "out_valid", "out_test")

#: Attribute names of the five structural masks (``in_train, in_valid, in_test, out_valid,
#: out_test``, in this order) under each naming convention :class:`StructuralNodeSplit`
#: accepts as ``names``: ``"gs"`` (gs-splits' parts + ``_mask``), ``"dgl"`` (DGL's
#: ``dgl.data.utils.add_node_property_split`` / ``mask_nodes_by_property``: the same names)
#: and ``"pyg"`` (PyG's ``torch_geometric.transforms.NodePropertySplit``).
MASK_NAMES: dict[str, tuple[str, str, str, str, str]] = {
    "gs": ("in_train_mask", "in_valid_mask", "in_test_mask", "out_valid_mask", "out_test_mask"),
    "dgl": ("in_train_mask", "in_valid_mask", "in_test_mask", "out_valid_mask", "out_test_mask"),
    "pyg": ("id_train_mask", "id_val_mask", "id_test_mask", "ood_val_mask", "ood_test_mask"),
}

#: ``masks="pyg"``: PyG's usual node-split masks (those ``RandomNodeSplit`` writes and PyG
#: training loops read) and the structural part each one receives: the in-distribution parts.
PYG_MASKS: dict[str, str] = {"train_mask": "in_train", "val_mask": "in_valid", "test_mask": "in_test"}


def structural_strategies() -> tuple[str, ...]:
    """Names :class:`StructuralNodeSplit` accepts: gs-splits' strategy registry
    (:func:`gs_splits.available_strategies`: the paper's ``popularity``, ``locality``,
    ``density`` and ``random`` first, then the extra built-ins and any registered ones),
    read at call time, not a second list."""
    from gs_splits import available_strategies

    return available_strategies()


def _check_sizes(sizes: Any) -> str | tuple[float, ...]:
    from gs_splits import PAPER_SIZES

    accepted = (
        f"a preset name ({', '.join(repr(k) for k in PAPER_SIZES)}) or 5 non-negative fractions "
        "(in_train, in_valid, in_test, out_valid, out_test) that sum to 1"
    )
    if isinstance(sizes, str):
        if sizes not in PAPER_SIZES:
            raise ValueError(f"sizes: unknown ratio {sizes!r}; accepted: {accepted}")
        return sizes
    try:
        values = tuple(float(s) for s in sizes)
    except (TypeError, ValueError):
        raise ValueError(f"sizes: got {sizes!r}; accepted: {accepted}") from None
    if len(values) != 5 or not all(math.isfinite(v) and v >= 0 for v in values):
        raise ValueError(f"sizes: got {sizes!r}; accepted: {accepted}")
    if not math.isclose(sum(values), 1.0, rel_tol=0, abs_tol=1e-9):
        raise ValueError(f"sizes: {sizes!r} sum to {sum(values):.6g}; accepted: {accepted}")
    return values


def _check_int(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name}: expected an integer >= {minimum}, got {value!r}")
    return int(value)


class StructuralNodeSplit(BaseTransform):
    """Add structural-shift masks to a ``Data``: PyG's ``RandomNodeSplit``, seeded and fingerprinted.

    The split is :func:`gs_splits.structural_split` of ``data.edge_index`` (structural-shifts
    paper, Bazhenov et al., section 3: nodes sorted by ``sigma = -property``, the smallest
    sigma in-distribution; section 4 "Datasets": ID cut at random into 30 / 10 / 10 %, OOD into
    Valid-Out 10 % and Test-Out 40 % in sigma order; appendix F: ``num_domains`` property
    domains), attached by :func:`gs_data.make_split`. The masks are therefore exactly those of
    ``structural_split(edge_index, strategy, sizes=sizes, seed=seed, num_nodes=N)``.

    What it writes (bool, (N,) each; ``repr(transform)`` lists the same names):

    * the five parts under the names of ``names`` (:data:`MASK_NAMES`): ``"gs"`` and ``"dgl"``
      (DGL's ``add_node_property_split``) write ``in_train_mask``, ``in_valid_mask``,
      ``in_test_mask``, ``out_valid_mask``, ``out_test_mask``; ``"pyg"`` (PyG's
      ``NodePropertySplit``) writes ``id_train_mask``, ``id_val_mask``, ``id_test_mask``,
      ``ood_val_mask``, ``ood_test_mask``;
    * with ``masks="pyg"`` (the default) also ``train_mask`` = ID train, ``val_mask`` = ID
      valid, ``test_mask`` = ID test (:data:`PYG_MASKS`), **overwriting** a dataset's own
      masks (e.g. Planetoid's or KarateClub's), as PyG's ``RandomNodeSplit`` does, so PyG code
      that trains on ``train_mask`` and selects on ``val_mask`` follows the paper's protocol
      (training on Train, model selection on Valid-In, section 4). ``masks=None`` leaves them;
    * ``domain`` (int64, (N,), the appendix-F domain of each node), ``split_sigma`` (float64,
      (N,)) and ``split_metadata`` (dict: the split's metadata, ``data_fingerprint`` —
      :func:`gs_data.data_fingerprint` of the input graph — and ``transform``, this transform's
      parameters), so a saved ``Data`` says which split it carries and of which graph.

    PyG's ``NodePropertySplit(property_name, ratios)`` and DGL's
    ``add_node_property_split(dataset, part_ratios, property_name)`` cut the same split:
    ``property_name`` is our ``strategy`` (``"popularity"``, ``"locality"``, ``"density"``,
    with their default ``ascending=True``: the largest property in-distribution), ``ratios``
    our five ``sizes`` (``"50:50"`` is ``[0.3, 0.1, 0.1, 0.1, 0.4]``). Differences: part
    sizes (PyG rounds ``N * ratio`` for each part and gives the remainder to OOD test; DGL and
    we take ``floor``, the last part of each group the remainder, so a part can differ by a
    node when ``N * ratio`` is not whole), the PageRank tolerance (networkx's ``1e-6 * N`` in
    PyG; ``1e-11`` here) and ties (broken by a seeded permutation here, by torch's global RNG
    in PyG). On nodes that are not tied at the ID/OOD boundary the ID sets agree (tested
    against PyG's transform).

    Parameters
    ----------
    strategy : str, default ``"popularity"``
        ``"popularity"`` (PageRank), ``"locality"`` (Personalized PageRank from the
        top-PageRank node), ``"density"`` (local clustering coefficient), ``"random"``, or any
        other name of gs-splits' strategy registry (:func:`structural_strategies`).
    sizes : str or 5 floats, default ``(0.3, 0.1, 0.1, 0.1, 0.4)``
        ``in_train, in_valid, in_test, out_valid, out_test`` fractions summing to 1, or a
        paper ratio: ``"50:50"`` (section 4), ``"70:30"`` or ``"90:10"`` (appendix B).
    seed : int, default 0
        Seed of the split (ties, the ID shuffle, the random strategy): the same graph and
        seed give the same masks on any machine.
    num_domains : int, default 10
        k of the appendix-F domains.
    domain_scope : {"in_train", "all"}, default ``"in_train"``
        Nodes the domain bins are cut over (see :func:`gs_splits.structural_split`).
    masks : {"pyg", None}, default ``"pyg"``
        ``"pyg"``: also write ``train_mask`` / ``val_mask`` / ``test_mask`` (the ID parts);
        ``None``: leave those attributes as they are.
    names : {"gs", "dgl", "pyg"}, default ``"gs"``
        Names of the five part masks (:data:`MASK_NAMES`).
    use_cache, cache_dir
        Passed to :func:`gs_data.make_split`: keep computed splits on disk (keyed by the data
        fingerprint and every parameter). Off by default: a transform runs on every
        ``dataset[i]``; to compute a split once, pass the transform as ``pre_transform``.

    Raises
    ------
    ValueError
        At construction, for an unknown strategy, bad sizes, a negative seed, ... (the message
        names the argument and what is accepted).

    Examples
    --------
    >>> from torch_geometric.datasets import Planetoid               # doctest: +SKIP
    >>> ds = Planetoid("data", "Cora", transform=StructuralNodeSplit("locality", seed=0))
    >>> data = ds[0]; data.in_train_mask.sum(), data.out_test_mask.sum()
    >>> bool((data.train_mask == data.in_train_mask).all())          # RandomNodeSplit-style
    True
    """

    def __init__(
        self,
        strategy: str = "popularity",
        sizes: str | Sequence[float] = (0.3, 0.1, 0.1, 0.1, 0.4),
        seed: int = 0,
        *,
        num_domains: int = 10,
        domain_scope: str = "in_train",
        masks: str | None = "pyg",
        names: str = "gs",
        use_cache: bool = False,
        cache_dir: str | os.PathLike | None = None,
    ) -> None:
        from gs_splits import DOMAIN_SCOPES

        accepted = structural_strategies()
        if not isinstance(strategy, str):
            raise TypeError(
                f"strategy: expected a strategy name, got {type(strategy).__name__}; accepted: "
                f"{', '.join(accepted)} (for an array or a callable property call "
                "gs_splits.structural_split directly)"
            )
        if strategy not in accepted:
            raise ValueError(f"strategy: unknown {strategy!r}; accepted: {', '.join(accepted)}")
        if domain_scope not in DOMAIN_SCOPES:
            raise ValueError(f"domain_scope: unknown {domain_scope!r}; accepted: {', '.join(DOMAIN_SCOPES)}")
        if masks not in ("pyg", None):
            raise ValueError(
                f"masks: unknown {masks!r}; accepted: 'pyg' (also write train_mask / val_mask / "
                "test_mask, the ID parts) or None (leave them)"
            )
        if names not in MASK_NAMES:
            raise ValueError(f"names: unknown {names!r}; accepted: {', '.join(repr(k) for k in MASK_NAMES)}")
        self.strategy = strategy
        self.sizes = _check_sizes(sizes)
        self.seed = _check_int("seed", seed, 0)
        self.num_domains = _check_int("num_domains", num_domains, 1)
        self.domain_scope = domain_scope
        self.masks = masks
        self.names = names
        self.use_cache = bool(use_cache)
        self.cache_dir = cache_dir

    def params(self) -> dict[str, Any]:
        """The parameters that determine the split and the attributes it is written to
        (recorded in ``split_metadata["transform"]``)."""
        return {
            "strategy": self.strategy,
            "sizes": self.sizes if isinstance(self.sizes, str) else list(self.sizes),
            "seed": self.seed,
            "num_domains": self.num_domains,
            "domain_scope": self.domain_scope,
            "masks": self.masks,
            "names": self.names,
        }

    def written(self) -> list[str]:
        """The mask attributes this transform writes: the five parts (``names``), then
        ``train_mask``, ``val_mask``, ``test_mask`` with ``masks="pyg"``."""
        return [*MASK_NAMES[self.names], *(PYG_MASKS if self.masks == "pyg" else ())]

    def forward(self, data: Data) -> Data:
        from gs_data.splits import make_split

        if not isinstance(data, Data):
            raise TypeError(
                f"StructuralNodeSplit works on a torch_geometric.data.Data (one homogeneous graph), "
                f"got {type(data).__name__}"
            )
        if data.edge_index is None:
            raise ValueError("StructuralNodeSplit needs data.edge_index (the split is cut by graph structure)")
        out = make_split(
            data, self.strategy, sizes=self.sizes, seed=self.seed, num_domains=self.num_domains,
            domain_scope=self.domain_scope, cache_dir=self.cache_dir, use_cache=self.use_cache,
        )
        parts = {part: out[f"{part}_mask"] for part in _PARTS}
        if self.names != "gs":
            for part, name in zip(_PARTS, MASK_NAMES[self.names], strict=True):
                if name != f"{part}_mask":
                    del out[f"{part}_mask"]
                out[name] = parts[part]
        if self.masks == "pyg":
            for name, part in PYG_MASKS.items():
                out[name] = parts[part].clone()
        meta = dict(out.split_metadata)
        if not self.use_cache:
            meta.pop("cache_file", None)
        meta["transform"] = {"name": type(self).__name__, **self.params()}
        out.split_metadata = meta
        return out

    def __repr__(self) -> str:
        p = self.params()
        own = dict(zip(_PARTS, MASK_NAMES[self.names], strict=True))
        pyg = "".join(f", {name}={own[part]}" for name, part in PYG_MASKS.items()) if self.masks == "pyg" else ""
        return (f"{type(self).__name__}(strategy={p['strategy']!r}, sizes={p['sizes']!r}, "
                f"seed={p['seed']}, num_domains={p['num_domains']}, domain_scope={p['domain_scope']!r}, "
                f"masks={p['masks']!r}, names={p['names']!r}; writes {', '.join(MASK_NAMES[self.names])}"
                f"{pyg}, domain, split_sigma, split_metadata)")


def _identity(obj: Any) -> str | None:
    """A transform's identity for :class:`NodeDataset`'s processed-file key: its ``repr`` with
    memory addresses removed (what PyG compares in ``pre_transform.pt``), ``None`` for none."""
    import re

    return None if obj is None else re.sub(r" at 0x[0-9a-fA-F]+", "", repr(obj))


def _mask_items(split: Any) -> list[tuple[str, Any]]:
    if isinstance(split, Data):
        from gs_splits import SCIENTIFIC_PARTS, STRUCTURAL_PARTS

        # structural masks first: a Planetoid / OGB ``train_mask`` beside them is the
        # dataset's own split, not the scientific ``train`` part
        items = [(k, split[f"{k}_mask"]) for k in STRUCTURAL_PARTS if f"{k}_mask" in split]
        if not items:  # StructuralNodeSplit(names="pyg"): PyG NodePropertySplit's names
            items = [(k[:-5], split[k]) for k in MASK_NAMES["pyg"] if k in split]
            if items and not any(k.startswith("id_") for k, _ in items):
                items = []  # ood_val / ood_test alone: a scientific split's parts
        scientific = [k for k in IDX_SPLIT_NAMES if k not in STRUCTURAL_PARTS and not k.startswith("id_")]
        if not items and any(f"{k}_mask" in split for k in SCIENTIFIC_PARTS if k != "train"):
            items = [(k, split[f"{k}_mask"]) for k in scientific if f"{k}_mask" in split]
        if not items:
            raise ValueError(
                "get_idx_split: this Data carries no split masks; expected attributes "
                + ", ".join(f"{k}_mask" for k in ("in_train", "in_valid", "in_test", "out_valid", "out_test"))
                + " (add them with StructuralNodeSplit or gs_data.attach_split; or PyG NodePropertySplit's "
                "id_train_mask, ..., ood_test_mask), or the scientific "
                "iid_val_mask, iid_test_mask, ood_val_mask, ood_test_mask (with train_mask)"
            )
        return items
    if hasattr(split, "masks") and isinstance(split.masks, Mapping):
        return list(split.masks.items())
    if isinstance(split, Mapping):
        return [(k[:-5] if k.endswith("_mask") else k, v) for k, v in split.items()]
    raise TypeError(
        "get_idx_split: expected a gs_splits.Split, a Data with <part>_mask attributes or a "
        f"mapping part -> bool mask, got {type(split).__name__}"
    )


def get_idx_split(split: Any) -> dict[str, torch.Tensor]:
    """OGB-style index dict of a split: ``{"train": idx, "valid": idx, "test": idx, ...}``.

    Keys (:data:`IDX_SPLIT_NAMES`): ``train``, ``valid``, ``test`` are the
    **in-distribution** parts (structural ``in_train`` / ``in_valid`` / ``in_test``, under
    PyG's names ``id_train`` / ``id_val`` / ``id_test``; scientific ``train`` / ``iid_val`` /
    ``iid_test``), so OGB code that trains on ``train``
    and selects on ``valid`` follows the structural-shifts protocol (model selection on
    Valid-In, paper section 4); ``valid_ood`` and ``test_ood`` are the out-of-distribution
    parts (``out_valid`` / ``out_test``, ``ood_val`` / ``ood_test``). Scientific splits also
    keep ``train_target`` and ``ood_labeled``; a mask of any other name keeps its name.

    Parameters
    ----------
    split : gs_splits.Split, Data or mapping
        A :class:`gs_splits.Split`; a ``Data`` with ``in_train_mask``, ... (e.g. after
        :class:`StructuralNodeSplit`; ``id_train_mask``, ... after ``names="pyg"`` or PyG's
        ``NodePropertySplit``); or a mapping ``part -> bool mask``. A ``Data``'s
        ``train_mask`` / ``val_mask`` / ``test_mask`` beside a structural split are not read.

    Returns
    -------
    dict[str, torch.Tensor]
        Sorted node ids (int64) of each part: ``idx[k]`` equals ``mask.nonzero()``.
    """
    out: dict[str, torch.Tensor] = {}
    length = None
    for name, mask in _mask_items(split):
        m = mask.detach().cpu() if isinstance(mask, torch.Tensor) else torch.from_numpy(np.asarray(mask))
        if m.dtype != torch.bool or m.dim() != 1:
            raise ValueError(
                f"get_idx_split: mask {name!r} must be a 1-D boolean mask, got dtype {m.dtype} and "
                f"shape {tuple(m.shape)}"
            )
        if length is not None and m.numel() != length:
            raise ValueError(f"get_idx_split: mask {name!r} has {m.numel()} entries, the others {length}")
        length = m.numel()
        key = IDX_SPLIT_NAMES.get(name, name)
        if key in out:
            raise ValueError(f"get_idx_split: two masks map to the key {key!r} (one of them is {name!r})")
        out[key] = torch.nonzero(m, as_tuple=False).view(-1).to(torch.long)
    return out


class NodeDataset(InMemoryDataset):
    """A node-classification dataset of gs-data as a PyG ``InMemoryDataset`` (one graph).

    Every name :func:`gs_data.available_datasets` lists is accepted (``"cora-ml"``,
    ``"citeseer"``, ... of the structural-shifts paper, appendix E, Table 8;
    ``"planetoid-cora"``, ``"acmv9"``, ``"synthetic-default"``, ...). The graph is what
    :func:`gs_data.load` returns (undirected ``edge_index``, ``y`` with -1 for missing labels,
    ``label_mask``, ``provenance``).

    Folders
    -------
    * raw files: ``raw_dir`` = ``raw_root`` if given, else ``root``, in gs-data's layout
      (``<raw_dir>/structural-shifts/cora-ml/data.mat``, ``<raw_dir>/planetoid/Cora/raw/...``:
      the layout of the project's shared data folder). A ``raw_root`` that does not exist is
      never created (PyG's ``Dataset`` would create it before downloading):
      :class:`gs_data.MissingRawFileError` names it. A missing file with a standard URL is
      downloaded (logged) when ``download=True``, otherwise :class:`gs_data.MissingRawFileError`
      names the path to place it at; with ``download=False`` a ``raw_root`` is only read, so it
      may be a read-only shared folder.
    * processed file: ``<root>/processed/pyg/<name>/<hash>/data.pt``, the hash covering the
      loading options and ``pre_transform`` / ``pre_filter`` (their ``repr`` without memory
      addresses, which PyG compares too; :class:`StructuralNodeSplit`'s names every parameter).
      Another ``pre_transform`` (e.g. a different split) is processed into its own folder
      beside the first, never read from the first one's file; ``force_reload=True`` rebuilds.

    Parameters
    ----------
    root : path
        Where the processed file goes (and the raw files are, without ``raw_root``).
    name : str
        Dataset name or alias (case-insensitive).
    transform, pre_transform, pre_filter : callable, optional
        PyG semantics: ``transform`` runs on every access, ``pre_transform`` once before
        saving, ``pre_filter(data) -> bool`` keeps the graph or not (rejecting the only graph
        raises ``ValueError``). E.g. ``pre_transform=StructuralNodeSplit("density")``.
    raw_root : path, optional
        Folder holding the raw files; it must exist (it is never created).
    download : bool, default True
        Download missing raw files that have a standard URL.
    force_reload, log
        PyG's (``log`` defaults to False: library code does not print).
    normalize_features, missing_label, self_loops, seed
        Passed to :func:`gs_data.load` (``seed``: the synthetic graph only).
    """

    def __init__(
        self,
        root: str | os.PathLike | None,
        name: str,
        transform: Callable[..., Any] | None = None,
        pre_transform: Callable[..., Any] | None = None,
        pre_filter: Callable[..., Any] | None = None,
        *,
        raw_root: str | os.PathLike | None = None,
        download: bool = True,
        force_reload: bool = False,
        log: bool = False,
        normalize_features: bool = False,
        missing_label: int = -1,
        self_loops: bool = False,
        seed: int | None = None,
    ) -> None:
        from gs_data._io import data_root

        self.spec = resolve_name(name)  # ValueError listing the accepted names
        self.name = self.spec.name
        self._raw_root = None if raw_root is None else str(Path(raw_root).expanduser())
        self._allow_download = bool(download)
        if isinstance(missing_label, bool) or not isinstance(missing_label, (int, np.integer)):
            raise ValueError(f"missing_label: expected an int, got {missing_label!r}")
        self._load_kwargs = {
            "normalize_features": bool(normalize_features),
            "missing_label": int(missing_label),
            "self_loops": bool(self_loops),
            "seed": None if seed is None else _check_int("seed", seed, 0),
        }
        root = data_root() if root is None else root
        super().__init__(str(root), transform, pre_transform, pre_filter, log=log, force_reload=force_reload)
        self.load(self.processed_paths[0])

    @property
    def raw_dir(self) -> str:
        return self._raw_root if self._raw_root is not None else self.root

    def processed_key(self) -> dict[str, Any]:
        """What the processed file holds: the loading options, the processed-format version and
        ``pre_transform`` / ``pre_filter`` (:func:`_identity`); its hash names the folder."""
        from gs_data.datasets import _PROCESSED_VERSION

        return {**self._load_kwargs, "v": _PROCESSED_VERSION,
                "pre_transform": _identity(self.pre_transform), "pre_filter": _identity(self.pre_filter)}

    @property
    def processed_dir(self) -> str:
        key = json.dumps(self.processed_key(), sort_keys=True)
        return os.path.join(self.root, "processed", "pyg", self.name, hashlib.sha256(key.encode()).hexdigest()[:12])

    @property
    def raw_file_names(self) -> list[str]:
        return [f.relpath for f in self.spec.raw_files]

    @property
    def processed_file_names(self) -> list[str]:
        return ["data.pt"]

    def _download(self) -> None:
        # PyG's step, less its ``makedirs(raw_dir)``: a raw_root is read, never created
        from torch_geometric.data.dataset import files_exist

        if not self.raw_file_names or files_exist(self.raw_paths):
            return
        if self._raw_root is not None and not os.path.isdir(self._raw_root):
            from gs_data._io import MissingRawFileError

            raise MissingRawFileError(
                f"raw_root {self._raw_root} does not exist (NodeDataset reads it and never creates "
                f"it): pass the folder holding {self.raw_file_names[0]} for dataset {self.name!r} "
                f"(gs-data's layout), or leave raw_root out to keep the raw files under root ({self.root})"
            )
        self.download()

    def download(self) -> None:
        """Fetch missing raw files (gs-data's downloads: logged, checksummed where known)."""
        from gs_data.datasets import _ensure_raw

        _ensure_raw(self.spec, Path(self.raw_dir), download=self._allow_download, progress=None, verify=False)

    def process(self) -> None:
        import gs_data

        data = gs_data.load(self.name, root=self.raw_dir, download=False, use_cache=False, **self._load_kwargs)
        data_list = [data]
        if self.pre_filter is not None:
            data_list = [d for d in data_list if self.pre_filter(d)]
            if not data_list:
                raise ValueError(f"pre_filter rejected the only graph of dataset {self.name!r}")
        if self.pre_transform is not None:
            data_list = [self.pre_transform(d) for d in data_list]
        self.save(data_list, self.processed_paths[0])

    def get_idx_split(self) -> dict[str, torch.Tensor]:
        """:func:`get_idx_split` of the graph's split masks (after ``pre_transform`` /
        ``transform``, e.g. :class:`StructuralNodeSplit`); ``ValueError`` when it has none."""
        return get_idx_split(self[0])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

