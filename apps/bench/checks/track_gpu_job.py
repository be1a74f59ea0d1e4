"""One Track ERM job of the gess suite on a GPU from exported events (issue 29).

The GPU machines of the project have no network and no PYTHIA 8 / ACTS, and the event
cache (all ACTS hit columns) is too large to send. So the job runs in two steps:

``export`` (here, where the events are simulated or cached): builds the dataset with
gs-data exactly as ``gs-bench run gess`` does (``track_sizes`` given as counts) and writes,
per split part, the hit coordinates (float32), the labels and the GeSS subgroups into one
``.npz`` (about 12 bytes per hit).

``train`` (on the GPU): rebuilds the part graphs as the gess runner's ``_parts`` does (unit
coordinates, cached kNN graph), then trains with the runner's own ``train_config`` /
``build_model`` / ``fit_graph`` and writes the job's record (the runner's metric keys, the
per-epoch curves, the trivial baselines, wall time, device) as JSON.

    python apps/bench/checks/track_gpu_job.py export --dataset track-pileup-pu50 \
        --sizes 1500,1500,200,100,100,200 --cache-dir ~/.cache/gs/track --out .gpu/pileup.npz
    PYTHONPATH=... python apps/bench/checks/track_gpu_job.py train .gpu/pileup.npz \
        --device cuda --epochs 40 --batch-size 64 --out record.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

PARTS = ("train", "iid_val", "iid_test", "ood_val", "ood_test")


def export(args: argparse.Namespace) -> None:
    from gs_bench.runners import gess as G
    from gs_data.track import TrackPileupSizes, TrackSignalSizes

    case = G.DATASETS[args.dataset]
    counts = [int(v) for v in args.sizes.split(",")]
    sizes = TrackPileupSizes(*counts) if case.shift == "pileup" else TrackSignalSizes(*counts)
    G.TRACK_SIZES["export"] = {case.shift: sizes}
    settings = {"track_sizes": "export", "track_cache_dir": args.cache_dir,
                "track_workers": args.workers, "track_seed": args.seed}
    if args.signal_min_pt is not None:
        settings["track_signal_min_pt_gev"] = args.signal_min_pt
    ds = G._dataset(args.dataset, settings, "no-info")
    groups = np.asarray(ds.split.groups) if ds.split.groups is not None else np.zeros(len(ds), int)
    codes = groups.astype(np.int64).copy()
    codes[codes < 0] = int(groups.max()) + 1 if groups.size else 0
    out: dict[str, np.ndarray] = {}
    for part in PARTS:
        idx = np.flatnonzero(ds.split.masks[part])
        pos = [ds.positions(int(i)).astype(np.float32) for i in idx]
        keep = [k for k, p in enumerate(pos) if len(p)]
        out[f"{part}_pos"] = np.concatenate([pos[k] for k in keep])
        out[f"{part}_ptr"] = np.concatenate([[0], np.cumsum([len(pos[k]) for k in keep])]).astype(np.int64)
        out[f"{part}_y"] = ds.y[idx[keep]].astype(np.float32)
        out[f"{part}_domain"] = codes[idx[keep]]
    meta = {"dataset": args.dataset, "sizes": counts, "seed": args.seed, "signal_min_pt_gev": args.signal_min_pt,
            "samples": sorted(ds.samples)}
    out["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    np.savez(args.out, **out)
    print(f"wrote {args.out}: " + ", ".join(f"{p} {len(out[p + '_y'])}" for p in PARTS))


def load_parts(path: str, knn_k: int, device: str = "cpu", coords: str = "unit",
               max_train: int | None = None, features: str = "ones") -> tuple[dict[str, list], dict]:
    """The part graphs of an export, as the gess runner's ``_parts`` builds them
    (``coords="unit"``: GeSS's CoorsNorm; ``"metres"``: the hit coordinates in m, a probe)."""
    import torch
    from torch_geometric.data import Data

    from gs_bench.runners.gess import _unit_coordinates
    from gs_models.knn import knn_graph

    z = np.load(path)
    meta = json.loads(bytes(z["meta"]).decode())
    parts = {}
    for part in PARTS:
        pos, ptr, y, dom = (z[f"{part}_{k}"] for k in ("pos", "ptr", "y", "domain"))
        graphs = []
        for e in range(len(y)):
            p = torch.from_numpy(pos[ptr[e]:ptr[e + 1]])
            p = _unit_coordinates(p) if coords == "unit" else p / 1000.0
            ei = knn_graph(p.to(device), knn_k, loop=True).to(torch.int32).cpu()
            x = torch.ones(p.size(0), 1) if features == "ones" else torch.cat([torch.ones(p.size(0), 1), p], 1)
            graphs.append(Data(pos=p, x=x, y=torch.tensor([float(y[e])]),
                               domain=torch.tensor(int(dom[e])), knn_index=ei))
        if part == "train" and max_train is not None:  # a balanced prefix of the shuffled part
            order = np.random.default_rng(0).permutation(len(graphs))[:max_train]
            graphs = [graphs[k] for k in sorted(order)]
        parts[part] = graphs
    return parts, meta


def train(args: argparse.Namespace) -> None:
    import torch

    from gs_algos.engine import fit_graph, seeded
    from gs_algos.methods import METHODS
    from gs_bench.runners import gess as G
    from gs_models import build_model

    t0 = time.time()
    meta = json.loads(bytes(np.load(args.export)["meta"]).decode())
    name = meta["dataset"]
    case = G.DATASETS[name]
    parts, _ = load_parts(args.export, case.knn_k, args.device, args.coords, args.max_train, args.features)
    t_load = time.time() - t0
    settings = {"max_epochs": args.epochs, "track_batch_size": args.batch_size,
                "norm_stats_graphs": args.norm_stats_graphs}
    cfg = G.train_config(name, "erm", settings, args.seed, device=args.device)
    if args.lr:
        cfg = cfg.replace(lr=args.lr)
    in_ch = 1 if args.features == "ones" else 4
    extra = {"pt_delta": args.pt_delta} if args.pt_delta != "position" else {}
    if args.pt_norm != "none":
        extra["pt_norm"] = args.pt_norm
    model = seeded(lambda: build_model(G.BACKBONES[args.backbone], in_ch, 1, categorical=False,
                                       k=case.knn_k, edge_features=args.edge_features, pool=args.pool,
                                       **extra),
                   args.seed)
    res = fit_graph(model, parts, METHODS["erm"](), cfg,
                    callback=lambda e: print(f"epoch {e.epoch} loss {e.train_loss:.4f} "
                                             + " ".join(f"{p} {m.get(case.metric, float('nan')):.4f}"
                                                        for p, m in e.metrics.items()), flush=True))
    rec = {"dataset": name, "backbone": args.backbone, "algorithm": "erm", "seed": args.seed,
           "export": meta, "device": args.device, "edge_features": args.edge_features, "pool": args.pool,
           "coords": args.coords, "features": args.features, "pt_delta": args.pt_delta, "pt_norm": args.pt_norm,
           "gpu": torch.cuda.get_device_name(0) if args.device.startswith("cuda") else None,
           "torch": torch.__version__, "epochs_run": res.epochs_run, "batch_size": cfg.batch_size,
           "lr": cfg.lr, "norm_stats_graphs": cfg.norm_stats_graphs, "sizes": {p: len(v) for p, v in parts.items()},
           "load_s": round(t_load, 1), "wall_s": round(time.time() - t0, 1)}
    for track_name, track in res.tracks.items():
        sel = "id" if track_name == "iid_val" else "ood"
        rec[f"{sel}_sel_test_id"] = float(track.metrics["iid_test"][case.metric])
        rec[f"{sel}_sel_test_ood"] = float(track.metrics["ood_test"][case.metric])
        rec[f"{sel}_sel_epoch"] = int(track.epoch)
    rec["curves"] = [{"epoch": h["epoch"], "train_loss": round(float(h["train_loss"]), 5),
                      **{p: round(float(m[case.metric]), 5) for p, m in h.get("metrics", {}).items()}}
                     for h in res.history]
    Path(args.out).write_text(json.dumps(rec, indent=1))
    print(json.dumps({k: v for k, v in rec.items() if k != "curves"}))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export", help="write the parts of a Track dataset to an .npz")
    e.add_argument("--dataset", required=True)
    e.add_argument("--sizes", required=True, help="TrackPileupSizes / TrackSignalSizes fields, comma-separated")
    e.add_argument("--cache-dir", default=None)
    e.add_argument("--workers", type=int, default=2)
    e.add_argument("--seed", type=int, default=0)
    e.add_argument("--signal-min-pt", type=float, default=None,
                   help="keep a signal decay only if each muon has this pT in GeV (the gess setting "
                        "track_signal_min_pt_gev; unset: every signal muon, as before)")
    e.add_argument("--out", required=True)
    t = sub.add_parser("train", help="train the ERM job on the exported parts")
    t.add_argument("export")
    t.add_argument("--backbone", default="egnn")
    t.add_argument("--device", default="cuda")
    t.add_argument("--epochs", type=int, default=40)
    t.add_argument("--batch-size", type=int, default=64)
    t.add_argument("--lr", type=float, default=None)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--edge-features", default="distance_direction")
    t.add_argument("--coords", choices=("unit", "metres"), default="unit")
    t.add_argument("--pool", choices=("sum", "mean", "max"), default="sum",
                   help="graph pooling (GeSS: sum; mean / max are probes, not GeSS)")
    t.add_argument("--pt-delta", choices=("position", "edge_mlp"), default="position",
                   help="Point Transformer's positional term (gs-models pt_delta; GeSS: position; "
                        "edge_mlp is a probe, not GeSS)")
    t.add_argument("--pt-norm", choices=("none", "batch", "layer"), default="none",
                   help="norm inside each Point Transformer block (gs-models pt_norm; GeSS: none; "
                        "batch is the gess ci profile's track_pt_norm)")
    t.add_argument("--max-train", type=int, default=None)
    t.add_argument("--features", choices=("ones", "ones_pos"), default="ones",
                   help="point features: GeSS's all-ones (Track config only_ones) or ones + coordinates (a probe)")
    t.add_argument("--norm-stats-graphs", type=int, default=1024,
                   help="batch-norm statistics recomputed from this many training graphs before each "
                        "evaluation (the gess suite's norm_stats_graphs; 0: running averages, as before)")
    t.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    export(a) if a.cmd == "export" else train(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
