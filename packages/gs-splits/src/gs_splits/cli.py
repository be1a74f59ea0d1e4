"""Command line: ``gs-splits make`` and ``gs-splits report``.

Examples::

    gs-splits make cora-ml/data.mat --strategy locality --out splits/coraml-locality
    gs-splits report splits/coraml-locality.npz --graph cora-ml/data.mat --out-dir report/
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

from gs_splits.__about__ import __version__

_STRATEGIES = ("popularity", "locality", "density", "random", "degree", "kcore", "eigenvector", "betweenness")

_MAKE_HELP = """\
Create a structural-shift split of a graph (structural-shifts paper, sections 3-4).

Nodes are sorted by sigma = -property: the nodes with the largest property are
in-distribution (ID) and are shuffled into in_train / in_valid / in_test; the rest are
out-of-distribution (OOD): out_valid (less shifted) then out_test (most shifted).

Strategies: popularity = PageRank, locality = Personalized PageRank from the top-PageRank
node, density = local clustering coefficient, random = uniform baseline; extra: degree,
kcore, eigenvector, betweenness (approximate).

Graph files: .mat (edges or adjacency, e.g. the paper's CoraML), .npz (edge_index or a
scipy.sparse adjacency), .npy (2, E) array, or a text edge list ('u v' per line, ids 0..n-1).
The graph is made undirected and simple (self-loops and duplicates dropped, isolated nodes
kept); what was changed is printed and stored in the split's metadata.

Writes OUT.npz (masks, sigma, domains) and OUT.json (metadata)."""

_REPORT_HELP = """\
Explain a split: part sizes, property / degree / class / graph-distance distributions
(appendix A of the structural-shifts paper) as a Markdown file, plus figures: the
statistics panel, the split drawn on the graph (largest connected component, ID blue,
OOD red; appendix H) and, when the graph file has node features, a t-SNE picture of the
split in feature space (appendix I). Figures need the plot extra:
pip install 'gs-splits[plot]'."""


def _sizes(text: str) -> tuple[float, ...] | str:
    if ":" in text:
        return text
    try:
        vals = tuple(float(x) for x in text.replace(" ", "").split(","))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"--sizes: expected 5 comma-separated fractions like 0.3,0.1,0.1,0.1,0.4 or a preset 50:50 / 70:30 / 90:10, got {text!r}"
        ) from exc
    return vals


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="gs-splits",
        description="Structural and scientific distribution-shift splits for graphs (no torch needed).",
        epilog="Run 'gs-splits make --help' or 'gs-splits report --help' for details.",
    )
    ap.add_argument("--version", action="version", version=f"gs-splits {__version__}")
    ap.add_argument("-v", "--verbose", action="store_true", help="log progress and graph normalisation details")
    sub = ap.add_subparsers(dest="command", required=True)

    mk = sub.add_parser("make", help="create a split file from a graph", description=_MAKE_HELP,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    mk.add_argument("graph", type=Path, help="graph file (.mat, .npz, .npy or text edge list)")
    mk.add_argument("--strategy", "-s", default="popularity", choices=_STRATEGIES,
                    help="node property that defines the shift (default: popularity)")
    mk.add_argument("--property-file", type=Path, default=None,
                    help="use your own property instead: a .npy file with one value per node (largest = ID)")
    mk.add_argument("--sizes", type=_sizes, default=(0.3, 0.1, 0.1, 0.1, 0.4),
                    help="fractions in_train,in_valid,in_test,out_valid,out_test summing to 1, or a paper preset "
                         "50:50 (default 0.3,0.1,0.1,0.1,0.4), 70:30, 90:10")
    mk.add_argument("--seed", type=int, default=0, help="random seed (ties, ID shuffle; default 0)")
    mk.add_argument("--num-nodes", type=int, default=None, help="number of nodes if the highest ids have no edges")
    mk.add_argument("--domains", type=int, default=10, help="number of property domains stored per node (appendix F, default 10)")
    mk.add_argument("--out", "-o", type=Path, required=True, help="output path stem: writes OUT.npz and OUT.json")

    rp = sub.add_parser("report", help="Markdown summary and figures of a split", description=_REPORT_HELP,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    rp.add_argument("split", type=Path, help="split file written by 'gs-splits make' (.npz)")
    rp.add_argument("--graph", "-g", type=Path, required=True, help="the graph file the split was made from")
    rp.add_argument("--labels", type=Path, default=None, help=".npy class labels (default: from the graph file if it has them)")
    rp.add_argument("--out-dir", "-o", type=Path, required=True, help="folder for report.md and the PNG figures")
    rp.add_argument("--no-figures", action="store_true", help="write only the Markdown summary")
    rp.add_argument("--no-tsne", action="store_true", help="skip the t-SNE feature-space picture (slowest figure)")
    rp.add_argument("--tsne-max-nodes", type=int, default=5000, help="t-SNE on a random sample of at most this many nodes (default 5000)")
    rp.add_argument("--distance-sources", type=int, default=64, help="BFS sources sampled per group for graph distances (default 64)")
    rp.add_argument("--seed", type=int, default=0)
    return ap


def _make(args: argparse.Namespace) -> int:
    import numpy as np

    from gs_splits.io import load_graph
    from gs_splits.split import structural_split

    gf = load_graph(args.graph)
    strategy = args.strategy
    if args.property_file is not None:
        strategy = np.load(args.property_file, allow_pickle=False)
    t = time.perf_counter()
    split = structural_split(gf.graph, strategy, sizes=args.sizes, seed=args.seed,
                             num_nodes=args.num_nodes or gf.num_nodes, num_domains=args.domains)
    split.metadata["graph_file"] = str(args.graph)
    if args.property_file is not None:
        split.metadata["property_file"] = str(args.property_file)
    path = split.save(args.out)
    gn = split.metadata["graph_normalisation"]
    print(f"graph: {split.metadata['num_nodes']} nodes, {gn['num_edges']} undirected edges "
          f"(removed {gn['self_loops']} self-loops, {gn['duplicate_edges']} duplicates; symmetrised "
          f"{gn['one_directional_pairs']} one-directional edges; {gn['isolated_nodes']} isolated nodes kept)")
    print(f"split ({split.metadata['strategy']}, seed {args.seed}) in {time.perf_counter() - t:.2f} s: "
          + ", ".join(f"{k} {v}" for k, v in split.sizes().items()))
    print(f"wrote {path} and {path.with_suffix('.json')}")
    return 0


def _report(args: argparse.Namespace) -> int:
    import numpy as np

    from gs_splits.diagnostics import split_statistics, summarize_split
    from gs_splits.io import load_graph
    from gs_splits.split import Split

    split = Split.load(args.split)
    gf = load_graph(args.graph)
    labels = np.load(args.labels, allow_pickle=False) if args.labels else gf.labels
    args.out_dir.mkdir(parents=True, exist_ok=True)
    from gs_splits.graph import as_csr_graph

    g = as_csr_graph(gf.graph, split.num_nodes)
    fp = split.metadata.get("graph_fingerprint")
    if fp and fp != g.fingerprint():
        print("warning: this graph is not the one the split was made from (fingerprint differs)", file=sys.stderr)
    md = summarize_split(split, g, labels, num_sources=args.distance_sources, seed=args.seed)
    figures = []
    if not args.no_figures:
        try:
            from gs_splits import plot
        except ImportError as exc:  # pragma: no cover
            print(f"figures skipped: {exc}", file=sys.stderr)
        else:
            stats = split_statistics(split, g, labels, num_sources=args.distance_sources, seed=args.seed)
            jobs = [("statistics.png", "Appendix-A statistics", lambda: plot.plot_statistics(split, g, labels, stats=stats)),
                    ("graph.png", "Split on the graph (appendix H)", lambda: plot.plot_graph(split, g, seed=args.seed))]
            if gf.features is not None and not args.no_tsne:
                jobs.append(("features_tsne.png", "Split in feature space, t-SNE (appendix I)",
                             lambda: plot.plot_features(split, gf.features, max_nodes=args.tsne_max_nodes, seed=args.seed)))
            import matplotlib.pyplot as plt

            for name, title, make in jobs:
                print(f"drawing {name} ...", file=sys.stderr)
                fig = make()
                fig.savefig(args.out_dir / name, dpi=110)
                plt.close(fig)
                figures.append((name, title))
    if figures:
        md += "\n## Figures\n\n" + "\n".join(f"### {t}\n\n![{t}]({n})\n" for n, t in figures)
    out = args.out_dir / "report.md"
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(md)
    tmp.replace(out)
    print(f"wrote {out}" + "".join(f", {args.out_dir / n}" for n, _ in figures))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``gs-splits`` console script."""
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        if args.command == "make":
            return _make(args)
        return _report(args)
    except (ValueError, TypeError, FileNotFoundError) as exc:
        print(f"gs-splits {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
