"""DrugOOD-3D: DrugOOD's curated LBAP files with GeSS 3D conformers (GeSS 3.2.3, C.4).

Real data: DrugOOD (Ji et al. 2022, https://github.com/tencent-ailab/DrugOOD, GPL-3.0)
publishes its curated datasets as JSON files; GeSS uses
``lbap_core_ic50_assay.json``, ``lbap_core_ic50_scaffold.json`` and
``lbap_core_ic50_size.json``. Each file is an object with a ``"split"`` member mapping
``train, iid_val, iid_test, ood_val, ood_test`` to lists of items
``{"smiles", "cls_label", "reg_label", "assay_id", "domain_id"}`` (other top-level
members, e.g. ``"cfg"``, are ignored). Nothing is downloaded: place the files in a
folder and pass it as ``root``.

GeSS keeps DrugOOD's split (appendix C.1) and builds one conformer per molecule
(:func:`~gs_data.molecules.conformers.embed_conformer`); molecules that fail are dropped
and counted. Items with an invalid SMILES or a missing ``cls_label`` are skipped and
counted as well; nothing else is dropped.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gs_data.molecules.conformers import (
    NUM_ATOM_TYPES,
    ConformerConfig,
    generate_conformers,
    report_conformer_failures,
)
from gs_data.molecules.dataset import GeometricDataset, split_from_parts
from gs_data.molecules.report import ProcessingReport
from gs_splits import INFO_LEVELS, SCIENTIFIC_PARTS

__all__ = [
    "DRUGOOD_SHIFTS",
    "DRUGOOD_URL",
    "DrugOODRecords",
    "drugood_file_name",
    "read_drugood_json",
    "load_drugood3d",
]

DRUGOOD_SHIFTS = ("assay", "scaffold", "size")
DRUGOOD_URL = "https://github.com/tencent-ailab/DrugOOD"


def drugood_file_name(shift: str) -> str:
    """``lbap_core_ic50_<shift>.json`` for ``shift`` in ``("assay", "scaffold", "size")``."""
    if shift not in DRUGOOD_SHIFTS:
        raise ValueError(f"shift must be one of {DRUGOOD_SHIFTS}, got {shift!r}")
    return f"lbap_core_ic50_{shift}.json"


@dataclass
class DrugOODRecords:
    """Items of one DrugOOD file that were kept (before conformer generation).

    All arrays have one entry per kept item, in file order (parts in the order
    ``train, iid_val, iid_test, ood_val, ood_test``); ``item_index`` is the item's
    position in its part's list in the file.
    """

    smiles: np.ndarray
    cls_label: np.ndarray
    reg_label: np.ndarray
    assay_id: np.ndarray
    domain_id: np.ndarray
    part: np.ndarray
    item_index: np.ndarray
    report: ProcessingReport

    def __len__(self) -> int:
        return int(self.smiles.size)


def _finite(value) -> bool:
    try:
        return value is not None and not isinstance(value, bool) and math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def read_drugood_json(path: str | os.PathLike) -> DrugOODRecords:
    """Read one DrugOOD LBAP JSON file.

    Items with an empty/unparseable SMILES (``invalid_smiles``) or a missing or
    non-numeric ``cls_label`` (``missing_label``) are skipped and recorded in the report.
    A missing ``reg_label`` is kept as NaN (it is not the GeSS label).

    Raises
    ------
    FileNotFoundError
        The file is absent (the message says where to get it).
    ValueError
        The file is not DrugOOD's format (no ``split`` object with the five parts).
    """
    from rdkit import Chem
    from rdkit.rdBase import BlockLogs

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"DrugOOD file not found at {path}: generate or download lbap_core_ic50_*.json "
            f"with DrugOOD ({DRUGOOD_URL}) and place it there"
        )
    with path.open() as fh:
        doc = json.load(fh)
    split = doc.get("split") if isinstance(doc, dict) else None
    if not isinstance(split, dict) or any(p not in split for p in SCIENTIFIC_PARTS):
        raise ValueError(
            f"{path}: expected a JSON object with a 'split' member holding {SCIENTIFIC_PARTS}"
        )
    report = ProcessingReport(source=path.name)
    cols: dict[str, list] = {k: [] for k in ("smiles", "cls", "reg", "assay", "domain", "part", "idx")}
    block = BlockLogs()  # RDKit parse errors are reported, not printed
    try:
        for part in SCIENTIFIC_PARTS:
            items = split[part]
            if not isinstance(items, list):
                raise ValueError(f"{path}: split[{part!r}] must be a list of items")
            for i, item in enumerate(items):
                report.n_input += 1
                rid = f"{part}:{i}"
                if not isinstance(item, dict):
                    raise ValueError(f"{path}: split[{part!r}][{i}] is not an object")
                smi = item.get("smiles")
                if not isinstance(smi, str) or not smi.strip() or Chem.MolFromSmiles(smi) is None:
                    report.skip(rid, "invalid_smiles", f"smiles={smi!r}")
                    continue
                if not _finite(item.get("cls_label")):
                    report.skip(rid, "missing_label", f"cls_label={item.get('cls_label')!r}")
                    continue
                cols["smiles"].append(smi)
                cols["cls"].append(int(float(item["cls_label"])))
                reg = item.get("reg_label")
                cols["reg"].append(float(reg) if _finite(reg) else float("nan"))
                cols["assay"].append(str(item.get("assay_id", "")))
                cols["domain"].append(int(item["domain_id"]) if _finite(item.get("domain_id")) else -1)
                cols["part"].append(part)
                cols["idx"].append(i)
                report.n_kept += 1
    finally:
        del block  # restores the previous RDKit log state
    report.check()
    report.log()
    return DrugOODRecords(
        smiles=np.asarray(cols["smiles"], dtype=object).astype(str),
        cls_label=np.asarray(cols["cls"], dtype=np.int64),
        reg_label=np.asarray(cols["reg"], dtype=np.float64),
        assay_id=np.asarray(cols["assay"]).astype(str),
        domain_id=np.asarray(cols["domain"], dtype=np.int64),
        part=np.asarray(cols["part"]).astype(str),
        item_index=np.asarray(cols["idx"], dtype=np.int64),
        report=report,
    )


def load_drugood3d(
    root: str | os.PathLike,
    shift: str,
    *,
    info_level: str = "no_info",
    conformer: ConformerConfig | None = None,
    par_label_per_part: int = 1000,
    cache_dir: str | os.PathLike | None = None,
    n_workers: int | None = None,
    progress: bool | None = None,
    callback: Callable[[int, int], None] | None = None,
    seed: int | np.random.Generator = 0,
) -> GeometricDataset:
    """DrugOOD-3D for one shift (GeSS section 3.2.3, appendix C.4).

    Parameters
    ----------
    root : path
        Folder holding ``lbap_core_ic50_<shift>.json``.
    shift : {"assay", "scaffold", "size"}
    info_level : {"no_info", "o_feature", "par_label"}
        See :func:`~gs_data.molecules.dataset.split_from_parts`.
    conformer : ConformerConfig, optional
        GeSS defaults.
    par_label_per_part : int
        Par-Label pool taken from each of ood_val and ood_test (GeSS: 1000).
    cache_dir : path, optional
        Conformer cache folder.
    n_workers : int, optional
        Conformer worker processes; None: one per CPU core (see
        :func:`~gs_data.molecules.conformers.generate_conformers`; a script must guard its
        entry point with ``if __name__ == "__main__":``).
    progress : bool, optional
        Progress bar of the conformer generation on stderr (None: on a terminal, for
        long runs).
    callback : callable(done, total), optional
        Per-molecule progress.
    seed : int or numpy.random.Generator
        Seed of the Par-Label pool draw.

    Returns
    -------
    GeometricDataset
        ``y`` = ``cls_label``, ``domain`` = ``domain_id``; ``extra`` holds ``smiles``,
        ``reg_label``, ``assay_id``; the split keeps DrugOOD's parts.
    """
    if info_level not in INFO_LEVELS:
        raise ValueError(f"info_level must be one of {INFO_LEVELS}, got {info_level!r}")
    rec = read_drugood_json(Path(root) / drugood_file_name(shift))
    conformer = conformer or ConformerConfig()
    unique, inverse = np.unique(rec.smiles, return_inverse=True)
    confs, conf_report = generate_conformers(
        unique.tolist(), conformer, cache_dir=cache_dir, n_workers=n_workers,
        callback=callback, progress=progress, source=f"{rec.report.source} conformers",
    )
    ok = np.array([c is not None for c in confs], dtype=bool)[inverse] if len(unique) else np.zeros(0, bool)
    report = report_conformer_failures(rec.report, rec.report.source, ok, inverse, conf_report,
                                       lambda i: f"{rec.part[i]}:{rec.item_index[i]}")
    kept = np.flatnonzero(ok)
    split = split_from_parts(
        rec.part[kept], rec.domain_id[kept], info_level=info_level,
        par_label_per_part=par_label_per_part, seed=seed,
    )
    split.metadata["shift"] = shift
    return GeometricDataset(
        name=f"drugood3d-{shift}",
        pos=[confs[inverse[i]].pos for i in kept],
        atom_type=[confs[inverse[i]].atom_type for i in kept],
        y=rec.cls_label[kept],
        domain=rec.domain_id[kept],
        split=split,
        report=report,
        num_atom_types=NUM_ATOM_TYPES,
        extra={"smiles": rec.smiles[kept], "reg_label": rec.reg_label[kept], "assay_id": rec.assay_id[kept]},
        metadata={
            "source": f"DrugOOD {drugood_file_name(shift)} ({DRUGOOD_URL})",
            "shift": shift,
            "info_level": info_level,
            "conformer_failures": conf_report.counts(),
        },
    )
