"""Runner of the ``gess`` suite (GeSS, section 4, table 3, appendices E-F).

One job = (dataset, backbone, algorithm, info level, seed). Every epoch evaluates iid_val,
iid_test, ood_val and ood_test; two selection tracks are kept (best on ID validation and best
on OOD validation, appendix E) and both are reported: Test-ID / Test-OOD of each track, in the
layout of table 3.

Datasets (all built by gs-data through gs-splits' scientific splits):

* ``molecular-fidelity``: the offline default of the QMOF fidelity shift (HOMO-LUMO gaps of
  small real molecules computed by the project at PBE / HLE17 / HSE06* / HSE06; regression,
  MAE, lower is better). Not QMOF itself: see gs-data's README.
* ``moleculeace-assay`` / ``-scaffold`` / ``-size``: the DrugOOD-style offline default built
  from MoleculeACE's ChEMBL data (binary, ROC-AUC). ``targets`` in the settings restricts it
  to a few ChEMBL targets (the demo does, to keep conformer generation short).
* ``track-pileup`` / ``track-signal``: simulated with PYTHIA 8 + ACTS (``gs-data[track]``;
  binary, accuracy).

Info levels: ``no-info`` (source only), ``o-feature`` (unlabeled target pool, used by DANN /
DeepCoral), ``par-label`` (ERM pretrained, then fine-tuned on N labeled target samples).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gs_bench.report import Table, fmt_mean_std, group_records
from gs_bench.suites import SuiteConfig, SuiteConfigError, check_positive

DATASETS = {
    "molecular-fidelity": ("regression", "mae"),
    "moleculeace-assay": ("binary", "auroc"),
    "moleculeace-scaffold": ("binary", "auroc"),
    "moleculeace-size": ("binary", "auroc"),
    "track-pileup": ("binary", "accuracy"),
    "track-signal": ("binary", "accuracy"),
}
BACKBONES = {"egnn": "gess-egnn", "dgcnn": "gess-dgcnn", "pointtransformer": "gess-pointtransformer"}
ALGORITHMS = ("erm", "irm", "vrex", "groupdro", "mixup", "dann", "coral", "dir", "lri", "finetune")
LEVELS = ("no-info", "o-feature", "par-label")
_LEVEL_OF = {"dann": "o-feature", "coral": "o-feature", "finetune": "par-label"}


@dataclass(frozen=True)
class Grid:
    """Grid axes of the suite (one job per combination and seed); checked by ``load_suite``."""

    dataset: list[str]
    backbone: list[str]
    algorithm: list[str]


@dataclass(frozen=True)
class Settings:
    """``[settings]`` of the suite, the one place its keys and types are declared (strict
    check in ``load_suite``). Defaults: appendix F / table 8 (batch 256, 100 epochs); 100
    labeled OOD samples at the Par-Label level."""

    max_epochs: int = 100
    batch_size: int = 256
    par_label_n: int = 100
    iterations_per_epoch: int | None = None
    targets: list[str] | None = None
    cache_dir: str | None = None
    conformer_workers: int = 1

    def __post_init__(self) -> None:
        check_positive(self, "max_epochs", "batch_size", "par_label_n", "conformer_workers")


def validate(config: SuiteConfig) -> dict[str, str]:
    for axis in ("dataset", "backbone", "algorithm"):
        if axis not in config.grid:
            raise SuiteConfigError(f"{config.source}: the gess suite needs a grid axis {axis!r}")
    for d in config.grid["dataset"]:
        if d not in DATASETS:
            raise SuiteConfigError(f"unknown GeSS dataset {d!r}; accepted: {', '.join(DATASETS)}")
        if d.startswith("track"):
            try:
                import acts  # noqa: F401
                import pythia8mc  # noqa: F401
            except ImportError as exc:
                raise SuiteConfigError(
                    f"dataset {d!r} is simulated with PYTHIA 8 + ACTS: pip install 'gs-data[track]'"
                ) from exc
    for b in config.grid["backbone"]:
        if b not in BACKBONES:
            raise SuiteConfigError(f"unknown backbone {b!r}; accepted: {', '.join(BACKBONES)}")
    for a in config.grid["algorithm"]:
        if a not in ALGORITHMS:
            raise SuiteConfigError(f"unknown algorithm {a!r}; accepted: {', '.join(ALGORITHMS)}")
    from gs_data.__about__ import __version__

    return {d: f"gs-data {__version__}" for d in config.grid["dataset"]}


def _dataset(name: str, settings: dict[str, Any], level: str):
    """(GeometricDataset-like object with .to_pyg and .split, number of atom categories)."""
    info = level.replace("-", "_")
    if name == "molecular-fidelity":
        from gs_data.materials.molecular import load_molecular_fidelity

        return load_molecular_fidelity(info_level=info)
    if name.startswith("moleculeace-"):
        import gs_data
        from gs_data.molecules.moleculeace import load_moleculeace_ood

        targets = settings.get("targets")
        cache_dir = settings.get("cache_dir") or str(gs_data.data_root() / "conformers")
        return load_moleculeace_ood(
            name.split("-", 1)[1], info_level=info, targets=targets,
            cache_dir=cache_dir, n_workers=int(settings.get("conformer_workers", 1)),
        )
    raise SuiteConfigError(f"dataset {name!r} is not wired into the gess runner yet")


def _parts(ds, domain_codes: np.ndarray) -> dict[str, list]:
    import torch

    parts = {}
    for part in ("train", "iid_val", "iid_test", "ood_val", "ood_test", "train_target", "ood_labeled"):
        mask = ds.split.masks.get(part)
        if mask is None or not mask.any():
            continue
        graphs = ds.to_pyg(np.flatnonzero(mask))
        for g in graphs:
            g.domain = torch.tensor(int(domain_codes[int(g.idx)]))
        parts[part] = graphs
    return parts


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    from gs_algos import METHODS, TrainConfig, finetune_graph, fit_graph, seeded
    from gs_models import build_model

    params, settings, seed = job["params"], job["settings"], int(job["seed"])
    name, algo = params["dataset"], params["algorithm"]
    level = _LEVEL_OF.get(algo, "no-info")
    task, metric = DATASETS[name]
    ds = _dataset(name, settings, level)
    _, codes = np.unique(np.asarray(ds.domain).astype(str), return_inverse=True)
    parts = _parts(ds, codes)
    for gs in parts.values():  # one label per graph: (1,) float (BCE logit target / regression)
        for g in gs:
            g.y = g.y.reshape(-1).float()
    cfg = TrainConfig.gess(level=level, seed=seed, task=task, metric=metric,
                           max_epochs=int(settings.get("max_epochs", 100)),
                           batch_size=int(settings.get("batch_size", 256)),
                           device=job.get("device", "auto"))
    if cfg.iterations_per_epoch is not None and "iterations_per_epoch" in settings:
        cfg = cfg.replace(iterations_per_epoch=int(settings["iterations_per_epoch"]))
    out_dim = 1  # binary: one logit (gs-algos' BCE); regression: one value
    k = {"molecular-fidelity": 10}.get(name, 3 if name.startswith("moleculeace") else 5)  # GeSS kNN k
    model = seeded(
        lambda: build_model(BACKBONES[params["backbone"]], int(ds.num_atom_types), out_dim, categorical=True, k=k),
        seed,
    )
    eval_parts = {k: v for k, v in parts.items() if k in ("train", "iid_val", "iid_test", "ood_val", "ood_test")}
    if algo == "finetune":
        res = fit_graph(model, eval_parts, METHODS["erm"](), cfg)
        pool = parts.get("ood_labeled", [])
        n = min(int(settings.get("par_label_n", 100)), len(pool))
        if n == 0:
            raise ValueError(f"{name}: no labeled OOD pool for the Par-Label level")
        _, res = finetune_graph(model, {**eval_parts, "ood_labeled": pool}, n, cfg, seed=seed)
    else:
        meth = METHODS[algo]()
        target = parts.get("train_target") if level == "o-feature" else None
        res = fit_graph(model, eval_parts, meth, cfg, target=target)
    out: dict[str, Any] = {"metric": metric, "level": level, "epochs_run": res.epochs_run}
    for track_name, track in res.tracks.items():
        sel = "id" if track_name == "iid_val" else "ood"
        out[f"{sel}_sel_test_id"] = float(track.metrics.get("iid_test", {}).get(metric, float("nan")))
        out[f"{sel}_sel_test_ood"] = float(track.metrics.get("ood_test", {}).get(metric, float("nan")))
        out[f"{sel}_sel_epoch"] = int(track.epoch)
    out["sizes"] = {k: len(v) for k, v in parts.items()}
    return out


def tables(records: Sequence[dict[str, Any]]) -> list[Table]:
    groups = group_records(records, ("dataset", "backbone", "algorithm"))
    out = []
    for ds in sorted({k[0] for k in groups}):
        rows = []
        metric = ""
        for key in sorted(k for k in groups if k[0] == ds):
            recs = groups[key]
            metric = recs[0]["metrics"]["metric"]
            scale = 1.0 if metric == "mae" else 100.0
            row = [key[1], key[2], recs[0]["metrics"]["level"]]
            for sel in ("id", "ood"):
                for test in ("id", "ood"):
                    row.append(fmt_mean_std([r["metrics"][f"{sel}_sel_test_{test}"] for r in recs], scale=scale, digits=3 if metric == "mae" else 2))
            rows.append(row)
        unit = "MAE (eV), lower is better" if metric == "mae" else f"{metric} (%)"
        out.append(Table(
            f"GeSS {ds}: Test-ID / Test-OOD {unit}, mean ± std over seeds (table 3 layout)",
            ["backbone", "algorithm", "info level", "ID-sel Test-ID", "ID-sel Test-OOD", "OOD-sel Test-ID", "OOD-sel Test-OOD"],
            rows,
            note="ID-sel / OOD-sel: model selected on ID / OOD validation (GeSS appendix E).",
        ))
    return out
