"""A geometric dataset with scientific-shift split masks (GeSS section 4.1).

Used by the DrugOOD-3D, MoleculeACE, QMOF and molecular-fidelity loaders. Each sample is
a point cloud: ``pos`` (n, 3) coordinates in angstrom and ``atom_type`` (n,) GeSS atom
categories; the split follows gs-splits' scientific conventions (``train, iid_val,
iid_test, ood_val, ood_test`` plus ``train_target`` at the O-Feature level and
``ood_labeled`` at the Par-Label level).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gs_data.molecules.report import ProcessingReport
from gs_splits import INFO_LEVELS, SCIENTIFIC_PARTS, Split

__all__ = ["GeometricDataset", "split_from_parts"]


@dataclass
class GeometricDataset:
    """Point clouds with labels, domains and a scientific split.

    Attributes
    ----------
    name : str
    pos : list of numpy.ndarray (n_i, 3) float64
        Coordinates per sample (angstrom).
    atom_type : list of numpy.ndarray (n_i,) int64
        Categorical point feature per sample.
    y : numpy.ndarray (N,)
        Label per sample (binary class for DrugOOD, band gap in eV for QMOF).
    domain : numpy.ndarray (N,)
        Domain label per sample (assay/target, scaffold, size, fidelity).
    split : gs_splits.Split
        Masks over the N samples.
    report : ProcessingReport
        What was read, kept and skipped.
    extra : dict of str -> numpy.ndarray
        Other per-sample arrays (SMILES, ids, regression labels ...).
    metadata : dict
        JSON-serialisable description (source, config, sizes).
    num_atom_types : int
        Number of categories of ``atom_type``.
    """

    name: str
    pos: list[np.ndarray]
    atom_type: list[np.ndarray]
    y: np.ndarray
    domain: np.ndarray
    split: Split
    report: ProcessingReport
    num_atom_types: int
    extra: dict[str, np.ndarray] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = len(self.pos)
        for key, arr in (("atom_type", self.atom_type), ("y", self.y), ("domain", self.domain)):
            if len(arr) != n:
                raise ValueError(f"{key} has {len(arr)} entries but pos has {n}")
        if self.split.num_nodes != n:
            raise ValueError(f"split covers {self.split.num_nodes} samples but the dataset has {n}")
        for key, arr in self.extra.items():
            if len(arr) != n:
                raise ValueError(f"extra[{key!r}] has {len(arr)} entries but the dataset has {n}")

    def __len__(self) -> int:
        return len(self.pos)

    def num_atoms(self) -> np.ndarray:
        """Number of points per sample, int64 (N,)."""
        return np.fromiter((len(a) for a in self.atom_type), dtype=np.int64, count=len(self))

    def to_pyg(self, indices: Sequence[int] | np.ndarray | None = None) -> list:
        """PyTorch Geometric ``Data`` objects.

        Each has ``x`` (n, 1) long atom-type category (as GeSS: a categorical feature),
        ``pos`` (n, 3) float32, ``y`` (1, 1) float32, ``domain_index`` (the integer domain
        code of ``split.domains``) and ``idx`` (position in this dataset).
        """
        import torch
        from torch_geometric.data import Data

        idx = range(len(self)) if indices is None else np.asarray(indices, dtype=np.int64)
        codes = self.split.domains
        out = []
        for i in idx:
            i = int(i)
            out.append(
                Data(
                    x=torch.as_tensor(self.atom_type[i], dtype=torch.long).view(-1, 1),
                    pos=torch.as_tensor(self.pos[i], dtype=torch.float32),
                    y=torch.tensor([[float(self.y[i])]], dtype=torch.float32),
                    domain_index=torch.tensor([int(codes[i]) if codes is not None else -1]),
                    idx=torch.tensor([i]),
                )
            )
        return out


def split_from_parts(
    parts: Sequence[str] | np.ndarray,
    domain: Sequence[Any] | np.ndarray,
    *,
    info_level: str = "no_info",
    par_label_per_part: int = 1000,
    seed: int | np.random.Generator = 0,
) -> Split:
    """A scientific :class:`~gs_splits.Split` from given part names (e.g. DrugOOD's files).

    DrugOOD ships its own ``train / iid_val / iid_test / ood_val / ood_test`` assignment,
    which GeSS keeps (appendix C.1). The information levels are derived as GeSS does:

    * ``no_info``: the five parts as given;
    * ``o_feature``: plus ``train_target`` = ``ood_val | ood_test`` (unlabeled target
      features, as in the GeSS reference implementation);
    * ``par_label``: ``par_label_per_part`` samples drawn at random (seeded) from
      ``ood_val`` and as many from ``ood_test`` form ``ood_labeled`` (GeSS appendix C.1:
      "we split 1000 samples from both Val-OOD and Test-OOD"; the reference implementation
      takes 1000 from each) and are removed from ``ood_val`` / ``ood_test``, so the pool
      is disjoint from evaluation.

    Parameters
    ----------
    parts : sequence of str (N,)
        One of ``train, iid_val, iid_test, ood_val, ood_test`` per sample.
    domain : sequence (N,)
        Domain label per sample (``domain_id`` for DrugOOD).
    info_level : {"no_info", "o_feature", "par_label"}
    par_label_per_part : int
        Pool samples taken from each of ``ood_val`` and ``ood_test`` (GeSS: 1000). Must be
        at most half of the smaller of the two.
    seed : int or numpy.random.Generator

    Returns
    -------
    gs_splits.Split
    """
    p = np.asarray(parts).astype(str)
    d = np.asarray(domain)
    if p.ndim != 1 or d.shape != p.shape:
        raise ValueError(f"parts and domain must be 1-D of equal length, got {p.shape} and {d.shape}")
    unknown = sorted(set(p.tolist()) - set(SCIENTIFIC_PARTS))
    if unknown:
        raise ValueError(f"parts: unknown part name(s) {unknown}; accepted: {SCIENTIFIC_PARTS}")
    if info_level not in INFO_LEVELS:
        raise ValueError(f"info_level must be one of {INFO_LEVELS}, got {info_level!r}")
    masks = {name: p == name for name in SCIENTIFIC_PARTS}
    pool = np.zeros(p.size, dtype=bool)
    if info_level == "par_label":
        rng = np.random.default_rng(seed)
        k = int(par_label_per_part)
        for name in ("ood_val", "ood_test"):
            idx = np.flatnonzero(masks[name])
            if not 0 <= 2 * k <= idx.size:
                raise ValueError(
                    f"par_label_per_part={k} must be at most half of {name} ({idx.size} samples)"
                )
            take = rng.choice(idx, size=k, replace=False)
            pool[take] = True
            masks[name] = masks[name] & ~pool
        masks["ood_labeled"] = pool
    if info_level == "o_feature":
        masks["train_target"] = masks["ood_val"] | masks["ood_test"]
    values, codes = np.unique(d, return_inverse=True)
    source_values = np.unique(d[masks["train"] | masks["iid_val"] | masks["iid_test"]])
    lookup = {v: i for i, v in enumerate(source_values.tolist())}
    is_src = masks["train"] | masks["iid_val"] | masks["iid_test"]
    groups = np.full(p.size, -1, dtype=np.int64)
    groups[is_src] = [lookup[v] for v in d[is_src].tolist()]
    metadata = {
        "kind": "scientific",
        "info_level": info_level,
        "origin": "given parts",
        "domain_values": [v.item() if hasattr(v, "item") else v for v in values.tolist()],
        "par_label_pool": int(pool.sum()),
        # which OOD part each ood_labeled sample was removed from, in index order (GeSS
        # draws half of a fine-tuning set from each, appendix C.1)
        **({"ood_labeled_origin": np.where(p[pool] == "ood_val", "ood_val", "ood_test").tolist()}
           if info_level == "par_label" else {}),
        "group_rule": "one subgroup per source domain (sorted order)",
        "seed": int(seed) if isinstance(seed, (int, np.integer)) else "generator",
    }
    return Split(masks=masks, domains=codes.astype(np.int64), groups=groups, metadata=metadata)
