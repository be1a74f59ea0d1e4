"""Where a gess Track ERM model errs out of distribution (issue 53): its predictions on Test-ID
and Test-OOD against each event's hit count and straightest chain.

    python apps/bench/checks/track_ood_errors.py RUN_FOLDER [--dataset track-pileup-pu50]
        [--backbone egnn] [--seed 0]

Reads the ERM record of (dataset, backbone, seed) in ``RUN_FOLDER/results``, rebuilds its model
and loads the weights its job stored (the best Val-ID epoch, with the batch-norm statistics of
that evaluation: ``RUN_FOLDER/members``, the TL rows' pre-training), reads the run's graph cache
(``RUN_FOLDER/graphs``; built again where it is missing) and prints, per test part: accuracy,
the share of events called signal, the confusion counts, and accuracy and the called-signal
share per quartile of the hit count (quartiles of Test-ID's) and per straightest-chain length.
A model that calls PU50 events signal by how many hits they carry, not by their tracks, shows
a called-signal share that grows with the hit count while the truth does not.

Exit status 2 when the folder holds no such record or no stored model.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("--dataset", default="track-pileup-pu50")
    ap.add_argument("--backbone", default="egnn")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)

    import torch

    from gs_algos.engine import predict_graph
    from gs_data.track import POSITION_FEATURES

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _track_model import load_erm

    m = load_erm(a.run, a.dataset, a.backbone, a.seed)
    if m is None:
        return 2
    rec, parts, model, epoch = m.record, m.parts, m.model, m.epoch
    print(f"{a.dataset} / {a.backbone} / seed {a.seed}: the ERM model of epoch {epoch} (best Val-ID), "
          f"record {rec['job']['key']}: Test-ID {100 * rec['metrics']['id_sel_test_id']:.2f}, "
          f"Test-OOD at this epoch {100 * rec['metrics']['id_sel_test_ood']:.2f}")
    torch.set_num_threads(1)
    hits_id = np.array([g.pos.size(0) for g in parts["iid_test"]])
    edges = np.quantile(hits_id, [0.25, 0.5, 0.75])
    for part in ("iid_test", "ood_test"):
        graphs = parts[part]
        _, out = predict_graph(model, graphs, None, 256)
        pred = (out.reshape(-1) > 0).numpy().astype(int)
        y = np.array([int(g.y.reshape(-1)[0]) for g in graphs])
        hits = np.array([g.pos.size(0) for g in graphs])
        ci = POSITION_FEATURES.index("straightest_chain")
        chain = np.array([float(g.position_summary.reshape(-1)[ci]) for g in graphs])
        tp, fp = int(((pred == 1) & (y == 1)).sum()), int(((pred == 1) & (y == 0)).sum())
        fn, tn = int(((pred == 0) & (y == 1)).sum()), int(((pred == 0) & (y == 0)).sum())
        print(f"\n{part}: {len(y)} events, {100 * y.mean():.1f} % signal; accuracy {100 * (pred == y).mean():.2f}; "
              f"called signal {100 * pred.mean():.1f} %; TP {tp} FP {fp} FN {fn} TN {tn}; "
              f"hits median {int(np.median(hits))}")
        print("  hit-count bin (Test-ID quartiles) | events | signal % | called signal % | accuracy %")
        bins = np.digitize(hits, edges)
        for b in range(4):
            m = bins == b
            lo = "min" if b == 0 else int(edges[b - 1])
            hi = "max" if b == 3 else int(edges[b])
            if m.any():
                print(f"  [{lo}, {hi}) | {int(m.sum())} | {100 * y[m].mean():.1f} | {100 * pred[m].mean():.1f} | "
                      f"{100 * (pred[m] == y[m]).mean():.1f}")
        print("  straightest chain (hits) | events | signal % | called signal % | accuracy %")
        for lo, hi in ((0, 3), (3, 4), (4, 5), (5, 7), (7, 1000)):
            m = (chain >= lo) & (chain < hi)
            if m.any():
                print(f"  [{lo}, {hi}) | {int(m.sum())} | {100 * y[m].mean():.1f} | {100 * pred[m].mean():.1f} | "
                      f"{100 * (pred[m] == y[m]).mean():.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
