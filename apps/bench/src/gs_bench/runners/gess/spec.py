"""The ``gess`` suite's schema: its datasets, backbones and algorithms, GeSS's tuned
hyperparameters, the grid axes and the typed settings. Imports neither torch nor numba (the
names come from gs-data's geometric registry and :mod:`gs_algos.names`, both light; gs-algos'
method classes are imported inside the functions that need them).

:class:`Settings` is the one place a default of the suite is written: every field names its
type, default, accepted values and the source of the default (``dataclasses.fields(Settings)``
metadata ``cite`` / ``allowed`` / ``doc``). The job, the checks and the report read the typed
object (:meth:`Settings.from_job`, :meth:`Settings.from_mapping`), never the settings dict
with a default of their own.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gs_algos.names import builtin_method_names
from gs_bench.runner import axis, setting
from gs_bench.suites import (
    SuiteConfigError,
    TypedGrid,
    TypedSettings,
    check_choice,
    check_positive,
    did_you_mean,
)

__all__ = ["AXIS_ALIASES", "DATASETS", "BACKBONES", "ALGORITHMS", "O_FEATURE", "PAPER_TL", "LEVELS",
           "INAPPLICABLE", "GESS_HPARAMS", "TRACK_SIZES", "DOMAIN_HEADS", "PAR_LABEL_DRAWS",
           "TEST_SCORINGS", "DEFERRED_PARTS", "NEGATIVE_CONTROL",
           "Grid", "Settings", "algorithm_names", "check_dataset", "tl_size", "level_of", "algorithm_rank",
           "check_algorithm", "check_hparams", "method_params", "track_sim_config", "track_sizes"]

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
#: The algorithms of GeSS's O-Feature level (section 4.1: domain adaptation with the unlabeled
#: target pool); every other one but ``tl-<N>`` is No-Info.
O_FEATURE = ("dann", "coral")
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

#: Track sizes by name (``track_sizes``) besides gs-data's ``demo`` / ``ci`` / ``paper``
#: (:data:`_NAMED_TRACK_SIZES`): ``{name: {shift: sizes}}``, for a check script or a test.
TRACK_SIZES: dict[str, dict[str, Any]] = {}
#: gs-data's named Track sizes: ``demo``, ``paper`` (GeSS table 4), ``ci`` (ours: about a
#: thousand events per case; Par-Label pools of 160 / 500 events) and ``medium`` (ours: about
#: 3,000 training and 1,000 Test-ID / Test-OOD events per case).
_NAMED_TRACK_SIZES = ("demo", "ci", "medium", "paper")
#: ``domain_head``: GeSS's source-vs-target discriminator (DANN) / source-vs-target CORAL, or
#: one domain per source subgroup plus the target (ours).
DOMAIN_HEADS = ("binary", "subgroups")
#: ``par_label_draw``: GeSS's half of N from each of the pool's Val-OOD and Test-OOD parts
#: (appendix C.1), or N from the whole pool (ours).
PAR_LABEL_DRAWS = ("gess", "uniform")
#: ``test_scoring``: every part every epoch (GeSS's code) or the train and test parts only at
#: the epochs the selections keep (ours; :attr:`gs_algos.TrainConfig.final_parts`).
TEST_SCORINGS = ("every-epoch", "selected")
#: The scored parts that ``test_scoring = "selected"`` leaves out of the per-epoch evaluation.
DEFERRED_PARTS = ("train", "iid_test", "ood_test")
#: The negative control (ours, issue 53): ERM trained on the train labels permuted (seeded by
#: the job's seed), on the same events; whatever it scores above the trivial rows is a leak.
NEGATIVE_CONTROL = "erm-shuffled"


def track_sizes(name: str, shift: str, target_pileup: int = 50):
    """Track sizes by name: gs-data's ``demo`` / ``ci`` / ``paper`` (GeSS table 4) or one of
    :data:`TRACK_SIZES`."""
    from gs_data.track import TrackPileupSizes, TrackSignalSizes

    if name in TRACK_SIZES:
        return TRACK_SIZES[name][shift]
    if name not in _NAMED_TRACK_SIZES:
        raise SuiteConfigError(f"track_sizes must be 'demo', 'ci', 'medium' or 'paper', got {name!r}")
    if shift == "pileup":
        return getattr(TrackPileupSizes, name)(target_pileup)
    return getattr(TrackSignalSizes, name)()


def check_dataset(name: str) -> None:
    """Raise :class:`SuiteConfigError` unless ``name`` is a dataset of the suite (a name of
    before the one-dataset-per-shift-case registry is told what it became)."""
    if name in DATASETS:
        return
    old = {"track-pileup": "track-pileup-pu50 / -pu90",
           "track-signal": "track-signal-tau3mu / -zp20 / -zp10"}.get(name)
    hint = f" (now one dataset per shift case: {old})" if old else did_you_mean(name, DATASETS)
    raise SuiteConfigError(f"unknown GeSS dataset {name!r}{hint}; accepted: {', '.join(DATASETS)}")


@dataclass(frozen=True)
class Grid(TypedGrid):
    """One grid point of the suite (a job per point and seed): the suite file lists several
    values per axis, ``load_suite`` checks their types and :func:`validate` their values."""

    dataset: str = axis(check=check_dataset, doc="a shift case of gs-data's geometric registry")
    backbone: str = axis(allowed=BACKBONES, doc="the GeSS backbone preset gess-<backbone>")
    algorithm: str = axis(check=lambda a: check_algorithm(a),
                          doc="a graph-level method of gs-algos, or tl-<N> (Par-Label fine-tuning)")


_T8 = "GeSS table 8 (unset: per shift and level, gs_algos.TrainConfig.gess)"
_OURS = "ours (not in GeSS; unset: "
_UNSET_CACHE = "gs-bench (unset: gs-data's cache)"


@dataclass(frozen=True)
class Settings(TypedSettings):
    """``[settings]`` of the suite, the one place its keys, types and defaults are written
    (strict check in ``load_suite``, the same for command-line overrides). Unset epochs, batch
    size and iterations per epoch follow GeSS table 8 per shift and level (100 epochs, batch
    256; Track-Pileup 200 epochs, batch 128 at O-Feature and 75 fine-tuning epochs; 150
    iterations per epoch at O-Feature); a value replaces them everywhere (quick profiles).
    Algorithm hyperparameters are GeSS's tuned values (:data:`GESS_HPARAMS`) unless ``hparams``
    overrides them. The ``track_*``, ``fidelity_max_epochs``, ``standardize_targets`` and
    ``norm_stats_graphs`` keys are ours, for small profiles (each field's ``doc`` says why).
    :meth:`from_job` re-creates it on the worker."""

    max_epochs: int | None = setting(None, cite=_T8, allowed="> 0 or unset")
    batch_size: int | None = setting(None, cite=_T8, allowed="> 0 or unset")
    iterations_per_epoch: int | None = setting(
        None, cite=_T8 + "; only the O-Feature jobs have them", allowed="> 0 or unset")
    domain_head: str = setting(
        "binary", cite="GeSS's released code (source-vs-target DANN discriminator and CORAL)",
        allowed=DOMAIN_HEADS, doc="subgroups: one domain per source subgroup plus the target (ours)")
    hparams: dict | None = setting(
        None, cite="GeSS's tuned configs (Graph-COM/GESS configs/core_config; GESS_HPARAMS)",
        allowed="a table per algorithm of its gs-algos method's keyword arguments",
        doc="per-algorithm keyword arguments over GeSS's tuned values")
    targets: list[str] | None = setting(
        None, cite="gs-bench (unset: every MoleculeACE target)", allowed="MoleculeACE ChEMBL targets",
        doc="the MoleculeACE stand-in's ChEMBL targets")
    cache_dir: str | None = setting(
        None, cite="gs-bench (unset: <gs-data root>/conformers)", allowed="a path or unset",
        doc="RDKit conformer cache of DrugOOD-3D / MoleculeACE")
    conformer_workers: int = setting(1, cite="gs-bench (not in GeSS)", allowed="> 0",
                                     doc="processes that build the conformers")
    par_label_pool: int | None = setting(
        None, cite="GeSS appendix C.1 (unset: 1000 from each of ood_val and ood_test = 2000)",
        allowed="> 0 or unset", doc="labelled OOD pool of DrugOOD-3D / MoleculeACE; the fidelity "
        "and Track pools follow GeSS table 4")
    qmof_root: str | None = setting(None, cite=_UNSET_CACHE, allowed="a path or unset",
                                    doc="folder of qmof.csv and relaxed_structures/")
    drugood_root: str | None = setting(None, cite=_UNSET_CACHE, allowed="a path or unset",
                                       doc="folder of DrugOOD's LBAP files")
    moleculeace_dir: str | None = setting(
        None, cite="gs-bench (unset: the MoleculeACE package's data)", allowed="a path or unset")
    track_sizes: str = setting(
        "demo", cite="gs-data's demo sizes ('paper': GeSS table 4; 'ci', 'medium': ours)",
        allowed="demo, ci, medium, paper, or a size added to TRACK_SIZES (gs_bench.runners.gess) from Python")
    track_cache_dir: str | None = setting(
        None, cite="gs-bench (unset: gs-data's Track event cache)", allowed="a path or unset")
    track_seed: int = setting(0, cite="gs-bench (not in GeSS)", allowed="an integer",
                              doc="seed of the Track simulation and split")
    track_workers: int | None = setting(
        None, cite="gs-bench (unset: one per CPU core)", allowed="> 0 or unset",
        doc="processes that simulate missing Track events")
    track_batch_size: int | None = setting(
        None, cite=_OURS + "batch_size)", allowed="> 0 or unset",
        doc="batch size of the Track jobs: an event holds hundreds to thousands of hits, and a "
        "few hundred training events in batches of 64 give too few steps in a few epochs")
    track_signal_min_pt_gev: float | None = setting(
        None, cite=_OURS + "every signal muon simulated whatever its pT)", allowed="a number >= 0 or unset",
        doc="Track simulation: a signal decay is kept only if each of its muons has this pT (GeV), "
        "the threshold of the other particles (gs_data TrackSimConfig.signal_min_pt_gev); 1 gives "
        "GeSS table 5's tau -> 3 mu track radius")
    track_signal_event: str | None = setting(
        None, cite=_OURS + "'hard': the hard event's charged particles with the signal)",
        allowed="'hard', 'decay' or unset",
        doc="Track simulation: what a signal event's hard interaction adds to its pileup, every "
        "charged particle of it ('hard') or the signal muons only ('decay', a reading of GeSS's "
        "'signal particles plus backgrounds'; gs_data TrackSimConfig.signal_event)")
    track_max_epochs: int | None = setting(
        None, cite=_OURS + "max_epochs)", allowed="> 0 or unset",
        doc="epochs of the Track jobs (all levels; the TL fine-tuning too)")
    track_edge_features: str | None = setting(
        None, cite=_OURS + "GeSS's edge direction in the coordinates' frame, 'distance_direction')",
        allowed="a gs_models PointCloudConfig.edge_features value or unset",
        doc="what the Track backbones' kNN edges carry: 'distance_direction_beam_abs' writes the "
        "direction in the centre's (r, theta, phi) frame about the beam axis, in absolute value "
        "(issue 29: ci-size EGNN learns the straight tracks in a few epochs with it, not in 8 "
        "with GeSS's frame)")
    track_pt_norm: str | None = setting(
        None, cite=_OURS + "GeSS's Point Transformer block, which has no normalisation)",
        allowed="batch, layer or unset",
        doc="a norm inside each Point Transformer block of the Track jobs (gs_models "
        "PointCloudConfig.pt_norm): with GeSS's all-ones point features the block's output is a "
        "constant plus a small geometric term, and ci-size Point Transformer learns nothing without "
        "it (issue 29)")
    track_pt_delta: str | None = setting(
        None, cite=_OURS + "GeSS's positional term, a linear map of p_i - p_j in the coordinates' "
        "frame)", allowed="position, edge_mlp or unset",
        doc="Point Transformer's positional term in the Track jobs (gs_models "
        "PointCloudConfig.pt_delta): 'edge_mlp' computes it with an MLP of the kNN edges' features "
        "(track_edge_features), so that the attention sees the frame the other backbones read; "
        "with GeSS's term ci-size Point Transformer on Track-Signal ends at 82-86 over seeds 0-2, "
        "with 'edge_mlp' at 89-90 (issue 29)")
    fidelity_max_epochs: int | None = setting(
        None, cite=_OURS + "max_epochs)", allowed="> 0 or unset",
        doc="epochs of the fidelity-shift jobs: the stand-in's 249 training molecules make 4 steps "
        "per epoch in batches of 64, at about a second an epoch against 25-70 s for Track")
    standardize_targets: bool | None = setting(
        None, cite=_OURS + "on for the molecular stand-in, off for QMOF as GeSS's code; "
        "standardize_default)", allowed=(True, False, None),
        doc="regression targets standardised on train, outputs mapped back to eV "
        "(gs_algos.TrainConfig.standardize_targets)")
    norm_stats_graphs: int = setting(
        0, cite="ours (GeSS's code does not: 0 = off)", allowed=">= 0",
        doc="batch-norm statistics recomputed from up to this many training graphs before every "
        "evaluation (gs_algos.TrainConfig.norm_stats_graphs, 'precise BN')")
    share_pretraining: bool = setting(
        True, cite="gs-bench (the results are the same either way)", allowed=(True, False),
        doc="the TL rows of a grid point share one ERM pre-training in <results>/members")
    train_events: int | None = setting(
        None, cite=_OURS + "the whole train part)", allowed="> 0 or unset",
        doc="train on a seeded random subset of this many training events (the same subset for "
        "every seed and algorithm; every other part unchanged): the points of a learning curve "
        "over training size on the same test events (issue 53)")
    test_scoring: str = setting(
        "every-epoch", cite="GeSS's code (GESS/core/pipelines/basic_pipeline.py evaluates every part "
        "every epoch)", allowed=TEST_SCORINGS,
        doc="selected (ours): train, Test-ID and Test-OOD are scored once per selection, with the "
        "weights of the epoch Val-ID / Val-OOD selected (gs_algos TrainConfig.final_parts), "
        "instead of every epoch: the same table values at a fraction of the evaluation cost "
        "(the medium profile's thousands of test events)")
    par_label_draw: str = setting(
        "gess", cite="GeSS appendix C.1 (half of N from each of the pool's Val-OOD and Test-OOD "
        "parts; DrugOOD-3D and MoleculeACE)", allowed=PAR_LABEL_DRAWS,
        doc="uniform: N from the whole pool (ours)")

    def __post_init__(self) -> None:
        check_positive(self, "max_epochs", "batch_size", "iterations_per_epoch",
                       "conformer_workers", "par_label_pool", "track_workers", "track_batch_size",
                       "fidelity_max_epochs", "track_max_epochs", "train_events")
        v = self.track_signal_min_pt_gev
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0):
            raise ValueError(f"track_signal_min_pt_gev must be a number >= 0 or unset, got {v!r}")
        if self.track_signal_event not in (None, "hard", "decay"):
            raise ValueError(f"track_signal_event must be 'hard', 'decay' or unset, got {self.track_signal_event!r}")
        if (self.track_edge_features, self.track_pt_norm, self.track_pt_delta) != (None, None, None):
            from gs_models.configs import EDGE_FEATURES, NORMS, PT_DELTAS  # torch-free

            check_choice(self, "track_edge_features", EDGE_FEATURES)
            check_choice(self, "track_pt_norm", NORMS)
            check_choice(self, "track_pt_delta", PT_DELTAS)
        if isinstance(self.norm_stats_graphs, bool) or not isinstance(self.norm_stats_graphs, int) \
                or self.norm_stats_graphs < 0:
            raise ValueError(f"norm_stats_graphs must be an integer >= 0 (0: off), got {self.norm_stats_graphs!r}")
        if self.domain_head not in DOMAIN_HEADS:
            raise ValueError(f"domain_head must be 'binary' or 'subgroups', got {self.domain_head!r}")
        if self.test_scoring not in TEST_SCORINGS:
            raise ValueError(f"test_scoring must be 'every-epoch' or 'selected', got {self.test_scoring!r}")
        if self.par_label_draw not in PAR_LABEL_DRAWS:
            raise ValueError(f"par_label_draw must be 'gess' (half of N from each of the pool's "
                             f"Val-OOD and Test-OOD parts) or 'uniform', got {self.par_label_draw!r}")
        if self.track_sizes not in (*_NAMED_TRACK_SIZES, *TRACK_SIZES):
            raise ValueError(f"track_sizes must be 'demo', 'ci', 'medium' or 'paper', got {self.track_sizes!r}")


# ---------------------------------------------------------------------------- algorithms
def algorithm_names() -> list[str]:
    """Algorithms the suite accepts besides ``tl-<N>``: :data:`ALGORITHMS` in GeSS's order,
    then every other graph-level method of gs-algos (e.g. one added with
    :func:`gs_algos.register_method`; read at call time, no second list). The registry is read
    only when this process has imported :mod:`gs_algos.methods`, where a method can be
    registered (nothing registers itself on import): a misspelt algorithm is refused without
    loading torch."""
    import sys

    extra = []
    if "gs_algos.methods" in sys.modules:
        from gs_algos.registry import available_methods

        extra = [m for m in available_methods("graph") if m not in ALGORITHMS]
    return [*ALGORITHMS, *extra, NEGATIVE_CONTROL]


def tl_size(algorithm: str) -> int | None:
    """N of ``tl-<N>`` (Par-Label fine-tuning), ``None`` for other algorithms."""
    m = _TL.match(algorithm)
    return int(m.group(1)) if m else None


def level_of(algorithm: str) -> str:
    """GeSS information level of an algorithm (section 4.1)."""
    if tl_size(algorithm) is not None:
        return "par-label"
    if algorithm == NEGATIVE_CONTROL:
        return "no-info"
    return "o-feature" if algorithm in O_FEATURE else "no-info"


def algorithm_rank(a: str) -> tuple[int, int]:
    """Sort key of the report rows: GeSS table 3's order, ``tl-<N>`` last by N."""
    n = tl_size(a)
    if n is not None:
        return (len(ALGORITHMS), n)
    if a == NEGATIVE_CONTROL:
        return (-1, 0)
    return (ALGORITHMS.index(a) if a in ALGORITHMS else len(ALGORITHMS) - 1, 0)


def check_algorithm(a: str) -> None:
    """Raise :class:`SuiteConfigError` unless ``a`` is an algorithm of the suite."""
    if a == "finetune":
        raise SuiteConfigError("algorithm 'finetune' was replaced by tl-100, tl-500 and tl-1000 "
                               "(GeSS's three Par-Label rows; any tl-<N> is accepted)")
    if a not in algorithm_names() and tl_size(a) is None:
        raise SuiteConfigError(
            f"unknown algorithm {a!r}{did_you_mean(a, algorithm_names())}; accepted: "
            f"{', '.join(algorithm_names())}, tl-<N> (e.g. "
            f"{', '.join(PAPER_TL)})"
        )


def _method_class(algorithm: str):
    from gs_algos.methods import METHODS

    return METHODS["erm" if tl_size(algorithm) is not None or algorithm == NEGATIVE_CONTROL else algorithm]


def check_hparams(hparams: Mapping[str, Any] | None) -> None:
    """``hparams``: a table per known algorithm, of its gs-algos method's parameters."""
    if hparams is None:
        return
    for algo, kwargs in hparams.items():
        check_algorithm(algo)
        if not isinstance(kwargs, dict):
            raise SuiteConfigError(f"settings.hparams.{algo} must be a table of parameters, got {kwargs!r}")
        accepted = [p for p in inspect.signature(_method_class(algo).__init__).parameters if p != "self"]
        for key in kwargs:
            if key not in accepted:
                raise SuiteConfigError(
                    f"settings.hparams.{algo}.{key}: not a parameter of {_method_class(algo).__name__}; "
                    f"accepted: {', '.join(accepted) or 'none'}"
                )


def method_params(name: str, algorithm: str,
                  settings: Settings | Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """Keyword arguments of the gs-algos method of ``algorithm`` on dataset ``name`` and
    their provenance: ``"gess"`` (the authors' tuned values), ``"ours"`` (gs-algos
    defaults, no GeSS value for this case) or ``"suite"`` (``[settings.hparams]``)."""
    st = Settings.from_mapping(settings)
    case = DATASETS[name]
    base: dict[str, Any] = {}
    # GeSS's formulations of the methods whose released code differs from ours
    if algorithm == "dann":
        base.update(variant="gess", source_domains=st.domain_head == "subgroups")
    elif algorithm == "coral":
        base.update(source_domains=st.domain_head == "subgroups")
    elif algorithm in ("vrex", "groupdro"):
        base.update(variant="gess")
    tuned = dict(GESS_HPARAMS.get(case.gess_config, {}).get(algorithm, {}))
    source = "gess" if tuned or algorithm in ("erm",) or tl_size(algorithm) is not None else "ours"
    if algorithm == NEGATIVE_CONTROL:
        source = "ours"
    base.update(tuned)
    override = (st.hparams or {}).get(algorithm)
    if override:
        base.update(override)
        source = "suite"
    return base, source


def track_sim_config(settings: Settings | Mapping[str, Any]):
    """The gs-data ``TrackSimConfig`` of the suite's Track settings: gs-data's defaults, with
    ``track_signal_min_pt_gev`` and ``track_signal_event`` when set (both unset: ``None``, the
    defaults, the caches of before)."""
    st = Settings.from_mapping(settings)
    if st.track_signal_min_pt_gev is None and st.track_signal_event is None:
        return None
    from gs_data.track import TrackSimConfig

    kw: dict[str, Any] = {}
    if st.track_signal_min_pt_gev is not None:
        kw["signal_min_pt_gev"] = float(st.track_signal_min_pt_gev)
    if st.track_signal_event is not None:
        kw["signal_event"] = st.track_signal_event
    return TrackSimConfig(**kw)
