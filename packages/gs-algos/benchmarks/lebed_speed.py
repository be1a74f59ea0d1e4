"""Seconds per LeBed test graph: this checkout against a base revision, same graphs.

LeBed's cost is re-training the model on every test graph. This script scores a few test graphs
of the Cora feature shift (EERM environments, the paper's perturbations) with the authors'
Cora re-training settings after the authors' pre-training (Adam lr 1e-3, weight decay 5e-4, stop at the first epoch >= 5 whose
structure BCE is within 0.03 of the reference, at most 500) twice: with the LeBed loop and the
model code of ``--base`` (read with ``git show``) and with this checkout's ``gs_algos.lebed``.
The runs alternate graph by graph, so a busy machine slows both alike; wall and CPU seconds
(one torch thread) are printed per test graph, with the stopping steps.

    python packages/gs-algos/benchmarks/lebed_speed.py --root ../shared/datasets --base 5f75c88
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch


def _load_base(rev: str, repo: Path, folder: Path):
    """The base revision's ``gs_metrics/lebed.py`` and ``gs_models/node.py`` as modules."""
    mods = {}
    for name, path in (("base_lebed", "packages/gs-metrics/src/gs_metrics/lebed.py"),
                       ("base_node", "packages/gs-models/src/gs_models/node.py")):
        text = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=repo, check=True,
                              capture_output=True, text=True).stdout
        file = folder / f"{name}.py"
        file.write_text(text)
        spec = importlib.util.spec_from_file_location(name, file)
        mods[name] = importlib.util.module_from_spec(spec)
        sys.modules[name] = mods[name]  # dataclasses look their module up while it executes
        spec.loader.exec_module(mods[name])
    return mods["base_lebed"], mods["base_node"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default="../shared/datasets")
    ap.add_argument("--base", default="5f75c88", help="git revision to compare with")
    ap.add_argument("--model", default="gcn")
    ap.add_argument("--graphs", type=int, nargs="+", default=[0, 25, 45, 65],
                    help="indices into the 320 test graphs (0-19 noise, 20-39 masking of env. 2, ...)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    import gs_data
    from gs_algos.lebed import LeBedConfig, lebed_score, pretrain
    from gs_models import build_model, preset

    repo = Path(__file__).resolve().parents[3]
    with tempfile.TemporaryDirectory() as tmp:
        base_lebed, base_node = _load_base(args.base, repo, Path(tmp))
        graphs = gs_data.lebed_feature_shift(gs_data.load("planetoid-cora", root=args.root), seed=0)
        width = graphs[0].x.shape[1]
        torch.manual_seed(0)
        new = build_model(f"lebed-{args.model}", width, graphs.num_classes)
        init = copy.deepcopy(new.state_dict())
        t = time.perf_counter()
        pretrain(new, graphs.train, graphs.valid, num_classes=graphs.num_classes)  # authors' protocol
        print(f"pre-training: {time.perf_counter() - t:.1f} s wall", flush=True)
        old = base_node.NodeGNN(width, graphs.num_classes, preset(f"lebed-{args.model}"))
        old.load_state_dict(new.state_dict())
        old_cfg = base_lebed.LeBedConfig(max_steps=500, min_steps=5, epsilon=0.03, lr=1e-3, weight_decay=5e-4)
        rows = {"base": [], "this": []}
        for i in args.graphs:
            g = graphs[i]
            for tag in ("base", "this"):
                t, c = time.perf_counter(), time.process_time()
                if tag == "base":
                    r = base_lebed.lebed_score(old, init, g.x, g.edge_index, config=old_cfg, seed=i)
                else:
                    r = lebed_score(new, init, g.x, g.edge_index, config=LeBedConfig(), seed=i)
                wall, cpu = time.perf_counter() - t, time.process_time() - c
                rows[tag].append((wall, cpu, r.stop_step))
                print(f"graph {i:3d} {g.perturbation:13s} {tag:4s}: {wall:7.2f} s wall, {cpu:7.2f} s CPU, "
                      f"{r.stop_step:3d} steps ({cpu / r.stop_step * 1000:.0f} ms CPU per step)", flush=True)
        for tag, vals in rows.items():
            a = np.asarray(vals)
            print(f"{tag}: mean {a[:, 0].mean():.2f} s wall, {a[:, 1].mean():.2f} s CPU per test graph, "
                  f"{1000 * a[:, 1].sum() / a[:, 2].sum():.0f} ms CPU per step")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
