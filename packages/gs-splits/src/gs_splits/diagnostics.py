"""Diagnostics of a split: the statistics of appendix A of the structural-shifts paper.

* class balance per part (and ID vs OOD),
* degree distribution per part,
* property (sigma) distribution per part,
* pairwise graph-distance distribution within the ID and within the OOD nodes, distances
  measured in the whole graph (appendix A), from BFS out of a seeded sample of sources.

:func:`split_statistics` returns the numbers; :func:`summarize_split` renders Markdown.
Figures are in :mod:`gs_splits.plot` (``plot`` extra).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from gs_splits.graph import CSRGraph, as_csr_graph
from gs_splits.split import Split

__all__ = ["SplitStatistics", "split_statistics", "summarize_split", "distance_distribution", "property_histogram"]

_QUANTILES = (0.0, 0.25, 0.5, 0.75, 1.0)

#: Above this many nodes :func:`split_statistics` computes its per-part numbers on a seeded
#: uniform sample of this many nodes (``SplitStatistics.sample_size``).
SAMPLE_ABOVE = 10_000_000


@dataclass
class SplitStatistics:
    """Numbers behind the appendix-A figures.

    Attributes
    ----------
    sizes : {part: count}
    class_balance : {part: {class: fraction}} (empty without labels): the fractions are over
        the part's labelled nodes; a negative label (PyG's -1) marks a node unlabelled
    unlabelled : int, nodes with a negative label, left out of the class balance (of the
        sample's nodes in sampled mode)
    degree : {part: {"mean", "q0", "q25", "q50", "q75", "q100", "isolated"}}
    degree_hist : {part: counts of degree 0..max_degree_shown (last bin = larger)}
    sigma : {part: {"mean", "q0", ..., "q100"}} (empty without sigma)
    distances : {"ID"/"OOD": {distance: fraction}, plus "unreachable"} (empty without graph)
    distance_sources : int, number of BFS sources per group
    sample_size : int
        0 when the per-part numbers (class balance, degree, sigma, histograms) are over every
        node; otherwise the number of nodes of the seeded uniform sample they were computed on
        (split with more than ``max_nodes`` nodes; ``sizes`` always count every node).
    property_hist : dict (empty without sigma)
        The histogram of the appendix-A property panel (:func:`property_histogram`):
        ``name``, ``scale`` (``"log10"`` or ``"linear"``), ``edges``, counts ``ID`` / ``OOD``
        per bin, ``not_shown`` (nodes with property 0 on a log scale).

    Notes
    -----
    :meth:`to_dict` / :meth:`from_dict` round-trip the numbers through JSON, so a figure can be
    drawn later from stored statistics without the graph (``plot_statistics(None,
    stats=...)``).
    """

    sizes: dict[str, int]
    class_balance: dict[str, dict[int, float]] = field(default_factory=dict)
    degree: dict[str, dict[str, float]] = field(default_factory=dict)
    degree_hist: dict[str, list[int]] = field(default_factory=dict)
    sigma: dict[str, dict[str, float]] = field(default_factory=dict)
    distances: dict[str, dict[str, float]] = field(default_factory=dict)
    distance_sources: int = 0
    property_hist: dict[str, Any] = field(default_factory=dict)
    sample_size: int = 0
    unlabelled: int = 0

    def to_dict(self, groups: Sequence[str] | None = None) -> dict[str, Any]:
        """A JSON-serialisable copy (class ids become strings, as JSON object keys must).

        ``groups``: keep the per-group numbers (class balance, degree, sigma) of these groups
        only, e.g. ``("ID", "OOD")``, what :func:`gs_splits.plot.plot_statistics` draws;
        ``sizes`` always keeps every part. ``None``: everything.
        """
        def keep(d: dict[str, Any]) -> dict[str, Any]:
            return d if groups is None else {k: v for k, v in d.items() if k in groups}

        return {
            "sizes": {k: int(v) for k, v in self.sizes.items()},
            "class_balance": {k: {str(c): float(v) for c, v in cb.items()} for k, cb in keep(self.class_balance).items()},
            "degree": {k: dict(v) for k, v in keep(self.degree).items()},
            "degree_hist": {k: [int(x) for x in v] for k, v in keep(self.degree_hist).items()},
            "sigma": {k: dict(v) for k, v in keep(self.sigma).items()},
            "distances": {k: dict(v) for k, v in self.distances.items()},
            "distance_sources": int(self.distance_sources),
            "property_hist": dict(self.property_hist),
            "sample_size": int(self.sample_size),
            "unlabelled": int(self.unlabelled),
        }

    @classmethod
    def from_dict(cls, d: Any) -> SplitStatistics:
        """Inverse of :meth:`to_dict` (class ids that read as integers become ints again)."""
        if not isinstance(d, dict) or not isinstance(d.get("sizes"), dict):
            raise ValueError(
                "split statistics: expected the dict written by SplitStatistics.to_dict (with "
                f"'sizes'), got {type(d).__name__}"
            )
        unknown = set(d) - {f.name for f in fields(cls)}
        if unknown:
            raise ValueError(f"split statistics: unknown field(s) {sorted(unknown)}; accepted: "
                             f"{[f.name for f in fields(cls)]}")

        def cls_key(c: str) -> Any:
            try:
                return int(c)
            except (TypeError, ValueError):
                return c

        kw = dict(d)
        kw["class_balance"] = {k: {cls_key(c): v for c, v in cb.items()}
                               for k, cb in (d.get("class_balance") or {}).items()}
        return cls(**kw)


def _groups(split: Split) -> dict[str, np.ndarray]:
    g = dict(split.masks)
    try:
        g["ID"] = split.in_distribution
        g["OOD"] = split.out_of_distribution
    except (TypeError, ValueError):
        pass
    return g


def _quantiles(v: np.ndarray) -> dict[str, float]:
    if v.size == 0:
        return {"mean": float("nan"), **{f"q{int(q * 100)}": float("nan") for q in _QUANTILES}}
    qs = np.quantile(v, _QUANTILES)
    return {"mean": float(v.mean()), **{f"q{int(q * 100)}": float(x) for q, x in zip(_QUANTILES, qs, strict=True)}}


def distance_distribution(
    graph: CSRGraph,
    nodes: np.ndarray,
    *,
    num_sources: int = 64,
    max_targets: int = 20_000,
    seed: int | np.random.Generator = 0,
) -> dict[str, float]:
    """Distribution of shortest-path distances between pairs of ``nodes`` (appendix A).

    Distances are measured in the whole graph. BFS runs from ``min(num_sources, len(nodes))``
    seeded random sources in ``nodes``; the targets are the other members of ``nodes`` (a
    seeded subsample of ``max_targets`` of them on large sets). Returns ``{str(d): fraction}``
    with key ``"unreachable"`` for pairs in different components.
    """
    from gs_splits import _kernels  # deferred: numba loads on first call
    rng = np.random.default_rng(seed)
    nodes = np.asarray(nodes, dtype=np.int64)
    if nodes.size < 2:
        return {}
    k = min(num_sources, nodes.size)
    sources = rng.choice(nodes, size=k, replace=False)
    targets = nodes if nodes.size <= max_targets else rng.choice(nodes, size=max_targets, replace=False)
    dist = np.empty(graph.num_nodes, dtype=np.int64)
    queue = np.empty(graph.num_nodes, dtype=np.int64)
    counts: dict[int, int] = {}
    total = 0
    for s in sources:
        _kernels.bfs_distances(graph.indptr, graph.indices, int(s), dist, queue)
        dt = dist[targets[targets != s]]
        vals, cnt = np.unique(dt, return_counts=True)
        for v, c in zip(vals.tolist(), cnt.tolist(), strict=True):
            counts[v] = counts.get(v, 0) + c
        total += dt.size
    out = {str(d): c / total for d, c in sorted(counts.items()) if d >= 0}
    if -1 in counts:
        out["unreachable"] = counts[-1] / total
    return out


def property_histogram(split: Split, bins: int = 40, nodes: np.ndarray | None = None) -> dict[str, Any]:
    """Histogram of the split property (``-sigma``), ID vs OOD (appendix A, property panel).

    A heavy-tailed non-negative property (max / min positive value > 100, e.g. PageRank) is
    binned as ``log10(property)``, its zeros counted in ``not_shown``; any other property
    linearly. ``bins`` equal-width bins over the finite values. Returns ``{}`` without sigma.
    ``nodes``: count these nodes only (a sample), else every node.
    """
    if split.sigma is None:
        return {}
    sel = slice(None) if nodes is None else nodes
    prop = -np.asarray(split.sigma[sel], dtype=np.float64)
    pos = prop[prop > 0]
    logscale = bool(pos.size > 0 and np.all(prop >= 0) and pos.max() / pos.min() > 100)
    if logscale:
        with np.errstate(divide="ignore"):
            vals = np.log10(np.where(prop > 0, prop, np.nan))
    else:
        vals = prop
    ok = np.isfinite(vals)
    edges = np.histogram_bin_edges(vals[ok], bins=bins)
    out: dict[str, Any] = {
        "name": str(split.metadata.get("strategy", "")),
        "scale": "log10" if logscale else "linear",
        "edges": [float(e) for e in edges],
        "not_shown": int((prop == 0).sum()) if logscale else 0,
    }
    for key, mask in (("ID", split.in_distribution), ("OOD", split.out_of_distribution)):
        out[key] = np.histogram(vals[mask[sel] & ok], bins=edges)[0].astype(int).tolist()
    return out


def split_statistics(
    split: Split,
    graph: Any = None,
    labels: Any = None,
    *,
    num_sources: int = 64,
    max_degree_shown: int = 30,
    seed: int = 0,
    max_nodes: int | None = SAMPLE_ABOVE,
) -> SplitStatistics:
    """Compute the appendix-A statistics of ``split`` (see :class:`SplitStatistics`).

    Sampled mode: with more than ``max_nodes`` nodes (default :data:`SAMPLE_ABOVE`; None:
    never) the class balance, degree and sigma numbers and the property histogram are
    computed on a seeded uniform sample of ``max_nodes`` nodes (``sample_size`` says so);
    the graph distances are always sampled (``num_sources`` BFS sources per group).
    """
    full = _groups(split)
    stats = SplitStatistics(sizes={k: int(v.sum()) for k, v in full.items()})
    nodes = None
    groups = full
    if max_nodes is not None and split.num_nodes > max_nodes:
        rng = np.random.default_rng(seed)
        nodes = np.sort(rng.choice(split.num_nodes, size=int(max_nodes), replace=False))
        groups = {k: v[nodes] for k, v in full.items()}
        stats.sample_size = int(max_nodes)
    if labels is not None:
        y = check_labels(labels, split.num_nodes)
        y = y if nodes is None else y[nodes]
        labelled = y >= 0
        stats.unlabelled = int(np.count_nonzero(~labelled))
        classes = np.unique(y[labelled])
        for k, m in groups.items() if classes.size else ():  # no labelled node: no table
            m = m & labelled
            tot = max(int(m.sum()), 1)
            stats.class_balance[k] = {_py(c): float(np.count_nonzero(y[m] == c)) / tot for c in classes}
    if split.sigma is not None:
        sigma = split.sigma if nodes is None else split.sigma[nodes]
        for k, m in groups.items():
            stats.sigma[k] = _quantiles(sigma[m])
        stats.property_hist = property_histogram(split, nodes=nodes)
    if graph is not None:
        g = as_csr_graph(graph, split.num_nodes)
        deg = g.degree if nodes is None else g.degree[nodes]
        for k, m in groups.items():
            d = deg[m]
            stats.degree[k] = {**_quantiles(d.astype(np.float64)), "isolated": int(np.count_nonzero(d == 0))}
            stats.degree_hist[k] = np.bincount(np.minimum(d, max_degree_shown), minlength=max_degree_shown + 1).tolist()
        if "ID" in groups:
            stats.distance_sources = num_sources
            for k in ("ID", "OOD"):
                stats.distances[k] = distance_distribution(
                    g, np.flatnonzero(full[k]), num_sources=num_sources, seed=seed
                )
    return stats


def check_labels(labels: Any, num_nodes: int) -> np.ndarray:
    """``labels`` as a 1-D int64 array of class ids, one per node (a negative id marks an
    unlabelled node); a one-line :class:`ValueError` names what is wrong otherwise."""
    if type(labels).__module__.split(".")[0] == "torch" and hasattr(labels, "detach"):
        labels = labels.detach().cpu().numpy()
    y = np.asarray(labels)
    if y.ndim == 2 and y.shape[0] == num_nodes and y.shape[1] > 1:
        raise ValueError(f"labels must be class ids, one per node, got shape {y.shape} (one-hot "
                         "or scores? pass labels.argmax(1))")
    y = y.ravel()
    if y.size != num_nodes:
        raise ValueError(f"labels must have one entry per node ({num_nodes}), got {y.size}")
    if y.dtype == bool:  # two classes, False / True
        return y.astype(np.int64)
    if not np.issubdtype(y.dtype, np.number):
        raise ValueError(f"labels must be integer class ids, got {y.dtype}")
    if not np.issubdtype(y.dtype, np.integer):
        bad = y[~(np.isfinite(y) & (y == np.round(y)))]
        if bad.size:
            raise ValueError(f"labels must be integer class ids, got {bad.size} non-integer "
                             f"value(s), e.g. {bad[0]!r}")
    return y.astype(np.int64)


def _py(v: Any) -> Any:
    return v.item() if hasattr(v, "item") else v


def _fmt(x: float) -> str:
    if x != x:  # nan
        return "-"
    if x == 0 or 1e-3 <= abs(x) < 1e5:
        return f"{x:.4g}"
    return f"{x:.3e}"


def summarize_split(
    split: Split,
    graph: Any = None,
    labels: Any = None,
    *,
    num_sources: int = 64,
    seed: int = 0,
    stats: SplitStatistics | None = None,
) -> str:
    """Markdown report of a split with the appendix-A statistics.

    Sections: what the split is (metadata), part sizes, property (sigma) distribution,
    degree distribution, class balance (with ``labels``), and the pairwise graph-distance
    distribution within ID and OOD (with ``graph``; sampled BFS from ``num_sources``
    sources per group). ``stats``: the statistics already computed by
    :func:`split_statistics` for this split (then they are not computed again).
    """
    st = stats if stats is not None else split_statistics(
        split, graph, labels, num_sources=num_sources, seed=seed)
    md = split.metadata
    lines = [f"# Split report: {md.get('kind', 'split')} / {md.get('strategy', md.get('info_level', ''))}", ""]
    keys = ("strategy", "sizes", "seed", "num_nodes", "num_edges", "graph_fingerprint", "info_level",
            "source", "target", "group_rule", "gs_splits_version")
    lines += [f"- **{k}**: `{md[k]}`" for k in keys if k in md]
    if "graph_normalisation" in md:
        gn = md["graph_normalisation"]
        lines.append(
            "- **graph normalisation**: "
            + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in gn.items())
        )
    lines += ["", "## Part sizes", "", "| part | nodes | fraction |", "|---|---:|---:|"]
    n = split.num_nodes
    for k, v in st.sizes.items():
        lines.append(f"| {k} | {v} | {v / n:.3f} |")
    if st.sample_size:
        lines += ["", f"The statistics below are computed on a seeded uniform sample of {st.sample_size} "
                      f"of the {n} nodes (sampled mode, more than {st.sample_size} nodes)."]
    if st.sigma:
        lines += ["", "## Property distribution (sigma = -property; ID = smallest sigma)", "",
                  "| part | mean | min | q25 | median | q75 | max |", "|---|---:|---:|---:|---:|---:|---:|"]
        for k, q in st.sigma.items():
            lines.append(f"| {k} | " + " | ".join(_fmt(q[c]) for c in ("mean", "q0", "q25", "q50", "q75", "q100")) + " |")
    if st.degree:
        lines += ["", "## Degree distribution", "",
                  "| part | mean | min | q25 | median | q75 | max | isolated |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for k, q in st.degree.items():
            lines.append(f"| {k} | " + " | ".join(_fmt(q[c]) for c in ("mean", "q0", "q25", "q50", "q75", "q100")) + f" | {q['isolated']} |")
    if st.class_balance:
        classes = list(next(iter(st.class_balance.values())))
        note = (f"; {st.unlabelled} node(s) with a negative label (unlabelled) left out"
                if st.unlabelled else "")
        lines += ["", f"## Class balance (fraction of each class in the part{note})", "",
                  "| part | " + " | ".join(str(c) for c in classes) + " |", "|---|" + "---:|" * len(classes)]
        for k, cb in st.class_balance.items():
            lines.append(f"| {k} | " + " | ".join(f"{cb[c]:.3f}" for c in classes) + " |")
    if st.distances:
        keys_d = sorted({d for v in st.distances.values() for d in v if d != "unreachable"}, key=int)
        lines += ["", f"## Pairwise graph distances within ID / OOD (BFS from {st.distance_sources} sampled sources per group, whole graph)", "",
                  "| group | mean | " + " | ".join(keys_d) + " | unreachable |", "|---|---:|" + "---:|" * (len(keys_d) + 1)]
        for k, dd in st.distances.items():
            reach = {int(a): b for a, b in dd.items() if a != "unreachable"}
            tot = sum(reach.values())
            mean = sum(a * b for a, b in reach.items()) / tot if tot else float("nan")
            lines.append(f"| {k} | {_fmt(mean)} | " + " | ".join(f"{dd.get(d, 0.0):.3f}" for d in keys_d) + f" | {dd.get('unreachable', 0.0):.3f} |")
    lines.append("")
    return "\n".join(lines)
