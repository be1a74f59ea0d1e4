"""The embedded synthetic default graph."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from gs_data.synthetic import SyntheticConfig, default_graph, fingerprint, generate

# SHA-256 of the default graph's arrays (edge_index, CSR features, labels) for seed=0. If a
# change of the generator is intended, update this value AND the figures in the README.
DEFAULT_SHA256 = "f732ab87377569e34619e3bd652f747248cdefd037d1bf1f5568b422f5d0ea7e"
#: ``synthetic.fingerprint`` of the same graph: gs_data.fingerprint (the one content
#: fingerprint, issue 20) of its named arrays with dtypes and shapes
DEFAULT_FINGERPRINT = "f0aac37e5c388ef9d9b6dcca20e8e7f358d6803dfdc9459f7d305658c6dc6d9f"


@pytest.fixture(scope="module")
def g():
    return default_graph()


def test_fixed_checksum(g):
    import hashlib

    # the generator's output, hashed independently of gs_data.fingerprint
    h = hashlib.sha256()
    for arr in (g.edge_index, g.x.indptr.astype(np.int64), g.x.indices.astype(np.int64), g.x.data, g.y):
        h.update(np.ascontiguousarray(arr).tobytes())
    assert h.hexdigest() == DEFAULT_SHA256
    assert fingerprint(g) == DEFAULT_FINGERPRINT


def test_deterministic_and_seeded():
    a, b = default_graph(seed=1), default_graph(seed=1)
    assert fingerprint(a) == fingerprint(b)
    assert fingerprint(a) != fingerprint(default_graph(seed=2))
    assert "synthetic" in a.name


def test_import_does_not_pull_torch():
    code = (
        "import sys; import gs_data.synthetic as s; g = s.default_graph(); "
        "assert 'torch' not in sys.modules, 'torch imported'; print(g.num_nodes)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert 2500 <= int(out.stdout.strip()) <= 3500


def test_shape_and_types(g):
    n = g.num_nodes
    assert 2500 <= n <= 3500 and "synthetic" in g.name
    assert g.edge_index.dtype == np.int64 and g.edge_index.shape[0] == 2
    assert sp.issparse(g.x) and g.x.dtype == np.float32 and g.x.shape[0] == n
    assert g.y.dtype == np.int64 and set(np.unique(g.y)) == set(range(7))
    e = set(map(tuple, g.edge_index.T.tolist()))
    assert e == {(b, a) for a, b in e} and all(a != b for a, b in e)


def test_citation_like_properties(g):
    """Homophily, heavy tails, clustering variety, sparse class-correlated features."""
    import networkx as nx

    ei = g.edge_index
    n = g.num_nodes
    homophily = (g.y[ei[0]] == g.y[ei[1]]).mean()
    assert 0.6 < homophily < 0.9
    deg = np.bincount(ei[0], minlength=n)
    assert 3.5 < deg.mean() < 8 and deg.max() > 8 * deg.mean()  # heavy tail
    G = nx.Graph(ei.T.tolist())
    assert nx.is_connected(G)
    cc = np.array(list(nx.clustering(G).values()))
    assert cc.mean() > 0.1 and cc.std() > 0.15  # triadic closure, varied
    assert (cc == 0).mean() > 0.2
    dens = g.x.nnz / (n * g.x.shape[1])
    assert dens < 0.03
    # class-correlated features: the nearest class centroid beats chance by far
    x = g.x.toarray()
    cent = np.stack([x[g.y == c].mean(0) for c in range(7)])
    acc = ((x @ cent.T).argmax(1) == g.y).mean()
    assert acc > 0.5


def test_config_validation():
    with pytest.raises(ValueError, match="num_nodes"):
        generate(SyntheticConfig(num_nodes=3))


def test_load_synthetic_default_matches_generator(g):
    import torch

    import gs_data

    data = gs_data.load("synthetic-default")
    assert "synthetic" in data.name and data.provenance["synthetic"] is True
    assert torch.equal(data.edge_index, torch.from_numpy(g.edge_index))
    assert torch.equal(data.x, torch.from_numpy(g.x.toarray()))
    assert torch.equal(data.y, torch.from_numpy(g.y))
