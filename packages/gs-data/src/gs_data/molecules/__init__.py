"""Molecules with 3D conformers under distribution shift (GeSS DrugOOD-3D).

* :mod:`~gs_data.molecules.conformers`: GeSS conformers (ETKDG + MMFF94), cached, parallel;
* :mod:`~gs_data.molecules.drugood`: DrugOOD's ``lbap_core_ic50_{assay,scaffold,size}.json``;
* :mod:`~gs_data.molecules.moleculeace`: the offline DrugOOD-style default from MoleculeACE;
* :mod:`~gs_data.molecules.dataset`: the :class:`GeometricDataset` container;
* :mod:`~gs_data.molecules.report`: :class:`ProcessingReport` (what was skipped and why).
"""

from gs_data.molecules.conformers import (
    ATOM_TYPES,
    NUM_ATOM_TYPES,
    OTHER_ATOM_TYPE,
    Conformer,
    ConformerConfig,
    ConformerError,
    atom_type_index,
    conformer_cache_key,
    embed_conformer,
    generate_conformers,
)
from gs_data.molecules.dataset import GeometricDataset, split_from_parts
from gs_data.molecules.drugood import (
    DRUGOOD_SHIFTS,
    DRUGOOD_URL,
    DrugOODRecords,
    drugood_file_name,
    load_drugood3d,
    read_drugood_json,
)
from gs_data.molecules.moleculeace import (
    MOLECULEACE_SHIFTS,
    MoleculeACEConfig,
    MoleculeACERecords,
    load_moleculeace_ood,
    moleculeace_data_dir,
    moleculeace_split,
    murcko_scaffold,
    read_moleculeace,
    subset_split,
)
from gs_data.molecules.report import SKIP_REASONS, ProcessingReport

__all__ = [
    "ATOM_TYPES",
    "NUM_ATOM_TYPES",
    "OTHER_ATOM_TYPE",
    "Conformer",
    "ConformerConfig",
    "ConformerError",
    "atom_type_index",
    "conformer_cache_key",
    "embed_conformer",
    "generate_conformers",
    "GeometricDataset",
    "split_from_parts",
    "DRUGOOD_SHIFTS",
    "DRUGOOD_URL",
    "DrugOODRecords",
    "drugood_file_name",
    "load_drugood3d",
    "read_drugood_json",
    "MOLECULEACE_SHIFTS",
    "MoleculeACEConfig",
    "MoleculeACERecords",
    "load_moleculeace_ood",
    "moleculeace_data_dir",
    "moleculeace_split",
    "murcko_scaffold",
    "read_moleculeace",
    "subset_split",
    "SKIP_REASONS",
    "ProcessingReport",
]
