"""Batched vs sequential Deep Ensemble training on CoraML (real data, ../shared/datasets).

5 members of the structural-shifts base GCN (gs-models ``structural-shifts-base``), the
authors' protocol (``TrainConfig.structural_shifts()``: 200 epochs, lowest Valid-In loss),
the authors' published popularity split. Times training the members one by one with
``fit_node`` and side by side with ``gs_algos.ensemble.fit_stacked_node``, and checks that
the two ensembles' test accuracy (equal up to the dropout draws, which differ by
construction). Prints wall and CPU (process) time: on a shared machine the CPU time of this
single-threaded process is the fairer figure.

Run from the repository root, one thread::

    OMP_NUM_THREADS=1 python packages/gs-algos/benchmarks/bench_ensemble.py --threads 1
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import torch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.environ.get("GS_SHARED_DATA", "../shared/datasets"))
    ap.add_argument("--dataset", default="cora-ml")
    ap.add_argument("--shift", default="popularity")
    ap.add_argument("--members", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    import gs_data
    from gs_algos.config import TrainConfig
    from gs_algos.engine import fit_node, seeded
    from gs_algos.ensemble import fit_stacked_node
    from gs_algos.methods import ERM
    from gs_algos.node_methods import member_seeds
    from gs_data.splits import authors_split
    from gs_models import build_model

    root = Path(args.root)
    data = gs_data.load(args.dataset, root=root, download=False)
    data = authors_split(data, args.dataset, args.shift, root=root)
    c = int(data.y.max()) + 1
    cfg = TrainConfig.structural_shifts(max_epochs=args.epochs)
    seeds = member_seeds(0, args.members)

    def build():
        return build_model("structural-shifts-base", data.num_features, c)

    def accuracy(models):
        with torch.no_grad():
            p = torch.stack([torch.softmax(m.eval()(data.x, data.edge_index)[1], -1) for m in models]).mean(0)
        t = data.in_test_mask | data.out_test_mask
        return float((p[t].argmax(-1) == data.y[t]).float().mean())

    seq = [seeded(build, s) for s in seeds]
    t0, c0 = time.perf_counter(), time.process_time()
    for m, s in zip(seq, seeds, strict=True):
        fit_node(m, data, ERM(), cfg.replace(seed=s))
    t_seq, c_seq = time.perf_counter() - t0, time.process_time() - c0

    bat = [seeded(build, s) for s in seeds]
    t0, c0 = time.perf_counter(), time.process_time()
    fit_stacked_node(bat, data, cfg.replace(seed=seeds[0]))
    t_bat, c_bat = time.perf_counter() - t0, time.process_time() - c0

    print(f"{args.dataset} {args.shift}, {args.members} members x {args.epochs} epochs, "
          f"{args.threads} thread(s), torch {torch.__version__}")
    print(f"| training | wall (s) | CPU (s) | ensemble test accuracy |\n|---|---|---|---|\n"
          f"| sequential (fit_node x {args.members}) | {t_seq:.1f} | {c_seq:.1f} | {accuracy(seq):.4f} |\n"
          f"| batched (fit_stacked_node) | {t_bat:.1f} | {c_bat:.1f} | {accuracy(bat):.4f} |")
    print(f"speed-up: {t_seq / t_bat:.2f}x wall, {c_seq / c_bat:.2f}x CPU")


if __name__ == "__main__":
    main()
