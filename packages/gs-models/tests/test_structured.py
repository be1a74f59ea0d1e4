"""GMNN / EPFGNN: edge marginals (sum to one, consistent), LBP vs enumeration.

Their EM training lives in gs-algos (``gs_algos.em``) and is tested there (``test_em.py``)."""

from __future__ import annotations

import itertools

import hypothesis.strategies as st
import numpy as np
import pytest
import torch
from hypothesis import given, settings

from gs_models import build_model
from gs_models.structured import greedy_coloring, loopy_belief_propagation, undirected_pairs


def enumerate_marginals(u: np.ndarray, w: np.ndarray, pairs: list[tuple[int, int]]):
    """Exact node and pair marginals of p(y) ~ exp(sum u_i(y_i) + sum_{ij} W(y_i, y_j)) by enumeration."""
    n, c = u.shape
    node = np.zeros((n, c))
    pair = np.zeros((len(pairs), c, c))
    z = 0.0
    for y in itertools.product(range(c), repeat=n):
        e = sum(u[i, y[i]] for i in range(n)) + sum(w[y[i], y[j]] for i, j in pairs)
        p = np.exp(e)
        z += p
        for i in range(n):
            node[i, y[i]] += p
        for m, (i, j) in enumerate(pairs):
            pair[m, y[i], y[j]] += p
    return node / z, pair / z


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 6), c=st.integers(2, 3))
def test_lbp_exact_on_trees(seed, n, c):
    rng = np.random.default_rng(seed)
    parents = [int(rng.integers(0, i)) for i in range(1, n)]
    edges = [(p, i) for i, p in zip(range(1, n), parents, strict=True)]
    u = rng.normal(size=(n, c))
    w = rng.normal(size=(c, c))
    w = (w + w.T) / 2
    # both directions and a duplicate edge: the model counts every undirected pair once
    ei = torch.tensor(
        [
            [a for a, b in edges] + [b for a, b in edges] + [edges[0][0]],
            [b for a, b in edges] + [a for a, b in edges] + [edges[0][1]],
        ]
    )
    res = loopy_belief_propagation(
        torch.from_numpy(u), torch.from_numpy(w), ei, iterations=200, damping=0.0
    )
    pairs = [tuple(p) for p in res.pairs.T.tolist()]
    node, pair = enumerate_marginals(u, w, pairs)
    np.testing.assert_allclose(res.node_marginals.numpy(), node, atol=1e-8)
    np.testing.assert_allclose(res.pair_marginals.numpy(), pair, atol=1e-8)


def _loopy_graph():
    # a 5-cycle with a chord, both directions, plus one self-loop
    und = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (0, 2)]
    src = [a for a, b in und] + [b for a, b in und] + [3]
    dst = [b for a, b in und] + [a for a, b in und] + [3]
    return torch.tensor([src, dst])


def test_epfgnn_edge_marginals_sum_to_one_and_match_node_marginals(float64):
    torch.manual_seed(0)
    model = build_model("edgewise-epfgnn", 4, 3, variant="ours-v1").eval()
    with torch.no_grad():
        model.compat_raw.copy_(torch.tensor([[1.0, -0.5, 0.0], [-0.5, 1.0, 0.2], [0.0, 0.2, 0.8]]))
    ei = _loopy_graph()
    x = torch.randn(5, 4)
    em = model.edge_marginals(x, ei)
    assert em.shape == (ei.size(1), 3, 3)
    torch.testing.assert_close(em.sum((1, 2)), torch.ones(ei.size(1)))
    node = model.node_marginals(x, ei)
    torch.testing.assert_close(em.sum(2), node[ei[0]], atol=1e-5, rtol=0)
    torch.testing.assert_close(em.sum(1), node[ei[1]], atol=1e-5, rtol=0)
    # reversed edges carry transposed marginals
    torch.testing.assert_close(em[6:12], em[:6].transpose(1, 2))
    # the loopy BP result differs from the naive mean-field product (it is structured)
    mf = model.edge_marginals(x, ei, method="mean_field")
    torch.testing.assert_close(mf.sum((1, 2)), torch.ones(ei.size(1)))
    assert (mf - em).abs().max() > 1e-3



@pytest.mark.parametrize("variant", ["ours-v1", "released"])
def test_structured_inference_gathers_with_index_select(backward_ops, variant):
    """No ``x[index]`` gather in the differentiable inference (loopy BP, mean field, the
    pseudo-likelihood pieces): its backward would not repeat bit for bit on a
    multi-threaded CPU (see ``test_pointcloud``)."""
    torch.manual_seed(3)
    model = build_model("edgewise-epfgnn", 4, 3, variant=variant).train()
    ei, x = _loopy_graph(), torch.randn(5, 4)
    for method in ("lbp", "mean_field"):
        out = model.edge_marginals(x, ei, method=method)
        assert "IndexBackward0" not in backward_ops(out.sum()), method
    out = model(x, ei)[1]
    assert "IndexBackward0" not in backward_ops(out.sum())

def test_epfgnn_without_coupling_is_the_backbone(float64):
    torch.manual_seed(1)
    model = build_model("edgewise-epfgnn", 4, 3, variant="ours-v1").eval()
    ei, x = _loopy_graph(), torch.randn(5, 4)
    probs = torch.softmax(model.backbone(x, ei)[1], dim=1)
    torch.testing.assert_close(model.node_marginals(x, ei), probs)
    torch.testing.assert_close(model.node_marginals(x, ei, method="mean_field"), probs)
    torch.testing.assert_close(torch.softmax(model(x, ei)[1], dim=1), probs)


def test_observed_labels_are_clamped(float64):
    torch.manual_seed(2)
    model = build_model("edgewise-epfgnn", 4, 3, variant="ours-v1").eval()
    with torch.no_grad():
        model.compat_raw.fill_(0.3)
    ei, x = _loopy_graph(), torch.randn(5, 4)
    y = torch.tensor([2, 0, 0, 0, 0])
    obs = torch.tensor([True, False, False, False, False])
    node = model.node_marginals(x, ei, y=y, observed_mask=obs)
    torch.testing.assert_close(node[0], torch.tensor([0.0, 0.0, 1.0]))
    gm = build_model("edgewise-gmnn", 4, 3, num_samples=8, gibbs_sweeps=1, variant="ours-v1").eval()
    gnode, gedge = gm.node_and_edge_marginals(x, ei, y=y, observed_mask=obs)
    torch.testing.assert_close(gnode[0], torch.tensor([0.0, 0.0, 1.0]))
    with pytest.raises(ValueError, match="y must be a label tensor"):
        model.node_marginals(x, ei, observed_mask=obs)


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 15), sweeps=st.integers(0, 3))
def test_gmnn_edge_marginals_consistent(seed, n, sweeps):
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = build_model("edgewise-gmnn", 3, 4, num_samples=16, gibbs_sweeps=sweeps, variant="ours-v1").eval()
    x = torch.randn(n, 3, generator=gen)
    ei = torch.randint(0, n, (2, 2 * n), generator=gen)
    node, em = model.node_and_edge_marginals(x, ei, seed=seed)
    assert em.shape == (ei.size(1), 4, 4) and bool((em >= 0).all())
    torch.testing.assert_close(em.sum((1, 2)), torch.ones(ei.size(1)))
    torch.testing.assert_close(node.sum(1), torch.ones(n))
    torch.testing.assert_close(em.sum(2), node[ei[0]])
    torch.testing.assert_close(em.sum(1), node[ei[1]])
    again = model.edge_marginals(x, ei, seed=seed)
    torch.testing.assert_close(again, em)  # seeded


def test_coloring_is_proper():
    gen = torch.Generator().manual_seed(0)
    ei = torch.randint(0, 50, (2, 300), generator=gen)
    color = greedy_coloring(ei, 50, seed=3)
    assert bool((color >= 0).all())
    keep = ei[0] != ei[1]
    assert not bool((color[ei[0, keep]] == color[ei[1, keep]]).any())


def test_undirected_pairs():
    ei = torch.tensor([[0, 1, 2, 2, 1], [1, 0, 2, 0, 0]])
    pairs, pair_of_edge, flipped = undirected_pairs(ei, 3)
    assert pairs.tolist() == [[0, 0], [1, 2]]
    assert pair_of_edge.tolist() == [0, 0, -1, 1, 0]
    assert flipped.tolist() == [False, True, False, True, True]




# ------------------------------------------------------------------------------------------
# variant="released" (hans66hsu/structured_uncertainty_metrics, src/model/*.py)
# ------------------------------------------------------------------------------------------


def _four_nodes():
    # 0-1, 1-2, 1-3, 2-3 in both directions: degrees 1, 3, 2, 2
    und = [(0, 1), (1, 2), (1, 3), (2, 3)]
    return torch.tensor([[a for a, b in und] + [b for a, b in und], [b for a, b in und] + [a for a, b in und]])


def test_released_gmnn_averages_p_logits_over_the_label_samples(float64):
    torch.manual_seed(0)
    model = build_model("edgewise-gmnn", 4, 3, num_samples=5).eval()
    ei, x = _four_nodes(), torch.randn(4, 4)
    y = torch.tensor([2, 0, 1, 1])
    obs = torch.tensor([True, False, False, False])
    node, edge = model.node_and_edge_marginals(x, ei, y=y, observed_mask=obs, seed=3)
    # by hand: 5 label sets from q with the seed's generator, gold on node 0, p's logits averaged
    gen = torch.Generator().manual_seed(3)
    q = torch.softmax(model.q(x, ei)[1].float(), 1)
    draws = torch.multinomial(q, 5, replacement=True, generator=gen).T
    logits = []
    for d in draws:
        d = d.clone()
        d[0] = 2
        logits.append(model.p(torch.nn.functional.one_hot(d, 3).double(), ei))
    torch.testing.assert_close(node, torch.softmax(torch.stack(logits).mean(0), 1))
    # averaging probabilities instead of logits gives another answer
    assert (node - torch.stack([torch.softmax(v, 1) for v in logits]).mean(0)).abs().max() > 1e-6
    torch.testing.assert_close(edge, node[ei[0]].unsqueeze(2) * node[ei[1]].unsqueeze(1))
    torch.testing.assert_close(model.node_marginals(x, ei, y=y, observed_mask=obs, seed=3), node)
    assert (model.node_marginals(x, ei, y=y, observed_mask=obs, seed=4) - node).abs().max() > 1e-6
    one = build_model("edgewise-gmnn", 4, 3, num_samples=1)
    one.load_state_dict(model.state_dict())
    assert (one.eval().node_marginals(x, ei, y=y, observed_mask=obs, seed=3) - node).abs().max() > 1e-6
    with pytest.raises(ValueError, match="gibbs_sweeps"):
        build_model("edgewise-gmnn", 4, 3, gibbs_sweeps=1)


def test_released_epfgnn_rezero_starts_at_zero_and_compatibility_at_randn_plus_identity(float64):
    torch.manual_seed(5)
    model = build_model("edgewise-epfgnn", 4, 3)
    torch.manual_seed(5)
    build_model("edgewise-gcn", 4, 3)  # the backbone draws first, then the compatibility
    expected = (torch.randn(3, 3) + torch.eye(3)) / 3
    torch.testing.assert_close(model.compat_raw.detach(), expected.to(model.compat_raw.dtype))
    ei, x = _four_nodes(), torch.randn(4, 4)
    model.bind_graph(ei)
    assert model.rezero.shape == (4,) and model.rezero.requires_grad
    assert torch.equal(model.rezero.detach(), torch.zeros(4, dtype=model.rezero.dtype))
    # with zero edge weights the MRF is its backbone: loopy BP and mean field give softmax(u)
    model.eval()
    probs = torch.softmax(model.backbone(x, ei)[1], 1)
    torch.testing.assert_close(model.node_marginals(x, ei), probs)
    torch.testing.assert_close(model.node_marginals(x, ei, method="mean_field", proposal=probs.flip(0)), probs)
    with pytest.raises(ValueError, match="bind_graph"):
        model.edge_weights(_loopy_graph(), 5)


def test_released_epfgnn_redistributed_unaries_and_star_pieces_by_hand(float64):
    torch.manual_seed(0)
    model = build_model("edgewise-epfgnn", 4, 2)
    ei = _four_nodes()
    model.bind_graph(ei)
    u = torch.tensor([[1.0, -1.0], [2.0, 0.0], [0.5, 0.5], [-3.0, 3.0]])
    # degrees 1, 3, 2, 2 -> divided by 2, 4, 3, 3 (src/model/model.py: deg = degree(row) + 1)
    hand = torch.tensor([[0.5, -0.5], [0.5, 0.0], [0.5 / 3, 0.5 / 3], [-1.0, 1.0]])
    torch.testing.assert_close(model.redistributed_unary(u, ei), hand)
    with torch.no_grad():
        model.rezero.copy_(torch.tensor([0.3, -0.7, 1.1, 0.5]))  # pairs (0,1), (1,2), (1,3), (2,3)
        model.compat_raw.copy_(torch.tensor([[1.0, -0.4], [0.2, 0.6]]))
    t = torch.tensor([[0.9, 0.1], [0.2, 0.8], [0.5, 0.5], [0.0, 1.0]])
    loss = model.star_piecewise_nll(u, ei, t)
    # enumeration: piece i = star {i} + N(i), log p(y) = sum_k x_k(y_k) + sum_j r_ij W(y_i, y_j) / 2 - log Z_i,
    # expected under the factorised targets, averaged over the 4 pieces
    w = model.compatibility.detach() / 2
    r = {(0, 1): 0.3, (1, 2): -0.7, (1, 3): 1.1, (2, 3): 0.5}
    nbrs = {0: [1], 1: [0, 2, 3], 2: [1, 3], 3: [1, 2]}
    total = 0.0
    for i in range(4):
        star = [i] + nbrs[i]
        configs = list(itertools.product(range(2), repeat=len(star)))
        scores = torch.stack([
            sum(hand[k, yk] for k, yk in zip(star, ys, strict=True))
            + sum(r[tuple(sorted((i, j)))] * w[ys[0], ys[1 + m]] for m, j in enumerate(nbrs[i]))
            for ys in configs
        ])
        logp = scores - torch.logsumexp(scores, 0)
        weights = torch.stack([torch.prod(torch.stack([t[k, yk] for k, yk in zip(star, ys, strict=True)])) for ys in configs])
        total = total + (weights * logp).sum()
    torch.testing.assert_close(loss, -total / 4)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 6), c=st.integers(2, 3))
def test_max_product_lbp_gives_max_marginals_on_trees(seed, n, c):
    rng = np.random.default_rng(seed)
    edges = [(int(rng.integers(0, i)), i) for i in range(1, n)]
    u = rng.normal(size=(n, c))
    w = rng.normal(size=(c, c))
    w = (w + w.T) / 2
    scales = rng.normal(size=len(edges))
    ei = torch.tensor([[a for a, b in edges] + [b for a, b in edges], [b for a, b in edges] + [a for a, b in edges]])
    pairs = undirected_pairs(ei, n)[0].T.tolist()
    s_of = dict(zip(edges, scales, strict=True))  # parents come first: (lo, hi) as in undirected_pairs
    res = loopy_belief_propagation(torch.from_numpy(u), torch.from_numpy(w), ei, iterations=50, damping=0.0,
                                   edge_scales=torch.tensor([s_of[tuple(p)] for p in pairs]), product="max")
    best_node = np.full((n, c), -np.inf)
    best_pair = np.full((len(pairs), c, c), -np.inf)
    for y in itertools.product(range(c), repeat=n):
        e = sum(u[i, y[i]] for i in range(n)) + sum(s_of[tuple(p)] * w[y[p[0]], y[p[1]]] for p in pairs)
        for i in range(n):
            best_node[i, y[i]] = max(best_node[i, y[i]], e)
        for m, (i, j) in enumerate(pairs):
            best_pair[m, y[i], y[j]] = max(best_pair[m, y[i], y[j]], e)
    soft = np.exp(best_node - best_node.max(1, keepdims=True))
    np.testing.assert_allclose(res.node_marginals.numpy(), soft / soft.sum(1, keepdims=True), atol=1e-8)
    flat = best_pair.reshape(len(pairs), -1)
    soft = np.exp(flat - flat.max(1, keepdims=True))
    np.testing.assert_allclose(res.pair_marginals.numpy().reshape(len(pairs), -1),
                               soft / soft.sum(1, keepdims=True), atol=1e-8)


def test_released_epfgnn_lbp_clamp_writes_gold_unaries_to_the_first_rows(float64):
    # src/model/model.py EPFGNN.loopy_bp: E = -u; E[train] = 1e5; E.scatter_(1, gt, gt_ue) on the
    # full (N, C) tensor puts the k-th training node's gold energy on row k (issue 15)
    torch.manual_seed(0)
    model = build_model("edgewise-epfgnn", 4, 3).eval()
    ei, x = _four_nodes(), torch.randn(4, 4)
    model.bind_graph(ei)  # zero edge weights: the node beliefs are softmax of the clamped unaries
    y = torch.tensor([0, 1, 2, 1])
    obs = torch.tensor([False, False, True, True])
    u = model.backbone(x, ei)[1]
    energy = -u.clone()
    gt = y[obs].view(-1, 1)
    gt_ue = torch.gather(energy[obs], 1, gt)
    energy[obs] = 1e5
    energy.scatter_(1, gt, gt_ue)
    energy = (energy - energy.amin(1, keepdim=True)).clamp(max=20)
    expected = torch.softmax(-energy, 1)
    node = model.node_marginals(x, ei, y=y, observed_mask=obs)
    torch.testing.assert_close(node, expected)
    # the training rows are flat, rows 0 and 1 carry the gold energies of nodes 2 and 3
    torch.testing.assert_close(node[2:], torch.full((2, 3), 1 / 3, dtype=node.dtype))
    rows = u[:2].clone()
    rows[0, 2], rows[1, 1] = u[2, 2], u[3, 1]
    torch.testing.assert_close(model.released_clamped_unary(u, y, obs)[:2],
                               (rows - rows.amax(1, keepdim=True)).clamp(min=-20))
    # lbp_clamp="observed": the intended clamp, gold label on the training rows
    fixed = build_model("edgewise-epfgnn", 4, 3, lbp_clamp="observed").eval()
    fixed.bind_graph(ei)
    fixed.load_state_dict(model.state_dict())
    node = fixed.node_marginals(x, ei, y=y, observed_mask=obs)
    torch.testing.assert_close(node[:2], torch.softmax(u[:2], 1))
    assert (node[[2, 3], [2, 1]] > 0.999).all()
    with pytest.raises(ValueError, match="lbp_clamp"):
        build_model("edgewise-epfgnn", 4, 3, lbp_clamp="rows")
