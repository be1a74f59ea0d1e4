"""Estimate the wall time of ``gs-bench run structural-shifts --profile ci`` from a few
timed epochs per method (real CoraML / CiteSeer from ../shared/datasets).

For every method of the ci profile, trains ``--epochs`` epochs of one member with the
authors' protocol on the authors' popularity split, times them, and scales to the profile:
200 epochs per member and stage (GPN / NatPN: three stages), 3 runs of each single model,
3 shifts per dataset. Members are shared (the suite's ``share_members``): DE trains only
its members 4 and 5 (1..3 are the ERM runs), GPE / NatPE train none (their 5 members are
the 5 GPN / NatPN runs). Times are CPU (process) times of one thread. Prints one line per method and the total
CPU time; with ``--workers W`` the wall time is about total / W on an otherwise idle machine.

Run from the repository root, one thread::

    OMP_NUM_THREADS=1 python packages/gs-algos/benchmarks/estimate_structural_ci.py
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import torch

METHODS = ("erm", "dann", "coral", "eerm", "mixup", "de", "gpn", "natpn", "gpe", "natpe")
PRESET = {"gpn": "structural-shifts-gpn", "gpe": "structural-shifts-gpn",
          "natpn": "structural-shifts-natpn", "natpe": "structural-shifts-natpn"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.environ.get("GS_SHARED_DATA", "../shared/datasets"))
    ap.add_argument("--datasets", nargs="+", default=["cora-ml", "citeseer"])
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--epochs", type=int, default=20, help="timed epochs per method (scaled to 200)")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(1)

    import gs_data
    from gs_algos.config import TrainConfig
    from gs_algos.node_methods import node_method
    from gs_data.splits import authors_split
    from gs_models import build_model

    root = Path(args.root)
    cfg = TrainConfig.structural_shifts(max_epochs=args.epochs)
    scale = 200 / args.epochs
    total = 0.0
    print(f"| dataset | method | members trained per shift | CPU s per timed member ({args.epochs} ep.) | est. CPU s per shift (200 ep.) |")
    print("|---|---|---|---|---|")
    for name in args.datasets:
        data = authors_split(gs_data.load(name, root=root, download=False), name, "popularity", root=root)
        c = int(data.y.max()) + 1
        for meth in args.methods:
            method = node_method(meth, 5)
            # members trained per shift with shared members (see the module docstring)
            runs = {"de": 2, "gpn": 5, "natpn": 5, "gpe": 0, "natpe": 0}.get(meth, 3)
            if runs == 0:
                print(f"| {name} | {meth} | 0 (the {method.family} runs) | - | 0 |")
                continue
            if method.num_members > 1:
                method = node_method(method.family, 5)  # de -> erm, gpe -> gpn, natpe -> natpn
            preset = PRESET.get(meth, "structural-shifts-base")
            t0 = time.process_time()  # CPU time of this one-thread process: fair on a shared machine
            f, c_ = data.num_features, c
            method.fit(lambda p=preset, f=f, c_=c_: build_model(p, f, c_), data, cfg,
                       domain=getattr(data, "domain", None), num_classes=c)
            dt = time.process_time() - t0
            per_shift = dt * scale * runs
            total += 3 * per_shift
            print(f"| {name} | {meth} | {runs} | {dt:.1f} | {per_shift:.0f} |")
    print(f"\nestimated CPU time of the ci profile: {total / 60:.1f} min; "
          f"wall with {args.workers} workers: about {total / 60 / args.workers:.1f} min (idle machine)")


if __name__ == "__main__":
    main()
