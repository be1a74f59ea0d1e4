"""Offline DrugOOD-style default from real ChEMBL bioactivities (MoleculeACE).

DrugOOD's curated LBAP files are not available offline. The MoleculeACE package (PyPI
``MoleculeACE``, MIT licence; van Tilborg et al., J. Chem. Inf. Model. 2022) ships 30
curated ChEMBL bioactivity sets, one CSV per target and measurement type
(``CHEMBL<target>_<Ki|EC50>.csv``, columns ``smiles, exp_mean [nM], y, cliff_mol,
split``; 48,714 rows, 35,633 distinct molecules). We curate them the DrugOOD way
(Ji et al. 2022; GeSS section 3.2.3, table 6):

* **label**: binary, active (1) when the activity ``pActivity = -log10(exp_mean [M])`` is
  at least :attr:`MoleculeACEConfig.threshold` (default 7.0, i.e. 100 nM; the median
  pActivity of the 30 sets is 7.17, so the classes are roughly balanced). DrugOOD
  thresholds IC50 values the same way; the exact cut-off is ours and configurable.
* **domains** (one per shift):

  - ``assay``: the target / measurement set (file stem, e.g. ``CHEMBL204_Ki``), the
    offline stand-in for DrugOOD's assay environment (30 domains);
  - ``scaffold``: the Bemis-Murcko scaffold SMILES (RDKit ``MurckoScaffoldSmiles``,
    acyclic molecules share the empty scaffold);
  - ``size``: the number of heavy atoms.

* **split**: DrugOOD's domain-ordered split through :func:`gs_splits.ordered_domain_split`:
  assay and scaffold domains are sorted by their number of samples (largest first),
  size domains by the size itself (largest molecules first, ``size_descending``); the
  first domains up to ``source_fraction`` (0.6, as in DrugOOD/GeSS table 4 where the
  source holds 60-67% of the samples) are the source, cut at random into
  ``train/iid_val/iid_test`` (``source_sizes``, DrugOOD's 0.6/0.2/0.2), the remaining
  domains are the target, cut into ``ood_val/ood_test``.
* **information levels** (GeSS section 4.1): ``no_info``; ``o_feature`` adds
  ``train_target`` (target features); ``par_label`` reserves ``par_label_pool`` labeled
  target samples (GeSS: 1000 from each of ood_val and ood_test), disjoint from
  ``ood_val``/``ood_test``.

Each row is one sample (a molecule measured on two targets is two samples, as in
DrugOOD where a ligand can appear in several assays).
"""

from __future__ import annotations

import csv
import importlib.util
import logging
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gs_data.molecules.conformers import (
    NUM_ATOM_TYPES,
    ConformerConfig,
    generate_conformers,
    report_conformer_failures,
)
from gs_data.molecules.dataset import GeometricDataset
from gs_data.molecules.report import ProcessingReport
from gs_splits import INFO_LEVELS, Split, ordered_domain_split

__all__ = [
    "MOLECULEACE_SHIFTS",
    "MoleculeACEConfig",
    "MoleculeACERecords",
    "moleculeace_data_dir",
    "read_moleculeace",
    "moleculeace_split",
    "load_moleculeace_ood",
    "murcko_scaffold",
    "subset_split",
]

logger = logging.getLogger(__name__)

MOLECULEACE_SHIFTS = ("assay", "scaffold", "size")
_LABEL_COLUMN = "exp_mean [nM]"


@dataclass(frozen=True)
class MoleculeACEConfig:
    """Curation and split settings of the MoleculeACE default (DrugOOD / GeSS defaults).

    Attributes
    ----------
    threshold : float
        Active (label 1) iff pActivity = -log10(activity in mol/L) >= threshold (7.0 = 100 nM).
    source_fraction : float
        Share of the samples in the source domains (DrugOOD / GeSS table 4: about 0.6).
    source_sizes : (train, iid_val, iid_test)
        Fractions of the source (DrugOOD: 0.6/0.2/0.2, see GeSS table 4).
    target_sizes : (ood_val, ood_test)
        Fractions of the target.
    par_label_pool : int
        Labeled target pool at the Par-Label level (GeSS appendix C.1: 1000 from each of
        ood_val and ood_test = 2000); half comes from each share.
    size_descending : bool
        Size shift: largest molecules in the source (True) or smallest (False).
    conformer : ConformerConfig
        GeSS conformer settings.
    """

    threshold: float = 7.0
    source_fraction: float = 0.6
    source_sizes: tuple[float, float, float] = (0.6, 0.2, 0.2)
    target_sizes: tuple[float, float] = (0.5, 0.5)
    par_label_pool: int = 2000
    size_descending: bool = True
    conformer: ConformerConfig = field(default_factory=ConformerConfig)

    def __post_init__(self) -> None:
        if not math.isfinite(self.threshold):
            raise ValueError(f"threshold must be a finite pActivity, got {self.threshold!r}")
        if not 0.0 < self.source_fraction < 1.0:
            raise ValueError(f"source_fraction must be in (0, 1), got {self.source_fraction}")
        if self.par_label_pool < 0:
            raise ValueError(f"par_label_pool must be >= 0, got {self.par_label_pool}")


@dataclass
class MoleculeACERecords:
    """The rows of the MoleculeACE CSVs that were kept.

    Attributes
    ----------
    smiles, target : numpy.ndarray of str (N,)
    activity_nm : numpy.ndarray float64 (N,)
        ``exp_mean [nM]``.
    p_activity : numpy.ndarray float64 (N,)
        -log10(activity in mol/L).
    scaffold : numpy.ndarray of str (N,)
        Bemis-Murcko scaffold SMILES ("" for acyclic molecules).
    num_heavy_atoms : numpy.ndarray int64 (N,)
    report : ProcessingReport
    """

    smiles: np.ndarray
    target: np.ndarray
    activity_nm: np.ndarray
    p_activity: np.ndarray
    scaffold: np.ndarray
    num_heavy_atoms: np.ndarray
    report: ProcessingReport

    def __len__(self) -> int:
        return int(self.smiles.size)

    def labels(self, threshold: float = 7.0) -> np.ndarray:
        """Binary labels (int64): 1 iff ``p_activity >= threshold``."""
        return (self.p_activity >= threshold).astype(np.int64)

    def domain(self, shift: str) -> np.ndarray:
        """Domain label per sample for ``shift`` in ``("assay", "scaffold", "size")``."""
        if shift == "assay":
            return self.target
        if shift == "scaffold":
            return self.scaffold
        if shift == "size":
            return self.num_heavy_atoms
        raise ValueError(f"shift must be one of {MOLECULEACE_SHIFTS}, got {shift!r}")


def moleculeace_data_dir() -> Path:
    """Folder of the CSVs shipped by the installed MoleculeACE package (not imported).

    Raises
    ------
    FileNotFoundError
        MoleculeACE is not installed; says how to install it or where to point instead.
    """
    spec = importlib.util.find_spec("MoleculeACE")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "MoleculeACE is not installed: `pip install --no-deps MoleculeACE` (only its data "
            "files are used), or pass data_dir= a folder of CHEMBL*_{Ki,EC50}.csv files"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "Data" / "benchmark_data"
    if not path.is_dir():
        raise FileNotFoundError(f"MoleculeACE is installed but has no data folder at {path}")
    return path


def murcko_scaffold(smiles_or_mol: Any) -> str:
    """Bemis-Murcko scaffold SMILES (RDKit ``MurckoScaffoldSmiles``, no chirality).

    Examples
    --------
    >>> murcko_scaffold("CCc1ccccc1")
    'c1ccccc1'
    >>> murcko_scaffold("CCO")
    ''
    """
    from rdkit import Chem
    from rdkit.Chem.Scaffolds import MurckoScaffold

    mol = Chem.MolFromSmiles(smiles_or_mol) if isinstance(smiles_or_mol, str) else smiles_or_mol
    if mol is None:
        raise ValueError(f"smiles_or_mol: RDKit cannot parse {smiles_or_mol!r}")
    return MurckoScaffold.MurckoScaffoldSmiles(mol=mol, includeChirality=False)


def read_moleculeace(
    data_dir: str | os.PathLike | None = None, *, targets: Sequence[str] | None = None
) -> MoleculeACERecords:
    """Read MoleculeACE CSVs; rows with invalid SMILES or missing labels are skipped.

    Parameters
    ----------
    data_dir : path, optional
        Folder of ``CHEMBL*_{Ki,EC50}.csv`` files; default the installed package's folder.
    targets : sequence of str, optional
        File stems to read (e.g. ``["CHEMBL2835_Ki"]``); default all.

    Returns
    -------
    MoleculeACERecords
        Its ``report`` counts and explains every skipped row (``invalid_smiles``,
        ``missing_label``); nothing else is dropped.
    """
    from rdkit import Chem
    from rdkit.rdBase import BlockLogs

    folder = Path(data_dir) if data_dir is not None else moleculeace_data_dir()
    if not folder.is_dir():
        raise FileNotFoundError(f"data_dir {folder} is not a folder of MoleculeACE CSV files")
    files = sorted(folder.glob("CHEMBL*.csv"))
    if targets is not None:
        wanted = list(targets)
        by_stem = {f.stem: f for f in files}
        missing = [t for t in wanted if t not in by_stem]
        if missing:
            raise ValueError(f"targets {missing} not found in {folder}; available: {sorted(by_stem)}")
        files = [by_stem[t] for t in wanted]
    if not files:
        raise FileNotFoundError(f"no CHEMBL*.csv files in {folder}")
    report = ProcessingReport(source=f"MoleculeACE ({folder})")
    cols: dict[str, list] = {k: [] for k in ("smiles", "target", "nm", "scaffold", "heavy")}
    parsed: dict[str, tuple[str, int] | None] = {}
    block = BlockLogs()  # RDKit parse errors are reported, not printed
    try:
        for f in files:
            with f.open(newline="") as fh:
                reader = csv.DictReader(fh)
                if reader.fieldnames is None or "smiles" not in reader.fieldnames or _LABEL_COLUMN not in reader.fieldnames:
                    raise ValueError(f"{f}: expected columns 'smiles' and {_LABEL_COLUMN!r}, got {reader.fieldnames}")
                for i, row in enumerate(reader):
                    report.n_input += 1
                    rid = f"{f.stem}:{i}"
                    smi = (row.get("smiles") or "").strip()
                    if smi not in parsed:  # a molecule measured on several targets is parsed once
                        mol = Chem.MolFromSmiles(smi) if smi else None
                        parsed[smi] = None if mol is None else (murcko_scaffold(mol), mol.GetNumHeavyAtoms())
                    if parsed[smi] is None:
                        report.skip(rid, "invalid_smiles", f"RDKit cannot parse {smi!r}")
                        continue
                    try:
                        nm = float(row.get(_LABEL_COLUMN) or "nan")
                    except ValueError:
                        nm = float("nan")
                    if not (math.isfinite(nm) and nm > 0):
                        report.skip(rid, "missing_label", f"{_LABEL_COLUMN}={row.get(_LABEL_COLUMN)!r}")
                        continue
                    cols["smiles"].append(smi)
                    cols["target"].append(f.stem)
                    cols["nm"].append(nm)
                    cols["scaffold"].append(parsed[smi][0])
                    cols["heavy"].append(parsed[smi][1])
                    report.n_kept += 1
    finally:
        del block  # restores the previous RDKit log state
    report.check()
    report.log()
    nm = np.asarray(cols["nm"], dtype=np.float64)
    return MoleculeACERecords(
        smiles=np.asarray(cols["smiles"], dtype=object).astype(str),
        target=np.asarray(cols["target"]).astype(str),
        activity_nm=nm,
        p_activity=9.0 - np.log10(nm),
        scaffold=np.asarray(cols["scaffold"], dtype=object).astype(str),
        num_heavy_atoms=np.asarray(cols["heavy"], dtype=np.int64),
        report=report,
    )


def moleculeace_split(
    records: MoleculeACERecords,
    shift: str,
    *,
    info_level: str = "no_info",
    config: MoleculeACEConfig | None = None,
    seed: int | np.random.Generator = 0,
) -> Split:
    """DrugOOD-style domain-ordered split of the records for one shift (no 3D needed).

    See the module docstring for the domain orders. Raises ``ValueError`` for an unknown
    shift or information level.
    """
    config = config or MoleculeACEConfig()
    if shift not in MOLECULEACE_SHIFTS:
        raise ValueError(f"shift must be one of {MOLECULEACE_SHIFTS}, got {shift!r}")
    if info_level not in INFO_LEVELS:
        raise ValueError(f"info_level must be one of {INFO_LEVELS}, got {info_level!r}")
    domain = records.domain(shift)
    order = "key" if shift == "size" else "size"
    descending = config.size_descending if shift == "size" else True
    split = ordered_domain_split(
        domain,
        order=order,
        descending=descending,
        source_fraction=config.source_fraction,
        info_level=info_level,
        source_sizes=config.source_sizes,
        target_sizes=config.target_sizes,
        par_label_pool=config.par_label_pool if info_level == "par_label" else 0,
        seed=seed,
    )
    split.metadata["shift"] = shift
    split.metadata["domain_rule"] = {
        "assay": "target / measurement set, ordered by number of samples (largest first)",
        "scaffold": "Bemis-Murcko scaffold, ordered by number of samples (largest first)",
        "size": f"number of heavy atoms, ordered by size ({'largest' if descending else 'smallest'} first)",
    }[shift]
    return split


def subset_split(split: Split, keep: np.ndarray) -> Split:
    """The split restricted to the samples where ``keep`` is True (same part names)."""
    keep = np.asarray(keep, dtype=bool)
    if keep.shape != (split.num_nodes,):
        raise ValueError(f"keep must be a boolean mask of shape ({split.num_nodes},), got {keep.shape}")
    meta = dict(split.metadata)
    meta["dropped_after_split"] = int((~keep).sum())
    if "ood_labeled_origin" in meta and "ood_labeled" in split.masks:  # one entry per pool sample
        kept_pool = keep[np.flatnonzero(split.masks["ood_labeled"])]
        meta["ood_labeled_origin"] = [o for o, k in zip(meta["ood_labeled_origin"], kept_pool, strict=True) if k]
    return Split(
        masks={k: v[keep] for k, v in split.masks.items()},
        sigma=None if split.sigma is None else split.sigma[keep],
        domains=None if split.domains is None else split.domains[keep],
        groups=None if split.groups is None else split.groups[keep],
        metadata=meta,
    )


def load_moleculeace_ood(
    shift: str,
    *,
    info_level: str = "no_info",
    config: MoleculeACEConfig | None = None,
    data_dir: str | os.PathLike | None = None,
    targets: Sequence[str] | None = None,
    cache_dir: str | os.PathLike | None = None,
    n_workers: int | None = None,
    progress: bool | None = None,
    callback: Callable[[int, int], None] | None = None,
    seed: int | np.random.Generator = 0,
    records: MoleculeACERecords | None = None,
) -> GeometricDataset:
    """The MoleculeACE default dataset for one shift, with GeSS 3D conformers.

    The split is made on all kept rows first (as GeSS does for DrugOOD); molecules whose
    conformer fails are then dropped from every part and counted in the report.

    Parameters
    ----------
    shift : {"assay", "scaffold", "size"}
    info_level : {"no_info", "o_feature", "par_label"}
    config : MoleculeACEConfig, optional
    data_dir, targets : see :func:`read_moleculeace`
    cache_dir, n_workers, progress, callback
        The conformer generation's cache folder (strongly recommended: ~36k molecules),
        worker processes (None: one per CPU core; a script must guard its entry point with
        ``if __name__ == "__main__":``), progress bar and per-molecule callback, passed to
        :func:`~gs_data.molecules.conformers.generate_conformers` (described there).
    seed : int or numpy.random.Generator
        Seed of the split (the conformer seed is ``config.conformer.seed``).
    records : MoleculeACERecords, optional
        Already read records (skips reading the CSVs again).

    Returns
    -------
    GeometricDataset
        ``y`` binary labels, ``domain`` the shift's domain labels, ``extra`` with
        ``smiles``, ``target``, ``p_activity``, ``scaffold``, ``num_heavy_atoms``.
    """
    config = config or MoleculeACEConfig()
    if records is None:
        records = read_moleculeace(data_dir, targets=targets)
    split = moleculeace_split(records, shift, info_level=info_level, config=config, seed=seed)
    unique, inverse = np.unique(records.smiles, return_inverse=True)
    confs, conf_report = generate_conformers(
        unique.tolist(),
        config.conformer,
        cache_dir=cache_dir,
        n_workers=n_workers,
        callback=callback,
        progress=progress,
        source="MoleculeACE conformers",
    )
    ok_unique = np.array([c is not None for c in confs], dtype=bool)
    keep = ok_unique[inverse]
    report = report_conformer_failures(records.report, f"MoleculeACE {shift}", keep, inverse,
                                       conf_report, lambda i: f"{records.target[i]}:{records.smiles[i]}")
    kept = np.flatnonzero(keep)
    y = records.labels(config.threshold)
    domain = records.domain(shift)
    return GeometricDataset(
        name=f"moleculeace-{shift}",
        pos=[confs[inverse[i]].pos for i in kept],
        atom_type=[confs[inverse[i]].atom_type for i in kept],
        y=y[kept],
        domain=domain[kept],
        split=subset_split(split, keep),
        report=report,
        num_atom_types=NUM_ATOM_TYPES,
        extra={
            "smiles": records.smiles[kept],
            "target": records.target[kept],
            "p_activity": records.p_activity[kept],
            "scaffold": records.scaffold[kept],
            "num_heavy_atoms": records.num_heavy_atoms[kept],
        },
        metadata={
            "source": "MoleculeACE (ChEMBL bioactivities), DrugOOD-style curation",
            "shift": shift,
            "info_level": info_level,
            "config": {k: v for k, v in asdict(config).items()},
            "conformer_failures": conf_report.counts(),
        },
    )
