"""QMOF: band gaps of metal-organic frameworks at four fidelities (GeSS 3.2.2, C.3).

Real data: the QMOF Database (Rosen et al., Matter 2021 / npj Comput. Mater. 2022;
CC BY 4.0), released on figshare (https://doi.org/10.6084/m9.figshare.13147324) and
described at https://github.com/Andrew-S-Rosen/QMOF. Nothing is downloaded: unpack the
release into a folder ``root`` that holds

* ``qmof.csv`` with at least the columns ``qmof_id`` and
  ``outputs.pbe.bandgap``, ``outputs.hle17.bandgap``, ``outputs.hse06_10hf.bandgap``,
  ``outputs.hse06.bandgap`` (eV; empty where a level was not computed);
* ``relaxed_structures/<qmof_id>.cif``: the DFT-relaxed (PBE-D3(BJ)) structures.

Each material becomes a point cloud: the atoms of its relaxed unit cell with Cartesian
coordinates (angstrom, read with ase) and a categorical atom type (GeSS C.3); here the
category is the atomic number (so ``num_atom_types = 119``), since MOFs contain metals
from most of the periodic table. The cell matrix is kept in ``extra["cell"]``.

Rows whose CIF is missing or cannot be parsed (``unreadable_structure``) and rows with
no band gap at any of the four levels (``missing_label``) are skipped and counted.
"""

from __future__ import annotations

import csv
import logging
import math
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gs_data.materials.fidelity import (
    FIDELITIES,
    FidelityShiftConfig,
    assign_fidelities,
    fidelity_split,
)
from gs_data.molecules.dataset import GeometricDataset
from gs_data.molecules.report import ProcessingReport

__all__ = [
    "QMOF_URL",
    "QMOF_CSV",
    "QMOF_STRUCTURES_DIR",
    "NUM_ELEMENT_TYPES",
    "QMOFRecords",
    "read_qmof",
    "load_qmof",
    "records_to_fidelity_dataset",
]

logger = logging.getLogger(__name__)

QMOF_URL = "https://doi.org/10.6084/m9.figshare.13147324"
QMOF_CSV = "qmof.csv"
QMOF_STRUCTURES_DIR = "relaxed_structures"
#: Atom-type categories for materials: the atomic number (0 unused, 1..118).
NUM_ELEMENT_TYPES = 119


@dataclass
class QMOFRecords:
    """Structures and four-fidelity band gaps of the kept materials.

    Attributes
    ----------
    ids : numpy.ndarray of str (N,)
    gaps : numpy.ndarray float64 (N, 4)
        Band gap (eV) per fidelity in :data:`~gs_data.materials.fidelity.FIDELITIES`
        order; NaN where not computed.
    numbers : list of numpy.ndarray int64
        Atomic numbers per material.
    pos : list of numpy.ndarray float64 (n_i, 3)
        Cartesian coordinates (angstrom).
    cell : numpy.ndarray float64 (N, 3, 3)
        Cell vectors (rows, angstrom); zeros for molecules.
    report : ProcessingReport
    """

    ids: np.ndarray
    gaps: np.ndarray
    numbers: list[np.ndarray]
    pos: list[np.ndarray]
    cell: np.ndarray
    report: ProcessingReport

    def __len__(self) -> int:
        return int(self.ids.size)


def _float(value: str | None) -> float:
    try:
        x = float(value) if value not in (None, "") else float("nan")
    except ValueError:
        return float("nan")
    return x if math.isfinite(x) else float("nan")


def read_qmof(
    root: str | os.PathLike,
    *,
    csv_name: str = QMOF_CSV,
    structures_dir: str = QMOF_STRUCTURES_DIR,
) -> QMOFRecords:
    """Read ``qmof.csv`` and the relaxed CIF structures with ase.

    Raises
    ------
    FileNotFoundError
        ``root/qmof.csv`` is absent (the message says where to get the release).
    ValueError
        The CSV lacks ``qmof_id`` or a band-gap column.
    """
    from ase.io import read as ase_read

    root = Path(root)
    csv_path = root / csv_name
    if not csv_path.is_file():
        raise FileNotFoundError(
            f"QMOF table not found at {csv_path}: download the QMOF Database release "
            f"({QMOF_URL}) and unpack qmof.csv and {structures_dir}/ into {root}"
        )
    columns = [f"outputs.{f}.bandgap" for f in FIDELITIES]
    report = ProcessingReport(source=str(csv_path))
    ids, gaps, numbers, pos, cells = [], [], [], [], []
    with csv_path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in ["qmof_id", *columns] if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{csv_path}: missing column(s) {missing}; QMOF's qmof.csv has them")
        for i, row in enumerate(reader):
            report.n_input += 1
            qid = (row.get("qmof_id") or "").strip() or f"row{i}"
            g = [_float(row.get(c)) for c in columns]
            if all(math.isnan(x) for x in g):
                report.skip(qid, "missing_label", "no band gap at any of the four levels")
                continue
            cif = root / structures_dir / f"{qid}.cif"
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    atoms = ase_read(cif, format="cif")
                if len(atoms) == 0:
                    raise ValueError("no atoms")
            except FileNotFoundError:
                report.skip(qid, "unreadable_structure", f"{cif} does not exist")
                continue
            except Exception as exc:  # ase raises many exception types on bad CIFs
                report.skip(qid, "unreadable_structure", f"{cif}: {type(exc).__name__}: {exc}")
                continue
            ids.append(qid)
            gaps.append(g)
            numbers.append(np.asarray(atoms.get_atomic_numbers(), dtype=np.int64))
            pos.append(np.asarray(atoms.get_positions(), dtype=np.float64))
            cells.append(np.asarray(atoms.cell[:], dtype=np.float64))
            report.n_kept += 1
    report.check()
    report.log()
    return QMOFRecords(
        ids=np.asarray(ids).astype(str),
        gaps=np.asarray(gaps, dtype=np.float64).reshape(-1, len(FIDELITIES)),
        numbers=numbers,
        pos=pos,
        cell=np.asarray(cells, dtype=np.float64).reshape(-1, 3, 3),
        report=report,
    )


def records_to_fidelity_dataset(
    records: QMOFRecords,
    name: str,
    *,
    info_level: str = "no_info",
    config: FidelityShiftConfig | None = None,
    seed: int | np.random.Generator = 0,
    metadata: dict | None = None,
) -> GeometricDataset:
    """GeSS fidelity-shift dataset from four-fidelity records (QMOF or molecules).

    Each material is one sample at its assigned fidelity (``domain``), labelled with the
    band gap at that fidelity (``y``, eV). See :mod:`gs_data.materials.fidelity`.
    """
    config = config or FidelityShiftConfig()
    fid, assign_report = assign_fidelities(records.gaps, config, ids=records.ids, seed=seed)
    keep = np.flatnonzero(fid != "")
    fid_kept = fid[keep]
    y = records.gaps[keep, [FIDELITIES.index(f) for f in fid_kept]]
    split = fidelity_split(fid_kept, config, info_level=info_level, seed=seed)
    report = ProcessingReport(source=records.report.source, n_input=records.report.n_input)
    report.skipped = [*records.report.skipped, *assign_report.skipped]
    report.n_kept = int(keep.size)
    report.check()
    report.log()
    return GeometricDataset(
        name=name,
        pos=[records.pos[i] for i in keep],
        atom_type=[records.numbers[i] for i in keep],
        y=y,
        domain=fid_kept,
        split=split,
        report=report,
        num_atom_types=NUM_ELEMENT_TYPES,
        extra={"id": records.ids[keep], "cell": records.cell[keep], "gaps_all": records.gaps[keep]},
        metadata={
            **(metadata or {}),
            "info_level": info_level,
            "fidelity_target": config.target,
            "fidelity_counts": {f: int((fid_kept == f).sum()) for f in FIDELITIES},
        },
    )


def load_qmof(
    root: str | os.PathLike,
    *,
    target: str = "hse06",
    info_level: str = "no_info",
    config: FidelityShiftConfig | None = None,
    seed: int | np.random.Generator = 0,
) -> GeometricDataset:
    """QMOF fidelity shift (GeSS 3.2.2): target HSE06 or HSE06* (``"hse06_10hf"``).

    Parameters
    ----------
    root : path
        Folder with ``qmof.csv`` and ``relaxed_structures/``.
    target : {"hse06", "hse06_10hf"}
        Ignored when ``config`` is given (``config.target`` is used).
    info_level : {"no_info", "o_feature", "par_label"}
    config : FidelityShiftConfig, optional
    seed : int or numpy.random.Generator
        Seed of the fidelity assignment and of the split.
    """
    config = config or FidelityShiftConfig(target=target)
    records = read_qmof(root)
    return records_to_fidelity_dataset(
        records, f"qmof-{config.target}", info_level=info_level, config=config, seed=seed,
        metadata={"source": f"QMOF Database ({QMOF_URL})"},
    )
