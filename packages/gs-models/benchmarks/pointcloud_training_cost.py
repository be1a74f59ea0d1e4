"""Training cost per event of the GeSS point-cloud backbones, before and after issue 29.

Each configuration in fresh processes, the same batches for all: a training step (forward, backward, Adam)
of EGNN, DGCNN and Point Transformer (GeSS presets, k = 5, self loops) on Track-Pileup
ci-size training events (PU10, unit coordinates as the gess runner gives them), in batches of
``--batch-size``.

* **before**: the backbones of gs-models at ``--before`` (default 7be84a6, read with
  ``git show``), which build the kNN graph in every forward pass;
* **after**: the current backbones, with the kNN graph built once per event and passed as
  ``edge_index`` (what ``gs-bench run gess`` does now), and, for reference, the current
  backbones building the graph in every pass (``after, kNN per pass``).

Besides the training step (ms per event), a ci-size epoch is estimated as the gess runner runs
it: a training step on each of the ci training events plus one evaluation pass over the
iid_val, iid_test, ood_val and ood_test events (PU10 and PU50; before: kNN in every pass),
given per training event.

The two versions are different layers (issue 29 replaced ours by the GeSS code's), so the
rows compare the cost of what each version trains. Events: the ci-size Track-Pileup events of
the event cache (``--cache-dir``; simulated if missing and ``gs-data[track]`` is installed),
or *synthetic* clouds of 650 points if ``--synthetic``.

Times are process CPU time (other processes' time on a busy machine is not counted), the
fastest of ``--repeats`` passes in each of ``--rounds`` fresh processes per configuration, the
configurations interleaved: ``before``; ``after-default-malloc`` (glibc's allocator as is);
``after`` (with :func:`gs_models.keep_freed_memory`, as gs-bench runs jobs) and
``after-knn-per-pass``.

    OMP_NUM_THREADS=1 python packages/gs-models/benchmarks/pointcloud_training_cost.py \
        --cache-dir ~/.cache/gs/track --events 96 --threads 1 --repeats 3 --rounds 2 \
        --backbones egnn --json packages/gs-models/benchmarks/pointcloud_training_cost.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[3]
PRESETS = {"egnn": "gess-egnn", "dgcnn": "gess-dgcnn", "pointtransformer": "gess-pointtransformer"}


def _before_module(rev: str):
    """gs_models.pointcloud as it was at ``rev`` (its own kNN in every pass)."""
    src = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:packages/gs-models/src/gs_models/pointcloud.py"],
                         check=True, capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "pointcloud_before.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("gs_models._pointcloud_before", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # PyG inspects the module of its convolutions
    spec.loader.exec_module(mod)
    return mod


def _events(args) -> tuple[list, str]:
    from torch_geometric.data import Data

    from gs_models.knn import knn_graph

    if args.synthetic:
        gen = torch.Generator().manual_seed(0)
        clouds = [torch.nn.functional.normalize(torch.randn(650, 3, generator=gen), dim=1)
                  for _ in range(args.events)]
        ys = [i % 2 for i in range(args.events)]
        what = f"synthetic: {args.events} clouds of 650 points on the unit sphere"
        n_train_ci, evals = args.events, {}
    else:
        from gs_data.track import build_track_pileup

        ds = build_track_pileup(50, sizes="ci", cache_dir=args.cache_dir, n_workers=2)
        idx = ds.split.indices("train")[: args.events]
        n_train_ci = len(ds.split.indices("train"))
        evals = {p: [torch.from_numpy(ds.positions(int(i)).astype("float32")) for i in ds.split.indices(p)]
                 for p in ("iid_val", "iid_test", "ood_val", "ood_test")}
        clouds = []
        for i in idx:
            p = torch.from_numpy(ds.positions(int(i)).astype("float32"))
            clouds.append(p / p.norm(dim=-1, keepdim=True).clamp(min=1e-6))
        ys = [int(ds.y[i]) for i in idx]
        what = f"Track-Pileup ci training events (PU10), the first {len(idx)}"
    def graph(p, y):
        return Data(pos=p, x=torch.ones(p.size(0), 1), y=torch.tensor([float(y)]),
                    knn_index=knn_graph(p, 5, loop=True).to(torch.int32))

    graphs = [graph(p, y) for p, y in zip(clouds, ys, strict=True)]
    unit = [p / p.norm(dim=-1, keepdim=True).clamp(min=1e-6) for ps in evals.values() for p in ps if len(p)]
    return graphs, what, [graph(p, 0) for p in unit], n_train_ci


def _clock() -> float:
    """CPU time of this process (one torch thread): time the other processes of a busy
    machine take is not counted; their cache and memory-bandwidth use still is."""
    return time.process_time()


def _time_eval(model, batches, cached: bool, repeats: int) -> float:
    model.eval()

    @torch.no_grad()
    def run():
        for b in batches:
            kw = {"edge_index": b.knn_index} if cached else {}
            model(b.x, b.pos, b.batch, **kw)

    run()
    times = []
    for _ in range(repeats):
        t0 = _clock()
        run()
        times.append(_clock() - t0)
    return min(times)


def _time(model, batches, cached: bool, repeats: int) -> float:
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-5)
    model.train()

    def step(b):
        opt.zero_grad(set_to_none=True)
        kw = {"edge_index": b.knn_index} if cached else {}
        _, out = model(b.x, b.pos, b.batch, **kw)
        F.binary_cross_entropy_with_logits(out.view(-1), b.y.view(-1)).backward()
        opt.step()

    step(batches[0])  # warm-up
    times = []
    for _ in range(repeats):
        t0 = _clock()
        for b in batches:
            step(b)
        times.append(_clock() - t0)
    return min(times)  # other load only ever adds time: the fastest repeat is the cost


CONFIGS = ("before", "after-default-malloc", "after", "after-knn-per-pass")


def _measure(a) -> dict:
    """One configuration of one backbone in this (fresh) process: a training pass over the
    batches (fastest of ``--repeats``), and for the ci epoch one evaluation pass."""
    torch.set_num_threads(a.threads)
    from torch_geometric.data import Batch

    from gs_models import build_model, keep_freed_memory, preset

    kept = keep_freed_memory() if a.config in ("after", "after-knn-per-pass") else False
    graphs, what, eval_graphs, n_train_ci = _events(a)
    batches = [Batch.from_data_list(graphs[i:i + a.batch_size]) for i in range(0, len(graphs), a.batch_size)]
    eval_batches = [Batch.from_data_list(eval_graphs[i:i + 64]) for i in range(0, len(eval_graphs), 64)]
    name = a.backbones[0]
    torch.manual_seed(0)
    if a.config == "before":
        old = _before_module(a.before)
        model = {"egnn": old.EGNN, "dgcnn": old.DGCNN, "pointtransformer": old.PointTransformer}[name](
            1, 1, preset(PRESETS[name]))
    else:
        model = build_model(PRESETS[name], 1, 1)
    cached = a.config in ("after-default-malloc", "after")
    out = {"config": a.config, "backbone": name, "kept": kept, "events": what, "n": len(graphs),
           "n_train_ci": n_train_ci, "n_eval": len(eval_graphs),
           "train_s": _time(model, batches, cached=cached, repeats=a.repeats)}
    if eval_batches and a.config in ("before", "after"):
        out["eval_s"] = _time_eval(model, eval_batches, cached=cached, repeats=1)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--synthetic", action="store_true")
    ap.add_argument("--events", type=int, default=160)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3, help="training passes per process (fastest kept)")
    ap.add_argument("--rounds", type=int, default=2,
                    help="fresh processes per configuration, interleaved (fastest kept)")
    ap.add_argument("--before", default="7be84a6")
    ap.add_argument("--backbones", nargs="+", default=list(PRESETS), choices=list(PRESETS))
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--config", choices=CONFIGS, default=None, help=argparse.SUPPRESS)  # worker mode
    a = ap.parse_args(argv)
    if a.config:
        print("RESULT " + json.dumps(_measure(a)), flush=True)
        return 0
    # every configuration in its own process (the allocator setting cannot be undone in a
    # process, and a process's heap history changes what it costs), rounds interleaved so a
    # burst of other load hits every configuration alike; the fastest round is the cost
    base = [sys.executable, str(Path(__file__).resolve()), "--events", str(a.events), "--batch-size",
            str(a.batch_size), "--threads", str(a.threads), "--repeats", str(a.repeats), "--before", a.before]
    base += ["--synthetic"] if a.synthetic else []
    base += ["--cache-dir", a.cache_dir] if a.cache_dir else []
    best: dict[tuple[str, str], dict] = {}
    for rnd in range(a.rounds):
        for name in a.backbones:
            for config in CONFIGS:
                done = subprocess.run([*base, "--backbones", name, "--config", config], capture_output=True,
                                      text=True, check=False)
                lines = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")]
                if done.returncode or not lines:
                    sys.exit(f"{name} {config} failed:\n{done.stderr[-3000:]}")
                res = json.loads(lines[-1][7:])
                print(f"round {rnd + 1}/{a.rounds} {name:16s} {config:22s} "
                      f"{1000 * res['train_s'] / res['n']:7.2f} ms/event", flush=True)
                key = (name, config)
                if key not in best or res["train_s"] < best[key]["train_s"]:
                    best[key] = res
                if "eval_s" in res:
                    best[key]["eval_s"] = min(res["eval_s"], best[key].get("eval_s", res["eval_s"]))
    rows = []
    for name in a.backbones:
        b, a0, a1, ak = (best[(name, c)] for c in CONFIGS)
        n, n_train_ci = b["n"], b["n_train_ci"]
        t_b, t_a = b["train_s"], a1["train_s"]
        row = {"backbone": name, "before_ms_per_event": round(1000 * t_b / n, 2),
               "after_default_malloc_ms_per_event": round(1000 * a0["train_s"] / n, 2),
               "after_ms_per_event": round(1000 * t_a / n, 2),
               "after_knn_per_pass_ms_per_event": round(1000 * ak["train_s"] / n, 2),
               "speedup": round(t_b / t_a, 2)}
        if "eval_s" in b:  # a ci-size epoch: train on every training event, evaluate the 4 parts
            e_b, e_a = b["eval_s"], a1["eval_s"]
            ep_b = t_b / n * n_train_ci + e_b
            ep_a = t_a / n * n_train_ci + e_a
            row.update({"eval_parts_s_before": round(e_b, 1), "eval_parts_s_after": round(e_a, 1),
                        "epoch_s_before": round(ep_b, 1), "epoch_s_after": round(ep_a, 1),
                        "epoch_ms_per_training_event_before": round(1000 * ep_b / n_train_ci, 1),
                        "epoch_ms_per_training_event_after": round(1000 * ep_a / n_train_ci, 1),
                        "epoch_speedup": round(ep_b / ep_a, 2)})
        rows.append(row)
        print(json.dumps(row), flush=True)
    first = best[(a.backbones[0], "before")]
    res = {"events": first["events"], "n_events": first["n"], "n_train_ci": first["n_train_ci"],
           "n_eval_events": first["n_eval"], "batch_size": a.batch_size, "threads": a.threads,
           "repeats": a.repeats, "rounds": a.rounds, "freed_memory_kept": best[(a.backbones[0], "after")]["kept"],
           "clock": "process CPU time, fastest of repeats x rounds, each configuration in fresh processes",
           "before": a.before, "torch": torch.__version__, "rows": rows}
    print("| backbone | step before (ms/event) | after, default malloc | step after | after, kNN per pass "
          "| step speed-up | ci epoch before (ms per training event) | ci epoch after | epoch speed-up |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['backbone']} | {r['before_ms_per_event']} | {r['after_default_malloc_ms_per_event']} | "
              f"{r['after_ms_per_event']} | {r['after_knn_per_pass_ms_per_event']} | {r['speedup']}x | "
              f"{r.get('epoch_ms_per_training_event_before', '-')} | "
              f"{r.get('epoch_ms_per_training_event_after', '-')} | {r.get('epoch_speedup', '-')}x |")
    if a.json:
        a.json.write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
