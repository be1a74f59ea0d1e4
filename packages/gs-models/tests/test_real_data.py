"""Real data: the structural-shifts paper's CoraML (``../shared/datasets``; skipped when absent)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch_geometric.utils import remove_self_loops, to_undirected

from gs_models import build_model
from gs_models.structured import mean_field_edge_marginals


@pytest.fixture(scope="module")
def coraml(shared_datasets):
    sio = pytest.importorskip("scipy.io", reason="scipy (the 'test' extra) reads the MATLAB file")
    path = shared_datasets / "structural-shifts" / "cora-ml" / "data.mat"
    if not path.is_file():
        pytest.skip(f"CoraML not found at {path}")
    mat = sio.loadmat(path)
    feats = mat["features"].tocoo()
    x = torch.sparse_coo_tensor(
        np.vstack([feats.row, feats.col]),
        feats.data.astype(np.float32),
        feats.shape,
        check_invariants=True,
    ).coalesce()
    edge_index = torch.from_numpy(mat["edges"].astype(np.int64))
    edge_index = to_undirected(remove_self_loops(edge_index)[0], num_nodes=feats.shape[0])
    y = torch.from_numpy(mat["labels"].reshape(-1).astype(np.int64))
    gen = torch.Generator().manual_seed(0)
    perm = torch.randperm(y.numel(), generator=gen)
    train = torch.zeros(y.numel(), dtype=torch.bool)
    train[perm[: y.numel() // 10]] = True  # 10% labelled, as in the edgewise paper
    return x, edge_index, y, train


def test_coraml_statistics(coraml):
    x, edge_index, y, _ = coraml
    assert x.shape == (2995, 2879)
    assert edge_index.size(1) == 16316  # 8,158 undirected edges
    assert int(y.max()) + 1 == 7


def test_edgewise_gcn_and_epfgnn_on_coraml(coraml):
    x, edge_index, y, train = coraml
    torch.manual_seed(0)
    gcn = build_model("edgewise-gcn", x.size(1), 7)  # sparse bag-of-words input works for GCN
    opt = torch.optim.Adam(gcn.parameters(), lr=0.01, weight_decay=5e-4)
    for _ in range(40):
        gcn.train()
        opt.zero_grad()
        F.cross_entropy(gcn(x, edge_index)[1][train], y[train]).backward()
        opt.step()
    gcn.eval()
    with torch.no_grad():
        probs = torch.softmax(gcn(x, edge_index)[1], 1)
    acc = float((probs.argmax(1) == y)[~train].float().mean())
    assert acc > 0.75, acc  # GCN on CoraML with 10% labels reaches ~0.8
    em = mean_field_edge_marginals(probs, edge_index)
    torch.testing.assert_close(em.sum((1, 2)), torch.ones(edge_index.size(1)))

    # EPFGNN inference on real data (its EM training is tested in gs-algos): the trained GCN as
    # backbone and a homophilous compatibility matrix
    epf = build_model("edgewise-epfgnn", x.size(1), 7)
    epf.backbone.load_state_dict(gcn.state_dict())
    with torch.no_grad():
        epf.compat_raw.copy_(0.5 * torch.eye(7))
    epf.eval()
    res = epf.lbp(x, edge_index)
    assert res.residual < 1e-3
    em = epf.edge_marginals(x, edge_index)
    node = res.node_marginals
    torch.testing.assert_close(em.sum((1, 2)), torch.ones(edge_index.size(1)))
    torch.testing.assert_close(em.sum(2), node[edge_index[0]], atol=1e-3, rtol=0)
    acc_epf = float((node.argmax(1) == y)[~train].float().mean())
    assert acc_epf > 0.7, acc_epf
