"""Reproduce structural-shifts table 9 (ERM on CoraML) and table 1 (SE AUROC).

ERM with the base GCN in our earlier layer order (3 GCN layers x 256, dropout 0.2, batch
norm before GELU, linear head; gs-models preset ``structural-shifts-base-early-stop``), Adam
lr 3e-4 / weight decay 1e-5 (appendix F), the authors' published CoraML splits
(``splits/<shift>.pth``), 5 seeds, our earlier protocol ``TrainConfig.structural_shifts(
"early-stop")`` (selection on Valid-In accuracy, patience 50). Prints a markdown table; with ``--readme`` also writes it
between the markers in ``packages/gs-algos/README.md``.

Run from the repository root::

    python packages/gs-algos/benchmarks/coraml_table9.py --readme
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import scipy.io
import torch
from torch_geometric.data import Data
from torch_geometric.utils import coalesce, remove_self_loops, to_undirected

from gs_algos.checkpoint import atomic_write
from gs_algos.config import TrainConfig
from gs_algos.engine import fit_node, predict_node, seeded
from gs_algos.uncertainty import softmax_entropy
from gs_metrics import auroc

PAPER = {  # table 9 (ERM accuracy ID / OOD) and table 1 (SE AUROC), CoraML
    "popularity": (85.80, 82.42, 75.67),
    "locality": (84.47, 72.13, 87.13),
    "density": (93.27, 77.33, 81.55),
}
KEYS = {"train": "in_train", "valid_in": "in_valid", "test_in": "in_test",
        "valid_out": "out_valid", "test_out": "out_test"}


def load_coraml(root: Path) -> Data:
    m = scipy.io.loadmat(root / "data.mat")
    x = torch.tensor(np.asarray(m["features"].todense()), dtype=torch.float32)
    y = torch.tensor(np.asarray(m["labels"]).reshape(-1), dtype=torch.long)
    ei = torch.tensor(np.asarray(m["edges"]), dtype=torch.long)
    ei, _ = remove_self_loops(ei)
    ei = coalesce(to_undirected(ei, num_nodes=x.size(0)), num_nodes=x.size(0))
    return Data(x=x, edge_index=ei, y=y)


def load_masks(root: Path, shift: str) -> dict[str, torch.Tensor]:
    raw = torch.load(root / "splits" / f"{shift}.pth", weights_only=True)
    return {KEYS[k]: v.bool() for k, v in raw.items()}


def run_erm(data: Data, masks: dict, seed: int, max_epochs: int = 1000, patience: int = 50):
    from gs_models import build_model

    # the table below was measured with our earlier protocol and layer order: keep them
    model = seeded(lambda: build_model("structural-shifts-base-early-stop", data.x.size(1), 7), seed)
    cfg = TrainConfig.structural_shifts("early-stop", seed=seed, max_epochs=max_epochs, patience=patience)
    res = fit_node(model, data, None, cfg, masks=masks)
    _, logits = predict_node(model, data)
    test = masks["in_test"] | masks["out_test"]
    unc = softmax_entropy(logits)[test].double().numpy()
    auc = auroc(unc, masks["out_test"][test].numpy())
    m = res.best.metrics
    return 100 * m["in_test"]["accuracy"], 100 * m["out_test"]["accuracy"], 100 * auc, res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.environ.get("GS_SHARED_DATA", "../shared/datasets"))
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--readme", action="store_true")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (1 is fastest on a shared machine)")
    args = ap.parse_args(argv)
    root = Path(args.data) / "structural-shifts" / "cora-ml"
    torch.set_num_threads(args.threads)
    data = load_coraml(root)
    lines = [
        "| shift | ID acc (ours) | ID acc (paper) | OOD acc (ours) | OOD acc (paper) "
        "| SE AUROC (ours) | SE AUROC (paper) | epochs (mean) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    t0 = time.perf_counter()
    for shift, (p_id, p_ood, p_auc) in PAPER.items():
        masks = load_masks(root, shift)
        rows = []
        for s in range(args.seeds):
            rows.append(run_erm(data, masks, s))
            r = rows[-1]
            print(f"# {shift} seed {s}: ID {r[0]:.2f} OOD {r[1]:.2f} AUROC {r[2]:.2f} "
                  f"epochs {r[3].epochs_run} ({time.perf_counter() - t0:.0f} s)", flush=True)
        a = np.array([r[:3] for r in rows])
        ep = np.mean([r[3].epochs_run for r in rows])
        mu, sd = a.mean(0), a.std(0)
        lines.append(
            f"| {shift} | {mu[0]:.2f} ± {sd[0]:.2f} | {p_id:.2f} | {mu[1]:.2f} ± {sd[1]:.2f} | "
            f"{p_ood:.2f} | {mu[2]:.2f} ± {sd[2]:.2f} | {p_auc:.2f} | {ep:.0f} |"
        )
    elapsed = time.perf_counter() - t0
    table = "\n".join(lines)
    footer = (f"\n\n{args.seeds} seeds per shift, CPU ({torch.get_num_threads()} threads), "
              f"{elapsed:.0f} s in total.\n")
    sys.stdout.write(table + footer)
    if args.readme:
        readme = Path(__file__).resolve().parents[1] / "README.md"
        text = readme.read_text()
        start, end = "<!-- table9:start -->", "<!-- table9:end -->"
        if start not in text or end not in text:
            raise SystemExit(f"markers {start} / {end} not found in {readme}")
        new = text.split(start)[0] + start + "\n" + table + footer + end + text.split(end)[1]
        with atomic_write(readme, "w", encoding="utf-8") as fh:  # gs-algos' one helper
            fh.write(new)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
