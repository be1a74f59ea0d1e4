"""Diagnostic check (not part of the package): DANN / CORAL / Mixup / EERM of the
structural-shifts `ci` profile trained with GOOD's training protocol instead of the paper's
appendix-F optimiser and lowest-Valid-In-loss checkpoint, one run (seed 43; `--runs` for more) per cell.

The paper trained these four methods "using the experimental framework from the GOOD benchmark"
(section 4), while its appendix F and section 3.1 give Adam lr 3e-4, weight decay 1e-5 and the
checkpoint of the lowest Valid-In loss for its graph models. The `ci` profile follows the text
(gs-bench ``protocol = "authors"``). GOOD's own GOODCora configs (divelab/GOOD
``configs/GOOD_configs/GOODCora/degree/covariate/*.yaml``, ``GOOD/kernel/pipelines/
basic_pipeline.py`` ``save_epoch``) use Adam lr 1e-3 and no weight decay for 100 epochs (EERM:
lr 5e-3, 50 epochs) and keep the checkpoint of the best *accuracy* on the ID validation nodes.

Variants (``--protocol``):

* ``good``     - GOOD's optimiser, epochs and Valid-In accuracy checkpoint (model, formulation,
  domains and batch-norm passes as the `ci` run);
* ``accuracy`` - the paper's optimiser and 200 epochs, Valid-In accuracy checkpoint;
* ``paper``    - the `ci` run's own protocol (lr 3e-4, weight decay 1e-5, 200 epochs, lowest
  Valid-In loss), to reproduce a recorded cell.

Encoders (``--encoder``):

* ``ci``   - the `ci` run's encoder (appendix F: 3 GCN layers x 256, dropout 0.2, GELU, batch
  norm after the activation, linear head);
* ``good`` - GOOD's ``GCNEncoder`` with its ``configs/GOOD_configs/base.yaml`` widths
  (``GOOD/networks/models/GCNs.py``: 3 GCN layers x 300, each conv -> batch norm -> ReLU ->
  dropout 0.5, no ReLU after the last conv; linear classifier). Our config leaves the last
  layer's batch norm out with its activation, the one difference left.

For each cell and method it prints ID / OOD accuracy and the restored epoch beside the recorded
values of the same seed (``--measured``) and the paper's.

    OMP_NUM_THREADS=1 python apps/bench/checks/robustness_protocol.py --protocol good \\
        --methods dann coral mixup eerm -- cora-ml:locality citeseer:locality

Run from the repository root with ``../shared`` beside it; about 0.5-1 CPU minute per job.
It patches ``gs_algos.TrainConfig.structural_shifts`` in this process only.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

MEASURED = Path(__file__).resolve().parents[1] / "measured" / "ci-structural-shifts" / "results.jsonl"

#: GOOD's GOODCora degree/covariate configs: (lr, weight decay, epochs) per method
GOOD_OPTIMISER = {"erm": (1e-3, 0.0, 100), "dann": (1e-3, 0.0, 100), "coral": (1e-3, 0.0, 100),
                  "mixup": (1e-3, 0.0, 100), "eerm": (5e-3, 0.0, 50)}


def _patch(protocol: str, method: str, select: str = "in", steps: int = 1) -> None:
    from gs_algos.config import TrainConfig

    original = TrainConfig.__dict__["structural_shifts"].__func__

    def structural_shifts(cls, proto="authors", **changes):
        cfg = original(cls, proto, **changes)
        if select == "out":
            # GOOD's test mode evaluates best.ckpt: the best *OOD* validation score
            # (basic_pipeline.py save_epoch "Out-Of-Domain checkpoint", load_task test_ckpt)
            cfg = cfg.replace(select_on=("out_valid",))
        if protocol == "paper":
            return cfg
        if protocol == "good":
            lr, wd, epochs = GOOD_OPTIMISER[method]
            # GOOD's loop: one forward pass (one batch-norm update) per step
            cfg = cfg.replace(lr=lr, weight_decay=wd, max_epochs=epochs, norm_updates_per_step=1)
            if steps > 1 and method != "eerm":
                # GOOD's GraphSAINT epochs take 10 steps (EERM: one full-graph step): as many
                # full-batch steps per "epoch", evaluated once per epoch, so that the checkpoint
                # rule and DANN's reversal ramp (epoch / max_epochs) see GOOD's step counts
                cfg = cfg.replace(max_epochs=epochs * steps, eval_every=steps)
        return cfg.replace(metric="accuracy")

    TrainConfig.structural_shifts = classmethod(structural_shifts)


#: GOOD's GCN encoder as NodeGNNConfig overrides (see the module docstring)
GOOD_ENCODER = {"hidden_channels": 300, "dropout": 0.5, "activation": "relu",
                "layer_order": "conv-norm-act", "last_activation": False, "norm": "batch"}


def _patch_encoder(encoder: str) -> None:
    """Make ``gs_models.build_model`` (which the runner imports at call time) build GOOD's
    encoder widths for the node presets when ``encoder == "good"``."""
    import gs_models

    original = getattr(gs_models.build_model, "__wrapped__", gs_models.build_model)
    if encoder == "ci":
        gs_models.build_model = original
        return

    def build_model(name, in_channels, out_channels, **kw):
        return original(name, in_channels, out_channels, **{**GOOD_ENCODER, **kw})

    build_model.__wrapped__ = original
    gs_models.build_model = build_model


#: the keyword of each method that GOOD calls ``ood_param``
OOD_PARAM = {"dann": "domain_weight", "coral": "penalty_weight", "mixup": "alpha", "eerm": "beta"}


def _patch_ood_param(method: str, value: float | None) -> None:
    """Train ``method`` with GOOD's ``ood_param`` = ``value`` (``None``: the variant's
    default, GOODCora/degree/covariate), e.g. a point of GOOD's sweep grid
    (``configs/sweep_configs/<method>/base.yaml``: DANN / CORAL 1, 0.1, 0.01, 0.001; Mixup
    0.4, 1, 2; EERM 0.5, 1, 3)."""
    import functools

    from gs_algos.methods import METHODS

    cls = METHODS[method]
    cls = getattr(cls, "func", cls)
    METHODS[method] = cls if value is None else functools.partial(cls, **{OOD_PARAM[method]: value})


def _patch_norm_updates(n: int | None) -> None:
    """Batch-norm updates per training step of the four methods: ``None`` keeps ours (1, GOOD's
    loop: one forward pass per step); ``0`` takes the training config's, as ERM does (the
    authors' framework: 4 under ``protocol = "authors"``); another number that many."""
    import gs_algos.node_methods as nm

    if not hasattr(nm, "_robust_model_ours"):
        nm._robust_model_ours = nm._robust_model
    if n is None:
        nm._robust_model = nm._robust_model_ours
        return

    def robust_model(name, variant=nm.DEFAULT_ROBUSTNESS_VARIANT):
        nm.check_variant(variant)
        return nm.SingleModel(name, nm._robust(name, variant=variant), norm_updates=None if n == 0 else n)

    nm._robust_model = robust_model


def main() -> None:
    from gs_bench.published import published

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--protocol", choices=("good", "accuracy", "paper"), default="good")
    ap.add_argument("--encoder", choices=("ci", "good"), default="ci",
                    help="'ci': the ci run's encoder; 'good': GOOD's GCN encoder (width 300, "
                         "dropout 0.5, ReLU)")
    ap.add_argument("--select", choices=("in", "out"), default="in",
                    help="checkpoint selected on Valid-In ('in', the paper's section 3.1) or on "
                         "Valid-Out ('out': GOOD's best.ckpt, which its test mode evaluates)")
    ap.add_argument("--ood-param", type=float, default=None,
                    help="GOOD's ood_param for the robustness methods (DANN domain weight, CORAL "
                         "penalty weight, Mixup alpha, EERM beta); default: GOODCora's config")
    ap.add_argument("--steps-per-epoch", type=int, default=1,
                    help="--protocol good: full-batch steps per GOOD epoch (GOOD's GraphSAINT "
                         "loader takes 10; EERM keeps 1), evaluated once per epoch")
    ap.add_argument("--norm-updates", type=int, default=None,
                    help="batch-norm updates per step of the four methods (default: ours, 1; 0: "
                         "the training config's, as ERM, 4 under the paper protocol)")
    ap.add_argument("--methods", nargs="+", default=["dann", "coral", "mixup", "eerm"],
                    choices=sorted([*GOOD_OPTIMISER, "erm"]))
    ap.add_argument("--measured", type=Path, default=MEASURED,
                    help="results.jsonl of the ci run (or a run folder's results/)")
    ap.add_argument("--runs", nargs="+", type=int, default=[0],
                    help="run indices (0 = seed 43, the ci run's; 1 = seed 44, ...)")
    ap.add_argument("cells", nargs="+", help="dataset:shift, e.g. cora-ml:locality")
    args = ap.parse_args()
    torch.set_num_threads(1)
    from gs_bench.runners import structural

    if args.measured.is_dir():
        recs = [json.loads(p.read_text()) for p in sorted(args.measured.glob("*.json"))]
    else:
        recs = [json.loads(line) for line in args.measured.read_text().splitlines() if line.strip()]
    for cell in args.cells:
        ds, shift = cell.split(":")
        for method, run in ((m, r) for m in args.methods for r in args.runs):
            _patch(args.protocol, method, args.select, args.steps_per_epoch)
            _patch_encoder(args.encoder)
            _patch_norm_updates(args.norm_updates)
            if method in OOD_PARAM:
                _patch_ood_param(method, args.ood_param)
            params = {"dataset": ds, "method": method, "ratio": "50:50", "strategy": shift}
            base = next(r for r in recs if r["job"]["params"] == params and r["job"]["seed"] == 0)
            erm = next((r for r in recs if r["job"]["params"] == {**params, "method": "erm"}
                        and r["job"]["seed"] == run), None)
            job = {k: v for k, v in base["job"].items() if k != "workdir"}
            job["seed"] = run
            t0 = time.process_time()
            m = structural.run_job(job)
            m = m.get("metrics", m)
            rm = base["metrics"]
            em = erm["metrics"] if erm else {"id_acc": float("nan"), "ood_acc": float("nan")}
            pid = published("structural-shifts", ds, shift, method, "id_acc")[0]
            pood = published("structural-shifts", ds, shift, method, "ood_acc")[0]
            tag = f"{args.protocol}/{args.encoder}/select {args.select}"
            if args.ood_param is not None and method in OOD_PARAM:
                tag += f"/ood_param {args.ood_param:g}"
            if args.steps_per_epoch > 1:
                tag += f"/{args.steps_per_epoch} steps per epoch"
            if args.norm_updates is not None:
                tag += f"/norm updates {args.norm_updates or 'as ERM'}"
            print(f"{ds} {shift} {method} seed {43 + run}, {tag}: ID {100 * m['id_acc']:.2f} "
                  f"OOD {100 * m['ood_acc']:.2f} (epoch {m['best_epochs'][0]}) | recorded "
                  f"{100 * rm['id_acc']:.2f} / {100 * rm['ood_acc']:.2f} (seed 43, epoch "
                  f"{rm['best_epochs'][0]}) | same-seed ERM {100 * em['id_acc']:.2f} / "
                  f"{100 * em['ood_acc']:.2f} | paper {pid:.2f} / {pood:.2f} | "
                  f"{time.process_time() - t0:.0f} CPU s", flush=True)


if __name__ == "__main__":
    main()
