"""Node-level GNNs: equivariance, training, mean-field edge marginals, mini-batches."""

from __future__ import annotations

import hypothesis.strategies as st
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from torch_geometric.data import Data

from gs_models import build_model
from gs_models.sampling import TorchNeighborSampler, neighbor_loader, predict_in_batches
from gs_models.structured import mean_field_edge_marginals

NODE_MODELS = ["mlp", "gcn", "sage", "gat", "gin"]
NODE_PRESETS = [
    "structural-shifts-base",
    "structural-shifts-mod",
    "edgewise-gcn",
    "edgewise-gat",
    "lebed-gin",
]


@pytest.mark.parametrize("name", NODE_MODELS + NODE_PRESETS)
@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(3, 12))
def test_node_outputs_equivariant_to_relabelling(name, seed, n):
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = build_model(name, 4, 3, hidden_channels=16 if "gat" not in name else 16).double().eval()
    x = torch.randn(n, 4, generator=gen, dtype=torch.float64)
    edge_index = torch.randint(0, n, (2, 3 * n), generator=gen)
    perm = torch.randperm(n, generator=gen)  # new node k is old node perm[k]
    inv = torch.empty_like(perm)
    inv[perm] = torch.arange(n)
    emb, out = model(x, edge_index)
    emb_p, out_p = model(x[perm], inv[edge_index])
    torch.testing.assert_close(out_p, out[perm], atol=1e-10, rtol=1e-9)
    torch.testing.assert_close(emb_p, emb[perm], atol=1e-10, rtol=1e-9)


@pytest.mark.parametrize("name", NODE_MODELS + NODE_PRESETS)
def test_node_model_trains(name, tiny_graph):
    x, edge_index, y, train_mask = tiny_graph
    torch.manual_seed(0)
    model = (
        build_model(name, x.size(1), 2, hidden_channels=16 if name in NODE_MODELS else None)
        if name in NODE_MODELS
        else build_model(name, x.size(1), 2)
    )
    opt = torch.optim.Adam(model.parameters(), lr=0.01)

    def loss_fn() -> torch.Tensor:
        return F.cross_entropy(model(x, edge_index)[1][train_mask], y[train_mask])

    model.eval()
    with torch.no_grad():
        before = float(loss_fn())
    for _ in range(30):
        model.train()
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        after = float(loss_fn())
    assert after < 0.7 * before, (before, after)


def test_embeddings_are_input_of_linear_head(tiny_graph):
    x, edge_index, _, _ = tiny_graph
    model = build_model("structural-shifts-base", x.size(1), 2).eval()
    emb, logits = model(x, edge_index)
    torch.testing.assert_close(model.head(emb), logits)
    conv_head = build_model("edgewise-gcn", x.size(1), 2).eval()
    emb, logits = conv_head(x, edge_index)
    torch.testing.assert_close(conv_head.head(emb, edge_index), logits)
    assert emb.shape == (x.size(0), 64)


def test_mean_field_edge_marginals_paper_example():
    """Edgewise paper, appendix A: chain 1-2-3, p = (0.55, 0.8, 0.7) of label 'b'."""
    p = torch.tensor([0.55, 0.8, 0.7])
    probs = torch.stack([1 - p, p], dim=1)
    chain = torch.tensor([[0, 1], [1, 2]])
    m = mean_field_edge_marginals(probs, chain)
    assert m.shape == (2, 2, 2)
    torch.testing.assert_close(m.sum((1, 2)), torch.ones(2))
    # confidence of edge (1,2) and (2,3) predicted (b, b): 0.55*0.8 and 0.8*0.7; their mean is 1/2 (eq. 14)
    conf = m.flatten(1).max(1).values
    torch.testing.assert_close(conf, torch.tensor([0.44, 0.56]))
    assert abs(float(conf.mean()) - 0.5) < 1e-7
    # marginals are the node probabilities
    torch.testing.assert_close(m.sum(2), probs[chain[0]])
    torch.testing.assert_close(m.sum(1), probs[chain[1]])


def _loader_graph(n=60, seed=3):
    gen = torch.Generator().manual_seed(seed)
    edge_index = torch.randint(0, n, (2, 4 * n), generator=gen)
    x = torch.randn(n, 5, generator=gen)
    y = (x[:, 0] > 0).long()
    return Data(x=x, edge_index=edge_index, y=y, num_nodes=n)


def test_torch_sampler_respects_fanout_and_graph():
    data = _loader_graph()
    sampler = TorchNeighborSampler(data, [3, 2], seed=0)
    loader = neighbor_loader(data, [3, 2], batch_size=7, shuffle=True, seed=1, force_torch=True)
    edges = set(map(tuple, data.edge_index.T.tolist()))
    seen = []
    for batch in loader:
        assert batch.batch_size <= 7
        seen += batch.n_id[: batch.batch_size].tolist()
        g_src = batch.n_id[batch.edge_index[0]]
        g_dst = batch.n_id[batch.edge_index[1]]
        assert all((int(s), int(t)) in edges for s, t in zip(g_src, g_dst, strict=True))
        torch.testing.assert_close(data.edge_index[:, batch.e_id], torch.stack([g_src, g_dst]))
        # hop 1: every seed receives at most 3 sampled edges
        hop1 = batch.edge_index[:, : batch.num_sampled_edges[0]]
        counts = torch.bincount(hop1[1], minlength=batch.batch_size)
        assert int(counts.max()) <= 3
        torch.testing.assert_close(batch.x, data.x[batch.n_id])
    assert sorted(seen) == list(range(data.num_nodes))
    assert sampler.num_neighbors == [3, 2]


def test_loader_sampler_draws_with_sample_neighbors():
    """One neighbour sampler (issue 20): a loader mini-batch of ``TorchNeighborSampler`` is
    exactly ``sample_neighbors`` with the same generator state (nodes and relabelled edges);
    gs-algos' mini-batch training uses that same function (its test_engine checks)."""
    from torch_geometric.sampler import NodeSamplerInput

    from gs_models.sampling import sample_neighbors

    data = _loader_graph()
    seeds = torch.tensor([4, 17, 3, 40])
    sampler = TorchNeighborSampler(data, [3, 2], seed=7)
    out = sampler.sample_from_nodes(NodeSamplerInput(input_id=None, node=seeds))
    nodes, sub, n_seeds = sample_neighbors(
        data.edge_index, data.num_nodes, seeds, [3, 2], torch.Generator().manual_seed(7)
    )
    assert n_seeds == 4 and torch.equal(out.node, nodes)
    assert torch.equal(torch.stack([out.row, out.col]), sub)
    assert sum(out.num_sampled_nodes) == nodes.numel()
    assert sum(out.num_sampled_edges) == sub.size(1) == out.edge.numel()


def test_full_fanout_minibatch_equals_full_batch_for_sage():
    """With all neighbours (-1) and mean aggregation, mini-batch outputs equal full-batch outputs."""
    data = _loader_graph()
    torch.manual_seed(0)
    model = build_model("sage", 5, 2, hidden_channels=8, num_layers=2, norm=None).eval()
    with torch.no_grad():
        full_emb, full_out = model(data.x, data.edge_index)
    loader = neighbor_loader(data, [-1, -1], batch_size=16, force_torch=True)
    ids, emb, out = predict_in_batches(model, loader)
    torch.testing.assert_close(out, full_out[ids], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(emb, full_emb[ids], atol=1e-5, rtol=1e-5)


def test_minibatch_training_reduces_loss():
    data = _loader_graph(n=120)
    torch.manual_seed(0)
    model = build_model("structural-shifts-mod", 5, 2, hidden_channels=16)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    loader = neighbor_loader(data, [5, 5], batch_size=32, shuffle=True, seed=0, force_torch=True)

    def full_loss():
        model.eval()
        with torch.no_grad():
            return float(F.cross_entropy(model(data.x, data.edge_index)[1], data.y))

    before = full_loss()
    for _ in range(5):
        for batch in loader:
            model.train()
            opt.zero_grad()
            out = model(batch.x, batch.edge_index)[1][: batch.batch_size]
            F.cross_entropy(out, batch.y[: batch.batch_size]).backward()
            opt.step()
    assert full_loss() < 0.7 * before


def test_sampler_is_seeded():
    data = _loader_graph()
    a = [
        b.n_id.tolist()
        for b in neighbor_loader(
            data, [2, 2], batch_size=10, shuffle=True, seed=5, force_torch=True
        )
    ]
    b = [
        b.n_id.tolist()
        for b in neighbor_loader(
            data, [2, 2], batch_size=10, shuffle=True, seed=5, force_torch=True
        )
    ]
    c = [
        b.n_id.tolist()
        for b in neighbor_loader(
            data, [2, 2], batch_size=10, shuffle=True, seed=6, force_torch=True
        )
    ]
    assert a == b and a != c


def test_loader_bad_input():
    data = _loader_graph()
    with pytest.raises(ValueError, match="num_neighbors"):
        neighbor_loader(data, [0], batch_size=4, force_torch=True)
    with pytest.raises(ValueError, match="batch_size"):
        neighbor_loader(data, [2], batch_size=0, force_torch=True)


def _bag_of_words(n: int, f: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(n, f, generator=g) < 0.02).float()


@pytest.mark.parametrize(
    "name",
    [
        "structural-shifts-base", "structural-shifts-mod", "gcn", "mlp", "edgewise-gat",
        "lebed-gcn", "lebed-mlp", "lebed-sage", "lebed-gin", "sage", "gin",
        ("sage", {"sage_aggr": "sum"}), ("sage", {"hidden_channels": 512}),
        ("gin", {"hidden_channels": 512, "gin_train_eps": True}), ("sage", {"head": "conv"}),
        ("sage", {"sage_aggr": "max"}),  # not linear: PyG's own path
        ("sage", {"sage_self_loops": True}), ("structural-shifts-mod", {"sage_self_loops": True}),
    ],
)
def test_fast_path_equals_plain_pyg_path(name):
    """Sparse-CSR features and the precomputed adjacency (GCN's normalised one; SAGE's mean or
    sum and GIN's sum, with the first linear map before or after the aggregation) give the
    same function and the same gradients as PyG's edge_index path (self-loops, duplicate edges
    and nodes without in-edges included)."""
    name, kwargs = (name, {}) if isinstance(name, str) else name
    n, f = 300, 400
    x = _bag_of_words(n, f, 0)
    g = torch.Generator().manual_seed(1)
    ei = torch.randint(0, n - 5, (2, 1500), generator=g)  # the last 5 nodes get no in-edges
    ei = torch.cat([ei, ei.flip(0), torch.tensor([[3, 5, 5], [3, 5, 7]])], 1)  # loops, duplicate
    torch.manual_seed(0)
    model = build_model(name, f, 4, **kwargs)
    if kwargs.get("gin_train_eps"):
        with torch.no_grad():
            for layer in model.layers:
                layer.eps.fill_(0.3)  # a non-zero epsilon must enter both paths alike
    outs = {}
    for fast in (True, False):
        model.fast_path = fast
        model.zero_grad()
        model.eval()
        emb, logits = model(x, ei)
        logits.square().sum().backward()
        grads = [p.grad.clone() for p in model.parameters() if p.grad is not None]
        outs[fast] = (emb.detach(), logits.detach(), grads)
    # the fast paths were taken: sparse features unless the first layer widens them (then
    # SAGE / GIN aggregate before their linear map), the prepared adjacency for GCN/SAGE/GIN
    sparse = kwargs.get("hidden_channels", 0) <= f and kwargs.get("sage_aggr") != "max"
    assert (model._x_cache is not None) == sparse
    linear_aggr = model.config.model in ("gcn", "gin") or (
        model.config.model == "sage" and model.config.sage_aggr != "max"
    )
    assert (model._adj_cache is not None) == linear_aggr
    torch.testing.assert_close(outs[True][0], outs[False][0], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(outs[True][1], outs[False][1], rtol=1e-5, atol=1e-5)
    assert len(outs[True][2]) == len(outs[False][2])
    for a, b in zip(outs[True][2], outs[False][2], strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)


def test_fast_path_caches_follow_in_place_changes():
    n, f = 200, 400
    x = _bag_of_words(n, f, 2)
    ei = torch.randint(0, n, (2, 600), generator=torch.Generator().manual_seed(3))
    torch.manual_seed(0)
    model = build_model("gcn", f, 3).eval()
    before = model(x, ei)[1]
    x[0, :5] = 1.0  # in place: the cached CSR copy must be rebuilt
    ei[1, 0] = (ei[1, 0] + 1) % n
    after = model(x, ei)[1]
    model.fast_path = False
    torch.testing.assert_close(after, model(x, ei)[1], rtol=1e-5, atol=1e-5)
    assert not torch.allclose(before, after)


def test_edgewise_gat_dropout_is_active_in_train_mode_only():
    """The edgewise GAT preset (authors' src/model/model.py): input dropout 0.5 and attention
    dropout 0.5, plus dropout 0.5 before the output layer; none of it in eval mode."""
    cfg = build_model("edgewise-gat", 10, 3).config
    assert (cfg.input_dropout, cfg.attention_dropout, cfg.dropout, cfg.heads) == (0.5, 0.5, 0.5, 8)
    n, f = 120, 300
    x = _bag_of_words(n, f, 4)
    ei = torch.randint(0, n, (2, 500), generator=torch.Generator().manual_seed(5))
    torch.manual_seed(0)
    model = build_model("edgewise-gat", f, 3)
    model.eval()
    a, b = model(x, ei)[1], model(x, ei)[1]
    torch.testing.assert_close(a, b, rtol=0, atol=0)  # eval: deterministic
    model.train()
    assert not torch.allclose(model(x, ei)[1], model(x, ei)[1])  # train: dropout draws
    # each kind of dropout acts on its own in train mode
    for field in ("input_dropout", "attention_dropout", "dropout"):
        only = {k: 0.0 for k in ("input_dropout", "attention_dropout", "dropout")}
        only[field] = 0.5
        torch.manual_seed(0)
        m = build_model("edgewise-gat", f, 3, **only).train()
        assert not torch.allclose(m(x, ei)[1], m(x, ei)[1]), field
    torch.manual_seed(0)
    none = build_model("edgewise-gat", f, 3, input_dropout=0.0, attention_dropout=0.0, dropout=0.0).train()
    torch.testing.assert_close(none(x, ei)[1], none(x, ei)[1])


def test_sparse_input_dropout_drops_and_rescales_the_stored_values():
    from gs_models.node import _input_dropout

    x = _bag_of_words(400, 500, 6) * 3.0
    csr = x.to_sparse_csr()
    torch.manual_seed(1)
    out = _input_dropout(csr, 0.5, True).to_dense()
    kept = out[x > 0]
    assert bool(((kept == 0) | (kept == 6.0)).all())  # dropped or scaled by 1 / (1 - p)
    frac = float((kept == 0).float().mean())
    assert 0.45 < frac < 0.55, frac
    assert bool((out[x == 0] == 0).all())  # zeros stay zero
    assert _input_dropout(csr, 0.5, False) is csr  # eval: unchanged


def test_edgewise_gcn_config_has_one_definition():
    """The edgewise paper's GCN (appendix C.2: 2 x 64, dropout 0.5) is ``EDGEWISE_GCN``: the
    preset, GMNN's default ``q`` and EPFGNN's default backbone all are that one object."""
    from gs_models import EDGEWISE_GCN, EPFGNNConfig, GMNNConfig, preset

    assert (EDGEWISE_GCN.hidden_channels, EDGEWISE_GCN.num_layers, EDGEWISE_GCN.dropout) == (64, 2, 0.5)
    assert preset("edgewise-gcn") is EDGEWISE_GCN
    assert GMNNConfig().q is EDGEWISE_GCN
    assert EPFGNNConfig().backbone is EDGEWISE_GCN
    assert preset("edgewise-gmnn").q is EDGEWISE_GCN
    assert preset("edgewise-epfgnn").backbone is EDGEWISE_GCN


def test_sage_self_loops_average_over_the_node_and_its_neighbours():
    """``sage_self_loops``: each SAGE layer is PyG's ``SAGEConv`` on the graph with one
    self-loop per node (DGL's ``add_self_loop`` before its ``SAGEConv``, as the
    structural-shifts authors' data pipeline), on both paths; an isolated node's neighbour
    term is its own projected feature, not 0."""
    from torch_geometric.utils import add_self_loops

    torch.manual_seed(0)
    x = torch.randn(6, 5)
    ei = torch.tensor([[0, 1, 1, 2, 3, 4], [1, 0, 2, 1, 4, 3]])  # node 5 isolated
    m = build_model("sage", 5, 3, num_layers=1, head="conv", norm=None, dropout=0.0,
                    sage_self_loops=True).eval()
    conv = m.head
    ref = conv(x, add_self_loops(ei, num_nodes=6)[0])
    for fast in (True, False):
        m.fast_path = fast
        torch.testing.assert_close(m(x, ei)[1], ref, rtol=1e-5, atol=1e-6)
    # node 5: mean over {5} -> lin_l(x5) + lin_r(x5); without the loop lin_l sees 0
    want5 = conv.lin_l(x[5:6]) + conv.lin_r(x[5:6])
    torch.testing.assert_close(ref[5:6], want5, rtol=1e-5, atol=1e-6)
    plain = build_model("sage", 5, 3, num_layers=1, head="conv", norm=None, dropout=0.0).eval()
    plain.load_state_dict(m.state_dict())
    assert not torch.allclose(plain(x, ei)[1][5], ref[5])


def test_sage_init_dgl_is_xavier_with_relu_gain_and_zero_bias():
    """``sage_init="dgl"``: DGL ``SAGEConv.reset_parameters`` (xavier-uniform, gain sqrt(2),
    bias zero): every weight within gain * sqrt(6 / (fan_in + fan_out)) and spread over it
    (uniform: std = bound / sqrt(3)); the default keeps PyG's bound 1 / sqrt(fan_in)."""
    torch.manual_seed(0)
    m = build_model("sage", 256, 3, num_layers=2, hidden_channels=256, sage_init="dgl")
    bound = 2 ** 0.5 * (6 / 512) ** 0.5
    for conv in m.layers:
        for lin in (conv.lin_l, conv.lin_r):
            w = lin.weight.detach()
            assert w.abs().max() <= bound + 1e-6
            assert abs(float(w.std()) - bound / 3 ** 0.5) < 0.01
            if lin.bias is not None:
                assert torch.count_nonzero(lin.bias) == 0
    torch.manual_seed(0)
    pyg = build_model("sage", 256, 3, num_layers=2, hidden_channels=256)
    assert float(pyg.layers[1].lin_l.weight.abs().max()) <= 1 / 16 + 1e-6
    with pytest.raises(ValueError, match="sage_init"):
        build_model("sage", 4, 2, sage_init="torch")


def test_head_init_xavier_is_the_lebed_authors_classifier_init():
    """``head_init="xavier"``: the head as the LeBed authors' classifier
    (``nn.init.xavier_uniform_`` weight, zero bias), compared with torch's own initialiser under
    the same generator state; the encoder keeps exactly the draws of the default."""
    torch.manual_seed(0)
    ref = build_model("sage", 64, 6, num_layers=2, hidden_channels=32, embedding_channels=16)
    torch.manual_seed(0)
    m = build_model("sage", 64, 6, num_layers=2, hidden_channels=32, embedding_channels=16,
                    head_init="xavier")
    for (k, a), b in zip(ref.state_dict().items(), m.state_dict().values(), strict=True):
        if not k.startswith("head."):
            assert torch.equal(a, b), k
    assert torch.count_nonzero(m.head.bias) == 0
    bound = (6 / (16 + 6)) ** 0.5
    w = m.head.weight.detach()
    assert w.abs().max() <= bound + 1e-6 and w.abs().max() > 0.5 * bound
    # the default (kaiming-uniform, a = sqrt 5) is bounded by 1 / sqrt(fan_in) = 0.25 < xavier's 0.52
    assert ref.head.weight.abs().max() <= 0.25 + 1e-6 and torch.count_nonzero(ref.head.bias) > 0
    # same draw as torch's xavier on a fresh weight after the same encoder draws
    torch.manual_seed(0)
    again = build_model("sage", 64, 6, num_layers=2, hidden_channels=32, embedding_channels=16)
    torch.nn.init.xavier_uniform_(again.head.weight)
    assert torch.equal(again.head.weight, m.head.weight)
    with pytest.raises(ValueError, match="head_init"):
        build_model("gcn", 4, 2, head_init="kaiming")
    with pytest.raises(ValueError, match="head='linear'"):
        build_model("gcn", 4, 2, head="conv", head_init="xavier")


def test_pre_activation_off_gives_linear_then_norm():
    """``pre_activation=False``: the pre-processing step is linear -> norm (the authors'
    "improved" block is ``final: True``, so its activation is the identity)."""
    torch.manual_seed(0)
    m = build_model("structural-shifts-mod", 5, 3, hidden_channels=8, pre_activation=False,
                    sage_self_loops=False).eval()
    x = torch.randn(4, 5)
    ei = torch.tensor([[0, 1, 2], [1, 2, 3]])
    h = m.pre_norm(m.pre(x))
    for conv, ln in zip(m.layers, m.norms, strict=True):
        h = ln(F.gelu(conv(h, ei)) + h)
    torch.testing.assert_close(m(x, ei)[0], h, rtol=1e-5, atol=1e-5)
    on = build_model("structural-shifts-mod", 5, 3, hidden_channels=8, pre_activation=True,
                     sage_self_loops=False).eval()
    on.load_state_dict(m.state_dict())
    assert not torch.allclose(on(x, ei)[0], h)  # GELU after the linear changes the function
