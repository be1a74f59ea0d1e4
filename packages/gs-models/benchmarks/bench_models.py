"""Speed of gs-models backbones, side by side with bare PyG references (one process, one run).

1. Full-batch GCN training epoch (forward + backward + Adam step) on a *synthetic* graph of
   CoraML's size (2,995 nodes, 16,316 directed edges, 2,879 features, 7 classes):
   ``build_model("edgewise-gcn")`` vs a bare two-``GCNConv`` script, and
   ``build_model("structural-shifts-base")`` vs a bare three-``GCNConv`` + BatchNorm + GELU +
   linear script. Timings interleave the two implementations; medians are reported.
2. Inference throughput (point clouds / second) of EGNN, DGCNN and Point Transformer (GeSS
   presets, k = 5 as on Track) on *synthetic* Track-sized events of ~3,000 points, including
   the kNN graph construction.

Usage (from the repository root)::

    python packages/gs-models/benchmarks/bench_models.py [--threads 1] [--device cpu] [--quick]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import warnings

import torch
import torch.nn.functional as F
from torch import nn

warnings.filterwarnings("ignore", message=".*torch.jit.script.*", category=DeprecationWarning)

from torch_geometric.nn import GCNConv  # noqa: E402

from gs_models import build_model  # noqa: E402


def synthetic_coraml(device: torch.device, seed: int = 0):
    """Random graph with CoraML's sizes (synthetic: no real features or labels)."""
    gen = torch.Generator().manual_seed(seed)
    n, und, f, c = 2995, 8158, 2879, 7
    src = torch.randint(0, n, (und,), generator=gen)
    dst = torch.randint(0, n, (und,), generator=gen)
    edge_index = torch.cat([torch.stack([src, dst]), torch.stack([dst, src])], dim=1)
    x = (torch.rand(n, f, generator=gen) < 0.02).float()  # sparse-ish binary bag of words
    y = torch.randint(0, c, (n,), generator=gen)
    mask = torch.rand(n, generator=gen) < 0.3
    return x.to(device), edge_index.to(device), y.to(device), mask.to(device), f, c


class BareGCN2(nn.Module):
    """The classic PyG example: GCNConv -> ReLU -> dropout -> GCNConv."""

    def __init__(self, f, h, c):
        super().__init__()
        self.c1, self.c2 = GCNConv(f, h), GCNConv(h, c)

    def forward(self, x, ei):
        h = F.dropout(F.relu(self.c1(x, ei)), 0.5, self.training)
        return self.c2(h, ei)


class BareGCN3(nn.Module):
    """Three GCNConv + BatchNorm + GELU + dropout layers and a linear head."""

    def __init__(self, f, h, c):
        super().__init__()
        self.convs = nn.ModuleList([GCNConv(f, h), GCNConv(h, h), GCNConv(h, h)])
        self.norms = nn.ModuleList([nn.BatchNorm1d(h) for _ in range(3)])
        self.head = nn.Linear(h, c)

    def forward(self, x, ei):
        for i, (conv, norm) in enumerate(zip(self.convs, self.norms, strict=True)):
            x = F.gelu(norm(conv(x, ei)))
            if i < 2:
                x = F.dropout(x, 0.2, self.training)
        return self.head(F.dropout(x, 0.2, self.training))


def _epoch(model, opt, x, ei, y, mask, take_second: bool):
    model.train()
    opt.zero_grad()
    out = model(x, ei)
    logits = out[1] if take_second else out
    loss = F.cross_entropy(logits[mask], y[mask])
    loss.backward()
    opt.step()
    return loss


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def bench_gcn(device, repeats: int, warmup: int = 3):
    x, ei, y, mask, f, c = synthetic_coraml(device)
    results = {}
    pairs = {
        "edgewise-gcn (2x64)": (
            lambda: build_model("edgewise-gcn", f, c),
            lambda: BareGCN2(f, 64, c),
        ),
        "structural-shifts-base (3x256, BN, GELU)": (
            lambda: build_model("structural-shifts-base", f, c),
            lambda: BareGCN3(f, 256, c),
        ),
    }
    for name, (make_ours, make_bare) in pairs.items():
        torch.manual_seed(0)
        ours = make_ours().to(device)
        bare = make_bare().to(device)
        opt_o = torch.optim.Adam(ours.parameters(), lr=0.01)
        opt_b = torch.optim.Adam(bare.parameters(), lr=0.01)
        for _ in range(warmup):
            _epoch(ours, opt_o, x, ei, y, mask, True)
            _epoch(bare, opt_b, x, ei, y, mask, False)
        t_o, t_b = [], []
        for _ in range(repeats):  # interleaved
            _sync(device)
            t0 = time.perf_counter()
            _epoch(ours, opt_o, x, ei, y, mask, True)
            _sync(device)
            t1 = time.perf_counter()
            _epoch(bare, opt_b, x, ei, y, mask, False)
            _sync(device)
            t2 = time.perf_counter()
            t_o.append(t1 - t0)
            t_b.append(t2 - t1)
        mo, mb = statistics.median(t_o), statistics.median(t_b)
        results[name] = {"gs_models_ms": 1e3 * mo, "bare_pyg_ms": 1e3 * mb, "ratio": mo / mb}
    return results


def synthetic_track_batch(num_events: int, points: int, device, seed: int = 0):
    """Synthetic Track-like events: points on random helices plus noise (all-ones features)."""
    gen = torch.Generator().manual_seed(seed)
    pos, batch = [], []
    for e in range(num_events):
        n_tracks = points // 10
        radius = torch.rand(n_tracks, 1, generator=gen) * 3000 + 500
        phi0 = torch.rand(n_tracks, 1, generator=gen) * 6.283
        t = torch.rand(n_tracks, 10, generator=gen) * 0.8
        xy_r = 2 * radius * torch.sin(t / 2)
        p = torch.stack(
            [xy_r * torch.cos(phi0 + t / 2), xy_r * torch.sin(phi0 + t / 2), t * 1000], dim=-1
        )
        p = p.reshape(-1, 3)[:points] / 1000.0
        pos.append(p + 0.001 * torch.randn(p.shape, generator=gen))
        batch.append(torch.full((p.size(0),), e))
    pos = torch.cat(pos)
    return torch.ones(pos.size(0), 1).to(device), pos.to(device), torch.cat(batch).to(device)


@torch.no_grad()
def bench_pointclouds(device, events: int, points: int, repeats: int):
    x, pos, batch = synthetic_track_batch(events, points, device)
    results = {}
    for name in ("gess-egnn", "gess-dgcnn", "gess-pointtransformer"):
        torch.manual_seed(0)
        model = build_model(name, 1, 1).to(device).eval()
        model(x, pos, batch)  # warm-up
        times = []
        for _ in range(repeats):
            _sync(device)
            t0 = time.perf_counter()
            model(x, pos, batch)
            _sync(device)
            times.append(time.perf_counter() - t0)
        med = statistics.median(times)
        results[name] = {
            "events_per_batch": events,
            "points_per_event": points,
            "seconds_per_batch": med,
            "clouds_per_second": events / med,
        }
    return results


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--events", type=int, default=4, help="point clouds per batch")
    ap.add_argument("--points", type=int, default=3000, help="points per point cloud")
    ap.add_argument("--quick", action="store_true", help="fewer repeats (smoke run)")
    ap.add_argument("--json", help="also write the results to this JSON file")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    repeats = 3 if args.quick else args.repeats
    res = {
        "device": str(device) if device.type == "cpu" else torch.cuda.get_device_name(device),
        "threads": args.threads,
        "torch": torch.__version__,
        "gcn_epoch": bench_gcn(device, repeats),
        "pointcloud_inference": bench_pointclouds(
            device, args.events, args.points, max(2, repeats // 2)
        ),
    }
    print("Full-batch GCN epoch on synthetic CoraML-size data (median ms):")
    for name, r in res["gcn_epoch"].items():
        print(
            f"  {name:45s} gs-models {r['gs_models_ms']:8.2f}  bare PyG {r['bare_pyg_ms']:8.2f}  ratio {r['ratio']:.3f}"
        )
    print(f"Point-cloud inference on synthetic Track-sized events ({args.points} points, k=5):")
    for name, r in res["pointcloud_inference"].items():
        print(
            f"  {name:25s} {r['clouds_per_second']:9.2f} clouds/s  ({r['seconds_per_batch']:.3f} s per batch of {r['events_per_batch']})"
        )
    if args.json:
        # gs-models has no atomic-write helper of its own (it writes no files); this script
        # borrows gs-data's, the layer below (docs/architecture.md, "One of each")
        from gs_data import atomic_write

        with atomic_write(args.json, "w", encoding="utf-8") as fh:
            json.dump(res, fh, indent=2)


if __name__ == "__main__":
    main()
