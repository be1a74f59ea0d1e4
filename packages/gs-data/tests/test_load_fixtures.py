"""Datasets not available offline load from small fixtures in their real raw formats."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import gs_data

FIXTURE_DATASETS = [
    # structural-shifts .mat
    "pubmed", "amazon-computer", "amazon-photo", "coauthor-cs", "coauthor-physics",
    # Planetoid raw layout
    "planetoid-pubmed",
    # gnn-benchmark npz (PyG Amazon / Coauthor)
    "shchur-amazon-computers", "shchur-amazon-photo", "shchur-coauthor-cs", "shchur-coauthor-physics",
    # OGB raw CSV
    "ogbn-arxiv", "ogbn-products",
    # UDAGCN text format
    "udagcn-acmv9", "dblpv8", "citationv2",
]


@pytest.mark.parametrize("name", FIXTURE_DATASETS)
def test_fixture_loads_to_the_encoded_graph(name, fixtures_root, fixture_graph):
    data = gs_data.load(name, root=fixtures_root, download=False)
    n = fixture_graph["num_nodes"]
    assert data.num_nodes == n
    edges = {tuple(e) for e in data.edge_index.t().tolist()}
    expected = fixture_graph["edges"] | {(b, a) for a, b in fixture_graph["edges"]}
    assert edges == expected  # duplicates, reversed duplicates and the self-loop removed
    assert data.edge_index.shape[1] == 32
    assert torch.equal(data.x, torch.from_numpy(fixture_graph["features"]))
    y = fixture_graph["labels"].copy()
    if name == "citationv2":
        y[5] = -1  # the fixture's label file leaves node 5 empty
    assert torch.equal(data.y, torch.from_numpy(y))
    assert torch.equal(data.label_mask, data.y >= 0)
    assert data.provenance["dataset"] == gs_data.dataset_info(name).name


def test_planetoid_test_rows_follow_test_index(fixtures_root, fixture_graph):
    # the fixture writes tx rows in the unsorted order of test.index (10, 8, 11, 9)
    data = gs_data.load("planetoid-pubmed", root=fixtures_root, download=False)
    for node in (8, 9, 10, 11):
        assert torch.equal(data.x[node], torch.from_numpy(fixture_graph["features"][node]))


def test_ogb_extras(fixtures_root):
    arxiv = gs_data.load("ogb-arxiv", root=fixtures_root, download=False)
    assert arxiv.node_year.tolist() == list(range(2008, 2020))
    assert arxiv.train_mask.sum() == 6 and arxiv.val_mask.sum() == 3 and arxiv.test_mask.sum() == 3
    assert not bool((arxiv.train_mask & arxiv.test_mask).any())
    assert arxiv.provenance["raw_directed_edges"] == 19
    products = gs_data.load("OGB-Products", root=fixtures_root, download=False)
    assert "node_year" not in products and products.train_mask.sum() == 6


def test_names_case_insensitive_and_unknown_name():
    assert gs_data.dataset_info("CoraML").name == "cora-ml"
    assert gs_data.dataset_info("Cora_ML").name == "cora-ml"
    assert gs_data.dataset_info("PLANETOID-CiteSeer").name == "planetoid-citeseer"
    assert gs_data.dataset_info("ogb-arxiv").name == "ogbn-arxiv"
    with pytest.raises(ValueError, match="unknown dataset name 'nope'.*cora-ml.*planetoid-cora"):
        gs_data.load("nope")
    with pytest.raises(TypeError, match="name must be a str"):
        gs_data.load(3)
    names = gs_data.available_datasets()
    for required in ("cora-ml", "citeseer", "planetoid-cora", "planetoid-citeseer", "acmv9", "citationv1",
                     "dblpv7", "synthetic-default", "ogbn-arxiv", "ogbn-products", "pubmed"):
        assert required in names


def test_self_loops_and_sparse_options(fixtures_root):
    data = gs_data.load("pubmed", root=fixtures_root, download=False, self_loops=True, sparse_x=True)
    loops = data.edge_index[0] == data.edge_index[1]
    assert int(loops.sum()) == 12
    assert data.x.is_sparse and torch.equal(data.x.to_dense(), gs_data.load("pubmed", root=fixtures_root).x)


def test_missing_label_fill_value(fixtures_root):
    data = gs_data.load("citationv2", root=fixtures_root, download=False, missing_label=0)
    assert int(data.y[5]) == 0 and not bool(data.label_mask[5])
    with pytest.raises(TypeError, match="missing_label"):
        gs_data.load("citationv2", root=fixtures_root, missing_label=0.5)


def test_loading_fixtures_writes_nothing_into_root(fixtures_root):
    before = sorted(p.name for p in fixtures_root.rglob("*") if p.is_file())
    gs_data.load("ogbn-arxiv", root=fixtures_root, download=False)
    after = sorted(p.name for p in fixtures_root.rglob("*") if p.is_file())
    assert before == after
    assert np.all([not n.endswith(".tmp") for n in after])
