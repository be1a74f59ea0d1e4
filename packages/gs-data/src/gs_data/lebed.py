"""Test-graph generators of the LeBed paper (online GNN evaluation; Section 3.1, Table 1).

LeBed evaluates a trained GNN on many unlabeled, shifted test graphs. Its Table 1 lists
1 training graph, 1 validation graph and 320 (feature shift), 369 (domain shift) or 360
(temporal shift) test graphs, "adapted" from the shifted datasets (details in the paper's
Appendix B, which our copy of the paper does not contain). The generators below build such
sets, deterministically given a seed. Each set is a lazy :class:`TestGraphSet`: graph ``i`` is
generated on access from ``numpy.random.default_rng([seed, i])``, so any single graph can be
re-created without the others and the 320 graphs never sit in memory together.

Perturbations (pure functions, each takes the strength ``p`` and a numpy Generator):

* :func:`perturb_feature_noise`: ``x + N(0, p^2)`` on every entry (std ``p``);
* :func:`perturb_feature_mask`: ``round(p F)`` feature columns set to zero (fraction ``p``);
* :func:`perturb_class_subgraph`: per class, ``round(p n_c)`` (at least 1) nodes kept, induced
  subgraph (kept fraction ``p``);
* :func:`perturb_edge_dropout`: ``round(p E)`` of the E undirected edges removed (both
  directions; dropped fraction ``p``).

Strengths are drawn ``p ~ U(0.1, 0.7)`` as in the issue text of the project.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # torch and PyG load in the functions that build or read tensors
    from torch_geometric.data import Data

__all__ = [
    "FeatureShiftConfig",
    "DomainShiftConfig",
    "TemporalShiftConfig",
    "TestGraphSet",
    "perturb_feature_noise",
    "perturb_feature_mask",
    "perturb_class_subgraph",
    "perturb_edge_dropout",
    "PERTURBATIONS",
    "eerm_environments",
    "lebed_feature_shift",
    "lebed_domain_shift",
    "lebed_temporal_shift",
]


# --------------------------------------------------------------------------------------------
# perturbations
# --------------------------------------------------------------------------------------------


def _check_p(p: float, name: str) -> float:
    p = float(p)
    if not 0.0 <= p <= 1.0 or math.isnan(p):
        raise ValueError(f"{name}: strength p must be in [0, 1], got {p}")
    return p


def perturb_feature_noise(data: Data, p: float, rng: np.random.Generator) -> Data:
    """Add i.i.d. Gaussian noise of standard deviation ``p`` to every feature entry."""
    import torch

    p = _check_p(p, "feature noise")
    out = copy.copy(data)
    noise = rng.standard_normal(size=tuple(data.x.shape), dtype=np.float32)
    noise *= np.float32(p)
    noise += data.x.numpy()
    out.x = torch.from_numpy(noise)
    return out


def perturb_feature_mask(data: Data, p: float, rng: np.random.Generator) -> Data:
    """Set ``round(p * F)`` randomly chosen feature columns to zero for every node."""
    import torch

    p = _check_p(p, "feature mask")
    out = copy.copy(data)
    f = int(data.x.shape[1])
    cols = rng.choice(f, size=int(round(p * f)), replace=False)
    x = data.x.clone()
    x[:, torch.from_numpy(np.sort(cols))] = 0.0
    out.x = x
    out.masked_columns = torch.from_numpy(np.sort(cols).astype(np.int64))
    return out


def _induced(data: Data, keep: np.ndarray) -> Data:
    """Induced subgraph on the sorted node ids ``keep``; node-level tensors are sliced."""
    import torch
    from torch_geometric.data import Data

    n = int(data.num_nodes)
    keep = np.sort(np.asarray(keep, dtype=np.int64))
    remap = np.full(n, -1, dtype=np.int64)
    remap[keep] = np.arange(keep.size)
    ei = data.edge_index.numpy()
    ok = (remap[ei[0]] >= 0) & (remap[ei[1]] >= 0)
    out = Data()
    for key, val in data:
        if key == "edge_index":
            continue
        if isinstance(val, torch.Tensor) and val.dim() >= 1 and val.shape[0] == n:
            out[key] = val[torch.from_numpy(keep)]
        else:
            out[key] = val
    out.edge_index = torch.from_numpy(np.stack([remap[ei[0][ok]], remap[ei[1][ok]]]))
    out.num_nodes = int(keep.size)
    base_ids = data.node_ids.numpy() if "node_ids" in data else np.arange(n)
    out.node_ids = torch.from_numpy(base_ids[keep])
    return out


def perturb_class_subgraph(data: Data, p: float, rng: np.random.Generator) -> Data:
    """Keep ``max(1, round(p * n_c))`` random nodes of each class ``c``; return the induced subgraph.

    Nodes with a missing label (``y < 0``) are treated as one more group.
    """
    p = _check_p(p, "class-stratified subgraph")
    y = data.y.numpy()
    keep = []
    for c in np.unique(y):
        nodes = np.flatnonzero(y == c)
        k = max(1, int(round(p * nodes.size)))
        keep.append(rng.choice(nodes, size=k, replace=False))
    return _induced(data, np.concatenate(keep))


def perturb_edge_dropout(data: Data, p: float, rng: np.random.Generator) -> Data:
    """Remove ``round(p * E)`` of the ``E`` undirected edges (both directions of each)."""
    import torch

    p = _check_p(p, "edge dropout")
    ei = data.edge_index.numpy()
    und = ei[:, ei[0] < ei[1]]
    e = und.shape[1]
    drop = rng.choice(e, size=int(round(p * e)), replace=False)
    keep = np.ones(e, dtype=bool)
    keep[drop] = False
    und = und[:, keep]
    new = np.concatenate([und, und[::-1]], axis=1)
    order = np.lexsort((new[1], new[0]))
    out = copy.copy(data)
    out.edge_index = torch.from_numpy(np.ascontiguousarray(new[:, order]))
    return out


PERTURBATIONS: dict[str, Callable[[Data, float, np.random.Generator], Data]] = {
    "feature_noise": perturb_feature_noise,
    "feature_mask": perturb_feature_mask,
    "class_subgraph": perturb_class_subgraph,
    "edge_dropout": perturb_edge_dropout,
}


# --------------------------------------------------------------------------------------------
# lazy set of test graphs
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Recipe:
    base: str  # key into TestGraphSet._bases
    perturbation: str | None
    meta: tuple[tuple[str, Any], ...]


class TestGraphSet(Sequence):
    """A lazily generated, deterministic sequence of test graphs (plus train/valid graphs).

    ``set[i]`` builds graph ``i`` from ``numpy.random.default_rng([seed, i])``: the strength
    ``p ~ U(p_low, p_high)`` and the perturbation's own draws. Each graph carries
    ``perturbation`` (str), ``p`` (float), ``eval_mask`` (nodes to score) and the set's
    metadata (environment / domain / period).
    """

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        bases: Mapping[str, Data],
        recipes: Sequence[_Recipe],
        *,
        seed: int,
        p_range: tuple[float, float],
        train: Data,
        valid: Data,
        name: str,
    ) -> None:
        self._bases = dict(bases)
        self._recipes = list(recipes)
        self.seed = int(seed)
        self.p_range = p_range
        self.train = train
        self.valid = valid
        self.name = name
        #: where this set departs from the paper's construction (shown in reports)
        self.approximations: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self._recipes)

    def __getitem__(self, i: int) -> Data:  # type: ignore[override]
        if isinstance(i, slice):
            raise TypeError("TestGraphSet does not support slicing; iterate or index with an int")
        if not -len(self) <= i < len(self):
            raise IndexError(f"test graph index {i} out of range for {len(self)} graphs")
        i = i % len(self)
        r = self._recipes[i]
        rng = np.random.default_rng([self.seed, i])
        base = self._bases[r.base]
        if r.perturbation is None:
            g, p = copy.copy(base), 0.0
        else:
            p = float(rng.uniform(*self.p_range))
            g = PERTURBATIONS[r.perturbation](base, p, rng)
        g.perturbation = r.perturbation or "none"
        g.p = p
        for k, v in r.meta:
            g[k] = v
        g.index_in_set = i
        return g

    def __iter__(self) -> Iterator[Data]:
        for i in range(len(self)):
            yield self[i]

    @property
    def num_classes(self) -> int:
        """Number of classes over every graph of the set (a period of the temporal shift may
        lack some classes; the model must still output all of them)."""
        graphs = [*self._bases.values(), self.train, self.valid]
        return max(int(g.y.max()) for g in graphs if g.y.numel()) + 1

    def describe(self) -> list[dict[str, Any]]:
        """One dict per graph (perturbation, meta), without generating the graphs."""
        return [{"perturbation": r.perturbation, **dict(r.meta)} for r in self._recipes]


# --------------------------------------------------------------------------------------------
# feature shift (EERM-style synthetic-feature environments)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FeatureShiftConfig:
    """LeBed node-feature shift (Section 3.1, Table 1: Cora and Amazon-Photo, 1/1/320 graphs).

    The environments follow EERM (Wu et al., ICLR 2022, "synthetic shifts" on Cora and
    Amazon-Photo): structure is kept, labels are drawn once by a randomly initialised GNN from
    the original features (``num_classes = 10``, hence the 10 classes of LeBed's Table 1; set
    ``label_source="original"`` to keep the dataset's labels), and each environment ``e`` gets
    ``spurious_dim`` features produced by another randomly initialised GNN from the one-hot
    label and an environment embedding. Environment 0 trains, 1 validates, 2..9 test; every
    test environment graph is perturbed by ``noise_levels`` Gaussian-noise and ``mask_levels``
    feature-masking strengths ``p ~ U(0.1, 0.7)``: 8 x (20 + 20) = 320 test graphs.

    ``generator`` picks how labels and spurious features are drawn:

    * ``"eerm-gat"`` (default) and ``"eerm-gcn"``: as EERM's ``synthetic/create_synthetic.py``
      builds them (the data the LeBed authors load, ``gnn_gen='gat'`` in their
      ``param_space.txt``): labels ``argmax`` of a random 2-layer generator GNN on the
      original features (hidden 10, 10 outputs; GAT with 2 heads and ELU, GCN with ReLU; no
      standardisation), spurious features ``Generator_x(onehot(y)) + Linear(onehot(e))``: one
      random GNN on the labels for all environments plus an *additive* environment offset
      (a random linear map of the environment's one-hot, the same row for every node).
      ``spurious_dim`` and ``num_classes`` are 10 there. Weights are drawn with numpy
      (Glorot, zero biases; PyG's initialisers have the same distributions but torch's RNG),
      so the graphs equal EERM's in distribution, not bit for bit.
    * ``"approximation"``: our earlier EERM-like generator (random GCN labels standardised
      per class, spurious GCN fed ``[onehot(y), environment embedding]``); graphs built with
      it carry ``approximations`` in the set and in the report.
    """

    num_environments: int = 10
    num_classes: int = 10
    label_source: str = "gnn"
    spurious_dim: int = 10
    hidden: int = 64
    noise_levels: int = 20
    mask_levels: int = 20
    p_range: tuple[float, float] = (0.1, 0.7)
    generator: str = "eerm-gat"


GENERATORS = ("eerm-gat", "eerm-gcn", "approximation")


def _gcn_norm(edge_index: np.ndarray, n: int):
    import scipy.sparse as sp

    a = sp.csr_matrix((np.ones(edge_index.shape[1], dtype=np.float32), (edge_index[0], edge_index[1])), shape=(n, n))
    a = a + sp.eye(n, dtype=np.float32, format="csr")
    d = np.asarray(a.sum(1)).ravel()
    dinv = 1.0 / np.sqrt(d)
    return sp.diags(dinv) @ a @ sp.diags(dinv)


def _random_gnn(x: np.ndarray, a_hat, dims: Sequence[int], rng: np.random.Generator) -> np.ndarray:
    """A randomly initialised GCN (Kipf & Welling propagation), Glorot-normal weights."""
    h = x
    for i, (d_in, d_out) in enumerate(zip(dims[:-1], dims[1:], strict=True)):
        w = rng.standard_normal((d_in, d_out)).astype(np.float32) * np.float32(math.sqrt(2.0 / (d_in + d_out)))
        h = a_hat @ (h @ w)
        if i < len(dims) - 2:
            h = np.maximum(h, 0.0)
    return np.asarray(h, dtype=np.float32)


def _glorot(rng: np.random.Generator, d_in: int, d_out: int) -> np.ndarray:
    a = math.sqrt(6.0 / (d_in + d_out))
    return rng.uniform(-a, a, (d_in, d_out)).astype(np.float32)


def _random_gat(
    x: np.ndarray, edge_index: np.ndarray, dims: Sequence[int], rng: np.random.Generator, heads: int = 2
) -> np.ndarray:
    """A randomly initialised GAT as EERM's ``GAT_gen``: ``GATConv`` layers (self-loops added,
    LeakyReLU(0.2) attention, softmax over each node's in-neighbours), ``heads`` heads
    concatenated in hidden layers and averaged in the last, ELU between layers, zero biases."""
    n = x.shape[0]
    loops = np.arange(n)
    keep = edge_index[0] != edge_index[1]
    src = np.concatenate([edge_index[0][keep], loops])
    dst = np.concatenate([edge_index[1][keep], loops])
    h = x.astype(np.float32)
    n_layers = len(dims) - 1
    for i in range(n_layers):
        d_in = h.shape[1]
        d_out = dims[i + 1]
        w = _glorot(rng, d_in, heads * d_out)
        att_src = _glorot(rng, heads, d_out).reshape(heads, d_out)
        att_dst = _glorot(rng, heads, d_out).reshape(heads, d_out)
        hw = (h @ w).reshape(n, heads, d_out)
        a_s = (hw * att_src).sum(-1)  # (n, heads)
        a_d = (hw * att_dst).sum(-1)
        e = a_s[src] + a_d[dst]
        e = np.where(e > 0, e, 0.2 * e)
        e_max = np.full((n, heads), -np.inf, dtype=np.float32)
        np.maximum.at(e_max, dst, e)
        ex = np.exp(e - e_max[dst])
        den = np.zeros((n, heads), dtype=np.float32)
        np.add.at(den, dst, ex)
        alpha = ex / den[dst]
        out = np.zeros((n, heads, d_out), dtype=np.float32)
        np.add.at(out, dst, alpha[:, :, None] * hw[src])
        if i < n_layers - 1:
            h = out.reshape(n, heads * d_out)
            h = np.where(h > 0, h, np.expm1(np.minimum(h, 0)))  # ELU
        else:
            h = out.mean(1)
    return h.astype(np.float32)


def _eerm_generated(data: Data, cfg: FeatureShiftConfig, rng: np.random.Generator) -> tuple[np.ndarray, list[np.ndarray]]:
    """Labels and per-environment spurious features as EERM's ``create_synthetic.py``."""
    n = int(data.num_nodes)
    ei = data.edge_index.numpy()
    x = data.x.to_dense().numpy() if data.x.is_sparse else data.x.numpy()
    k, hid = cfg.num_classes, cfg.hidden
    if cfg.generator == "eerm-gat":
        def gen(inp: np.ndarray, dims: Sequence[int], r: np.random.Generator) -> np.ndarray:
            return _random_gat(inp, ei, dims, r)
    else:
        a_hat = _gcn_norm(ei, n)

        def gen(inp: np.ndarray, dims: Sequence[int], r: np.random.Generator) -> np.ndarray:
            return _random_gnn(inp, a_hat, dims, r)
    gen_x_seed, gen_y_seed, noise_seed = rng.integers(0, 2**63 - 1, size=3)
    y = gen(x, [x.shape[1], hid, k], np.random.default_rng(gen_y_seed)).argmax(1).astype(np.int64)
    onehot = np.zeros((n, k), dtype=np.float32)
    onehot[np.arange(n), y] = 1.0
    base = gen(onehot, [k, hid, cfg.spurious_dim], np.random.default_rng(gen_x_seed))
    nrng = np.random.default_rng(noise_seed)  # nn.Linear(num_environments, spurious_dim)
    bound = 1.0 / math.sqrt(cfg.num_environments)
    w_env = nrng.uniform(-bound, bound, (cfg.num_environments, cfg.spurious_dim)).astype(np.float32)
    b_env = nrng.uniform(-bound, bound, cfg.spurious_dim).astype(np.float32)
    spurious = [base + (w_env[e] + b_env)[None, :] for e in range(cfg.num_environments)]
    return y, spurious


def eerm_environments(data: Data, config: FeatureShiftConfig | None = None, *, seed: int = 0) -> tuple[list[Data], np.ndarray]:
    """The EERM-style environment graphs of ``data`` (see :class:`FeatureShiftConfig`).

    Returns the list of ``num_environments`` graphs (same structure and labels, features
    ``[x, x_spurious(e)]``) and the labels.
    """
    cfg = config or FeatureShiftConfig()
    if cfg.label_source not in ("gnn", "original"):
        raise ValueError(f"label_source must be 'gnn' or 'original', got {cfg.label_source!r}")
    if cfg.generator not in GENERATORS:
        raise ValueError(f"generator must be one of {GENERATORS}, got {cfg.generator!r}")
    rng = np.random.default_rng([seed, 10_000_019])
    n = int(data.num_nodes)
    if cfg.generator != "approximation":
        if cfg.label_source != "gnn":
            raise ValueError(
                f"label_source={cfg.label_source!r} needs generator='approximation'; EERM draws "
                "the labels with its generator GNN"
            )
        y, spurious = _eerm_generated(data, cfg, rng)
        return _environment_graphs(data, y, spurious, f"EERM synthetic-feature environment {{e}}, {cfg.generator}"), y
    ei = data.edge_index.numpy()
    a_hat = _gcn_norm(ei, n)
    x = data.x.to_dense().numpy() if data.x.is_sparse else data.x.numpy()
    if cfg.label_source == "gnn":
        logits = _random_gnn(x, a_hat, [x.shape[1], cfg.hidden, cfg.num_classes], rng)
        # standardise each class score so that argmax gives classes of comparable size
        logits = (logits - logits.mean(0)) / (logits.std(0) + 1e-12)
        y = logits.argmax(1).astype(np.int64)
        k = cfg.num_classes
    else:
        y = data.y.numpy().astype(np.int64)
        k = int(y.max()) + 1
    env_emb = rng.standard_normal((cfg.num_environments, k)).astype(np.float32)
    w_dims = [2 * k, cfg.hidden, cfg.spurious_dim]
    w_rng_state = rng.integers(0, 2**63 - 1)
    y_onehot = np.zeros((n, k), dtype=np.float32)
    y_onehot[np.arange(n), np.clip(y, 0, None)] = 1.0
    spurious = []
    for e in range(cfg.num_environments):
        inp = np.concatenate([y_onehot, np.broadcast_to(env_emb[e], (n, k))], axis=1)
        # the same spurious GNN for every environment: only its input (the env id) changes
        spurious.append(_random_gnn(inp, a_hat, w_dims, np.random.default_rng(w_rng_state)))
    return _environment_graphs(data, y, spurious, "EERM-style synthetic-feature environment {e}"), y


def _environment_graphs(data: Data, y: np.ndarray, spurious: Sequence[np.ndarray], label: str) -> list[Data]:
    """One graph per environment: the structure of ``data``, features ``[x, spurious[e]]``."""
    import torch
    from torch_geometric.data import Data

    x = data.x.to_dense().numpy() if data.x.is_sparse else data.x.numpy()
    envs = []
    for e, xs in enumerate(spurious):
        g = Data(
            x=torch.from_numpy(np.concatenate([x, xs], axis=1).astype(np.float32)),
            edge_index=data.edge_index.clone(),
            y=torch.from_numpy(y),
            num_nodes=int(data.num_nodes),
        )
        g.environment = e
        g.name = f"{getattr(data, 'name', 'graph')} ({label.format(e=e)})"
        envs.append(g)
    return envs


def lebed_feature_shift(data: Data, config: FeatureShiftConfig | None = None, *, seed: int = 0) -> TestGraphSet:
    """LeBed feature-shift graphs of ``data`` (Cora or Amazon-Photo): 1 train, 1 valid, 320 test.

    Parameters
    ----------
    data : Data
        The source graph (e.g. ``gs_data.load("planetoid-cora")``).
    config : FeatureShiftConfig
        Defaults: LeBed Table 1 / EERM (10 environments, 20 + 20 perturbation levels).
    seed : int
        Everything (labels, spurious features, strengths, perturbations) follows from it.
    """
    import torch

    cfg = config or FeatureShiftConfig()
    if cfg.num_environments < 3:
        raise ValueError(f"num_environments must be >= 3 (train, valid, >= 1 test), got {cfg.num_environments}")
    envs, _ = eerm_environments(data, cfg, seed=seed)
    bases = {f"env{e}": g for e, g in enumerate(envs)}
    recipes = []
    for e in range(2, cfg.num_environments):
        for kind, count in (("feature_noise", cfg.noise_levels), ("feature_mask", cfg.mask_levels)):
            recipes.extend(_Recipe(f"env{e}", kind, (("environment", e),)) for _ in range(count))
    for g in envs:
        g.eval_mask = torch.ones(g.num_nodes, dtype=torch.bool)
    out = TestGraphSet(
        bases, recipes, seed=seed, p_range=cfg.p_range, train=envs[0], valid=envs[1],
        name=f"LeBed feature shift of {getattr(data, 'name', 'graph')}",
    )
    if cfg.generator == "approximation":
        out.approximations = (
            "feature-shift environments from gs's EERM-like generator (standardised GCN labels, "
            "environment embedding as GNN input), not EERM's create_synthetic.py",
        )
    return out


# --------------------------------------------------------------------------------------------
# domain shift (ACM / DBLP / Citation)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DomainShiftConfig:
    """LeBed domain shift (Section 3.1, Table 1: ACMv9 / DBLPv8 / Citationv2, 3 domains A, D, C).

    Train and validation graphs come from the source domain (a random ``train_fraction`` of its
    nodes trains, the rest validates: ``train_mask`` / ``val_mask`` on the same graph, the
    UDAGCN protocol). Test graphs: for every domain (source included) and each of the four
    perturbations, ``graphs_per_perturbation`` graphs with ``p ~ U(0.1, 0.7)``:
    3 x 4 x 30 = 360 (+ one clean graph per domain with ``include_clean``). LeBed's Table 1
    reports 369; how the 9 extra graphs arise is in its Appendix B, missing from our copy.
    """

    graphs_per_perturbation: int = 30
    perturbations: tuple[str, ...] = ("feature_noise", "feature_mask", "class_subgraph", "edge_dropout")
    include_clean: bool = False
    train_fraction: float = 0.8
    p_range: tuple[float, float] = (0.1, 0.7)


def _check_perturbations(names: Sequence[str]) -> None:
    bad = [p for p in names if p not in PERTURBATIONS]
    if bad:
        raise ValueError(f"unknown perturbation(s) {bad}; accepted: {sorted(PERTURBATIONS)}")


def lebed_domain_shift(
    domains: Mapping[str, Data], source: str, config: DomainShiftConfig | None = None, *, seed: int = 0
) -> TestGraphSet:
    """LeBed domain-shift graphs: train on ``domains[source]``, test on perturbed graphs of all domains.

    Parameters
    ----------
    domains : mapping name -> Data
        E.g. ``{"acm": load("udagcn-acmv9"), "dblp": load("dblpv8"), "citation": load("citationv2")}``
        (or the ACDNE siblings ``acmv9`` / ``dblpv7`` / ``citationv1``). All must share the
        feature space.
    source : str
        Key of the training domain.
    """
    import torch

    cfg = config or DomainShiftConfig()
    _check_perturbations(cfg.perturbations)
    if source not in domains:
        raise ValueError(f"source {source!r} not among the domains {sorted(domains)}")
    dims = {k: int(g.x.shape[1]) for k, g in domains.items()}
    if len(set(dims.values())) != 1:
        raise ValueError(f"all domains must have the same number of features, got {dims}")
    if not 0 < cfg.train_fraction < 1:
        raise ValueError(f"train_fraction must be in (0, 1), got {cfg.train_fraction}")
    bases = {}
    for k, g in domains.items():
        b = copy.copy(g)
        b.eval_mask = torch.ones(g.num_nodes, dtype=torch.bool)
        b.domain_name = k
        bases[k] = b
    src = bases[source]
    n = int(src.num_nodes)
    perm = np.random.default_rng([seed, 20_000_003]).permutation(n)
    n_tr = int(round(cfg.train_fraction * n))
    tr = torch.zeros(n, dtype=torch.bool)
    tr[torch.from_numpy(perm[:n_tr])] = True
    train = copy.copy(src)
    train.train_mask, train.val_mask = tr, ~tr
    valid = train
    recipes = []
    for k in domains:
        if cfg.include_clean:
            recipes.append(_Recipe(k, None, (("domain_name", k),)))
        for kind in cfg.perturbations:
            recipes.extend(_Recipe(k, kind, (("domain_name", k),)) for _ in range(cfg.graphs_per_perturbation))
    return TestGraphSet(
        bases, recipes, seed=seed, p_range=cfg.p_range, train=train, valid=valid,
        name=f"LeBed domain shift from {source}",
    )


# --------------------------------------------------------------------------------------------
# temporal shift (OGB-arxiv)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TemporalShiftConfig:
    """LeBed temporal shift (Section 3.1, Table 1: OGB-arxiv, 1/1/360 graphs, 3 periods).

    Periods follow EERM's OGB-arxiv setting: train on papers up to ``train_end`` (2011),
    validate on ``(train_end, valid_end]`` (2011-2014), test on the periods (2014, 2016],
    (2016, 2018], (2018, 2020]. The graph of a period holds every paper published up to its
    end (inductive); ``eval_mask`` marks the period's papers. Each period graph is perturbed
    ``graphs_per_perturbation`` times by each of the four perturbations: 3 x 4 x 30 = 360.
    """

    train_end: int = 2011
    valid_end: int = 2014
    test_periods: tuple[tuple[int, int], ...] = ((2014, 2016), (2016, 2018), (2018, 2020))
    graphs_per_perturbation: int = 30
    perturbations: tuple[str, ...] = ("feature_noise", "feature_mask", "class_subgraph", "edge_dropout")
    p_range: tuple[float, float] = (0.1, 0.7)


def _upto(data: Data, year: np.ndarray, end: int, start: int | None) -> Data:
    import torch

    keep = np.flatnonzero(year <= end)
    g = _induced(data, keep)
    yr = year[keep]
    g.eval_mask = torch.from_numpy(yr > start) if start is not None else torch.ones(keep.size, dtype=torch.bool)
    return g


def lebed_temporal_shift(data: Data, config: TemporalShiftConfig | None = None, *, seed: int = 0) -> TestGraphSet:
    """LeBed temporal-shift graphs of OGB-arxiv (``data.node_year`` required)."""
    cfg = config or TemporalShiftConfig()
    _check_perturbations(cfg.perturbations)
    if "node_year" not in data:
        raise ValueError("data has no 'node_year': load OGB-arxiv with gs_data.load('ogbn-arxiv')")
    year = data.node_year.numpy().ravel()
    train = _upto(data, year, cfg.train_end, None)
    valid = _upto(data, year, cfg.valid_end, cfg.train_end)
    bases = {}
    recipes = []
    for start, end in cfg.test_periods:
        key = f"{start}-{end}"
        bases[key] = _upto(data, year, end, start)
        for kind in cfg.perturbations:
            recipes.extend(_Recipe(key, kind, (("period", key),)) for _ in range(cfg.graphs_per_perturbation))
    return TestGraphSet(bases, recipes, seed=seed, p_range=cfg.p_range, train=train, valid=valid, name="LeBed temporal shift")


_unused = field  # dataclasses.field kept for configs extended by users
