"""The job of the ``structural-shifts`` suite: train one method on one split and score it
(runs on a worker; torch is imported inside the functions)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gs_algos.names import ROBUSTNESS_METHODS
from gs_bench.runners.common import data_root, dataset_fingerprint
from gs_bench.runners.structural.pictures import MASKS_READ, split_record
from gs_bench.runners.structural.spec import (
    GOOD_PRESET,
    Grid,
    Settings,
    algo_name,
    domain_scope,
    model_preset,
    uses_authors_masks,
)
from gs_bench.suites import Job

__all__ = ["load_data", "split_data", "run_job", "member_cache", "RUN_COUNT_SETTINGS"]


def load_data(name: str, settings: Settings | Mapping[str, Any]):
    """Dataset ``name`` from the settings' data root."""
    import gs_data

    return gs_data.load(name, root=data_root(Settings.from_mapping(settings).root))


def split_data(data, point: Grid | Mapping[str, Any], settings: Settings | Mapping[str, Any]):
    """The job's split: seeded (gs-splits, split seed 0) or the authors' published masks."""
    from gs_data import make_split
    from gs_data.splits import authors_split

    st, point = Settings.from_mapping(settings), Grid.from_mapping(point)
    scope = domain_scope(st)
    if uses_authors_masks(st, point.ratio):
        return authors_split(data, point.dataset, point.strategy,
                             root=data_root(st.root), num_domains=st.domains,
                             domain_scope=scope)
    return make_split(data, point.strategy, sizes=point.ratio, seed=0, num_domains=st.domains,
                      domain_scope=scope)


def run_job(job: Job | Mapping[str, Any]) -> dict[str, Any]:
    """Train and evaluate one (dataset, strategy, ratio, method, run) job (``job.params``, a
    :class:`Grid` point; ``job.seed``, the run) on ``job.device``."""
    from gs_algos.config import TrainConfig
    from gs_algos.node_methods import node_method
    from gs_metrics import (
        expected_calibration_error,
        misclassification_auroc,
        ood_detection_metrics,
    )
    from gs_models import build_model

    job = Job.of(job, Grid)  # a job dict written by hand (a test, a check script) too
    # the typed settings, re-created from the dict that entered the job's key and its record
    point, st, run = job.params, Settings.from_job(job), job.seed
    preset = model_preset(point.method, st.protocol)
    data = split_data(load_data(point.dataset, st), point, st)
    num_classes = int(data.y.max()) + 1
    # the device comes from the executor (gs-bench run --device), not the settings: not in the key
    device = job.device
    cfg = TrainConfig.structural_shifts(st.protocol, **st.train_changes(), device=device)
    robust = algo_name(point.method) in ROBUSTNESS_METHODS
    if robust and st.robustness_framework == "good":
        preset, cfg = GOOD_PRESET, TrainConfig.good_cora(algo_name(point.method), device=device)
    method = node_method(algo_name(point.method), st.ensemble_size,
                         robustness_variant=st.robustness_variant)
    masks = {k: getattr(data, f"{k}_mask") for k in ("in_train", "in_valid", "in_test", "out_valid", "out_test")}
    pred = method.fit(
        lambda: build_model(preset, data.num_features, num_classes),
        data, cfg, run=run, masks=masks, domain=getattr(data, "domain", None),
        num_classes=num_classes, cache=member_cache(job, preset),
    )
    y = data.y.numpy()
    probs = pred.probs.numpy()
    pred_y = probs.argmax(-1)
    m = {k: v.numpy() for k, v in masks.items()}
    id_acc = float((pred_y[m["in_test"]] == y[m["in_test"]]).mean())
    ood_acc = float((pred_y[m["out_test"]] == y[m["out_test"]]).mean())
    test = m["in_test"] | m["out_test"]
    is_ood = m["out_test"][test]
    score = pred.ood_score.numpy()
    det = ood_detection_metrics(score[test], is_ood)
    out = {
        "id_acc": id_acc,
        "ood_acc": ood_acc,
        "drop": (ood_acc - id_acc) / id_acc if id_acc > 0 else float("nan"),
        "ood_auroc": float(det.auroc),
        "ood_aupr": float(det.aupr),
        "err_auroc": float(misclassification_auroc(score[test], pred_y[test] != y[test])),
        "id_ece": float(expected_calibration_error(probs[m["in_test"]], y[m["in_test"]])),
        "ood_ece": float(expected_calibration_error(probs[m["out_test"]], y[m["out_test"]])),
        "best_epochs": pred.best_epochs,
        "member_seeds": method.seeds(run),
        **({"robustness_variant": st.robustness_variant,
            "robustness_framework": st.robustness_framework} if robust else {}),
        "protocol": st.protocol,
        # the masks this job read (under "authors-where-published": authors at 50:50 only)
        MASKS_READ: "authors" if uses_authors_masks(st, point.ratio) else "seeded",
        "domain_scope": domain_scope(st),
        "sizes": {k: int(v.sum()) for k, v in m.items()},
    }
    for name in ("total", "data", "knowledge"):
        out[f"ood_auroc_{name}"] = float(ood_detection_metrics(pred.measures[name].numpy()[test], is_ood).auroc)
    out["split"] = split_record(data, point, st, job.workdir)
    return out


#: settings that change how many runs there are, not how a member trains
RUN_COUNT_SETTINGS = ("ensemble_runs", "posterior_runs", "robustness_runs",
                      "skip_missing_datasets", "share_members",
                      # only DANN / CORAL / Mixup / EERM use them, never a shared member
                      "robustness_variant", "robustness_framework", "domain_scope")


def member_cache(job: Job | Mapping[str, Any], preset: str):
    """The run's shared-member cache (``<out>/members``), or ``None`` when the executor
    gave no work folder or ``share_members`` is off. The tag holds the data, split, preset
    (its name and its config, so that a preset changed in the code never loads a member
    trained before the change), settings and package versions: everything a member depends
    on besides its seed and training configuration
    (:meth:`gs_algos.node_methods.MemberCache.key`)."""
    from gs_algos.node_methods import MemberCache

    job = Job.of(job, Grid)
    st = Settings.from_job(job)
    if not job.workdir or not st.share_members:
        return None
    import gs_algos
    import gs_data
    import gs_models
    import gs_splits

    point = {k: v for k, v in job.point.items() if k != "method"}
    # the settings *dict* the job's key holds (the keys the suite file and command line set),
    # so that the members of a run keep their tags
    tag = json.dumps({
        "suite": job.suite, "params": point, "preset": preset,
        "preset_config": repr(gs_models.preset(preset)),
        "settings": {k: v for k, v in job.settings.items() if k not in RUN_COUNT_SETTINGS},
        "data": dataset_fingerprint(job.params.dataset, st.root),
        "versions": [m.__version__ for m in (gs_splits, gs_data, gs_models, gs_algos)],
    }, sort_keys=True, default=str)
    return MemberCache(Path(job.workdir) / "members", tag)
