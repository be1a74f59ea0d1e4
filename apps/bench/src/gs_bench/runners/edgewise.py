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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gs_bench.published import published
from gs_bench.report import Figure, Table, fmt_mean_std, group_records, mean_std
from gs_bench.runners.structural import _root, dataset_fingerprints, require_axes
from gs_bench.suites import SuiteConfig, SuiteConfigError, check_positive

MODELS = {
    "gcn": "edgewise-gcn",
    "gat": "edgewise-gat",
    "gmnn": "edgewise-gmnn",
    "epfgnn": "edgewise-epfgnn",
}
#: structured models: EM training (appendix C.2) and their own edge marginals
STRUCTURED = ("gmnn", "epfgnn")


@dataclass(frozen=True)
class Grid:
    """Grid axes of the suite (one job per combination and seed); checked by ``load_suite``."""

    dataset: list[str]
    model: list[str]
    split: list[int]
    fold: list[int]


@dataclass(frozen=True)
class Settings:
    """``[settings]`` of the suite, the one place its keys and types are declared (strict
    check in ``load_suite``). Defaults: appendix C.2 (Adam lr 0.01, weight decay 5e-4, up to
    2000 epochs, patience 100, 15 ECE bins); the EM epochs of GMNN / EPFGNN default (None) to
    :class:`gs_models.EMConfig`."""

    lr: float = 0.01
    weight_decay: float = 5e-4
    max_epochs: int = 2000
    patience: int = 100
    bins: int = 15
    pretrain_epochs: int | None = None
    m_epochs: int | None = None
    e_epochs: int | None = None
    root: str | None = None

    def __post_init__(self) -> None:
        check_positive(self, "lr", "max_epochs", "patience", "bins")


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
    return dataset_fingerprints(config)


def _split_masks(data, name: str, split: int, fold: int, root: str | None):
    import gs_data

    if name.lower().startswith("synthetic"):
        splits = gs_data.generate_edgewise_splits(data.y, num_splits=split + 1, seed=0)
    else:
        splits = gs_data.load_edgewise_splits(name, root=root or gs_data.data_root())
    d = gs_data.edgewise_masks(data, splits[split], fold)
    return {"train": d.train_mask, "valid": d.val_mask, "test": d.test_mask}


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    import torch

    import gs_data
    from gs_algos import TrainConfig, fit_node, predict_node, seeded
    from gs_metrics import edgewise_metrics, expected_calibration_error
    from gs_models import build_model

    params, settings, seed = job["params"], job["settings"], int(job["seed"])
    root = _root(settings.get("root"))
    kw = {"missing_label": 0} if params["dataset"].startswith("planetoid") else {}
    data = gs_data.load(params["dataset"], root=root, **kw)
    masks = _split_masks(data, params["dataset"], int(params["split"]), int(params["fold"]), root)
    num_classes = int(data.y.max()) + 1
    cfg = TrainConfig.edgewise(
        seed=seed,
        lr=float(settings.get("lr", 0.01)),
        weight_decay=float(settings.get("weight_decay", 5e-4)),
        max_epochs=int(settings.get("max_epochs", 2000)),
        patience=int(settings.get("patience", 100)),
    )
    model = seeded(lambda: build_model(MODELS[params["model"]], data.num_features, num_classes), seed)
    edge_marginals = None
    if params["model"] in STRUCTURED:
        probs, edge_marginals, best_epoch = _fit_structured(
            model, data, masks, params["model"], settings, seed
        )
    else:
        res = fit_node(model, data, None, cfg, masks=masks, num_classes=num_classes)
        _, logits = predict_node(model, data)
        probs = torch.softmax(logits.double(), -1).numpy()
        best_epoch = res.best.epoch
    y = data.y.numpy()
    test = masks["test"].numpy()
    bins = int(settings.get("bins", 15))
    ew = edgewise_metrics(
        probs, y, data.edge_index.numpy(), test, edge_marginals=edge_marginals, n_bins=bins
    )
    return {
        "node_acc": float((probs.argmax(-1)[test] == y[test]).mean()),
        "nodewise_ece": float(expected_calibration_error(probs[test], y[test], n_bins=bins)),
        "edgewise_ece": float(ew.all.ece),
        "agree_ece": float(ew.agree.ece),
        "disagree_ece": float(ew.disagree.ece),
        "edge_acc": float(ew.all.accuracy),
        "edge_nll": float(ew.all.nll),
        "edge_brier": float(ew.all.brier),
        "homophily": float(ew.homophily),
        "best_epoch": best_epoch,
        "reliability": {
            "node": _bins(probs[test], y[test], bins),
        },
    }


def _fit_structured(model, data, masks, name: str, settings: dict[str, Any], seed: int):
    """EM training and structured inference of GMNN / EPFGNN (edgewise paper, appendix C.2).

    Both are pre-trained for 200 epochs, then one EM round of 100 M-step and 100 E-step
    epochs (:class:`gs_models.EMConfig` defaults; suite settings ``pretrain_epochs``,
    ``m_epochs`` and ``e_epochs`` override them); the labelled training nodes are observed at
    inference. GMNN: node and edge marginals from its sampled chains (32 samples); EPFGNN:
    loopy belief propagation (100 iterations) for node and edge marginals. Returns
    ``(node probs (N, C) float64 numpy, edge marginals (E, C, C) numpy, last epoch)``.
    """
    import torch

    from gs_models import EMConfig

    defaults = EMConfig()
    em = EMConfig(
        lr=float(settings.get("lr", 0.01)),
        weight_decay=float(settings.get("weight_decay", 5e-4)),
        pretrain_epochs=int(settings.get("pretrain_epochs", defaults.pretrain_epochs)),
        m_epochs=int(settings.get("m_epochs", defaults.m_epochs)),
        e_epochs=int(settings.get("e_epochs", defaults.e_epochs)),
    )
    x, ei = data.x, data.edge_index
    y, train = data.y, masks["train"]
    model.fit(x, ei, y, train, config=em, seed=seed)
    model.eval()
    with torch.no_grad():
        if name == "gmnn":
            node, edge = model.node_and_edge_marginals(x, ei, y=y, observed_mask=train, seed=seed)
        else:
            node = model.node_marginals(x, ei, method="lbp", y=y, observed_mask=train)
            edge = model.edge_marginals(x, ei, method="lbp", y=y, observed_mask=train)
    node = node.double()
    edge = edge.double()
    node = node / node.sum(-1, keepdim=True)
    edge = edge / edge.sum((-2, -1), keepdim=True)
    last = em.pretrain_epochs + em.em_rounds * (em.m_epochs + em.e_epochs)
    return node.numpy(), edge.numpy(), last


def _bins(probs: np.ndarray, y: np.ndarray, n_bins: int) -> dict[str, list[float]]:
    from gs_metrics import reliability_bins

    b = reliability_bins(probs, y, n_bins=n_bins)
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
