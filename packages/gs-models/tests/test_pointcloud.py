"""Point-cloud backbones: invariances, the GeSS code's layers, cached kNN graphs, training."""

from __future__ import annotations

import hypothesis.strategies as st
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings

from gs_models import build_model
from gs_models.knn import knn_graph
from gs_models.pointcloud import EGNNLayer, edge_geometry

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
    edge_features=st.sampled_from(["distance", "none"]),
)
def test_egnn_invariant_to_rotations_translations_reflections(seed, reflect, categorical, sizes,
                                                              edge_features):
    """Without the edge direction (``edge_features`` "distance" or "none") EGNN is
    E(3)-invariant; GeSS's default direction feature keeps translation invariance only
    (:func:`test_gess_edge_direction_is_translation_but_not_rotation_invariant`)."""
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = (
        build_model(
            "gess-egnn", 4 if categorical else 1, 2, categorical=categorical, hidden_channels=16,
            edge_features=edge_features,
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


def test_gess_edge_direction_is_translation_but_not_rotation_invariant():
    gen = torch.Generator().manual_seed(1)
    torch.manual_seed(1)
    model = build_model("gess-egnn", 1, 2, hidden_channels=16).double().eval()
    assert model.config.edge_features == "distance_direction"
    x, pos, batch = _clouds(gen, [12, 9], categorical=False)
    q = _random_orthogonal(gen, reflect=False)
    _, out = model(x, pos, batch)
    _, moved = model(x, pos + torch.tensor([[3.0, -2.0, 7.0]], dtype=torch.float64), batch)
    torch.testing.assert_close(moved, out, atol=1e-8, rtol=1e-8)
    _, turned = model(x, pos @ q.T, batch)
    assert not torch.allclose(turned, out, atol=1e-6)


def test_egnn_layer_coordinates_are_equivariant(float64):
    gen = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    layer = EGNNLayer(8, update_pos=True)
    h = torch.randn(10, 8, generator=gen)
    pos = torch.randn(10, 3, generator=gen)
    ei = knn_graph(pos, 3)
    q = _random_orthogonal(gen, reflect=True)
    t = torch.randn(1, 3, generator=gen)
    h1, p1 = layer.forward_with_pos(h, pos, ei)
    h2, p2 = layer.forward_with_pos(h, pos @ q.T + t, ei)
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
def test_backbone_trains(name, tiny_clouds, train_steps):
    x, pos, batch, y = tiny_clouds
    torch.manual_seed(0)
    model = build_model(name, 1, 2)
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)

    def loss_fn():
        return F.cross_entropy(model(x, pos, batch)[1], y)

    # 100 steps, then the head's batch norm (GeSS's classifier) gets statistics recomputed with
    # the final weights (train_steps): running averages lag the weights on 8 clouds
    before, after = train_steps(model, opt, loss_fn, 100)
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


# ----------------------------------------------------- point weights and given features
# (the hooks by which GeSS's DIR and LRI act on embeddings / messages, never on atom types)
@pytest.mark.parametrize("name", BACKBONES)
def test_unit_point_weights_and_given_features_change_nothing(name):
    gen = torch.Generator().manual_seed(3)
    x, pos, batch = _clouds(gen, [5, 7], categorical=True)
    torch.manual_seed(0)
    m = build_model(name, 4, 2, categorical=True, k=3).double().eval()
    g, out = m(x, pos, batch)
    g1, out1 = m(x, pos, batch, point_weight=torch.ones(pos.size(0), dtype=torch.float64))
    # equal up to rounding: with weights EGNN's messages take autograd's path, without them
    # the fused one, which sums in blocks
    torch.testing.assert_close(out, out1, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(g, g1, rtol=1e-12, atol=1e-12)
    h0 = m._embed(x, pos)  # the embedding of the atom types, given back as features
    _, out2 = m(None, pos, batch, features=h0)
    assert torch.equal(out, out2)
    assert m.point_embeddings(x, pos, batch).shape == (12, m.config.hidden_channels)


@pytest.mark.parametrize("name", ["egnn", "dgcnn"])
def test_zero_point_weight_cuts_every_message_of_that_point(name):
    """``w_p = 0``: no message leaves or reaches point ``p``, so the other points'
    representations do not depend on ``p``'s features. Not Point Transformer: there the
    weight multiplies the message after the neighbourhood softmax (as GeSS's code), so ``p``
    still enters the others' attention normalisation."""
    gen = torch.Generator().manual_seed(4)
    x, pos, batch = _clouds(gen, [9], categorical=True)
    torch.manual_seed(1)
    m = build_model(name, 4, 1, categorical=True, k=4).double().eval()
    w = torch.ones(9, dtype=torch.float64)
    w[2] = 0.0
    x2 = x.clone()
    x2[2] = (x[2] + 1) % 4
    h = m.point_embeddings(x, pos, batch, point_weight=w)
    h2 = m.point_embeddings(x2, pos, batch, point_weight=w)
    others = torch.arange(9) != 2
    assert torch.allclose(h[others], h2[others], atol=1e-12)
    # without the weight, the change of point 2 does reach its neighbours
    assert not torch.allclose(m.point_embeddings(x, pos, batch)[others],
                              m.point_embeddings(x2, pos, batch)[others])


@pytest.mark.parametrize("name", BACKBONES)
def test_point_weights_get_gradients_and_bad_inputs_are_named(name):
    gen = torch.Generator().manual_seed(5)
    x, pos, batch = _clouds(gen, [6, 6], categorical=True)
    m = build_model(name, 4, 1, categorical=True, k=3).double()
    w = torch.rand(12, dtype=torch.float64, requires_grad=True)
    m(x, pos, batch, point_weight=w)[1].sum().backward()
    assert w.grad is not None and float(w.grad.abs().sum()) > 0
    with pytest.raises(ValueError, match="point_weight must be a float tensor of shape \\(12,\\)"):
        m(x, pos, batch, point_weight=torch.ones(5, dtype=torch.float64))
    with pytest.raises(ValueError, match="features must be a float tensor of shape \\(12, "):
        m(None, pos, batch, features=torch.ones(12, 3, dtype=torch.float64))


@pytest.mark.parametrize("name", ["gess-egnn", "gess-dgcnn", "gess-pointtransformer"])
def test_head_is_the_gess_classifier_mlp(name):
    """GeSS ``BaseModel.classifier = MLP([h, 2h, h, out])``: batch norm, ReLU and dropout after
    each hidden layer (the batch norm normalises the sum-pooled embeddings)."""
    from torch_geometric.nn import BatchNorm

    model = build_model(name, 1, 3)
    h = model.config.hidden_channels
    kinds = [type(m) for m in model.head]
    assert kinds == [torch.nn.Linear, BatchNorm, torch.nn.ReLU, torch.nn.Dropout,
                     torch.nn.Linear, BatchNorm, torch.nn.ReLU, torch.nn.Dropout, torch.nn.Linear]
    lin = [m for m in model.head if isinstance(m, torch.nn.Linear)]
    assert [(m.in_features, m.out_features) for m in lin] == [(h, 2 * h), (2 * h, h), (h, 3)]
    # a training batch holding one cloud (the last batch of an epoch) still trains
    model.train()
    _, out = model(torch.ones(7, 1), torch.randn(7, 3), torch.zeros(7, dtype=torch.long))
    out.sum().backward()
    assert out.shape == (1, 3)


def test_egnn_keeps_the_coordinates_by_default_as_the_gess_code():
    """GeSS's ``E_GCL_mask`` drops the coordinate MLP: positions are never updated."""
    model = build_model("gess-egnn", 1, 2)
    assert not model.config.update_pos
    assert all(layer.phi_x is None for layer in model.layers)
    moving = build_model("gess-egnn", 1, 2, update_pos=True)
    assert all(layer.phi_x is not None for layer in moving.layers)


@pytest.mark.parametrize("self_loops", [True, False])
def test_coordinate_knn_graph_counts_the_point_itself_by_default(self_loops):
    """GeSS ``calc_geo_feat``: ``knn_graph(pos, k, batch, loop=True)``."""
    model = build_model("gess-egnn", 1, 2, k=3, self_loops=self_loops)
    gen = torch.Generator().manual_seed(3)
    pos = torch.randn(20, 3, generator=gen)
    batch = torch.tensor([0] * 9 + [1] * 11)
    ei = model.knn(pos, batch)
    assert bool((ei[0] == ei[1]).any()) == self_loops
    assert torch.equal(ei, knn_graph(pos, 3, batch, loop=self_loops))
    assert torch.equal(torch.bincount(ei[1], minlength=20), torch.full((20,), 3))



@pytest.mark.parametrize("name", BACKBONES)
def test_gradients_repeat_bit_for_bit_on_a_multithreaded_cpu(name, backward_ops):
    """A seeded GeSS training repeats exactly (the gs-bench TL rows rely on it: loading the
    shared ERM pre-training must give what training it again gives). The backward of a
    gather ``h[index]`` (``IndexBackward0``: ``index_put_`` with accumulation) sums repeated
    rows in a thread-dependent order on a multi-threaded CPU, visibly so on a loaded
    machine; the backbones gather with ``index_select``, whose backward does not. The
    autograd check catches the gather on any machine; the repeat check is the symptom."""
    threads = torch.get_num_threads()
    torch.set_num_threads(max(2, threads))
    try:
        gen = torch.Generator().manual_seed(0)
        sizes = [100] * 8
        pos = torch.randn(sum(sizes), 3, generator=gen)
        batch = torch.repeat_interleave(torch.arange(len(sizes)), torch.tensor(sizes))
        x = torch.randn(pos.size(0), 4, generator=gen)
        y = torch.randint(0, 2, (len(sizes),), generator=gen)
        torch.manual_seed(0)
        model = build_model(name, 4, 2).eval()  # eval: no dropout draw between the passes
        grads = []
        for _ in range(4):
            model.zero_grad(set_to_none=True)
            loss = F.cross_entropy(model(x, pos, batch)[1], y)
            assert "IndexBackward0" not in backward_ops(loss)
            loss.backward()
            grads.append(torch.cat([p.grad.reshape(-1) for p in model.parameters() if p.grad is not None]))
        assert all(torch.equal(g, grads[0]) for g in grads[1:])
    finally:
        torch.set_num_threads(threads)


# ------------------------------------------------- the GeSS code's layers, written out naively
def _naive_linear(lin_weight, lin_bias, parts):
    return torch.cat(parts, dim=-1) @ lin_weight.T + lin_bias


def _clouds_with_graph(seed=0, sizes=(9, 7), k=3):
    gen = torch.Generator().manual_seed(seed)
    x, pos, batch = _clouds(gen, list(sizes), categorical=False)
    return x, pos, batch, knn_graph(pos, k, batch, loop=True)


def test_egnn_layer_is_gess_e_gcl_mask_written_with_concatenations():
    """GeSS ``E_GCL_mask``: ``edge_mlp(cat[h[row], h[col], radial, edge_attr])`` summed at
    ``row = edge_index[0]``, ``act(norm(node_mlp(cat[h, agg])))``; ``edge_attr`` is the
    encoded ``[dist, direction]``. Our layer computes the first linear layer per point and
    folds the edge encoder into it: the same numbers."""
    torch.manual_seed(0)
    model = build_model("gess-egnn", 1, 2, hidden_channels=8, k=3).double().eval()
    x, pos, batch, ei = _clouds_with_graph()
    layer, enc = model.layers[0], model.edge_encoder
    h = torch.randn(pos.size(0), 8, dtype=torch.float64)
    row, col = ei
    geom = edge_geometry(pos, ei)
    rel = pos[row] - pos[col]
    torch.testing.assert_close(geom[:, :1], rel.norm(dim=-1, keepdim=True))
    edge_attr = enc(geom)
    radial = (rel**2).sum(-1, keepdim=True)
    lin = layer.edge_in
    m = _naive_linear(lin.weight, lin.bias, [h[row], h[col], radial, edge_attr])
    m = layer.phi_e_rest(m)
    agg = torch.zeros_like(h).index_add_(0, row, m)
    want = layer.act(layer.norm(layer.phi_h(torch.cat([h, agg], -1))))
    torch.testing.assert_close(layer(h, pos, ei, geom, enc), want)


def test_dgcnn_layer_is_gess_edgeconv_written_with_concatenations():
    """GeSS ``EdgeConv``: ``nn(cat[x_i, x_j - x_i, edge_attr])`` averaged at the target ``i``,
    then ``act(norm(post_nn(.)))``; the graph is the static coordinate kNN graph."""
    torch.manual_seed(0)
    model = build_model("gess-dgcnn", 1, 2, hidden_channels=8, k=3).double().eval()
    x, pos, batch, ei = _clouds_with_graph(1)
    conv, enc = model.layers[0], model.edge_encoder
    h = torch.randn(pos.size(0), 8, dtype=torch.float64)
    j, i = ei
    geom = edge_geometry(pos, ei)
    pre = _naive_linear(conv.first.weight, conv.first.bias, [h[i], h[j] - h[i], enc(geom)])
    msg = conv.rest(pre)
    counts = torch.bincount(i, minlength=h.size(0)).clamp(min=1).unsqueeze(-1)
    out = torch.zeros(h.size(0), 8, dtype=torch.float64).index_add_(0, i, msg) / counts
    want = conv.act(conv.norm(conv.post(out)))
    torch.testing.assert_close(conv(h, pos, ei, geom, enc, None), want)
    # static: the graph of every layer is the coordinate graph (no feature-space kNN)
    h2 = model.point_embeddings(x, pos, batch)
    torch.testing.assert_close(h2, model.point_embeddings(x, pos, batch, edge_index=ei))


def test_point_transformer_block_is_gess_transformerblock_written_out():
    """GeSS ``TransformerBlock``: ``lin_in`` + ReLU, ``alpha = softmax_j(lin_dst(x)_i -
    lin_src(x)_j + pos_nn(p_i - p_j))`` per channel, message ``alpha * (lin(x)_j + delta +
    edge_attr)`` summed at ``i``, ``lin_out`` + ReLU."""
    torch.manual_seed(0)
    model = build_model("gess-pointtransformer", 1, 2, hidden_channels=8, k=3).double().eval()
    x, pos, batch, ei = _clouds_with_graph(2)
    blk, enc = model.layers[0], model.edge_encoder
    h = torch.randn(pos.size(0), 8, dtype=torch.float64)
    j, i = ei
    xi = torch.relu(blk.lin_in(h))
    delta = blk.pos_nn(pos[i] - pos[j])
    logits = blk.lin_dst(xi)[i] - blk.lin_src(xi)[j] + delta
    out = torch.zeros_like(h)
    for node in range(h.size(0)):
        sel = i == node
        a = torch.softmax(logits[sel], dim=0)
        out[node] = (a * (blk.lin(xi)[j[sel]] + delta[sel] + enc(edge_geometry(pos, ei))[sel])).sum(0)
    want = torch.relu(blk.lin_out(out))
    torch.testing.assert_close(blk(h, pos, ei, edge_geometry(pos, ei), enc, None), want)


@pytest.mark.parametrize("name", BACKBONES)
def test_a_cached_knn_graph_gives_what_the_model_builds(name):
    torch.manual_seed(0)
    model = build_model(name, 1, 2, hidden_channels=8).double().eval()
    gen = torch.Generator().manual_seed(7)
    x, pos, batch = _clouds(gen, [11, 6, 8], categorical=False)
    ei = knn_graph(pos, model.config.k, batch, loop=True)
    g, out = model(x, pos, batch)
    g2, out2 = model(x, pos, batch, edge_index=ei)
    assert torch.equal(out, out2) and torch.equal(g, g2)
    with pytest.raises(ValueError, match="edge_index must be an integer tensor of shape \\(2, num_edges\\)"):
        model(x, pos, batch, edge_index=ei.float())
    with pytest.raises(ValueError, match="edge_index refers to points outside"):
        model(x, pos, batch, edge_index=ei + 100)


def test_egnn_sums_messages_at_the_source_of_each_knn_edge_as_the_gess_code():
    """A point that no other point counts among its nearest receives only its self loop:
    its representation after one layer does not depend on its neighbours' features."""
    torch.manual_seed(0)
    model = build_model("gess-egnn", 4, 1, categorical=True, hidden_channels=8, k=2,
                        num_layers=1).double().eval()
    pos = torch.tensor([[0.0, 0, 0], [0.1, 0, 0], [0.2, 0, 0], [5.0, 0, 0]], dtype=torch.float64)
    x = torch.tensor([0, 1, 2, 3])
    ei = knn_graph(pos, 2, loop=True)
    assert not bool(((ei[0] == 3) & (ei[1] != 3)).any())  # nobody's neighbour but its own
    h = model.point_embeddings(x, pos)
    h2 = model.point_embeddings(torch.tensor([1, 2, 0, 3]), pos)
    torch.testing.assert_close(h[3], h2[3])
    assert not torch.allclose(h[:3], h2[:3])


# ------------------------------------------------------- issue 29: the cheaper edge linear layer
def test_repeat_count_recognises_only_a_knn_centre_index():
    from gs_models.pointcloud import _repeat_count

    assert _repeat_count(torch.arange(4).repeat_interleave(3), 4) == 3
    assert _repeat_count(torch.arange(4).repeat_interleave(3).int(), 4) == 3
    assert _repeat_count(torch.arange(4).repeat(3), 4) == 0  # the right counts, another order
    assert _repeat_count(torch.tensor([0, 0, 1, 1, 1, 2]), 3) == 0  # unequal counts
    assert _repeat_count(torch.arange(4).repeat_interleave(3), 5) == 0  # a point without edges
    assert _repeat_count(torch.zeros(0, dtype=torch.long), 4) == 0


def test_split_linear_broadcast_and_gather_paths_give_the_same_values_and_gradients():
    """A kNN graph whose clouds all have k points takes the broadcast path (each centre's k
    edges consecutive); the same edges in another order take the gather path. Both must be
    the naive ``Linear(cat[h_j, h_i, d2, enc(e)])`` and give the same gradients."""
    from gs_models.pointcloud import _repeat_count, _SplitLinear

    torch.manual_seed(0)
    x, pos, batch, ei = _clouds_with_graph(sizes=(9, 7), k=3)
    assert _repeat_count(ei[1], pos.size(0)) == 3
    perm = torch.randperm(ei.size(1))
    lin, enc = _SplitLinear(8, 1, 8, 8).double(), torch.nn.Linear(4, 8).double()
    h = torch.randn(pos.size(0), 8, dtype=torch.float64, requires_grad=True)
    geom = edge_geometry(pos.double(), ei)
    d2 = geom[:, :1] ** 2
    outs, grads = [], []
    for order in (torch.arange(ei.size(1)), perm):
        j, i = ei[0][order], ei[1][order]
        out = lin(h, h, j, i, d2[order], geom[order], enc)
        naive = _naive_linear(lin.weight, lin.bias, [h[j], h[i], d2[order], enc(geom[order])])
        torch.testing.assert_close(out, naive)
        lin.zero_grad(), enc.zero_grad()
        h.grad = None
        back = out[torch.argsort(order)]  # the edges in the graph's order
        (back.tanh() * torch.linspace(-1, 1, back.numel(), dtype=back.dtype).view_as(back)).sum().backward()
        outs.append(back)
        grads.append([h.grad.clone(), lin.weight.grad.clone(), lin.bias.grad.clone(), enc.weight.grad.clone()])
    assert _repeat_count(ei[1][perm], pos.size(0)) == 0
    torch.testing.assert_close(outs[0], outs[1])
    for a, b in zip(grads[0], grads[1], strict=True):
        torch.testing.assert_close(a, b)


def test_egnn_on_clouds_smaller_than_k_takes_the_gather_path_and_matches_the_naive_layer():
    """A cloud with fewer points than k gives its points fewer edges: the centre index is not
    regular, and the layer must still be GeSS's ``E_GCL_mask``."""
    from gs_models.pointcloud import _repeat_count

    torch.manual_seed(0)
    model = build_model("gess-egnn", 1, 2, hidden_channels=8, k=4).double().eval()
    x, pos, batch, ei = _clouds_with_graph(sizes=(9, 2), k=4)
    assert _repeat_count(ei[1], pos.size(0)) == 0
    layer, enc = model.layers[0], model.edge_encoder
    h = torch.randn(pos.size(0), 8, dtype=torch.float64)
    row, col = ei
    geom = edge_geometry(pos, ei)
    radial = ((pos[row] - pos[col]) ** 2).sum(-1, keepdim=True)
    m = layer.phi_e_rest(_naive_linear(layer.edge_in.weight, layer.edge_in.bias,
                                       [h[row], h[col], radial, enc(geom)]))
    agg = torch.zeros_like(h).index_add_(0, row, m)
    want = layer.act(layer.norm(layer.phi_h(torch.cat([h, agg], -1))))
    torch.testing.assert_close(layer(h, pos, ei, geom, enc), want)


def test_keep_freed_memory_applies_once_and_honours_the_opt_out(monkeypatch):
    import gs_models.runtime as rt

    monkeypatch.setattr(rt, "_done", None)
    monkeypatch.setenv("GS_KEEP_FREED_MEMORY", "0")
    assert rt.keep_freed_memory() is False
    monkeypatch.setattr(rt, "_done", None)
    monkeypatch.delenv("GS_KEEP_FREED_MEMORY")
    first = rt.keep_freed_memory()
    import sys

    if sys.platform.startswith("linux") and "glibc" in " ".join(__import__("platform").libc_ver()):
        assert first is True
    assert rt.keep_freed_memory() is first  # once per process: the second call changes nothing


def test_the_backbones_dropout_keeps_each_entry_with_probability_1_minus_p_scaled():
    """``_dropout`` is inverted dropout as ``F.dropout``: entries 0 or h / (1 - p), kept at rate
    1 - p (binomial 5-sigma band over 400,000 entries), the identity in eval mode, and gradients
    flow through the kept entries only."""
    from gs_models.pointcloud import _dropout

    torch.manual_seed(0)
    h = torch.rand(4000, 100) + 0.5
    for p in (0.2, 0.5):
        out = _dropout(h, p, True)
        kept = out != 0
        torch.testing.assert_close(out[kept], h[kept] / (1 - p))
        rate, n = kept.float().mean().item(), h.numel()
        assert abs(rate - (1 - p)) < 5 * ((p * (1 - p)) / n) ** 0.5
    assert _dropout(h, 0.2, False) is h
    assert _dropout(h, 0.0, True) is h
    assert not _dropout(h, 1.0, True).any()
    x = h.clone().requires_grad_(True)
    out = _dropout(x, 0.3, True)
    out.sum().backward()
    torch.testing.assert_close(x.grad, (out != 0).float() / 0.7)


@pytest.mark.parametrize("sizes,k,block", [((9, 7, 12), 3, 7), ((9, 2, 12), 4, 5), ((30, 25), 5, 4096)])
def test_fused_egnn_messages_give_autograds_values_and_gradients(monkeypatch, sizes, k, block):
    """The fused message pass (``_FusedEGNNMessages``: blocks of edges, the backward written
    out) against the same layer computed by autograd from the concatenated ``Linear(cat[h_j,
    h_i, d2, enc(e)])`` of the GeSS code, in float64: the layer's output and the gradients of
    every parameter and of ``h``. Blocks of 7 and 5 edges cut the kNN centres' runs and the
    arrays at odd places; the (9, 2) clouds with k = 4 take the gather path (a cloud smaller
    than k), the others the broadcast path."""
    import gs_models.pointcloud as pc

    monkeypatch.setattr(pc, "EGNN_FUSED_BLOCK", block)
    torch.manual_seed(0)
    model = build_model("gess-egnn", 1, 2, hidden_channels=8, k=k).double().train()
    x, pos, batch, ei = _clouds_with_graph(sizes=sizes, k=k)
    layer, enc = model.layers[0], model.edge_encoder
    row, col = ei
    geom = edge_geometry(pos, ei)
    radial = ((pos[row] - pos[col]) ** 2).sum(-1, keepdim=True)
    assert layer._fusable(radial, geom, None)
    weights = torch.linspace(-1, 1, pos.size(0) * 8, dtype=torch.float64).view(-1, 8)
    results = []
    for fused in (True, False):
        h = torch.randn(pos.size(0), 8, dtype=torch.float64, generator=torch.Generator().manual_seed(1),
                        requires_grad=True)
        model.zero_grad(set_to_none=True)
        if fused:
            out = layer(h, pos, ei, geom, enc)
        else:  # the naive layer, through autograd
            m = layer.phi_e_rest(_naive_linear(layer.edge_in.weight, layer.edge_in.bias,
                                               [h[row], h[col], radial, enc(geom)]))
            agg = torch.zeros_like(h).index_add_(0, row, m)
            out = layer.act(layer.norm(layer.phi_h(torch.cat([h, agg], -1))))
        (out.tanh() * weights).sum().backward()
        grads = [h.grad] + [p.grad if p.grad is not None else torch.zeros_like(p)
                            for p in [*layer.parameters(), *enc.parameters()]]
        results.append((out.detach(), grads))
    torch.testing.assert_close(results[0][0], results[1][0])
    for a, b in zip(results[0][1], results[1][1], strict=True):
        torch.testing.assert_close(a, b)


def test_fused_egnn_messages_are_used_only_where_they_compute_the_layer(monkeypatch):
    """Message weights (DIR / LRI ``point_weight``), the coordinate update and edge inputs
    that need a gradient go through autograd's path; ``fused = False`` turns the fused pass
    off. Either way the backbone gives the same outputs."""
    import gs_models.pointcloud as pc

    monkeypatch.setattr(pc, "EGNN_FUSED_BLOCK", 7)  # several blocks through the shared buffers
    torch.manual_seed(0)
    model = build_model("gess-egnn", 1, 2, hidden_channels=8, k=3).double().eval()
    x, pos, batch, ei = _clouds_with_graph(sizes=(9, 7), k=3)
    layer = model.layers[0]
    d2 = torch.ones(ei.size(1), 1, dtype=torch.float64)
    assert layer._fusable(d2, None, None)
    assert not layer._fusable(d2, None, torch.ones_like(d2))
    assert not layer._fusable(d2.requires_grad_(), None, None)
    w = torch.rand(pos.size(0), dtype=torch.float64)
    outs = []
    for fused in (True, False):
        for lay in model.layers:
            lay.fused = fused
        with torch.no_grad():  # evaluation: the fused pass reuses block-sized buffers
            plain = model(x, pos, batch)[1]
        outs.append((model(x, pos, batch)[1], model(x, pos, batch, point_weight=w)[1], plain))
    for a, b in zip(outs[0], outs[1], strict=True):
        torch.testing.assert_close(a, b)
    torch.testing.assert_close(outs[0][2], outs[0][0])
    moving = build_model("gess-egnn", 1, 2, hidden_channels=8, k=3, update_pos=True)
    assert not moving.layers[0]._fusable(torch.ones(3, 1), None, None)


def test_beam_frame_edge_features_are_the_direction_in_the_centres_spherical_frame():
    """``edge_features="distance_direction_beam"`` (a Track probe, not GeSS): the distance and
    the direction's components along r, theta and phi of the centre point; the backbone is then
    invariant to rotations about the z axis, not to other rotations."""
    pos = torch.tensor([[1.0, 0.0, 0.0], [1.0, 0.0, 0.5], [1.0, 0.3, 0.0], [0.0, 2.0, 0.0]],
                       dtype=torch.float64)
    ei = torch.tensor([[1, 2, 3], [0, 0, 0]])  # j -> i, all into the point on the x axis
    geom = edge_geometry(pos, ei, "distance_direction_beam")
    # at (1, 0, 0): r = x, phi = y, theta = phi x r = -z
    torch.testing.assert_close(geom[0], torch.tensor([0.5, 0.0, -1.0, 0.0], dtype=torch.float64), atol=1e-5, rtol=0)
    torch.testing.assert_close(geom[1], torch.tensor([0.3, 0.0, 0.0, 1.0], dtype=torch.float64), atol=1e-5, rtol=0)
    d = 5.0**0.5
    torch.testing.assert_close(geom[2], torch.tensor([d, -1 / d, 0.0, 2 / d], dtype=torch.float64), atol=1e-5, rtol=0)

    gen = torch.Generator().manual_seed(0)
    x, p, batch = _clouds(gen, [12, 9], categorical=False)
    torch.manual_seed(0)
    model = build_model("gess-egnn", 1, 2, k=3, edge_features="distance_direction_beam").double().eval()
    a = 0.7
    rz = torch.tensor([[torch.cos(torch.tensor(a)), -torch.sin(torch.tensor(a)), 0.0],
                       [torch.sin(torch.tensor(a)), torch.cos(torch.tensor(a)), 0.0], [0.0, 0.0, 1.0]],
                      dtype=torch.float64)
    out = model(x, p, batch)[1]
    torch.testing.assert_close(model(x, p @ rz.T, batch)[1], out)
    rx = torch.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]], dtype=torch.float64)
    assert not torch.allclose(model(x, p @ rx.T, batch)[1], out)
    with pytest.raises(ValueError, match="pos_dim"):
        build_model("gess-egnn", 1, 2, pos_dim=2, edge_features="distance_direction_beam")


def test_absolute_beam_frame_features_are_invariant_to_reflections_about_the_beam_axis():
    """``edge_features="distance_direction_beam_abs"`` (the gess ci profile's Track setting,
    not GeSS): the beam-frame columns in absolute value, so a cloud and its mirror image
    ``y -> -y`` (phi -> -phi) or ``z -> -z`` (theta -> pi - theta) give the same outputs; the
    plain beam frame does not, and rotations about x still change them."""
    pos = torch.tensor([[1.0, 0.0, 0.0], [1.0, 0.0, 0.5], [1.0, 0.3, 0.0], [0.0, 2.0, 0.0]],
                       dtype=torch.float64)
    ei = torch.tensor([[1, 2, 3], [0, 0, 0]])
    d = 5.0**0.5  # the worked example of the beam-frame test, in absolute value
    torch.testing.assert_close(edge_geometry(pos, ei, "distance_direction_beam_abs"),
                               torch.tensor([[0.5, 0.0, 1.0, 0.0], [0.3, 0.0, 0.0, 1.0], [d, 1 / d, 0.0, 2 / d]],
                                            dtype=torch.float64), atol=1e-5, rtol=0)
    gen = torch.Generator().manual_seed(1)
    x, p, batch = _clouds(gen, [12, 9], categorical=False)
    outs = {}
    for kind in ("distance_direction_beam", "distance_direction_beam_abs"):
        torch.manual_seed(0)
        model = build_model("gess-egnn", 1, 2, k=3, edge_features=kind).double().eval()
        outs[kind] = [model(x, p * torch.tensor(m, dtype=torch.float64), batch)[1]
                      for m in ([1.0, 1.0, 1.0], [1.0, -1.0, 1.0], [1.0, 1.0, -1.0])]
        rx = torch.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]], dtype=torch.float64)
        outs[kind].append(model(x, p @ rx.T, batch)[1])
    a = outs["distance_direction_beam_abs"]
    torch.testing.assert_close(a[1], a[0])
    torch.testing.assert_close(a[2], a[0])
    assert not torch.allclose(a[3], a[0])
    b = outs["distance_direction_beam"]
    assert not torch.allclose(b[1], b[0]) and not torch.allclose(b[2], b[0])
    with pytest.raises(ValueError, match="pos_dim"):
        build_model("gess-egnn", 1, 2, pos_dim=2, edge_features="distance_direction_beam_abs")


@pytest.mark.parametrize("pool", ["sum", "mean", "max"])
def test_pooling_choice_gives_that_reduction_of_each_clouds_points(pool):
    """``pool`` (GeSS: sum; mean / max are Track probes): the graph embedding is that
    reduction of the point representations of each cloud; anything else is refused."""
    gen = torch.Generator().manual_seed(0)
    x, pos, batch = _clouds(gen, [6, 9, 4], categorical=False)
    torch.manual_seed(0)
    model = build_model("gess-egnn", 1, 2, k=3, pool=pool).double().eval()
    g, _ = model(x, pos, batch)
    h = model.point_embeddings(x, pos, batch)
    for c in range(3):
        rows = h[batch == c]
        want = {"sum": rows.sum(0), "mean": rows.mean(0), "max": rows.max(0).values}[pool]
        torch.testing.assert_close(g[c], want)
    with pytest.raises(ValueError, match="pool"):
        build_model("gess-egnn", 1, 2, pool="median")


def test_configs_load_without_torch():
    """``gs_models.configs`` (and so its ``EDGE_FEATURES``, which gs-bench's gess suite checks
    its ``track_edge_features`` against when a suite is loaded) imports no torch."""
    import subprocess
    import sys

    code = "import sys, gs_models.configs; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_point_transformer_edge_mlp_delta_follows_the_edge_features():
    """``pt_delta="edge_mlp"`` (not GeSS; issue 29 probe): Point Transformer's positional term
    is an MLP of the edge features, so the outputs have the edge features' symmetries. With
    the beam frame in absolute value a mirror image y -> -y gives the same outputs, which
    GeSS's ``pos_nn(p_i - p_j)`` does not; a rotation about x changes both."""
    gen = torch.Generator().manual_seed(2)
    x, p, batch = _clouds(gen, [12, 9], categorical=False)
    outs = {}
    for delta in ("position", "edge_mlp"):
        torch.manual_seed(0)
        model = build_model("gess-pointtransformer", 1, 2, k=3, edge_features="distance_direction_beam_abs",
                            pt_delta=delta).double().eval()
        mirror = torch.tensor([1.0, -1.0, 1.0], dtype=torch.float64)
        rx = torch.tensor([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]], dtype=torch.float64)
        outs[delta] = [model(x, q, batch)[1] for q in (p, p * mirror, p @ rx.T)]
    e = outs["edge_mlp"]
    torch.testing.assert_close(e[1], e[0])
    assert not torch.allclose(e[2], e[0])
    g = outs["position"]
    assert not torch.allclose(g[1], g[0])
    # the MLP reads the edge features: 2 layers, edge_dim inputs; GeSS's term is one linear map of p
    m = build_model("gess-pointtransformer", 1, 2, k=3, edge_features="distance_direction_beam_abs",
                    pt_delta="edge_mlp")
    assert isinstance(m.layers[0].pos_nn, torch.nn.Sequential) and m.layers[0].pos_nn[0].in_features == 4
    assert isinstance(build_model("gess-pointtransformer", 1, 2).layers[0].pos_nn, torch.nn.Linear)
    with pytest.raises(ValueError, match="pt_delta"):
        build_model("gess-pointtransformer", 1, 2, pt_delta="attention")
    with pytest.raises(ValueError, match="needs edge features"):
        build_model("gess-pointtransformer", 1, 2, edge_features="none", pt_delta="edge_mlp")


def test_point_transformer_block_norm_removes_the_constant_of_all_ones_features():
    """``pt_norm`` (not GeSS; the gess ci profile's Track setting, issue 29): a norm between each
    block's ``lin_out`` and its ReLU. With all-ones point features (GeSS's Track input) the first
    block's pre-activation is a per-channel constant plus a small geometric term, the reason
    ci-size Point Transformer does not learn; batch norm makes every channel zero-mean,
    unit-variance over the points. ``None`` keeps GeSS's block, with no norm module at all."""
    gen = torch.Generator().manual_seed(3)
    _, p, batch = _clouds(gen, [40, 30], categorical=False)
    x = torch.ones(p.size(0), 1)
    pre = {}
    for norm in (None, "batch"):
        torch.manual_seed(0)
        model = build_model("gess-pointtransformer", 1, 2, k=5, pt_norm=norm).train()
        block = model.layers[0]
        assert isinstance(block.norm, torch.nn.Identity) == (norm is None)
        hook = block.norm.register_forward_hook(lambda m, i, o, n=norm: pre.__setitem__(n, o.detach()))
        model(x, p.float(), batch)
        hook.remove()
    raw, normed = pre[None], pre["batch"]
    # GeSS's block: the constant dominates the spread over points in most channels
    assert float((raw.mean(0).abs() > raw.std(0)).float().mean()) > 0.5
    torch.testing.assert_close(normed.mean(0), torch.zeros(normed.size(1)), atol=1e-5, rtol=0)
    torch.testing.assert_close(normed.std(0, unbiased=False), torch.ones(normed.size(1)), atol=0.02, rtol=0)  # BN eps
    # the default is GeSS's block: same parameters, same outputs as pt_norm=None spelled out
    torch.manual_seed(0)
    a = build_model("gess-pointtransformer", 1, 2, k=5).eval()
    torch.manual_seed(0)
    b = build_model("gess-pointtransformer", 1, 2, k=5, pt_norm=None).eval()
    torch.testing.assert_close(a(x, p.float(), batch)[1], b(x, p.float(), batch)[1])
    assert a.config.pt_norm is None
    with pytest.raises(ValueError, match="pt_norm"):
        build_model("gess-pointtransformer", 1, 2, pt_norm="group")
