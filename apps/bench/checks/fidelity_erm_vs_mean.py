"""Diagnostic check (not part of the package): EGNN ERM on the molecular fidelity stand-in
against the train-mean predictor, on raw eV and on standardised targets (issue 29).

Why: the committed ``ci`` run (apps/bench/measured/ci-gess) trained ERM to Test-ID MAE 4.683 eV,
and nobody knew whether that beats predicting the training mean. It does not (1.264 eV): 8
epochs of 3 Adam steps on raw eV leave the default head predicting about 0.9 eV for gaps of 5.6
eV. This script prints the train-mean predictor's MAE per part and trains ERM exactly as the
gess runner does (``gs_bench.runners.gess``: its data, parts, model and ``train_config``; batch
64 as the ci profile) for each variant and seed: ``raw`` (GeSS's code: MSE on raw eV) or
``std`` (gs-algos ``TrainConfig.standardize_targets``), for the given epochs. Each line gives
the ID- and OOD-selected Test-ID / Test-OOD MAE, the ID-selected Test-ID as a fraction of the
train-mean predictor's, and the mean prediction on Test-ID against the mean Test-ID gap.

    OMP_NUM_THREADS=1 python apps/bench/checks/fidelity_erm_vs_mean.py \\
        [--variants raw:8 std:8 raw:100 std:100] [--seeds 0 1 2 3 4]

With scikit-learn installed it also fits a random forest on element counts and short / long
heavy-atom bond counts (ours, a feature baseline: what 135 molecules support without a GNN).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

NAME = "molecular-fidelity"
PARTS = ("train", "iid_val", "iid_test", "ood_val", "ood_test")


def _y(graphs) -> np.ndarray:
    return np.asarray([float(g.y.reshape(-1)[0]) for g in graphs])


def _forest(parts, num_types: int) -> None:
    try:
        from sklearn.ensemble import RandomForestRegressor
    except ImportError:
        print("random forest baseline skipped (scikit-learn not installed)")
        return

    def feats(g):
        z = g.x.reshape(-1).long().numpy()
        pos = g.pos.numpy()
        d = np.linalg.norm(pos[:, None] - pos[None], axis=-1)
        heavy = z != z.min()  # hydrogen has the smallest type id
        hh = d[np.ix_(heavy, heavy)]
        short = float(((hh > 0.1) & (hh < 1.42)).sum() / 2)
        single = float(((hh >= 1.42) & (hh < 1.6)).sum() / 2)
        return np.r_[np.bincount(z, minlength=num_types), len(z), short, single, short / (short + single + 1e-9)]

    x = {p: np.stack([feats(g) for g in parts[p]]) for p in PARTS}
    rf = RandomForestRegressor(300, min_samples_leaf=2, random_state=0).fit(x["train"], _y(parts["train"]))
    print("random forest (element and bond counts): " + "  ".join(
        f"{p} {np.abs(rf.predict(x[p]) - _y(parts[p])).mean():.3f}" for p in PARTS[1:]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variants", nargs="+", default=["raw:8", "std:8", "raw:100", "std:100"],
                    help="raw|std:EPOCHS (default: raw:8 std:8 raw:100 std:100)")
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    ap.add_argument("--batch-size", type=int, default=64)
    args = ap.parse_args()

    import torch

    from gs_algos.engine import fit_graph, predict_graph, seeded
    from gs_algos.methods import METHODS
    from gs_bench.runners import gess
    from gs_models import build_model

    torch.set_num_threads(1)
    case = gess.DATASETS[NAME]
    ds = gess._dataset(NAME, {}, "no-info")
    parts = gess._parts(ds, "no-info")
    mean = float(_y(parts["train"]).mean())
    floor = {p: float(np.abs(_y(parts[p]) - mean).mean()) for p in PARTS}
    print(f"{NAME}: sizes " + ", ".join(f"{p} {len(parts[p])}" for p in PARTS)
          + f"; train mean {mean:.3f} eV, std {_y(parts['train']).std(ddof=1):.3f}")
    print("train-mean predictor MAE: " + "  ".join(f"{p} {floor[p]:.3f}" for p in PARTS))
    _forest(parts, int(ds.num_atom_types))
    in_ch, categorical = gess._model_inputs(ds, case)
    eval_parts = {p: parts[p] for p in PARTS}
    for variant in args.variants:
        kind, epochs = variant.split(":")
        if kind not in ("raw", "std"):
            raise SystemExit(f"variant {variant!r}: expected raw:EPOCHS or std:EPOCHS")
        rows = []
        for seed in args.seeds:
            settings = {"max_epochs": int(epochs), "batch_size": args.batch_size,
                        "standardize_targets": kind == "std"}
            cfg = gess.train_config(NAME, "erm", settings, seed)
            model = seeded(lambda: build_model(gess.BACKBONES["egnn"], in_ch, 1, categorical=categorical,
                                               k=case.knn_k), seed)
            t0 = time.perf_counter()
            res = fit_graph(model, eval_parts, METHODS["erm"](), cfg)
            wall = time.perf_counter() - t0
            idt, ood = res.tracks["iid_val"].metrics, res.tracks["ood_val"].metrics
            pred = float(predict_graph(model, parts["iid_test"])[1].mean())
            rows.append(idt["iid_test"]["mae"])
            print(f"{kind:3s} {int(epochs):3d} epochs seed {seed}: ID-sel Test-ID {idt['iid_test']['mae']:.3f} "
                  f"({idt['iid_test']['mae'] / floor['iid_test']:.2f} x mean) Test-OOD {idt['ood_test']['mae']:.3f}"
                  f" | OOD-sel Test-ID {ood['iid_test']['mae']:.3f} Test-OOD {ood['ood_test']['mae']:.3f}"
                  f" | mean prediction on Test-ID {pred:.2f} (gaps {_y(parts['iid_test']).mean():.2f}) | {wall:.0f} s")
        if len(rows) > 1:
            print(f"{kind:3s} {int(epochs):3d} epochs: ID-sel Test-ID {np.mean(rows):.3f} +- {np.std(rows, ddof=1):.3f}"
                  f" over {len(rows)} seeds = {np.mean(rows) / floor['iid_test']:.3f} x the train-mean predictor")


if __name__ == "__main__":
    main()
