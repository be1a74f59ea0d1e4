"""Why the Track ERM validation accuracy jumps to 0.50 (issue 29): batch-norm running statistics.

Trains the gess EGNN (GeSS preset, k = 5) with ERM on an exported Track dataset
(``checks/track_gpu_job.py export``; the ci-size Track-Pileup events) with Adam lr 1e-3 in
batches of 64, and after every epoch measures the accuracy three ways:

* ``val_eval`` / ``train_eval`` / ``test_eval``: eval mode, the batch norms' running averages
  (what fit_graph evaluated before ``TrainConfig.norm_stats_graphs``);
* ``val_batchstats``: the batch norms in train mode on each validation batch (its own stats);
* ``val_precise`` / ``test_precise``: eval mode after recomputing the statistics over the
  training part under the current weights ("precise BN", what ``norm_stats_graphs`` does);

and ``g_abs_mean``, the mean |sum-pooled embedding| of a validation batch.

    PYTHONPATH=... python apps/bench/checks/track_bn_stats.py .gpu/pileup-ci.npz 8 64

Committed output: ``measured/ci-gess/checks-bn-stats.log``.
"""
import json
import sys
import time

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
import torch
from torch_geometric.loader import DataLoader
from track_gpu_job import load_parts

from gs_bench.runners import gess as G
from gs_models import build_model

torch.set_num_threads(1)
torch.manual_seed(0)
export = sys.argv[1]
epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 8
bs = int(sys.argv[3]) if len(sys.argv) > 3 else 64
parts, meta = load_parts(export, 5)
print({p: len(v) for p, v in parts.items()}, flush=True)
model = build_model(G.BACKBONES["egnn"], 1, 1, categorical=False, k=5)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
bn_inner = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
print("bn modules", len(bn_inner), flush=True)

def acc(graphs, mode):
    model.eval()
    if mode == "batchstats":
        for m in bn_inner:
            m.train()
    correct = n = 0
    with torch.no_grad():
        for b in DataLoader(graphs, batch_size=bs):
            _, out = model(b.x, b.pos, b.batch, edge_index=b.knn_index)
            correct += ((out.view(-1) > 0).float() == b.y).sum().item()
            n += len(b.y)
    model.eval()
    return correct / n

def precise_bn():
    saved = [(m.running_mean.clone(), m.running_var.clone(), m.momentum) for m in bn_inner]
    for m in bn_inner:
        m.reset_running_stats()
        m.momentum = None
    model.eval()
    for m in bn_inner:
        m.train()
    with torch.no_grad():
        for b in DataLoader(parts["train"], batch_size=bs, shuffle=True):
            model(b.x, b.pos, b.batch, edge_index=b.knn_index)
    model.eval()
    return saved

def restore(saved):
    for m, (rm, rv, mo) in zip(bn_inner, saved, strict=True):
        m.running_mean.copy_(rm)
        m.running_var.copy_(rv)
        m.momentum = mo

for ep in range(epochs):
    t = time.time()
    model.train()
    tot = 0
    for b in DataLoader(parts["train"], batch_size=bs, shuffle=True):
        opt.zero_grad()
        g, out = model(b.x, b.pos, b.batch, edge_index=b.knn_index)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(out.view(-1), b.y)
        loss.backward()
        opt.step()
        tot += loss.item() * len(b.y)
    r = {"ep": ep, "loss": round(tot / len(parts["train"]), 4), "s": round(time.time() - t, 1)}
    r["val_eval"] = acc(parts["iid_val"], "eval")
    r["train_eval"] = acc(parts["train"], "eval")
    r["val_batchstats"] = acc(parts["iid_val"], "batchstats")
    saved = precise_bn()
    r["val_precise"] = acc(parts["iid_val"], "eval")
    r["test_precise"] = acc(parts["iid_test"], "eval")
    restore(saved)
    r["test_eval"] = acc(parts["iid_test"], "eval")
    with torch.no_grad():
        b = next(iter(DataLoader(parts["iid_val"], batch_size=bs)))
        g, _ = model(b.x, b.pos, b.batch, edge_index=b.knn_index)
        r["g_abs_mean"] = round(g.abs().mean().item(), 2)
    print(json.dumps(r), flush=True)
