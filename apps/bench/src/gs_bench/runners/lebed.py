"""Runner of the ``lebed`` suite (LeBed paper, section 3, tables 2-4, figure 5).

One job = (dataset, shift, model, seed). Shifts: ``feature`` (EERM-style environments of any
graph, 320 test graphs) and ``domain`` (the dataset names the source domain of an ACM / DBLP /
Citation group; 3 domains x 4 perturbations x 30 = 360 test graphs). The temporal shift
(OGB-arxiv) has a generator in gs-data but no runner yet. The model (LeBed preset: 2-layer encoder, hidden 256,
output 32, linear classifier) is trained on the training graph of the shift (early stopping on
its validation graph's accuracy), its initial parameters are kept, and on every unlabeled test
graph we compute the true test error and eight label-free scores: LeBed (eq. 4-8) and the
appendix-C baselines ConfScore, Entropy, ATC-MC, ATC-NE (thresholds fitted on the validation
graph), and the threshold method with tau = 0.7 / 0.8 / 0.9. Per method we report Spearman rho
and the R^2 of a linear fit between score and true error across the test graphs (section 3.1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gs_bench.report import Figure, Table, fmt_mean_std, group_records
from gs_bench.runners.structural import (
    _root,
    dataset_fingerprint,
    dataset_fingerprints,
    require_axes,
)
from gs_bench.suites import SuiteConfig, SuiteConfigError, check_positive

SHIFTS = ("feature", "domain")
#: domain-shift groups (LeBed Table 1: ACM / DBLP / Citation with one feature space); the
#: dataset axis names the source (training) domain, the others are test domains too
DOMAIN_GROUPS = (
    ("acmv9", "citationv1", "dblpv7"),  # ACDNE versions (real files in ../shared/datasets)
    ("udagcn-acmv9", "udagcn-citationv2", "udagcn-dblpv8"),  # the versions LeBed names
)
MODELS = ("gcn", "sage", "gat", "gin", "mlp")
ESTIMATORS = ("lebed", "conf", "entropy", "atc_mc", "atc_ne", "thr_0.7", "thr_0.8", "thr_0.9")
ORIENT = {"lebed": 1, "conf": -1, "entropy": 1, "atc_mc": 1, "atc_ne": 1, "thr_0.7": 1, "thr_0.8": 1, "thr_0.9": 1}


@dataclass(frozen=True)
class Grid:
    """Grid axes of the suite (one job per combination and seed); checked by ``load_suite``."""

    dataset: list[str]
    shift: list[str]
    model: list[str]


@dataclass(frozen=True)
class Settings:
    """``[settings]`` of the suite, the one place its keys and types are declared (strict
    check in ``load_suite``). Defaults: section 3 (20 noise + 20 masking levels, 30 graphs per
    domain and perturbation) and the LeBed re-training of eq. 4-8 (300 steps, epsilon 0.01)."""

    noise_levels: int = 20
    mask_levels: int = 20
    max_epochs: int = 200
    patience: int = 50
    lebed_max_steps: int = 300
    lebed_epsilon: float = 0.01
    domain_graphs: int = 30
    root: str | None = None

    def __post_init__(self) -> None:
        check_positive(self, "noise_levels", "mask_levels", "max_epochs", "patience",
                       "lebed_max_steps", "domain_graphs")


def validate(config: SuiteConfig) -> dict[str, str]:
    require_axes(config, "lebed", ("dataset", "shift", "model"))
    for s in config.grid["shift"]:
        if s not in SHIFTS:
            raise SuiteConfigError(
                f"shift {s!r} is not wired into the lebed runner; accepted: {', '.join(SHIFTS)} "
                "(gs_data.lebed_temporal_shift generates the OGB-arxiv temporal set)"
            )
    for m in config.grid["model"]:
        if m not in MODELS:
            raise SuiteConfigError(f"unknown model {m!r}; accepted: {', '.join(MODELS)}")
    fingerprints = dataset_fingerprints(config)
    if "feature" in config.grid["shift"] and "domain" not in config.grid["shift"]:
        grouped = [d for d in config.grid["dataset"] if _domain_group(d) is not None]
        if grouped:
            raise SuiteConfigError(
                f"dataset(s) {', '.join(grouped)} belong to a domain-shift group and run only with "
                "shift = \"domain\"; the feature shift takes the other datasets"
            )
    if "domain" in config.grid["shift"]:
        sources = [d for d in config.grid["dataset"] if _domain_group(d) is not None]
        if not sources:
            raise SuiteConfigError(
                "the domain shift needs a source domain in the dataset axis; accepted: "
                + ", ".join(d for g in DOMAIN_GROUPS for d in g)
            )
        for d in sources:  # the sibling domains are test graphs: they must exist too
            siblings = [s for s in _domain_group(d) if s != d.lower()]
            fps = [dataset_fingerprint(s, config.settings.get("root")) for s in siblings]
            fingerprints[d] = ":".join([fingerprints[d], *fps])
    return fingerprints


def _domain_group(name: str) -> tuple[str, ...] | None:
    for group in DOMAIN_GROUPS:
        if name.lower() in group:
            return group
    return None


def applicable(params: dict[str, Any]) -> bool:
    """The grid points that are LeBed settings: the domain shift from a dataset of a domain
    group (Table 3), the feature shift on the other datasets (Table 2)."""
    in_group = _domain_group(str(params["dataset"])) is not None
    return in_group if params.get("shift", "feature") == "domain" else not in_group


def _train_val_masks(n: int, seed: int):
    import torch

    rng = np.random.default_rng(seed)
    perm = rng.permutation(n)
    cut = int(0.8 * n)
    train = torch.zeros(n, dtype=torch.bool)
    valid = torch.zeros(n, dtype=torch.bool)
    train[torch.from_numpy(perm[:cut])] = True
    valid[torch.from_numpy(perm[cut:])] = True
    return train, valid


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    import copy

    import torch

    import gs_data
    from gs_algos import TrainConfig, fit_node, predict_node, seeded
    from gs_data.lebed import DomainShiftConfig, FeatureShiftConfig
    from gs_metrics import (
        atc_score,
        conf_score,
        entropy_score,
        evaluate_estimator,
        fit_atc_threshold,
        threshold_score,
    )
    from gs_metrics.lebed import LeBedConfig, lebed_score
    from gs_models import build_model

    params, settings, seed = job["params"], job["settings"], int(job["seed"])
    root = _root(settings.get("root"))
    if params.get("shift", "feature") == "domain":
        group = _domain_group(params["dataset"])
        domains = {name: gs_data.load(name, root=root) for name in group}
        dcfg = DomainShiftConfig(graphs_per_perturbation=int(settings.get("domain_graphs", 30)))
        graphs = gs_data.lebed_domain_shift(domains, params["dataset"].lower(), dcfg, seed=0)
        train_g = valid_g = graphs.train
        # one source graph: train_fraction of its nodes train, the rest validate (UDAGCN)
        tr, va = train_g.train_mask, train_g.val_mask
    else:
        data = gs_data.load(params["dataset"], root=root)
        fcfg = FeatureShiftConfig(
            noise_levels=int(settings.get("noise_levels", 20)),
            mask_levels=int(settings.get("mask_levels", 20)),
        )
        graphs = gs_data.lebed_feature_shift(data, fcfg, seed=0)
        train_g, valid_g = graphs.train, graphs.valid
        tr, va = _train_val_masks(train_g.num_nodes, seed)
    val_nodes = va.numpy() if valid_g is train_g else np.ones(valid_g.num_nodes, dtype=bool)
    num_classes = int(train_g.y.max()) + 1
    model = seeded(lambda: build_model(f"lebed-{params['model']}", train_g.num_features, num_classes), seed)
    init_state = copy.deepcopy(model.state_dict())
    cfg = TrainConfig.edgewise(
        seed=seed,
        max_epochs=int(settings.get("max_epochs", 200)),
        patience=int(settings.get("patience", 50)),
    )
    fit_node(model, train_g, None, cfg, masks={"train": tr, "valid": va}, num_classes=num_classes)

    def probs_of(g) -> np.ndarray:
        _, logits = predict_node(model, g)
        return torch.softmax(logits.double(), -1).numpy()

    pv = probs_of(valid_g)[val_nodes]
    yv = valid_g.y.numpy()[val_nodes]
    thr_mc = fit_atc_threshold(pv, yv, "mc")
    thr_ne = fit_atc_threshold(pv, yv, "ne")
    lcfg = LeBedConfig(
        max_steps=int(settings.get("lebed_max_steps", 300)),
        epsilon=float(settings.get("lebed_epsilon", 0.01)),
    )
    errors, stops, early = [], [], []
    scores: dict[str, list[float]] = {k: [] for k in ESTIMATORS}
    meta = graphs.describe()
    for i in range(len(graphs)):
        g = graphs[i]
        p = probs_of(g)
        mask = getattr(g, "eval_mask", None)
        if mask is not None:  # score only the nodes the shift evaluates (all nodes here)
            p_eval, y_eval = p[mask.numpy()], g.y.numpy()[mask.numpy()]
        else:
            p_eval, y_eval = p, g.y.numpy()
        errors.append(float((p_eval.argmax(-1) != y_eval).mean()))
        res = lebed_score(model, init_state, g.x, g.edge_index, config=lcfg, seed=i)
        scores["lebed"].append(res.score)
        stops.append(res.stop_step)
        early.append(res.stopped_early)
        scores["conf"].append(conf_score(p_eval))
        scores["entropy"].append(entropy_score(p_eval))
        scores["atc_mc"].append(atc_score(p_eval, thr_mc, "mc"))
        scores["atc_ne"].append(atc_score(p_eval, thr_ne, "ne"))
        for tau in (0.7, 0.8, 0.9):
            scores[f"thr_{tau}"].append(threshold_score(p_eval, tau))
    out: dict[str, Any] = {"num_test_graphs": len(errors), "errors": errors, "scores": scores,
                           "lebed_stop_steps": stops, "lebed_stopped_early": float(np.mean(early)),
                           "perturbations": [m.get("perturbation") for m in meta]}
    for k in ESTIMATORS:
        ev = evaluate_estimator(scores[k], errors, ORIENT[k])
        out[f"{k}_spearman"] = float(ev.spearman)
        out[f"{k}_r2"] = float(ev.r2)
    return out


_LABELS = {"lebed": "LeBed", "conf": "ConfScore", "entropy": "Entropy", "atc_mc": "ATC-MC", "atc_ne": "ATC-NE",
           "thr_0.7": "Thres. (0.7)", "thr_0.8": "Thres. (0.8)", "thr_0.9": "Thres. (0.9)"}


def tables(records: Sequence[dict[str, Any]]) -> list[Table]:
    groups = group_records(records, ("dataset", "shift", "model"))
    out = []
    for key in sorted(groups):
        recs = groups[key]
        rows = []
        for k in ESTIMATORS:
            rows.append([
                _LABELS[k],
                fmt_mean_std([r["metrics"][f"{k}_spearman"] for r in recs], scale=1.0, digits=3),
                fmt_mean_std([r["metrics"][f"{k}_r2"] for r in recs], scale=1.0, digits=3),
            ])
        n = recs[0]["metrics"]["num_test_graphs"]
        out.append(Table(
            f"Label-free test-error estimation, {key[1]} shift on {key[0]}, {key[2].upper()} "
            f"({n} test graphs; paper Tables 2-4 layout)",
            ["method", "Spearman ρ", "R²"], rows,
            note="ρ is computed on orientation-corrected scores (each score grows with the error).",
        ))
    return out


def figures(records: Sequence[dict[str, Any]], report_dir: Path) -> list[Figure]:
    """Figure-5 style scatter of LeBed score vs true test error."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = group_records(records, ("dataset", "shift", "model"))
    figs = []
    for key in sorted(groups):
        rec = groups[key][0]
        m = rec["metrics"]
        fig, ax = plt.subplots(figsize=(4, 3.4))
        err = np.asarray(m["errors"]) * 100
        ax.scatter(m["scores"]["lebed"], err, s=10, alpha=0.7)
        ax.set_xlabel("LeBed score")
        ax.set_ylabel("true test error (%)")
        ax.set_title(f"{key[0]} {key[1]} {key[2].upper()}: ρ = {m['lebed_spearman']:.2f}", fontsize=9)
        fig.tight_layout()
        name = f"lebed_scatter_{key[0]}_{key[1]}_{key[2]}.png".replace("/", "_")
        fig.savefig(report_dir / name, dpi=120)
        plt.close(fig)
        figs.append(Figure(name, f"LeBed score vs true test error on {key[0]} ({key[1]} shift, {key[2].upper()}, seed {rec['job']['seed']})."))
    return figs
