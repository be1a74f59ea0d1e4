"""Splits of the edgewise-calibration paper (Hsu, Shen, Cremers; Appendix C.2).

The paper splits the nodes 15 % observed / 85 % unobserved, cuts the observed set into three
folds (two train, one validates: 10 % / 5 %), and repeats this for 5 random splits. The authors'
files (``<name>_split_<i>.npz``) hold ``test_indices`` and ``k_fold_indices`` (3 folds). Reading
the published Cora/CiteSeer files shows the exact rule, which :func:`generate_edgewise_splits`
follows: **per class** ``c`` with ``n_c`` labelled nodes, ``floor(0.15 n_c)`` observed nodes and
``floor(0.85 (n_c - floor(0.15 n_c)))`` test nodes are drawn at random; the remaining ~13 % of the
nodes are in neither set; the observed nodes are dealt into 3 class-stratified folds (per-class
fold sizes differ by at most one). On Cora this gives 402 observed (3 x 134) and 1,957 test nodes,
on CiteSeer 497 (166/166/165) and 2,402, exactly the published files' sizes (CiteSeer with PyG's
labels, i.e. the 15 label-less nodes counted in class 0: ``gs_data.load(..., missing_label=0)``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from gs_data._io import CorruptRawFileError, MissingRawFileError, atomic_write
from gs_data._safe_pickle import read_npz

if TYPE_CHECKING:  # torch and PyG load in the functions that build or read tensors
    import torch
    from torch_geometric.data import Data

__all__ = [
    "EdgewiseSplit",
    "load_edgewise_splits",
    "generate_edgewise_splits",
    "save_edgewise_split",
    "edgewise_masks",
    "check_edgewise_split",
]

_FILE_STEMS = {"cora": ("Cora", "cora"), "citeseer": ("Citeseer", "citeseer"), "pubmed": ("Pubmed", "pubmed")}


@dataclass(frozen=True)
class EdgewiseSplit:
    """One edgewise-calibration split: ``test_indices`` (85 % side) and 3 observed folds.

    ``source`` names the file it was read from (``None`` for generated splits); errors about
    the split name it.
    """

    test_indices: np.ndarray
    k_fold_indices: tuple[np.ndarray, ...]
    source: str | None = None

    def fold(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``(train, valid)`` node indices when fold ``k`` validates and the others train."""
        if not 0 <= k < len(self.k_fold_indices):
            raise ValueError(f"fold k={k} out of range [0, {len(self.k_fold_indices)})")
        train = np.concatenate([f for i, f in enumerate(self.k_fold_indices) if i != k])
        return train, self.k_fold_indices[k]


def _dataset_key(name: str) -> str:
    key = name.strip().lower().replace("planetoid-", "")
    if key not in _FILE_STEMS:
        raise ValueError(f"edgewise splits exist for {sorted(_FILE_STEMS)}, got {name!r}")
    return key


def _folds_of(arrays: dict[str, np.ndarray], path: Path) -> tuple[np.ndarray, ...]:
    if "k_fold_indices" in arrays:  # the paper's layout: (k, n) ints, or k arrays as objects
        raw = arrays["k_fold_indices"]
        if raw.dtype.hasobject:
            if raw.ndim != 1 or not all(isinstance(f, np.ndarray) and f.ndim == 1 for f in raw):
                raise CorruptRawFileError(
                    f"{path}: 'k_fold_indices' must hold 1-D arrays of node ids, got {raw.shape} "
                    f"of {sorted({type(f).__name__ for f in raw.flat})}"
                )
        elif raw.ndim != 2:
            raise CorruptRawFileError(f"{path}: 'k_fold_indices' must be (folds, nodes), got shape {raw.shape}")
        return tuple(np.asarray(f, dtype=np.int64) for f in raw)
    k = 0  # ours for folds of unequal size: one array per fold, k_fold_indices_<i>
    while f"k_fold_indices_{k}" in arrays:
        k += 1
    if k == 0:
        raise CorruptRawFileError(
            f"{path}: expected arrays 'test_indices' and 'k_fold_indices' (or k_fold_indices_0, "
            f"k_fold_indices_1, ...), found {sorted(arrays)}"
        )
    return tuple(np.asarray(arrays[f"k_fold_indices_{i}"], dtype=np.int64) for i in range(k))


def _read_split(path: Path) -> EdgewiseSplit:
    """Read one split file without unpickling anything (:func:`gs_data._safe_pickle.read_npz`:
    the authors' files store folds of unequal size as an object array, which is parsed with an
    unpickler that admits only numpy's array reconstruction)."""
    try:
        arrays = read_npz(path)
        if "test_indices" not in arrays:
            raise CorruptRawFileError(
                f"{path}: expected arrays 'test_indices' and 'k_fold_indices', found {sorted(arrays)}"
            )
        test = np.asarray(arrays["test_indices"], dtype=np.int64)
        folds = _folds_of(arrays, path)
    except CorruptRawFileError:  # includes UnsafePickleError, which names the file
        raise
    except Exception as exc:  # noqa: BLE001
        raise CorruptRawFileError(f"{path}: cannot read this edgewise split file ({type(exc).__name__}: {exc})") from exc
    return EdgewiseSplit(test, folds, source=str(path))


def check_edgewise_split(split: EdgewiseSplit, num_nodes: int) -> None:
    """Check that ``split`` can belong to a graph of ``num_nodes`` nodes.

    Raises ``ValueError`` naming the split's file when an index lies outside
    ``[0, num_nodes)``, when a node is in two parts (test / folds) or twice in one, or when the
    split selects more nodes than the graph has: the usual signs of a split file written for a
    different graph.
    """
    where = f"edgewise split {split.source}" if split.source else "edgewise split"
    n = int(num_nodes)
    parts = [("test_indices", split.test_indices)] + [
        (f"k_fold_indices[{i}]", f) for i, f in enumerate(split.k_fold_indices)
    ]
    total = sum(int(idx.size) for _, idx in parts)
    if total > n:
        raise ValueError(
            f"{where} selects {total} nodes but the graph has {n}: the file belongs to another "
            "graph; use the split files of this dataset"
        )
    for name, idx in parts:
        if idx.size and (idx.min() < 0 or idx.max() >= n):
            raise ValueError(
                f"{where}: {name} holds node ids in [{int(idx.min())}, {int(idx.max())}] outside "
                f"[0, {n}) (the graph's {n} nodes): the file belongs to another graph"
            )
    allidx = np.concatenate([idx for _, idx in parts]) if parts else np.zeros(0, dtype=np.int64)
    if np.unique(allidx).size != allidx.size:
        raise ValueError(
            f"{where}: some nodes appear twice (in two of test / folds, or twice in one): "
            "the file is corrupt or belongs to another graph"
        )


def load_edgewise_splits(name: str, root: str | os.PathLike, *, num_splits: int = 5) -> list[EdgewiseSplit]:
    """Read the paper's splits ``<root>/edgewise-splits/<Name>/<name>_split_<i>.npz``.

    Parameters
    ----------
    name : ``"cora"``, ``"citeseer"`` or ``"pubmed"`` (``"planetoid-"`` prefix accepted)
    root : folder holding ``edgewise-splits/`` (e.g. the project's shared data folder)
    """
    key = _dataset_key(name)
    folder, stem = _FILE_STEMS[key]
    out = []
    for i in range(num_splits):
        p = Path(root) / "edgewise-splits" / folder / f"{stem}_split_{i}.npz"
        if not p.exists():
            raise MissingRawFileError(
                f"edgewise split file not found: {p}. Place the edgewise-calibration authors' "
                f"{stem}_split_{i}.npz there, or generate new splits with generate_edgewise_splits()."
            )
        out.append(_read_split(p))
    return out


def generate_edgewise_splits(
    y: np.ndarray | torch.Tensor,
    *,
    num_splits: int = 5,
    observed: float = 0.15,
    test: float = 0.85,
    num_folds: int = 3,
    seed: int | np.random.Generator = 0,
) -> list[EdgewiseSplit]:
    """Generate new splits in the paper's format (rule in the module docstring).

    Parameters
    ----------
    y : (N,) int labels; nodes with ``y < 0`` are never selected.
    observed, test : per-class fractions (paper: 15 % observed, 85 % of the rest to test).
    num_folds : folds of the observed set (paper: 3).
    seed : int or numpy.random.Generator.
    """
    import torch

    y = y.detach().cpu().numpy() if isinstance(y, torch.Tensor) else np.asarray(y)
    if y.ndim != 1 or y.dtype.kind not in "iu":
        raise TypeError(f"y must be a 1-D integer array of labels, got shape {y.shape} dtype {y.dtype}")
    if not (0 < observed < 1 and 0 < test <= 1):
        raise ValueError(f"observed must be in (0, 1) and test in (0, 1], got {observed}, {test}")
    if num_folds < 2:
        raise ValueError(f"num_folds must be >= 2, got {num_folds}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    classes = np.unique(y[y >= 0])
    splits = []
    for _ in range(num_splits):
        test_parts, folds = [], [[] for _ in range(num_folds)]
        offset = 0
        for c in classes:
            nodes = rng.permutation(np.flatnonzero(y == c))
            n_obs = int(np.floor(observed * nodes.size))
            n_test = int(np.floor(test * (nodes.size - n_obs)))
            obs, rest = nodes[:n_obs], nodes[n_obs:]
            test_parts.append(rest[:n_test])
            for j, v in enumerate(obs):  # round-robin, rotated per class so fold sizes balance
                folds[(j + offset) % num_folds].append(v)
            offset = (offset + n_obs) % num_folds
        t = np.concatenate(test_parts)
        splits.append(
            EdgewiseSplit(rng.permutation(t), tuple(rng.permutation(np.asarray(f, dtype=np.int64)) for f in folds))
        )
    return splits


def save_edgewise_split(split: EdgewiseSplit, path: str | os.PathLike) -> Path:
    """Write a split in the paper's ``.npz`` format (atomically).

    Folds of equal size are one ``(k, n)`` array ``k_fold_indices`` (the paper's layout); folds
    of unequal size are one array per fold, ``k_fold_indices_0`` ... ``k_fold_indices_<k-1>``,
    never an object array (reading one needs unpickling; :func:`load_edgewise_splits` reads both).
    """
    path = Path(path)
    sizes = {f.size for f in split.k_fold_indices}
    if len(sizes) == 1:
        folds = {"k_fold_indices": np.stack(split.k_fold_indices)}
    else:
        folds = {f"k_fold_indices_{i}": np.asarray(f) for i, f in enumerate(split.k_fold_indices)}
    with atomic_write(path) as fh:
        np.savez(fh, test_indices=split.test_indices, **folds)
    return path


def edgewise_masks(data: Data, split: EdgewiseSplit, fold: int) -> Data:
    """A shallow copy of ``data`` with ``train_mask``, ``val_mask``, ``test_mask`` for ``fold``.

    The split is checked first (:func:`check_edgewise_split`): a split of another graph raises
    ``ValueError`` naming its file.
    """
    import copy

    import torch

    n = int(data.num_nodes)
    check_edgewise_split(split, n)
    train, valid = split.fold(fold)
    out = copy.copy(data)
    for name, idx in (("train_mask", train), ("val_mask", valid), ("test_mask", split.test_indices)):
        m = torch.zeros(n, dtype=torch.bool)
        m[torch.from_numpy(idx)] = True
        out[name] = m
    return out
