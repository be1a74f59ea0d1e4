"""Point-cloud backbones: E(3) invariance of EGNN, permutation invariance, training."""

from __future__ import annotations

import hypothesis.strategies as st
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings

from gs_models import EGNNLayer, build_model, knn_graph

BACKBONES = ["egnn", "dgcnn", "pointtransformer"]


def _random_orthogonal(gen: torch.Generator, reflect: bool) -> torch.Tensor:
    q, r = torch.linalg.qr(torch.randn(3, 3, generator=gen, dtype=torch.float64))
    q = q * torch.sign(torch.diagonal(r))
    if (torch.det(q) < 0) != reflect:
        q[:, 0] = -q[:, 0]
    return q


def _clouds(gen, sizes, categorical):
    pos = torch.randn(sum(sizes), 3, generator=gen, dtype=torch.float64)
    batch = torch.repeat_interleave(torch.arange(len(sizes)), torch.tensor(sizes))
    if categorical:
        x = torch.randint(0, 4, (pos.size(0),), generator=gen)
    else:
        x = torch.ones(pos.size(0), 1, dtype=torch.float64)
    return x, pos, batch


@settings(max_examples=8, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    reflect=st.booleans(),
    categorical=st.booleans(),
    sizes=st.lists(st.integers(1, 12), min_size=1, max_size=3),
)
def test_egnn_invariant_to_rotations_translations_reflections(seed, reflect, categorical, sizes):
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = (
        build_model(
            "gess-egnn", 4 if categorical else 1, 2, categorical=categorical, hidden_channels=16
        )
        .double()
        .eval()
    )
    x, pos, batch = _clouds(gen, sizes, categorical)
    q = _random_orthogonal(gen, reflect)
    t = torch.randn(1, 3, generator=gen, dtype=torch.float64) * 5
    g, out = model(x, pos, batch)
    g2, out2 = model(x, pos @ q.T + t, batch)
    torch.testing.assert_close(out2, out, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(g2, g, atol=1e-5, rtol=1e-5)


def test_egnn_layer_coordinates_are_equivariant(float64):
    gen = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    layer = EGNNLayer(8)
    h = torch.randn(10, 8, generator=gen)
    pos = torch.randn(10, 3, generator=gen)
    ei = knn_graph(pos, 3)
    q = _random_orthogonal(gen, reflect=True)
    t = torch.randn(1, 3, generator=gen)
    h1, p1 = layer(h, pos, ei)
    h2, p2 = layer(h, pos @ q.T + t, ei)
    torch.testing.assert_close(h2, h1)
    torch.testing.assert_close(p2, p1 @ q.T + t)


@pytest.mark.parametrize("name", BACKBONES)
@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), sizes=st.lists(st.integers(1, 14), min_size=1, max_size=3))
def test_backbones_invariant_to_point_permutations(name, seed, sizes):
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = build_model(name, 1, 3, hidden_channels=16).double().eval()
    x, pos, batch = _clouds(gen, sizes, categorical=False)
    perm = torch.randperm(pos.size(0), generator=gen)
    g, out = model(x, pos, batch)
    g2, out2 = model(x[perm], pos[perm], batch[perm])
    torch.testing.assert_close(out2, out, atol=1e-8, rtol=1e-8)
    torch.testing.assert_close(g2, g, atol=1e-8, rtol=1e-8)


@pytest.mark.parametrize("name", ["gess-egnn", "gess-dgcnn", "gess-pointtransformer"])
def test_backbone_trains(name, tiny_clouds):
    x, pos, batch, y = tiny_clouds
    torch.manual_seed(0)
    model = build_model(name, 1, 2)
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)

    def loss_fn():
        return F.cross_entropy(model(x, pos, batch)[1], y)

    model.eval()
    with torch.no_grad():
        before = float(loss_fn())
    for _ in range(40):
        model.train()
        opt.zero_grad()
        loss_fn().backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        after = float(loss_fn())
    assert after < 0.7 * before, (before, after)


def test_graph_embeddings_are_sum_pooled_and_head_input():
    torch.manual_seed(0)
    model = build_model("gess-pointtransformer", 1, 2).eval()
    pos = torch.randn(9, 3)
    x = torch.ones(9, 1)
    batch = torch.tensor([0] * 4 + [1] * 5)
    g, out = model(x, pos, batch)
    h = model.point_embeddings(x, pos, batch)
    torch.testing.assert_close(g, torch.stack([h[:4].sum(0), h[4:].sum(0)]))
    torch.testing.assert_close(model.head(g), out)
    g1, _ = model(x[:4], pos[:4])  # batch=None: one cloud
    torch.testing.assert_close(g1, g[:1], atol=1e-5, rtol=1e-5)
