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
from gs_bench.report import Figure, Table, fmt_mean_std, group_records, has_paper_values, mean_std
from gs_bench.runners.common import data_root, dataset_fingerprints, require_axes
from gs_bench.suites import SuiteConfig, SuiteConfigError, check_nonnegative, check_positive

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
    2000 epochs, patience 100, 15 ECE bins), the authors' stopping rule (``"acc_or_nll"``,
    their ``src/train.py``; ``"patience"`` is ours) and row-normalised features (their
    ``NormalizeFeatures``). GMNN / EPFGNN schedules: :class:`gs_algos.EMConfig`;
    ``structured_variant``: ``"released"`` (the authors' released models and EM loops) or
    ``"ours-v1"`` (our first implementation, the ci run of 14c2e36)."""

    lr: float = 0.01
    weight_decay: float = 5e-4
    max_epochs: int = 2000
    patience: int = 100
    bins: int = 15
    stopping: str = "acc_or_nll"
    normalize_features: bool = True
    structured_variant: str = "released"
    root: str | None = None

    def __post_init__(self) -> None:
        check_positive(self, "lr", "max_epochs", "patience", "bins")
        check_nonnegative(self, "weight_decay")
        if self.structured_variant not in ("released", "ours-v1"):
            raise ValueError(f"structured_variant must be 'released' or 'ours-v1', got {self.structured_variant!r}")
        if self.stopping not in ("acc_or_nll", "patience"):
            raise ValueError(f"stopping must be 'acc_or_nll' or 'patience', got {self.stopping!r}")


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

    root = data_root(config.settings.get("root"))
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


def train_config(settings: dict[str, Any], seed: int, device: str = "auto"):
    """:meth:`gs_algos.TrainConfig.edgewise` with the suite's overrides, on ``device``."""
    from gs_algos import TrainConfig

    return TrainConfig.edgewise(
        seed=seed,
        device=device,
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
    root = data_root(settings.get("root"))
    data = _load(params, settings, root)
    masks = _split_masks(data, params["dataset"], int(params["split"]), int(params["fold"]), root)
    num_classes = int(data.y.max()) + 1
    kw = {}
    if params["model"] in STRUCTURED:
        kw["variant"] = str(settings.get("structured_variant", "released"))
    model = seeded(lambda: build_model(MODELS[params["model"]], data.num_features, num_classes, **kw), seed)
    bins = int(settings.get("bins", 15))
    y = data.y.numpy()
    ei = data.edge_index.numpy()
    test = masks["test"].numpy()
    if params["model"] in STRUCTURED:
        out = _fit_structured(model, data, masks, params["model"], settings, seed,
                              device=job.get("device", "auto"))
        # the paper's text: structured edge joints (GMNN samples, EPFGNN loopy BP)
        metrics = _score(out["node"], y, ei, test, out["edge"], bins, reliability=True)
        # the released code (src/evaluation.py scores every model with EdgewiseMetrics on
        # node log-probabilities): product of the structured node marginals
        metrics["product"] = _score(out["node"], y, ei, test, None, bins)
        if "mean_field" in out:  # EPFGNN with naive mean-field test-time inference (Table 4)
            metrics["mean_field"] = _score(out["mean_field"], y, ei, test, None, bins)
        metrics.update(best_epoch=out["best_epoch"], epochs_run=out["epochs_run"],
                       em_rounds_run=out["em_rounds_run"])
        return metrics
    res = fit_node(model, data, None, train_config(settings, seed, job.get("device", "auto")),
                   masks=masks, num_classes=num_classes)
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


def _fit_structured(model, data, masks, name: str, settings: dict[str, Any], seed: int,
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

    from gs_algos import EMConfig, fit_epfgnn, fit_gmnn

    preset = EMConfig.gmnn if name == "gmnn" else EMConfig.epfgnn
    em = preset(str(settings.get("structured_variant", "released")),
                lr=float(settings.get("lr", 0.01)), weight_decay=float(settings.get("weight_decay", 5e-4)),
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


def _bins(probs: np.ndarray, y: np.ndarray, n_bins: int) -> dict[str, list[float]]:
    from gs_metrics import reliability_bins

    return _pack(reliability_bins(probs, y, n_bins=n_bins))


def _pack(b) -> dict[str, list[float]]:
    return {"confidence": list(map(float, b.confidence)), "accuracy": list(map(float, b.accuracy)),
            "count": list(map(int, b.counts))}


_ORDER = {"gcn": 0, "gat": 1, "gmnn": 2, "epfgnn": 3}


def _cell(vals: list[float], pub: tuple[float, str] | None) -> str:
    from gs_bench.report import fmt_mean_std

    cell = fmt_mean_std(vals)
    if pub is not None and vals:
        cell += f" (paper {pub[0]:.2f}, Δ {mean_std(vals)[0] * 100 - pub[0]:+.2f})"
    return cell


def _values(recs, metric: str, variant: str | None = None) -> list[float]:
    out = []
    for r in recs:
        m = r["metrics"] if variant is None else r["metrics"].get(variant)
        if m is not None and metric in m:
            out.append(m[metric])
    return out


def _rows(groups, metrics, *, extra=None, variants=((None, ""),)) -> list[list[str]]:
    rows = []
    for key in sorted(groups, key=lambda k: (k[0], _ORDER.get(k[1], 9), k[1])):
        ds, model = key
        recs = groups[key]
        for variant, label in variants:
            if variant is not None and not any(variant in r["metrics"] for r in recs):
                continue
            pub_model = model if variant != "mean_field" else "epfgnn-mean-field"
            row = [ds, model.upper() + label, str(len(recs))]
            for metric in metrics:
                pub = published("edgewise", ds, pub_model, metric) if variant != "product" else None
                row.append(_cell(_values(recs, metric, variant), pub))
            if extra:
                row += [fmt_mean_std(_values(recs, m, variant)) for m in extra]
            rows.append(row)
    return rows


_STRUCT_VARIANTS = (
    (None, ""),
    ("product", " (released code: product of node marginals)"),
    ("mean_field", " (naive mean field at test time)"),
)


def tables(records: Sequence[dict[str, Any]]) -> list[Table]:
    """Tables 1, 3 and 4 layouts, the paper's value beside ours where it has one (percent, mean ±
    std over runs, Δ = ours - paper; a table without any says so in its note).

    GMNN / EPFGNN rows: the paper's text definition (edge joints of the structured model) first,
    then the released code's (``src/evaluation.py`` scores every model on node
    log-probabilities, i.e. the product of the structured node marginals), and for EPFGNN
    naive mean-field test-time inference (Table 4).
    """
    from gs_bench.published import EW_ACC_METRICS, EW_ECE_METRICS

    groups = group_records(records, ("dataset", "model"))
    if not groups:
        return []
    paper_runs = "paper: 5 splits x 3 folds x 5 initialisations = 75 runs per cell"
    m = _bins_text(records)
    datasets = ", ".join(sorted({k[0] for k in groups}))

    def paper(rows: list[list[str]], text: str) -> str:  # promise only the values printed
        return (f"Paper values beside ours: {text}." if has_paper_values(rows) else
                f"No paper value in this table: the paper reports none for {datasets}.")

    rows1 = _rows(groups, EW_ECE_METRICS, extra=("node_acc", "homophily"), variants=_STRUCT_VARIANTS[:2])
    t1 = Table(
        "Edgewise calibration, Table 1 layout: ECE (%) on the test nodes, mean ± std over splits x folds x initialisations",
        ["dataset", "model", "runs", "nodewise ECE", "edgewise ECE", "agree ECE", "disagree ECE", "node acc.", "homophily"],
        rows1,
        note=f"{paper(rows1, f'Table 1 ({paper_runs})')} Bins: the paper's eq. 1 (k-1)/m < c <= k/m, m = {m}.",
    )
    rows3 = _rows(groups, EW_ACC_METRICS, variants=_STRUCT_VARIANTS[:2])
    t3 = Table(
        "Table 3 layout: nodewise, edgewise, agree and disagree accuracy (%) on the test nodes",
        ["dataset", "model", "runs", "nodewise acc.", "edgewise acc.", "agree acc.", "disagree acc."],
        rows3,
        note=paper(rows3, f"Table 3 ({paper_runs})"),
    )
    epf = {k: v for k, v in groups.items() if k[1] == "epfgnn"}
    out = [t1, t3]
    if epf:
        rows4 = _rows(epf, EW_ACC_METRICS + EW_ECE_METRICS, variants=(("mean_field", " (mean field)"),))
        out.append(Table(
            "Table 4 layout: EPFGNN with naive mean-field test-time inference (%)",
            ["dataset", "model", "runs", "nodewise acc.", "edgewise acc.", "agree acc.", "disagree acc.",
             "nodewise ECE", "edgewise ECE", "agree ECE", "disagree ECE"],
            rows4,
            note=paper(rows4, "Table 4"),
        ))
    floor_rows = []
    for key in sorted(groups, key=lambda k: (k[0], _ORDER.get(k[1], 9))):
        recs = groups[key]
        row = [key[0], key[1].upper(), str(len(recs))]
        for metric in EW_ECE_METRICS:
            diff = [r["metrics"][metric + "_floor"] - r["metrics"][metric] for r in recs
                    if metric + "_floor" in r["metrics"]]
            row.append(f"{fmt_mean_std(_values(recs, metric + '_floor'))} (max abs. Δ {max(map(abs, diff), default=0) * 100:.2f})")
        floor_rows.append(row)
    out.append(Table(
        "ECE (%) with the authors' released bin convention floor(c·m) (src/calibloss.py) instead of eq. 1",
        ["dataset", "model", "runs", "nodewise ECE", "edgewise ECE", "agree ECE", "disagree ECE"],
        floor_rows,
        note="max abs. Δ: the largest difference to the eq. 1 bins over the runs (they differ only for "
             f"confidences exactly on a bin edge k/m, m = {m}).",
    ))
    off = off_cells(records)
    if off:
        out.append(Table(
            f"Cells more than {OFF_THRESHOLD:g} points from the paper ({len(off)} of {len(paper_cells(records))} cells of Tables 1, 3 and 4)",
            ["table", "dataset", "model", "metric", "runs", "ours", "paper", "Δ"],
            [[c["table"], c["dataset"], c["model"], c["metric"], str(c["n"]), f"{c['ours']:.2f}",
              f"{c['paper']:.2f}", f"{c['delta']:+.2f}"] for c in off],
            note="The gs-bench README gives one sentence of explanation per cell of the committed ci run.",
        ))
    out.append(Table("Differences from the paper's setup (generated from the run's settings)",
                     ["", "setting"], [[str(i + 1), d] for i, d in enumerate(differences(records))]))
    return out


#: a cell further than this (in points) from the paper is listed by :func:`off_cells`
OFF_THRESHOLD = 5.0


def paper_cells(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every cell of the paper's Tables 1 (ECE), 3 (accuracy) and 4 (EPFGNN, naive mean field)
    that the records fill: ``{table, dataset, model, metric, n, ours, paper, delta}`` in
    percent (``ours`` = mean over the runs), GMNN / EPFGNN with the paper's text definition."""
    from gs_bench.published import EW_ACC_METRICS, EW_ECE_METRICS

    groups = group_records(records, ("dataset", "model"))
    cells = []
    for key in sorted(groups, key=lambda k: (k[0], _ORDER.get(k[1], 9), k[1])):
        ds, model = key
        recs = groups[key]
        parts = [("Table 1", None, model, EW_ECE_METRICS), ("Table 3", None, model, EW_ACC_METRICS)]
        if model == "epfgnn":
            parts.append(("Table 4", "mean_field", "epfgnn-mean-field", EW_ACC_METRICS + EW_ECE_METRICS))
        for table, variant, pub_model, metrics in parts:
            for metric in metrics:
                pub = published("edgewise", ds, pub_model, metric)
                m, _, n = mean_std(_values(recs, metric, variant))
                if pub is None or not n:
                    continue
                cells.append({"table": table, "dataset": ds, "model": pub_model, "metric": metric, "n": n,
                              "ours": m * 100, "paper": pub[0], "delta": m * 100 - pub[0]})
    return cells


def off_cells(records: Sequence[dict[str, Any]], threshold: float = OFF_THRESHOLD) -> list[dict[str, Any]]:
    """The cells of :func:`paper_cells` more than ``threshold`` points from the paper."""
    return [c for c in paper_cells(records) if abs(c["delta"]) > threshold]


def differences(records: Sequence[dict[str, Any]]) -> list[str]:
    """One sentence per place where this run's setup differs from the paper's text or from the
    authors' released code (hans66hsu/structured_uncertainty_metrics), from the records' settings."""
    settings = records[0]["job"]["settings"] if records else {}
    cells = group_records(records, ("dataset", "model"))
    runs = sorted(len(v) for v in cells.values()) or [0]
    seeds = sorted({int(r["job"]["seed"]) for r in records})
    out = []
    if bool(settings.get("normalize_features", True)):
        out.append(
            "Features are row-normalised (gs_data.load(normalize_features=True)), as the authors' "
            "src/data/data_utils.py declares with NormalizeFeatures; their training scripts read "
            "dataset.data, which bypasses the transform, so the released code trains on raw "
            "bag-of-words features in practice."
        )
    else:
        out.append("Features are raw bag-of-words (normalize_features = false); the authors' "
                   "data code declares row-normalisation (NormalizeFeatures).")
    if settings.get("stopping", "acc_or_nll") == "acc_or_nll":
        out.append(
            "Early stopping is the released code's (src/train.py): patience resets when validation "
            "accuracy >= best or NLL <= best, the checkpoint is kept when both hold; the paper only "
            f"says patience {settings.get('patience', 100)}."
        )
    else:
        out.append("Early stopping keeps the best validation accuracy (ours, stopping = 'patience'); "
                   "the released code resets patience on accuracy or NLL (src/train.py).")
    span = f"{runs[0]}" if runs[0] == runs[-1] else f"{runs[0]} to {runs[-1]}"
    out.append(
        f"{span} runs per model and dataset in this report (initialisation seeds "
        f"{', '.join(map(str, seeds))}); the paper: 5 splits x 3 folds x 5 initialisations = 75."
    )
    if settings.get("structured_variant", "released") == "released":
        out.append(
            "GMNN and EPFGNN follow the released code (structured_variant = 'released'): GMNN's p "
            "is a 2-layer GCN with self-loops whose logits are averaged over 32 label samples, its "
            "edge joints the products of its node marginals (src/evaluation.py); EPFGNN runs up to "
            "100 EM rounds of <= 50-epoch M-steps (EM patience 5) on the star-piece objective with "
            "degree-redistributed unaries and ReZero edge weights, and max-product loopy BP. Left: "
            "q's pre-training optimiser state is not carried into GMNN's E-step (the released "
            "train_gmnn.py reuses it)."
        )
    else:
        out.append(
            "GMNN (structured_variant = 'ours-v1'): our p network propagates the neighbours' labels "
            "once without self-loops and the structured marginals are Rao-Blackwellised averages "
            "over 32 label samples; the released model.py uses a 2-layer GCN with self-loops for p "
            "and averages its logits over the samples."
        )
        out.append(
            "EPFGNN (structured_variant = 'ours-v1'): one EM round with an M-step of at most 100 "
            "epochs and validation patience 10 (the paper's text); the released src/train_epfgnn.py "
            "repeats up to 100 rounds of 50-epoch M-steps (EM patience 5), uses degree-redistributed "
            "unaries with ReZero edge weights and initialises the compatibility matrix at "
            "(randn + I) / C (ours: zeros)."
        )
    out.append(
        "Bins: the paper's eq. 1 ((k-1)/m < c <= k/m); the released calibloss.py uses floor(c m) "
        "(left-closed bins), shown in its own table."
    )
    return out


def figures(records: Sequence[dict[str, Any]], report_dir: Path) -> list[Figure]:
    """Reliability diagrams (nodewise, edgewise, agree, disagree) per dataset and model, pooled
    over runs, drawn by gs-metrics' one reliability plot with each bin's sample count printed
    on its bar; a bar's opacity grows with its share of the samples, so an almost empty bin
    does not look like a full one. The number of bins is the records' (the suite's ``bins``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = group_records(records, ("dataset", "model"))
    if not groups:
        return []
    kinds = (("node", "nodewise"), ("all", "edgewise"), ("agree", "agree"), ("disagree", "disagree"))
    out = []
    for ds in sorted({k[0] for k in groups}):
        keys = sorted((k for k in groups if k[0] == ds), key=lambda k: _ORDER.get(k[1], 9))
        fig, axes = plt.subplots(len(keys), len(kinds), figsize=(3.0 * len(kinds), 2.9 * len(keys)),
                                 squeeze=False)
        n_bins: set[int] = set()
        for row, key in zip(axes, keys, strict=True):
            for ax, (kind, label) in zip(row, kinds, strict=True):
                n_bins |= _diagram(ax, [r["metrics"]["reliability"].get(kind) for r in groups[key]
                                        if "reliability" in r["metrics"]],
                                   f"{ds} {key[1].upper()}: {label}")
        fig.tight_layout()
        path = report_dir / f"edgewise_reliability_{ds}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        bins_text = " / ".join(str(k) for k in sorted(n_bins)) or "no"
        out.append(Figure(path.name, f"{ds}: nodewise, edgewise, agree and disagree reliability diagrams "
                                     f"({bins_text} bins, test nodes, pooled over runs); the number on a "
                                     "bar is its sample count, pale bars hold few samples."))
    return out


def _bins_text(records: Sequence[dict[str, Any]]) -> str:
    """The number of ECE bins ``m`` of the records (from their stored reliability bins, else
    their ``bins`` setting), e.g. ``"15"``; several values joined by " / "."""
    found = set()
    for r in records:
        rel = r.get("metrics", {}).get("reliability") or {}
        node = rel.get("node")
        if node:
            found.add(len(node["count"]))
        elif "bins" in r.get("job", {}).get("settings", {}):
            found.add(int(r["job"]["settings"]["bins"]))
    return " / ".join(map(str, sorted(found))) or "?"


def _unpack(b: dict[str, list[float]]):
    """A record's stored bins (:func:`_pack`, equal-width) as gs-metrics' ``ReliabilityBins``."""
    from gs_metrics import ReliabilityBins

    counts = np.asarray(b["count"], dtype=np.int64)
    full = counts > 0
    return ReliabilityBins(
        edges=np.linspace(0.0, 1.0, counts.size + 1),
        counts=counts,
        accuracy=np.where(full, np.asarray(b["accuracy"], dtype=float), np.nan),
        confidence=np.where(full, np.asarray(b["confidence"], dtype=float), np.nan),
    )


def _diagram(ax, bins_list, title: str) -> set[int]:
    """Draw the runs' bins pooled (:func:`gs_metrics.pool_reliability_bins`) with
    :func:`gs_metrics.plot_reliability_diagram`; returns the number of bins drawn ({} if none)."""
    from gs_metrics import plot_reliability_diagram, pool_reliability_bins

    bins_list = [b for b in bins_list if b]
    if not bins_list:
        ax.set_axis_off()
        return set()
    pooled = pool_reliability_bins([_unpack(b) for b in bins_list])
    plot_reliability_diagram(pooled, ax, title=title, show_gap=False, show_counts=True,
                             shade_by_count=True, legend=False, fontsize=7)
    ax.title.set_fontsize(8)
    return {len(pooled.counts)}
