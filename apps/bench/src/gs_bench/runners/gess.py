"""Runner of the ``gess`` suite (GeSS, section 4, table 3, appendices C-F).

One job = (dataset, backbone, algorithm, seed). The algorithm fixes the information level
(GeSS section 4.1): ERM, VREx, GroupDRO, Mixup, DIR, LRI (and our IRM) at No-Info; DANN
and DeepCoral (``coral``) at O-Feature, with the unlabeled target pool; ``tl-<N>`` at
Par-Label, ERM pre-training then full fine-tuning on N labelled OOD samples (the paper's
TL-100 / TL-500 / TL-1000 are three algorithms, three report rows). Every epoch evaluates
iid_val, iid_test, ood_val and ood_test; two selection tracks are kept (best on ID
validation and best on OOD validation, appendix E) and both are reported, the OOD-selected one
first: it is GeSS's selection (section 4.1, appendix F) and the one the findings use. Records
also carry trivial baselines and learning curves; a finding is judged only where ERM beats the
baselines (:func:`learned`).

Datasets (one per GeSS shift case, table 2; all built by gs-data, whose geometric registry
:data:`gs_data.geometric.GEOMETRIC_DATASETS` states each one's task, metric and shift):

* ``track-pileup-pu50`` / ``-pu90``, ``track-signal-tau3mu`` / ``-zp20`` / ``-zp10``: Track,
  simulated with PYTHIA 8 + ACTS (``gs-data[track]``) or read from the event cache; binary,
  accuracy; point features all ones (appendix C.2). Sizes: setting ``track_sizes``.
* ``qmof-hse06`` / ``qmof-hse06_10hf``: the QMOF fidelity shift (``qmof_root``: ``qmof.csv`` and
  ``relaxed_structures/``); regression, MAE.
* ``molecular-fidelity`` / ``molecular-fidelity-hse06_10hf``: the offline stand-in of the
  fidelity shift shipped with gs-data (HOMO-LUMO gaps of small molecules at the four levels);
  regression, MAE.
* ``drugood3d-assay`` / ``-scaffold`` / ``-size``: DrugOOD's LBAP files with GeSS conformers
  (``drugood_root``); binary, ROC-AUC.
* ``moleculeace-assay`` / ``-scaffold`` / ``-size``: the DrugOOD-style stand-in built from
  MoleculeACE's ChEMBL data (``targets`` restricts it to a few ChEMBL targets).

Algorithm hyperparameters: the GeSS authors' tuned values (their released YAML configs,
Graph-COM/GESS ``configs/core_config``, table :data:`GESS_HPARAMS`) where they exist; the
stand-ins use the values of the case they stand in for (MoleculeACE: DrugOOD-3D's; molecular
fidelity: QMOF's); anything else is the gs-algos default, labelled ``ours`` in the record.
``[settings.hparams.<algorithm>]`` in the suite file overrides either.

Validation before running (:func:`problems`): an algorithm that does not apply to the task
(DIR on regression), a Par-Label size larger than the pool, and missing data are reported
for every affected job before any job starts.
"""

from __future__ import annotations

import inspect
import logging
import os
import math
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gs_algos.names import builtin_method_names
from gs_bench.preflight import Problem
from gs_bench.report import Figure, Table, fmt_mean_std, group_records
from gs_bench.suites import SuiteConfig, SuiteConfigError, check_positive

log = logging.getLogger(__name__)

#: ``--methods`` filters the ``algorithm`` axis of this suite.
AXIS_ALIASES = {"method": "algorithm"}


def _registry() -> dict[str, Any]:
    """GeSS's shift cases and their stand-ins from gs-data's geometric registry
    (:data:`gs_data.geometric.GEOMETRIC_DATASETS`): task, metric, shift, kNN ``k`` and the
    GeSS config folder of every dataset of this suite are read there, not declared here."""
    from gs_data.geometric import GEOMETRIC_DATASETS

    return GEOMETRIC_DATASETS


#: The datasets of this suite: gs-data's geometric registry (name -> GeometricSpec).
DATASETS = _registry()
BACKBONES = {"egnn": "gess-egnn", "dgcnn": "gess-dgcnn", "pointtransformer": "gess-pointtransformer"}
#: Algorithms in the order of GeSS table 3 (``irm`` is ours, not among GeSS's 11): gs-algos'
#: graph-level methods (:data:`gs_algos.names.BUILTIN_METHODS`, kept in that order); ``tl-<N>``
#: is Par-Label fine-tuning with N labelled OOD samples (GeSS: 100, 500, 1000).
ALGORITHMS = tuple(builtin_method_names("graph"))


def algorithm_names() -> list[str]:
    """Algorithms the suite accepts besides ``tl-<N>``: :data:`ALGORITHMS` in GeSS's order,
    then every other graph-level method of gs-algos (e.g. one added with
    :func:`gs_algos.register_method`; read at call time, no second list)."""
    from gs_algos import available_methods

    return [*ALGORITHMS, *(m for m in available_methods("graph") if m not in ALGORITHMS)]
PAPER_TL = ("tl-100", "tl-500", "tl-1000")
LEVELS = ("no-info", "o-feature", "par-label")
_TL = re.compile(r"^tl-([1-9][0-9]*)$")
#: Algorithms whose method does not apply to a task, with the reason (checked before running).
INAPPLICABLE = {
    ("dir", "regression"): "DIR applies to classification only: its interventional risk "
    "combines sigmoid(spurious output) with the causal logits, and GeSS runs it on no "
    "regression case (the fidelity shift, table 3); exclude it in the suite file",
}

#: The GeSS authors' tuned hyperparameters (Graph-COM/GESS ``configs/core_config/<case>/
#: {No-Info,O-Feature}/<Algorithm>.yaml``: ``algo.coeff`` and ``algo.extra``), in gs-algos'
#: parameter names. DIR: causal_ratio 0.5, alpha 1e-4 and LRI's prior schedule are the same in
#: every config; Mixup's ``alpha`` is 0.1 everywhere.
_DIR = {"causal_ratio": 0.5, "alpha": 1e-4}
GESS_HPARAMS: dict[str, dict[str, dict[str, Any]]] = {
    "DrugOOD_3D/assay": {"vrex": {"penalty_weight": 1.0}, "groupdro": {"step_size": 1.0},
                         "lri": {"info_loss_coef": 0.01}, "mixup": {"prob": 0.75},
                         "dann": {"domain_weight": 1.0}, "coral": {"penalty_weight": 0.1}},
    "DrugOOD_3D/scaffold": {"vrex": {"penalty_weight": 0.001}, "groupdro": {"step_size": 0.1},
                            "lri": {"info_loss_coef": 0.1}, "mixup": {"prob": 0.5},
                            "dann": {"domain_weight": 0.001}, "coral": {"penalty_weight": 0.1}},
    "DrugOOD_3D/size": {"vrex": {"penalty_weight": 0.001}, "groupdro": {"step_size": 0.001},
                        "lri": {"info_loss_coef": 0.01}, "mixup": {"prob": 0.75},
                        "dann": {"domain_weight": 0.01}, "coral": {"penalty_weight": 0.1}},
    "QMOF/fidelity/hse06": {"vrex": {"penalty_weight": 0.001}, "groupdro": {"step_size": 0.01},
                            "dann": {"domain_weight": 0.001}, "coral": {"penalty_weight": 0.001}},
    "QMOF/fidelity/hse06_10hf": {"vrex": {"penalty_weight": 0.1}, "groupdro": {"step_size": 0.1},
                                 "dann": {"domain_weight": 0.001}, "coral": {"penalty_weight": 0.1}},
    "Track/pileup/PU50": {"vrex": {"penalty_weight": 0.001}, "groupdro": {"step_size": 0.01},
                          "lri": {"info_loss_coef": 1.0}, "mixup": {"prob": 0.75},
                          "dann": {"domain_weight": 0.001}, "coral": {"penalty_weight": 0.1}},
    "Track/pileup/PU90": {"vrex": {"penalty_weight": 0.001}, "groupdro": {"step_size": 0.01},
                          "lri": {"info_loss_coef": 0.1}, "mixup": {"prob": 0.25},
                          "dann": {"domain_weight": 0.1}, "coral": {"penalty_weight": 0.01}},
    "Track/signal/tau": {"vrex": {"penalty_weight": 1.0}, "groupdro": {"step_size": 0.1},
                         "lri": {"info_loss_coef": 0.001}, "mixup": {"prob": 0.25},
                         "dann": {"domain_weight": 5.0}, "coral": {"penalty_weight": 0.1}},
    "Track/signal/zp_20": {"vrex": {"penalty_weight": 1.0}, "groupdro": {"step_size": 1.0},
                           "lri": {"info_loss_coef": 0.001}, "mixup": {"prob": 0.25},
                           "dann": {"domain_weight": 5.0}, "coral": {"penalty_weight": 0.1}},
    "Track/signal/zp_10": {"vrex": {"penalty_weight": 0.001}, "groupdro": {"step_size": 0.01},
                           "lri": {"info_loss_coef": 0.1}, "mixup": {"prob": 0.5},
                           "dann": {"domain_weight": 5.0}, "coral": {"penalty_weight": 1.0}},
}
for _case in GESS_HPARAMS.values():
    if "mixup" in _case:
        _case["mixup"]["alpha"] = 0.1
    if "lri" in _case:  # every case GeSS runs LRI on, it runs DIR on too
        _case["dir"] = dict(_DIR)
del _case

#: Track sizes by name (``track_sizes``): gs-data's ``demo`` and GeSS table 4 (``paper``); ``ci``
#: is ours (about a thousand events per case; Par-Label pools of 160 / 500 events).
TRACK_SIZES: dict[str, dict[str, Any]] = {}


def _track_sizes(name: str, shift: str, target_pileup: int = 50):
    """Track sizes by name: gs-data's ``demo`` / ``ci`` / ``paper`` (GeSS table 4) or one of
    :data:`TRACK_SIZES`."""
    from gs_data.track import TrackPileupSizes, TrackSignalSizes

    if name in TRACK_SIZES:
        return TRACK_SIZES[name][shift]
    if name not in ("demo", "ci", "paper"):
        raise SuiteConfigError(f"track_sizes must be 'demo', 'ci' or 'paper', got {name!r}")
    if shift == "pileup":
        return getattr(TrackPileupSizes, name)(target_pileup)
    return getattr(TrackSignalSizes, name)()


@dataclass(frozen=True)
class Grid:
    """Grid axes of the suite (one job per combination and seed); checked by ``load_suite``."""

    dataset: list[str]
    backbone: list[str]
    algorithm: list[str]


@dataclass(frozen=True)
class Settings:
    """``[settings]`` of the suite, the one place its keys and types are declared (strict
    check in ``load_suite``).

    ``max_epochs``, ``batch_size`` and ``iterations_per_epoch`` default to GeSS table 8 per
    shift and level (100 epochs, batch 256; Track-Pileup 200 epochs, batch 128 at O-Feature
    and 75 fine-tuning epochs; 150 iterations per epoch at O-Feature); a value given here
    replaces them everywhere (quick profiles). ``domain_head``: ``"binary"`` (GeSS's
    source-vs-target discriminator for DANN, source-vs-target CORAL) or ``"subgroups"`` (one
    domain per source subgroup plus the target; ours). ``hparams``: per-algorithm keyword
    arguments of the gs-algos method, over GeSS's tuned values. ``par_label_pool``: labelled
    OOD pool of DrugOOD-3D / MoleculeACE (GeSS: 1000 from each of ood_val and ood_test =
    2000; the fidelity and Track pools follow GeSS table 4). ``share_pretraining``: the TL
    rows of a grid point share one ERM pre-training in ``<results>/members`` (default on).
    ``par_label_draw``: ``"gess"`` (half of N from the pool items removed from ood_val, half
    from those removed from ood_test, GeSS appendix C.1; DrugOOD-3D and MoleculeACE) or
    ``"uniform"`` (ours: N from the whole pool). ``track_batch_size``: the batch size of the
    Track jobs, over ``batch_size`` (ours, for small profiles: an event holds hundreds to
    thousands of hits, and a few hundred training events in batches of 64 give too few
    optimiser steps to learn in a few epochs). ``track_workers``: processes that simulate
    missing Track events (default: one per CPU core). ``fidelity_max_epochs``: the epochs of
    the fidelity-shift jobs (QMOF and its molecular stand-in), over ``max_epochs`` (ours, for
    small profiles: the stand-in's 135 training molecules make 3 steps per epoch in batches of
    64, and GeSS's 100 epochs cost about 0.4 s each there, against 25-70 s for a Track epoch).
    ``standardize_targets``: regression jobs train on targets standardised with the training
    part's mean and std, their outputs mapped back to eV (gs-algos
    :attr:`~gs_algos.TrainConfig.standardize_targets`, ours); ``None`` (default): on for the
    molecular stand-in, off for QMOF (GeSS's code trains on raw eV), see
    :func:`standardize_default`. ``norm_stats_graphs``: before every evaluation the batch
    norms' running statistics are recomputed under the current weights from up to this many
    training graphs (gs-algos :attr:`~gs_algos.TrainConfig.norm_stats_graphs`, "precise BN";
    ours, GeSS's code does not; 0 = off). Without it a run with few steps per epoch evaluates
    with statistics that trail the weights by an epoch or more, and GeSS's sum-pooled graph
    embeddings then put every graph in one class."""

    max_epochs: int | None = None
    batch_size: int | None = None
    iterations_per_epoch: int | None = None
    domain_head: str = "binary"
    hparams: dict | None = None
    targets: list[str] | None = None
    cache_dir: str | None = None
    conformer_workers: int = 1
    par_label_pool: int | None = None
    qmof_root: str | None = None
    drugood_root: str | None = None
    moleculeace_dir: str | None = None
    track_sizes: str = "demo"
    track_cache_dir: str | None = None
    track_seed: int = 0
    track_workers: int | None = None
    track_batch_size: int | None = None
    fidelity_max_epochs: int | None = None
    standardize_targets: bool | None = None
    norm_stats_graphs: int = 0
    share_pretraining: bool = True
    par_label_draw: str = "gess"

    def __post_init__(self) -> None:
        check_positive(self, "max_epochs", "batch_size", "iterations_per_epoch",
                       "conformer_workers", "par_label_pool", "track_workers", "track_batch_size",
                       "fidelity_max_epochs")
        if isinstance(self.norm_stats_graphs, bool) or not isinstance(self.norm_stats_graphs, int) \
                or self.norm_stats_graphs < 0:
            raise ValueError(f"norm_stats_graphs must be an integer >= 0 (0: off), got {self.norm_stats_graphs!r}")
        if self.domain_head not in ("binary", "subgroups"):
            raise ValueError(f"domain_head must be 'binary' or 'subgroups', got {self.domain_head!r}")
        if self.par_label_draw not in ("gess", "uniform"):
            raise ValueError(f"par_label_draw must be 'gess' (half of N from each of the pool's "
                             f"Val-OOD and Test-OOD parts) or 'uniform', got {self.par_label_draw!r}")
        if self.track_sizes not in ("demo", "ci", "paper", *TRACK_SIZES):
            raise ValueError(f"track_sizes must be 'demo', 'ci' or 'paper', got {self.track_sizes!r}")


# ---------------------------------------------------------------------------- algorithms
def tl_size(algorithm: str) -> int | None:
    """N of ``tl-<N>`` (Par-Label fine-tuning), ``None`` for other algorithms."""
    m = _TL.match(algorithm)
    return int(m.group(1)) if m else None


def level_of(algorithm: str) -> str:
    """GeSS information level of an algorithm (section 4.1)."""
    if tl_size(algorithm) is not None:
        return "par-label"
    return "o-feature" if algorithm in ("dann", "coral") else "no-info"


def _check_algorithm(a: str) -> None:
    if a == "finetune":
        raise SuiteConfigError("algorithm 'finetune' was replaced by tl-100, tl-500 and tl-1000 "
                               "(GeSS's three Par-Label rows; any tl-<N> is accepted)")
    if a not in algorithm_names() and tl_size(a) is None:
        raise SuiteConfigError(
            f"unknown algorithm {a!r}; accepted: {', '.join(algorithm_names())}, tl-<N> (e.g. "
            f"{', '.join(PAPER_TL)})"
        )


def _method_class(algorithm: str):
    from gs_algos import METHODS

    return METHODS["erm" if tl_size(algorithm) is not None else algorithm]


def method_params(name: str, algorithm: str, settings: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Keyword arguments of the gs-algos method of ``algorithm`` on dataset ``name`` and
    their provenance: ``"gess"`` (the authors' tuned values), ``"ours"`` (gs-algos
    defaults, no GeSS value for this case) or ``"suite"`` (``[settings.hparams]``)."""
    case = DATASETS[name]
    base: dict[str, Any] = {}
    # GeSS's formulations of the methods whose released code differs from ours
    if algorithm == "dann":
        base.update(variant="gess", source_domains=settings.get("domain_head", "binary") == "subgroups")
    elif algorithm == "coral":
        base.update(source_domains=settings.get("domain_head", "binary") == "subgroups")
    elif algorithm in ("vrex", "groupdro"):
        base.update(variant="gess")
    tuned = dict(GESS_HPARAMS.get(case.gess_config, {}).get(algorithm, {}))
    source = "gess" if tuned or algorithm in ("erm",) or tl_size(algorithm) is not None else "ours"
    base.update(tuned)
    override = (settings.get("hparams") or {}).get(algorithm)
    if override:
        base.update(override)
        source = "suite"
    return base, source


def _check_hparams(hparams: Any) -> None:
    if hparams is None:
        return
    for algo, kwargs in hparams.items():
        _check_algorithm(algo)
        if not isinstance(kwargs, dict):
            raise SuiteConfigError(f"settings.hparams.{algo} must be a table of parameters, got {kwargs!r}")
        accepted = [p for p in inspect.signature(_method_class(algo).__init__).parameters if p != "self"]
        for key in kwargs:
            if key not in accepted:
                raise SuiteConfigError(
                    f"settings.hparams.{algo}.{key}: not a parameter of {_method_class(algo).__name__}; "
                    f"accepted: {', '.join(accepted) or 'none'}"
                )


# ---------------------------------------------------------------------------- validation
def validate(config: SuiteConfig) -> dict[str, str]:
    """Names and settings (construction errors raise); returns a fingerprint per dataset.

    Data availability and per-job applicability are reported by :func:`problems`.
    """
    for axis in ("dataset", "backbone", "algorithm"):
        if axis not in config.grid:
            raise SuiteConfigError(f"{config.source}: the gess suite needs a grid axis {axis!r}")
    for d in config.grid["dataset"]:
        if d not in DATASETS:
            old = {"track-pileup": "track-pileup-pu50 / -pu90",
                   "track-signal": "track-signal-tau3mu / -zp20 / -zp10"}.get(d)
            hint = f" (now one dataset per shift case: {old})" if old else ""
            raise SuiteConfigError(f"unknown GeSS dataset {d!r}{hint}; accepted: {', '.join(DATASETS)}")
    for b in config.grid["backbone"]:
        if b not in BACKBONES:
            raise SuiteConfigError(f"unknown backbone {b!r}; accepted: {', '.join(BACKBONES)}")
    for a in config.grid["algorithm"]:
        _check_algorithm(a)
    _check_hparams(config.settings.get("hparams"))
    return {d: _fingerprint(d, config.settings) for d in config.grid["dataset"]}


def _fingerprint(name: str, s: dict[str, Any]) -> str:
    """What identifies the data of dataset ``name`` under settings ``s``: gs-data's version,
    the Track sizes and seed, the MoleculeACE targets, the data file's name and size."""
    from gs_data.__about__ import __version__

    case = DATASETS[name]
    extra = ""
    if case.family == "track":
        extra = f" track {s.get('track_sizes', 'demo')} seed {s.get('track_seed', 0)}"
    elif case.family == "moleculeace" and s.get("targets"):
        extra = " targets " + ",".join(s["targets"])
    path = _data_file(name, s)
    if path is not None and path.is_file():
        extra += f" {path.name}:{path.stat().st_size}"
    return f"gs-data {__version__}{extra}"


def _data_file(name: str, settings: dict[str, Any]) -> Path | None:
    from gs_data.geometric import data_file

    case = DATASETS[name]
    root = settings.get("qmof_root") if case.family == "qmof" else settings.get("drugood_root")
    return data_file(case, root)


def _track_requests(name: str, settings: dict[str, Any]) -> list[tuple[str, int, int]]:
    from gs_data.track import pileup_requests, signal_requests

    case = DATASETS[name]
    if case.shift == "pileup":
        pu = int(case.case[2:])
        return pileup_requests(pu, _track_sizes(settings.get("track_sizes", "demo"), "pileup", pu))
    return signal_requests(case.case, _track_sizes(settings.get("track_sizes", "demo"), "signal"))


def data_problem(name: str, settings: dict[str, Any]) -> str | None:
    """Why dataset ``name`` cannot be loaded on this machine (``None``: it can)."""
    case = DATASETS[name]
    if case.family == "molecular-fidelity":
        return None  # shipped with gs-data
    if case.family in ("qmof", "drugood3d", "moleculeace"):
        from gs_data.geometric import missing_geometric_data

        key = {"qmof": "qmof_root", "drugood3d": "drugood_root", "moleculeace": "moleculeace_dir"}[case.family]
        why = missing_geometric_data(name, root=settings.get(key) if case.family != "moleculeace" else None,
                                     data_dir=settings.get("moleculeace_dir"))
        if why is None and case.family == "moleculeace" and settings.get("moleculeace_dir"):
            folder = Path(settings["moleculeace_dir"])
            missing = [t for t in (settings.get("targets") or []) if not (folder / f"{t}.csv").is_file()]
            why = f"MoleculeACE targets {missing} have no CSV in {folder}" if missing else None
        if why is None:
            return None
        if case.stand_in_for is None:
            why += f" or set the suite setting {key} (offline stand-in: {_stand_in_of(name)})"
        return why
    # track: every sample in the event cache, or the simulator to make the missing ones
    from gs_data.track import cached_event_count
    from gs_data.track.deps import INSTALL_HINT, simulation_available

    seed = int(settings.get("track_seed", 0))
    missing = [f"{p}@PU{pu} ({cached_event_count(p, pu, seed, settings.get('track_cache_dir'))}/{n} cached)"
               for p, pu, n in _track_requests(name, settings)
               if cached_event_count(p, pu, seed, settings.get("track_cache_dir")) < n]
    if missing and not simulation_available():
        from gs_data.track import default_cache_dir

        where = settings.get("track_cache_dir") or default_cache_dir()
        return (f"Track events not in the cache {where} ({', '.join(missing)}) and PYTHIA 8 + ACTS "
                f"are not installed to simulate them: {INSTALL_HINT}")
    return None


def par_label_pool_size(name: str, settings: dict[str, Any]) -> int | None:
    """Size of the labelled OOD pool of dataset ``name`` by construction (GeSS table 4 /
    appendix C.1), or ``None`` when it depends on data this machine lacks."""
    case = DATASETS[name]
    if case.family in ("drugood3d", "moleculeace"):
        pool = settings.get("par_label_pool")
        if pool is not None:
            return 2 * (int(pool) // 2) if case.family == "drugood3d" else int(pool)
        return 2000
    if case.family == "molecular-fidelity":
        import gs_data

        ds = gs_data.load_geometric(name, info_level="par_label")
        return int(ds.split.masks["ood_labeled"].sum())
    if case.family == "qmof":
        path = _data_file(name, settings)
        if path is None or not path.is_file():
            return None
        from gs_data.materials import FidelityShiftConfig, fidelity_sizes

        with open(path) as fh:
            n = max(sum(1 for _ in fh) - 1, 0)
        return fidelity_sizes(n, FidelityShiftConfig(target=case.case))[0] // 3
    from gs_splits import split_sizes

    sizes = _track_sizes(settings.get("track_sizes", "demo"), case.shift,
                         int(case.case[2:]) if case.shift == "pileup" else 50)
    if case.shift == "pileup":
        return 2 * (sizes.n_target_pairs - sizes.n_ood_val_pairs - sizes.n_ood_test_pairs)
    return sizes.n_bkg_pool + split_sizes(sizes.n_target, sizes.id_fractions)[0]


def problems(config: SuiteConfig, jobs: Sequence[dict[str, Any]]) -> list[Problem]:
    """Every planned job that cannot succeed, grouped by cause (see :mod:`gs_bench.preflight`)."""
    out: list[Problem] = []
    count: dict[tuple, int] = {}
    for j in jobs:
        key = (j["params"]["dataset"], j["params"]["algorithm"])
        count[key] = count.get(key, 0) + 1
    datasets = list(dict.fromkeys(k[0] for k in count))
    settings = config.settings
    for (d, a), n in count.items():
        case = DATASETS[d]
        reason = INAPPLICABLE.get((a, case.task))
        if reason:
            out.append(Problem("construction", f"dataset={d}, algorithm={a}", reason, n))
    pools: dict[str, int | None] = {}
    for (d, a), n in count.items():
        size = tl_size(a)
        if size is None:
            continue
        if d not in pools:
            try:
                pools[d] = par_label_pool_size(d, settings)
            except Exception as exc:  # noqa: BLE001 - a pool we cannot size is checked at run time
                log.info("pool size of %s unknown before running: %s", d, exc)
                pools[d] = None
        pool = pools[d]
        if pool is not None and size > pool:
            out.append(Problem(
                "construction", f"dataset={d}, algorithm={a}",
                f"Par-Label needs {size} labelled OOD samples but the pool of {d} holds {pool} "
                f"(GeSS draws N from a pool of 2 x 1000); use a smaller tl-<N>"
                + (" or larger track_sizes" if DATASETS[d].family == "track" else ""), n))
    for d in datasets:
        why = data_problem(d, settings)
        if why:
            n = sum(v for (dd, _), v in count.items() if dd == d)
            out.append(Problem("data", f"dataset={d}", why, n))
    return out


# ---------------------------------------------------------------------------- loading
def _dataset(name: str, settings: dict[str, Any], level: str):
    """The gs-data dataset of ``name`` at ``level`` (:func:`gs_data.load_geometric`, never
    its MoleculeACE fallback: a job's dataset is the one it names): an object with
    ``split`` (masks, groups) and ``to_pyg(indices)``."""
    import gs_data
    from gs_data.molecules.moleculeace import MoleculeACEConfig

    case = DATASETS[name]
    info = level.replace("-", "_")
    why = data_problem(name, settings)
    if why:
        raise FileNotFoundError(f"dataset {name!r}: {why}")
    pool = settings.get("par_label_pool")
    kw: dict[str, Any] = {}
    root = None
    conformer_cache = settings.get("cache_dir") or str(gs_data.data_root() / "conformers")
    workers = int(settings.get("conformer_workers", 1))
    if case.family == "qmof":
        root = settings.get("qmof_root")
    elif case.family == "drugood3d":
        root = settings.get("drugood_root")
        kw = dict(par_label_per_part=int(pool) // 2 if pool else 1000, cache_dir=conformer_cache,
                  n_workers=workers)
    elif case.family == "moleculeace":
        kw = dict(config=MoleculeACEConfig(par_label_pool=int(pool)) if pool else None,
                  data_dir=settings.get("moleculeace_dir"), targets=settings.get("targets"),
                  cache_dir=conformer_cache, n_workers=workers)
    elif case.family == "track":
        pu = int(case.case[2:]) if case.shift == "pileup" else 50
        kw = dict(sizes=_track_sizes(settings.get("track_sizes", "demo"), case.shift, pu),
                  cache_dir=settings.get("track_cache_dir"),
                  n_workers=int(settings.get("track_workers") or os.cpu_count() or 1))
    seed = int(settings.get("track_seed", 0)) if case.family == "track" else 0
    return gs_data.load_geometric(name, info_level=info, root=root, seed=seed, stand_in=False, **kw)


def _stand_in_of(name: str) -> str:
    """The offline stand-in entry of GeSS case ``name`` (its family's, for the message)."""
    for other, spec in DATASETS.items():
        if spec.stand_in_for == name:
            return other
    return "none"


def _unit_coordinates(pos):
    """GeSS's ``CoorsNorm`` for Track (``GESS/models/models/tools.py``, applied by
    ``BaseModel.calc_geo_feat`` before the kNN graph when the dataset is Track): every hit's
    coordinates divided by their own norm (its direction from the interaction point; the
    learnable ``scale`` is not applied). Without it the raw millimetre coordinates make EGNN
    diverge."""
    return pos / pos.norm(dim=-1, keepdim=True).clamp(min=1e-6)


def _parts(ds, level: str, unit_coordinates: bool = False, knn_k: int | None = None) -> dict[str, list]:
    """PyG graphs per split part, each with ``y`` (1,) float and ``domain``: the source
    subgroup of GeSS (table 6; ``split.groups``). Items without a subgroup (Track-Signal
    background events, target items) get one extra id after the subgroups.
    ``unit_coordinates``: :func:`_unit_coordinates` (Track). ``knn_k``: each graph carries
    its coordinate kNN graph with self loops as ``knn_index`` (int32), built once here
    instead of once per batch and epoch (the backbones take it through gs-algos'
    ``knn_kwargs``; GeSS builds it in every forward pass). Graphs without points (a
    simulated Track event in which no particle reached the detector: 2 of the 1200 ci-size
    Track-Signal events) are left out; the record's ``sizes`` count what was used."""
    import torch
    from gs_models import knn_graph

    groups = np.asarray(ds.split.groups) if ds.split.groups is not None else np.zeros(len(ds), int)
    codes = groups.astype(np.int64).copy()
    codes[codes < 0] = int(groups.max()) + 1 if groups.size else 0
    wanted = ["train", "iid_val", "iid_test", "ood_val", "ood_test"]
    if level == "o-feature":
        wanted.append("train_target")
    if level == "par-label":
        wanted.append("ood_labeled")
    parts = {}
    for part in wanted:
        mask = ds.split.masks.get(part)
        if mask is None or not mask.any():
            continue
        idx = np.flatnonzero(mask)
        graphs = []
        for i, g in zip(idx, ds.to_pyg(idx), strict=True):
            if g.pos.size(0) == 0:  # an event without hits (simulated Track): nothing to learn
                continue
            g.domain = torch.tensor(int(codes[i]))
            g.y = g.y.reshape(-1).float()
            if unit_coordinates:
                g.pos = _unit_coordinates(g.pos)
            if knn_k is not None:
                g.knn_index = knn_graph(g.pos, int(knn_k), loop=True).to(torch.int32)
            graphs.append(g)
        parts[part] = graphs
    return parts


def _model_inputs(ds, case) -> tuple[int, bool]:
    """``(in_channels, categorical)``: Track's all-ones float feature, else atom types."""
    if case.family == "track":
        return 1, False
    return int(ds.num_atom_types), True


# ---------------------------------------------------------------------------- one job
def standardize_default(name: str) -> bool:
    """Whether a regression job on dataset ``name`` trains on standardised targets when the
    suite does not say (``standardize_targets`` unset): yes for the molecular fidelity
    stand-in (ours), no for QMOF.

    GeSS's code trains QMOF with MSE on raw eV (``MSELoss`` in ``GESS/utils/metrics.py``,
    ``y`` unscaled in ``GESS/data/gess_datasets/qmof.py``); with 10,781 training materials in
    batches of 256 for 100 epochs that is about 4,300 Adam steps, enough to reach gaps of 2-4
    eV. The stand-in has 135 training molecules: GeSS's schedule gives it 100 steps (batch 256)
    and the old ci profile 24 (8 epochs of 64), after which raw-eV ERM predicted about 0.9 eV
    for gaps of 5.6 eV (Test-ID MAE 4.68 eV, 3.7 x the train-mean predictor's 1.26); apps/bench
    README, "molecular-fidelity: ERM against the train-mean predictor"."""
    return DATASETS[name].family == "molecular-fidelity"


def train_config(name: str, algorithm: str, settings: dict[str, Any], seed: int, level: str | None = None,
                 device: str = "auto"):
    """The :class:`gs_algos.TrainConfig` of a job: GeSS table 8 for the shift and level,
    then the suite's ``max_epochs`` / ``batch_size`` / ``iterations_per_epoch`` (and
    ``track_batch_size`` / ``fidelity_max_epochs`` for their families), standardised regression
    targets (:func:`standardize_default`, ``standardize_targets``); ``device`` from
    ``gs-bench run --device``."""
    from gs_algos import TrainConfig

    case = DATASETS[name]
    level = level or level_of(algorithm)
    cfg = TrainConfig.gess(shift=case.shift, level=level, seed=seed, task=case.task, metric=case.metric,
                           device=device)
    changes = {k: int(settings[k]) for k in ("max_epochs", "batch_size") if settings.get(k)}
    if case.family == "track" and settings.get("track_batch_size"):
        changes["batch_size"] = int(settings["track_batch_size"])
    if case.shift == "fidelity" and settings.get("fidelity_max_epochs"):
        changes["max_epochs"] = int(settings["fidelity_max_epochs"])
    std = settings.get("standardize_targets")
    if case.task == "regression" and (standardize_default(name) if std is None else bool(std)):
        changes["standardize_targets"] = True
    if settings.get("norm_stats_graphs"):
        changes["norm_stats_graphs"] = int(settings["norm_stats_graphs"])
    if cfg.iterations_per_epoch is not None and settings.get("iterations_per_epoch"):
        changes["iterations_per_epoch"] = int(settings["iterations_per_epoch"])
    return cfg.replace(**changes) if changes else cfg


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    from gs_algos import METHODS, finetune_graph, fit_graph, seeded
    from gs_models import build_model

    params, settings, seed = job["params"], job["settings"], int(job["seed"])
    name, algo = params["dataset"], params["algorithm"]
    case = DATASETS[name]
    _check_algorithm(algo)
    reason = INAPPLICABLE.get((algo, case.task))
    if reason:
        raise ValueError(f"{name} x {algo}: {reason}")
    level = level_of(algo)
    ds = _dataset(name, settings, level)
    parts = _parts(ds, level, unit_coordinates=case.family == "track", knn_k=case.knn_k)
    in_ch, categorical = _model_inputs(ds, case)
    # the device comes from the executor (gs-bench run --device), not the settings: not in the key
    device = job.get("device", "auto")
    model = seeded(
        lambda: build_model(BACKBONES[params["backbone"]], in_ch, 1, categorical=categorical, k=case.knn_k),
        seed,
    )
    eval_parts = {k: v for k, v in parts.items() if k in ("train", "iid_val", "iid_test", "ood_val", "ood_test")}
    kwargs, source = method_params(name, algo, settings)
    n_tl = tl_size(algo)
    if n_tl is not None:
        pool = parts.get("ood_labeled", [])
        if n_tl > len(pool):
            raise ValueError(
                f"{name} x {algo}: Par-Label needs {n_tl} labelled OOD samples but the pool holds "
                f"{len(pool)}; use a smaller tl-<N>"
            )
        # ERM pre-training with the No-Info protocol (GeSS: the No-Info ERM checkpoint), then
        # full fine-tuning with the Par-Label protocol (table 8: 75 epochs on Track-Pileup).
        # The pre-trained model is shared by the TL rows of a grid point (tl-100/500/1000):
        # the first trains and stores it, the others load it (fine-tuning is seeded, so the
        # results are the same either way).
        pre_cfg = train_config(name, algo, settings, seed, "no-info", device=device)
        cache = _pretrain_cache(job)

        def pretrain(m) -> int:
            return fit_graph(m, eval_parts, METHODS["erm"](), pre_cfg).best.epoch

        if cache is None:
            pre_epoch, pretrain_cached = pretrain(model), False
        else:  # trained once when two workers reach the same grid point (issue 34)
            pre_epoch, pretrain_cached = cache.load_or_train(
                cache.key("gess-erm-pretrain", seed, pre_cfg, model), model, pretrain)
        halves = _pool_halves(ds, settings)
        _, res = finetune_graph(model, {**eval_parts, "ood_labeled": pool}, n_tl,
                                train_config(name, algo, settings, seed, device=device), seed=seed,
                                pool_halves=halves)
    else:
        meth = METHODS[algo](**kwargs)
        target = parts.get("train_target") if level == "o-feature" else None
        res = fit_graph(model, eval_parts, meth, train_config(name, algo, settings, seed, device=device),
                        target=target)
    out: dict[str, Any] = {"metric": case.metric, "level": level, "epochs_run": res.epochs_run,
                           "hparams": {k: v for k, v in kwargs.items()}, "hparams_source": source,
                           "stand_in": case.stand_in}
    for track_name, track in res.tracks.items():
        sel = "id" if track_name == "iid_val" else "ood"
        out[f"{sel}_sel_test_id"] = float(track.metrics.get("iid_test", {}).get(case.metric, float("nan")))
        out[f"{sel}_sel_test_ood"] = float(track.metrics.get("ood_test", {}).get(case.metric, float("nan")))
        out[f"{sel}_sel_epoch"] = int(track.epoch)
    out["sizes"] = {k: len(v) for k, v in parts.items()}
    out["baselines"] = trivial_baselines(parts, case)
    out["curves"] = learning_curves(res.history, case.metric)
    if n_tl is not None:
        out["tl_n"] = n_tl
        out["pretrain_epoch"] = int(pre_epoch)
        out["pretrain_cached"] = pretrain_cached
        out["par_label_draw"] = "gess" if halves is not None else "uniform"
    return out


def _pool_halves(ds, settings: dict[str, Any]) -> np.ndarray | None:
    """0/1 per labelled-pool item (removed from ood_val / ood_test) for GeSS's draw of half
    the Par-Label set from each (appendix C.1; ``par_label_draw = "gess"``, the default), or
    ``None`` for a uniform draw from the whole pool: ``par_label_draw = "uniform"`` (ours),
    or a pool that is not made of two such halves (Track and the fidelity shift, whose pools
    are their own parts in GeSS table 4)."""
    origin = ds.split.metadata.get("ood_labeled_origin")
    if settings.get("par_label_draw", "gess") != "gess" or origin is None:
        return None
    return (np.asarray(origin) == "ood_test").astype(np.int64)


def _pretrain_cache(job: dict[str, Any]):
    """Where the TL rows of one grid point share their ERM pre-training
    (``<results>/members``, gs-algos' :class:`~gs_algos.node_methods.MemberCache`, as the
    structural runner's shared members), or ``None`` without a results folder or with
    ``share_pretraining = false``. The tag holds everything the pre-training depends on
    besides its seed, training configuration and model shapes (which the key adds): the
    dataset, backbone, settings, the data files' fingerprint and the package versions; the
    algorithm is left out, so tl-100, tl-500 and tl-1000 share one entry."""
    import json

    from gs_algos.node_methods import MemberCache

    settings = job["settings"]
    if not job.get("workdir") or not settings.get("share_pretraining", True):
        return None
    import gs_algos
    import gs_data
    import gs_models
    import gs_splits

    params = {k: v for k, v in job["params"].items() if k != "algorithm"}
    tag = json.dumps({
        "suite": job.get("suite"), "params": params, "level": "par-label",
        "settings": {k: v for k, v in settings.items() if k not in ("hparams", "share_pretraining")},
        "data": _fingerprint(params["dataset"], settings),
        "versions": [m.__version__ for m in (gs_splits, gs_data, gs_models, gs_algos)],
    }, sort_keys=True, default=str)
    return MemberCache(Path(job["workdir"]) / "members", tag)


def order_jobs(jobs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """TL rows last, smallest N first across the grid points: each grid point's first TL
    job trains the shared ERM pre-training (:func:`_pretrain_cache`) before its larger-N
    rows start on another worker, which then load it instead of training it again."""
    def rank(job: dict[str, Any]) -> tuple[int, int]:
        n = tl_size(job["params"]["algorithm"])
        return (0, 0) if n is None else (1, n)

    return sorted(jobs, key=rank)  # stable: the grid order within each rank


# ------------------------------------------------------- trivial baselines, learning curves
#: The report's name of the trivial baseline of each metric (its "algorithm" cell):
#: accuracy, the majority class of ``train``; ROC-AUC, 50 by definition (any constant score);
#: MAE, the train-label mean. Track adds :data:`HIT_COUNT`.
BASELINE_OF_METRIC = {"accuracy": "majority class", "auroc": "AUC 50", "mae": "train mean"}
#: Track's known shortcut: a threshold on the number of hits of an event
#: (``apps/bench/checks/track_hit_count_baseline.py``).
HIT_COUNT = "hit-count threshold"
_TESTS = {"test_id": "iid_test", "test_ood": "ood_test"}


def _finite_or_none(v: float) -> float | None:
    return float(v) if v is not None and np.isfinite(v) else None


def trivial_baselines(parts: dict[str, list], case) -> dict[str, dict[str, Any]]:
    """What a predictor that learns nothing about the inputs scores on this job's Test-ID and
    Test-OOD (``{name: {"test_id": v, "test_ood": v, ...}}``, the metric's unit: fractions for
    ACC / AUC, eV for MAE; ``None`` for an empty part), fitted on the job's ``train`` part:

    * ACC: the majority class of the train labels (``"class"``: which one);
    * AUC: 0.5 (a constant score ranks no pair);
    * MAE: the train-label mean as prediction (``"prediction"``);
    * Track (ACC) also: the hit-count threshold (number of points ``g.pos.size(0)`` per event)
      and direction with the best train accuracy (``"threshold"``, ``"signal"``: ``"above"``
      or ``"below"``; a threshold of ``None`` predicts one class everywhere).

    The functions are gs-metrics' (:mod:`gs_metrics.baselines`); every job stores them, the
    report reads them from the ERM records (:func:`tables`, :func:`orderings`)."""
    import gs_metrics as gm

    def targets(part: str) -> np.ndarray:
        return np.asarray([float(v) for g in parts.get(part, []) for v in g.y.reshape(-1).tolist()])

    train = targets("train")
    if train.size == 0:
        return {}
    out: dict[str, dict[str, Any]] = {}
    with warnings.catch_warnings():  # an empty test part gives None, not a warning per job
        warnings.simplefilter("ignore", gm.EmptyEvaluationWarning)
        if case.metric == "mae":
            out[BASELINE_OF_METRIC["mae"]] = {
                **{k: _finite_or_none(gm.mean_predictor_mae(train, targets(p))) for k, p in _TESTS.items()},
                "prediction": float(f"{train.mean():.5g}")}
        elif case.metric == "auroc":
            out[BASELINE_OF_METRIC["auroc"]] = {k: 0.5 for k in _TESTS}
        else:
            out[BASELINE_OF_METRIC.get(case.metric, "majority class")] = {
                **{k: _finite_or_none(gm.majority_class_accuracy(train, targets(p))) for k, p in _TESTS.items()},
                "class": gm.majority_class(train)}
        if case.family == "track" and case.metric == "accuracy":
            def hits(part: str) -> np.ndarray:
                return np.asarray([g.pos.size(0) for g in parts.get(part, [])], dtype=np.float64)

            rule = gm.fit_threshold_classifier(hits("train"), train)
            out[HIT_COUNT] = {
                **{k: _finite_or_none(rule.accuracy(hits(p), targets(p))) for k, p in _TESTS.items()},
                "threshold": _finite_or_none(rule.threshold), "signal": "above" if rule.side else "below"}
    return out


def _round5(v: Any) -> float | None:
    """5 significant digits; ``None`` for a missing or non-finite value."""
    return float(f"{v:.5g}") if v is not None and math.isfinite(v) else None


def learning_curves(history: Sequence[dict[str, Any]], metric: str) -> dict[str, list]:
    """The record's ``curves`` from gs-algos' ``FitResult.history``: per epoch (lists of equal
    length) ``epoch``, ``train_loss`` (the method's training objective, penalties included)
    and the selection metric ``metric`` on ``iid_val`` and ``ood_val`` (``None`` on an epoch
    that was not evaluated), 5 significant digits. For ``tl-<N>``: the fine-tuning run."""
    def val(h: dict[str, Any], part: str) -> float | None:
        return _round5((h.get("metrics") or {}).get(part, {}).get(metric))

    return {"epoch": [int(h["epoch"]) for h in history],
            "train_loss": [_round5(h.get("train_loss")) for h in history],
            "iid_val": [val(h, "iid_val") for h in history],
            "ood_val": [val(h, "ood_val") for h in history]}


# ---------------------------------------------------------------------------- report
def _algo_rank(a: str) -> tuple[int, int]:
    n = tl_size(a)
    if n is not None:
        return (len(ALGORITHMS), n)
    return (ALGORITHMS.index(a) if a in ALGORITHMS else len(ALGORITHMS) - 1, 0)


#: The table columns after backbone / algorithm / info level: GeSS's selection on Val-OOD
#: first (section 4.1, appendix F), then the selection on Val-ID (appendix E's second track).
SELECTION_COLUMNS = (("ood", "id"), ("ood", "ood"), ("id", "id"), ("id", "ood"))


def tables(records: Sequence[dict[str, Any]]) -> list[Table]:
    groups = group_records(records, ("dataset", "backbone", "algorithm"))
    out = []
    for ds in sorted({k[0] for k in groups}):
        rows = []
        metric = ""
        keys = sorted((k for k in groups if k[0] == ds), key=lambda k: (k[1], _algo_rank(k[2])))
        for key in keys:
            recs = groups[key]
            metric = recs[0]["metrics"]["metric"]
            scale = 1.0 if metric == "mae" else 100.0
            row = [key[1], key[2], recs[0]["metrics"]["level"]]
            for sel, test in SELECTION_COLUMNS:
                row.append(fmt_mean_std([r["metrics"][f"{sel}_sel_test_{test}"] for r in recs], scale=scale, digits=3 if metric == "mae" else 2))
            rows.append(row)
        erm = [r for k in keys if k[2] == "erm" for r in groups[k]]
        base_rows = []
        for name, vals in _baseline_values(erm).items():
            cells = [fmt_mean_std(vals[t], scale=scale, digits=3 if metric == "mae" else 2) for t in ("test_id", "test_ood")]
            base_rows.append(["—", name, "trivial", *cells, *cells])
        rows = base_rows + rows
        from gs_data.geometric import GEOMETRIC_METRICS

        label = GEOMETRIC_METRICS.get(metric, metric)
        unit = "MAE (eV), lower is better" if metric == "mae" else f"{label} (%)"
        spec = DATASETS.get(ds)
        stand = f" (offline stand-in for {spec.stand_in_for}, ours)" if spec is not None and spec.stand_in else ""
        sizes = _part_sizes(groups, keys)
        out.append(Table(
            f"GeSS {ds}{stand}: Test-ID / Test-OOD {unit}, mean ± std over seeds, selected on Val-OOD as "
            f"GeSS (table 3 layout)",
            ["backbone", "algorithm", "info level", "OOD-sel Test-ID", "OOD-sel Test-OOD", "ID-sel Test-ID",
             "ID-sel Test-OOD"],
            rows,
            note="OOD-sel: the epoch with the best Val-OOD metric, GeSS's model selection (section 4.1, "
                 "appendix F) and the values the findings below use; ID-sel: the best Val-ID epoch "
                 "(appendix E's second track). tl-<N>: Par-Label fine-tuning on N labelled OOD samples "
                 "(GeSS TL-100/500/1000). "
                 + ("Info level \"trivial\": a predictor that learns nothing from the inputs, fitted "
                    "on train (majority class, train mean; AUC 50 by definition; Track: the best "
                    "threshold on the hit count), the same in both selection columns; values from "
                    "the ERM records." if base_rows else
                    "No trivial baseline row: the ERM records carry none (written before gs-bench "
                    "stored them), so the findings on this dataset are not decided.")
                 + (f" Samples per part: {sizes}." if sizes else "")
                 + same_selection_comment(rows[len(base_rows):], [r for k in keys for r in groups[k]]),
        ))
    order = orderings(records)
    if order.rows:
        out.append(order)
    return out


def same_selection_comment(rows: Sequence[Sequence[str]], records: Sequence[dict[str, Any]]) -> str:
    """A paragraph for a dataset table whose OOD-sel and ID-sel columns are equal in every
    algorithm row (``rows``: backbone, algorithm, level, then the 4 :data:`SELECTION_COLUMNS`
    cells), saying so and why from the records' selected epochs; ``""`` otherwise (or without
    rows). The trivial rows are equal by construction and are not passed."""
    if not rows or any(list(r[3:5]) != list(r[5:7]) for r in rows):
        return ""
    pairs = [(r["metrics"].get("ood_sel_epoch"), r["metrics"].get("id_sel_epoch")) for r in records]
    pairs = [p for p in pairs if None not in p]
    text = "\n\n**OOD-sel and ID-sel are identical in every row.** "
    if pairs and all(a == b for a, b in pairs):
        epochs = sorted({int(a) for a, _ in pairs})
        # epochs count from 0: the last of max_epochs is max_epochs - 1
        last = {int(r["job"].get("settings", {}).get("max_epochs", 0)) - 1 for r in records}
        at_end = f" (the last epoch, {epochs[0]})" if len(epochs) == 1 and last == {epochs[0]} else ""
        return (text + f"In each of the {len(pairs)} runs the best Val-OOD epoch is also the best Val-ID "
                f"epoch{at_end}: epochs {', '.join(map(str, epochs))}. The two selections pick the same "
                "model here, so the columns say nothing about model selection; with longer training the "
                "validation curves can peak apart.")
    return text + ("The two selections picked different epochs in some runs, with the same test values."
                   if pairs else "The records do not say which epochs were selected.")


def _baseline_values(erm: Sequence[dict[str, Any]]) -> dict[str, dict[str, list[float]]]:
    """``{baseline name: {"test_id": [...], "test_ood": [...]}}`` over the records ``erm``
    that carry ``baselines`` (:func:`trivial_baselines`; records written before it have none),
    missing values left out; a baseline without any value is left out."""
    out: dict[str, dict[str, list[float]]] = {}
    for r in erm:
        for name, b in (r["metrics"].get("baselines") or {}).items():
            for test in ("test_id", "test_ood"):
                v = b.get(test)
                if v is not None and math.isfinite(v):
                    out.setdefault(name, {"test_id": [], "test_ood": []})[test].append(float(v))
    return {k: v for k, v in out.items() if v["test_id"] or v["test_ood"]}


def _part_sizes(groups: dict, keys: list) -> str:
    """``train 450, iid_val 74, ...`` of the first record of a dataset that has them (the
    parts every algorithm trains and is evaluated on; the unlabeled target pool of the
    O-Feature level and the labelled pool of the Par-Label level are added when run)."""
    sizes: dict[str, int] = {}
    for key in keys:
        for r in groups[key]:
            for part, n in (r["metrics"].get("sizes") or {}).items():
                sizes.setdefault(part, int(n))
    order = ["train", "iid_val", "iid_test", "ood_val", "ood_test", "train_target", "ood_labeled"]
    names = {"train_target": "O-Feature pool", "ood_labeled": "Par-Label pool"}
    return ", ".join(f"{names.get(k, k)} {sizes[k]}" for k in order if k in sizes)


#: GeSS's findings that a run can check: (id, statement, where in the paper)
FINDINGS = (
    ("shift-hurts", "ERM does worse on Test-OOD than on Test-ID (every shift is a shift)",
     "sections 3-4, table 3"),
    ("no-info-rarely-helps", "No-Info OOD methods (VREx, GroupDRO, DIR, LRI, Mixup) rarely beat ERM "
     "on Test-OOD: at most half of those run do", "section 4.2, appendix H1"),
    ("da-pileup-close", "DA (DANN, DeepCoral) stays close to ERM under the pileup shift (within 3 points)",
     "section 4.3, conclusion 1, fig. 4"),
    ("da-signal-helps", "DA (DANN) beats ERM under the signal shift", "section 4.3, conclusion 1, fig. 4"),
    ("tl-grows-with-n", "Par-Label TL improves with N (more labelled OOD samples)", "section 4.2, fig. 2"),
    ("tl-concept", "Par-Label TL beats ERM on Test-OOD under the fidelity (concept) shift",
     "section 4.3, conclusion 2, fig. 3a"),
)


#: The guard of every finding (:func:`learned`): ERM beats the strongest trivial baseline on
#: Test-ID by at least this many points (ACC / AUC, in %) ...
GUARD_POINTS = 10.0
#: ... or, for MAE, reaches at most this fraction of the strongest baseline's Test-ID MAE.
GUARD_MAE_RATIO = 0.8


def _ood(recs: Sequence[dict[str, Any]], test: str = "ood") -> float:
    """Mean over seeds of the OOD-selected Test-OOD (or Test-ID) value: GeSS's selection on
    Val-OOD (section 4.1, appendix F)."""
    return float(np.mean([r["metrics"][f"ood_sel_test_{test}"] for r in recs]))


def learned(erm_test_id: float, baseline_test_id: float, lower_is_better: bool) -> bool:
    """Whether ERM learned more than a trivial baseline, judged on Test-ID: ACC / AUC
    (fractions) at least :data:`GUARD_POINTS` points above it; MAE at most
    :data:`GUARD_MAE_RATIO` times its MAE (20 % lower). Rounding noise of the stored values
    (1e-9) does not decide it."""
    if lower_is_better:
        return erm_test_id <= GUARD_MAE_RATIO * baseline_test_id + 1e-9
    return 100.0 * (erm_test_id - baseline_test_id) >= GUARD_POINTS - 1e-9


def _guard(erm: Sequence[dict[str, Any]], lower: bool, f) -> str | None:
    """``None`` when a (dataset, backbone)'s findings can be judged, else the verdict that
    replaces theirs: ERM (OOD-selected Test-ID, mean over seeds) against the strongest trivial
    baseline of its records (:func:`learned`)."""
    base = {name: float(np.mean(v["test_id"])) for name, v in _baseline_values(erm).items() if v["test_id"]}
    if not base:
        return "not decided: no baseline in the records"
    name = (min if lower else max)(base, key=base.__getitem__)
    erm_id = _ood(erm, "id")
    if learned(erm_id, base[name], lower):
        return None
    return f"not decided: ERM did not learn (ERM Test-ID {f(erm_id)} vs {name} {f(base[name])})"


def orderings(records: Sequence[dict[str, Any]]) -> Table:
    """GeSS's findings (:data:`FINDINGS`) checked on the records: one row per (finding,
    dataset, backbone) that the run can check, with the values it rests on and whether it
    holds. Values are OOD-selected (GeSS's selection on Val-OOD) means over seeds; ACC/AUC in
    %, MAE in eV (lower is better). A finding is judged only where ERM learned more than the
    strongest trivial baseline (:func:`learned`); elsewhere its verdict is "not decided" with
    the two values. With one seed, differences of a point or two are within noise."""
    groups = group_records(records, ("dataset", "backbone", "algorithm"))
    rows: list[list[str]] = []
    by_point: dict[tuple[str, str], dict[str, list]] = {}
    for (ds, bb, algo), recs in groups.items():
        by_point.setdefault((ds, bb), {})[algo] = recs
    text = {f[0]: (f[1], f[2]) for f in FINDINGS}

    for (ds, bb), algos in sorted(by_point.items()):
        case = DATASETS.get(ds)
        if "erm" not in algos or case is None:
            continue
        metric = algos["erm"][0]["metrics"]["metric"]
        lower = metric == "mae"
        scale = 1.0 if lower else 100.0
        f = (lambda v: f"{v:.3f}") if lower else (lambda v, s=scale: f"{v * s:.2f}")

        def better(a: float, b: float, lower: bool = lower) -> bool:
            return a < b if lower else a > b

        erm_ood, erm_id = _ood(algos["erm"]), _ood(algos["erm"], "id")
        undecided = _guard(algos["erm"], lower, f)

        def row(fid: str, evidence: str, holds: bool, where: str = f"{ds} / {bb}",
                undecided: str | None = undecided) -> None:
            verdict = undecided or ("holds" if holds else "does not hold")
            rows.append([text[fid][0], text[fid][1], where, evidence, verdict])

        row("shift-hurts", f"ERM Test-ID {f(erm_id)}, Test-OOD {f(erm_ood)}", better(erm_id, erm_ood))
        no_info = [a for a in ("vrex", "groupdro", "dir", "lri", "mixup") if a in algos]
        if no_info:
            wins = [a for a in no_info if better(_ood(algos[a]), erm_ood)]
            ev = ", ".join(f"{a} {f(_ood(algos[a]))}" for a in no_info) + f" vs ERM {f(erm_ood)}"
            row("no-info-rarely-helps", ev + f" ({len(wins)} of {len(no_info)} better)",
                2 * len(wins) <= len(no_info))
        da = [a for a in ("dann", "coral") if a in algos]
        if da and case.family == "track" and case.shift == "pileup":
            gaps = {a: abs(_ood(algos[a]) - erm_ood) * scale for a in da}
            ev = ", ".join(f"{a} {f(_ood(algos[a]))}" for a in da) + f" vs ERM {f(erm_ood)}"
            row("da-pileup-close", ev, max(gaps.values()) <= 3.0)
        if "dann" in algos and case.family == "track" and case.shift == "signal":
            row("da-signal-helps", f"DANN {f(_ood(algos['dann']))} vs ERM {f(erm_ood)}",
                better(_ood(algos["dann"]), erm_ood))
        tls = sorted((n, a) for a in algos if (n := tl_size(a)) is not None)
        if len(tls) >= 2:
            vals = [_ood(algos[a]) for _, a in tls]
            ev = ", ".join(f"TL-{n} {f(v)}" for (n, _), v in zip(tls, vals, strict=True))
            row("tl-grows-with-n", ev, all(better(b, a) for a, b in zip(vals, vals[1:], strict=False)))
        if tls and case.shift == "fidelity":
            vals = [_ood(algos[a]) for _, a in tls]
            best = min(vals) if lower else max(vals)
            row("tl-concept", f"best TL {f(best)} vs ERM {f(erm_ood)}", better(best, erm_ood))
    return Table(
        "GeSS findings checked on this run (OOD-selected, GeSS's selection; Test-OOD unless named)",
        ["finding", "GeSS", "case", "ours", "on our data"],
        rows,
        note="ACC/AUC in %, MAE in eV (lower is better); values selected on Val-OOD, means over "
             "seeds. One row per case the run can check; a finding whose algorithms were not run "
             "is not listed. A finding is judged only where ERM learned: its Test-ID beats the "
             f"strongest trivial baseline of the dataset table by at least {GUARD_POINTS:g} points "
             f"(ACC/AUC), or its MAE is at most {GUARD_MAE_RATIO:g} x the train-mean predictor's; "
             "elsewhere \"not decided\" gives the two values. With one seed, differences of a "
             "point or two are within seed noise (GeSS reports means of 3 seeds).",
    )


def _mean_curve(recs: Sequence[dict[str, Any]], key: str, scale: float) -> tuple[list[int], list[float]]:
    """Epochs and the mean over ``recs`` (seeds) of ``curves[key]`` at each epoch that has a
    value in at least one record."""
    by_epoch: dict[int, list[float]] = {}
    for r in recs:
        c = r["metrics"]["curves"]
        for e, v in zip(c.get("epoch", []), c.get(key, []), strict=False):
            if v is not None and math.isfinite(v):
                by_epoch.setdefault(int(e), []).append(float(v) * scale)
    epochs = sorted(by_epoch)
    return epochs, [float(np.mean(by_epoch[e])) for e in epochs]


def figures(records: Sequence[dict[str, Any]], report_dir: Path) -> list[Figure]:
    """Learning curves, one PNG per dataset (``gess_curves_<dataset>.png`` in the report
    folder): training loss, Val-ID and Val-OOD selection metric against the epoch, one line
    per (algorithm, backbone), the mean over seeds, from the records' ``curves``
    (:func:`learning_curves`). Records written before them have none: no figure for their
    dataset. matplotlib (Agg) is imported only when there is a curve to draw."""
    groups = group_records(records, ("dataset", "backbone", "algorithm"))
    with_curves = {k: [r for r in recs if r["metrics"].get("curves")] for k, recs in groups.items()}
    with_curves = {k: v for k, v in with_curves.items() if v}
    if not with_curves:
        return []
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from gs_data.geometric import GEOMETRIC_METRICS

    out = []
    for ds in sorted({k[0] for k in with_curves}):
        keys = sorted((k for k in with_curves if k[0] == ds), key=lambda k: (k[1], _algo_rank(k[2])))
        metric = with_curves[keys[0]][0]["metrics"]["metric"]
        scale = 1.0 if metric == "mae" else 100.0
        unit = "MAE (eV)" if metric == "mae" else f"{GEOMETRIC_METRICS.get(metric, metric)} (%)"
        several_backbones = len({k[1] for k in keys}) > 1
        fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
        colors = plt.get_cmap("tab20" if len(keys) > 10 else "tab10")
        for i, key in enumerate(keys):
            recs = with_curves[key]
            label = f"{key[2]} ({key[1]})" if several_backbones else key[2]
            for ax, (field, s) in zip(axes, (("train_loss", 1.0), ("iid_val", scale), ("ood_val", scale)),
                                      strict=True):
                epochs, mean = _mean_curve(recs, field, s)
                if epochs:
                    ax.plot(epochs, mean, color=colors(i % colors.N), label=label, lw=1.2,
                            marker="." if len(epochs) <= 30 else None)
        for ax, title in zip(axes, ("training loss (the method's objective)", f"Val-ID {unit}",
                                    f"Val-OOD {unit} (GeSS selects here)"), strict=True):
            ax.set_title(title, fontsize=9)
            ax.set_xlabel("epoch")
            ax.grid(alpha=0.3)
        axes[-1].legend(fontsize=7, loc="best")
        fig.suptitle(f"GeSS {ds}: learning curves", fontsize=10)
        fig.tight_layout()
        name = f"gess_curves_{ds}.png".replace("/", "_")
        fig.savefig(report_dir / name, dpi=100)
        plt.close(fig)
        seeds = sorted({len(with_curves[k]) for k in keys})
        out.append(Figure(name, f"{ds}: training loss and the selection metric ({unit}) on Val-ID "
                                f"and Val-OOD per epoch, mean over {'/'.join(map(str, seeds))} "
                                f"seed{'s' if seeds != [1] else ''}; the tl-<N> rows show their "
                                "fine-tuning run (their ERM pre-training follows the erm row's protocol)."))
    return out
