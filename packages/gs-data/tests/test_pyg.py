"""PyG-native entry points (gs_data.pyg): the split transform, the dataset class, get_idx_split."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch

import gs_data
from gs_data.pyg import NodeDataset, StructuralNodeSplit, get_idx_split
from gs_data.splits import data_fingerprint

PARTS = ("in_train", "in_valid", "in_test", "out_valid", "out_test")


@pytest.fixture(scope="module")
def synthetic():
    return gs_data.load("synthetic-default")


def _reference(data, strategy, **kw):
    from gs_splits import structural_split

    return structural_split(data.edge_index.numpy(), strategy, num_nodes=int(data.num_nodes), **kw)


@pytest.mark.parametrize("strategy", ["popularity", "locality", "density"])
@pytest.mark.parametrize("seed, sizes", [(0, (0.3, 0.1, 0.1, 0.1, 0.4)), (7, "70:30")])
def test_transform_masks_equal_structural_split(synthetic, strategy, seed, sizes):
    out = StructuralNodeSplit(strategy, sizes=sizes, seed=seed)(synthetic)
    ref = _reference(synthetic, strategy, seed=seed, sizes=sizes)
    for part in PARTS:
        mask = out[f"{part}_mask"]
        assert mask.dtype == torch.bool and mask.shape == (synthetic.num_nodes,)
        assert np.array_equal(mask.numpy(), ref.masks[part]), part
    assert np.array_equal(out.domain.numpy(), ref.domains)
    assert np.array_equal(out.split_sigma.numpy(), ref.sigma)
    assert out.split_metadata["counts"] == ref.metadata["counts"]


def test_pyg_masks_are_overwritten_with_the_id_parts_on_karate_club():
    """Issue 33: PyG code reads train_mask / val_mask / test_mask; KarateClub's own train_mask
    (4 nodes, one per class) must not survive the structural split, as with RandomNodeSplit."""
    from torch_geometric.datasets import KarateClub

    plain = KarateClub()[0]
    assert int(plain.train_mask.sum()) == 4 and "val_mask" not in plain
    data = KarateClub(transform=StructuralNodeSplit("popularity"))[0]
    for pyg, part in (("train", "in_train"), ("val", "in_valid"), ("test", "in_test")):
        assert torch.equal(data[f"{pyg}_mask"], data[f"{part}_mask"]), pyg
    assert int(data.train_mask.sum()) == data.split_metadata["counts"]["in_train"] == 10
    data.train_mask[0] = ~data.train_mask[0]  # a copy: editing one mask leaves the other
    assert not torch.equal(data.train_mask, data.in_train_mask)
    kept = KarateClub(transform=StructuralNodeSplit("popularity", masks=None))[0]
    assert torch.equal(kept.train_mask, plain.train_mask) and "val_mask" not in kept


@pytest.mark.parametrize("names", ["gs", "dgl", "pyg"])
def test_names_give_gs_dgl_or_pyg_mask_names(synthetic, names):
    """names="pyg": PyG NodePropertySplit's id_train_mask ... ood_test_mask; "dgl": DGL
    add_node_property_split's in_train_mask ... out_test_mask (gs-splits' own names)."""
    from gs_data.pyg import MASK_NAMES

    expected = {
        "pyg": ["id_train_mask", "id_val_mask", "id_test_mask", "ood_val_mask", "ood_test_mask"],
        "dgl": ["in_train_mask", "in_valid_mask", "in_test_mask", "out_valid_mask", "out_test_mask"],
    }
    expected["gs"] = expected["dgl"]
    assert list(MASK_NAMES[names]) == expected[names]
    t = StructuralNodeSplit("density", seed=2, names=names, masks=None)
    out = t(synthetic)
    ref = _reference(synthetic, "density", seed=2)
    masks = [k for k in out.keys() if k.endswith("_mask") and k != "label_mask"]
    assert sorted(masks) == sorted(expected[names]) == sorted(t.written())
    for name, part in zip(expected[names], PARTS, strict=True):
        assert np.array_equal(out[name].numpy(), ref.masks[part]), name
    assert repr(t).endswith(f"names={names!r}; writes {', '.join(expected[names])}, domain, split_sigma, "
                            "split_metadata)")
    # get_idx_split reads PyG's names too, and not the train_mask beside them
    idx = get_idx_split(StructuralNodeSplit("density", seed=2, names=names)(synthetic))
    assert list(idx) == ["train", "valid", "test", "valid_ood", "test_ood"]
    assert np.array_equal(idx["valid"].numpy(), np.flatnonzero(ref.masks["in_valid"]))


def _pyg_node_property_split(data, strategy, ratios, tol=None):
    """PyG's NodePropertySplit on ``data`` (torch seed 0 for its ties and ID shuffle) and the
    property sigma = -property it sorted by (its own property functions; networkx's PageRank
    run at ``tol`` instead of networkx's default 1e-6 when given)."""
    import networkx.algorithms
    from torch_geometric.transforms import NodePropertySplit
    from torch_geometric.utils import to_networkx

    compute = {"popularity": NodePropertySplit._compute_popularity_property,
               "locality": NodePropertySplit._compute_locality_property,
               "density": NodePropertySplit._compute_density_property}[strategy]
    with pytest.MonkeyPatch.context() as mp:
        if tol is not None:  # PyG calls networkx.algorithms.pagerank(G) at split time
            import functools

            mp.setattr(networkx.algorithms, "pagerank", functools.partial(networkx.algorithms.pagerank, tol=tol, max_iter=10_000))
        torch.manual_seed(0)
        out = NodePropertySplit(strategy, ratios)(data.clone())
        graph = to_networkx(data, to_undirected=True, remove_self_loops=True)
        sigma = compute(graph, True).double().numpy()  # ascending=True: -property
    return out, sigma


def _id_mask(d, prefix="id"):
    return (d[f"{prefix}_train_mask"] | d[f"{prefix}_val_mask"] | d[f"{prefix}_test_mask"]).numpy()


def _untied(sigma, k, delta):
    """Nodes on the same side of the ID/OOD cut (the k smallest sigma are ID) under any sigma'
    with |sigma' - sigma| <= delta everywhere, whatever the tie-breaking: sigma more than
    2 * delta below the (k+1)-th smallest value (ID), or above the k-th (OOD)."""
    s = np.sort(sigma)
    return (sigma < s[k] - 2 * delta) | (sigma > s[k - 1] + 2 * delta)


RATIOS = [0.3, 0.1, 0.1, 0.1, 0.4]  # PyG's ratios = our sizes; "50:50" of the paper


@pytest.mark.parametrize("strategy", ["popularity", "locality", "density"])
def test_id_sets_equal_pyg_node_property_split_on_untied_nodes_at_a_converged_tolerance(synthetic, strategy):
    """Our transform and PyG's NodePropertySplit (property_name = our strategy, ratios = our 5
    sizes, ascending=True) put the same nodes in-distribution, except nodes tied at the ID/OOD
    boundary, on the synthetic graph (3,008 nodes; PyG's rounded part sizes and our floored
    ones give the same ID size there, 1,504).

    PyG's networkx PageRank is run to tol 1e-12 here (its default, 1e-6 * N in L1, leaves
    errors of 1e-5: the next test). delta = the largest difference between PyG's property
    values and ours; a node is "untied" when it is on the same side of the cut under both
    whatever the tie-breaking (:func:`_untied`), and only those are compared. Only ID vs OOD
    is compared: the ID shuffle into train / valid / test uses torch's RNG in PyG, a seeded
    numpy permutation here."""
    n = synthetic.num_nodes
    ours = StructuralNodeSplit(strategy, sizes=RATIOS, seed=0, names="pyg")(synthetic)
    theirs, pyg_sigma = _pyg_node_property_split(synthetic, strategy, RATIOS, tol=1e-12)
    ours_id, theirs_id = _id_mask(ours), _id_mask(theirs)
    k = int(ours_id.sum())
    assert int(theirs_id.sum()) == k == n // 2
    sigma = ours.split_sigma.numpy()
    delta = float(np.abs(pyg_sigma - sigma).max())
    # the same property: PyG's PageRank at this tolerance agrees with ours to 1e-10; its
    # clustering coefficients are stored in float32 (3e-8 apart from the float64 ones)
    assert delta < (1e-7 if strategy == "density" else 1e-9), delta
    untied = _untied(sigma, k, delta)
    assert untied.sum() >= 0.95 * n, int(untied.sum())  # nearly every node is compared
    assert np.array_equal(ours_id[untied], theirs_id[untied])
    assert 0.45 * n < ours_id[untied].sum() <= k
    if strategy != "density":  # measured: no PageRank tie at the cut, so every node agrees;
        assert untied.all() and np.array_equal(ours_id, theirs_id)  # density: 33 tied, 6 differ


@pytest.mark.parametrize("strategy", ["popularity", "locality", "density"])
def test_pyg_node_property_split_at_its_default_tolerance_differs_only_near_the_boundary(synthetic, strategy):
    """At PyG's own networkx tolerance the two ID sets differ on a few nodes (measured on the
    synthetic graph: 10 for popularity, 76 for locality, 6 for density), every one within
    2 * delta of the ID/OOD cut (delta = the largest difference between PyG's property and
    ours: 1.4e-5 popularity, 1.0e-4 locality, 3e-8 density), where no sorting can be trusted."""
    n = synthetic.num_nodes
    ours = StructuralNodeSplit(strategy, sizes=RATIOS, seed=0, names="pyg")(synthetic)
    theirs, pyg_sigma = _pyg_node_property_split(synthetic, strategy, RATIOS)
    ours_id, theirs_id = _id_mask(ours), _id_mask(theirs)
    sigma = ours.split_sigma.numpy()
    delta = float(np.abs(pyg_sigma - sigma).max())
    assert delta < 1e-3, delta
    differ = ours_id != theirs_id
    assert not (differ & _untied(sigma, int(ours_id.sum()), delta)).any()
    assert differ.sum() <= 0.03 * n, int(differ.sum())


def test_other_seeds_give_other_masks(synthetic):
    a = StructuralNodeSplit("popularity", seed=0)(synthetic)
    b = StructuralNodeSplit("popularity", seed=1)(synthetic)
    # the OOD part follows the property; the ID shuffle into train / valid / test follows the seed
    assert torch.equal(a.out_test_mask, b.out_test_mask)
    assert not torch.equal(a.in_train_mask, b.in_train_mask)


def test_transform_records_fingerprint_and_params_and_leaves_its_input_alone(synthetic):
    t = StructuralNodeSplit("density", sizes="90:10", seed=5, num_domains=4)
    out = t(synthetic)
    meta = out.split_metadata
    assert meta["data_fingerprint"] == data_fingerprint(synthetic)  # gs-data's one fingerprint
    assert meta["transform"] == {"name": "StructuralNodeSplit", "strategy": "density", "sizes": "90:10",
                                 "seed": 5, "num_domains": 4, "domain_scope": "in_train",
                                 "masks": "pyg", "names": "gs"}
    assert meta["strategy"] == "density" and meta["seed"] == 5
    assert "cache_file" not in meta  # nothing was cached
    assert int(out.domain.max()) == 3
    assert "in_train_mask" not in synthetic and "split_metadata" not in synthetic
    # the repr says what the transform writes, PyG's train_mask / val_mask / test_mask included
    assert repr(t) == ("StructuralNodeSplit(strategy='density', sizes='90:10', seed=5, num_domains=4, "
                       "domain_scope='in_train', masks='pyg', names='gs'; writes in_train_mask, in_valid_mask, "
                       "in_test_mask, out_valid_mask, out_test_mask, train_mask=in_train_mask, "
                       "val_mask=in_valid_mask, test_mask=in_test_mask, domain, split_sigma, split_metadata)")


def test_transform_cache_is_opt_in(synthetic, tmp_path):
    t = StructuralNodeSplit("popularity", use_cache=True, cache_dir=tmp_path)
    first = t(synthetic)
    files = list((tmp_path / "splits").glob("*.npz"))
    assert len(files) == 1 and first.split_metadata["cache_file"] == str(files[0])
    assert torch.equal(t(synthetic).in_train_mask, first.in_train_mask)


@pytest.mark.parametrize(
    "kwargs, argument, accepted",
    [
        ({"strategy": "pagerank"}, "strategy", "'pagerank'; accepted: popularity, locality, density, random"),
        ({"sizes": "60:40"}, "sizes", "'50:50', '70:30', '90:10'"),
        ({"sizes": (0.5, 0.5)}, "sizes", "5 non-negative fractions"),
        ({"sizes": (0.3, 0.1, 0.1, 0.1, 0.3)}, "sizes", "sum to 0.9"),
        ({"sizes": (0.3, 0.1, 0.1, -0.1, 0.6)}, "sizes", "5 non-negative fractions"),
        ({"seed": -1}, "seed", "integer >= 0"),
        ({"seed": 1.5}, "seed", "integer >= 0"),
        ({"num_domains": 0}, "num_domains", "integer >= 1"),
        ({"domain_scope": "train"}, "domain_scope", "in_train, all"),
        ({"masks": "dgl"}, "masks", "accepted: 'pyg' (also write train_mask"),
        ({"names": "ogb"}, "names", "accepted: 'gs', 'dgl', 'pyg'"),
    ],
)
def test_bad_transform_arguments_name_the_argument_and_what_is_accepted(kwargs, argument, accepted):
    with pytest.raises(ValueError) as info:
        StructuralNodeSplit(**kwargs)
    msg = str(info.value)
    assert msg.startswith(f"{argument}:") and accepted in msg, msg


def test_transform_needs_a_strategy_name_and_a_homogeneous_graph():
    with pytest.raises(TypeError, match="strategy: expected a strategy name"):
        StructuralNodeSplit(np.arange(5.0))
    from torch_geometric.data import HeteroData

    with pytest.raises(TypeError, match="got HeteroData"):
        StructuralNodeSplit()(HeteroData())


def test_transform_inside_planetoid_on_the_real_cora_files(shared_datasets, tmp_path):
    from torch_geometric.datasets import Planetoid
    from torch_geometric.transforms import Compose, NormalizeFeatures

    shutil.copytree(shared_datasets / "planetoid" / "Cora" / "raw", tmp_path / "Cora" / "raw")
    plain = Planetoid(root=str(tmp_path), name="Cora")[0]
    transform = Compose([NormalizeFeatures(), StructuralNodeSplit("locality", seed=3)])
    ds = Planetoid(root=str(tmp_path), name="Cora", transform=transform)
    data = ds[0]
    assert data.num_nodes == 2708 and data.edge_index.shape == (2, 10556)
    ref = _reference(plain, "locality", seed=3)
    for part in PARTS:
        assert np.array_equal(data[f"{part}_mask"].numpy(), ref.masks[part]), part
    # 30 / 10 / 10 / 10 / 40 % of 2,708 nodes (each group's last part takes the remainder)
    assert [int(data[f"{p}_mask"].sum()) for p in PARTS] == [812, 270, 272, 270, 1084]
    assert data.split_metadata["data_fingerprint"] == data_fingerprint(NormalizeFeatures()(plain))
    # PyG's own masks are overwritten with the ID parts, as RandomNodeSplit does (issue 33) ...
    assert not torch.equal(data.train_mask, plain.train_mask)
    for pyg, part in (("train", "in_train"), ("val", "in_valid"), ("test", "in_test")):
        assert np.array_equal(data[f"{pyg}_mask"].numpy(), ref.masks[part]), pyg
    kept = Planetoid(root=str(tmp_path), name="Cora", transform=StructuralNodeSplit("locality", seed=3, masks=None))[0]
    assert torch.equal(kept.train_mask, plain.train_mask)  # ... unless masks=None
    idx = get_idx_split(kept)  # ... and Planetoid's are not taken for the structural split's parts
    assert np.array_equal(idx["train"].numpy(), np.flatnonzero(ref.masks["in_train"]))
    assert set(idx) == {"train", "valid", "test", "valid_ood", "test_ood"}


def test_pre_transform_inside_planetoid_is_saved_with_the_processed_data(shared_datasets, tmp_path):
    from torch_geometric.datasets import Planetoid

    shutil.copytree(shared_datasets / "planetoid" / "Cora" / "raw", tmp_path / "Cora" / "raw")
    t = StructuralNodeSplit("popularity", seed=0)
    first = Planetoid(root=str(tmp_path), name="Cora", pre_transform=t)[0]
    again = Planetoid(root=str(tmp_path), name="Cora", pre_transform=t)[0]  # read back from processed/
    for part in PARTS:
        assert torch.equal(first[f"{part}_mask"], again[f"{part}_mask"])
    assert again.split_metadata["transform"]["strategy"] == "popularity"


def test_node_dataset_loads_coraml_from_the_shared_file(shared_datasets, tmp_path, monkeypatch):
    from gs_data.splits import load_authors_split

    ds = NodeDataset(tmp_path, "CoraML", raw_root=shared_datasets,
                     pre_transform=StructuralNodeSplit("popularity", seed=0))
    assert repr(ds) == "NodeDataset('cora-ml')" and len(ds) == 1
    data = ds[0]
    ref = gs_data.load("cora-ml", root=shared_datasets, use_cache=False)
    assert torch.equal(data.edge_index, ref.edge_index) and torch.equal(data.x, ref.x)
    assert torch.equal(data.y, ref.y) and data.name == "cora-ml"
    assert (ds.num_classes, ds.num_features, data.num_nodes) == (7, 2879, 2995)  # Table 8
    assert data.provenance["paper_stats"][0]["nodes"] == 2995
    # structural-shifts paper, section 4: the OOD parts are the 50 % largest sigma in sigma
    # order, so the popularity split's Valid-Out / Test-Out are the authors' published ones
    authors = load_authors_split("cora-ml", "popularity", shared_datasets)
    for part in ("out_valid", "out_test"):
        assert np.array_equal(data[f"{part}_mask"].numpy(), authors[part]), part
    idx = ds.get_idx_split()
    assert [idx[k].numel() for k in ("train", "valid", "test", "valid_ood", "test_ood")] == [898, 299, 300, 299, 1199]
    processed = list((tmp_path / "processed" / "pyg" / "cora-ml").glob("*/data.pt"))
    assert len(processed) == 1
    # a second construction reads the processed file: no parsing, no split
    monkeypatch.setattr(gs_data, "load", lambda *a, **k: pytest.fail("reloaded the raw files"))
    again = NodeDataset(tmp_path, "cora-ml", raw_root=shared_datasets,
                        pre_transform=StructuralNodeSplit("popularity", seed=0))
    assert torch.equal(again[0].in_train_mask, data.in_train_mask)


def test_node_dataset_transform_runs_on_access_and_pre_filter_applies(tmp_path):
    ds = NodeDataset(tmp_path, "synthetic-default", transform=StructuralNodeSplit("density", seed=2))
    assert "in_train_mask" in ds[0]
    ref = _reference(ds.get(0), "density", seed=2)  # get(): the stored graph, no transform
    assert np.array_equal(ds[0].in_test_mask.numpy(), ref.masks["in_test"])
    with pytest.raises(ValueError, match="carries no split masks; expected attributes in_train_mask"):
        NodeDataset(tmp_path / "plain", "synthetic-default").get_idx_split()
    with pytest.raises(ValueError, match="pre_filter rejected the only graph of dataset 'synthetic-default'"):
        NodeDataset(tmp_path / "filtered", "synthetic-default", pre_filter=lambda d: d.num_nodes < 10)


def test_node_dataset_options_get_their_own_processed_file(tmp_path):
    plain = NodeDataset(tmp_path, "synthetic-default")
    norm = NodeDataset(tmp_path, "synthetic-default", normalize_features=True)
    files = sorted((tmp_path / "processed" / "pyg" / "synthetic-default").glob("*/data.pt"))
    assert len(files) == 2
    rows = norm[0].x.sum(1)
    assert torch.allclose(rows[rows > 0], torch.ones(int((rows > 0).sum())))
    assert not torch.equal(plain[0].x, norm[0].x)


def test_node_dataset_with_another_split_rebuilds_instead_of_keeping_the_old_one(tmp_path, monkeypatch):
    """Issue 33: a second NodeDataset on the same root with another StructuralNodeSplit as
    pre_transform silently kept the first split (PyG only warned). Each pre_transform now has
    its own processed file; going back to the first one reads it, without a warning."""
    import warnings

    first = NodeDataset(tmp_path, "synthetic-default", pre_transform=StructuralNodeSplit("popularity", seed=0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # PyG's "pre_transform differs" warning would fail here
        other = NodeDataset(tmp_path, "synthetic-default", pre_transform=StructuralNodeSplit("density", seed=0))
        assert other[0].split_metadata["transform"]["strategy"] == "density"
        ref = _reference(other[0], "density", seed=0)
        for part in PARTS:
            assert np.array_equal(other[0][f"{part}_mask"].numpy(), ref.masks[part]), part
        assert not torch.equal(other[0].out_test_mask, first[0].out_test_mask)
        seed1 = NodeDataset(tmp_path, "synthetic-default", pre_transform=StructuralNodeSplit("density", seed=1))
        assert not torch.equal(seed1[0].in_train_mask, other[0].in_train_mask)
        monkeypatch.setattr(gs_data, "load", lambda *a, **k: pytest.fail("processed the raw graph again"))
        again = NodeDataset(tmp_path, "synthetic-default", pre_transform=StructuralNodeSplit("popularity", seed=0))
        assert torch.equal(again[0].in_train_mask, first[0].in_train_mask)
    folders = sorted((tmp_path / "processed" / "pyg" / "synthetic-default").iterdir())
    assert len(folders) == 3 and all((f / "data.pt").is_file() for f in folders)


def test_node_dataset_never_creates_a_missing_raw_root(tmp_path):
    """Issue 33: a missing raw_root was created (empty) by PyG before downloading, so a later
    run took the empty folder for the shared data. Now an error names it, and it stays absent."""
    missing = tmp_path / "shared" / "datasets"
    with pytest.raises(gs_data.MissingRawFileError) as info:
        NodeDataset(tmp_path / "root", "cora-ml", raw_root=missing)
    assert f"raw_root {missing} does not exist" in str(info.value)
    assert "never creates it" in str(info.value) and "structural-shifts/cora-ml/data.mat" in str(info.value)
    assert not (tmp_path / "shared").exists()
    # a dataset without raw files does not need it, and does not create it either
    assert NodeDataset(tmp_path / "root", "synthetic-default", raw_root=missing)[0].num_nodes == 3008
    assert not (tmp_path / "shared").exists()


def test_node_dataset_bad_name_and_missing_file(tmp_path):
    with pytest.raises(ValueError, match="unknown dataset name 'cora-mll'; accepted names: .*cora-ml"):
        NodeDataset(tmp_path, "cora-mll")
    with pytest.raises(gs_data.MissingRawFileError) as info:
        NodeDataset(tmp_path, "cora-ml", download=False)
    assert str(tmp_path / "structural-shifts" / "cora-ml" / "data.mat") in str(info.value)


def test_get_idx_split_equals_the_mask_nonzeros_and_parts_are_disjoint(synthetic):
    from gs_splits import scientific_split

    split = _reference(synthetic, "locality", seed=1)
    from_split = get_idx_split(split)
    from_data = get_idx_split(StructuralNodeSplit("locality", seed=1)(synthetic))
    from_mapping = get_idx_split({f"{k}_mask": torch.from_numpy(v) for k, v in split.masks.items()})
    names = {"train": "in_train", "valid": "in_valid", "test": "in_test",
             "valid_ood": "out_valid", "test_ood": "out_test"}
    assert list(from_split) == list(names)
    for key, part in names.items():
        expected = np.flatnonzero(split.masks[part])
        for idx in (from_split, from_data, from_mapping):
            assert idx[key].dtype == torch.long and np.array_equal(idx[key].numpy(), expected)
    seen = torch.cat(list(from_split.values()))
    assert seen.numel() == torch.unique(seen).numel() == synthetic.num_nodes  # disjoint, covering
    # a scientific split: iid / ood parts under the same OGB keys, its pools under their names
    domains = np.arange(200) % 10
    sci = scientific_split(domains, source=[0, 1, 2, 3, 4], info_level="no_info", seed=0)
    idx = get_idx_split(sci)
    assert {"train", "valid", "test", "valid_ood", "test_ood"} <= set(idx)
    assert np.array_equal(idx["test_ood"].numpy(), np.flatnonzero(sci.masks["ood_test"]))


def test_get_idx_split_rejects_what_is_not_a_split():
    with pytest.raises(TypeError, match="expected a gs_splits.Split, a Data with <part>_mask"):
        get_idx_split([1, 2, 3])
    with pytest.raises(ValueError, match="mask 'in_train' must be a 1-D boolean mask, got dtype torch.int64"):
        get_idx_split({"in_train": torch.tensor([0, 1, 1])})
    with pytest.raises(ValueError, match="mask 'in_test' has 2 entries, the others 3"):
        get_idx_split({"in_train": np.ones(3, bool), "in_test": np.ones(2, bool)})
    with pytest.raises(ValueError, match="two masks map to the key 'train'"):
        get_idx_split({"in_train": np.ones(3, bool), "train": np.zeros(3, bool)})


def test_readme_snippet_runs(shared_datasets, tmp_path, monkeypatch, capsys):
    """The "PyG users" snippet on the real data (the block marked "needs data" in the README,
    which docs/site/readme_blocks.py leaves out) runs as written, shared folder substituted."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    marked = text.index("<!-- not run: needs data", text.index("## PyG users"))
    start = text.index("```python", marked) + len("```python")
    code = text[start:text.index("```", start)]
    assert 'shared = "../shared/datasets"' in code
    monkeypatch.setattr("tempfile.mkdtemp", lambda: str(tmp_path))
    exec(compile(code.replace('"../shared/datasets"', repr(str(shared_datasets))), "README", "exec"), {})
    out = capsys.readouterr().out
    assert "NodeDataset('cora-ml') 2995 {'train': 898, 'valid': 299, 'test': 300" in out
