"""Diagnostic check (not part of the package): edgewise EPFGNN with the released code's EM
schedule (up to 100 EM rounds) instead of our one round, on recorded ``ci`` jobs (Planetoid
Cora, fold 0, initialisation 0, the given splits); prints the recorded and the re-run
accuracy / ECEs side by side.

    OMP_NUM_THREADS=1 python apps/bench/checks/epfgnn_em_rounds.py --rounds 100 --splits 0 1

Run from the repository root with ``../shared`` beside it (about 30 CPU s per split).
It patches ``gs_algos.EMConfig.epfgnn`` in this process only.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

MEASURED = Path(__file__).resolve().parents[1] / "measured" / "ci-edgewise" / "results.jsonl"
KEYS = ("node_acc", "nodewise_ece", "edgewise_ece", "agree_ece", "disagree_ece")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--splits", type=int, nargs="+", default=[0, 1])
    args = ap.parse_args()
    torch.set_num_threads(1)
    from gs_algos.em import EMConfig
    from gs_bench.runners import edgewise

    preset = EMConfig.epfgnn.__func__
    EMConfig.epfgnn = classmethod(lambda cls, **ch: preset(cls, **{"em_rounds": args.rounds, **ch}))
    recs = [json.loads(line) for line in MEASURED.read_text().splitlines()]
    for split in args.splits:
        params = {"dataset": "planetoid-cora", "fold": 0, "model": "epfgnn", "split": split}
        base = next(r for r in recs if r["job"]["params"] == params and r["job"]["seed"] == 0)
        m = edgewise.run_job(base["job"])
        m = m.get("metrics", m)
        for label, src in (("recorded, 1 round", base["metrics"]), (f"{args.rounds} rounds", m)):
            cells = ", ".join(f"{k} {100 * src[k]:.2f}" for k in KEYS)
            print(f"split {split} {label}: {cells}, epochs {src['epochs_run']}", flush=True)


if __name__ == "__main__":
    main()
