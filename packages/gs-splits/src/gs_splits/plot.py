"""Figures of a split (``plot`` extra: matplotlib, scikit-learn).

* :func:`plot_statistics` — appendix A: class balance, degree, property and graph-distance
  distributions, ID vs OOD;
* :func:`plot_graph` — appendix H: the split drawn on the graph (largest connected component,
  ID blue, OOD red); in two steps, :func:`graph_picture` (the layout, storable as JSON:
  :class:`GraphPicture`) and :func:`draw_graph_picture`;
* :func:`plot_features` — appendix I: the split in node-feature space (t-SNE, ID blue, OOD red).

Every ``plot_*`` / ``draw_*`` function returns a ``matplotlib.figure.Figure`` and draws nothing
on screen; matplotlib is imported only by them (:func:`graph_picture` and the statistics need
numpy and scipy only).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from gs_splits import _kernels
from gs_splits.diagnostics import SplitStatistics, split_statistics
from gs_splits.graph import CSRGraph, as_csr_graph
from gs_splits.split import Split

__all__ = [
    "plot_statistics", "plot_graph", "plot_features", "graph_layout",
    "GraphPicture", "graph_picture", "draw_graph_picture",
]

#: the command that installs the ``plot`` extra's packages today (gs-splits is not on PyPI
#: yet; from a checkout, ``pip install './packages/gs-splits[plot]'``); the extra's ranges
PLOT_INSTALL = "pip install 'matplotlib>=3.7' 'scikit-learn>=1.3'"

ID_COLOR = "tab:blue"
OOD_COLOR = "tab:red"


def _plt():
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(f"plotting needs matplotlib (the plot extra): {PLOT_INSTALL}") from exc
    return plt


def plot_statistics(split: Split | None, graph: Any = None, labels: Any = None, *,
                    stats: SplitStatistics | None = None, seed: int = 0):
    """Appendix-A figure: 2x2 panels of ID vs OOD distributions.

    ``stats`` (e.g. :meth:`SplitStatistics.from_dict` of statistics stored earlier) is drawn
    as given, and then ``split`` may be ``None``: the figure needs neither the graph nor the
    split.
    """
    plt = _plt()
    if stats is None and split is None:
        raise ValueError("plot_statistics needs a split, or the statistics to draw (stats=...)")
    st = stats if stats is not None else split_statistics(split, graph, labels, seed=seed)
    ph = st.property_hist
    if not ph and split is not None and split.sigma is not None:
        from gs_splits.diagnostics import property_histogram

        ph = property_histogram(split)
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    ax = axes[0, 0]
    if st.class_balance:
        classes = list(st.class_balance["ID"])
        x = np.arange(len(classes))
        ax.bar(x - 0.2, [st.class_balance["ID"][c] for c in classes], 0.4, color=ID_COLOR, label="ID")
        ax.bar(x + 0.2, [st.class_balance["OOD"][c] for c in classes], 0.4, color=OOD_COLOR, label="OOD")
        ax.set_xticks(x, [str(c) for c in classes])
        ax.set_xlabel("class")
        ax.set_ylabel("fraction of nodes")
        ax.legend()
    else:
        ax.text(0.5, 0.5, "no labels given", ha="center", va="center")
    ax.set_title("Class balance")
    ax = axes[0, 1]
    if st.degree_hist:
        for k, c in (("ID", ID_COLOR), ("OOD", OOD_COLOR)):
            h = np.asarray(st.degree_hist[k], dtype=float)
            ax.plot(np.arange(h.size), h / max(h.sum(), 1), "o-", color=c, label=k, ms=3)
        ax.set_xlabel(f"degree (last point = {len(h) - 1} or more)")
        ax.set_ylabel("fraction of nodes")
        ax.legend()
    ax.set_title("Degree distribution")
    ax = axes[1, 0]
    if ph:
        edges = np.asarray(ph["edges"], dtype=np.float64)
        if ph["scale"] == "log10":  # heavy-tailed (PageRank-like): log10, zeros counted apart
            xlabel = f"log10(property) ({ph['not_shown']} nodes with 0 not shown)"
        else:
            xlabel = "property (= -sigma)"
        for key, color in (("ID", ID_COLOR), ("OOD", OOD_COLOR)):
            ax.hist(edges[:-1], bins=edges, weights=np.asarray(ph[key], dtype=np.float64),
                    color=color, alpha=0.6, label=key)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("nodes")
        ax.legend()
    name = ph.get("name") if ph else None
    if not name and split is not None:
        name = split.metadata.get("strategy", "")
    ax.set_title(f"Property distribution ({name or ''})")
    ax = axes[1, 1]
    if st.distances:
        for k, c in (("ID", ID_COLOR), ("OOD", OOD_COLOR)):
            dd = {int(a): b for a, b in st.distances[k].items() if a != "unreachable"}
            if dd:
                xs = sorted(dd)
                ax.bar(np.array(xs) + (-0.2 if k == "ID" else 0.2), [dd[x] for x in xs], 0.4, color=c, label=k)
        ax.set_xlabel("shortest-path distance")
        ax.set_ylabel("fraction of pairs")
        ax.legend()
    ax.set_title(f"Graph distances (BFS from {st.distance_sources} sampled sources)")
    fig.suptitle("Split statistics (structural-shifts appendix A)")
    fig.tight_layout()
    return fig


def _lcc_nodes(g: CSRGraph) -> np.ndarray:
    ncomp, lab = connected_components(g.to_scipy(), directed=False)
    big = np.argmax(np.bincount(lab))
    return np.flatnonzero(lab == big)


def graph_layout(g: CSRGraph, *, iterations: int = 100, repulsion_samples: int = 256, seed: int = 0) -> np.ndarray:
    """2-D force-directed layout (Fruchterman-Reingold forces, sampled repulsion).

    Starts from the spectral layout (eigenvectors 2-3 of the normalised adjacency, i.e. the
    smallest non-trivial ones of the normalised Laplacian); each iteration applies spring
    forces along every edge and repulsion from ``repulsion_samples`` seeded random nodes
    (rescaled to all nodes), so one iteration costs O(m + n * repulsion_samples).
    """
    n = g.num_nodes
    rng = np.random.default_rng(seed)
    if n <= 3:
        return rng.random((n, 2))
    a = g.to_scipy()
    deg = np.asarray(a.sum(axis=1)).ravel()
    dinv = sp.diags(1.0 / np.sqrt(np.maximum(deg, 1)))
    try:
        vals, vecs = sp.linalg.eigsh(dinv @ a @ dinv, k=3, which="LA", tol=1e-4, maxiter=20 * n, v0=rng.random(n) + 0.5)
        pos = vecs[:, np.argsort(vals)[::-1][1:3]]
        # spectral coordinates stretch long chains; rank-transform them to spread the core
        pos = np.argsort(np.argsort(pos, axis=0), axis=0) / n
    except Exception:  # noqa: BLE001 - the layout is cosmetic; fall back to random
        pos = rng.random((n, 2))
    pos = (pos - pos.mean(0)) / (pos.std(0) + 1e-12)
    pos += rng.normal(scale=0.05, size=pos.shape)
    kk = np.sqrt(4.0 / n)
    rows = np.repeat(np.arange(n), np.diff(g.indptr))
    cols = g.indices
    s = min(repulsion_samples, n)
    t = 0.3
    for _ in range(iterations):
        sample = pos[rng.choice(n, size=s, replace=False)]
        d = pos[:, None, :] - sample[None, :, :]
        dist2 = np.maximum((d**2).sum(-1), 1e-6)
        disp = (d * (kk * kk / dist2)[..., None]).sum(1) * (n / s)
        d = pos[rows] - pos[cols]
        dist = np.sqrt(np.maximum((d**2).sum(-1), 1e-12))
        np.add.at(disp, rows, -d * (dist / kk)[:, None])
        length = np.sqrt(np.maximum((disp**2).sum(-1), 1e-12))
        pos += disp / length[:, None] * np.minimum(length, t)[:, None]
        t *= 0.97
    return pos


#: format tag of :meth:`GraphPicture.to_dict`
GRAPH_PICTURE_FORMAT = "gs-splits graph picture v1"
_QMAX = 65535


def _b64(a: np.ndarray, dtype: str) -> str:
    return base64.b64encode(np.ascontiguousarray(a, dtype=np.dtype(dtype)).tobytes()).decode("ascii")


def _unb64(text: str, dtype: str, count: int) -> np.ndarray:
    a = np.frombuffer(base64.b64decode(text.encode("ascii"), validate=True), dtype=np.dtype(dtype))
    if a.size != count:
        raise ValueError(f"graph picture: expected {count} values, got {a.size} (truncated or damaged)")
    return a


@dataclass
class GraphPicture:
    """What the appendix-H picture draws, without the graph: a force layout of the largest
    connected component (:func:`graph_layout`), the OOD flag of each drawn node and the edges
    among the drawn nodes.

    Attributes
    ----------
    positions : (k, 2) float
    ood : (k,) bool
    edges : (2, m) int64, indices into ``positions``
    title : str
        Which nodes are drawn (component size, BFS or random sample).
    strategy : str
    """

    positions: np.ndarray
    ood: np.ndarray
    edges: np.ndarray
    title: str
    strategy: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Compact JSON-serialisable form (about 8 bytes per node and 5 per edge): positions
        quantised to 16 bits over their bounding box, OOD flags as bits, edges as integers,
        each base64-encoded little-endian."""
        pos = np.asarray(self.positions, dtype=np.float64).reshape(-1, 2)
        k = pos.shape[0]
        lo = pos.min(0) if k else np.zeros(2)
        hi = pos.max(0) if k else np.ones(2)
        span = np.where(hi > lo, hi - lo, 1.0)
        q = np.rint((pos - lo) / span * _QMAX)
        edtype = "<u2" if k <= _QMAX + 1 else "<u4"
        return {
            "format": GRAPH_PICTURE_FORMAT,
            "num_nodes": int(k),
            "num_edges": int(np.asarray(self.edges).shape[1]),
            "lo": [float(x) for x in lo],
            "hi": [float(x) for x in hi],
            "positions": _b64(q, "<u2"),
            "ood": base64.b64encode(np.packbits(np.asarray(self.ood, dtype=bool))).decode("ascii"),
            "edges_dtype": edtype,
            "edges": _b64(np.asarray(self.edges), edtype),
            "title": self.title,
            "strategy": self.strategy,
        }

    @classmethod
    def from_dict(cls, d: Any) -> GraphPicture:
        """Inverse of :meth:`to_dict` (positions to within 1/65535 of their range)."""
        if not isinstance(d, dict) or d.get("format") != GRAPH_PICTURE_FORMAT:
            got = d.get("format") if isinstance(d, dict) else type(d).__name__
            raise ValueError(f"graph picture: expected a dict with format {GRAPH_PICTURE_FORMAT!r}, got {got!r}")
        if d.get("edges_dtype") not in ("<u2", "<u4"):
            raise ValueError(f"graph picture: edges_dtype must be '<u2' or '<u4', got {d.get('edges_dtype')!r}")
        k, m = int(d["num_nodes"]), int(d["num_edges"])
        lo, hi = np.asarray(d["lo"], dtype=np.float64), np.asarray(d["hi"], dtype=np.float64)
        span = np.where(hi > lo, hi - lo, 1.0)
        q = _unb64(d["positions"], "<u2", 2 * k).reshape(k, 2).astype(np.float64)
        bits = np.frombuffer(base64.b64decode(d["ood"].encode("ascii"), validate=True), dtype=np.uint8)
        ood = np.unpackbits(bits)[:k].astype(bool)
        if ood.size != k:
            raise ValueError(f"graph picture: expected {k} OOD flags, got {ood.size} (truncated or damaged)")
        edges = _unb64(d["edges"], d["edges_dtype"], 2 * m).reshape(2, m).astype(np.int64)
        if m and edges.max() >= k:
            raise ValueError(f"graph picture: an edge refers to node {int(edges.max())}, but {k} nodes are drawn")
        return cls(lo + q / _QMAX * span, ood, edges, str(d.get("title", "")), str(d.get("strategy", "")))


def graph_picture(split: Split, graph: Any, *, max_nodes: int = 3000, show_nodes: int | None = None,
                  seed: int = 0, iterations: int = 50) -> GraphPicture:
    """Lay out the split's graph for the appendix-H picture (drawn by :func:`draw_graph_picture`).

    The largest connected component is laid out (other components are dropped, as in the
    paper); above ``max_nodes`` nodes, the first ``max_nodes`` of a BFS from its highest-degree
    node. ``show_nodes``: keep a seeded uniform random sample of that many laid-out nodes (and
    the edges among them), so that a picture can be stored small; ID and OOD keep their
    proportions in expectation. Each reduction is said in ``title``.
    """
    if show_nodes is not None and (isinstance(show_nodes, bool) or not isinstance(show_nodes, (int, np.integer))
                                   or show_nodes < 1):
        raise ValueError(f"show_nodes must be a positive integer or None, got {show_nodes!r}")
    g = as_csr_graph(graph, split.num_nodes)
    nodes = _lcc_nodes(g)
    title = f"largest connected component ({nodes.size} of {g.num_nodes} nodes)"
    if nodes.size > max_nodes:
        start = nodes[np.argmax(g.degree[nodes])]
        dist = np.empty(g.num_nodes, dtype=np.int64)
        queue = np.empty(g.num_nodes, dtype=np.int64)
        _kernels.bfs_distances(g.indptr, g.indices, int(start), dist, queue)
        nodes = np.sort(queue[:max_nodes])
        title += f"; BFS sample of {max_nodes} nodes"
    sub = g.subgraph(nodes)
    pos = graph_layout(sub, iterations=iterations, seed=seed)
    ood = split.out_of_distribution[nodes]
    e = sub.edge_index()
    if show_nodes is not None and show_nodes < nodes.size:
        keep = np.sort(np.random.default_rng(seed).choice(nodes.size, size=int(show_nodes), replace=False))
        local = np.full(nodes.size, -1, dtype=np.int64)
        local[keep] = np.arange(keep.size)
        both = (local[e[0]] >= 0) & (local[e[1]] >= 0)
        e = local[e[:, both]]
        pos, ood = pos[keep], ood[keep]
        title += f"; a random sample of {keep.size} of them drawn"
    return GraphPicture(pos, np.asarray(ood, dtype=bool), np.asarray(e, dtype=np.int64), title,
                        str(split.metadata.get("strategy", "")))


def draw_graph_picture(picture: GraphPicture):
    """Draw a :class:`GraphPicture`: ID nodes blue, OOD nodes red, edges light grey."""
    plt = _plt()
    pos, ood, e = picture.positions, picture.ood, picture.edges
    size = 6 if pos.shape[0] > 1500 else 12
    fig, ax = plt.subplots(figsize=(8, 8))
    from matplotlib.collections import LineCollection

    ax.add_collection(LineCollection(np.stack([pos[e[0]], pos[e[1]]], axis=1), colors="0.8", linewidths=0.2, zorder=0))
    ax.scatter(pos[~ood, 0], pos[~ood, 1], s=size, c=ID_COLOR, label="ID", zorder=1)
    ax.scatter(pos[ood, 0], pos[ood, 1], s=size, c=OOD_COLOR, label="OOD", zorder=2)
    if pos.shape[0]:
        lo, hi = np.percentile(pos, [1, 99], axis=0)
        pad = 0.05 * (hi - lo)
        ax.set_xlim(lo[0] - pad[0], hi[0] + pad[0])
        ax.set_ylim(lo[1] - pad[1], hi[1] + pad[1])
    ax.set_axis_off()
    ax.legend(loc="upper right")
    ax.set_title(f"{picture.strategy} split on the graph: {picture.title}\n(view cropped to the central 98% of nodes per axis)", fontsize=9)
    fig.tight_layout()
    return fig


def plot_graph(split: Split, graph: Any, *, max_nodes: int = 3000, seed: int = 0, iterations: int = 50):
    """Appendix-H picture: the largest connected component, ID nodes blue, OOD nodes red.

    Components other than the largest are dropped (as in the paper). Above ``max_nodes`` the
    picture shows the first ``max_nodes`` nodes of a BFS from the highest-degree node of the
    component (said in the title). The same as ``draw_graph_picture(graph_picture(...))``.
    """
    return draw_graph_picture(graph_picture(split, graph, max_nodes=max_nodes, seed=seed, iterations=iterations))


def plot_features(split: Split, features: Any, *, max_nodes: int = 5000, seed: int = 0, perplexity: float = 30.0):
    """Appendix-I picture: t-SNE of the node features, ID nodes blue, OOD nodes red.

    Features (dense or scipy.sparse) are reduced to 50 dimensions with truncated SVD first;
    above ``max_nodes`` nodes a seeded random subsample is shown (said in the title).
    """
    plt = _plt()
    from sklearn.decomposition import TruncatedSVD
    from sklearn.manifold import TSNE

    if type(features).__module__.split(".")[0] == "torch" and hasattr(features, "detach"):
        features = features.detach().cpu().numpy()
    # CSR: rows can be selected from it in every scipy (a COO matrix, as scipy.io.loadmat may
    # return, cannot be indexed before scipy 1.17)
    x = sp.csr_matrix(features) if sp.issparse(features) else np.asarray(features, dtype=np.float64)
    n = x.shape[0]
    if n != split.num_nodes:
        raise ValueError(f"features must have one row per node ({split.num_nodes}), got {n}")
    rng = np.random.default_rng(seed)
    nodes = np.arange(n) if n <= max_nodes else np.sort(rng.choice(n, max_nodes, replace=False))
    x = x[nodes]
    if x.shape[1] > 50:
        x = TruncatedSVD(50, random_state=seed).fit_transform(x)
    elif sp.issparse(x):
        x = x.toarray()
    emb = TSNE(2, perplexity=min(perplexity, (len(nodes) - 1) / 3), random_state=seed, init="pca").fit_transform(x)
    ood = split.out_of_distribution[nodes]
    fig, ax = plt.subplots(figsize=(8, 8))
    ax.scatter(emb[~ood, 0], emb[~ood, 1], s=5, c=ID_COLOR, label="ID")
    ax.scatter(emb[ood, 0], emb[ood, 1], s=5, c=OOD_COLOR, label="OOD")
    ax.set_axis_off()
    ax.legend(loc="upper right")
    sub = "" if len(nodes) == n else f" (random sample of {len(nodes)} of {n} nodes)"
    ax.set_title(f"{split.metadata.get('strategy', '')} split in feature space (t-SNE){sub}", fontsize=9)
    fig.tight_layout()
    return fig
