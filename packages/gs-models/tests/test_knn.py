"""knn_graph against a brute-force reference (ties, small clouds, unsorted batches, blocks)."""

from __future__ import annotations

import hypothesis.strategies as st
import numpy as np
import pytest
import torch
from hypothesis import given, settings

from gs_models import knn_graph


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
