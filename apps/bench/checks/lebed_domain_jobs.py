"""Whole LeBed domain-shift jobs of the ``ci`` profile (ACMv9 -> ACMv9 / Citationv1 / DBLPv7,
all 36 test graphs in one job instead of 8 shards), with the runner's own ``run_job`` at the
current tree: LeBed's and the baselines' rho over the 36 graphs, its bootstrap interval, and
the rho on a set composed like the authors' (41 source : 328 target graphs; the report's
domain table). The ``ci`` run gives the same per-graph values in its shards; this gives the
figures of one model in minutes, e.g. after a change of the pre-training.

    OMP_NUM_THREADS=1 GS_SHARED_DATA=../shared/datasets \\
        python apps/bench/checks/lebed_domain_jobs.py --models gcn sage gin mlp [--json-dir DIR]

``--seeds 0 1 2`` runs each model at those job seeds (the model's initial parameters and
pre-training; the 36 test graphs are the same at every seed, as in the runner), one line
block per seed; the ``ci`` profile runs seed 0.

``--summarize DIR`` prints the table from the ``acm_<model>.json`` outputs a run saved there
(``--json-dir``) without running again.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

from gs_bench.published import lebed_published
from gs_bench.runners import lebed
from gs_bench.runners.lebed.report import bootstrap_interval, domain_mix_rho
from gs_bench.runners.lebed.spec import ESTIMATORS, ORIENT
from gs_bench.suites import load_suite


def run(model: str, seed: int = 0) -> dict:
    # the ci profile's own settings (not a copy of them), in one shard
    settings = {**load_suite("lebed", "ci").settings, "shards": 1}
    return lebed.run_job({"params": {"dataset": "acmv9", "shift": "domain", "model": model},
                          "settings": settings, "seed": seed, "device": "cpu"})


def summary(model: str, out: dict) -> list[str]:
    src = [g == "acmv9" for g in out["groups"]]
    stops = sorted(out["lebed_stop_steps"])
    lines = []
    for k in ESTIMATORS:
        rho = out[f"{k}_spearman"]
        mix = domain_mix_rho(out["scores"][k], out["errors"], src, ORIENT[k])
        pub = lebed_published("acm", model, k)
        paper = f"{pub[0]:+.2f}" if pub else "—"
        extra = ""
        if k == "lebed":
            lo, hi = bootstrap_interval(out["scores"][k], out["errors"], ORIENT[k])
            extra = f" [{lo:.2f}, {hi:.2f}], median {stops[len(stops) // 2]} updates"
        lines.append(f"{model} | {k} | {rho:+.2f}{extra} | source {mix['source']:+.2f} | targets "
                     f"{mix['target']:+.2f} | authors' mix {mix['mix']:+.2f} | paper {paper}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+", default=["gcn", "sage", "gin", "mlp"],
                    choices=["gcn", "gat", "sage", "gin", "mlp"])
    ap.add_argument("--seeds", nargs="+", type=int, default=[0], metavar="S",
                    help="job seeds (default: 0, the ci profile's)")
    ap.add_argument("--json-dir", type=Path, default=None, help="save each job's output there")
    ap.add_argument("--summarize", type=Path, default=None, metavar="DIR",
                    help="only print the table of the acm_<model>.json files in DIR")
    args = ap.parse_args()
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"# lebed_domain_jobs at {rev}; rho orientation-corrected (each score grows with the "
          "error), paper as gs_bench.published.LEBED_SIGN reads it")
    print("model | estimator | rho, 36 graphs | source (12) | targets (24) | authors' mix | paper")
    for model in args.models:
        for seed in args.seeds:
            # seed 0 keeps the file name the logs committed before --seeds refer to
            name = f"acm_{model}.json" if seed == 0 else f"acm_{model}.seed{seed}.json"
            if args.summarize is not None:
                out = json.loads((args.summarize / name).read_text())
            else:
                t = time.time()
                out = run(model, seed)
                print(f"# {model}, seed {seed}: {time.time() - t:.0f} s", flush=True)
                if args.json_dir is not None:
                    args.json_dir.mkdir(parents=True, exist_ok=True)
                    (args.json_dir / name).write_text(json.dumps(out))
            print("\n".join(summary(model, out)), flush=True)


if __name__ == "__main__":
    main()
