"""The job of the ``edgewise`` suite: train one model on one split and fold and score its test
nodes (runs on a worker; torch is imported inside the functions)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from gs_bench.runners.common import data_root
from gs_bench.runners.edgewise.spec import MODELS, STRUCTURED, Grid, Settings
from gs_bench.suites import Job

__all__ = ["split_masks", "load_data", "train_config", "run_job", "score", "fit_structured",
           "reliability", "pack_bins"]


def split_masks(data, name: str, split: int, fold: int, root: str | None):
    import gs_data

    if name.lower().startswith("synthetic"):
        splits = gs_data.generate_edgewise_splits(data.y, num_splits=split + 1, seed=0)
    else:
        splits = gs_data.load_edgewise_splits(name, root=root or gs_data.data_root())
    d = gs_data.edgewise_masks(data, splits[split], fold)
    return {"train": d.train_mask, "valid": d.val_mask, "test": d.test_mask}


def load_data(point: Grid | Mapping[str, Any], settings: Settings | Mapping[str, Any], root: str | None):
    """The dataset of a job, row-normalised unless the setting ``normalize_features`` is false."""
    import gs_data

    dataset = Grid.from_mapping(point).dataset
    kw = {"missing_label": 0} if dataset.startswith("planetoid") else {}
    norm = bool(Settings.from_mapping(settings).normalize_features)
    return gs_data.load(dataset, root=root, normalize_features=norm, **kw)


def train_config(settings: Settings | Mapping[str, Any], seed: int, device: str = "auto"):
    """:meth:`gs_algos.TrainConfig.edgewise` with the suite's settings, on ``device``."""
    from gs_algos.config import TrainConfig

    st = Settings.from_mapping(settings)
    return TrainConfig.edgewise(
        seed=seed,
        device=device,
        lr=float(st.lr),
        weight_decay=float(st.weight_decay),
        max_epochs=int(st.max_epochs),
        patience=int(st.patience),
        stopping=str(st.stopping),
    )


def run_job(job: Job | Mapping[str, Any]) -> dict[str, Any]:
    """Train one model on one split and fold (``job.params``, a :class:`Grid` point) on
    ``job.device`` and score its test nodes."""
    import torch

    from gs_algos.engine import fit_node, predict_node, seeded
    from gs_models import build_model

    job = Job.of(job, Grid)  # a job dict written by hand (a test, a check script) too
    # the typed settings, re-created from the dict that entered the job's key and its record
    point, st, seed = job.params, Settings.from_job(job), job.seed
    root = data_root(st.root)
    data = load_data(point, st, root)
    masks = split_masks(data, point.dataset, int(point.split), int(point.fold), root)
    num_classes = int(data.y.max()) + 1
    kw = {}
    if point.model in STRUCTURED:
        kw["variant"] = str(st.structured_variant)
    model = seeded(lambda: build_model(MODELS[point.model], data.num_features, num_classes, **kw), seed)
    bins = int(st.bins)
    y = data.y.numpy()
    ei = data.edge_index.numpy()
    test = masks["test"].numpy()
    if point.model in STRUCTURED:
        out = fit_structured(model, data, masks, point.model, st, seed, device=job.device)
        # the paper's text: structured edge joints (GMNN samples, EPFGNN loopy BP)
        metrics = score(out["node"], y, ei, test, out["edge"], bins, with_reliability=True)
        # the released code (src/evaluation.py scores every model with EdgewiseMetrics on
        # node log-probabilities): product of the structured node marginals
        metrics["product"] = score(out["node"], y, ei, test, None, bins)
        if "mean_field" in out:  # EPFGNN with naive mean-field test-time inference (Table 4)
            metrics["mean_field"] = score(out["mean_field"], y, ei, test, None, bins)
        metrics.update(best_epoch=out["best_epoch"], epochs_run=out["epochs_run"],
                       em_rounds_run=out["em_rounds_run"])
        return metrics
    res = fit_node(model, data, None, train_config(st, seed, job.device),
                   masks=masks, num_classes=num_classes)
    _, logits = predict_node(model, data)
    probs = torch.softmax(logits.double(), -1).numpy()
    metrics = score(probs, y, ei, test, None, bins, with_reliability=True)
    metrics.update(best_epoch=res.best.epoch, epochs_run=res.epochs_run)
    return metrics


def score(probs, y, ei, test, edge_marginals, bins: int, with_reliability: bool = False) -> dict[str, Any]:
    """Table 1 / 3 metrics (fractions) of one prediction on the test nodes.

    ECEs with the paper's bins (eq. 1, 3, 5, 7: ``(k-1)/m < c <= k/m``) and, as
    ``*_ece_floor``, with the authors' released ``floor(c m)`` bins (``src/calibloss.py``).
    """
    from gs_metrics import (
        edgewise_metrics,
        expected_calibration_error,
        negative_log_likelihood,
    )

    out: dict[str, Any] = {"node_acc": float((probs.argmax(-1)[test] == y[test]).mean())}
    for rule, suffix in (("paper", ""), ("floor", "_floor")):
        ew = edgewise_metrics(
            probs, y, ei, test, edge_marginals=edge_marginals, n_bins=bins, bin_rule=rule
        )
        out[f"nodewise_ece{suffix}"] = float(
            expected_calibration_error(probs[test], y[test], n_bins=bins, bin_rule=rule)
        )
        out[f"edgewise_ece{suffix}"] = float(ew.all.ece)
        out[f"agree_ece{suffix}"] = float(ew.agree.ece)
        out[f"disagree_ece{suffix}"] = float(ew.disagree.ece)
        if rule == "paper":
            out.update(
                edge_acc=float(ew.all.accuracy),
                agree_acc=float(ew.agree.accuracy),
                disagree_acc=float(ew.disagree.accuracy),
                node_nll=float(negative_log_likelihood(probs[test], y[test])),
                edge_nll=float(ew.all.nll),
                edge_brier=float(ew.all.brier),
                homophily=float(ew.homophily),
            )
            if with_reliability:
                out["reliability"] = {
                    "node": reliability(probs[test], y[test], bins),
                    **{k: pack_bins(getattr(ew, k).bins) for k in ("all", "agree", "disagree")},
                }
    return out


def fit_structured(model, data, masks, name: str, settings: Settings | Mapping[str, Any], seed: int,
                    device: str = "auto") -> dict[str, Any]:
    """EM training (:mod:`gs_algos.em`) and structured inference of GMNN / EPFGNN.

    Schedules: :meth:`gs_algos.EMConfig.gmnn` / :meth:`gs_algos.EMConfig.epfgnn` (appendix C.2:
    pre-training of at most 200 epochs with the authors' acc-or-NLL early stopping, patience
    50; GMNN one round of 100 M- and 100 E-step epochs; EPFGNN an M-step of at most 100 epochs
    with validation-accuracy patience 10), with the suite's ``lr`` and ``weight_decay``. The
    labelled training nodes are observed at inference. GMNN: node and edge marginals from
    its 32 sampled label sets; EPFGNN: loopy belief propagation (100 iterations) for both,
    and (``"mean_field"``) the naive mean-field node marginals, the paper's Table 4.
    Returns ``{"node": (N, C), "edge": (E, C, C)[, "mean_field": (N, C)], "best_epoch",
    "epochs_run"}`` (float64 numpy; ``best_epoch``: kept pre-training epoch).
    """
    import torch

    from gs_algos.em import EMConfig, fit_epfgnn, fit_gmnn

    st = Settings.from_mapping(settings)
    preset = EMConfig.gmnn if name == "gmnn" else EMConfig.epfgnn
    em = preset(str(st.structured_variant), lr=float(st.lr), weight_decay=float(st.weight_decay),
                device=device)
    fit = fit_gmnn if name == "gmnn" else fit_epfgnn
    res = fit(model, data, {"train": masks["train"], "valid": masks["valid"]}, em, seed=seed)
    x, ei = data.x, data.edge_index
    y, train = data.y, masks["train"]
    out: dict[str, Any] = {}
    model.eval()
    with torch.no_grad():
        if name == "gmnn":
            node, edge = model.node_and_edge_marginals(x, ei, y=y, observed_mask=train, seed=seed)
        else:
            node = model.node_marginals(x, ei, method="lbp", y=y, observed_mask=train)
            edge = model.edge_marginals(x, ei, method="lbp", y=y, observed_mask=train)
            mf = model.node_marginals(x, ei, method="mean_field", y=y, observed_mask=train,
                                      proposal=res.proposal).double()
            out["mean_field"] = (mf / mf.sum(-1, keepdim=True)).numpy()
    node = node.double()
    edge = edge.double()
    out["node"] = (node / node.sum(-1, keepdim=True)).numpy()
    out["edge"] = (edge / edge.sum((-2, -1), keepdim=True)).numpy()
    out["best_epoch"] = res.pretrain.best.epoch if res.pretrain is not None else -1
    out["epochs_run"] = res.epochs_run
    out["em_rounds_run"] = res.em_rounds_run
    return out


def reliability(probs: np.ndarray, y: np.ndarray, n_bins: int) -> dict[str, list[float]]:
    """The nodewise reliability bins of ``probs``, packed for the record."""
    from gs_metrics import reliability_bins

    return pack_bins(reliability_bins(probs, y, n_bins=n_bins))


def pack_bins(b) -> dict[str, list[float]]:
    """gs-metrics' ``ReliabilityBins`` as the record stores them (:func:`report.unpack_bins`)."""
    return {"confidence": list(map(float, b.confidence)), "accuracy": list(map(float, b.accuracy)),
            "count": list(map(int, b.counts))}
