"""Offline default for the fidelity shift: molecular HOMO-LUMO gaps at QMOF's four levels.

QMOF's periodic DFT band gaps (and its MOF structures) are not available offline, and
periodic hybrid-DFT on MOFs is far out of reach of a small machine. The gs project
therefore ships a small file of *molecular* band gaps computed by itself
(``gs_data/materials/data/molecular_fidelity_gaps.json``): HOMO-LUMO gaps of small real
molecules (RDKit ETKDG + MMFF94 geometries, hydrogens kept) at PBE, HLE17, HSE06*
(HSE06 with 10% short-range exact exchange) and HSE06, computed with PySCF in a modest
basis. The script ``packages/gs-data/scripts/make_fidelity_gaps.py`` regenerates it and
the file records the program versions, basis set, grid and CPU times.

The default is built exactly like QMOF's fidelity shift (:mod:`gs_data.materials.fidelity`)
with the GeSS sizes scaled to the number of molecules. It reproduces the *mechanism* of
the shift (same structures, systematically different labels per level of theory), not
QMOF's values: molecular gaps are larger than MOF band gaps.

Each molecule is tagged ``conjugated`` (aromatic atom or conjugated bond, RDKit). The
default dataset uses all molecules (:data:`DEFAULT_MOLECULAR_SUBSET`); ``subset="conjugated"``
selects the MOF-linker-like class, the one in which the mean gaps follow GeSS table 5's
order. The README reports the means of all three subsets.
"""

from __future__ import annotations

import json
import math
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from gs_data.materials.fidelity import FIDELITIES, FidelityShiftConfig
from gs_data.materials.qmof import QMOFRecords, records_to_fidelity_dataset
from gs_data.molecules.dataset import GeometricDataset
from gs_data.molecules.report import ProcessingReport

__all__ = [
    "MOLECULAR_FIDELITY_FILE",
    "MOLECULAR_SUBSETS",
    "DEFAULT_MOLECULAR_SUBSET",
    "molecular_fidelity_metadata",
    "molecular_fidelity_means",
    "read_molecular_fidelity",
    "load_molecular_fidelity",
]

MOLECULAR_FIDELITY_FILE = "molecular_fidelity_gaps.json"
#: Molecule classes in the shipped file: every molecule, the conjugated ones (``conjugated``
#: tag: RDKit perceives an aromatic atom or a conjugated bond; the MOF-linker-like class)
#: and the rest.
MOLECULAR_SUBSETS: tuple[str, ...] = ("all", "conjugated", "rest")
#: Subset used by :func:`load_molecular_fidelity` by default (see the gs-data README,
#: "Offline default: molecular band gaps", for the evidence behind the choice).
DEFAULT_MOLECULAR_SUBSET = "all"


def _load_json(path: str | Path | None) -> dict[str, Any]:
    if path is None:
        ref = resources.files("gs_data.materials").joinpath("data", MOLECULAR_FIDELITY_FILE)
        with ref.open("r") as fh:
            return json.load(fh)
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"molecular fidelity file not found at {p}")
    with p.open() as fh:
        return json.load(fh)


def molecular_fidelity_metadata(path: str | Path | None = None) -> dict[str, Any]:
    """Everything in the shipped file except the molecules (versions, method, cost)."""
    doc = _load_json(path)
    return {k: v for k, v in doc.items() if k != "molecules"}


def _check_subset(subset: str) -> None:
    if subset not in MOLECULAR_SUBSETS:
        raise ValueError(f"subset must be one of {MOLECULAR_SUBSETS}, got {subset!r}")


def _select(mols: list[dict[str, Any]], subset: str) -> list[dict[str, Any]]:
    _check_subset(subset)
    if subset == "all":
        return mols
    missing = [m.get("name", "?") for m in mols if not isinstance(m.get("conjugated"), bool)]
    if missing:
        raise ValueError(
            f"subset={subset!r} needs the boolean 'conjugated' tag on every molecule; missing for "
            f"{missing[:3]} (regenerate the file with scripts/make_fidelity_gaps.py --resume)"
        )
    want = subset == "conjugated"
    return [m for m in mols if m["conjugated"] is want]


def read_molecular_fidelity(path: str | Path | None = None, *, subset: str = "all") -> QMOFRecords:
    """The shipped (or given) molecular four-fidelity file as :class:`QMOFRecords`.

    A gap whose SCF did not converge is treated as missing (NaN); a molecule with no
    converged gap at all is skipped (``missing_label``). Molecules the generator could
    not handle (no MMFF94 parameters) are listed in the file under ``skipped`` and are
    not counted as input here.

    Parameters
    ----------
    path : path, optional
        Another file in the same format (default: the one shipped with gs-data).
    subset : {"all", "conjugated", "rest"}
        Which molecules to read (see :data:`MOLECULAR_SUBSETS`); ``"all"`` by default here,
        :func:`load_molecular_fidelity` defaults to :data:`DEFAULT_MOLECULAR_SUBSET`.
    """
    from ase.data import atomic_numbers

    doc = _load_json(path)
    mols = doc.get("molecules")
    if not isinstance(mols, list):
        raise ValueError("molecular fidelity file: expected a 'molecules' list")
    mols = _select(mols, subset)
    source = MOLECULAR_FIDELITY_FILE if path is None else str(path)
    report = ProcessingReport(source=source if subset == "all" else f"{source} [{subset}]")
    ids, gaps, numbers, pos = [], [], [], []
    for m in mols:
        report.n_input += 1
        g = []
        for f in FIDELITIES:
            entry = m["fidelities"].get(f)
            ok = entry is not None and entry.get("converged", False) and math.isfinite(entry["gap_ev"])
            g.append(float(entry["gap_ev"]) if ok else float("nan"))
        if all(math.isnan(x) for x in g):
            report.skip(m["name"], "missing_label", "no converged gap at any level")
            continue
        ids.append(m["name"])
        gaps.append(g)
        numbers.append(np.asarray([atomic_numbers[s] for s in m["symbols"]], dtype=np.int64))
        pos.append(np.asarray(m["pos_angstrom"], dtype=np.float64))
        report.n_kept += 1
    report.check()
    return QMOFRecords(
        ids=np.asarray(ids).astype(str),
        gaps=np.asarray(gaps, dtype=np.float64).reshape(-1, len(FIDELITIES)),
        numbers=numbers,
        pos=pos,
        cell=np.zeros((len(ids), 3, 3)),
        report=report,
    )


def molecular_fidelity_means(path: str | Path | None = None, *, subset: str = "all") -> dict[str, Any]:
    """Number of molecules and mean gap (eV) per fidelity of one subset of the file.

    Recomputed from the molecules (converged gaps only; the file's own ``summary`` block is
    written by the generator from the same numbers).

    Returns
    -------
    dict
        ``{"num_molecules": int, "mean_gap_ev": {fidelity: float}, "increasing": bool,
        "fraction_in_order": float}``: ``increasing`` says whether the means rise strictly
        in :data:`FIDELITIES` order (PBE < HLE17 < HSE06* < HSE06, as GeSS table 5 for
        MOFs), ``fraction_in_order`` is the share of molecules whose own four gaps do.
    """
    rec = read_molecular_fidelity(path, subset=subset)
    means = {f: float(np.nanmean(rec.gaps[:, i])) if len(rec) else float("nan") for i, f in enumerate(FIDELITIES)}
    vals = [means[f] for f in FIDELITIES]
    per_molecule = np.all(np.diff(rec.gaps, axis=1) > 0, axis=1)
    return {
        "num_molecules": len(rec),
        "mean_gap_ev": means,
        "increasing": bool(len(rec)) and all(a < b for a, b in zip(vals[:-1], vals[1:], strict=True)),
        "fraction_in_order": float(per_molecule.mean()) if len(rec) else float("nan"),
    }


def load_molecular_fidelity(
    *,
    target: str = "hse06",
    info_level: str = "no_info",
    config: FidelityShiftConfig | None = None,
    seed: int | np.random.Generator = 0,
    path: str | Path | None = None,
    subset: str = DEFAULT_MOLECULAR_SUBSET,
) -> GeometricDataset:
    """The offline fidelity-shift default (GeSS 3.2.2 mechanism on molecular gaps).

    Parameters
    ----------
    target : {"hse06", "hse06_10hf"}
        Ignored when ``config`` is given.
    info_level : {"no_info", "o_feature", "par_label"}
    config : FidelityShiftConfig, optional
        GeSS sizes, scaled to the number of molecules by default.
    seed : int or numpy.random.Generator
    path : path, optional
        Another file in the same format (default: the one shipped with gs-data).
    subset : {"all", "conjugated", "rest"}
        Molecules used (default :data:`DEFAULT_MOLECULAR_SUBSET`; the README gives the
        mean gaps of every subset and the reason for the default).
    """
    config = config or FidelityShiftConfig(target=target)
    records = read_molecular_fidelity(path, subset=subset)
    meta = molecular_fidelity_metadata(path)
    return records_to_fidelity_dataset(
        records, f"molecular-fidelity-{config.target}", info_level=info_level, config=config,
        seed=seed, metadata={"source": meta.get("description", ""), "method": meta.get("method", {}),
                             "subset": subset},
    )
