"""knn_graph against brute-force / cKDTree references (ties, small clouds, unsorted batches, blocks),
and its torch_cluster path against the fallback (real module when installed, else a fake)."""

from __future__ import annotations

import hypothesis.strategies as st
import numpy as np
import pytest
import torch
from hypothesis import given, settings

import gs_models.knn as knn_module
from gs_models.knn import knn_graph


def brute_force_knn(
    pos: np.ndarray, k: int, batch: np.ndarray, loop: bool
) -> list[tuple[int, int]]:
    """Reference: for every point (in index order) the k nearest points of its cloud, by (distance, index)."""
    edges = []
    for i in range(len(pos)):
        cands = []
        for j in range(len(pos)):
            if batch[j] != batch[i] or (j == i and not loop):
                continue
            d = float(sum((pos[i, c] - pos[j, c]) ** 2 for c in range(pos.shape[1])))
            cands.append((d, j))
        cands.sort()
        edges += [(j, i) for _, j in cands[:k]]
    return edges


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(0, 40),
    k=st.integers(1, 8),
    num_clouds=st.integers(1, 6),
    grid=st.booleans(),
    loop=st.booleans(),
    dim=st.sampled_from([1, 2, 3]),
    max_elements=st.sampled_from([7, 64, 2**24]),
)
def test_knn_equals_brute_force(seed, n, k, num_clouds, grid, loop, dim, max_elements):
    rng = np.random.default_rng(seed)
    # integer grid coordinates produce many exact ties; unsorted batch ids, some clouds tiny or empty
    pos = (
        rng.integers(0, 3, size=(n, dim)).astype(np.float64) if grid else rng.normal(size=(n, dim))
    )
    batch = rng.integers(0, num_clouds, size=n)
    got = knn_graph(
        torch.from_numpy(pos), k, torch.from_numpy(batch), loop=loop, max_elements=max_elements
    )
    expected = brute_force_knn(pos, k, batch, loop)
    assert [tuple(e) for e in got.T.tolist()] == expected


def test_knn_float32_and_matmul_path_agree_with_reference():
    rng = np.random.default_rng(0)
    pos = rng.normal(size=(50, 16))
    batch = np.repeat([0, 1], 25)
    got = knn_graph(
        torch.from_numpy(pos).float(), 4, torch.from_numpy(batch)
    )  # dim 16: |a|^2+|b|^2-2ab
    expected = brute_force_knn(pos, 4, batch, False)
    assert sorted(map(tuple, got.T.tolist())) == sorted(expected)


def test_fewer_points_than_k():
    pos = torch.tensor([[0.0, 0.0], [1.0, 0.0], [5.0, 5.0]])
    batch = torch.tensor([0, 0, 1])
    ei = knn_graph(pos, 5, batch)
    assert ei.tolist() == [[1, 0], [0, 1]]  # the single point of cloud 1 gets no neighbour
    assert knn_graph(pos, 5, batch, loop=True).size(1) == 2 * 2 + 1


def test_knn_bad_input():
    with pytest.raises(ValueError, match="k must be an int >= 1"):
        knn_graph(torch.randn(4, 3), 0)
    with pytest.raises(ValueError, match="pos must be a float tensor"):
        knn_graph(torch.ones(4, dtype=torch.long), 2)
    with pytest.raises(ValueError, match="batch must be an integer tensor of shape"):
        knn_graph(torch.randn(4, 3), 2, torch.zeros(3, dtype=torch.long))
    with pytest.raises(ValueError, match="finite"):
        knn_graph(torch.tensor([[0.0, float("nan")]]), 1)


# ------------------------------------------------------------ torch_cluster backend and fallback
HAS_TORCH_CLUSTER = knn_module.has_torch_cluster()


def _random_clouds(seed: int, n: int, num_clouds: int, dim: int = 3):
    """Random float coordinates (no ties) in unsorted clouds, some of them tiny."""
    rng = np.random.default_rng(seed)
    pos = rng.normal(size=(n, dim))
    batch = rng.integers(0, num_clouds, size=n)
    batch[:2] = num_clouds + 1  # a two-point cloud (fewer points than k), and id num_clouds unused
    return pos, batch


def kdtree_knn(pos: np.ndarray, k: int, batch: np.ndarray, loop: bool) -> list[tuple[int, int]]:
    """Reference with scipy's cKDTree, one tree per cloud: edges (neighbour, centre), centres in
    index order, neighbours by (distance, index); no edge between clouds."""
    from scipy.spatial import cKDTree

    nbrs: dict[int, list[int]] = {}
    for b in np.unique(batch):
        idx = np.flatnonzero(batch == b)
        kk = min(len(idx), k + (0 if loop else 1))
        dist, loc = cKDTree(pos[idx]).query(pos[idx], k=kk)
        dist, loc = dist.reshape(len(idx), kk), loc.reshape(len(idx), kk)
        for row, i in enumerate(idx):
            cands = sorted((d, int(idx[j])) for d, j in zip(dist[row], loc[row], strict=True) if loop or idx[j] != i)
            nbrs[int(i)] = [j for _, j in cands[:k]]
    return [(j, i) for i in range(len(pos)) for j in nbrs[i]]


@pytest.mark.parametrize("loop", [False, True])
@pytest.mark.parametrize("k", [1, 6, 16])
def test_fallback_equals_kdtree_reference(k, loop):
    pos, batch = _random_clouds(seed=k, n=700, num_clouds=7)
    got = knn_graph(torch.from_numpy(pos), k, torch.from_numpy(batch), loop=loop, backend="torch")
    assert [tuple(e) for e in got.T.tolist()] == kdtree_knn(pos, k, batch, loop)
    src, dst = got
    assert bool((torch.from_numpy(batch)[src] == torch.from_numpy(batch)[dst]).all())  # no cross-cloud edge
    if loop:  # every point is its own nearest neighbour (distance 0), listed first
        first = torch.ones_like(dst, dtype=torch.bool)
        first[1:] = dst[1:] != dst[:-1]
        assert torch.equal(src[first], dst[first]) and int(first.sum()) == len(pos)
    else:
        assert bool((src != dst).all())
    # float32 and a small memory budget (several blocks) give the same graph
    got32 = knn_graph(torch.from_numpy(pos).float(), k, torch.from_numpy(batch), loop=loop,
                      backend="torch", max_elements=5000)
    assert torch.equal(got32, got)


@pytest.mark.skipif(not HAS_TORCH_CLUSTER, reason="torch_cluster is not installed (optional, PyG wheels); "
                    "the fake-module test below checks the adapter instead")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("loop", [False, True])
def test_torch_cluster_and_fallback_agree(dtype, loop):
    pos, batch = _random_clouds(seed=3, n=900, num_clouds=9)
    p, b = torch.from_numpy(pos).to(dtype), torch.from_numpy(batch)
    for k in (1, 5, 20):
        ours = knn_graph(p, k, b, loop=loop, backend="torch")
        theirs = knn_graph(p, k, b, loop=loop, backend="torch_cluster")
        assert torch.equal(theirs, ours)
        assert torch.equal(knn_graph(p, k, b, loop=loop), theirs)  # auto picks torch_cluster
    assert torch.equal(knn_graph(p, 4, backend="torch_cluster"), knn_graph(p, 4, backend="torch"))


class _FakeTorchCluster:
    """Brute-force stand-in with torch_cluster's contract: sorted ``batch`` required, ``k``
    nearest per point of its cloud including itself (loop=True), edges in no particular order."""

    def __init__(self):
        self.calls = 0

    def knn_graph(self, x, k, batch=None, loop=False, flow="source_to_target"):
        self.calls += 1
        assert loop and flow == "source_to_target"
        if batch is None:
            batch = torch.zeros(x.size(0), dtype=torch.long)
        assert bool((batch[1:] >= batch[:-1]).all()), "torch_cluster needs a sorted batch"
        src, dst = [], []
        for b in torch.unique(batch):
            idx = (batch == b).nonzero().flatten()
            d = torch.cdist(x[idx], x[idx])
            nn = torch.topk(d, min(k, idx.numel()), largest=False).indices
            src.append(idx[nn].flatten())
            dst.append(idx.repeat_interleave(nn.size(1)))
        src, dst = torch.cat(src), torch.cat(dst)
        shuffle = torch.randperm(src.numel(), generator=torch.Generator().manual_seed(0))
        return torch.stack([src[shuffle], dst[shuffle]])


@pytest.mark.parametrize("loop", [False, True])
def test_torch_cluster_adapter_with_a_fake_module(monkeypatch, loop):
    fake = _FakeTorchCluster()
    monkeypatch.setattr(knn_module, "_torch_cluster", fake)
    assert knn_module.has_torch_cluster()
    pos, batch = _random_clouds(seed=11, n=300, num_clouds=5)
    p, b = torch.from_numpy(pos), torch.from_numpy(batch)
    for k in (1, 4, 12):
        ours = knn_graph(p, k, b, loop=loop, backend="torch")
        assert torch.equal(knn_graph(p, k, b, loop=loop), ours)  # auto -> the (fake) torch_cluster
        assert torch.equal(knn_graph(p.float(), k, b, loop=loop, backend="torch_cluster"),
                           knn_graph(p.float(), k, b, loop=loop, backend="torch"))
    assert fake.calls == 6
    assert knn_graph(p[:0], 3, b[:0]).shape == (2, 0)
    assert torch.equal(knn_graph(p, 3), knn_graph(p, 3, backend="torch"))


def test_backend_choice(monkeypatch):
    monkeypatch.setattr(knn_module, "_torch_cluster", None)
    pos = torch.randn(20, 3)
    assert not knn_module.has_torch_cluster()
    assert torch.equal(knn_graph(pos, 3), knn_graph(pos, 3, backend="torch"))  # auto -> fallback
    with pytest.raises(ImportError, match="torch_cluster is not importable"):
        knn_graph(pos, 3, backend="torch_cluster")
    with pytest.raises(ValueError, match="backend must be one of"):
        knn_graph(pos, 3, backend="faiss")
