"""Figures of a split (``plot`` extra: matplotlib, scikit-learn).

* :func:`plot_statistics` — appendix A: class balance, degree, property and graph-distance
  distributions, ID vs OOD;
* :func:`plot_graph` — appendix H: the split drawn on the graph (largest connected component,
  ID blue, OOD red);
* :func:`plot_features` — appendix I: the split in node-feature space (t-SNE, ID blue, OOD red).

Every function returns a ``matplotlib.figure.Figure`` and draws nothing on screen.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from gs_splits import _kernels
from gs_splits.diagnostics import SplitStatistics, split_statistics
from gs_splits.graph import CSRGraph, as_csr_graph
from gs_splits.split import Split

__all__ = ["plot_statistics", "plot_graph", "plot_features", "graph_layout"]

ID_COLOR = "tab:blue"
OOD_COLOR = "tab:red"


def _plt():
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError("plotting needs the plot extra: pip install 'gs-splits[plot]'") from exc
    return plt


def plot_statistics(split: Split, graph: Any = None, labels: Any = None, *, stats: SplitStatistics | None = None, seed: int = 0):
    """Appendix-A figure: 2x2 panels of ID vs OOD distributions."""
    plt = _plt()
    st = stats if stats is not None else split_statistics(split, graph, labels, seed=seed)
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
    if split.sigma is not None:
        prop = -split.sigma
        pos_ = prop[prop > 0]
        logscale = pos_.size > 0 and np.all(prop >= 0) and pos_.max() / pos_.min() > 100
        if logscale:  # heavy-tailed (PageRank-like): log10 of the property, zeros counted apart
            vals, xlabel = np.log10(np.where(prop > 0, prop, np.nan)), "log10(property)"
            xlabel += f" ({int((prop == 0).sum())} nodes with 0 not shown)"
        else:
            vals, xlabel = prop, "property (= -sigma)"
        ok = np.isfinite(vals)
        bins = np.histogram_bin_edges(vals[ok], bins=40)
        ax.hist(vals[split.in_distribution & ok], bins=bins, color=ID_COLOR, alpha=0.6, label="ID")
        ax.hist(vals[split.out_of_distribution & ok], bins=bins, color=OOD_COLOR, alpha=0.6, label="OOD")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("nodes")
        ax.legend()
    ax.set_title(f"Property distribution ({split.metadata.get('strategy', '')})")
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


def plot_graph(split: Split, graph: Any, *, max_nodes: int = 3000, seed: int = 0, iterations: int = 50):
    """Appendix-H picture: the largest connected component, ID nodes blue, OOD nodes red.

    Components other than the largest are dropped (as in the paper). Above ``max_nodes`` the
    picture shows the first ``max_nodes`` nodes of a BFS from the highest-degree node of the
    component (said in the title).
    """
    plt = _plt()
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
    fig, ax = plt.subplots(figsize=(8, 8))
    e = sub.edge_index()
    from matplotlib.collections import LineCollection

    ax.add_collection(LineCollection(np.stack([pos[e[0]], pos[e[1]]], axis=1), colors="0.8", linewidths=0.2, zorder=0))
    ax.scatter(pos[~ood, 0], pos[~ood, 1], s=6, c=ID_COLOR, label="ID", zorder=1)
    ax.scatter(pos[ood, 0], pos[ood, 1], s=6, c=OOD_COLOR, label="OOD", zorder=2)
    lo, hi = np.percentile(pos, [1, 99], axis=0)
    pad = 0.05 * (hi - lo)
    ax.set_xlim(lo[0] - pad[0], hi[0] + pad[0])
    ax.set_ylim(lo[1] - pad[1], hi[1] + pad[1])
    ax.set_axis_off()
    ax.legend(loc="upper right")
    ax.set_title(f"{split.metadata.get('strategy', '')} split on the graph: {title}\n(view cropped to the central 98% of nodes per axis)", fontsize=9)
    fig.tight_layout()
    return fig


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
    x = features if sp.issparse(features) else np.asarray(features, dtype=np.float64)
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
