"""Fixtures for gs-algos tests: small SYNTHETIC graphs and point clouds, tiny models.

Everything generated here is synthetic (named so in every test that uses it). Models
come from gs-models (``build_model``) at tiny sizes.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch_geometric.data import Data


def _knn_edges(x: np.ndarray, k: int) -> torch.Tensor:
    d = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(d, np.inf)
    nb = np.argsort(d, axis=1)[:, :k]
    src = np.repeat(np.arange(len(x)), k)
    ei = torch.tensor(np.stack([src, nb.reshape(-1)]), dtype=torch.long)
    from torch_geometric.utils import coalesce, to_undirected

    return coalesce(to_undirected(ei, num_nodes=len(x)), num_nodes=len(x))


def make_synthetic_node_graph(
    n: int = 240,
    num_classes: int = 3,
    num_domains: int = 2,
    dim: int = 8,
    domain_shift: float = 3.0,
    seed: int = 0,
) -> Data:
    """SYNTHETIC node-classification graph.

    Features: class signal in the first 2 dims (class means on a circle + noise) and a
    domain signal in the last dims (domain d shifts them by ``domain_shift * d`` and
    scales their noise by ``1 + d``). Edges: kNN (k=4) on the class signal, so
    neighbours mostly share the class. Masks: random 40/15/15 % ID train / valid / test
    among domain-0..(D-2) nodes; nodes of the last domain are OOD (valid / test).
    """
    rng = np.random.default_rng(seed)
    y = rng.integers(0, num_classes, n)
    dom = rng.integers(0, num_domains, n)
    ang = 2 * np.pi * y / num_classes
    cls = np.stack([np.cos(ang), np.sin(ang)], 1) * 1.5 + rng.normal(0, 0.6, (n, 2))
    rest = rng.normal(0, 1, (n, dim - 2)) * (1 + dom[:, None]) + domain_shift * dom[:, None]
    x = np.concatenate([cls, rest], 1).astype(np.float32)
    data = Data(
        x=torch.tensor(x), edge_index=_knn_edges(cls, 4), y=torch.tensor(y, dtype=torch.long)
    )
    data.domain = torch.tensor(dom, dtype=torch.long)
    order = rng.permutation(n)
    masks = {k: torch.zeros(n, dtype=torch.bool) for k in
             ("in_train", "in_valid", "in_test", "out_valid", "out_test")}
    ood = dom == num_domains - 1 if num_domains > 2 else np.zeros(n, dtype=bool)
    idx_in = [i for i in order if not ood[i]]
    idx_out = [i for i in order if ood[i]]
    a, b = int(0.55 * len(idx_in)), int(0.775 * len(idx_in))
    masks["in_train"][idx_in[:a]] = True
    masks["in_valid"][idx_in[a:b]] = True
    masks["in_test"][idx_in[b:]] = True
    if idx_out:
        h = len(idx_out) // 3
        masks["out_valid"][idx_out[:h]] = True
        masks["out_test"][idx_out[h:]] = True
    else:  # no OOD domain: reuse ID parts so that every part exists
        masks["out_valid"] = masks["in_valid"].clone()
        masks["out_test"] = masks["in_test"].clone()
    for k, v in masks.items():
        setattr(data, f"{k}_mask", v)
    return data


def make_synthetic_point_clouds(
    n_graphs: int = 60,
    points: tuple[int, int] = (8, 14),
    shift: float = 0.0,
    seed: int = 0,
    domain: int | None = None,
) -> list[Data]:
    """SYNTHETIC binary point-cloud task: a few 'signal' points (feature flag 1) carry
    the label in their second feature (+1 / -1), the other points are noise (flag 0,
    random second feature); positions are Gaussian, shifted by ``shift`` (a covariate
    shift). Each graph gets ``domain`` if given, else its index modulo 2."""
    rng = np.random.default_rng(seed)
    out = []
    for g in range(n_graphs):
        m = int(rng.integers(points[0], points[1] + 1))
        label = int(rng.integers(0, 2))
        n_sig = 3
        flag = np.zeros(m, dtype=np.float32)
        flag[:n_sig] = 1
        val = rng.choice([-1.0, 1.0], m).astype(np.float32)
        val[:n_sig] = 1.0 if label == 1 else -1.0
        x = np.stack([flag, val], 1)
        pos = rng.normal(0, 1, (m, 3)).astype(np.float32) + shift
        d = Data(x=torch.tensor(x), pos=torch.tensor(pos), y=torch.tensor([label]))
        d.domain = torch.tensor(domain if domain is not None else g % 2)
        out.append(d)
    return out


@pytest.fixture
def synthetic_graph() -> Data:
    return make_synthetic_node_graph()


@pytest.fixture
def tiny_mlp():
    from gs_models import build_model

    def make(in_ch, out_ch, hidden=16, seed=0, **kw):
        from gs_algos.engine import seeded

        cfg = dict(hidden_channels=hidden, num_layers=2, dropout=0.0, norm=None,
                   activation="relu")
        cfg.update(kw)
        return seeded(lambda: build_model("mlp", in_ch, out_ch, **cfg), seed)

    return make


@pytest.fixture
def tiny_gcn():
    from gs_models import build_model

    def make(in_ch, out_ch, hidden=16, seed=0, **kw):
        from gs_algos.engine import seeded

        cfg = dict(hidden_channels=hidden, num_layers=2, dropout=0.2, norm="batch",
                   activation="gelu")
        cfg.update(kw)
        return seeded(lambda: build_model("gcn", in_ch, out_ch, **cfg), seed)

    return make


@pytest.fixture
def tiny_pointnet():
    from gs_models import build_model

    def make(in_ch=2, out_ch=1, seed=0, **kw):
        from gs_algos.engine import seeded

        cfg = dict(hidden_channels=16, num_layers=2, dropout=0.0, k=3)
        cfg.update(kw)
        return seeded(lambda: build_model("egnn", in_ch, out_ch, **cfg), seed)

    return make


@pytest.fixture
def synthetic_clouds():
    return make_synthetic_point_clouds


@pytest.fixture
def synthetic_graph_factory():
    return make_synthetic_node_graph


@pytest.fixture(autouse=True)
def _cpu_unless_marked_gpu(request, monkeypatch):
    """Most tests compare exact CPU results (same seed, same weights; exact resume), which CUDA
    kernels do not promise. ``TrainConfig.device`` defaults to ``"auto"``, so on a machine
    with a GPU those tests would train there: they see no CUDA (``"auto"`` is the CPU), unless
    marked ``gpu`` (tests/test_devices.py)."""
    if request.node.get_closest_marker("gpu") is None:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


@pytest.fixture(scope="session", autouse=True)
def _one_torch_thread():
    """Tiny tensors: one intra-op thread avoids OpenMP contention on shared 2-core CI."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
