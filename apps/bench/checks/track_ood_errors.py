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
import json
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

    from gs_algos import predict_graph, seeded
    from gs_bench.runners import gess
    from gs_bench.runners.gess.data import cached_graph_parts
    from gs_data.track import POSITION_FEATURES
    from gs_models import build_model

    rec = None
    for f in sorted((a.run / "results").glob("*.json")):
        r = json.loads(f.read_text())
        p = r.get("job", {}).get("params", {})
        if (r.get("status") == "ok" and p.get("dataset") == a.dataset and p.get("backbone") == a.backbone
                and p.get("algorithm") == "erm" and int(r["job"]["seed"]) == a.seed
                and gess.Settings.from_record(r).train_events is None):
            rec = r
    if rec is None:
        print(f"{a.run}: no finished ERM record of {a.dataset} / {a.backbone} / seed {a.seed}", file=sys.stderr)
        return 2
    job = {**rec["job"], "workdir": str(a.run)}
    st, case = gess.Settings.from_job(job), gess.DATASETS[a.dataset]
    ds = gess.load_dataset(a.dataset, st, "no-info")
    parts = cached_graph_parts(
        str(a.run), a.dataset, "no-info", st,
        lambda: gess.graph_parts(ds, "no-info", unit_coordinates=True, knn_k=case.knn_k, position_summary=True),
        unit_coordinates=True, knn_k=case.knn_k, position_summary=True)
    in_ch, categorical = gess.model_inputs(ds, case)
    model = seeded(lambda: build_model(gess.BACKBONES[a.backbone], in_ch, 1, categorical=categorical, k=case.knn_k,
                                       **gess.model_overrides(case, st, a.backbone)), a.seed)
    cfg = gess.train_config(a.dataset, "erm", st, a.seed)
    cache = gess.pretrain_cache(job)
    epoch = cache.load(cache.key("gess-erm-pretrain", a.seed, cfg, model), model) if cache else None
    if epoch is None:
        print(f"{a.run}: no stored model for that record (members/)", file=sys.stderr)
        return 2
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
