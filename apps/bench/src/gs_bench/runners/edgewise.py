"""Runner of the ``edgewise`` suite (edgewise-calibration paper, section 4, appendix C).

One job = (dataset, model, split, fold, seed). A split holds 85 % test nodes and 3 folds
over the other 15 %; fold ``f`` validates and the two other folds train (appendix C.1).
Models are the paper's presets (GCN 2 x 64, GAT 2 layers x 8 heads x 8; dropout 0.5; Adam
lr 0.01, weight decay 5e-4, up to 2000 epochs, patience 100). GCN and GAT give node marginals
and the naive mean-field edge marginals (products of node marginals), as in the paper.

Metrics (fractions): nodewise ECE, edgewise ECE, agree ECE, disagree ECE (15 bins, eq. 1-8),
node accuracy, edge accuracy, NLL and Brier score, homophily of the evaluated edges.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gs_bench.published import published
from gs_bench.report import Figure, Table, fmt_mean_std, group_records, mean_std
from gs_bench.runners.structural import _root, dataset_fingerprints, require_axes
from gs_bench.suites import SuiteConfig, SuiteConfigError

MODELS = {
    "gcn": "edgewise-gcn",
    "gat": "edgewise-gat",
    "gmnn": "edgewise-gmnn",
    "epfgnn": "edgewise-epfgnn",
}
#: structured models: EM training (appendix C.2) and their own edge marginals
STRUCTURED = ("gmnn", "epfgnn")


def validate(config: SuiteConfig) -> dict[str, str]:
    require_axes(config, "edgewise", ("dataset", "model", "split", "fold"))
    for m in config.grid["model"]:
        if m not in MODELS:
            raise SuiteConfigError(
                f"model {m!r} is not supported by the edgewise runner; accepted: {', '.join(MODELS)}"
            )
    for f in config.grid["fold"]:
        if f not in (0, 1, 2):
            raise SuiteConfigError(f"fold must be 0, 1 or 2, got {f!r}")
    fingerprints = dataset_fingerprints(config)
    _check_splits(config)
    return fingerprints


def _check_splits(config: SuiteConfig) -> None:
    """Before any job: every split of the grid fits its graph (a split file written for another
    graph stops the run with an error naming the file)."""
    import gs_data

    root = _root(config.settings.get("root"))
    for name in config.grid["dataset"]:
        if name.lower().startswith("synthetic"):
            continue
        kw = {"missing_label": 0} if name.startswith("planetoid") else {}
        n = int(gs_data.load(name, root=root, **kw).num_nodes)
        try:
            splits = gs_data.load_edgewise_splits(name, root=root or gs_data.data_root(),
                                                  num_splits=max(config.grid["split"]) + 1)
            for s in config.grid["split"]:
                gs_data.check_edgewise_split(splits[int(s)], n)
        except (ValueError, OSError) as exc:
            raise SuiteConfigError(f"{name}: {exc}") from exc


def _split_masks(data, name: str, split: int, fold: int, root: str | None):
    import gs_data

    if name.lower().startswith("synthetic"):
        splits = gs_data.generate_edgewise_splits(data.y, num_splits=split + 1, seed=0)
    else:
        splits = gs_data.load_edgewise_splits(name, root=root or gs_data.data_root())
    d = gs_data.edgewise_masks(data, splits[split], fold)
    return {"train": d.train_mask, "valid": d.val_mask, "test": d.test_mask}


def _load(params: dict[str, Any], settings: dict[str, Any], root: str | None):
    """The dataset of a job, row-normalised unless ``settings["normalize_features"]`` is false."""
    import gs_data

    kw = {"missing_label": 0} if params["dataset"].startswith("planetoid") else {}
    norm = bool(settings.get("normalize_features", True))
    return gs_data.load(params["dataset"], root=root, normalize_features=norm, **kw)


def train_config(settings: dict[str, Any], seed: int):
    """:meth:`gs_algos.TrainConfig.edgewise` with the suite's overrides."""
    from gs_algos import TrainConfig

    return TrainConfig.edgewise(
        seed=seed,
        lr=float(settings.get("lr", 0.01)),
        weight_decay=float(settings.get("weight_decay", 5e-4)),
        max_epochs=int(settings.get("max_epochs", 2000)),
        patience=int(settings.get("patience", 100)),
        stopping=str(settings.get("stopping", "acc_or_nll")),
    )


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    import torch

    from gs_algos import fit_node, predict_node, seeded
    from gs_models import build_model

    params, settings, seed = job["params"], job["settings"], int(job["seed"])
    root = _root(settings.get("root"))
    data = _load(params, settings, root)
    masks = _split_masks(data, params["dataset"], int(params["split"]), int(params["fold"]), root)
    num_classes = int(data.y.max()) + 1
    model = seeded(lambda: build_model(MODELS[params["model"]], data.num_features, num_classes), seed)
    bins = int(settings.get("bins", 15))
    y = data.y.numpy()
    ei = data.edge_index.numpy()
    test = masks["test"].numpy()
    if params["model"] in STRUCTURED:
        out = _fit_structured(model, data, masks, params["model"], settings, seed)
        # the paper's text: structured edge joints (GMNN samples, EPFGNN loopy BP)
        metrics = _score(out["node"], y, ei, test, out["edge"], bins, reliability=True)
        # the released code (src/calibration.py scores every model with EdgewiseMetrics on
        # node log-probabilities): product of the structured node marginals
        metrics["product"] = _score(out["node"], y, ei, test, None, bins)
        if "mean_field" in out:  # EPFGNN with naive mean-field test-time inference (Table 4)
            metrics["mean_field"] = _score(out["mean_field"], y, ei, test, None, bins)
        metrics.update(best_epoch=out["best_epoch"], epochs_run=out["epochs_run"])
        return metrics
    res = fit_node(model, data, None, train_config(settings, seed), masks=masks, num_classes=num_classes)
    _, logits = predict_node(model, data)
    probs = torch.softmax(logits.double(), -1).numpy()
    metrics = _score(probs, y, ei, test, None, bins, reliability=True)
    metrics.update(best_epoch=res.best.epoch, epochs_run=res.epochs_run)
    return metrics


def _score(probs, y, ei, test, edge_marginals, bins: int, reliability: bool = False) -> dict[str, Any]:
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
            if reliability:
                out["reliability"] = {
                    "node": _bins(probs[test], y[test], bins),
                    **{k: _pack(getattr(ew, k).bins) for k in ("all", "agree", "disagree")},
                }
    return out


def _fit_structured(model, data, masks, name: str, settings: dict[str, Any], seed: int) -> dict[str, Any]:
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

    from gs_algos import EMConfig, fit_epfgnn, fit_gmnn

    preset = EMConfig.gmnn if name == "gmnn" else EMConfig.epfgnn
    em = preset(lr=float(settings.get("lr", 0.01)), weight_decay=float(settings.get("weight_decay", 5e-4)))
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
            mf = model.node_marginals(x, ei, method="mean_field", y=y, observed_mask=train).double()
            out["mean_field"] = (mf / mf.sum(-1, keepdim=True)).numpy()
    node = node.double()
    edge = edge.double()
    out["node"] = (node / node.sum(-1, keepdim=True)).numpy()
    out["edge"] = (edge / edge.sum((-2, -1), keepdim=True)).numpy()
    out["best_epoch"] = res.pretrain.best.epoch if res.pretrain is not None else -1
    out["epochs_run"] = res.epochs_run
    return out


def _bins(probs: np.ndarray, y: np.ndarray, n_bins: int) -> dict[str, list[float]]:
    from gs_metrics import reliability_bins

    return _pack(reliability_bins(probs, y, n_bins=n_bins))


def _pack(b) -> dict[str, list[float]]:
    return {"confidence": list(map(float, b.confidence)), "accuracy": list(map(float, b.accuracy)),
            "count": list(map(int, b.counts))}


def tables(records: Sequence[dict[str, Any]]) -> list[Table]:
    groups = group_records(records, ("dataset", "model"))
    rows = []
    metrics = ("nodewise_ece", "edgewise_ece", "agree_ece", "disagree_ece")
    for key in sorted(groups):
        ds, model = key
        recs = groups[key]
        row = [ds, model.upper(), str(len(recs))]
        for metric in metrics:
            vals = [r["metrics"][metric] for r in recs]
            cell = fmt_mean_std(vals)
            pub = published("edgewise", ds, model, metric)
            if pub is not None:
                cell += f" (paper {pub[0]:.2f}, Δ {mean_std(vals)[0] * 100 - pub[0]:+.2f})"
            row.append(cell)
        row.append(fmt_mean_std(r["metrics"]["node_acc"] for r in recs))
        row.append(fmt_mean_std(r["metrics"]["homophily"] for r in recs))
        rows.append(row)
    if not rows:
        return []
    return [Table(
        "Edgewise calibration: ECE (%) on the test nodes, mean ± std over splits x folds x seeds (paper Table 1 layout)",
        ["dataset", "model", "runs", "nodewise ECE", "edgewise ECE", "agree ECE", "disagree ECE", "accuracy", "homophily"],
        rows,
        note="Paper values: edgewise-calibration Table 1 (5 splits x 3 folds x 5 initialisations).",
    )]


def figures(records: Sequence[dict[str, Any]], report_dir: Path) -> list[Figure]:
    """Reliability diagram (nodewise) per dataset and model, pooled over runs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = group_records(records, ("dataset", "model"))
    if not groups:
        return []
    keys = sorted(groups)
    fig, axes = plt.subplots(1, len(keys), figsize=(3.2 * len(keys), 3.2), squeeze=False)
    for ax, key in zip(axes[0], keys, strict=False):
        conf = np.zeros(15)
        acc = np.zeros(15)
        cnt = np.zeros(15)
        for r in groups[key]:
            rb = r["metrics"]["reliability"]["node"]
            c = np.asarray(rb["count"], dtype=float)
            k = len(c)
            conf[:k] += np.nan_to_num(np.asarray(rb["confidence"], dtype=float)) * c
            acc[:k] += np.nan_to_num(np.asarray(rb["accuracy"], dtype=float)) * c
            cnt[:k] += c
        ok = cnt > 0
        edges = np.linspace(0, 1, 16)
        centers = (edges[:-1] + edges[1:]) / 2
        ax.bar(centers[ok], acc[ok] / cnt[ok], width=1 / 15, edgecolor="k", alpha=0.7, label="accuracy")
        ax.plot([0, 1], [0, 1], "k--", lw=1, label="perfect calibration")
        ax.set_title(f"{key[0]} {key[1].upper()}", fontsize=9)
        ax.set_xlabel("confidence")
        ax.set_ylabel("accuracy")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
    axes[0][0].legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    path = report_dir / "edgewise_reliability.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return [Figure(path.name, "Nodewise reliability diagrams (15 bins) on the test nodes, pooled over runs.")]
