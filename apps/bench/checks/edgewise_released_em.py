"""Diagnostic check (not part of the package): edgewise GMNN / EPFGNN with the released
models and EM loops (``structured_variant = "released"``, the runner's default since issue
15) on recorded ``ci`` jobs (``measured/ci-edgewise/results.jsonl``, recorded with
``ours-v1``): Planetoid Cora, fold 0, initialisation 0, the given splits. Prints, per model,
the recorded (ours-v1) and the re-run metrics beside the paper (Table 1 / 3 for the
structured joints, the released code's product-of-node-marginals scoring, Table 4 for
EPFGNN mean field), and the CPU seconds of every re-run job.

    OMP_NUM_THREADS=1 GS_SHARED_DATA=../shared/datasets \\
        python apps/bench/checks/edgewise_released_em.py --splits 0 1 2

``--set key=value`` changes a field of the EM preset (e.g. ``--set em_rounds=1``) and
``--model-set key=value`` one of the model config (e.g. ``--model-set lbp_damping=0.5``) and
``--settings key=value`` a suite setting (e.g. ``--settings normalize_features=False``), in
this process only, for one-variable-at-a-time checks.
"""

from __future__ import annotations

import argparse
import ast
import json
import time
from pathlib import Path

import torch

MEASURED = Path(__file__).resolve().parents[1] / "measured" / "ci-edgewise" / "results.jsonl"
KEYS = ("node_acc", "nodewise_ece", "edgewise_ece", "agree_ece", "disagree_ece")
ROWS = ((None, "", "{m}"), ("product", " product", None), ("mean_field", " mean field", "epfgnn-mean-field"))


def _kv(items: list[str]) -> dict:
    out = {}
    for it in items:
        k, v = it.split("=", 1)
        try:
            out[k] = ast.literal_eval(v)
        except (ValueError, SyntaxError):
            out[k] = v
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--splits", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--models", nargs="+", default=["gmnn", "epfgnn"])
    ap.add_argument("--variant", default="released")
    ap.add_argument("--set", nargs="*", default=[], help="EMConfig field overrides")
    ap.add_argument("--model-set", nargs="*", default=[], help="model config field overrides")
    ap.add_argument("--settings", nargs="*", default=[], help="suite settings overrides")
    args = ap.parse_args()
    torch.set_num_threads(1)
    import gs_models
    from gs_algos.em import EMConfig
    from gs_bench.published import published
    from gs_bench.runners import edgewise

    em_over, model_over = _kv(args.set), _kv(args.model_set)
    for name in ("gmnn", "epfgnn"):
        preset = getattr(EMConfig, name).__func__
        setattr(EMConfig, name, classmethod(
            lambda cls, variant="released", _p=preset, **ch: _p(cls, variant, **{**ch, **em_over})))
    if model_over:
        build = gs_models.build_model
        gs_models.build_model = lambda *a, **kw: build(*a, **{**kw, **model_over})
    recs = [json.loads(line) for line in MEASURED.read_text().splitlines()]
    print(f"variant {args.variant}, EM overrides {em_over}, model overrides {model_over}")
    for model in args.models:
        acc: dict[str, list[tuple[dict, dict]]] = {}
        for split in args.splits:
            params = {"dataset": "planetoid-cora", "fold": 0, "model": model, "split": split}
            base = next(r for r in recs if r["job"]["params"] == params and r["job"]["seed"] == 0)
            job = json.loads(json.dumps(base["job"]))
            job["settings"]["structured_variant"] = args.variant
            job["settings"].update(_kv(args.settings))
            t0 = time.process_time()
            new = edgewise.run_job(job)
            cpu = time.process_time() - t0
            print(f"{model} split {split}: {cpu:.1f} CPU s, EM rounds {new.get('em_rounds_run')}, "
                  f"epochs {new['epochs_run']} (recorded {base['metrics']['epochs_run']})", flush=True)
            for variant, _, _ in ROWS:
                old = base["metrics"] if variant is None else base["metrics"].get(variant)
                cur = new if variant is None else new.get(variant)
                if old is not None and cur is not None:
                    acc.setdefault(variant or "", []).append((old, cur))
        print(f"\n{model.upper()}, Cora fold 0 splits {args.splits} init 0: recorded -> new (paper)")
        for variant, label, pub_model in ROWS:
            pairs = acc.get(variant or "")
            if not pairs:
                continue
            cells = []
            for k in KEYS:
                old = 100 * sum(p[0][k] for p in pairs) / len(pairs)
                cur = 100 * sum(p[1][k] for p in pairs) / len(pairs)
                pub = published("edgewise", "planetoid-cora", pub_model.format(m=model), k) if pub_model else None
                paper = f" ({pub[0]:.2f})" if pub else ""
                cells.append(f"{k} {old:.2f} -> {cur:.2f}{paper}")
            print(f"  {model}{label}: " + ", ".join(cells))
        print(flush=True)


if __name__ == "__main__":
    main()
