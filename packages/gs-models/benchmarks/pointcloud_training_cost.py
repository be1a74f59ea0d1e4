"""Training cost per event of the GeSS point-cloud backbones, before and after issue 29.

One process, one run, the same batches for both: a training step (forward, backward, Adam)
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

    OMP_NUM_THREADS=1 python packages/gs-models/benchmarks/pointcloud_training_cost.py \
        --cache-dir ~/.cache/gs/track --threads 1 --json packages/gs-models/benchmarks/pointcloud_training_cost.json
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

    from gs_models import knn_graph

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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache-dir", default=None)
    ap.add_argument("--synthetic", action="store_true")
    ap.add_argument("--events", type=int, default=160)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--before", default="7be84a6")
    ap.add_argument("--backbones", nargs="+", default=list(PRESETS), choices=list(PRESETS))
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    torch.set_num_threads(a.threads)
    from torch_geometric.data import Batch

    from gs_models import build_model, keep_freed_memory, preset

    old = _before_module(a.before)
    graphs, what, eval_graphs, n_train_ci = _events(a)
    batches = [Batch.from_data_list(graphs[i:i + a.batch_size]) for i in range(0, len(graphs), a.batch_size)]
    eval_batches = [Batch.from_data_list(eval_graphs[i:i + 64]) for i in range(0, len(eval_graphs), 64)]
    n = len(graphs)
    models = {}
    for name in a.backbones:
        cfg = preset(PRESETS[name])
        torch.manual_seed(0)
        before = {"egnn": old.EGNN, "dgcnn": old.DGCNN, "pointtransformer": old.PointTransformer}[name](1, 1, cfg)
        torch.manual_seed(0)
        models[name] = (before, build_model(PRESETS[name], 1, 1))
    # glibc's default allocator first (what the old code ran with), then with freed memory
    # kept in the heap (gs_models.keep_freed_memory, which gs-bench applies in every job);
    # the setting cannot be undone in a process, hence this order
    plain = {}
    for name, (before, after) in models.items():
        plain[name] = {"before": _time(before, batches, cached=False, repeats=a.repeats),
                       "after": _time(after, batches, cached=True, repeats=a.repeats)}
        if eval_batches:
            plain[name]["eval_before"] = _time_eval(before, eval_batches, cached=False, repeats=1)
    kept = keep_freed_memory()
    rows = []
    for name, (before, after) in models.items():
        t_b, t_a0 = plain[name]["before"], plain[name]["after"]
        t_a = _time(after, batches, cached=True, repeats=a.repeats)
        t_ak = _time(after, batches, cached=False, repeats=a.repeats)
        row = {"backbone": name, "before_ms_per_event": round(1000 * t_b / n, 2),
               "after_default_malloc_ms_per_event": round(1000 * t_a0 / n, 2),
               "after_ms_per_event": round(1000 * t_a / n, 2),
               "after_knn_per_pass_ms_per_event": round(1000 * t_ak / n, 2),
               "speedup": round(t_b / t_a, 2)}
        if eval_batches:  # a ci-size epoch: train on every training event, evaluate the 4 parts
            e_b = plain[name]["eval_before"]
            e_a = _time_eval(after, eval_batches, cached=True, repeats=1)
            ep_b = t_b / n * n_train_ci + e_b
            ep_a = t_a / n * n_train_ci + e_a
            row.update({"eval_parts_s_before": round(e_b, 1), "eval_parts_s_after": round(e_a, 1),
                        "epoch_s_before": round(ep_b, 1), "epoch_s_after": round(ep_a, 1),
                        "epoch_ms_per_training_event_before": round(1000 * ep_b / n_train_ci, 1),
                        "epoch_ms_per_training_event_after": round(1000 * ep_a / n_train_ci, 1),
                        "epoch_speedup": round(ep_b / ep_a, 2)})
        rows.append(row)
        print(json.dumps(rows[-1]), flush=True)
    res = {"events": what, "n_events": n, "n_train_ci": n_train_ci, "n_eval_events": len(eval_graphs),
           "batch_size": a.batch_size, "threads": a.threads, "repeats": a.repeats,
           "clock": "process CPU time, fastest repeat", "freed_memory_kept": kept,
           "before": a.before, "torch": torch.__version__, "rows": rows}
    print("| backbone | step before (ms/event) | after, default malloc | step after | after, kNN per pass "
          "| step speed-up | ci epoch before (ms per training event) | ci epoch after | epoch speed-up |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['backbone']} | {r['before_ms_per_event']} | {r['after_default_malloc_ms_per_event']} | "
              f"{r['after_ms_per_event']} | "
              f"{r['after_knn_per_pass_ms_per_event']} | {r['speedup']}x | "
              f"{r.get('epoch_ms_per_training_event_before', '-')} | "
              f"{r.get('epoch_ms_per_training_event_after', '-')} | {r.get('epoch_speedup', '-')}x |")
    if a.json:
        a.json.write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
