"""Command line: ``gs-splits make``, ``gs-splits report`` and ``gs-splits convert``.

Examples::

    gs-splits make cora-ml/data.mat --strategy locality --out splits/coraml-locality
    gs-splits report splits/coraml-locality.npz --graph cora-ml/data.mat --out-dir report/
    gs-splits convert papers.bin papers-csr/ --memory 14G
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import sys
import time
from pathlib import Path

from gs_splits.__about__ import __version__

_MAKE_HELP = """\
Create a structural-shift split of a graph (structural-shifts paper, sections 3-4).

Nodes are sorted by sigma = -property: the nodes with the largest property are
in-distribution (ID) and are shuffled into in_train / in_valid / in_test; the rest are
out-of-distribution (OOD): out_valid (less shifted) then out_test (most shifted).

Strategies (gs_splits.strategies, with any registered by register_strategy):
{strategies}

Graph files: .mat (edges or adjacency, e.g. the paper's CoraML), .npz (edge_index or a
scipy.sparse adjacency), .npy (2, E) array, or a text edge list ('u v' per line, ids 0..n-1;
'#' comments; columns after the first two, e.g. weights, are ignored with a warning).
The graph is made undirected and simple (self-loops and duplicates dropped, isolated nodes
kept); what was changed is printed and stored in the split's metadata. Node ids with large
gaps are refused unless --relabel numbers them 0..k-1 (mapping saved as OUT.node_ids.npy).

When more than --tie-fraction of the nodes share one property value (e.g. clustering 0),
the split inside that group is the seeded tie-break, not the property: a warning, or an
error with --fail-on-ties. metadata["ties"] always describes the largest tie group.

Graphs larger than memory (issue 32): GRAPH may also be an on-disk CSR folder written by
'gs-splits convert'. Above the --memory budget (default 60% of the RAM) the split runs out
of core: an edge file is first converted into an on-disk CSR (GRAPH.csr/ beside it, OUT.csr/
when that folder is read-only, or --workdir; reused by the next run, every strategy), and PageRank, Personalized PageRank and the clustering coefficient
are computed by streaming its degree-ordered copy from disk. The split files are the same,
bit for bit, on either path; one line says which path ran and why (--path forces one).

Writes OUT.npz (masks, sigma, domains) and OUT.json (metadata). Errors are one line naming
the file, exit status 2."""

_REPORT_HELP = """\
Explain a split: part sizes, property / degree / class / graph-distance distributions
(appendix A of the structural-shifts paper) as a Markdown file, plus figures: the
statistics panel, the split drawn on the graph (largest connected component, ID blue,
OOD red; appendix H) and, when the graph file has node features, a t-SNE picture of the
split in feature space (appendix I). Figures need the plot extra (matplotlib, scikit-learn):
pip install 'matplotlib>=3.7' 'scikit-learn>=1.3'."""


_CONVERT_HELP = """\
Convert an edge file into an on-disk symmetric CSR folder, for graphs larger than memory
(issue 32): OUT_DIR/indptr.npy and indices.npy (numpy files, np.load(mmap_mode="r") maps
them) and OUT_DIR/meta.json (node count, normalisation counts, checksum).

The graph is made undirected and simple exactly as 'make' does (self-loops and duplicates
dropped, edges given in one direction symmetrised; the counts are printed and kept in
meta.json); the arrays equal those of gs_splits.as_csr_graph bit for bit. It is an external
sort: sorted run files in OUT_DIR/.partial (16 bytes per edge on disk), merged into the CSR,
within --memory. Interrupted (Ctrl-C, killed)? Run the same command again: it resumes after
the last finished step. A folder holding another input's conversion is refused (--restart).

Edge files: .npy (2, E) or (E, 2); .npz with 'edge_index' or 'edges'; a raw binary file of
int32 / int64 ids laid out (2, E), with the sidecar FILE.json that
benchmarks/synthetic_papers100m.py writes, or --dtype; anything else is a text edge list
('u v' per line, '#' comments, extra columns ignored). Node ids must be below 2**31.
Errors are one line naming the file, exit status 2; interrupted, exit status 130."""


class _ProgressBar:
    """``progress(phase, done, total)`` for long library work, on stderr: a bar redrawn in place
    on a terminal, otherwise one line per phase and then one every ``interval`` seconds."""

    LABELS = {"read": "reading edges", "premerge": "merging runs", "merge": "merging into CSR",
              "checksum": "checksum"}

    def __init__(self, stream=None, interval: float | None = None):
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.interval = interval if interval is not None else (0.25 if self.tty else 30.0)
        self.phase: str | None = None
        self.last = 0.0
        self.start = time.monotonic()

    def __call__(self, phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        if phase == self.phase and now - self.last < self.interval and done < total:
            return
        if phase != self.phase and self.phase is not None and self.tty:
            self.stream.write("\n")
        self.phase = phase
        self.last = now
        frac = min(1.0, done / total) if total else 1.0
        secs = int(now - self.start)
        text = (f"{self.LABELS.get(phase, phase):<17} [{'#' * int(frac * 30):<30}] {100 * frac:5.1f}%  "
                f"{secs // 3600}:{secs // 60 % 60:02d}:{secs % 60:02d}")
        self.stream.write(f"\r{text}" if self.tty else f"{text}\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty and self.phase is not None:
            self.stream.write("\n")
            self.stream.flush()
        self.phase = None


def _memory(text: str) -> int:
    from gs_splits.ondisk import parse_memory

    try:
        return parse_memory(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("memory: ")) from None


def _sizes(text: str) -> tuple[float, ...] | str:
    """``--sizes``: a preset of :data:`~gs_splits.PAPER_SIZES` or 5 fractions, checked here by
    the library's own rule (``split._check_sizes``), so the error names the option."""
    from gs_splits.names import PAPER_SIZES
    from gs_splits.split import _check_sizes

    accepted = f"5 comma-separated fractions like 0.3,0.1,0.1,0.1,0.4 or a preset {' / '.join(PAPER_SIZES)}"
    if ":" in text:
        if text not in PAPER_SIZES:
            raise argparse.ArgumentTypeError(f"expected {accepted}, got {text!r}")
        return text
    try:
        vals = tuple(float(x) for x in text.replace(" ", "").split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {accepted}, got {text!r}") from None
    try:
        _check_sizes(vals, 5)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{exc} ({accepted})") from None
    return vals


def _checked(convert, ok, kind: str, accepted: str):
    """argparse ``type=``: ``convert`` the text, then require ``ok(value)``."""

    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {kind} {accepted}, got {text!r}") from None
        if not ok(value):
            raise argparse.ArgumentTypeError(f"must be {accepted}, got {value}")
        return value

    return parse


_positive_int = _checked(int, lambda v: v >= 1, "an integer", ">= 1")
_fraction = _checked(float, lambda v: 0 < v <= 1, "a fraction", "in (0, 1]")
_seed = _checked(int, lambda v: v >= 0, "an integer", ">= 0")
#: ``--num-nodes``: node ids stay below 2**31, as the on-disk path stores them (int32 CSR
#: indices); 10**12 nodes ran out of memory in the graph's name.
MAX_NUM_NODES = 2**31 - 1
_num_nodes = _checked(int, lambda v: 1 <= v <= MAX_NUM_NODES, "an integer", f"from 1 to 2**31 - 1 = {MAX_NUM_NODES}")


def _nonblank(kind):
    """argparse ``type=``: refuse an empty or blank path ('' became ``Path('.')``, and ' ' wrote
    ' .npz' in the current folder; issue 56), then convert with ``kind``."""

    def parse(text: str):
        if not text.strip():
            raise argparse.ArgumentTypeError(f"an empty or blank path ({text!r}); give a file or folder name")
        return kind(text)

    return parse


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit 2) instead of the usage block."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _parser() -> argparse.ArgumentParser:
    ap = _Parser(
        prog="gs-splits",
        description="Structural and scientific distribution-shift splits for graphs (no torch needed).",
        epilog="Run 'gs-splits make --help', 'gs-splits report --help' or 'gs-splits convert --help' for details.",
    )
    ap.add_argument("--version", action="version", version=f"gs-splits {__version__}")
    ap.add_argument("-v", "--verbose", action="store_true", help="log progress and graph normalisation details")
    sub = ap.add_subparsers(dest="command", required=True, parser_class=_Parser)
    # -v is accepted after the subcommand too ('gs-splits make ... -v'); SUPPRESS keeps a -v
    # given before it
    verbose = argparse.ArgumentParser(add_help=False)
    verbose.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                         help="log progress and graph normalisation details")

    from gs_splits.strategies import STRATEGIES  # read when the parser is built: yours too

    listing = "\n".join(f"  {s.name:<12} {s.description}".rstrip() for s in STRATEGIES.values())
    mk = sub.add_parser("make", help="create a split file from a graph", parents=[verbose],
                        description=_MAKE_HELP.format(strategies=listing),
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    mk.add_argument("graph", type=Path, help="graph file (.mat, .npz, .npy, raw binary or text edge list) or an on-disk CSR folder")
    prop = mk.add_mutually_exclusive_group()
    prop.add_argument("--strategy", "-s", default=None, choices=list(STRATEGIES),
                      help="node property that defines the shift (default: popularity)")
    prop.add_argument("--property-file", type=Path, default=None,
                      help="use your own property instead of --strategy: a .npy file with one value per node (largest = ID)")
    mk.add_argument("--sizes", type=_sizes, default=(0.3, 0.1, 0.1, 0.1, 0.4),
                    help="fractions in_train,in_valid,in_test,out_valid,out_test summing to 1, or a paper preset "
                         "50:50 (default 0.3,0.1,0.1,0.1,0.4), 70:30, 90:10")
    mk.add_argument("--seed", type=_seed, default=0, help="random seed (ties, ID shuffle; default 0, >= 0)")
    mk.add_argument("--num-nodes", type=_num_nodes, default=None, help="number of nodes if the highest ids have no edges (1 to 2**31 - 1)")
    mk.add_argument("--domains", type=_positive_int, default=None, help="number of property domains stored per node (appendix F; from 1 to the number of nodes; default 10, or the number of nodes if fewer)")
    mk.add_argument("--domain-scope", choices=["in_train", "all"], default="in_train",
                    help="nodes the domain bins are cut over: the training nodes (appendix F, default) or all nodes (the earlier rule)")
    mk.add_argument("--relabel", action="store_true",
                    help="number the node ids that occur 0..k-1 (for ids with gaps); writes OUT.node_ids.npy, the original id of each node")
    mk.add_argument("--fail-on-ties", action="store_true",
                    help="fail (exit 2) instead of warning when more than --tie-fraction of the nodes share one property value")
    mk.add_argument("--tie-fraction", type=_fraction, default=None,
                    help="largest tolerated tie group, as a fraction of the nodes (default 0.5)")
    mk.add_argument("--memory", type=_memory, default=None,
                    help="memory budget, e.g. 16G or 512M (default: 60%% of the RAM): above it the split runs out of core")
    mk.add_argument("--path", choices=["auto", "memory", "ondisk"], default="auto",
                    help="in-memory or out-of-core computation (default auto: by the --memory budget)")
    mk.add_argument("--workdir", type=_nonblank(Path), default=None,
                    help="folder for the on-disk CSR of an edge file on the out-of-core path (default: GRAPH.csr beside it, else OUT.csr)")
    mk.add_argument("--out", "-o", type=_nonblank(str), required=True, help="output path stem: writes OUT.npz and OUT.json; a folder when it ends in '/' (writes OUT/<graph>-<strategy>.npz and .json)")

    rp = sub.add_parser("report", help="Markdown summary and figures of a split", description=_REPORT_HELP, parents=[verbose],
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    rp.add_argument("split", type=Path, help="split file written by 'gs-splits make' (.npz)")
    rp.add_argument("--graph", "-g", type=Path, required=True, help="the graph file (or on-disk CSR folder) the split was made from")
    rp.add_argument("--labels", type=Path, default=None, help=".npy integer class id per node, negative = unlabelled (default: from the graph file if it has them)")
    rp.add_argument("--out-dir", "-o", type=_nonblank(Path), required=True, help="folder for report.md and the PNG figures")
    rp.add_argument("--no-figures", action="store_true", help="write only the Markdown summary")
    rp.add_argument("--allow-other-graph", action="store_true",
                    help="report even if the graph is not the one the split was made from (fingerprint differs)")
    rp.add_argument("--no-tsne", action="store_true", help="skip the t-SNE feature-space picture (slowest figure)")
    rp.add_argument("--tsne-max-nodes", type=_positive_int, default=5000, help="t-SNE on a random sample of at most this many nodes (default 5000, >= 1)")
    rp.add_argument("--distance-sources", type=_positive_int, default=64, help="BFS sources sampled per group for graph distances (default 64, >= 1)")
    rp.add_argument("--seed", type=_seed, default=0, help="seed of the sampled BFS sources, t-SNE sample and figure layouts (default 0, >= 0)")
    rp.add_argument("--max-nodes", type=_positive_int, default=None,
                    help="statistics on a seeded sample of this many nodes above it (default 10000000; the report states the sample size)")
    cv = sub.add_parser("convert", help="edge file -> on-disk CSR folder (graphs larger than memory)", parents=[verbose],
                        description=_CONVERT_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    cv.add_argument("edges", type=Path, help="edge file (.npy, .npz, raw binary with sidecar or --dtype, or text)")
    cv.add_argument("out_dir", type=_nonblank(Path), help="folder to write (indptr.npy, indices.npy, meta.json); resumes a partial one")
    cv.add_argument("--memory", type=_memory, default=None,
                    help="budget of the conversion's arrays, e.g. 16G or 512M (default: 60%% of the RAM; the process adds ~0.2 GB)")
    cv.add_argument("--num-nodes", type=_num_nodes, default=None, help="number of nodes if the highest ids have no edges (1 to 2**31 - 1)")
    cv.add_argument("--dtype", choices=["int32", "int64"], default=None,
                    help="id type of a raw binary edge file without a sidecar FILE.json")
    cv.add_argument("--restart", action="store_true", help="discard what OUT_DIR holds (another input's conversion too) and start over")
    cv.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    return ap


def _convert(args: argparse.Namespace) -> int:
    from gs_splits.ondisk import convert_edges

    bar = None if args.no_progress else _ProgressBar()
    t = time.perf_counter()
    try:
        g = convert_edges(args.edges, args.out_dir, num_nodes=args.num_nodes, dtype=args.dtype,
                          memory=args.memory, progress=bar, restart=args.restart)
    finally:
        if bar is not None:
            bar.close()
    st = g.stats
    print(f"graph: {g.num_nodes} nodes, {st['num_edges']} undirected edges (removed {st['self_loops']} "
          f"self-loops, {st['duplicate_edges']} duplicates; symmetrised {st['one_directional_pairs']} "
          f"one-directional edges; {st['isolated_nodes']} isolated nodes kept)")
    print(f"wrote {args.out_dir} (indptr.npy, indices.npy, meta.json) in {time.perf_counter() - t:.1f} s; "
          f"checksum {g.checksum}")
    return 0


def _make(args: argparse.Namespace) -> int:
    import numpy as np

    from gs_splits._atomic import atomic_write
    from gs_splits.io import load_graph
    from gs_splits.split import TIE_WARNING_FRACTION, TiedPropertyError, _paths, structural_split

    if args.property_file is None and args.strategy is None:
        args.strategy = "popularity"  # None by default only so that argparse sees --strategy given
    out = _out_stem(args)
    which, graph, num_nodes = _make_input(args, out)
    node_ids = None
    if graph is None:
        gf = load_graph(args.graph, relabel=args.relabel, num_nodes=args.num_nodes)
        graph, node_ids = gf.graph, gf.node_ids
        num_nodes = args.num_nodes if args.num_nodes is not None else gf.num_nodes
    strategy = args.strategy
    if args.property_file is not None:
        strategy = _load_npy(args.property_file, "property file")
    t = time.perf_counter()
    try:
        split = structural_split(graph, strategy, sizes=args.sizes, seed=args.seed,
                                 num_nodes=num_nodes,
                                 num_domains=args.domains, domain_scope=args.domain_scope,
                                 on_ties="raise" if args.fail_on_ties else "warn",
                                 tie_fraction=args.tie_fraction or TIE_WARNING_FRACTION,
                                 memory=args.memory, path=which)
    except (ValueError, TypeError) as exc:  # name the input file the problem came from
        if str(exc).startswith("num_domains"):  # the option, not the file
            raise ValueError(f"argument --domains: {str(exc)[len('num_domains '):]} ({args.graph})") from None
        src = args.graph  # structural_split's checks of a given property start with "property"
        if args.property_file is not None and (str(exc).startswith("property")
                                               or isinstance(exc, TiedPropertyError)):
            src = args.property_file
        raise ValueError(f"{src}: {exc}") from None
    split.metadata["graph_file"] = str(args.graph)
    if args.property_file is not None:
        split.metadata["property_file"] = str(args.property_file)
    ids_path = None
    if node_ids is not None:
        npz, _ = _paths(out)
        ids_path = npz.with_name(npz.name[: -len(".npz")] + ".node_ids.npy")
        split.metadata["relabel"] = {"node_ids_file": ids_path.name, "num_ids": int(gf.node_ids.size),
                                     "rule": "node i is the i-th smallest original id"}
    path = split.save(out)
    if ids_path is not None:
        atomic_write(ids_path, lambda f: np.save(f, node_ids))
    gn = split.metadata["graph_normalisation"]
    print(f"graph: {split.metadata['num_nodes']} nodes, {gn['num_edges']} undirected edges "
          f"(removed {gn['self_loops']} self-loops, {gn['duplicate_edges']} duplicates; symmetrised "
          f"{gn['one_directional_pairs']} one-directional edges; {gn['isolated_nodes']} isolated nodes kept)")
    how = (f"property of {args.property_file}" if args.property_file is not None
           else split.metadata["strategy"])
    print(f"split ({how}, seed {args.seed}) in {time.perf_counter() - t:.2f} s: "
          + ", ".join(f"{k} {v}" for k, v in split.sizes().items()))
    print(f"wrote {path} and {path.with_suffix('.json')}" + (f" and {ids_path}" if ids_path else ""))
    return 0


def _make_input(args: argparse.Namespace, out: Path) -> tuple[str, object, int | None]:
    """``(path, graph, num_nodes)`` of ``make``, after printing which path runs and why;
    ``graph`` is an :class:`~gs_splits.ondisk.OnDiskCSR` (a folder given, or an edge file converted)
    or None (load the file in memory)."""
    from gs_splits.ondisk import choose_path, convert_edges, open_ondisk

    if not args.graph.exists():
        raise FileNotFoundError(f"graph file not found: {args.graph}")
    if args.graph.is_dir():
        if args.relabel:
            raise ValueError(f"{args.graph}: --relabel needs a graph file, not an on-disk CSR folder")
        g = open_ondisk(args.graph)
        which, why = choose_path(g.num_nodes, 2 * g.num_edges, args.memory, args.path)
        _say_path(which, why)
        return which, g, args.num_nodes
    edges, kind = _edge_count(args.graph)
    if edges is None or (args.path == "memory" and kind != "raw"):
        if args.path == "ondisk":
            raise ValueError(f"{args.graph}: the out-of-core path reads edge files (.npy, .npz with edges, "
                             "raw binary, text), not this file; use --path memory")
        _say_path("memory", "path='memory' asked for" if args.path == "memory" else
                  "not an edge file the out-of-core path reads")
        return "memory", None, None
    # the node count is unknown before reading: n = E (at most 2**31) bounds most graphs
    which, why = choose_path(min(edges, 2**31), 2 * edges, args.memory, args.path)
    _say_path(which, why)
    if which == "memory" and kind != "raw":  # a raw binary file is read by the conversion only
        return which, None, None
    if args.relabel:
        raise ValueError(f"{args.graph}: --relabel works on the in-memory path only (the out-of-core "
                         f"path was chosen: {why}); number the ids 0..n-1 first, or use --path memory")
    folder = args.workdir
    if folder is None:  # beside the graph, shared by every strategy's run; else beside the split
        beside = args.graph.with_name(args.graph.name + ".csr")
        folder = beside if os.access(args.graph.parent, os.W_OK) or beside.is_dir() else out.with_name(out.name + ".csr")
    if (folder / "meta.json").is_file():
        print(f"using the on-disk CSR {folder} (converted from {args.graph} before)")
    else:
        print(f"converting {args.graph} into the on-disk CSR {folder} (reused by the next runs) ...")
    g = convert_edges(args.graph, folder, num_nodes=args.num_nodes, memory=args.memory)
    return which, g, args.num_nodes


def _say_path(which: str, why: str) -> None:
    print(f"path: {'out-of-core' if which == 'ondisk' else 'in-memory'} ({why})")


def _edge_count(path: Path) -> tuple[int | None, str | None]:
    """``(edges, kind)`` of an edge file the on-disk conversion reads (text: about one edge
    per 10 bytes), or ``(None, None)`` for other graph files (.mat, a sparse-matrix .npz)."""
    from gs_splits.ondisk import csr as ondisk

    if not path.is_file() or path.suffix.lower() == ".mat":
        return None, None
    try:
        src = ondisk._open_source(path, None)
    except (ValueError, OSError):
        return None, None
    try:
        total = int(src.total())
        return (total if src.kind != "text" else max(1, total // 10)), src.kind
    finally:
        src.close()


def _out_stem(args: argparse.Namespace) -> Path:
    """The stem ``make`` writes ``.npz`` / ``.json`` to: ``--out`` itself, or, when it ends in a
    path separator (``--out splits/``), ``<that folder>/<graph stem>-<strategy>`` (before issue
    34 ``Path("o/")`` dropped the slash and ``o.npz`` was written beside the folder)."""
    text = str(args.out)
    if not text.endswith(("/", os.sep)):
        return Path(text)
    name = (f"{args.graph.stem}-property-{args.property_file.stem}" if args.property_file is not None
            else f"{args.graph.stem}-{args.strategy}")
    return Path(text) / name


def _load_npy(path: Path, what: str):
    import numpy as np

    if not path.is_file():
        raise FileNotFoundError(f"{what} not found: {path}")
    with open(path, "rb") as f:
        magic = f.read(6)
    if magic != b"\x93NUMPY":
        raise ValueError(f"{path}: not a .npy file (the {what} must be an array written by numpy.save)")
    try:
        return np.load(path, allow_pickle=False)
    except Exception as exc:  # noqa: BLE001 - any reader failure names the file
        raise ValueError(f"{path}: cannot read this {what} as a .npy array (truncated or damaged: "
                         f"{type(exc).__name__}: {exc})") from None


def _labels(path: Path, num_nodes: int):
    """The ``--labels`` file, checked here so that an error names it."""
    from gs_splits.diagnostics import check_labels

    try:
        return check_labels(_load_npy(path, "labels file"), num_nodes)
    except ValueError as exc:
        msg = str(exc)
        raise ValueError(msg if msg.startswith(f"{path}:") else f"{path}: {msg}") from None


def _report(args: argparse.Namespace) -> int:
    import importlib.util

    from gs_splits._atomic import atomic_write
    from gs_splits.diagnostics import split_statistics, summarize_split
    from gs_splits.graph import as_csr_graph
    from gs_splits.io import load_graph
    from gs_splits.split import Split

    split = Split.load(args.split)
    relabel = bool(split.metadata.get("relabel"))
    if args.graph.is_dir():  # an on-disk CSR folder: memory-mapped, its stored checksum
        from gs_splits.ondisk import open_ondisk

        od = open_ondisk(args.graph)
        gf = None
        labels = _labels(args.labels, split.num_nodes) if args.labels else None
        g = as_csr_graph(od, split.num_nodes)
        fingerprint = od.checksum
    else:
        gf = load_graph(args.graph, relabel=relabel, num_nodes=None if relabel else split.num_nodes)
        labels = _labels(args.labels, split.num_nodes) if args.labels else gf.labels
        g = as_csr_graph(gf.graph, split.num_nodes)
        fingerprint = g.fingerprint()
    fp = split.metadata.get("graph_fingerprint")
    if fp and fp != fingerprint:
        if not args.allow_other_graph:
            raise ValueError(
                f"{args.graph}: not the graph {args.split} was made from (fingerprint differs; made "
                f"from {split.metadata.get('graph_file', 'an unknown file')}); pass that graph, or "
                "--allow-other-graph to report anyway"
            )
        print(f"warning: {args.graph} is not the graph the split was made from (fingerprint differs); "
              "reporting anyway (--allow-other-graph)", file=sys.stderr)
    # computed once: the Markdown summary and the statistics figure draw the same numbers
    from gs_splits.diagnostics import SAMPLE_ABOVE

    stats = split_statistics(split, g, labels, num_sources=args.distance_sources, seed=args.seed,
                             max_nodes=args.max_nodes or SAMPLE_ABOVE)
    md = summarize_split(split, g, labels, stats=stats)
    try:
        args.out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise type(exc)(exc.errno, f"cannot create the output folder ({exc.strerror})", str(args.out_dir)) from None
    figures = []
    from gs_splits.plot import PLOT_INSTALL

    if not args.no_figures and importlib.util.find_spec("matplotlib") is None:
        print(f"figures skipped: matplotlib is not installed; {PLOT_INSTALL} to get "
              "them (the Markdown summary is written)", file=sys.stderr)
        md += ("\n## Figures\n\nNot drawn: matplotlib is not installed. Install the plot extra, "
               f"`{PLOT_INSTALL}`, and run the report again.\n")
    elif not args.no_figures:
        from gs_splits import plot

        jobs = [("statistics.png", "Appendix-A statistics", lambda: plot.plot_statistics(split, g, labels, stats=stats)),
                ("graph.png", "Split on the graph (appendix H)", lambda: plot.plot_graph(split, g, seed=args.seed))]
        if gf is not None and gf.features is not None and not args.no_tsne:
            if importlib.util.find_spec("sklearn") is None:
                print(f"t-SNE figure skipped: scikit-learn is not installed; {PLOT_INSTALL}",
                      file=sys.stderr)
            else:
                jobs.append(("features_tsne.png", "Split in feature space, t-SNE (appendix I)",
                             lambda: plot.plot_features(split, gf.features, max_nodes=args.tsne_max_nodes, seed=args.seed)))
        import matplotlib.pyplot as plt

        for name, title, make in jobs:
            print(f"drawing {name} ...", file=sys.stderr)
            fig = make()
            atomic_write(args.out_dir / name, lambda f, fig=fig: fig.savefig(f, dpi=110, format="png"))
            plt.close(fig)
            figures.append((name, title))
    if figures:
        md += "\n## Figures\n\n" + "\n".join(f"### {t}\n\n![{t}]({n})\n" for n, t in figures)
    out = args.out_dir / "report.md"
    atomic_write(out, lambda f: f.write(md.encode("utf-8")))
    print(f"wrote {out}" + "".join(f", {args.out_dir / n}" for n, _ in figures))
    return 0


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _value_options(parser: argparse.ArgumentParser) -> set[str]:
    """Option strings (of every sub-command) that take a value."""
    out: set[str] = set()
    for act in parser._actions:
        if isinstance(act, argparse._SubParsersAction):
            for sub in act.choices.values():
                out |= _value_options(sub)
        elif act.option_strings and act.nargs != 0:
            out.update(act.option_strings)
    return out


def _attach_negative_values(argv: list[str], parser: argparse.ArgumentParser) -> list[str]:
    """``--sizes -0.1,0.2,...`` as ``--sizes=-0.1,0.2,...``: argparse takes a value that starts
    with '-' and is not a plain number for an option and answers "expected one argument", so the
    option's own check (which names the negative value) never ran."""
    opts, out, i = _value_options(parser), [], 0
    while i < len(argv):
        tok = argv[i]
        if tok in opts and i + 1 < len(argv) and re.match(r"-[0-9.]", argv[i + 1]):
            out.append(f"{tok}={argv[i + 1]}")
            i += 2
            continue
        out.append(tok)
        i += 1
    return out


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``gs-splits`` console script."""
    parser = _parser()
    args = parser.parse_args(_attach_negative_values(list(sys.argv[1:] if argv is None else argv), parser))
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    # the one line saying why the first run waits (numba compiling), shown without -v too
    logging.getLogger("gs_splits.kernels").setLevel(logging.INFO)
    try:
        if args.command == "make":
            return _make(args)
        if args.command == "convert":
            return _convert(args)
        return _report(args)
    except (ValueError, TypeError) as exc:
        print(f"gs-splits {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except OSError as exc:  # missing input, unwritable output, full disk: name the file
        msg = str(exc) if exc.filename is None else f"{exc.filename}: {exc.strerror or exc}"
        print(f"gs-splits {args.command}: error: {_one_line(msg)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if args.command != "convert":
            raise
        print(f"gs-splits convert: interrupted; run the same command again to resume ({args.out_dir} "
              "keeps the finished steps)", file=sys.stderr)
        return 130
    except MemoryError:
        what = {"make": args.graph, "convert": getattr(args, "edges", None)}.get(
            args.command, f"{getattr(args, 'split', '')} on {getattr(args, 'graph', '')}")
        print(f"gs-splits {args.command}: error: {what}: out of memory (a graph this large needs "
              "more RAM; see the README's memory table)", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - one line instead of a traceback; -v shows it
        if args.verbose:
            import traceback

            traceback.print_exc()
        print(f"gs-splits {args.command}: internal error (a bug, please report it): "
              f"{type(exc).__name__}: {_one_line(exc)} (run with -v for the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
