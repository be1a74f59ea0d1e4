"""Offline default for the fidelity shift: molecular HOMO-LUMO gaps at QMOF's four levels.

QMOF's periodic DFT band gaps (and its MOF structures) are not available offline, and
periodic hybrid-DFT on MOFs is far out of reach of a small machine. The gs project
therefore ships a small file of *molecular* band gaps computed by itself
(``gs_data/materials/data/molecular_fidelity_gaps.json.gz``): HOMO-LUMO gaps of small real
molecules (RDKit ETKDG + MMFF94 geometries, hydrogens kept) at PBE, HLE17, HSE06*
(HSE06 with 10% short-range exact exchange) and HSE06, computed with PySCF in a modest
basis. The script ``packages/gs-data/scripts/make_fidelity_gaps.py`` regenerates it.

It ships as two files: the molecules as compact, gzipped JSON
(``molecular_fidelity_gaps.json.gz``, ``{"molecules": [...]}``) and, kept apart and
readable as is, its provenance (``molecular_fidelity_gaps.provenance.json``: program
versions, basis set, grid, CPU times, summary, skipped molecules, and the SHA-256 and
count of the data it describes). :func:`read_molecular_fidelity_document` joins them.

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

import gzip
import hashlib
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
    "MOLECULAR_FIDELITY_PROVENANCE",
    "provenance_path",
    "read_molecular_fidelity_document",
    "MOLECULAR_SUBSETS",
    "DEFAULT_MOLECULAR_SUBSET",
    "molecular_fidelity_metadata",
    "molecular_fidelity_means",
    "read_molecular_fidelity",
    "load_molecular_fidelity",
]

#: The shipped molecules: compact JSON ``{"molecules": [...]}``, gzipped.
MOLECULAR_FIDELITY_FILE = "molecular_fidelity_gaps.json.gz"
#: Its provenance, kept apart (indented JSON): everything about the data but the data.
MOLECULAR_FIDELITY_PROVENANCE = "molecular_fidelity_gaps.provenance.json"
#: Molecule classes in the shipped file: every molecule, the conjugated ones (``conjugated``
#: tag: RDKit perceives an aromatic atom or a conjugated bond; the MOF-linker-like class)
#: and the rest.
MOLECULAR_SUBSETS: tuple[str, ...] = ("all", "conjugated", "rest")
#: Subset used by :func:`load_molecular_fidelity` by default (see the gs-data README,
#: "Offline default: molecular band gaps", for the evidence behind the choice).
DEFAULT_MOLECULAR_SUBSET = "all"


def provenance_path(data_path: str | Path) -> Path:
    """The provenance file beside a ``<stem>.json.gz`` data file: ``<stem>.provenance.json``."""
    p = Path(data_path)
    return p.with_name(p.name.removesuffix(".gz").removesuffix(".json") + ".provenance.json")


def data_sha256(molecules_doc_bytes: bytes) -> str:
    """SHA-256 of the decompressed data file, as its provenance records it."""
    return hashlib.sha256(molecules_doc_bytes).hexdigest()


def _read_bytes(fh, gz: bool) -> bytes:
    raw = fh.read()
    return gzip.decompress(raw) if gz else raw


def read_molecular_fidelity_document(path: str | Path | None = None) -> dict[str, Any]:
    """The whole document: provenance keys plus ``molecules``.

    ``path``: ``None`` for the shipped files; a ``.json.gz`` data file (with its
    ``.provenance.json`` beside it, read when present); or a single ``.json`` file holding
    both (the layout before gs-data 0.2, and what ``make_fidelity_gaps.py --out x.json``
    reads back). A provenance that names a different data checksum is an error.
    """
    if path is None:
        folder = resources.files("gs_data.materials").joinpath("data")
        with folder.joinpath(MOLECULAR_FIDELITY_FILE).open("rb") as fh:
            raw = _read_bytes(fh, gz=True)
        with folder.joinpath(MOLECULAR_FIDELITY_PROVENANCE).open("rb") as fh:
            prov: dict[str, Any] | None = json.loads(fh.read().decode("utf-8"))
        where = MOLECULAR_FIDELITY_FILE
    else:
        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"molecular fidelity file not found at {p}")
        with p.open("rb") as fh:
            raw = _read_bytes(fh, gz=p.name.endswith(".gz"))
        pp = provenance_path(p)
        prov = json.loads(pp.read_text(encoding="utf-8")) if p.name.endswith(".gz") and pp.is_file() else None
        where = str(p)
    doc = json.loads(raw.decode("utf-8"))
    if not isinstance(doc, dict):
        raise ValueError(f"{where}: expected a JSON object with a 'molecules' list")
    if prov is not None:
        want = prov.get("data_sha256")
        if want is not None and want != data_sha256(raw):
            raise ValueError(f"{where}: SHA-256 {data_sha256(raw)} differs from the {want} its "
                             "provenance file records; the two files do not belong together")
        doc = {**prov, **doc}
    return doc




def molecular_fidelity_metadata(path: str | Path | None = None) -> dict[str, Any]:
    """Everything in the shipped file except the molecules (versions, method, cost)."""
    doc = read_molecular_fidelity_document(path)
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

    doc = read_molecular_fidelity_document(path)
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
