"""Diagnostic check (not part of the package): the structural-shifts "+mod" architecture
(ERM + mod / SE + mod, section 5.3) as the authors' code builds it, against our
``structural-shifts-mod`` preset, on the paper's 50:50 cells (issue 30).

The authors' "improved" model (yandex-research/structural-graph-shifts,
``configs/method_configs/mpn/improved_method_config.yaml``) differs from our preset in three
places, each a gs-models ``NodeGNNConfig`` field here:

``pre_activation=False``
    their pre-processing block is ``final: True``, so its activation is ``nn.Identity()``
    (``source/layers/general.py``: ``'final': ... and final``, ``self.activation = ... if not
    self.config['final'] else nn.Identity()``): linear -> LayerNorm; ours added GELU.
``sage_self_loops=True``
    their graphs pass ``dgl.add_self_loop`` (``source/data/utils.py``,
    ``process_homogenous_graph``), so DGL's ``SAGEConv(mean)`` averages over the node and its
    neighbours; PyG's over the neighbours only.
``sage_init="dgl"``
    DGL's ``SAGEConv`` starts from xavier-uniform with gain sqrt(2) and a zero bias; PyG's
    ``Linear`` from kaiming-uniform(a = sqrt(5)) (bound 1 / sqrt(fan_in)).

Variants (``--variants``): ``ours`` (the preset as committed), ``authors`` (all three),
``no-pre-act``, ``self-loops``, ``dgl-init`` (one change each). Each job is the
``structural-shifts`` runner's own ``erm+mod`` job (the paper profile's settings: appendix-F
training, the authors' 50:50 masks), with the model built from the preset plus the variant's
fields; it prints ID / OOD accuracy and SE AUROC per run and the mean over runs beside the
paper's Table 9/10 (ERM + mod) and 16/17 (SE + mod) values.

    OMP_NUM_THREADS=1 python apps/bench/checks/structural_mod_architecture.py \\
        [--cells cora-ml:popularity ...] [--runs 0 1 2] [--variants ours authors]

Run from the repository root with ``GS_SHARED_DATA`` set (the structural-shifts raw files and
the authors' masks); about 25 CPU seconds per job.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

VARIANTS = {
    "ours": {},
    "authors": {"pre_activation": False, "sage_self_loops": True, "sage_init": "dgl"},
    "no-pre-act": {"pre_activation": False},
    "self-loops": {"sage_self_loops": True},
    "dgl-init": {"sage_init": "dgl"},
}
CELLS = [f"{d}:{s}" for d in ("cora-ml", "citeseer") for s in ("popularity", "locality", "density")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cells", nargs="+", default=CELLS, metavar="DATASET:STRATEGY")
    ap.add_argument("--runs", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--variants", nargs="+", default=["ours", "authors"], choices=sorted(VARIANTS))
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    import gs_models
    from gs_bench.published import published
    from gs_bench.run import plan_jobs
    from gs_bench.runners.structural.job import run_job
    from gs_bench.suites import load_suite

    os.environ.setdefault("GS_SHARED_DATA", "../shared/datasets")
    jobs, _ = plan_jobs(load_suite("structural-shifts", "paper"))
    build = gs_models.build_model
    print("variant | cell | run | ID acc | OOD acc | SE AUROC | s")
    table: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
    for cell in args.cells:
        ds, strategy = cell.split(":")
        for variant in args.variants:
            fields = VARIANTS[variant]

            def patched(name, *a, _fields=fields, **kw):
                return build(name, *a, **({**_fields, **kw} if name == "structural-shifts-mod" else kw))

            gs_models.build_model = patched
            try:
                for run in args.runs:
                    job = next(j for j in jobs if j["params"] == {
                        "dataset": ds, "strategy": strategy, "ratio": "50:50", "method": "erm+mod"}
                        and int(j["seed"]) == run)
                    job = {**job, "device": "cpu"}
                    job.pop("workdir", None)
                    t0 = time.process_time()
                    m = run_job(job)
                    row = (100 * m["id_acc"], 100 * m["ood_acc"], 100 * m["ood_auroc"])
                    table.setdefault((variant, cell), []).append(row)
                    print(f"{variant} | {cell} | {run} | {row[0]:.2f} | {row[1]:.2f} | {row[2]:.2f} | "
                          f"{time.process_time() - t0:.0f}", flush=True)
            finally:
                gs_models.build_model = build
    print()
    print("variant | cell | ID acc (paper) | OOD acc (paper) | SE AUROC (paper)")
    deltas: dict[str, list[float]] = {}
    for (variant, cell), rows in table.items():
        ds, strategy = cell.split(":")
        mean = np.mean(rows, axis=0)
        pub = [published("structural-shifts", ds, strategy, meth, metric)
               for meth, metric in (("erm+mod", "id_acc"), ("erm+mod", "ood_acc"), ("se+mod", "ood_auroc"))]
        cells = []
        for v, p in zip(mean, pub, strict=True):
            cells.append(f"{v:.2f} ({p[0]:.2f})" if p else f"{v:.2f} (—)")
            if p:
                deltas.setdefault(variant, []).append(v - p[0])
        print(f"{variant} | {cell} | " + " | ".join(cells))
    print()
    for variant, d in deltas.items():
        d = np.asarray(d)
        print(f"{variant}: mean Δ {d.mean():+.2f}, mean |Δ| {np.abs(d).mean():.2f} over {len(d)} cells "
              f"(ID, OOD accuracy and SE AUROC; mean over runs {args.runs})")


if __name__ == "__main__":
    main()
