"""gs-data: datasets for graph and geometric deep learning under distribution shift.

``import gs_data`` imports the API below eagerly, every name a plain attribute; none of its
modules imports torch or PyTorch Geometric at import time: the functions that build or read
tensors (``load``, ``attach_split``, the LeBed generators, ...) import them when they run.
The parts that are PyG or simulation code through and through are sub-packages imported
only when asked for: ``gs_data.pyg`` (PyG's transform, dataset class and index dict),
``gs_data.synthetic`` (the embedded synthetic graph, numpy/scipy), ``gs_data.track``,
``gs_data.molecules`` and ``gs_data.materials`` (the GeSS cases). ``tests/test_namespace.py``
checks what the import loads.

Main entry points
-----------------
load(name, root=None, **kw) -> torch_geometric.data.Data (or, for a geometric name, the dataset)
available_datasets() -> list of accepted node-classification names
register_dataset(DatasetSpec(...)) / unregister_dataset(name): add your own to that table
available_geometric() / geometric_spec(name) -> GeSS's geometric datasets: task, metric, shift
load_geometric(name, info_level=..., **kw) -> one GeSS shift case (Track, QMOF, DrugOOD-3D, stand-ins)
attach_split(data, split) -> Data with in_train_mask, ..., domain
make_split(data, strategy, sizes=..., seed=..., cache_dir=...) -> Data (cached on disk)
load_edgewise_splits / generate_edgewise_splits: the edgewise-calibration splits
lebed_feature_shift / lebed_domain_shift / lebed_temporal_shift: LeBed test-graph sets
gs_data.synthetic.default_graph(seed=0) -> the embedded synthetic graph (numpy/scipy)
gs_data.pyg.StructuralNodeSplit / NodeDataset / get_idx_split: PyG-native transform, dataset
    class and OGB-style index dict (``from gs_data.pyg import ...``)
"""

from __future__ import annotations

from gs_data import datasets, edgewise, geometric, lebed, splits
from gs_data.__about__ import __version__
from gs_data._fingerprint import fingerprint
from gs_data._io import (
    ChecksumError,
    CorruptRawFileError,
    MissingRawFileError,
    atomic_path,
    atomic_write,
    data_root,
    not_a_regular_file,
    unique_temp_name,
)
from gs_data._readers import RawGraph
from gs_data._registry import (
    DATA_KINDS,
    DatasetSpec,
    PaperStats,
    RawFile,
    available_datasets,
    data_kind,
    register_dataset,
    unregister_dataset,
)
from gs_data.datasets import dataset_info, graph_stats, load, raw_paths, row_normalize, to_data
from gs_data.edgewise import *  # noqa: F403  (the edgewise-calibration splits: all of edgewise.__all__)
from gs_data.geometric import (
    GEOMETRIC_DATASETS,
    GeometricSpec,
    available_geometric,
    geometric_spec,
    load_geometric,
)
from gs_data.lebed import (
    DomainShiftConfig,
    FeatureShiftConfig,
    TemporalShiftConfig,
    TestGraphSet,
    lebed_domain_shift,
    lebed_feature_shift,
    lebed_temporal_shift,
)
from gs_data.splits import (
    attach_split,
    authors_split,
    authors_split_path,
    data_fingerprint,
    load_authors_split,
    make_split,
)

__all__ = [
    "__version__",
    "available_datasets",
    "data_kind",
    "DATA_KINDS",
    "register_dataset",
    "unregister_dataset",
    "DatasetSpec",
    "RawFile",
    "PaperStats",
    "RawGraph",
    "available_geometric",
    "geometric_spec",
    "load_geometric",
    "GeometricSpec",
    "GEOMETRIC_DATASETS",
    "data_root",
    "atomic_write",
    "atomic_path",
    "unique_temp_name",
    "fingerprint",
    "MissingRawFileError",
    "CorruptRawFileError",
    "not_a_regular_file",
    "ChecksumError",
    # datasets
    "load",
    "graph_stats",
    "dataset_info",
    "raw_paths",
    "to_data",
    "row_normalize",
    # splits
    "attach_split",
    "make_split",
    "data_fingerprint",
    "authors_split",
    "load_authors_split",
    "authors_split_path",
    # lebed
    "FeatureShiftConfig",
    "DomainShiftConfig",
    "TemporalShiftConfig",
    "TestGraphSet",
    "lebed_feature_shift",
    "lebed_domain_shift",
    "lebed_temporal_shift",
    # the modules imported here
    "datasets",
    "splits",
    "edgewise",
    "lebed",
    "geometric",
]
__all__ += edgewise.__all__  # the edgewise-calibration splits
