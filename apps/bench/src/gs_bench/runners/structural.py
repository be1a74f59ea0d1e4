"""Runner of the ``structural-shifts`` suite (Bazhenov et al., sections 4-5, appendix F).

One job = (dataset, strategy, ID:OOD ratio, method, seed). The split is fixed per
(dataset, strategy, ratio): split seed 0 of gs-splits (``split_source = "seeded"``) or the
authors' published masks (``split_source = "authors"``, 50:50 only; gs-data
:func:`~gs_data.splits.authors_split`). The job's seed is the *run* of the method: single
models run with seed ``43 + run``, an ensemble's members with ``43 + 5 run .. 47 + 5 run``
(the authors' seeding, :func:`gs_algos.node_methods.member_seeds`). Single models get
``seeds`` runs, ensembles ``ensemble_runs`` (the authors: 3 runs of SE, one 5-member DE;
:func:`runs`).

Shared members (setting ``share_members``, default on): the authors' SE runs 1..3 are DE
members 1..3 and their GPN / NatPN runs 1..5 are the GPE / NatPE members (the same
configuration and seeds in separate experiments), so a member is trained once and kept in
``<out>/members/`` (:class:`gs_algos.node_methods.MemberCache`) for the other method of its
family. :func:`order_jobs` puts single models before ensembles so that the ensembles find
them. GPN / NatPN get ``posterior_runs`` runs (the authors' ``num_inits``: 5); DANN, CORAL,
Mixup and EERM ``robustness_runs`` (unset: ``seeds``; the ``ci`` profile: 1, to fit its time
budget).

Training protocol (setting ``protocol``): ``"authors"`` (default) = 200 epochs, lowest
Valid-In loss, the authors' layer order; ``"early-stop"`` = our earlier protocol (best
Valid-In accuracy, patience 50, conv -> batch norm -> GELU). What each method trains and
how it scores OOD lives in gs-algos (:mod:`gs_algos.node_methods`); this runner only
wires a method name to a model preset and tabulates.

Metrics per job (fractions in [0, 1]):

* ``id_acc`` / ``ood_acc``: accuracy on ``in_test`` / ``out_test``; ``drop`` = relative drop
  (ood - id) / id as in Table 1 (left).
* ``ood_auroc`` / ``ood_aupr``: OOD detection with ``out_test`` as positives against
  ``in_test`` (section 4, "Prediction tasks & evaluation metrics"), scored by the method's
  OOD score (:class:`gs_algos.node_methods.NodePrediction`): softmax entropy for ERM (the SE
  method of Table 1, right), knowledge uncertainty for DE, minus the total evidence for
  the Dirichlet models. ``ood_auroc_<measure>``: the same with the total / data /
  knowledge uncertainty (the authors' code logs all three).
* ``err_auroc``: misclassification detection AUROC on ``in_test`` ∪ ``out_test``.
* ``id_ece`` / ``ood_ece``: 15-bin ECE of the predictions.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gs_algos.names import ALIASES as ALGO_ALIASES
from gs_algos.names import (
    DEFAULT_ROBUSTNESS_VARIANT,
    ROBUSTNESS_METHODS,
    ROBUSTNESS_VARIANTS,
    STRUCTURAL_PROTOCOLS,
    builtin_node_method_names,
)
from gs_bench.published import published
from gs_bench.report import Figure, Table, fmt_mean_std, group_records, has_paper_values, mean_std
from gs_bench.runners.common import data_root, dataset_fingerprint, dataset_fingerprints, require_axes
from gs_bench.suites import DataMissingError, SuiteConfig, SuiteConfigError, check_nonnegative, check_positive
from gs_splits.names import DOMAIN_SCOPES, PAPER_SIZES

log = logging.getLogger(__name__)

#: Labels in tables where they differ from the gs-algos name (upper-cased by :func:`method_label`).
_LABELS = {"erm": "ERM / SE", "erm+mod": "ERM + mod", "mixup": "Mixup", "natpn": "NatPN",
           "natpe": "NatPE"}
#: Model presets under the "authors" protocol where they differ from :data:`DEFAULT_PRESET`
#: (appendix F: the posterior networks and the "+ mod" models have their own).
_PRESETS = {"erm+mod": "structural-shifts-mod", "gpn": "structural-shifts-gpn",
            "natpn": "structural-shifts-natpn", "gpe": "structural-shifts-gpn",
            "natpe": "structural-shifts-natpn"}
#: model preset of a method :data:`_PRESETS` does not name
DEFAULT_PRESET = "structural-shifts-base"


def _suite_methods() -> list[str]:
    """The paper's methods: gs-algos' named node methods (:data:`gs_algos.names.BUILTIN_METHODS`,
    its order), with ``erm+mod`` (ERM on the "mod" model of appendix F) after ``erm``."""
    out = []
    for name in builtin_node_method_names():
        out += [name, f"{name}+mod"] if name == "erm" else [name]
    return out


#: The paper's methods: name -> (label in tables, model preset under the "authors" protocol).
#: Any other named method of gs-algos (:func:`gs_algos.node_methods.available_node_methods`,
#: e.g. one added with :func:`gs_algos.register_method`) is accepted too (:func:`method_names`),
#: labelled by its name and trained on :data:`DEFAULT_PRESET`.
METHODS: dict[str, tuple[str, str]] = {
    m: (_LABELS.get(m, m.upper()), _PRESETS.get(m, DEFAULT_PRESET)) for m in _suite_methods()
}
#: gs-models preset of DANN / CORAL / Mixup / EERM under ``robustness_framework = "good"``
GOOD_PRESET = "good-gcn"
# "se" and "se+mod" are the uncertainty view of the "erm" / "erm+mod" jobs (same training):
# gs-algos' aliases (gs_algos.names.ALIASES), and each one's "+mod".
ALIASES = {**ALGO_ALIASES, **{f"{a}+mod": f"{m}+mod" for a, m in ALGO_ALIASES.items()}}
#: how DANN / CORAL / Mixup / EERM are trained: "paper" (appendix F and section 3.1, like
#: every other method) or "good" (GOOD's GCN and GOODCora training, which the paper names)
ROBUSTNESS_FRAMEWORKS = ("paper", "good")
#: where a job's split comes from: gs-splits (split seed 0), the authors' published 50:50 masks,
#: or the authors' masks where they publish one (50:50) and gs-splits at the other ratios
SPLIT_SOURCES = ("seeded", "authors", "authors-where-published")
#: preset of the "early-stop" protocol (our earlier layer order) where it differs
_EARLY_STOP_PRESETS = {
    "structural-shifts-base": "structural-shifts-base-early-stop",
    "structural-shifts-mod": "structural-shifts-mod-early-stop",
}


def method_names() -> list[str]:
    """Methods the suite accepts: :data:`METHODS`, then every other named method of gs-algos
    (read from its registry at call time, so a registered method needs no edit here)."""
    from gs_algos.node_methods import available_node_methods

    return [*METHODS, *(m for m in available_node_methods() if m not in METHODS)]


def method_label(method: str) -> str:
    """The label of a method in tables (its name for a method :data:`METHODS` does not name)."""
    name = _canonical_method(method)
    return METHODS[name][0] if name in METHODS else name


def strategy_names() -> tuple[str, ...]:
    """Split strategies the suite accepts: gs-splits' strategy registry
    (:func:`gs_splits.available_strategies`, the paper's four first), read at call time."""
    from gs_splits import available_strategies

    return available_strategies()


def model_preset(method: str, protocol: str = "authors") -> str:
    """The gs-models preset a method trains under ``protocol``."""
    name = _canonical_method(method)
    preset = METHODS[name][1] if name in METHODS else DEFAULT_PRESET
    return _EARLY_STOP_PRESETS.get(preset, preset) if protocol == "early-stop" else preset


def _algo_name(method: str) -> str:
    """The gs-algos named method of a suite method (``erm+mod`` trains as ``erm``)."""
    return _canonical_method(method).replace("+mod", "")


def runs(params: dict[str, Any], settings: dict[str, Any], seeds: int) -> int:
    """Number of runs (job seeds) of a grid point: ``seeds`` for single models,
    ``ensemble_runs`` (default 1, the authors' one ensemble) for ensembles; 0 for a dataset
    without its files when ``skip_missing_datasets`` is set (the ``full`` profile)."""
    from gs_algos.node_methods import node_method

    if settings.get("skip_missing_datasets") and not _has_files(params["dataset"], settings):
        return 0
    size = int(settings.get("ensemble_size", 5))
    if node_method(_algo_name(params["method"]), size).num_members > 1:
        return min(seeds, int(settings.get("ensemble_runs", 1)))
    name = _algo_name(params["method"])
    if name in ("gpn", "natpn") and settings.get("posterior_runs"):
        return int(settings["posterior_runs"])
    if name in ROBUSTNESS_METHODS and settings.get("robustness_runs"):
        return int(settings["robustness_runs"])
    return seeds


def max_runs(settings: dict[str, Any], seeds: int) -> int:
    """The most runs any grid point gets (:func:`runs`): jobs are planned up to it."""
    extra = [settings.get("posterior_runs"), settings.get("robustness_runs")]
    return max([seeds, *(int(v) for v in extra if v)])


def order_jobs(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One ID:OOD ratio after the other (the grid's order, so the main text's 50:50 finishes
    first in a long run), and within a ratio single models first (EERM, the longest,
    leading), ensembles last: with shared members (``share_members``) an ensemble then
    loads the members its single-model counterpart has trained instead of training them
    again on another worker."""
    from gs_algos.node_methods import node_method

    ratios: dict[str, int] = {}
    for job in jobs:
        ratios.setdefault(job["params"].get("ratio", ""), len(ratios))

    def rank(job: dict[str, Any]) -> tuple[int, int]:
        name = _algo_name(job["params"]["method"])
        ratio = ratios[job["params"].get("ratio", "")]
        if node_method(name, int(job["settings"].get("ensemble_size", 5))).num_members > 1:
            return ratio, 2
        return ratio, 0 if name == "eerm" else 1

    return sorted(jobs, key=rank)  # stable: the grid order within each rank


def _canonical_method(name: str) -> str:
    return ALIASES.get(name, name)


def _published_name(method: str) -> str:
    """The name of a method in the paper's tables (:mod:`gs_bench.published`): ERM's OOD
    detection is the paper's SE (``erm`` -> ``se``, ``erm+mod`` -> ``se+mod``)."""
    return {m: a for a, m in ALIASES.items()}.get(method, method)


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
    1e-5, ensembles of 5, k = 10 domains) and the authors' protocol (``protocol =
    "authors"``: 200 epochs, no early stopping, lowest Valid-In loss; see
    :meth:`gs_algos.TrainConfig.structural_shifts`). ``max_epochs`` / ``patience`` left
    unset take the protocol's values. ``root = "shared"`` reads ``$GS_SHARED_DATA``.

    ``robustness_variant``: the formulation of DANN, CORAL, Mixup and EERM — ``"good"``
    (default: the GOOD benchmark's code, which the paper used for them, section 4; see
    :func:`gs_algos.node_methods.node_method`) or ``"ours-v1"`` (our earlier one).
    ``domain_scope``: the nodes the ``domains`` bins are cut over — ``"in_train"`` (appendix
    F: "which nodes in the training set belong to which domain") or ``"all"`` (our earlier
    rule); unset: ``"in_train"`` with the ``"good"`` variant, ``"all"`` with ``"ours-v1"``, so
    that ``robustness_variant = "ours-v1"`` alone restores the earlier runs.

    ``robustness_framework``: how DANN, CORAL, Mixup and EERM are *trained* — ``"paper"``
    (default: the encoder, optimiser and checkpoint rule of every other method, appendix F
    and section 3.1) or ``"good"``: GOOD's GCN (gs-models preset ``good-gcn``: 3 x 300,
    ReLU, dropout 0.5) and GOODCora training (:meth:`gs_algos.TrainConfig.good_cora`: Adam
    lr 1e-3, no weight decay, 100 epochs, EERM lr 5e-3 / 50 epochs, best Valid-In
    accuracy). The paper trained these four "using the experimental framework from the GOOD
    benchmark" (section 4) without giving its settings; ``lr`` / ``weight_decay`` /
    ``max_epochs`` of the suite do not apply to them under ``"good"``."""

    protocol: str = "authors"
    split_source: str = "seeded"
    lr: float = 3e-4
    weight_decay: float = 1e-5
    max_epochs: int | None = None
    patience: int | None = None
    ensemble_size: int = 5
    ensemble_runs: int = 1
    posterior_runs: int | None = None
    robustness_runs: int | None = None
    share_members: bool = True
    domains: int = 10
    robustness_variant: str = DEFAULT_ROBUSTNESS_VARIANT
    robustness_framework: str = "paper"
    domain_scope: str | None = None
    skip_missing_datasets: bool = False
    root: str | None = None

    def __post_init__(self) -> None:
        check_positive(self, "lr", "max_epochs", "patience", "ensemble_size", "ensemble_runs",
                       "posterior_runs", "robustness_runs", "domains")
        check_nonnegative(self, "weight_decay")


def validate(config: SuiteConfig) -> dict[str, str]:
    """Check datasets, strategies, ratios and methods before any job starts."""
    require_axes(config, "structural-shifts", ("dataset", "strategy", "ratio", "method"))
    strategies = strategy_names()
    for s in config.grid["strategy"]:
        if s not in strategies:
            raise SuiteConfigError(f"unknown strategy {s!r}; accepted: {', '.join(strategies)}")
    for r in config.grid["ratio"]:
        if r not in PAPER_SIZES:
            raise SuiteConfigError(f"unknown ID:OOD ratio {r!r}; accepted: {', '.join(PAPER_SIZES)}")
    methods = method_names()
    for m in config.grid["method"]:
        if _canonical_method(m) not in methods:
            raise SuiteConfigError(
                f"unknown method {m!r} for structural-shifts; accepted: {', '.join(sorted([*methods, *ALIASES]))}"
            )
    variant = config.settings.get("robustness_variant", DEFAULT_ROBUSTNESS_VARIANT)
    if variant not in ROBUSTNESS_VARIANTS:
        raise SuiteConfigError(f"unknown robustness_variant {variant!r}; accepted: "
                               f"{', '.join(ROBUSTNESS_VARIANTS)}")
    framework = config.settings.get("robustness_framework", "paper")
    if framework not in ROBUSTNESS_FRAMEWORKS:
        raise SuiteConfigError(f"unknown robustness_framework {framework!r}; accepted: "
                               f"{', '.join(ROBUSTNESS_FRAMEWORKS)}")
    scope = config.settings.get("domain_scope")
    if scope is not None and scope not in DOMAIN_SCOPES:
        raise SuiteConfigError(f"unknown domain_scope {scope!r}; accepted: {', '.join(DOMAIN_SCOPES)}")
    protocol = config.settings.get("protocol", "authors")
    if protocol not in STRUCTURAL_PROTOCOLS:
        raise SuiteConfigError(f"unknown protocol {protocol!r}; accepted: {', '.join(STRUCTURAL_PROTOCOLS)}")
    source = config.settings.get("split_source", "seeded")
    if source not in SPLIT_SOURCES:
        raise SuiteConfigError(
            f"unknown split_source {source!r}; accepted: {', '.join(SPLIT_SOURCES)}"
        )
    if source == "authors":  # a suite problem: checked before the data, so it shows without it
        _check_authors_ratios(config)
    if config.settings.get("skip_missing_datasets"):
        fingerprints = {}
        for name in config.grid["dataset"]:
            try:
                fingerprints.update(dataset_fingerprints(_only(config, name)))
            except SuiteConfigError as exc:
                log.warning("skipping dataset %s (skip_missing_datasets): %s", name, exc)
        if not fingerprints:
            raise DataMissingError("none of the grid's datasets has its files; see the warnings")
    else:
        fingerprints = dataset_fingerprints(config)
    if source in ("authors", "authors-where-published"):
        _check_authors_files(config, list(fingerprints), strict=source == "authors")
    return fingerprints


def _only(config: SuiteConfig, dataset: str) -> SuiteConfig:
    return config.with_overrides(axes={"dataset": [dataset]})


def _has_files(name: str, settings: dict[str, Any]) -> bool:
    try:
        dataset_fingerprint(name, settings.get("root"))
    except SuiteConfigError:
        return False
    return True


def _check_authors_ratios(config: SuiteConfig) -> None:
    """``split_source = "authors"`` admits the 50:50 ratio only (the authors' published files)."""
    for r in config.grid["ratio"]:
        if r != "50:50":
            raise SuiteConfigError(
                f"split_source 'authors' has 50:50 splits only (the authors' files); got ratio {r!r}; "
                "'authors-where-published' uses them at 50:50 and gs-splits at the other ratios"
            )


def _check_authors_files(config: SuiteConfig, datasets: list[str], strict: bool = True) -> None:
    """``split_source = "authors"``: the authors publish 50:50 splits only; every file must
    be present (the error names the path to place it at). ``strict=False``
    (``"authors-where-published"``): other ratios use gs-splits, so only the 50:50 files are
    checked, and only if the grid has that ratio."""
    from gs_data.splits import authors_split_path

    if strict:
        _check_authors_ratios(config)
    if "50:50" not in config.grid["ratio"]:
        return
    root = data_root(config.settings.get("root"))
    for name in datasets:
        for strategy in config.grid["strategy"]:
            path = authors_split_path(name, strategy, root)
            if not path.is_file():
                raise DataMissingError(
                    f"split_source 'authors': {path} is missing; copy the authors' "
                    f"datasets/<name>/splits/{strategy}.pth there"
                )


def _load(name: str, settings: dict[str, Any]):
    import gs_data

    return gs_data.load(name, root=data_root(settings.get("root")))


def _split(data, params: dict[str, Any], settings: dict[str, Any]):
    """The job's split: seeded (gs-splits, split seed 0) or the authors' published masks."""
    from gs_data import make_split
    from gs_data.splits import authors_split

    domains = int(settings.get("domains", 10))
    scope = domain_scope(settings)
    if uses_authors_masks(settings, params["ratio"]):
        return authors_split(data, params["dataset"], params["strategy"],
                             root=data_root(settings.get("root")), num_domains=domains,
                             domain_scope=scope)
    return make_split(data, params["strategy"], sizes=params["ratio"], seed=0, num_domains=domains,
                      domain_scope=scope)


def uses_authors_masks(settings: dict[str, Any], ratio: str) -> bool:
    """Whether a job with these settings and ID:OOD ratio reads the authors' published masks."""
    source = settings.get("split_source", "seeded")
    return source == "authors" or (source == "authors-where-published" and ratio == "50:50")


def domain_scope(settings: dict[str, Any]) -> str:
    """The nodes the domain bins are cut over: setting ``domain_scope``, else ``"in_train"``
    for the ``"good"`` robustness variant and ``"all"`` for ``"ours-v1"``."""
    scope = settings.get("domain_scope")
    if scope is not None:
        return str(scope)
    return "all" if settings.get("robustness_variant", DEFAULT_ROBUSTNESS_VARIANT) == "ours-v1" else "in_train"


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """Train and evaluate one (dataset, strategy, ratio, method, run) job."""
    from gs_algos import TrainConfig
    from gs_algos.node_methods import node_method
    from gs_metrics import (
        expected_calibration_error,
        misclassification_auroc,
        ood_detection_metrics,
    )
    from gs_models import build_model

    params, settings, run = job["params"], job["settings"], int(job["seed"])
    protocol = settings.get("protocol", "authors")
    preset = model_preset(params["method"], protocol)
    data = _split(_load(params["dataset"], settings), params, settings)
    num_classes = int(data.y.max()) + 1
    changes = {k: settings[k] for k in ("lr", "weight_decay", "max_epochs", "patience") if k in settings}
    # the device comes from the executor (gs-bench run --device), not the settings: not in the key
    device = job.get("device", "auto")
    cfg = TrainConfig.structural_shifts(protocol, **changes, device=device)
    robust = _algo_name(params["method"]) in ROBUSTNESS_METHODS
    framework = settings.get("robustness_framework", "paper")
    if robust and framework == "good":
        preset, cfg = GOOD_PRESET, TrainConfig.good_cora(_algo_name(params["method"]), device=device)
    variant = settings.get("robustness_variant", DEFAULT_ROBUSTNESS_VARIANT)
    method = node_method(_algo_name(params["method"]), int(settings.get("ensemble_size", 5)),
                         robustness_variant=variant)
    masks = {k: getattr(data, f"{k}_mask") for k in ("in_train", "in_valid", "in_test", "out_valid", "out_test")}
    pred = method.fit(
        lambda: build_model(preset, data.num_features, num_classes),
        data, cfg, run=run, masks=masks, domain=getattr(data, "domain", None),
        num_classes=num_classes, cache=_member_cache(job, preset),
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
        **({"robustness_variant": variant, "robustness_framework": framework} if robust else {}),
        "protocol": protocol,
        # the masks this job read (under "authors-where-published": authors at 50:50 only)
        "split_source": "authors" if uses_authors_masks(settings, params["ratio"]) else "seeded",
        "domain_scope": domain_scope(settings),
        "sizes": {k: int(v.sum()) for k, v in m.items()},
    }
    for name in ("total", "data", "knowledge"):
        out[f"ood_auroc_{name}"] = float(ood_detection_metrics(pred.measures[name].numpy()[test], is_ood).auroc)
    out["split"] = split_record(data, params, settings, job.get("workdir"))
    return out


#: folder of the run directory holding one appendix-H layout per split (:func:`split_record`)
PICTURE_DIR = "split-pictures"
#: the appendix-H layout covers the whole largest connected component up to this many nodes
#: (a BFS sample above it: coauthor-physics has 34,493 nodes)
PICTURE_MAX_NODES = 20_000
#: version of the ``split`` block of a record
SPLIT_RECORD_VERSION = 1


def split_record(data, params: dict[str, Any], settings: dict[str, Any], workdir: str | None) -> dict[str, Any]:
    """The ``split`` block of a job's record: what ``gs-bench report`` shows of the job's split,
    so that the report never reloads the data or recomputes the split (issue 20).

    * ``statistics``: the appendix-A numbers of the split's ID and OOD nodes
      (:func:`gs_splits.split_statistics`, ``SplitStatistics.to_dict(groups=("ID", "OOD"))``:
      class balance, degree histogram, property histogram, graph distances) and every part's
      size; a few kB.
    * ``picture``: the appendix-H layout of the graph (:func:`gs_splits.plot.graph_picture`,
      the whole largest connected component) is tens of kB, the same for every job of the
      split, so it is written once per split to ``<run folder>/split-pictures/<name>.json``
      (atomically; a job finding it there skips the layout) and the record names that file.
      ``None`` when the executor gave no run folder or it cannot be written (logged; the job
      still succeeds).
    """
    from gs_bench.store import atomic_write_text
    from gs_splits import Split, split_statistics
    from gs_splits.plot import graph_picture

    parts = ("in_train", "in_valid", "in_test", "out_valid", "out_test")
    masks = {k: getattr(data, f"{k}_mask").numpy() for k in parts}
    sigma = data.split_sigma.numpy() if "split_sigma" in data else None
    split = Split(masks=masks, sigma=sigma, metadata={"strategy": params["strategy"]})
    ei = data.edge_index.numpy()
    labels = data.y.numpy()
    source = settings.get("split_source", "seeded")
    stats = split_statistics(split, ei, labels, seed=0)
    picture = None
    if workdir:
        from gs_data import fingerprint

        fp = fingerprint({"edge_index": ei, "ood": masks["out_valid"] | masks["out_test"],
                          "max_nodes": PICTURE_MAX_NODES}, length=16)
        name = f"{params['dataset']}_{params['strategy']}_{source}_{fp}.json".replace("/", "_")
        path = Path(workdir) / PICTURE_DIR / name
        picture = f"{PICTURE_DIR}/{name}"
        if not path.is_file():
            n = int(data.num_nodes)
            pic = graph_picture(split, ei, max_nodes=min(max(3000, n), PICTURE_MAX_NODES), iterations=30)
            try:
                atomic_write_text(path, json.dumps(pic.to_dict()))
            except OSError as exc:  # e.g. a remote worker without the run folder: keep the job
                log.warning("could not write the split picture %s (%s); the report will leave it out", path, exc)
                picture = None
    return {
        "version": SPLIT_RECORD_VERSION,
        "dataset": params["dataset"],
        "strategy": params["strategy"],
        "ratio": params["ratio"],
        "source": source,
        "num_nodes": int(data.num_nodes),
        "statistics": stats.to_dict(groups=("ID", "OOD")),
        "picture": picture,
    }


def _ood_auroc(rec: dict[str, Any], method: str) -> float:
    """The OOD-detection AUROC of a record by the authors' measure: the knowledge
    uncertainty (mutual information) for single GPN / NatPN (records made before gs-algos
    scored them that way hold it as ``ood_auroc_knowledge``), the method's own score
    otherwise."""
    m = rec["metrics"]
    if _algo_name(method) in ("gpn", "natpn") and "ood_auroc_knowledge" in m:
        return m["ood_auroc_knowledge"]
    return m["ood_auroc"]


#: settings that change how many runs there are, not how a member trains
_RUN_COUNT_SETTINGS = ("ensemble_runs", "posterior_runs", "robustness_runs",
                       "skip_missing_datasets", "share_members",
                       # only DANN / CORAL / Mixup / EERM use them, never a shared member
                       "robustness_variant", "robustness_framework", "domain_scope")


def _member_cache(job: dict[str, Any], preset: str):
    """The run's shared-member cache (``<out>/members``), or ``None`` when the executor
    gave no work folder or ``share_members`` is off. The tag holds the data, split, preset,
    settings and package versions: everything a member depends on besides its seed and
    training configuration (:meth:`gs_algos.node_methods.MemberCache.key`)."""
    import json

    from gs_algos.node_methods import MemberCache

    settings = job["settings"]
    if not job.get("workdir") or not settings.get("share_members", True):
        return None
    import gs_algos
    import gs_data
    import gs_models
    import gs_splits

    params = {k: v for k, v in job["params"].items() if k != "method"}
    tag = json.dumps({
        "suite": job.get("suite"), "params": params, "preset": preset,
        "settings": {k: v for k, v in settings.items() if k not in _RUN_COUNT_SETTINGS},
        "data": dataset_fingerprint(params["dataset"], settings.get("root")),
        "versions": [m.__version__ for m in (gs_splits, gs_data, gs_models, gs_algos)],
    }, sort_keys=True, default=str)
    return MemberCache(Path(job["workdir"]) / "members", tag)


#: the paper's shifts in its tables' order; registered strategies follow them
_SHIFT_ORDER = ("popularity", "locality", "density", "random")
#: rows of the robustness tables (paper Tables 9-15) and of the detection tables (16-22)
_ROBUSTNESS_ROWS = ("erm", "mixup", "eerm", "dann", "coral", "de", "erm+mod")


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
    methods = [m for m in method_names() if any(k[2] in (m,) or _canonical_method(k[2]) == m for k in groups)]
    shifts = [s for s in _SHIFT_ORDER if any(k[3] == s for k in groups)]
    shifts += sorted({k[3] for k in groups} - set(shifts))  # registered strategies
    for ratio in ratios:
        for ds in datasets:
            rows = []
            for meth in methods:
                row = [{"erm": "ERM"}.get(meth, method_label(meth))]
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
                if present and meth in _ROBUSTNESS_ROWS:
                    rows.append(row)
            if rows:
                cols = ["method"] + [f"{sh} {part}" for sh in shifts for part in ("ID", "OOD")]
                out.append(Table(
                    f"OOD robustness on {ds} (ID:OOD {ratio}): accuracy (%), mean ± std over seeds (paper Tables 9-15 layout)",
                    cols, rows,
                    note=("Paper values (Tables 9-10) beside ours where the paper has the same setting."
                          if has_paper_values(rows) else
                          f"No paper value in this table: the paper reports no {ds} at ID:OOD {ratio} "
                          "(its Tables 9-10 hold the 50:50 splits of its seven datasets)."),
                ))
            rows = []
            for meth in methods:
                row = [("SE" if meth == "erm" else "SE + mod" if meth == "erm+mod" else method_label(meth))]
                present = False
                pub_name = _published_name(meth)
                for sh in shifts:
                    recs = groups.get((ds, ratio, meth, sh), [])
                    present |= bool(recs)
                    vals = [_ood_auroc(r, meth) for r in recs]
                    cell = fmt_mean_std(vals)
                    if ratio == "50:50":
                        cell += _pub_cell(ds, sh, pub_name, "ood_auroc", mean_std(vals)[0])
                    row.append(cell)
                if present and meth not in ROBUSTNESS_METHODS:
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
            for metric, pub_method, fmt in (("drop", "erm", "{:+.2f} %"), ("ood_auroc", "se", "{:.2f}")):
                for sh in shifts:
                    vals = [r["metrics"][metric] for r in groups.get((ds, ratio, "erm", sh), [])]
                    m, _, n = mean_std(vals)
                    cell = f"{fmt.format(m * 100)} (n={n})" if n else "—"
                    pub = published("structural-shifts", ds, ratio, sh, pub_method, metric)
                    if n and pub is not None:
                        cell += f" (paper {pub[0]:.2f}, Δ {m * 100 - pub[0]:+.2f}; {pub[1]})"
                    row.append(cell)
            rows.append(row)
        if any(any(c != "—" for c in r[1:]) for r in rows):
            out.append(Table(
                f"ERM accuracy drop ID→OOD and SE OOD-detection AUROC (ID:OOD {ratio}; paper Table 1 layout)",
                ["dataset", *[f"drop {s}" for s in shifts], *[f"AUROC {s}" for s in shifts]], rows,
            ))
    out += summary_tables(records)
    splits = split_table(records)
    if splits is not None:
        out.append(splits)
    off = off_cells(records)
    if off:
        out.append(Table(
            f"Cells more than {OFF_THRESHOLD:g} points from the paper ({len(off)} of {len(paper_cells(records))} cells with a paper value)",
            ["dataset", "shift", "method", "metric", "n", "ours", "paper", "Δ"],
            [[c["dataset"], c["shift"], c["method"], c["metric"], str(c["n"]), f"{c['ours']:.2f}",
              f"{c['paper']:.2f}", f"{c['delta']:+.2f}"] for c in off],
            note="The gs-bench README gives one sentence of explanation per cell of the committed ci run.",
        ))
    return out


#: a cell further than this (in points) from the paper is listed by :func:`off_cells`
OFF_THRESHOLD = 5.0


def paper_cells(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every 50:50 cell of Tables 9-10 (ID / OOD accuracy) and 16-17 (OOD AUROC) that the
    records fill and the paper reports: ``{dataset, shift, method, metric, n, ours, paper,
    delta}`` in percent (``ours`` = mean over the cell's runs), in report order."""
    groups = group_records(records, ("dataset", "ratio", "method", "strategy"))
    cells = []
    for (ds, ratio, meth, sh), recs in sorted(
        groups.items(), key=lambda kv: (kv[0][0], _SHIFT_ORDER.index(kv[0][3]) if kv[0][3] in _SHIFT_ORDER else 9, kv[0][2])
    ):
        if ratio != "50:50":
            continue
        canon = _canonical_method(meth)
        wanted = []
        if canon in _ROBUSTNESS_ROWS:
            wanted += [(metric, canon, [r["metrics"][metric] for r in recs]) for metric in ("id_acc", "ood_acc")]
        if canon not in ROBUSTNESS_METHODS:
            pub_name = _published_name(canon)
            wanted.append(("ood_auroc", pub_name, [_ood_auroc(r, canon) for r in recs]))
        for metric, pub_name, vals in wanted:
            pub = published("structural-shifts", ds, sh, pub_name, metric)
            m, _, n = mean_std(vals)
            if pub is None or not n or np.isnan(m):
                continue
            cells.append({"dataset": ds, "shift": sh, "method": pub_name, "metric": metric, "n": n,
                          "ours": m * 100, "paper": pub[0], "delta": m * 100 - pub[0]})
    return cells


def off_cells(records: Sequence[dict[str, Any]], threshold: float = OFF_THRESHOLD) -> list[dict[str, Any]]:
    """The cells of :func:`paper_cells` more than ``threshold`` points from the paper."""
    return [c for c in paper_cells(records) if abs(c["delta"]) > threshold]


def paragraphs(records: Sequence[dict[str, Any]]) -> list[str]:
    """The "protocol" paragraph of the report, generated from the jobs' settings and the
    gs-algos / gs-models configs they resolve to (one paragraph per distinct setting)."""
    from gs_algos import TrainConfig
    from gs_models import preset as model_config

    seen: dict[str, dict[str, Any]] = {}
    counts: dict[tuple, set] = {}
    for r in records:
        st = r["job"]["settings"]
        key = repr(sorted((k, str(v)) for k, v in st.items()))
        seen.setdefault(key, st)
        counts.setdefault((key, _canonical_method(r["job"]["params"]["method"])), set()).add(
            tuple(r.get("metrics", {}).get("member_seeds", [r["job"]["seed"]]))
        )
    out = []
    for key, st in seen.items():
        protocol = st.get("protocol", "authors")
        changes = {k: st[k] for k in ("lr", "weight_decay", "max_epochs", "patience") if k in st}
        cfg = TrainConfig.structural_shifts(protocol, **changes)
        stop = "no early stopping" if cfg.patience is None else f"early stopping after {cfg.patience} epochs without improvement"
        rule = "lowest" if not cfg.higher_is_better else "highest"
        base = model_config(model_preset("erm", protocol))
        order = " → ".join({"conv-act-norm": ["conv", base.activation.upper(), f"{base.norm} norm", f"dropout {base.dropout}"],
                            "conv-norm-act": ["conv", f"{base.norm} norm", base.activation.upper(), f"dropout {base.dropout}"]}[base.layer_order])
        runs_txt = []
        for (k, meth), seeds in sorted(counts.items()):
            if k == key:
                members = sorted({s for t in seeds for s in t})
                runs_txt.append(f"{method_label(meth)} {len(seeds)} run(s) × {len(next(iter(seeds)))} member(s), seeds {members[0]}–{members[-1]}")
        source = st.get("split_source", "seeded")
        split_txt = ("the authors' published masks (yandex-research/structural-graph-shifts, `datasets/<name>/splits/<shift>.pth`)"
                     if source == "authors" else
                     "the authors' published masks at 50:50, gs-splits with split seed 0 at the other ratios"
                     if source == "authors-where-published" else "gs-splits, split seed 0 (ties at the ID/OOD boundary broken by the seed, so a split may differ from the authors' files)")
        robust = sorted({m for (k, m) in counts if k == key and m in ROBUSTNESS_METHODS})
        robust_txt = ""
        if robust:
            variant = st.get("robustness_variant", DEFAULT_ROBUSTNESS_VARIANT)
            robust_txt = (
                f" {', '.join(method_label(m) for m in robust)}: "
                + ("the GOOD benchmark's formulations (gs_algos variant 'good'; the paper trained them in GOOD's framework)"
                   if variant == "good" else "our earlier formulations (gs_algos variant 'ours-v1')")
                + f", {int(st.get('domains', 10))} property domains cut over "
                + ("the training nodes" if domain_scope(st) == "in_train" else "all nodes")
                + ("; trained in GOOD's framework (GCN 3 × 300, ReLU, dropout 0.5; Adam lr 1e-3, "
                   "no weight decay, 100 epochs, EERM lr 5e-3 and 50 epochs; best Valid-In accuracy: "
                   "gs_algos TrainConfig.good_cora)" if st.get("robustness_framework", "paper") == "good"
                   else "; trained as the other methods") + "."
            )
        out.append(
            f"**Protocol ({protocol}).** Adam, learning rate {cfg.lr:g}, weight decay {cfg.weight_decay:g}, "
            f"full batch, {cfg.max_epochs} epochs, {stop}; the weights of the epoch with the {rule} "
            f"Valid-In {cfg.metric} are restored (gs_algos TrainConfig.structural_shifts({protocol!r})). "
            f"Base model: {base.num_layers} {base.model.upper()} layers × {base.hidden_channels}, layer order {order}, linear head. "
            f"Splits: {split_txt}. Runs: {'; '.join(runs_txt)}.{robust_txt}"
        )
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


def _split_blocks(records: Sequence[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any] | None]:
    """Per (dataset, shift) of the records, in report order: the ``split`` block of the first
    record that has one (:func:`split_record`), else ``None`` (records written before jobs
    stored their split statistics)."""
    seen: dict[tuple[str, str], dict[str, Any] | None] = {}
    for r in records:
        p = r["job"]["params"]
        key = (p["dataset"], p["strategy"])
        block = r.get("metrics", {}).get("split")
        if seen.get(key) is None:
            seen[key] = block if isinstance(block, dict) and "statistics" in block else None
    return dict(sorted(seen.items()))


def split_figures(records: Sequence[dict[str, Any]], report_dir: Path) -> list[Figure]:
    """Per (dataset, shift) of the records: the split as the jobs made it, as the appendix-A
    distributions (class balance, degree, property, graph distance; ID vs OOD) and the
    appendix-H picture of the largest connected component (ID blue, OOD red).

    Drawn from what the jobs stored (:func:`split_record`): the statistics in the records and
    the layout in ``<run folder>/split-pictures/`` (``report_dir.parent``); nothing is loaded or
    split here, so the report works without the data. What the records do not have is left
    out and named by :func:`split_figure_notes`.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from gs_splits import SplitStatistics
    from gs_splits.plot import draw_graph_picture, plot_statistics

    figs: list[Figure] = []
    for (dataset, strategy), block in _split_blocks(records).items():
        if block is None:
            continue
        try:
            stats = SplitStatistics.from_dict(block["statistics"])
        except ValueError as exc:
            log.warning("split figures of %s / %s skipped: %s", dataset, strategy, exc)
            continue
        ratio, source = block.get("ratio", "?"), block.get("source", "seeded")
        synth = " (synthetic)" if "synthetic" in dataset else ""
        base = f"split_{dataset}_{strategy}".replace("/", "_")
        fig = plot_statistics(None, stats=stats)
        fig.suptitle(f"{dataset}{synth}, {strategy} split ({ratio}): ID vs OOD")
        fig.savefig(report_dir / f"{base}_distributions.png", dpi=90)
        plt.close(fig)
        figs.append(Figure(f"{base}_distributions.png",
                           f"{dataset}{synth}, {strategy} split: ID vs OOD class balance, degree, "
                           "property and graph-distance distributions (appendix A)."))
        picture = _read_picture(report_dir.parent, block.get("picture"))
        if picture is None:
            continue
        fig = draw_graph_picture(picture)
        fig.savefig(report_dir / f"{base}_graph.png", dpi=90)
        plt.close(fig)
        sizes = stats.sizes
        figs.append(Figure(f"{base}_graph.png",
                           f"{dataset}{synth}, {strategy} split ({source} masks) "
                           f"on its whole largest connected component: ID nodes blue, OOD red (appendix H); "
                           f"the graph has {sizes.get('ID', '?')} ID and {sizes.get('OOD', '?')} OOD nodes."))
    return figs


def _read_picture(run_dir: Path, name: Any):
    """The stored appendix-H layout ``run_dir/name`` (a path under ``split-pictures/``), or
    ``None`` when the record names none or the file is missing or unreadable (logged)."""
    from gs_splits.plot import GraphPicture

    if not isinstance(name, str) or not name.startswith(f"{PICTURE_DIR}/") or ".." in Path(name).parts:
        return None
    path = run_dir / name
    try:
        return GraphPicture.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        log.info("split picture %s is not in the run folder; the appendix-H figure is left out", path)
    except (OSError, ValueError, KeyError) as exc:
        log.warning("split picture %s unreadable (%s); the appendix-H figure is left out", path, exc)
    return None


def notes(records: Sequence[dict[str, Any]], run_dir: Path) -> list[str]:
    """Report notes after the suite's figures: :func:`split_figure_notes`."""
    return split_figure_notes(records, run_dir)


def split_figure_notes(records: Sequence[dict[str, Any]], run_dir: Path) -> list[str]:
    """Say which split figures the report leaves out and why (records written before the jobs
    stored their split statistics, or a run folder without its ``split-pictures/``)."""
    blocks = _split_blocks(records)
    old = [f"{d} / {s}" for (d, s), b in blocks.items() if b is None]
    no_pic = [f"{d} / {s}" for (d, s), b in blocks.items()
              if b is not None and _read_picture(run_dir, b.get("picture")) is None]
    notes = []
    if old:
        notes.append(
            f"Split figures not drawn for {', '.join(old)}: these records were written before the jobs "
            "stored their split statistics, and the report does not reload data or recompute splits. "
            "The split sizes table comes from the records; re-run the jobs (into a new folder) to "
            "get the figures, or draw the split with `gs-splits report`."
        )
    if no_pic:
        notes.append(
            f"Split on the graph (appendix H) not drawn for {', '.join(no_pic)}: its layout is not in "
            f"{PICTURE_DIR}/ of this run folder (copy that folder with the records to keep the pictures)."
        )
    return notes


def split_table(records: Sequence[dict[str, Any]]) -> Table | None:
    """The split each (dataset, shift, ratio, mask source) of the records used: nodes per part,
    read from the records (``metrics["sizes"]``, stored by every job)."""
    rows: dict[tuple, list[str]] = {}
    for r in records:
        if r.get("status") != "ok" or not isinstance(r.get("metrics", {}).get("sizes"), dict):
            continue
        p, sizes = r["job"]["params"], r["metrics"]["sizes"]
        source = r["metrics"].get("split_source") or r["job"].get("settings", {}).get("split_source", "seeded")
        key = (p["dataset"], _SHIFT_ORDER.index(p["strategy"]) if p["strategy"] in _SHIFT_ORDER else 9,
               p["strategy"], p["ratio"], source)
        rows.setdefault(key, [p["dataset"], p["strategy"], p["ratio"], source,
                              *(str(sizes.get(k, "—")) for k in ("in_train", "in_valid", "in_test", "out_valid", "out_test"))])
    if not rows:
        return None
    return Table(
        "Splits used by the jobs: nodes per part (from the job records)",
        ["dataset", "shift", "ID:OOD", "masks", "Train", "Valid-In", "Test-In", "Valid-Out", "Test-Out"],
        [rows[k] for k in sorted(rows)],
        note="masks: 'seeded' = gs-splits with split seed 0, 'authors' = the authors' published files.",
    )


# -- Tables 2 / 5 / 7 (average ranks) and Table 3 (win / tie / loss of "+mod") --------------
#: rows of the paper's rank tables: accuracy (left) and OOD detection (right)
RANK_ROBUST = ("erm", "mixup", "eerm", "dann", "coral", "de")
RANK_DETECT = ("se", "gpn", "natpn", "de", "gpe", "natpe")
#: significance level of the win / tie / loss test (ours: the paper does not name its test)
MOD_ALPHA = 0.05


def _cell_values(groups, ds: str, ratio: str, method: str, shift: str, metric: str) -> list[float]:
    recs = groups.get((ds, ratio, method, shift), [])
    if metric == "ood_auroc":
        return [_ood_auroc(r, method) for r in recs]
    return [r["metrics"][metric] for r in recs]


def _ranks(values: dict[str, float]) -> dict[str, float]:
    """Rank 1 = highest value; ties share their average rank."""
    from scipy.stats import rankdata

    names = list(values)
    ranks = rankdata([-values[n] for n in names], method="average")
    return dict(zip(names, (float(r) for r in ranks), strict=True))


def average_ranks(records: Sequence[dict[str, Any]], ratio: str) -> tuple[dict, dict, list[str]]:
    """Tables 2 / 5 / 7 for one ratio over the datasets the records cover completely:
    ``(accuracy ranks {method: [6 values]}, detection ranks {method: [3 values]}, datasets)``.
    Per dataset and column the methods are ranked by their mean (1 = best, ties averaged),
    then the ranks are averaged over the datasets. A dataset enters a column only if every
    method of that side has records there."""
    groups = group_records(records, ("dataset", "ratio", "method", "strategy"))
    datasets = sorted({k[0] for k in groups if k[1] == ratio})
    shifts = ("popularity", "locality", "density")
    acc: dict[str, list[list[float]]] = {m: [[] for _ in range(6)] for m in RANK_ROBUST}
    det: dict[str, list[list[float]]] = {m: [[] for _ in range(3)] for m in RANK_DETECT}
    used: set[str] = set()
    for ds in datasets:
        for si, sh in enumerate(shifts):
            for pi, metric in enumerate(("id_acc", "ood_acc")):
                vals = {m: mean_std(_cell_values(groups, ds, ratio, m, sh, metric)) for m in RANK_ROBUST}
                if all(v[2] for v in vals.values()):
                    used.add(ds)
                    for m, r in _ranks({m: v[0] for m, v in vals.items()}).items():
                        acc[m][2 * si + pi].append(r)
            vals = {m: mean_std(_cell_values(groups, ds, ratio, "erm" if m == "se" else m, sh, "ood_auroc"))
                    for m in RANK_DETECT}
            if all(v[2] for v in vals.values()):
                used.add(ds)
                for m, r in _ranks({m: v[0] for m, v in vals.items()}).items():
                    det[m][si].append(r)
    mean = lambda xs: float(np.mean(xs)) if xs else float("nan")  # noqa: E731
    return ({m: [mean(c) for c in cols] for m, cols in acc.items()},
            {m: [mean(c) for c in cols] for m, cols in det.items()}, sorted(used))


def mod_counts(records: Sequence[dict[str, Any]], ratio: str = "50:50",
               alpha: float = MOD_ALPHA) -> tuple[dict[str, list[tuple[int, int, int]]], list[str]]:
    """Table 3: win / tie / loss of the "+mod" architecture against the base one over the
    datasets, ``{"erm+mod": [6 x (w, t, l)], "se+mod": [3 x (w, t, l)]}``, and the datasets.

    A *win* (loss): the +mod runs' mean is higher (lower) and Welch's t-test on the two sets
    of runs gives p < ``alpha``; otherwise a tie. The paper counts "statistically
    insignificant" differences as ties without naming its test; Welch's test at 0.05 is ours.
    With fewer than 2 runs on a side no test can be made: the cell is a tie unless the means
    differ (then a win / loss by the means alone)."""
    from scipy.stats import ttest_ind

    groups = group_records(records, ("dataset", "ratio", "method", "strategy"))
    datasets = sorted({k[0] for k in groups if k[1] == ratio and _canonical_method(k[2]) == "erm+mod"})
    shifts = ("popularity", "locality", "density")
    out = {"erm+mod": [[0, 0, 0] for _ in range(6)], "se+mod": [[0, 0, 0] for _ in range(3)]}

    def verdict(mod: list[float], base: list[float]) -> int | None:
        if not mod or not base:
            return None
        diff = float(np.mean(mod) - np.mean(base))
        if len(mod) >= 2 and len(base) >= 2:
            p = float(ttest_ind(mod, base, equal_var=False).pvalue)
            if not np.isfinite(p) or p >= alpha:
                return 1
        elif diff == 0:
            return 1
        return 0 if diff > 0 else 2

    used = set()
    for ds in datasets:
        for si, sh in enumerate(shifts):
            for pi, metric in enumerate(("id_acc", "ood_acc")):
                v = verdict(_cell_values(groups, ds, ratio, "erm+mod", sh, metric),
                            _cell_values(groups, ds, ratio, "erm", sh, metric))
                if v is not None:
                    out["erm+mod"][2 * si + pi][v] += 1
                    used.add(ds)
            v = verdict(_cell_values(groups, ds, ratio, "erm+mod", sh, "ood_auroc"),
                        _cell_values(groups, ds, ratio, "erm", sh, "ood_auroc"))
            if v is not None:
                out["se+mod"][si][v] += 1
                used.add(ds)
    return {k: [tuple(c) for c in v] for k, v in out.items()}, sorted(used)


def summary_tables(records: Sequence[dict[str, Any]]) -> list[Table]:
    """The paper's Tables 2 / 5 / 7 (average ranks, per ratio present) and 3 (win / tie /
    loss of +mod at 50:50), ours beside the paper's, labelled with the datasets they cover."""
    from gs_bench.published import SS_PAPER_DATASETS, structural_mod_counts, structural_ranks

    out = []
    ratios = sorted({r["job"]["params"].get("ratio") for r in records if r.get("status") == "ok"} - {None})
    for ratio in ratios:
        pub = structural_ranks(ratio)
        acc, det, used = average_ranks(records, ratio)
        if not used:
            continue
        rows = []
        for m in RANK_ROBUST:
            if all(np.isnan(acc[m])):
                continue
            rows.append([method_label(m)] + [
                "—" if np.isnan(v) else f"{v:.1f}" + (f" ({pub[1][m][i]:.1f})" if pub else "")
                for i, v in enumerate(acc[m])])
        for m in RANK_DETECT:
            if all(np.isnan(det[m])):
                continue
            label = {"se": "SE"}.get(m, method_label(m))
            rows.append([f"{label} (AUROC)"] + [
                "—" if np.isnan(v) else f"{v:.1f}" + (f" ({pub[2][m][i]:.1f})" if pub else "")
                for i, v in enumerate(det[m])] + ["", "", ""])
        if rows:
            where = pub[0] if pub else "no paper table"
            out.append(Table(
                f"Average ranks over {len(used)} of the paper's {SS_PAPER_DATASETS} datasets "
                f"({', '.join(used)}), ID:OOD {ratio} (paper {where}, its value in brackets; lower is better)",
                ["method", "pop ID", "pop OOD", "loc ID", "loc OOD", "den ID", "den OOD"], rows,
                note="Accuracy rows rank ERM, Mixup, EERM, DANN, CORAL and DE per dataset and column; "
                     "AUROC rows (columns popularity, locality, density) rank SE, GPN, NatPN, DE, GPE "
                     "and NatPE. The paper averages over its 7 datasets, so a rank over fewer datasets "
                     "is a partial view.",
            ))
    counts, used = mod_counts(records)
    if used:
        pub = structural_mod_counts()
        fmt = lambda c: "/".join(str(x) for x in c)  # noqa: E731
        rows = [["ERM + mod (accuracy)"] + [f"{fmt(c)} ({fmt(p)})" for c, p in zip(counts["erm+mod"], pub["erm+mod"], strict=True)],
                ["SE + mod (AUROC)"] + [f"{fmt(c)} ({fmt(p)})" for c, p in zip(counts["se+mod"], pub["se+mod"], strict=True)] + ["", "", ""]]
        out.append(Table(
            f"+mod architecture against the base one: win/tie/loss over {len(used)} of the paper's "
            f"{SS_PAPER_DATASETS} datasets ({', '.join(used)}), 50:50 (paper Table 3 in brackets)",
            ["row", "pop ID", "pop OOD", "loc ID", "loc OOD", "den ID", "den OOD"], rows,
            note=f"Win / loss: Welch's t-test over the runs, p < {MOD_ALPHA:g} (ours: the paper does not name "
                 "its test); otherwise a tie. SE + mod columns: popularity, locality, density.",
        ))
    return out
