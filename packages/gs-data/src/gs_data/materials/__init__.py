"""Materials under the GeSS fidelity shift (QMOF) and its offline molecular default.

* :mod:`~gs_data.materials.qmof`: the QMOF Database release (``qmof.csv`` + CIFs, ase);
* :mod:`~gs_data.materials.fidelity`: the GeSS fidelity shift (assignment and split);
* :mod:`~gs_data.materials.molecular`: molecular HOMO-LUMO gaps at PBE / HLE17 / HSE06* /
  HSE06 computed with PySCF, shipped with the package (periodic MOFs are out of reach
  on a small machine).
"""

from gs_data.materials.fidelity import (
    FIDELITIES,
    FIDELITY_LABELS,
    GESS_MEAN_GAPS,
    GESS_QMOF_TOTAL,
    FidelityShiftConfig,
    assign_fidelities,
    fidelity_sizes,
    fidelity_split,
)
from gs_data.materials.molecular import (
    DEFAULT_MOLECULAR_SUBSET,
    MOLECULAR_FIDELITY_FILE,
    MOLECULAR_FIDELITY_PROVENANCE,
    MOLECULAR_SUBSETS,
    load_molecular_fidelity,
    molecular_fidelity_means,
    molecular_fidelity_metadata,
    read_molecular_fidelity,
    read_molecular_fidelity_document,
)
from gs_data.materials.qmof import (
    NUM_ELEMENT_TYPES,
    QMOF_CSV,
    QMOF_STRUCTURES_DIR,
    QMOF_URL,
    QMOFRecords,
    load_qmof,
    read_qmof,
    records_to_fidelity_dataset,
)

__all__ = [
    "FIDELITIES",
    "FIDELITY_LABELS",
    "GESS_MEAN_GAPS",
    "GESS_QMOF_TOTAL",
    "FidelityShiftConfig",
    "assign_fidelities",
    "fidelity_sizes",
    "fidelity_split",
    "DEFAULT_MOLECULAR_SUBSET",
    "MOLECULAR_FIDELITY_FILE",
    "MOLECULAR_FIDELITY_PROVENANCE",
    "read_molecular_fidelity_document",
    "MOLECULAR_SUBSETS",
    "load_molecular_fidelity",
    "molecular_fidelity_means",
    "molecular_fidelity_metadata",
    "read_molecular_fidelity",
    "NUM_ELEMENT_TYPES",
    "QMOF_CSV",
    "QMOF_STRUCTURES_DIR",
    "QMOF_URL",
    "QMOFRecords",
    "load_qmof",
    "read_qmof",
    "records_to_fidelity_dataset",
]
