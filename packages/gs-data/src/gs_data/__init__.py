"""gs-data: datasets for graph and geometric deep learning under distribution shift.

Importing ``gs_data`` does not import torch: the torch-dependent API (``load``, ``attach_split``,
``make_split``, the LeBed generators, ...) is imported on first access, and
``gs_data.synthetic`` (the embedded synthetic default graph) is numpy/scipy only.

Main entry points
-----------------
load(name, root=None, **kw) -> torch_geometric.data.Data (or, for a geometric name, the dataset)
available_datasets() -> list of accepted node-classification names
register_dataset(DatasetSpec(...)) / unregister_dataset(name): add your own to that table
available_geometric() / geometric_spec(name) -> GeSS's geometric datasets: task, metric, shift
load_geometric(name, info_level=..., **kw) -> one GeSS shift case (Track, QMOF, DrugOOD-3D, stand-ins)
synthetic.default_graph(seed=0) -> the embedded synthetic graph (numpy/scipy)
attach_split(data, split) -> Data with in_train_mask, ..., domain
make_split(data, strategy, sizes=..., seed=..., cache_dir=...) -> Data (cached on disk)
load_edgewise_splits / generate_edgewise_splits: the edgewise-calibration splits
lebed_feature_shift / lebed_domain_shift / lebed_temporal_shift: LeBed test-graph sets
StructuralNodeSplit / NodeDataset / get_idx_split: PyG-native transform, dataset class and
    OGB-style index dict (``gs_data.pyg``)
"""

from __future__ import annotations

import importlib
from typing import Any

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
from gs_data.geometric import (
    GEOMETRIC_DATASETS,
    GeometricSpec,
    available_geometric,
    geometric_spec,
    load_geometric,
)

# name -> module that defines it (imported lazily: these modules import torch)
_LAZY = {
    "load": "gs_data.datasets",
    "graph_stats": "gs_data.datasets",
    "dataset_info": "gs_data.datasets",
    "raw_paths": "gs_data.datasets",
    "to_data": "gs_data.datasets",
    "row_normalize": "gs_data.datasets",
    "attach_split": "gs_data.splits",
    "make_split": "gs_data.splits",
    "data_fingerprint": "gs_data.splits",
    "authors_split": "gs_data.splits",
    "load_authors_split": "gs_data.splits",
    "authors_split_path": "gs_data.splits",
    "EdgewiseSplit": "gs_data.edgewise",
    "load_edgewise_splits": "gs_data.edgewise",
    "generate_edgewise_splits": "gs_data.edgewise",
    "save_edgewise_split": "gs_data.edgewise",
    "edgewise_masks": "gs_data.edgewise",
    "check_edgewise_split": "gs_data.edgewise",
    "FeatureShiftConfig": "gs_data.lebed",
    "DomainShiftConfig": "gs_data.lebed",
    "TemporalShiftConfig": "gs_data.lebed",
    "TestGraphSet": "gs_data.lebed",
    "lebed_feature_shift": "gs_data.lebed",
    "lebed_domain_shift": "gs_data.lebed",
    "lebed_temporal_shift": "gs_data.lebed",
    "StructuralNodeSplit": "gs_data.pyg",
    "NodeDataset": "gs_data.pyg",
    "get_idx_split": "gs_data.pyg",
}
_SUBMODULES = ("synthetic", "datasets", "splits", "edgewise", "lebed", "pyg", "geometric")

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
    *_LAZY,
    *_SUBMODULES,
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"gs_data.{name}")
    raise AttributeError(f"module 'gs_data' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
