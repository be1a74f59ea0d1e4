"""The stored ERM model of a gess Track record, rebuilt for the checks that score it again
(``track_ood_errors.py``, ``track_tau_hardness.py``, ``track_bn_at_target.py``; issue 53).

A gess job stores the weights of its best Val-ID epoch, with the batch-norm statistics of that
evaluation (recomputed from training events), in ``RUN_FOLDER/members`` (the TL rows'
pre-training); its graph parts are cached in ``RUN_FOLDER/graphs``.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class StoredModel:
    record: dict
    job: dict
    settings: Any
    dataset: Any
    parts: dict
    model: Any
    epoch: int
    batch_size: int
    config: Any


def load_erm(run: Path, dataset: str, backbone: str, seed: int) -> StoredModel | None:
    """The ERM model of (dataset, backbone, seed) in ``run`` (the full-size record: no
    ``train_events``), or ``None`` with the reason on stderr."""
    from gs_algos.engine import seeded
    from gs_bench.runners import gess
    from gs_bench.runners.gess.data import cached_graph_parts
    from gs_models import build_model

    rec = None
    for f in sorted((run / "results").glob("*.json")):
        r = json.loads(f.read_text())
        p = r.get("job", {}).get("params", {})
        if (r.get("status") == "ok" and p.get("dataset") == dataset and p.get("backbone") == backbone
                and p.get("algorithm") == "erm" and int(r["job"]["seed"]) == seed
                and gess.Settings.from_record(r).train_events is None):
            rec = r
    if rec is None:
        print(f"{run}: no finished ERM record of {dataset} / {backbone} / seed {seed}", file=sys.stderr)
        return None
    job = {**rec["job"], "workdir": str(run)}
    st, case = gess.Settings.from_job(job), gess.DATASETS[dataset]
    ds = gess.load_dataset(dataset, st, "no-info")
    parts = cached_graph_parts(
        str(run), dataset, "no-info", st,
        lambda: gess.graph_parts(ds, "no-info", unit_coordinates=True, knn_k=case.knn_k, position_summary=True),
        unit_coordinates=True, knn_k=case.knn_k, position_summary=True)
    in_ch, categorical = gess.model_inputs(ds, case)
    model = seeded(lambda: build_model(gess.BACKBONES[backbone], in_ch, 1, categorical=categorical, k=case.knn_k,
                                       **gess.model_overrides(case, st, backbone)), seed)
    cfg = gess.train_config(dataset, "erm", st, seed)
    cache = gess.pretrain_cache(job)
    epoch = cache.load(cache.key("gess-erm-pretrain", seed, cfg, model), model) if cache else None
    if epoch is None:
        print(f"{run}: no stored model for record {rec['job']['key']} (members/)", file=sys.stderr)
        return None
    return StoredModel(rec, job, st, ds, parts, model, int(epoch), int(cfg.batch_size), cfg)
