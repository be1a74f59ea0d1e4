"""Runner of the ``structural-shifts`` suite (Bazhenov et al., sections 4-5, appendix F).

One job = (dataset, strategy, ID:OOD ratio, method, seed). The split is fixed per
(dataset, strategy, ratio) (split seed 0, as the paper uses one split per shift); the seed
drives model initialisation and training, as in the paper's 5 runs.

Metrics per job (fractions in [0, 1]):

* ``id_acc`` / ``ood_acc``: accuracy on ``in_test`` / ``out_test``; ``drop`` = relative drop
  (ood - id) / id as in Table 1 (left).
* ``ood_auroc`` / ``ood_aupr``: OOD detection with ``out_test`` as positives against
  ``in_test`` (section 4, "Prediction tasks & evaluation metrics"), scored by the method's
  uncertainty: softmax entropy for ERM (this is the SE method of Table 1, right), knowledge
  uncertainty (mutual information) for DE (section 4: "DE ... separate[s] the knowledge
  uncertainty that is used for OOD detection"), and the negative total evidence for the
  Dirichlet models.
* ``err_auroc``: misclassification detection AUROC on ``in_test`` ∪ ``out_test``.
* ``id_ece`` / ``ood_ece``: 15-bin ECE of the predictions.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gs_bench.published import published
from gs_bench.report import Figure, Table, fmt_mean_std, group_records, mean_std
from gs_bench.suites import SuiteConfig, SuiteConfigError, check_positive

log = logging.getLogger(__name__)

#: method name -> (label in tables, model preset)
METHODS: dict[str, tuple[str, str]] = {
    "erm": ("ERM / SE", "structural-shifts-base"),
    "erm+mod": ("ERM + mod", "structural-shifts-mod"),
    "mixup": ("Mixup", "structural-shifts-base"),
    "dann": ("DANN", "structural-shifts-base"),
    "coral": ("CORAL", "structural-shifts-base"),
    "eerm": ("EERM", "structural-shifts-base"),
    "de": ("DE", "structural-shifts-base"),
    "gpn": ("GPN", "structural-shifts-gpn"),
    "natpn": ("NatPN", "structural-shifts-natpn"),
    "gpe": ("GPE", "structural-shifts-gpn"),
    "natpe": ("NatPE", "structural-shifts-natpn"),
}
# "se" and "se+mod" are the uncertainty view of the "erm" / "erm+mod" jobs (same training).
ALIASES = {"se": "erm", "se+mod": "erm+mod"}
STRATEGIES = ("popularity", "locality", "density", "random")


def _canonical_method(name: str) -> str:
    return ALIASES.get(name, name)


@dataclass(frozen=True)
class Grid:
    """Grid axes of the suite (one job per combination and seed); checked by ``load_suite``."""

    dataset: list[str]
    strategy: list[str]
    ratio: list[str]
    method: list[str]


@dataclass(frozen=True)
class Settings:
    """``[settings]`` of the suite, the one place its keys and types are declared (strict
    check in ``load_suite``). Defaults: appendix F of the paper (Adam lr 3e-4, weight decay
    1e-5, patience 50, ensembles of 5, k = 10 domains); ``root = "shared"`` reads
    ``$GS_SHARED_DATA``."""

    model: str = "structural-shifts-base"
    lr: float = 3e-4
    weight_decay: float = 1e-5
    max_epochs: int = 1000
    patience: int = 50
    ensemble_size: int = 5
    domains: int = 10
    root: str | None = None

    def __post_init__(self) -> None:
        check_positive(self, "lr", "max_epochs", "patience", "ensemble_size", "domains")


def validate(config: SuiteConfig) -> dict[str, str]:
    """Check datasets, strategies, ratios and methods before any job starts."""
    from gs_splits.split import PAPER_SIZES

    require_axes(config, "structural-shifts", ("dataset", "strategy", "ratio", "method"))
    for s in config.grid["strategy"]:
        if s not in STRATEGIES:
            raise SuiteConfigError(f"unknown strategy {s!r}; accepted: {', '.join(STRATEGIES)}")
    for r in config.grid["ratio"]:
        if r not in PAPER_SIZES:
            raise SuiteConfigError(f"unknown ID:OOD ratio {r!r}; accepted: {', '.join(PAPER_SIZES)}")
    for m in config.grid["method"]:
        if _canonical_method(m) not in METHODS:
            raise SuiteConfigError(
                f"unknown method {m!r} for structural-shifts; accepted: {', '.join(sorted([*METHODS, *ALIASES]))}"
            )
    return dataset_fingerprints(config)


def require_axes(config: SuiteConfig, suite: str, axes: tuple[str, ...]) -> None:
    """Raise :class:`SuiteConfigError` unless the grid has every axis in ``axes``."""
    for axis in axes:
        if axis not in config.grid:
            raise SuiteConfigError(f"{config.source}: the {suite} suite needs a grid axis {axis!r}")


def dataset_fingerprints(config: SuiteConfig) -> dict[str, str]:
    """Check the grid's node-classification datasets exist and fingerprint their raw files."""
    import gs_data

    known = set(gs_data.available_datasets())
    fingerprints: dict[str, str] = {}
    for name in config.grid["dataset"]:
        if name.lower() not in known:
            raise SuiteConfigError(f"unknown dataset {name!r}; accepted: {', '.join(sorted(known))}")
        fingerprints[name] = dataset_fingerprint(name, config.settings.get("root"))
    return fingerprints


def dataset_fingerprint(name: str, root: str | None = None) -> str:
    """Hash of the raw files of ``name`` (or of the embedded generator's checksum).

    Raises :class:`SuiteConfigError` naming the missing file and where to put it.
    """
    import gs_data

    if name.lower().startswith("synthetic"):
        from gs_data import synthetic

        return "synthetic:" + str(getattr(synthetic, "DEFAULT_CHECKSUM", gs_data.__version__))
    try:
        paths = gs_data.raw_paths(name, root=_root(root))
    except Exception as exc:  # noqa: BLE001 - turned into a config error with the reason
        raise SuiteConfigError(f"dataset {name!r}: {exc}") from exc
    h = hashlib.sha256()
    for p in paths:
        p = Path(p)
        if not p.is_file():
            raise SuiteConfigError(
                f"dataset {name!r}: raw file {p} is missing; download it or place it there "
                f"(or set GS_DATA_ROOT / the suite setting `root`)"
            )
        st = p.stat()
        h.update(f"{p.name}:{st.st_size}".encode())
    return h.hexdigest()[:16]


def _root(root: str | None) -> str | None:
    """The data root of a suite: ``root = "shared"`` means the project's shared real-data
    folder (``$GS_SHARED_DATA``, else ``../shared/datasets`` beside the current folder or one of
    its parents); any other value is a path; unset means gs-data's cache (``GS_DATA_ROOT``)."""
    import os

    if not root:
        return None
    if root != "shared":
        return root
    env = os.environ.get("GS_SHARED_DATA")
    if env:
        return env
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        cand = folder.parent / "shared" / "datasets"
        if cand.is_dir():
            return str(cand)
    raise SuiteConfigError(
        "the suite reads the shared real datasets (root = \"shared\") but none were found: "
        "set GS_SHARED_DATA to the folder holding structural-shifts/, planetoid/, ..."
    )


def _load(name: str, settings: dict[str, Any]):
    import gs_data

    return gs_data.load(name, root=_root(settings.get("root")))


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """Train and evaluate one (dataset, strategy, ratio, method, seed) job."""
    import torch

    from gs_algos import TrainConfig, fit_node, predict_node, seeded
    from gs_algos.methods import METHODS as ALGOS
    from gs_algos.uncertainty import BayesianLoss, bayesian_combination, dirichlet_alpha
    from gs_data import make_split
    from gs_metrics import (
        dirichlet_uncertainty,
        ensemble_uncertainty,
        entropy,
        expected_calibration_error,
        misclassification_auroc,
        ood_detection_metrics,
    )
    from gs_models import build_model

    params, settings, seed = job["params"], job["settings"], int(job["seed"])
    method = _canonical_method(params["method"])
    _, preset = METHODS[method]
    data = _load(params["dataset"], settings)
    data = make_split(data, params["strategy"], sizes=params["ratio"], seed=0,
                      num_domains=int(settings.get("domains", 10)))
    num_classes = int(data.y.max()) + 1
    cfg = TrainConfig.structural_shifts(
        seed=seed,
        lr=float(settings.get("lr", 3e-4)),
        weight_decay=float(settings.get("weight_decay", 1e-5)),
        max_epochs=int(settings.get("max_epochs", 1000)),
        patience=int(settings.get("patience", 50)),
    )

    def make_model(s: int):
        return seeded(lambda: build_model(preset, data.num_features, num_classes), s)

    masks = {k: getattr(data, f"{k}_mask") for k in ("in_train", "in_valid", "in_test", "out_valid", "out_test")}
    domain = getattr(data, "domain", None)
    if method in ("de", "gpe", "natpe"):
        size = int(settings.get("ensemble_size", 5))
        member_seeds = [seed * size + i for i in range(size)]
    else:
        member_seeds = [seed]
    probs_members, alphas = [], []
    epochs = []
    for s in member_seeds:
        model = make_model(s)
        if method in ("gpn", "natpn", "gpe", "natpe"):
            meth = BayesianLoss()
        elif method in ("erm", "erm+mod", "de"):
            meth = ALGOS["erm"]()
        else:
            meth = ALGOS[method]()
        res = fit_node(model, data, meth, cfg.replace(seed=s), masks=masks, domain=domain, num_classes=num_classes)
        epochs.append(res.best.epoch)
        if method in ("gpn", "natpn", "gpe", "natpe"):
            alpha = dirichlet_alpha(model, data)
            alphas.append(alpha)
            probs_members.append((alpha / alpha.sum(-1, keepdim=True)).numpy())
        else:
            _, logits = predict_node(model, data, meth)
            probs_members.append(torch.softmax(logits, -1).numpy())
    y = data.y.numpy()
    if alphas:
        alpha = bayesian_combination(alphas) if len(alphas) > 1 else alphas[0]
        alpha_np = alpha.numpy()
        probs = alpha_np / alpha_np.sum(-1, keepdims=True)
        unc = dirichlet_uncertainty(alpha_np)
        uncertainty = -unc.alpha0  # low evidence = uncertain
    elif len(probs_members) > 1:
        stack = np.stack(probs_members)
        probs = stack.mean(0)
        uncertainty = ensemble_uncertainty(stack).knowledge
    else:
        probs = probs_members[0]
        uncertainty = entropy(probs)
    pred = probs.argmax(-1)
    m = {k: v.numpy() for k, v in masks.items()}
    id_acc = float((pred[m["in_test"]] == y[m["in_test"]]).mean())
    ood_acc = float((pred[m["out_test"]] == y[m["out_test"]]).mean())
    test = m["in_test"] | m["out_test"]
    is_ood = m["out_test"][test]
    det = ood_detection_metrics(uncertainty[test], is_ood)
    return {
        "id_acc": id_acc,
        "ood_acc": ood_acc,
        "drop": (ood_acc - id_acc) / id_acc if id_acc > 0 else float("nan"),
        "ood_auroc": float(det.auroc),
        "ood_aupr": float(det.aupr),
        "err_auroc": float(misclassification_auroc(uncertainty[test], pred[test] != y[test])),
        "id_ece": float(expected_calibration_error(probs[m["in_test"]], y[m["in_test"]])),
        "ood_ece": float(expected_calibration_error(probs[m["out_test"]], y[m["out_test"]])),
        "best_epochs": epochs,
        "sizes": {k: int(v.sum()) for k, v in m.items()},
    }


_SHIFT_ORDER = ("popularity", "locality", "density", "random")


def _pub_cell(dataset: str, shift: str, method: str, metric: str, ours: float) -> str:
    pub = published("structural-shifts", dataset, shift, method, metric)
    if pub is None or np.isnan(ours):
        return ""
    value, src = pub
    return f" (paper {value:.2f}, Δ {ours * 100 - value:+.2f}; {src})"


def tables(records: Sequence[dict[str, Any]]) -> list[Table]:
    """Tables 9-10 layout (ID / OOD accuracy), Tables 16-17 layout (OOD AUROC), Table 1 drop."""
    out: list[Table] = []
    groups = group_records(records, ("dataset", "ratio", "method", "strategy"))
    datasets = sorted({k[0] for k in groups})
    ratios = sorted({k[1] for k in groups})
    methods = [m for m in METHODS if any(k[2] in (m,) or _canonical_method(k[2]) == m for k in groups)]
    shifts = [s for s in _SHIFT_ORDER if any(k[3] == s for k in groups)]
    for ratio in ratios:
        for ds in datasets:
            rows = []
            for meth in methods:
                row = [METHODS[meth][0]]
                present = False
                for sh in shifts:
                    recs = groups.get((ds, ratio, meth, sh), [])
                    present |= bool(recs)
                    for metric in ("id_acc", "ood_acc"):
                        vals = [r["metrics"][metric] for r in recs]
                        cell = fmt_mean_std(vals)
                        if ratio == "50:50":
                            cell += _pub_cell(ds, sh, meth, metric, mean_std(vals)[0])
                        row.append(cell)
                if present:
                    rows.append(row)
            if rows:
                cols = ["method"] + [f"{sh} {part}" for sh in shifts for part in ("ID", "OOD")]
                out.append(Table(
                    f"OOD robustness on {ds} (ID:OOD {ratio}): accuracy (%), mean ± std over seeds (paper Tables 9-15 layout)",
                    cols, rows,
                    note="Paper values (Tables 9-10) beside ours where the paper has the same setting.",
                ))
            rows = []
            for meth in methods:
                row = [("SE" if meth == "erm" else "SE + mod" if meth == "erm+mod" else METHODS[meth][0])]
                present = False
                pub_name = {"erm": "se", "erm+mod": "se+mod"}.get(meth, meth)
                for sh in shifts:
                    recs = groups.get((ds, ratio, meth, sh), [])
                    present |= bool(recs)
                    vals = [r["metrics"]["ood_auroc"] for r in recs]
                    cell = fmt_mean_std(vals)
                    if ratio == "50:50":
                        cell += _pub_cell(ds, sh, pub_name, "ood_auroc", mean_std(vals)[0])
                    row.append(cell)
                if present and meth not in ("mixup", "dann", "coral", "eerm"):
                    rows.append(row)
            if rows:
                out.append(Table(
                    f"OOD detection on {ds} (ID:OOD {ratio}): AUROC (%) (paper Tables 16-22 layout)",
                    ["method", *shifts], rows,
                ))
        # Table 1 layout: ERM relative drop and SE AUROC per dataset
        rows = []
        for ds in datasets:
            row = [ds]
            for sh in shifts:
                vals = [r["metrics"]["drop"] for r in groups.get((ds, ratio, "erm", sh), [])]
                m, _, n = mean_std(vals)
                row.append(f"{m * 100:+.2f} %" if n else "—")
            for sh in shifts:
                vals = [r["metrics"]["ood_auroc"] for r in groups.get((ds, ratio, "erm", sh), [])]
                m, _, n = mean_std(vals)
                row.append(f"{m * 100:.2f}" if n else "—")
            rows.append(row)
        if any(any(c != "—" for c in r[1:]) for r in rows):
            out.append(Table(
                f"ERM accuracy drop ID→OOD and SE OOD-detection AUROC (ID:OOD {ratio}; paper Table 1 layout)",
                ["dataset", *[f"drop {s}" for s in shifts], *[f"AUROC {s}" for s in shifts]], rows,
            ))
    return out


def figures(records: Sequence[dict[str, Any]], report_dir: Path) -> list[Figure]:
    """ID vs OOD accuracy per shift (one bar group per dataset and method)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = group_records(records, ("dataset", "strategy", "method"))
    if not groups:
        return []
    keys = sorted(groups)
    datasets = sorted({k[0] for k in keys})
    fig, ax = plt.subplots(figsize=(max(6, 1.0 * len(keys)), 3.8))
    xs = np.arange(len(keys))
    id_m = [mean_std(r["metrics"]["id_acc"] for r in groups[k])[0] * 100 for k in keys]
    ood_m = [mean_std(r["metrics"]["ood_acc"] for r in groups[k])[0] * 100 for k in keys]
    ax.bar(xs - 0.2, id_m, 0.4, label="ID test", color="tab:blue")
    ax.bar(xs + 0.2, ood_m, 0.4, label="OOD test", color="tab:red")
    ax.set_xticks(xs)
    if len(datasets) == 1:
        ax.set_xticklabels([f"{s}\n{m.upper()}" for _, s, m in keys], fontsize=8)
    else:
        ax.set_xticklabels([f"{d}\n{s}\n{m.upper()}" for d, s, m in keys], fontsize=7)
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 100)
    title = "Structural shifts: ID vs OOD test accuracy"
    if len(datasets) == 1:
        title += f" on {datasets[0]}" + (" (synthetic)" if "synthetic" in datasets[0] else "")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2, frameon=False)
    fig.tight_layout()
    path = report_dir / "structural_id_ood_accuracy.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    figs = [Figure(path.name, "ID vs OOD test accuracy per dataset, shift and method (mean over seeds).")]
    return figs + split_figures(records, report_dir)


def split_figures(records: Sequence[dict[str, Any]], report_dir: Path) -> list[Figure]:
    """Per (dataset, shift) of the records: the split as the jobs made it (split seed 0), as
    the appendix-A distributions (class balance, degree, property, graph distance; ID vs OOD)
    and the appendix-H picture of the largest connected component (ID blue, OOD red)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from gs_splits import structural_split
    from gs_splits.plot import plot_graph, plot_statistics

    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for r in records:
        p = r["job"]["params"]
        seen.setdefault((p["dataset"], p["strategy"]), {"ratio": p["ratio"], **r["job"]["settings"]})
    figs: list[Figure] = []
    loaded: dict[str, Any] = {}
    for (dataset, strategy), settings in sorted(seen.items()):
        try:
            if dataset not in loaded:
                loaded[dataset] = _load(dataset, settings)
            data = loaded[dataset]
        except Exception as exc:  # noqa: BLE001 - the report still has its tables
            log.warning("split figures of %s skipped: %s", dataset, exc)
            continue
        ei = data.edge_index.numpy()
        split = structural_split(ei, strategy, sizes=settings["ratio"], seed=0,
                                 num_nodes=int(data.num_nodes))
        synth = " (synthetic)" if "synthetic" in dataset else ""
        base = f"split_{dataset}_{strategy}".replace("/", "_")
        fig = plot_statistics(split, ei, data.y.numpy())
        fig.suptitle(f"{dataset}{synth}, {strategy} split ({settings['ratio']}): ID vs OOD")
        fig.savefig(report_dir / f"{base}_distributions.png", dpi=90)
        plt.close(fig)
        figs.append(Figure(f"{base}_distributions.png",
                           f"{dataset}{synth}, {strategy} split: ID vs OOD class balance, degree, "
                           "property and graph-distance distributions (appendix A)."))
        fig = plot_graph(split, ei, max_nodes=1500, iterations=30)
        fig.savefig(report_dir / f"{base}_graph.png", dpi=90)
        plt.close(fig)
        figs.append(Figure(f"{base}_graph.png",
                           f"{dataset}{synth}, {strategy} split on the largest connected component: "
                           "ID nodes blue, OOD red (appendix H)."))
    return figs
