"""Training-step cost of the node GNN presets: gs-models' fast path against PyG's own layers.

``NodeGNN.fast_path = False`` runs every layer through PyG (``GCNConv``, ``SAGEConv``,
``GATConv``, ``GINConv`` on ``edge_index``, dense features): the reference. ``True`` (the
default) feeds sparse bag-of-words features to the first linear map as a CSR matrix and, for
GCN, SAGE (mean / sum) and GIN, aggregates with one sparse product over a weighted adjacency
prepared once per graph; SAGE and GIN apply their first linear map before the aggregation
when it narrows the features. Same function and gradients (``tests/test_node.py``).

Data: a **synthetic** graph of Cora's size as LeBed uses it (2,708 nodes, 10,556 directed
edges, 1,443 binary features at 2 % density, 10 classes). One step = forward, cross-entropy,
backward, Adam. Both paths run in the same process, interleaved, ``--repeats`` rounds of
``--steps`` steps; the median per-step time of each is reported.

Usage (from the repository root)::

    python packages/gs-models/benchmarks/node_fast_path.py [--threads 1] [--steps 20] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F

from gs_models import build_model

PRESETS = ("lebed-gcn", "lebed-sage", "lebed-gat", "lebed-gin", "lebed-mlp")


def synthetic_cora(seed: int = 0):
    """Random graph of Cora's size with LeBed's feature width (synthetic)."""
    gen = torch.Generator().manual_seed(seed)
    n, und, f, c = 2708, 5278, 1443, 10
    src = torch.randint(0, n, (und,), generator=gen)
    dst = torch.randint(0, n, (und,), generator=gen)
    edge_index = torch.cat([torch.stack([src, dst]), torch.stack([dst, src])], dim=1)
    x = (torch.rand(n, f, generator=gen) < 0.02).float()
    y = torch.randint(0, c, (n,), generator=gen)
    return x, edge_index, y, f, c


def step_time(model, opt, x, ei, y, steps: int) -> float:
    model.train()
    t = time.perf_counter()
    for _ in range(steps):
        _, logits = model(x, ei)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return (time.perf_counter() - t) / steps


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    ap.add_argument("--steps", type=int, default=20, help="steps per timed round (default 20)")
    ap.add_argument("--repeats", type=int, default=5, help="interleaved rounds (default 5)")
    ap.add_argument("--presets", nargs="+", default=list(PRESETS), choices=PRESETS)
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    x, ei, y, f, c = synthetic_cora()
    rows = []
    print(f"{'preset':12s} {'PyG path ms':>12s} {'fast path ms':>13s} {'speed-up':>9s}")
    for name in args.presets:
        torch.manual_seed(0)
        models = {fast: build_model(name, f, c) for fast in (False, True)}
        models[True].load_state_dict(models[False].state_dict())
        times: dict[bool, list[float]] = {False: [], True: []}
        opts = {}
        for fast, m in models.items():
            m.fast_path = fast
            opts[fast] = torch.optim.Adam(m.parameters(), lr=1e-3)
            step_time(m, opts[fast], x, ei, y, 2)  # warm-up: caches, allocator
        for _ in range(args.repeats):
            for fast in (False, True):
                times[fast].append(step_time(models[fast], opts[fast], x, ei, y, args.steps))
        ref, new = statistics.median(times[False]) * 1e3, statistics.median(times[True]) * 1e3
        rows.append({"preset": name, "pyg_ms": round(ref, 2), "fast_ms": round(new, 2),
                     "speedup": round(ref / new, 2)})
        print(f"{name:12s} {ref:12.1f} {new:13.1f} {ref / new:8.2f}x", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"threads": args.threads, "steps": args.steps, "repeats": args.repeats,
                       "torch": torch.__version__, "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
