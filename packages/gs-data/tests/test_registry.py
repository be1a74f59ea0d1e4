"""Registering a dataset (gs_data.register_dataset): load accepts it, the shipped ones stay."""

from __future__ import annotations

import numpy as np
import pytest

import gs_data
from gs_data import DatasetSpec, RawFile, RawGraph, register_dataset, unregister_dataset


def _path_graph(root):
    edges = np.array([[0, 1, 1, 2], [1, 0, 2, 1]], dtype=np.int64)
    return RawGraph(edges, np.eye(3, dtype=np.float32), np.array([0, 1, 0]), {}, {"format": "toy"})


def test_a_registered_dataset_is_loaded_by_name_and_alias():
    register_dataset(DatasetSpec(name="toy-path", title="a path (toy)", raw_files=(),
                                 reader=_path_graph, aliases=("toy_path3",)))
    try:
        assert "toy-path" in gs_data.available_datasets()
        for name in ("toy-path", "TOY_PATH", "toy-path3"):
            data = gs_data.load(name)
            assert data.num_nodes == 3 and data.provenance["dataset"] == "toy-path"
        with pytest.raises(ValueError, match="overwrite=True"):
            register_dataset(DatasetSpec(name="toy-path", title="", raw_files=(), reader=_path_graph))
    finally:
        unregister_dataset("toy-path")
    with pytest.raises(ValueError, match="unknown dataset name 'toy-path3'"):
        gs_data.load("toy-path3")


def test_a_registered_dataset_with_raw_files_names_the_missing_path(tmp_path):
    spec = DatasetSpec(name="toy-file", title="a file (toy)", raw_files=(RawFile("toy/edges.npy"),),
                       reader=_path_graph, where="nowhere (a toy)")
    register_dataset(spec)
    try:
        with pytest.raises(gs_data.MissingRawFileError, match="toy/edges.npy"):
            gs_data.load("toy-file", root=tmp_path)
    finally:
        unregister_dataset("toy-file")


def test_names_of_shipped_datasets_are_refused():
    with pytest.raises(ValueError, match="taken by cora-ml"):
        register_dataset(DatasetSpec(name="toy", title="", raw_files=(), reader=_path_graph,
                                     aliases=("coraml",)))
    assert "toy" not in gs_data.available_datasets()
    with pytest.raises(ValueError, match="geometric"):
        register_dataset(DatasetSpec(name="qmof-hse06", title="", raw_files=(), reader=_path_graph))
    with pytest.raises(ValueError, match="cannot be unregistered"):
        unregister_dataset("cora-ml")
    with pytest.raises(ValueError, match="lower case"):
        register_dataset(DatasetSpec(name="Toy", title="", raw_files=(), reader=_path_graph))


def test_data_kind_of_every_dataset_reads_the_tables():
    """Issue 33: reports name each dataset's kind; the demo's are synthetic and a stand-in."""
    import gs_data
    from gs_data import DATA_KINDS, data_kind

    assert data_kind("synthetic-default") == ("synthetic", "synthetic default graph (embedded, no download)")
    assert data_kind("SYNTHETIC")[0] == "synthetic"  # aliases too
    assert data_kind("cora-ml")[0] == data_kind("planetoid-cora")[0] == data_kind("qmof-hse06")[0] == "real"
    assert data_kind("molecular-fidelity") == ("stand-in", "offline stand-in for qmof-hse06 (GeSS 3.2.2 mechanism (ours))")
    assert data_kind("moleculeace-size")[1].startswith("offline stand-in for drugood3d-size")
    assert data_kind("track-pileup-pu50")[0] == "simulated"
    kinds = {data_kind(n)[0] for n in [*gs_data.available_datasets(), *gs_data.available_geometric()]}
    assert kinds == set(DATA_KINDS)
    with pytest.raises(ValueError, match="unknown dataset name 'nope'"):
        data_kind("nope")
    with pytest.raises(ValueError, match="kind must be one of real, synthetic, simulated, stand-in"):
        gs_data.DatasetSpec("x", "x", (), None, kind="fake")
