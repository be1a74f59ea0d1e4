"""attach_split / make_split (with its on-disk cache) and the edgewise split helpers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import gs_data
from gs_data import splits as splits_mod


@pytest.fixture(scope="module")
def data():
    return gs_data.load("synthetic-default", use_cache=False)


def test_attach_split_from_gs_splits(data):
    from gs_splits import structural_split

    split = structural_split(data.edge_index.numpy(), "popularity", seed=0, num_nodes=data.num_nodes)
    out = gs_data.attach_split(data, split)
    assert out is not data and "in_train_mask" not in data
    for part in ("in_train", "in_valid", "in_test", "out_valid", "out_test"):
        m = out[f"{part}_mask"]
        assert m.dtype == torch.bool and m.shape == (data.num_nodes,)
        assert np.array_equal(m.numpy(), split.masks[part])
    assert torch.equal(out.domain, torch.from_numpy(split.domains))
    total = sum(out[f"{p}_mask"].long() for p in ("in_train", "in_valid", "in_test", "out_valid", "out_test"))
    assert torch.all(total == 1)


def test_attach_split_validates(data):
    with pytest.raises(ValueError, match="in_train.*nodes"):
        gs_data.attach_split(data, {"in_train": np.ones(5, dtype=bool)})
    with pytest.raises(TypeError, match="boolean"):
        gs_data.attach_split(data, {"in_train": np.ones(data.num_nodes, dtype=int)})
    with pytest.raises(TypeError, match="Split"):
        gs_data.attach_split(data, 42)


def test_make_split_is_cached_by_key(data, tmp_path, monkeypatch):
    import gs_splits

    calls = []
    real = gs_splits.structural_split

    def counting(*a, **k):
        calls.append(k.get("seed"))
        return real(*a, **k)

    monkeypatch.setattr(gs_splits, "structural_split", counting)
    a = gs_data.make_split(data, "density", seed=3, cache_dir=tmp_path)
    b = gs_data.make_split(data, "density", seed=3, cache_dir=tmp_path)
    assert calls == [3]  # second call read the cache
    assert torch.equal(a.in_test_mask, b.in_test_mask) and torch.equal(a.domain, b.domain)
    assert b.split_metadata["cache_file"].startswith(str(tmp_path))
    gs_data.make_split(data, "density", seed=4, cache_dir=tmp_path)
    gs_data.make_split(data, "locality", seed=3, cache_dir=tmp_path)
    gs_data.make_split(data, "density", seed=3, sizes="70:30", cache_dir=tmp_path)
    assert calls == [3, 4, 3, 3]
    assert len(list((tmp_path / "splits").glob("*.npz"))) == 4
    # a different graph (one edge removed) has another fingerprint, hence another cache entry
    other = data.clone()
    other.edge_index = other.edge_index[:, 2:]
    assert splits_mod.data_fingerprint(other) != splits_mod.data_fingerprint(data)
    gs_data.make_split(other, "density", seed=3, cache_dir=tmp_path)
    assert len(calls) == 5


def test_make_split_rejects_bad_input(data, tmp_path):
    with pytest.raises(TypeError, match="strategy"):
        gs_data.make_split(data, 3, cache_dir=tmp_path)
    with pytest.raises(TypeError, match="seed"):
        gs_data.make_split(data, "density", seed=np.random.default_rng(0), cache_dir=tmp_path)


def test_edgewise_generator_format_roundtrip(tmp_path):
    y = np.repeat(np.arange(4), [100, 60, 41, 20])
    y = np.concatenate([y, [-1, -1]])
    a = gs_data.generate_edgewise_splits(y, seed=5)
    b = gs_data.generate_edgewise_splits(y, seed=5)
    c = gs_data.generate_edgewise_splits(y, seed=6)
    assert len(a) == 5
    for s1, s2 in zip(a, b, strict=True):
        assert np.array_equal(s1.test_indices, s2.test_indices)
    assert not np.array_equal(a[0].test_indices, c[0].test_indices)
    s = a[0]
    obs = np.concatenate(s.k_fold_indices)
    assert np.intersect1d(obs, s.test_indices).size == 0
    assert np.all(y[obs] >= 0) and np.all(y[s.test_indices] >= 0)
    for cls, n_c in enumerate([100, 60, 41, 20]):
        n_obs = int(np.floor(0.15 * n_c))
        assert (y[obs] == cls).sum() == n_obs
        assert (y[s.test_indices] == cls).sum() == int(np.floor(0.85 * (n_c - n_obs)))
    sizes = [f.size for f in s.k_fold_indices]
    assert max(sizes) - min(sizes) <= 1
    # write in the paper's format and read back with the loader
    folder = tmp_path / "edgewise-splits" / "Cora"
    for i, sp_ in enumerate(a):
        gs_data.save_edgewise_split(sp_, folder / f"cora_split_{i}.npz")
    back = gs_data.load_edgewise_splits("planetoid-cora", tmp_path)
    for s1, s2 in zip(a, back, strict=True):
        assert np.array_equal(s1.test_indices, s2.test_indices)
        assert all(np.array_equal(f1, f2) for f1, f2 in zip(s1.k_fold_indices, s2.k_fold_indices, strict=True))


def test_edgewise_masks_and_errors(tmp_path):
    d = gs_data.load("synthetic-default")
    s = gs_data.generate_edgewise_splits(d.y, num_splits=1, seed=0)[0]
    out = gs_data.edgewise_masks(d, s, fold=1)
    assert int(out.val_mask.sum()) == s.k_fold_indices[1].size
    assert int(out.train_mask.sum()) == s.k_fold_indices[0].size + s.k_fold_indices[2].size
    assert not bool((out.train_mask & out.test_mask).any())
    with pytest.raises(ValueError, match="fold"):
        s.fold(3)
    with pytest.raises(ValueError, match="edgewise splits exist"):
        gs_data.load_edgewise_splits("amazon", tmp_path)
    with pytest.raises(gs_data.MissingRawFileError, match="citeseer_split_0.npz"):
        gs_data.load_edgewise_splits("citeseer", tmp_path)
    (tmp_path / "edgewise-splits" / "Citeseer").mkdir(parents=True)
    (tmp_path / "edgewise-splits" / "Citeseer" / "citeseer_split_0.npz").write_bytes(b"PK\x03\x04broken")
    with pytest.raises(gs_data.CorruptRawFileError, match="citeseer_split_0.npz"):
        gs_data.load_edgewise_splits("citeseer", tmp_path, num_splits=1)


def test_a_split_file_of_another_graph_is_rejected_naming_the_file(tmp_path):
    """Bad input: an edgewise split written for a bigger graph (ids out of range), for a graph
    with more selected nodes than this one has, or with overlapping parts."""
    d = gs_data.load("synthetic-default")
    n = d.num_nodes
    big = gs_data.generate_edgewise_splits(np.arange(3 * n) % 3, num_splits=1, seed=0)[0]
    folder = tmp_path / "edgewise-splits" / "Cora"
    gs_data.save_edgewise_split(big, folder / "cora_split_0.npz")
    loaded = gs_data.load_edgewise_splits("cora", tmp_path, num_splits=1)[0]
    assert loaded.source.endswith("cora_split_0.npz")
    with pytest.raises(ValueError, match=r"cora_split_0\.npz.*(selects|outside)"):
        gs_data.edgewise_masks(d, loaded, fold=0)
    # ids in range but two parts share nodes
    ok = gs_data.generate_edgewise_splits(d.y, num_splits=1, seed=0)[0]
    dup = gs_data.EdgewiseSplit(ok.test_indices, (ok.k_fold_indices[0], ok.k_fold_indices[0], ok.k_fold_indices[2]),
                                source="dup.npz")
    with pytest.raises(ValueError, match=r"dup\.npz: some nodes appear twice"):
        gs_data.check_edgewise_split(dup, n)
    # ids out of range with fewer nodes than the graph
    far = gs_data.EdgewiseSplit(np.array([0, n + 5]), (np.array([1]), np.array([2]), np.array([3])), source="far.npz")
    with pytest.raises(ValueError, match=rf"far\.npz: test_indices holds node ids in \[0, {n + 5}\] outside"):
        gs_data.check_edgewise_split(far, n)
    gs_data.check_edgewise_split(ok, n)  # a split of this graph passes


def test_row_normalize_matches_pyg_and_rows_sum_to_one():
    import scipy.sparse as sp
    from torch_geometric.data import Data
    from torch_geometric.transforms import NormalizeFeatures

    rng = np.random.default_rng(0)
    x = (rng.random((50, 30)) < 0.1) * rng.integers(1, 4, (50, 30))  # count features
    x[:, 0] += 1  # every row non-zero ...
    x[3] = 0  # ... except this one, which stays zero
    out = gs_data.row_normalize(x)
    sums = out.sum(1)
    assert np.allclose(np.delete(sums, 3), 1.0, atol=1e-6) and sums[3] == 0
    ref = NormalizeFeatures()(Data(x=torch.tensor(x, dtype=torch.float32))).x.numpy()
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-7)
    sparse = gs_data.row_normalize(sp.csr_matrix(x))
    assert sp.issparse(sparse)
    np.testing.assert_allclose(sparse.toarray(), out, rtol=1e-6)
    with pytest.raises(ValueError, match="non-negative"):
        gs_data.row_normalize(-np.ones((2, 2)))


def test_load_with_normalize_features(shared_datasets):
    raw = gs_data.load("planetoid-cora", root=shared_datasets, missing_label=0)
    norm = gs_data.load("planetoid-cora", root=shared_datasets, missing_label=0, normalize_features=True)
    s = norm.x.sum(1)
    nonzero = raw.x.sum(1) > 0
    torch.testing.assert_close(s[nonzero], torch.ones(int(nonzero.sum())))
    assert norm.provenance["normalize_features"] is True
    assert bool(((norm.x > 0) == (raw.x > 0)).all())  # same support, rescaled rows
