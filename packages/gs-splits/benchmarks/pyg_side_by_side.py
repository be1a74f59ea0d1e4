"""PyG's ``NodePropertySplit`` and gs-splits side by side in one process (issue 32, line 3).

For every SYNTHETIC graph size and every strategy (popularity, locality, density) this runs,
one after the other in this one Python process:

* PyG: ``torch_geometric.transforms.NodePropertySplit(strategy, ratios, ascending=True)`` on
  ``Data(edge_index=..., num_nodes=n)`` (its own networkx properties, networkx defaults:
  PageRank ``alpha=0.85, tol=1e-6`` (stop at an L1 change below ``n * 1e-6``),
  ``max_iter=100``; torch seeded with ``--seed`` for its tie-break and ID shuffle);
* gs-splits: ``as_csr_graph`` + ``structural_split(strategy, sizes=ratios, seed=--seed,
  path="memory")`` (PageRank to an L1 change below 1e-11), from the same edge array.

Both start from the same ``(2, E)`` edge array in memory and include building their graph
(PyG: ``to_networkx``; gs-splits: the CSR and its degree-ordered copy). gs-splits' numba
compilation / cache loading is done once beforehand on a tiny graph and reported as
``gs_jit_warmup_s``, not counted (as ``bench_properties.py`` does).

Measured per step: wall time (``time.perf_counter``; PyG also split into to_networkx /
property / masks), and peak resident memory: the kernel's peak-RSS counter is reset before
each step (``/proc/self/clear_refs`` = 5) and ``VmHWM`` read after it; the JSON keeps the RSS
before the step, the peak, and the peak minus the RSS before (the step's own memory). Where
the reset does not work, ``tracemalloc``'s peak is used instead (Python and numpy allocations
only, not torch's) and the JSON says so (``memory_method``).

Compared per (size, strategy): the ID sets (PyG: ``id_train | id_val | id_test``;
gs-splits: ``in_train | in_valid | in_test``): ``|A & B| / |A|`` (A = PyG's), the symmetric
difference; the ties at the ID/OOD boundary as each tool computed its property (PyG sorts
float32 values, gs-splits float64): the group of nodes whose value equals the value at the
cut when that group has nodes on both sides; the agreement on the nodes in neither tool's
boundary tie; how many differing nodes lie outside the band of PyG's property error around
the cut (``2 * max |PyG - gs|``); and PyG's property against the converged one (gs-splits',
tol 1e-11: it is the reference, so its own difference is 0 by construction): max abs and L1
difference, Spearman's rho.

The 30-minute limit (``--pyg-limit-min``): the comparison is in one process, so PyG runs
in-process. Before each size, its time per strategy is predicted from the smaller sizes
(power law in the number of edges, the exponent fitted on the last two sizes, clamped to
[1, 2]; 1.3 after one size) and the step is skipped, recorded as "not run: predicted ...",
when the prediction exceeds the limit; a step that runs anyway is stopped by an in-process
timer (``SIGALRM``; networkx is Python, the signal lands between bytecodes) and recorded as
"did not finish in N min". gs-splits runs in every case.

Graphs: SYNTHETIC Chung-Lu edge streams made by ``synthetic_papers100m.py`` (power-law
exponent ``--gamma`` 2.5, largest expected degree scaled with the size; self-loops and
repeated pairs kept in the stream, removed by both tools).

Requirements (benchmark only, never of gs-splits): torch, torch_geometric, networkx.

Usage::

    python pyg_side_by_side.py --sizes 2000:10000,10000:50000 --out smoke.json
    python pyg_side_by_side.py --render smoke.json        # the Markdown table of the README
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import math
import os
import platform
import re
import signal
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling benchmark scripts

STRATEGIES = ("popularity", "locality", "density")
DEFAULT_EXPONENT = 1.3  # PyG time ~ edges ** p, p before two sizes are measured
GB = 1e9


class UsageError(ValueError):
    """A bad command-line value: one line on stderr, exit 2."""


# ---------------------------------------------------------------------- command line
def _count(text: str) -> int:
    """``250000``, ``250_000``, ``250k``, ``1.5M`` -> int."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgG]?)\s*", text.replace("_", ""))
    if not m:
        raise UsageError(f"{text!r} is not a count (e.g. 200000, 200k, 1M)")
    value = float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2).lower()]
    if value != int(value):
        raise UsageError(f"{text!r} is not a whole number")
    return int(value)


def parse_sizes(text: str) -> list[tuple[int, int]]:
    """``"50k:250k,200000:1000000"`` -> ``[(50000, 250000), (200000, 1000000)]``, sorted by edges.

    Raises :class:`UsageError` naming the bad item: not ``NODES:EDGES``, fewer than 5 nodes
    (5 parts), 2**31 nodes or more, no edge or more edges than node pairs, or a size the
    generator cannot make.
    """
    from synthetic_papers100m import GAMMA, default_max_degree, solve_offset

    sizes = []
    for item in text.split(","):
        parts = item.split(":")
        if len(parts) != 2:
            raise UsageError(f"--sizes: {item.strip()!r} is not NODES:EDGES (e.g. 200000:1000000 or 200k:1M)")
        try:
            n, e = _count(parts[0]), _count(parts[1])
        except UsageError as exc:
            raise UsageError(f"--sizes: {item.strip()!r}: {exc}") from None
        if not 5 <= n < 2**31:
            raise UsageError(f"--sizes: {item.strip()!r}: the number of nodes must be in [5, 2**31) (5 split parts)")
        if not 1 <= e <= n * (n - 1) // 2:
            raise UsageError(f"--sizes: {item.strip()!r}: the number of edges must be in [1, {n * (n - 1) // 2:,}] "
                             "(at most one per pair of nodes)")
        try:
            solve_offset(n, e, GAMMA, default_max_degree(n, e, GAMMA))
        except ValueError as exc:
            raise UsageError(f"--sizes: {item.strip()!r}: the generator cannot make it ({exc})") from None
        sizes.append((n, e))
    return sorted(sizes, key=lambda s: (s[1], s[0]))


def ratios_of(name: str) -> list[float]:
    """The 5 fractions of a paper preset, refusing one whose float sum PyG would reject."""
    from gs_splits.names import PAPER_SIZES

    if name not in PAPER_SIZES:
        raise UsageError(f"--ratios: unknown {name!r}; use one of {', '.join(PAPER_SIZES)}")
    ratios = list(PAPER_SIZES[name])
    if sum(ratios) != 1.0:  # NodePropertySplit checks sum(ratios) != 1.0 exactly (3.12's sum is compensated)
        raise UsageError(f"--ratios: PyG's NodePropertySplit refuses {name} (its fractions sum to "
                         f"{sum(ratios)!r} in floating point, not exactly 1.0)")
    return ratios


# ---------------------------------------------------------------------- memory
def _proc_status_kb(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise OSError(f"/proc/self/status has no {field}")


def _reset_peak_rss() -> None:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def _malloc_trim() -> Callable[[], Any]:
    """glibc's ``malloc_trim(0)`` (a no-op elsewhere): hands the heap that freed Python objects
    leave (a networkx graph) back to the kernel, so the next step's "RSS before" is not inflated
    by memory that the step would reuse without it showing in its peak."""
    import ctypes
    import ctypes.util

    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return lambda *args: 0


class StepMemory:
    """Peak memory of one step of this process: ``VmHWM`` after resetting it, or tracemalloc."""

    def __init__(self) -> None:
        self.trim = _malloc_trim()
        self.method = "vmhwm"
        self.why = ("peak RSS (VmHWM) reset before each step with /proc/self/clear_refs = 5, after "
                    "gc.collect() and malloc_trim(0)")
        try:
            block = np.ones(64 << 20, dtype=np.uint8)  # 64 MiB resident, then freed
            del block
            _reset_peak_rss()
            after = _proc_status_kb("VmHWM") - _proc_status_kb("VmRSS")
            if after > 16 << 10:  # the reset left the old peak: no use
                raise OSError(f"VmHWM stayed {after} kB above VmRSS after the reset")
        except OSError as exc:
            self.method = "tracemalloc"
            self.why = (f"peak RSS reset not available here ({exc}); tracemalloc peak instead "
                        "(Python and numpy allocations only, not torch's; it slows Python code)")

    @contextlib.contextmanager
    def step(self, into: dict) -> Iterator[None]:
        gc.collect()
        self.trim(0)
        if self.method == "vmhwm":
            before = _proc_status_kb("VmRSS") * 1024
            _reset_peak_rss()
            try:
                yield
            finally:
                peak = _proc_status_kb("VmHWM") * 1024
                into.update(rss_before_gb=before / GB, peak_rss_gb=peak / GB,
                            peak_minus_before_gb=(peak - before) / GB)
            return
        tracemalloc.start()
        try:
            yield
        finally:
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            into.update(peak_minus_before_gb=peak / GB)


# ---------------------------------------------------------------------- the time limit
class OverLimit(Exception):
    """The in-process timer of ``--pyg-limit-min`` fired."""


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    if not seconds:
        yield
        return

    def fire(signum, frame):
        raise OverLimit

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.3g} min"


def predict_seconds(history: list[tuple[int, float]], edges: int) -> float | None:
    """PyG's time at ``edges`` from its times at smaller sizes (``(edges, seconds)``, ascending):
    ``t_last * (edges / e_last) ** p``, ``p`` fitted on the last two sizes, within [1, 2]."""
    if not history:
        return None
    e1, t1 = history[-1]
    p = DEFAULT_EXPONENT
    if len(history) >= 2:
        e0, t0 = history[-2]
        if e1 > e0 and t1 > 0 and t0 > 0:
            p = min(2.0, max(1.0, math.log(t1 / t0) / math.log(e1 / e0)))
    return t1 * (edges / e1) ** p


# ---------------------------------------------------------------------- the two tools
def run_pyg(edge_index: Any, n: int, strategy: str, ratios: list[float], seed: int) -> dict:
    """PyG's NodePropertySplit; returns times, the ID mask and the property it sorted by
    (float32 in PyG, returned as float64)."""
    import torch
    from torch_geometric.data import Data
    from torch_geometric.transforms import NodePropertySplit

    marks: dict[str, float] = {}
    recorded: list = []

    class Recording(NodePropertySplit):  # notes when its property function starts and ends
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            compute = self.compute_fn

            def timed(graph: Any, ascending: bool) -> Any:
                marks["property_start"] = time.perf_counter()
                values = compute(graph, ascending)
                marks["property_end"] = time.perf_counter()
                recorded.append(values)
                return values

            self.compute_fn = timed

    data = Data(edge_index=edge_index, num_nodes=n)
    transform = Recording(strategy, ratios, True)
    torch.manual_seed(seed)
    t0 = time.perf_counter()
    out = transform(data)
    t1 = time.perf_counter()
    id_mask = (out.id_train_mask | out.id_val_mask | out.id_test_mask).numpy()
    return {
        "seconds": t1 - t0,
        "to_networkx_s": marks["property_start"] - t0,
        "property_s": marks["property_end"] - marks["property_start"],
        "masks_s": t1 - marks["property_end"],
        "property_dtype": str(recorded[0].dtype).replace("torch.", ""),
        "_id": id_mask,
        "_property": -recorded[0].double().numpy(),  # ascending=True sorted by -property
    }


def run_gs(edges: np.ndarray, n: int, strategy: str, ratios: list[float], seed: int) -> dict:
    """gs-splits from the same edge array: a fresh CSR (no cache from earlier steps) + the split."""
    import gs_splits as gs

    t0 = time.perf_counter()
    g = gs.as_csr_graph(edges, n)
    t1 = time.perf_counter()
    split = gs.structural_split(g, strategy, sizes=ratios, seed=seed, path="memory", on_ties="ignore")
    t2 = time.perf_counter()
    return {
        "seconds": t2 - t0,
        "build_s": t1 - t0,
        "split_s": t2 - t1,
        "num_edges_simple": int(g.num_edges),
        "graph_normalisation": split.metadata["graph_normalisation"],
        "ties": split.metadata["ties"],
        "_id": split.in_distribution,
        "_property": -split.sigma,
    }


def warm_up_gs() -> float:
    """numba compile / cache-load time of everything a structural split runs (excluded)."""
    from bench_properties import TINY_GRAPH, warm_up_numba

    import gs_splits as gs

    def tiny_splits() -> None:
        for dtype in (np.int32, np.int64):  # the generator's edges are int32: numba compiles per dtype
            for strategy in STRATEGIES:
                gs.structural_split(TINY_GRAPH.astype(dtype), strategy, seed=0, num_nodes=5, on_ties="ignore")

    return warm_up_numba(tiny_splits)


# ---------------------------------------------------------------------- comparisons
def boundary_tie(prop: np.ndarray, id_mask: np.ndarray) -> dict:
    """The nodes tied at the ID/OOD cut of one tool: those whose value equals the smallest ID
    value when the largest OOD value equals it too (the tie straddles the cut: which side a
    node of it lands on is that tool's tie-break, not its property)."""
    if id_mask.all() or not id_mask.any():
        return {"straddles": False, "value": None, "tied": 0, "tied_id": 0, "_members": np.zeros_like(id_mask)}
    low_id = float(prop[id_mask].min())
    high_ood = float(prop[~id_mask].max())
    if high_ood > low_id:  # not a cut by value: would be a bug in the tool
        raise AssertionError(f"ID set is not the top of its property (OOD value {high_ood} > ID value {low_id})")
    members = prop == low_id if high_ood == low_id else np.zeros_like(id_mask)
    return {"straddles": bool(high_ood == low_id), "value": low_id if high_ood == low_id else None,
            "tied": int(members.sum()), "tied_id": int((members & id_mask).sum()), "_members": members}


def tied_fraction(prop: np.ndarray) -> float:
    """Fraction of the nodes whose value another node has too (in the tool's own dtype)."""
    _, counts = np.unique(prop, return_counts=True)
    return float(counts[counts > 1].sum() / max(1, prop.size))


def property_vs_reference(prop: np.ndarray, reference: np.ndarray) -> dict:
    """One tool's property against the converged one: max abs and L1 difference, Spearman."""
    from scipy.stats import spearmanr

    diff = np.abs(prop - reference)
    rho = float(spearmanr(prop, reference).statistic) if prop.size > 1 else 1.0
    return {"max_abs_diff": float(diff.max()), "l1_diff": float(diff.sum()), "spearman": rho}


def compare(pyg_prop: np.ndarray, pyg_id: np.ndarray, gs_prop: np.ndarray, gs_id: np.ndarray) -> dict:
    """ID-set agreement of PyG (A) and gs-splits (B), with each tool's boundary tie named."""
    a, b = pyg_id, gs_id
    ties_pyg, ties_gs = boundary_tie(pyg_prop, a), boundary_tie(gs_prop, b)
    untied = ~(ties_pyg.pop("_members") | ties_gs.pop("_members"))
    differ = a != b
    # the band where PyG's property error can move a node across the cut: within
    # 2 * max |PyG - gs| of the converged cut values
    delta = float(np.abs(pyg_prop - gs_prop).max())
    low_id, high_ood = gs_prop[b].min(), gs_prop[~b].max() if (~b).any() else -np.inf
    in_band = (gs_prop >= high_ood - 2 * delta) & (gs_prop <= low_id + 2 * delta)
    return {
        "id_size_pyg": int(a.sum()),
        "id_size_gs": int(b.sum()),
        "intersection": int((a & b).sum()),
        "agreement": float((a & b).sum() / max(1, a.sum())),
        "symmetric_difference": int(differ.sum()),
        "ties_pyg": ties_pyg,
        "ties_gs": ties_gs,
        "tied_fraction_pyg": tied_fraction(pyg_prop),
        "tied_fraction_gs": tied_fraction(gs_prop),
        "untied_nodes": int(untied.sum()),
        "untied_differ": int((differ & untied).sum()),
        "agreement_untied": float(1.0 - (differ & untied).sum() / max(1, untied.sum())),
        "error_band_delta": delta,
        "differ_outside_error_band": int((differ & ~in_band).sum()),
        "pyg_property_vs_converged": property_vs_reference(pyg_prop, gs_prop),
        "same_top_node": bool(np.argmax(pyg_prop) == np.argmax(gs_prop)),
    }


# ---------------------------------------------------------------------- the run
def _versions() -> dict:
    import networkx
    import numba
    import scipy
    import torch
    import torch_geometric

    import gs_splits

    return {"python": platform.python_version(), "numpy": np.__version__, "scipy": scipy.__version__,
            "numba": numba.__version__, "gs_splits": gs_splits.__version__, "torch": torch.__version__,
            "torch_geometric": torch_geometric.__version__, "networkx": networkx.__version__}


def _write(path: Path, results: dict) -> None:
    from gs_splits._atomic import atomic_write

    atomic_write(path, lambda f: f.write((json.dumps(results, indent=1) + "\n").encode()))


def _public(d: dict) -> dict:
    return {k: v for k, v in d.items() if not k.startswith("_")}


def load_edges(n: int, e: int, seed: int, workdir: str) -> tuple[np.ndarray, dict]:
    """The SYNTHETIC Chung-Lu stream of ``synthetic_papers100m.generate`` as an int32 (2, E) array."""
    from synthetic_papers100m import generate

    path = Path(workdir) / f"synthetic-{n}-{e}-{seed}.bin"
    meta = generate(path, n, e, seed=seed)
    edges = np.fromfile(path, dtype="<i4").reshape(2, e)
    path.unlink()
    path.with_name(path.name + ".json").unlink()
    return edges, meta["generator"]


def run(sizes: list[tuple[int, int]], strategies: list[str], ratios: list[float], seed: int,
        limit_s: float | None, predict: bool, out: Path, log: Callable[[str], None]) -> dict:
    import logging

    import torch

    # the normalisation counts go to the JSON (graph_normalisation), not to the log every step
    logging.getLogger("gs_splits").setLevel(logging.ERROR)
    memory = StepMemory()
    results: dict[str, Any] = {
        "benchmark": "pyg_side_by_side (issue 32, line 3)",
        "graphs_kind": "SYNTHETIC",
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        "machine": {"cpus": os.cpu_count(), "load_before": os.getloadavg(), "platform": platform.platform(),
                    "mem_total_gb": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / GB},
        "versions": _versions(),
        "settings": {"ratios": ratios, "seed": seed, "strategies": strategies,
                     "pyg_limit_s": limit_s, "predict_skip": predict, "torch_threads": torch.get_num_threads()},
        "memory_method": memory.method,
        "memory_note": memory.why,
        "graphs": [],
    }
    log(f"memory: {memory.why}")
    results["gs_jit_warmup_s"] = warm_up_gs()
    log(f"gs-splits numba warm-up {results['gs_jit_warmup_s']:.1f} s (excluded)")
    history: dict[str, list[tuple[int, float]]] = {s: [] for s in strategies}
    stopped: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="pyg-side-by-side-") as workdir:
        for n, e in sizes:
            t = time.perf_counter()
            edges, generator = load_edges(n, e, seed, workdir)
            graph = {"nodes": n, "edges_drawn": e, "kind": "SYNTHETIC", "generator": generator,
                     "generate_s": time.perf_counter() - t, "rows": []}
            results["graphs"].append(graph)
            edge_index = torch.from_numpy(edges.astype(np.int64))
            gc.collect()
            memory.trim(0)
            if memory.method == "vmhwm":  # the floor under this size's steps
                graph["rss_at_start_gb"] = _proc_status_kb("VmRSS") * 1024 / GB
            for strategy in strategies:
                row: dict[str, Any] = {"strategy": strategy, "gs": {}, "pyg": {}}
                graph["rows"].append(row)
                with memory.step(row["gs"]):
                    gs_res = run_gs(edges, n, strategy, ratios, seed)
                row["gs"].update(_public(gs_res))
                graph["edges_simple"] = row["gs"].pop("num_edges_simple")
                graph["normalisation"] = row["gs"].pop("graph_normalisation")
                log(f"SYNTHETIC {n:,} nodes / {e:,} edges, {strategy}: gs-splits {gs_res['seconds']:.2f} s, "
                    f"+{row['gs']['peak_minus_before_gb']:.3f} GB")
                predicted = predict_seconds(history[strategy], e) if predict else None
                row["pyg"]["predicted_s"] = predicted
                if strategy in stopped:
                    row["pyg"].update(status="not run", reason=stopped[strategy])
                elif limit_s and predicted is not None and predicted > limit_s:
                    row["pyg"].update(status="not run", reason=f"not run: predicted {_minutes(predicted)} > "
                                      f"limit {_minutes(limit_s)} (from the smaller sizes)")
                    stopped[strategy] = f"not run: a smaller size was predicted over {_minutes(limit_s)}"
                else:
                    try:
                        with memory.step(row["pyg"]), time_limit(limit_s):
                            pyg_res = run_pyg(edge_index, n, strategy, ratios, seed)
                    except OverLimit:
                        row["pyg"].update(status="did not finish", reason=f"did not finish in {_minutes(limit_s)}")
                        stopped[strategy] = f"not run: a smaller size did not finish in {_minutes(limit_s)}"
                    except Exception as exc:  # noqa: BLE001 - a long run records it and goes on
                        row["pyg"].update(status="failed", reason=f"failed: {type(exc).__name__}: {exc}")
                    else:
                        row["pyg"].update(status="ok", **_public(pyg_res))
                        history[strategy].append((e, pyg_res["seconds"]))
                        row["agreement"] = compare(pyg_res["_property"], pyg_res["_id"],
                                                   gs_res["_property"], gs_res["_id"])
                        del pyg_res
                log(f"SYNTHETIC {n:,} nodes / {e:,} edges, {strategy}: PyG {_pyg_cell(row['pyg'])}"
                    + (f", ID agreement {row['agreement']['agreement']:.4f}" if "agreement" in row else ""))
                del gs_res
                results["machine"]["load_after"] = os.getloadavg()
                _write(out, results)  # after every step: a long run keeps what it measured
            del edges, edge_index
    results["machine"]["load_after"] = os.getloadavg()
    _write(out, results)
    return results


# ---------------------------------------------------------------------- the table
def _pyg_cell(p: dict, unit: str = " s") -> str:
    if p.get("status") == "ok":
        return f"{p['seconds']:.2f}{unit}"
    return p.get("reason", p.get("status", "?"))


def _speedup(ratio: float) -> str:
    return f"{ratio:.0f}x" if ratio >= 10 else f"{ratio:.1f}x"


def _mem(r: dict) -> str:
    if "peak_rss_gb" in r:
        return f"+{r['peak_minus_before_gb']:.2f} ({r['peak_rss_gb']:.2f})"
    if "peak_minus_before_gb" in r:
        return f"{r['peak_minus_before_gb']:.2f} (tracemalloc)"
    return "n/a"


def _ties(t: dict) -> str:
    return f"{t['tied']:,} ({t['tied_id']:,} ID)" if t["straddles"] else "none"


def render(paths: list[str]) -> str:
    """The Markdown table of one or more result files."""
    lines = []
    for path in paths:
        with open(path) as f:
            res = json.load(f)
        m, v = res["machine"], res["versions"]
        lines += [
            f"SYNTHETIC graphs (Chung-Lu). `{res['command']}`; {m['cpus']} CPUs, load average "
            f"{m['load_before'][0]:.1f} before / {m.get('load_after', ['?'])[0]:.1f} after; torch_geometric "
            f"{v['torch_geometric']}, networkx {v['networkx']}, gs-splits {v['gs_splits']}; memory: "
            f"{res['memory_method']}; gs-splits numba warm-up {res['gs_jit_warmup_s']:.1f} s excluded.",
            "",
            "| graph (nodes / edges) | strategy | PyG s | gs-splits s | speed-up | PyG memory GB | "
            "gs-splits memory GB | ID agreement (all / non-tied) | ties at the ID/OOD boundary (PyG / gs-splits) |",
            "|---|---|---:|---:|---:|---:|---:|---|---|",
        ]
        for g in res["graphs"]:
            name = f"SYNTHETIC {g['nodes']:,} / {g.get('edges_simple', g['edges_drawn']):,}"
            for r in g["rows"]:
                p, s, a = r["pyg"], r["gs"], r.get("agreement")
                ok = p.get("status") == "ok"
                lines.append(
                    f"| {name} | {r['strategy']} | {_pyg_cell(p, '')} | {s['seconds']:.2f} | "
                    + (_speedup(p['seconds'] / s['seconds']) if ok else "n/a")
                    + f" | {_mem(p) if ok else 'n/a'} | {_mem(s)} | "
                    + (f"{a['agreement']:.4f} / {a['agreement_untied']:.4f} ({a['untied_differ']:,} of "
                       f"{a['untied_nodes']:,} differ) | {_ties(a['ties_pyg'])} / {_ties(a['ties_gs'])} |"
                       if a else "n/a | n/a |")
                )
        lines.append("")
        lines.append("Memory cells: peak RSS of the step minus the RSS before it (the step's peak RSS "
                     "of the whole process in brackets). Edges: undirected simple edges after both tools "
                     "drop the self-loops and repeats of the stream.")
        lines.append("")
    return "\n".join(lines)


# ---------------------------------------------------------------------- main
class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def main(argv: list[str] | None = None) -> int:
    ap = _Parser(prog="pyg_side_by_side", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", help="graph sizes NODES:EDGES, comma-separated (k / M suffixes allowed), "
                    "e.g. 50k:250k,200k:1M; run in ascending order of edges")
    ap.add_argument("--strategies", default=",".join(STRATEGIES), help="comma-separated (default: %(default)s)")
    ap.add_argument("--ratios", default="50:50", help="paper preset of the 5 part sizes (default 50:50 = PyG "
                    "ratios [0.3, 0.1, 0.1, 0.1, 0.4]); 90:10 is refused by PyG before Python 3.12 (float sum != 1.0)")
    ap.add_argument("--seed", type=int, default=0, help="graph generator, torch and gs-splits seed (default 0)")
    ap.add_argument("--pyg-limit-min", type=float, default=30.0,
                    help="limit per PyG split in minutes; a size predicted over it is not run, a run over "
                    "it is stopped (0: no limit; default %(default)s)")
    ap.add_argument("--no-predict", action="store_true", help="run PyG at every size, only the timer stops it")
    ap.add_argument("--out", default="pyg_side_by_side.json", help="result JSON (written atomically after every step)")
    ap.add_argument("--render", nargs="+", metavar="JSON", help="print the Markdown table of result files and exit")
    a = ap.parse_args(argv)
    if a.render:
        try:
            print(render(a.render))
        except (OSError, ValueError, KeyError) as exc:
            print(f"pyg_side_by_side: error: cannot render {a.render}: {exc!r}", file=sys.stderr)
            return 2
        return 0
    try:
        if not a.sizes:
            raise UsageError("--sizes is required (e.g. --sizes 2000:10000,10000:50000)")
        sizes = parse_sizes(a.sizes)
        strategies = [s.strip() for s in a.strategies.split(",") if s.strip()]
        bad = [s for s in strategies if s not in STRATEGIES]
        if bad or not strategies:
            raise UsageError(f"--strategies: unknown {bad or a.strategies!r}; use {', '.join(STRATEGIES)}")
        ratios = ratios_of(a.ratios)
        if a.pyg_limit_min < 0 or a.seed < 0:
            raise UsageError("--pyg-limit-min and --seed must be >= 0")
        out = Path(a.out)
        if out.is_dir() or not out.parent.is_dir():
            raise UsageError(f"--out: {a.out} is a folder or its folder does not exist")
    except UsageError as exc:
        print(f"pyg_side_by_side: error: {exc}", file=sys.stderr)
        return 2

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    run(sizes, strategies, ratios, a.seed, a.pyg_limit_min * 60 or None, not a.no_predict, out, log)
    print(render([str(out)]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
