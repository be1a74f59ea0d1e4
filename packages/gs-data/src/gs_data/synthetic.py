"""The embedded **synthetic** default graph (numpy + scipy only: importing this never imports torch).

No real citation graph may be redistributed inside the package, so the demo and the quick tests
use a synthetic graph built to behave like one (CoraML is the model: ~3,000 nodes, 7 classes,
mean degree ~5-6, edge homophily ~0.8, sparse binary bag-of-words features):

1. **Communities.** ``num_classes * communities_per_class`` communities (sub-topics) placed on a
   ring in random order, so that neighbouring communities often belong to different classes.
   Class sizes are unequal (Dirichlet with ``class_size_concentration``).
2. **Degree-corrected SBM** (Karrer & Newman, 2011). Node propensities ``theta ~ 1 + Pareto(a)``
   give heavy-tailed degrees. Each edge starts at a node drawn with probability proportional to
   ``theta``; its target community is drawn from a block matrix that keeps most edges inside the
   community, favours same-class communities (homophily) and decays with ring distance
   (locality); the target node is drawn proportional to ``theta`` inside that community.
3. **Triadic closure.** Every node tries ``Poisson(closure_rate * degree)`` times to join two of
   its neighbours; the attempt succeeds when both neighbours are in the same community, and with
   probability ``cross_closure_prob`` otherwise. Clustering coefficients therefore vary from node
   to node, and nodes whose neighbourhood spans several topics have few triangles.
4. **Features.** A node's document has ``1 + Poisson(words_per_node)`` word draws; a word comes
   from the node's community topic (a sparse Dirichlet over the vocabulary mixed with its class
   topic) with probability ``1 - background``, else from a Zipf-like background. Features are
   binary word presence (scipy CSR, float32).
5. The largest connected component is kept and nodes are relabelled in order.

All three structural shifts of gs-splits (popularity, locality, density) produce a clear GCN
accuracy drop on it; see the package README for the measured figures and the script that
reproduces them (``benchmarks/synthetic_shifts.py``).

The default (``seed=0``) is fixed: the same bytes on every run and machine (only integer draws
and IEEE arithmetic of numpy's own generators are involved), checked by a checksum test.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

__all__ = ["SyntheticConfig", "SyntheticGraph", "default_graph", "generate", "fingerprint"]


@dataclass(frozen=True)
class SyntheticConfig:
    """Parameters of the synthetic citation-like graph (defaults: the embedded default graph)."""

    num_nodes: int = 3600
    num_classes: int = 7
    communities_per_class: int = 4
    num_features: int = 1200
    class_size_concentration: float = 8.0
    avg_degree: float = 4.0
    degree_exponent: float = 2.2
    max_propensity: float = 60.0
    p_in_community: float = 0.70
    same_class_weight: float = 4.0
    ring_decay: float = 1.0
    closure_rate: float = 0.35
    cross_closure_prob: float = 0.05
    words_per_node: float = 12.0
    background: float = 0.6
    topic_concentration: float = 0.05
    class_topic_weight: float = 0.35
    keep_largest_component: bool = True


@dataclass
class SyntheticGraph:
    """A generated graph: ``edge_index`` (2, E) int64 undirected, ``x`` CSR float32, ``y`` int64."""

    edge_index: np.ndarray
    x: sp.csr_matrix
    y: np.ndarray
    community: np.ndarray
    name: str
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def num_nodes(self) -> int:
        return int(self.y.shape[0])


def _undirected(r: np.ndarray, c: np.ndarray, n: int) -> np.ndarray:
    rr = np.concatenate([r, c]).astype(np.int64)
    cc = np.concatenate([c, r]).astype(np.int64)
    keep = rr != cc
    key = np.unique(rr[keep] * n + cc[keep])
    return np.stack([key // n, key % n])


def generate(config: SyntheticConfig | None = None, *, seed: int | np.random.Generator = 0) -> SyntheticGraph:
    """Generate a synthetic citation-like graph (see the module docstring for the model).

    Parameters
    ----------
    config : SyntheticConfig, optional
        Model parameters; the defaults give the embedded default graph.
    seed : int or numpy.random.Generator
        Source of randomness. The same int gives the same bytes on any machine.
    """
    cfg = config or SyntheticConfig()
    if cfg.num_nodes < 10 or cfg.num_classes < 2 or cfg.communities_per_class < 1:
        raise ValueError(f"config too small: {cfg}; need num_nodes >= 10, num_classes >= 2")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    n, k = cfg.num_nodes, cfg.num_classes
    ncom = k * cfg.communities_per_class

    # 1. classes and communities
    class_p = rng.dirichlet(np.full(k, cfg.class_size_concentration))
    y = rng.choice(k, size=n, p=class_p)
    sub = rng.integers(0, cfg.communities_per_class, size=n)
    community = y * cfg.communities_per_class + sub
    com_class = np.repeat(np.arange(k), cfg.communities_per_class)
    ring_pos = rng.permutation(ncom)  # position of each community on the ring

    # 2. degree-corrected SBM
    theta = 1.0 + rng.pareto(cfg.degree_exponent - 1.0, size=n)
    theta = np.minimum(theta, cfg.max_propensity)
    d = np.abs(ring_pos[:, None] - ring_pos[None, :])
    d = np.minimum(d, ncom - d).astype(np.float64)
    block = np.exp(-d / cfg.ring_decay)
    block *= np.where(com_class[:, None] == com_class[None, :], cfg.same_class_weight, 1.0)
    np.fill_diagonal(block, 0.0)
    block = block / block.sum(1, keepdims=True) * (1.0 - cfg.p_in_community)
    np.fill_diagonal(block, cfg.p_in_community)
    m = int(round(n * cfg.avg_degree / 2))
    src = rng.choice(n, size=m, p=theta / theta.sum())
    tgt = np.empty(m, dtype=np.int64)
    src_com = community[src]
    members = [np.flatnonzero(community == c) for c in range(ncom)]
    tgt_com = np.empty(m, dtype=np.int64)
    for c in range(ncom):
        idx = np.flatnonzero(src_com == c)
        if idx.size:
            tgt_com[idx] = rng.choice(ncom, size=idx.size, p=block[c])
    for c in range(ncom):
        idx = np.flatnonzero(tgt_com == c)
        if idx.size and members[c].size:
            w = theta[members[c]]
            tgt[idx] = members[c][rng.choice(members[c].size, size=idx.size, p=w / w.sum())]
        elif idx.size:
            tgt[idx] = src[idx]  # empty community: becomes a self-loop, dropped below
    ei = _undirected(src, tgt, n)

    # 3. triadic closure
    adj = sp.csr_matrix((np.ones(ei.shape[1]), (ei[0], ei[1])), shape=(n, n))
    deg = np.diff(adj.indptr)
    attempts = rng.poisson(cfg.closure_rate * deg)
    new_r, new_c = [], []
    for v in np.flatnonzero((deg >= 2) & (attempts > 0)):
        nb = adj.indices[adj.indptr[v] : adj.indptr[v + 1]]
        a = int(attempts[v])
        pair = rng.integers(0, nb.size, size=(a, 2))
        u, w = nb[pair[:, 0]], nb[pair[:, 1]]
        ok = (u != w) & (
            (community[u] == community[w]) | (rng.random(a) < cfg.cross_closure_prob)
        )
        new_r.append(u[ok])
        new_c.append(w[ok])
    if new_r:
        ei = _undirected(np.concatenate([ei[0], *new_r]), np.concatenate([ei[1], *new_c]), n)

    # 4. bag-of-words features
    v = cfg.num_features
    zipf = 1.0 / np.arange(1, v + 1) ** 1.1
    background = zipf[rng.permutation(v)]
    background /= background.sum()
    class_topic = rng.dirichlet(np.full(v, cfg.topic_concentration), size=k)
    com_topic = rng.dirichlet(np.full(v, cfg.topic_concentration), size=ncom)
    com_topic = cfg.class_topic_weight * class_topic[com_class] + (1 - cfg.class_topic_weight) * com_topic
    length = 1 + rng.poisson(cfg.words_per_node, size=n)
    rows, cols = [], []
    for c in range(ncom):
        nodes = members[c]
        if nodes.size == 0:
            continue
        lens = length[nodes]
        owner = np.repeat(nodes, lens)
        from_topic = rng.random(owner.size) >= cfg.background
        words = np.empty(owner.size, dtype=np.int64)
        words[from_topic] = rng.choice(v, size=int(from_topic.sum()), p=com_topic[c])
        words[~from_topic] = rng.choice(v, size=int((~from_topic).sum()), p=background)
        rows.append(owner)
        cols.append(words)
    r = np.concatenate(rows)
    c_ = np.concatenate(cols)
    x = sp.csr_matrix((np.ones(r.size, dtype=np.float32), (r, c_)), shape=(n, v))
    x.sum_duplicates()
    x.data[:] = 1.0

    # 5. largest connected component
    if cfg.keep_largest_component:
        adj = sp.csr_matrix((np.ones(ei.shape[1]), (ei[0], ei[1])), shape=(n, n))
        _, lab = connected_components(adj, directed=False)
        big = np.argmax(np.bincount(lab))
        keep = np.flatnonzero(lab == big)
        remap = np.full(n, -1, dtype=np.int64)
        remap[keep] = np.arange(keep.size)
        e_keep = (remap[ei[0]] >= 0) & (remap[ei[1]] >= 0)
        ei = np.stack([remap[ei[0][e_keep]], remap[ei[1][e_keep]]])
        x = x[keep]
        y = y[keep]
        community = community[keep]
    x = sp.csr_matrix(x, dtype=np.float32)
    x.sort_indices()
    name = "synthetic-default (synthetic DC-SBM citation-like graph)"
    return SyntheticGraph(
        edge_index=np.ascontiguousarray(ei, dtype=np.int64),
        x=x,
        y=np.ascontiguousarray(y, dtype=np.int64),
        community=np.ascontiguousarray(community, dtype=np.int64),
        name=name,
        params=asdict(cfg),
    )


def default_graph(seed: int = 0) -> SyntheticGraph:
    """The embedded **synthetic** default graph (about 3,000 nodes, 7 classes); ``seed=0`` is the
    fixed default used by the demo and the quick tests."""
    g = generate(SyntheticConfig(), seed=seed)
    if seed != 0:
        g.name = f"{g.name}, seed={seed}"
    return g


def fingerprint(g: SyntheticGraph) -> str:
    """SHA-256 over the graph's arrays (edge_index, CSR features, labels), by
    :func:`gs_data.fingerprint` (the one content fingerprint of gs)."""
    from gs_data._fingerprint import fingerprint as content_fingerprint

    return content_fingerprint({"edge_index": g.edge_index, "x": g.x, "y": g.y})
