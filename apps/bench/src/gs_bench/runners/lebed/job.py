"""The job of the ``lebed`` suite: pre-train one model and score every test graph of its set
(runs on a worker; torch is imported inside the functions)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from gs_bench.runners.common import data_root
from gs_bench.runners.lebed.spec import (
    ESTIMATORS,
    ORIENT,
    SETTING_KEYS,
    Settings,
    domain_group,
    lebed_config,
)

__all__ = ["test_graph_set", "induced_subgraph", "pretrain_settings", "pretrained", "Pretrained",
           "subsample", "run_job"]

log = logging.getLogger("gs_bench.runners.lebed")


def test_graph_set(params: dict[str, Any], settings: Settings | Mapping[str, Any]):
    """The LeBed set of a job and its pre-training parts: (graphs, train graph, train mask,
    valid graph, valid mask); a mask of ``None`` means every node. The domain shift pre-trains
    on the subgraphs induced by the source's train / validation masks (``domain_pretrain =
    "induced"``, the authors' pretrain_gnn_domain.py) or with the masks on the whole source
    graph (``"masks"``)."""
    import torch

    import gs_data
    from gs_data.lebed import DomainShiftConfig, FeatureShiftConfig, TemporalShiftConfig

    st = Settings.from_mapping(settings)
    root = data_root(st.root)
    shift = params.get("shift", "feature")
    if shift == "domain":
        group = domain_group(params["dataset"])
        domains = {name: gs_data.load(name, root=root) for name in group}
        dcfg = DomainShiftConfig(graphs_per_perturbation=int(st.domain_graphs))
        graphs = gs_data.lebed_domain_shift(domains, params["dataset"].lower(), dcfg, seed=0)
        g = graphs.train  # one source graph: train_mask trains, val_mask validates (UDAGCN)
        if st.domain_pretrain == "masks":
            return graphs, g, g.train_mask, g, g.val_mask
        # the authors' pretrain_gnn_domain.py:42-43: the subgraph induced by the training nodes
        # trains, the one induced by the validation nodes selects the checkpoint
        tr_g, va_g = induced_subgraph(g, g.train_mask), induced_subgraph(g, g.val_mask)
        return graphs, tr_g, None, va_g, torch.ones(va_g.num_nodes, dtype=torch.bool)
    data = gs_data.load(params["dataset"], root=root)
    if shift == "temporal":
        tcfg = TemporalShiftConfig(graphs_per_perturbation=int(st.temporal_graphs))
        graphs = gs_data.lebed_temporal_shift(data, tcfg, seed=0)
        return graphs, graphs.train, None, graphs.valid, graphs.valid.eval_mask
    fcfg = FeatureShiftConfig(
        noise_levels=int(st.noise_levels),
        mask_levels=int(st.mask_levels),
        generator=str(st.generator),
    )
    graphs = gs_data.lebed_feature_shift(data, fcfg, seed=0)
    # the authors' protocol: all of environment 0 trains, environment 1 selects the checkpoint
    ones = torch.ones(graphs.valid.num_nodes, dtype=torch.bool)
    return graphs, graphs.train, None, graphs.valid, ones


def induced_subgraph(g, mask):
    """The subgraph of ``g`` induced by the boolean node ``mask``, nodes relabelled in order
    (``x``, ``y`` and the edges among the kept nodes; nothing else is carried over)."""
    from torch_geometric.data import Data
    from torch_geometric.utils import subgraph

    edge_index, _ = subgraph(mask, g.edge_index, relabel_nodes=True, num_nodes=g.num_nodes)
    return Data(x=g.x[mask], edge_index=edge_index, y=g.y[mask])


def pretrain_settings(params: Mapping[str, Any], st: Settings) -> tuple[float, float]:
    """(learning rate, weight decay) of the pre-training: ``domain_pretrain_*`` for the domain
    shift (the authors' pretrain_gnn_domain.py), ``pretrain_*`` otherwise (pretrain-lebed.py)."""
    if params.get("shift", "feature") == "domain":
        return float(st.domain_pretrain_lr), float(st.domain_pretrain_weight_decay)
    return float(st.pretrain_lr), float(st.pretrain_weight_decay)


@dataclass
class Pretrained:
    """What :func:`pretrained` returns: the job's test-graph set, its model after the
    pre-training, the model's parameters before it (θ_0, where LeBed's re-training starts) and
    the validation graph and mask of the pre-training (the ATC thresholds are fitted there)."""

    graphs: Any
    model: Any
    init_state: dict[str, Any]
    valid_g: Any
    valid_mask: Any
    #: wall seconds of the pre-training alone (not the test graphs' making)
    seconds: float


def pretrained(params: Mapping[str, Any], st: Settings, seed: int, device: str = "auto") -> Pretrained:
    """The test-graph set of grid point ``params`` and its ``lebed-<model>`` pre-trained under
    settings ``st`` at ``seed``, exactly as :func:`run_job` does before it scores anything (the
    checks in ``apps/bench/checks`` call it so that they follow the runner)."""
    import copy
    import time

    from gs_algos.config import TrainConfig
    from gs_algos.engine import seeded
    from gs_algos.lebed import pretrain
    from gs_models import build_model

    graphs, train_g, tr, valid_g, va = test_graph_set(params, st)
    num_classes = graphs.num_classes
    model = seeded(lambda: build_model(f"lebed-{params['model']}", train_g.num_features, num_classes), seed)
    init_state = copy.deepcopy(model.state_dict())
    t0 = time.perf_counter()
    lr, wd = pretrain_settings(params, st)
    pcfg = TrainConfig(
        lr=lr,
        weight_decay=wd,
        max_epochs=int(st.max_epochs),
        patience=int(st.patience) if st.patience else None,
        train_part="train", select_on=("valid",), metric="accuracy", seed=seed,
        device=device,
    )
    pretrain(model, train_g, valid_g, train_mask=tr, valid_mask=va, num_classes=num_classes, config=pcfg)
    return Pretrained(graphs, model, init_state, valid_g, va, time.perf_counter() - t0)


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    import time

    import torch

    import gs_metrics as gm
    from gs_algos.engine import predict_node
    from gs_algos.lebed import lebed_score

    # the typed settings, re-created from the dict that entered the job's key and its record
    params, st, seed = job["params"], Settings.from_job(job), int(job["seed"])
    pre = pretrained(params, st, seed, job.get("device", "auto"))
    graphs, model, init_state = pre.graphs, pre.model, pre.init_state
    valid_g, va = pre.valid_g, pre.valid_mask
    pretrain_s = pre.seconds

    def outputs_of(g):
        emb, logits = predict_node(model, g)
        return emb, logits, torch.softmax(logits.double(), -1).numpy()

    _, _, pv = outputs_of(valid_g)
    yv = valid_g.y.numpy()[va.numpy()]
    pv = pv[va.numpy()]
    thr_mc = gm.fit_atc_threshold(pv, yv, "mc")
    thr_ne = gm.fit_atc_threshold(pv, yv, "ne")
    source = params["dataset"]
    lcfg = lebed_config(source, params["model"], st).with_changes(
        device=job.get("device", "auto"))
    limit = st.test_graphs  # None: every graph of the set
    indices = subsample(len(graphs), int(limit)) if limit else list(range(len(graphs)))
    # shard i of n: every n-th graph from i, so each shard spans all groups and perturbations
    indices = indices[int(params.get("shard", 0)):: int(st.shards)]
    errors, stops, early = [], [], []
    scored: list[int] = []
    empty: list[int] = []  # test graphs without an evaluated node: no error, not scored
    perturbations, strengths, groups = [], [], []
    scores: dict[str, list[float]] = {k: [] for k in ESTIMATORS}
    t1, c1 = time.perf_counter(), time.process_time()
    for n_done, i in enumerate(indices):
        if n_done and n_done % 20 == 0:
            log.info("lebed %s/%s/%s: %d of %d test graphs scored (%.1f s each)", params["dataset"],
                     params.get("shift", "feature"), params["model"], n_done, len(indices),
                     (time.perf_counter() - t1) / n_done)
        g = graphs[i]
        mask = getattr(g, "eval_mask", None)
        m = mask.numpy() if mask is not None else np.ones(g.num_nodes, dtype=bool)
        if not m.any():  # e.g. a small subgraph of a period holding none of its papers
            empty.append(i)
            continue
        scored.append(i)
        emb, logits, p = outputs_of(g)
        p_eval, y_eval = p[m], g.y.numpy()[m]
        errors.append(float((p_eval.argmax(-1) != y_eval).mean()))
        res = lebed_score(model, init_state, g.x, g.edge_index, config=lcfg, seed=i,
                          reference_output=(emb, logits))
        scores["lebed"].append(res.score)
        stops.append(res.stop_step)
        early.append(res.stopped_early)
        perturbations.append(str(g.perturbation))
        strengths.append(float(g.p))
        groups.append(str(getattr(g, "environment", getattr(g, "domain_name", getattr(g, "period", "")))))
        scores["conf"].append(gm.conf_score(p_eval))
        scores["entropy"].append(gm.entropy_score(p_eval))
        scores["atc_mc"].append(gm.atc_score(p_eval, thr_mc, "mc"))
        scores["atc_ne"].append(gm.atc_score(p_eval, thr_ne, "ne"))
        for tau in (0.7, 0.8, 0.9):
            scores[f"thr_{tau}"].append(gm.threshold_score(p_eval, tau))
    score_s, score_cpu = time.perf_counter() - t1, time.process_time() - c1
    out: dict[str, Any] = {
        "num_test_graphs": len(errors), "set_size": len(graphs), "test_graph_indices": scored,
        "empty_test_graphs": empty,
        "errors": errors,
        "scores": scores, "lebed_stop_steps": stops, "lebed_stopped_early": float(np.mean(early)),
        "perturbations": perturbations, "strengths": strengths, "groups": groups,
        "lebed_config": {k: getattr(lcfg, k) for k in (*SETTING_KEYS.values(), "source")},
        "approximations": list(getattr(graphs, "approximations", ())),
        "pretrain_seconds": pretrain_s, "seconds_per_test_graph": score_s / max(len(errors), 1),
        # CPU time of this process (all its torch threads): the cost on a machine shared with others
        "cpu_seconds_per_test_graph": score_cpu / max(len(errors), 1),
    }
    for k in ESTIMATORS:
        ev = gm.evaluate_estimator(scores[k], errors, ORIENT[k])
        out[f"{k}_spearman"] = float(ev.spearman)
        out[f"{k}_r2"] = float(ev.r2)
        for kind in sorted(set(perturbations)):
            sel = [j for j, q in enumerate(perturbations) if q == kind]
            if len(sel) >= 3:
                sub = gm.evaluate_estimator([scores[k][j] for j in sel], [errors[j] for j in sel], ORIENT[k])
                out[f"{k}_spearman_{kind}"] = float(sub.spearman)
    return out


def subsample(n: int, k: int) -> list[int]:
    """``k`` evenly spread indices of ``range(n)`` (all perturbations and environments stay
    represented, since the sets are laid out group by group)."""
    if k >= n:
        return list(range(n))
    return sorted({int(round(v)) for v in np.linspace(0, n - 1, k)})
