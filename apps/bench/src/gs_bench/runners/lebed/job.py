"""The job of the ``lebed`` suite: pre-train one model and score every test graph of its set
(runs on a worker; torch is imported inside the functions)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gs_bench.runners.common import data_root
from gs_bench.runners.lebed.spec import (
    ESTIMATORS,
    ORIENT,
    SETTING_KEYS,
    Grid,
    Settings,
    domain_group,
    lebed_config,
    shift_of,
)
from gs_bench.suites import Job

__all__ = ["test_graph_set", "induced_subgraph", "pretrain_settings", "pretrained", "Pretrained",
           "subsample", "run_job"]

log = logging.getLogger("gs_bench.runners.lebed")


def test_graph_set(point: Grid | Mapping[str, Any], settings: Settings | Mapping[str, Any]):
    """The LeBed set of a job and its pre-training parts: (graphs, train graph, train mask,
    valid graph, valid mask); a mask of ``None`` means every node. The domain shift pre-trains
    on the subgraphs induced by the source's train / validation masks (``domain_pretrain =
    "induced"``, the authors' pretrain_gnn_domain.py) or with the masks on the whole source
    graph (``"masks"``)."""
    import torch

    import gs_data
    from gs_data.lebed import DomainShiftConfig, FeatureShiftConfig, TemporalShiftConfig

    st, point = Settings.from_mapping(settings), Grid.from_mapping(point)
    root = data_root(st.root)
    shift = shift_of(point)
    if shift == "domain":
        group = domain_group(point.dataset)
        domains = {name: gs_data.load(name, root=root) for name in group}
        dcfg = DomainShiftConfig(graphs_per_perturbation=int(st.domain_graphs))
        graphs = gs_data.lebed_domain_shift(domains, point.dataset.lower(), dcfg, seed=0)
        g = graphs.train  # one source graph: train_mask trains, val_mask validates (UDAGCN)
        if st.domain_pretrain == "masks":
            return graphs, g, g.train_mask, g, g.val_mask
        # the authors' pretrain_gnn_domain.py:42-43: the subgraph induced by the training nodes
        # trains, the one induced by the validation nodes selects the checkpoint
        tr_g, va_g = induced_subgraph(g, g.train_mask), induced_subgraph(g, g.val_mask)
        return graphs, tr_g, None, va_g, torch.ones(va_g.num_nodes, dtype=torch.bool)
    data = gs_data.load(point.dataset, root=root)
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


def pretrain_settings(point: Grid | Mapping[str, Any], st: Settings) -> tuple[float, float]:
    """(learning rate, weight decay) of the pre-training: ``domain_pretrain_*`` for the domain
    shift (the authors' pretrain_gnn_domain.py), ``pretrain_*`` otherwise (pretrain-lebed.py)."""
    if shift_of(Grid.from_mapping(point)) == "domain":
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


def pretrained(point: Grid | Mapping[str, Any], st: Settings, seed: int, device: Any = "auto") -> Pretrained:
    """The test-graph set of grid point ``point`` and its ``lebed-<model>`` pre-trained under
    settings ``st`` at ``seed``, exactly as :func:`run_job` does before it scores anything (the
    checks in ``apps/bench/checks`` call it so that they follow the runner)."""
    import copy
    import time

    from gs_algos.config import TrainConfig
    from gs_algos.engine import seeded
    from gs_algos.lebed import pretrain
    from gs_models import build_model

    point = Grid.from_mapping(point)
    graphs, train_g, tr, valid_g, va = test_graph_set(point, st)
    num_classes = graphs.num_classes
    model = seeded(lambda: build_model(f"lebed-{point.model}", train_g.num_features, num_classes), seed)
    init_state = copy.deepcopy(model.state_dict())
    t0 = time.perf_counter()
    lr, wd = pretrain_settings(point, st)
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


def run_job(job: Job | Mapping[str, Any]) -> dict[str, Any]:
    """Pre-train ``lebed-<model>`` for the grid point ``job.params`` on ``job.device`` and score
    every test graph of its shard: true error and the label-free estimators, and each
    estimator's Spearman rho and R^2 against the error (overall and per perturbation)."""
    import time

    job = Job.of(job, Grid)  # a job dict written by hand (a test, a check script) too
    # the typed settings, re-created from the dict that entered the job's key and its record
    point, st = job.params, Settings.from_job(job)
    pre = pretrained(point, st, job.seed, job.device)
    lcfg = lebed_config(point.dataset, point.model, st).with_changes(device=job.device)
    limit = st.test_graphs  # None: every graph of the set
    indices = subsample(len(pre.graphs), int(limit)) if limit else list(range(len(pre.graphs)))
    # shard i of n: every n-th graph from i, so each shard spans all groups and perturbations
    indices = indices[int(point.shard):: int(st.shards)]
    t1, c1 = time.perf_counter(), time.process_time()
    scored = _score_test_graphs(pre, indices, lcfg, point)
    score_s, score_cpu = time.perf_counter() - t1, time.process_time() - c1
    errors, scores, perturbations = scored.errors, scored.scores, scored.perturbations
    out: dict[str, Any] = {
        "num_test_graphs": len(errors), "set_size": len(pre.graphs), "test_graph_indices": scored.scored,
        "empty_test_graphs": scored.empty,
        "errors": errors,
        "scores": scores, "lebed_stop_steps": scored.stops,
        "lebed_stopped_early": float(np.mean(scored.early)),
        "perturbations": perturbations, "strengths": scored.strengths, "groups": scored.groups,
        "lebed_config": {k: getattr(lcfg, k) for k in (*SETTING_KEYS.values(), "source")},
        "approximations": list(getattr(pre.graphs, "approximations", ())),
        "pretrain_seconds": pre.seconds, "seconds_per_test_graph": score_s / max(len(errors), 1),
        # CPU time of this process (all its torch threads): the cost on a machine shared with others
        "cpu_seconds_per_test_graph": score_cpu / max(len(errors), 1),
    }
    out.update(_estimator_fits(scores, errors, perturbations))
    return out


@dataclass
class Scored:
    """What :func:`_score_test_graphs` gathers, one entry per scored test graph (``scored``:
    its index in the set; ``empty``: the graphs without an evaluated node, neither scored nor
    given an error)."""

    errors: list[float] = field(default_factory=list)
    scores: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in ESTIMATORS})
    stops: list[int] = field(default_factory=list)
    early: list[bool] = field(default_factory=list)
    scored: list[int] = field(default_factory=list)
    empty: list[int] = field(default_factory=list)
    perturbations: list[str] = field(default_factory=list)
    strengths: list[float] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)


def _score_test_graphs(pre: Pretrained, indices: list[int], lcfg, point: Grid) -> Scored:
    """The true error and every estimator's score on the test graphs ``indices`` of the
    pre-trained model ``pre`` (LeBed re-trains from its initial parameters with ``lcfg``;
    the ATC thresholds are fitted on its validation graph)."""
    import time

    import torch

    import gs_metrics as gm
    from gs_algos.engine import predict_node
    from gs_algos.lebed import lebed_score

    def outputs_of(g):
        emb, logits = predict_node(pre.model, g)
        return emb, logits, torch.softmax(logits.double(), -1).numpy()

    va = pre.valid_mask.numpy()
    pv, yv = outputs_of(pre.valid_g)[2][va], pre.valid_g.y.numpy()[va]
    thr_mc, thr_ne = gm.fit_atc_threshold(pv, yv, "mc"), gm.fit_atc_threshold(pv, yv, "ne")
    out, t1 = Scored(), time.perf_counter()
    for n_done, i in enumerate(indices):
        if n_done and n_done % 20 == 0:
            log.info("lebed %s/%s/%s: %d of %d test graphs scored (%.1f s each)", point.dataset,
                     shift_of(point), point.model, n_done, len(indices),
                     (time.perf_counter() - t1) / n_done)
        g = pre.graphs[i]
        mask = getattr(g, "eval_mask", None)
        m = mask.numpy() if mask is not None else np.ones(g.num_nodes, dtype=bool)
        if not m.any():  # e.g. a small subgraph of a period holding none of its papers
            out.empty.append(i)
            continue
        out.scored.append(i)
        emb, logits, p = outputs_of(g)
        p_eval, y_eval = p[m], g.y.numpy()[m]
        out.errors.append(float((p_eval.argmax(-1) != y_eval).mean()))
        res = lebed_score(pre.model, pre.init_state, g.x, g.edge_index, config=lcfg, seed=i,
                          reference_output=(emb, logits))
        out.scores["lebed"].append(res.score)
        out.stops.append(res.stop_step)
        out.early.append(res.stopped_early)
        out.perturbations.append(str(g.perturbation))
        out.strengths.append(float(g.p))
        out.groups.append(str(getattr(g, "environment", getattr(g, "domain_name", getattr(g, "period", "")))))
        out.scores["conf"].append(gm.conf_score(p_eval))
        out.scores["entropy"].append(gm.entropy_score(p_eval))
        out.scores["atc_mc"].append(gm.atc_score(p_eval, thr_mc, "mc"))
        out.scores["atc_ne"].append(gm.atc_score(p_eval, thr_ne, "ne"))
        for tau in (0.7, 0.8, 0.9):
            out.scores[f"thr_{tau}"].append(gm.threshold_score(p_eval, tau))
    return out


def _estimator_fits(scores: dict[str, list[float]], errors: list[float],
                    perturbations: list[str]) -> dict[str, float]:
    """Each estimator's Spearman rho and R^2 against the true error, on every scored test graph
    and (rho) per perturbation type with at least 3 graphs."""
    import gs_metrics as gm

    out: dict[str, float] = {}
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
