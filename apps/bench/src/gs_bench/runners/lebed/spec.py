"""The ``lebed`` suite's schema: its names, grid axes and typed settings, and the checks made
before any job starts. Imports neither torch nor numba (the generator check in
:func:`validate` loads gs-data's LeBed module, which does, when it runs).

:class:`Settings` is the one place a default of the suite is written: every field names its
type, default, accepted values and the source of the default (``dataclasses.fields(Settings)``
metadata ``cite`` / ``allowed`` / ``doc``). The job and the report read the typed object
(:meth:`Settings.from_job`), never the settings dict with a default of their own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gs_bench.runner import axis, setting
from gs_bench.runners.common import dataset_fingerprint, dataset_fingerprints
from gs_bench.suites import (
    SuiteConfig,
    SuiteConfigError,
    TypedGrid,
    TypedSettings,
    check_grid,
    check_nonnegative,
    check_positive,
)

#: the values of gs_data.lebed.GENERATORS, gs_algos.lebed.LeBedConfig.epsilon_mode and
#: .structure_from, written here so that ``gs-bench list lebed`` shows them without importing
#: PyTorch (tests/test_suite_packages.py checks they are those tables' values)
GENERATORS = ("eerm-gat", "eerm-gcn", "approximation")
EPSILON_MODES = ("absolute", "relative")
STRUCTURE_FROM = ("train_forward", "eval_forward")

__all__ = ["SHIFTS", "DOMAIN_GROUPS", "MODELS", "ESTIMATORS", "ORIENT", "PROTOCOLS", "DOMAIN_PRETRAIN",
           "SETTING_KEYS", "Grid", "Settings", "validate", "applicable", "lebed_config", "shift_of"]

SHIFTS = ("feature", "domain", "temporal")
#: domain-shift groups (LeBed Table 1: ACM / DBLP / Citation with one feature space); the
#: dataset axis names the source (training) domain, the others are test domains too
DOMAIN_GROUPS = (
    ("acmv9", "citationv1", "dblpv7"),  # ACDNE versions (real files in ../shared/datasets)
    ("udagcn-acmv9", "udagcn-citationv2", "udagcn-dblpv8"),  # the versions LeBed names
)
MODELS = ("gcn", "sage", "gat", "gin", "mlp")
ESTIMATORS = ("lebed", "conf", "entropy", "atc_mc", "atc_ne", "thr_0.7", "thr_0.8", "thr_0.9")
#: +1 where a score grows with the error, -1 where it falls (our rho is computed on
#: orientation-corrected scores; see the package docstring)
ORIENT = {"lebed": 1, "conf": -1, "entropy": 1, "atc_mc": 1, "atc_ne": 1, "thr_0.7": 1, "thr_0.8": 1, "thr_0.9": 1}
#: ``lebed_protocol``: "authors" (their ``param_space.txt`` per (dataset, model)) or "legacy"
PROTOCOLS = ("authors", "legacy")
SETTING_KEYS = {
    # suite setting -> LeBedConfig field (overrides of the protocol's per-(dataset, model) values)
    "lebed_lr": "lr",
    "lebed_weight_decay": "weight_decay",
    "lebed_max_steps": "max_steps",
    "lebed_min_steps": "min_steps",
    "lebed_epsilon": "epsilon",
    "lebed_epsilon_mode": "epsilon_mode",
    "lebed_structure_from": "structure_from",
}

_PRETRAIN = "the authors' pretrain-lebed.py"
_PRETRAIN_DOMAIN = "the authors' pretrain_gnn_domain.py"
#: ``domain_pretrain``: "induced" (the authors' subgraphs induced by the train / validation
#: masks) or "masks" (the masks on the whole source graph, UDAGCN's protocol)
DOMAIN_PRETRAIN = ("induced", "masks")
_RETRAIN = ("unset: the lebed_protocol's value (the authors' param_space.txt per (dataset, "
            "model), gs_algos.lebed.authors_config)")


@dataclass(frozen=True)
class Grid(TypedGrid):
    """One grid point of the suite (a job per point and seed): the suite file lists several
    values per axis, ``load_suite`` checks their types and :func:`validate` their values.
    ``shard`` splits one long job into resumable pieces (every ``shards``-th test graph); a
    grid without it runs shard 0 of 1, and its jobs' keys hold no shard."""

    dataset: str = axis(doc="a gs-data dataset: a domain-shift source, OGB-arxiv, or any other "
                            "(the feature shift)")
    shift: str = axis(allowed=SHIFTS, doc="the LeBed shift (Tables 2-4)")
    model: str = axis(allowed=MODELS, doc="the LeBed preset lebed-<model>")
    shard: int = axis(0, doc="which of the setting shards' pieces (checked against it)")


@dataclass(frozen=True)
class Settings(TypedSettings):
    """``[settings]`` of the suite, the one place its keys, types and defaults are written
    (strict check in ``load_suite``, the same for command-line overrides). Defaults: section 3
    of the paper (20 noise + 20 masking levels, 30 graphs per domain / period and
    perturbation), EERM's GAT generator, the authors' pre-training (``pretrain-lebed.py``: Adam
    lr 1e-3, weight decay 5e-4, 200 epochs) and re-training protocol (``lebed_protocol =
    "authors"``: their ``param_space.txt`` per (dataset, model); ``"legacy"`` is our former
    one). The ``lebed_*`` keys left unset take the protocol's values; ``<shift>_models``
    restricts the models of one shift; ``test_graphs`` scores an evenly spread subset of the
    test set (unset: every graph). :meth:`from_job` re-creates it on the worker."""

    generator: str = setting(
        "eerm-gat", cite="LeBed sec. 3.1 (EERM environments; the authors' gnn_gen='gat')",
        allowed=GENERATORS, doc="generator of the feature-shift environments")
    noise_levels: int = setting(
        20, cite="LeBed sec. 3.1 (20 Gaussian-noise levels per environment)", allowed="> 0")
    mask_levels: int = setting(
        20, cite="LeBed sec. 3.1 (20 feature-masking levels per environment)", allowed="> 0")
    domain_graphs: int = setting(
        30, cite="LeBed sec. 3.1, Table 3 (30 graphs per domain and perturbation)", allowed="> 0")
    temporal_graphs: int = setting(
        30, cite="LeBed sec. 3.1, Table 4 (30 graphs per period and perturbation)", allowed="> 0")
    max_epochs: int = setting(200, cite=_PRETRAIN, allowed="> 0", doc="pre-training epochs")
    patience: int | None = setting(
        None, cite=_PRETRAIN + " (no early stop)", allowed="> 0 or unset",
        doc="pre-training early-stopping patience")
    pretrain_lr: float = setting(1e-3, cite=_PRETRAIN + " (Adam)", allowed="> 0")
    pretrain_weight_decay: float = setting(5e-4, cite=_PRETRAIN, allowed=">= 0")
    domain_pretrain: str = setting(
        "induced", cite=_PRETRAIN_DOMAIN + ":42-43 (induced/train_sub.pt trains, val_sub.pt selects)",
        allowed=DOMAIN_PRETRAIN,
        doc="domain shift: pre-train on the subgraphs induced by the source's train / validation "
            "masks (the authors'), or with the masks on the whole source graph (UDAGCN's, our "
            "former protocol)")
    domain_pretrain_lr: float = setting(
        3e-3, cite=_PRETRAIN_DOMAIN + " (its --lr default; Adam)", allowed="> 0",
        doc="domain shift: pre-training learning rate (the feature and temporal shifts use pretrain_lr)")
    domain_pretrain_weight_decay: float = setting(
        5e-4, cite=_PRETRAIN_DOMAIN + " (its --wd default)", allowed=">= 0",
        doc="domain shift: pre-training weight decay (the others use pretrain_weight_decay)")
    lebed_protocol: str = setting(
        "authors", cite="LeBed appendix (the authors' param_space.txt)", allowed=PROTOCOLS,
        doc="re-training settings: the authors' per (dataset, model), or our former ones")
    lebed_lr: float | None = setting(None, cite=_RETRAIN, allowed="> 0 or unset")
    lebed_weight_decay: float | None = setting(None, cite=_RETRAIN, allowed=">= 0 or unset")
    lebed_max_steps: int | None = setting(None, cite=_RETRAIN, allowed="> 0 or unset")
    lebed_min_steps: int | None = setting(None, cite=_RETRAIN, allowed=">= 0 or unset")
    lebed_epsilon: float | None = setting(None, cite=_RETRAIN + "; LeBed eq. 8",
                                          allowed="> 0 or unset")
    lebed_epsilon_mode: str | None = setting(
        None, cite=_RETRAIN, allowed=f"{', '.join(EPSILON_MODES)} or unset")
    lebed_structure_from: str | None = setting(
        None, cite=_RETRAIN, allowed=f"{', '.join(STRUCTURE_FROM)} or unset")
    shards: int = setting(1, cite="gs-bench (not in the paper)", allowed="> 0",
                          doc="pieces one job's test graphs are split into (grid axis shard)")
    test_graphs: int | None = setting(
        None, cite="gs-bench (not in the paper: unset scores every test graph)",
        allowed="> 0 or unset", doc="an evenly spread subset of the test set")
    feature_models: list[str] | None = setting(
        None, cite="gs-bench (unset: every model of the grid)", allowed=MODELS)
    domain_models: list[str] | None = setting(
        None, cite="gs-bench (unset: every model of the grid)", allowed=MODELS)
    temporal_models: list[str] | None = setting(
        None, cite="gs-bench (unset: every model of the grid)", allowed=MODELS)
    root: str | None = setting(
        None, cite="gs-bench (unset: gs-data's cache)",
        allowed='"shared" or a path', doc="data root (gs_bench.runners.common.data_root)")

    def __post_init__(self) -> None:
        check_positive(self, "noise_levels", "mask_levels", "domain_graphs", "temporal_graphs",
                       "max_epochs", "patience", "pretrain_lr", "domain_pretrain_lr", "lebed_lr", "lebed_max_steps",
                       "lebed_epsilon", "shards", "test_graphs")
        check_nonnegative(self, "pretrain_weight_decay", "domain_pretrain_weight_decay",
                          "lebed_weight_decay", "lebed_min_steps")
        if self.domain_pretrain not in DOMAIN_PRETRAIN:
            raise ValueError(f"domain_pretrain {self.domain_pretrain!r} is not accepted; "
                             f"choose one of {', '.join(DOMAIN_PRETRAIN)}")
        if self.lebed_protocol not in PROTOCOLS:
            raise ValueError(f"lebed_protocol {self.lebed_protocol!r} is not accepted; "
                             f"choose one of {', '.join(PROTOCOLS)}")
        if not isinstance(self.shards, int) or isinstance(self.shards, bool):
            raise ValueError(f"shards must be a positive integer, got {self.shards!r}")
        for shift in SHIFTS:
            bad = [m for m in self.models_of(shift) or () if m not in MODELS]
            if bad:
                raise ValueError(f"{shift}_models: unknown model(s) {bad}; accepted: {', '.join(MODELS)}")

    def models_of(self, shift: str) -> list[str] | None:
        """``<shift>_models``: the models the shift runs with (``None``: every model)."""
        return getattr(self, f"{shift}_models", None)

    def retraining_overrides(self) -> dict[str, Any]:
        """The ``lebed_*`` settings that are set, as ``LeBedConfig`` field -> value."""
        return {f: getattr(self, key) for key, f in SETTING_KEYS.items() if getattr(self, key) is not None}


def validate(config: SuiteConfig) -> dict[str, str]:
    """The grid's shifts, models and shards, the generator, and the datasets (present, in the
    right domain group); a fingerprint per dataset (a domain-shift source's includes its
    sibling domains', which are test graphs too)."""
    check_grid(config, Grid)
    st = Settings.from_config(config)
    bad_shards = [v for v in config.grid.get("shard", [0])
                  if not (isinstance(v, int) and 0 <= v < st.shards)]
    if bad_shards:
        raise SuiteConfigError(f"shard values {bad_shards} must be integers in [0, shards={st.shards})")
    if st.generator not in GENERATORS:
        raise SuiteConfigError(
            f"generator {st.generator!r} is not accepted; choose one of {', '.join(GENERATORS)}"
        )
    for d in config.grid["dataset"]:  # the re-training settings of every job, built once here
        for m in config.grid["model"]:
            try:
                lebed_config(d, m, st)
            except ValueError as exc:  # e.g. lebed_epsilon_mode = "rel", min_steps > max_steps
                raise SuiteConfigError(f"lebed re-training settings of {d} / {m}: {exc}") from None
    if config.grid["shift"] == ["temporal"] and not any(is_temporal(d) for d in config.grid["dataset"]):
        raise SuiteConfigError("the temporal shift needs OGB-arxiv in the dataset axis (ogbn-arxiv)")
    fingerprints = dataset_fingerprints(config)
    if "feature" in config.grid["shift"] and "domain" not in config.grid["shift"]:
        grouped = [d for d in config.grid["dataset"] if domain_group(d) is not None]
        if grouped:
            raise SuiteConfigError(
                f"dataset(s) {', '.join(grouped)} belong to a domain-shift group and run only with "
                "shift = \"domain\"; the feature shift takes the other datasets"
            )
    if "domain" in config.grid["shift"]:
        sources = [d for d in config.grid["dataset"] if domain_group(d) is not None]
        # beside other shifts (e.g. the ci grid run with --datasets planetoid-cora) the domain
        # points are only left out, as applicable() does; alone, the grid would be empty
        if not sources and config.grid["shift"] == ["domain"]:
            raise SuiteConfigError(
                "the domain shift needs a source domain in the dataset axis; accepted: "
                + ", ".join(d for g in DOMAIN_GROUPS for d in g)
            )
        for d in sources:  # the sibling domains are test graphs: they must exist too
            siblings = [s for s in domain_group(d) if s != d.lower()]
            fps = [dataset_fingerprint(s, st.root) for s in siblings]
            fingerprints[d] = ":".join([fingerprints[d], *fps])
    return fingerprints


def lebed_config(dataset: str, model: str, settings: Settings | Mapping[str, Any]):
    """The re-training settings of one job: ``lebed_protocol`` ("authors": their
    ``param_space.txt`` value for (dataset, model); "legacy": our former defaults), then any
    ``lebed_*`` override of :data:`SETTING_KEYS`."""
    from gs_algos.lebed import LeBedConfig, authors_config

    st = Settings.from_mapping(settings)  # an unknown lebed_protocol fails here
    cfg = authors_config(dataset, model) if st.lebed_protocol == "authors" else LeBedConfig.legacy()
    changes = st.retraining_overrides()
    if changes:
        cfg = cfg.with_changes(**changes, source=cfg.source + " + suite overrides " + ", ".join(
            f"{k}={v}" for k, v in changes.items()))
    return cfg


def domain_group(name: str) -> tuple[str, ...] | None:
    """The domain-shift group ``name`` belongs to (``None``: none)."""
    for group in DOMAIN_GROUPS:
        if name.lower() in group:
            return group
    return None


def is_temporal(name: str) -> bool:
    """Whether ``name`` is OGB-arxiv (the temporal shift's dataset)."""
    return "arxiv" in name.lower()


def applicable(point: Grid | Mapping[str, Any], settings: Settings | Mapping[str, Any] | None = None) -> bool:
    """The grid points that are LeBed settings: the domain shift from a dataset of a domain
    group (Table 3), the temporal shift on OGB-arxiv (Table 4), the feature shift on the other
    datasets (Table 2); ``<shift>_models`` (e.g. ``domain_models = ["gcn"]``) restricts the
    models of one shift."""
    point = Grid.from_mapping(point)
    shift = shift_of(point)
    allowed = Settings.from_mapping(settings).models_of(shift)
    if allowed is not None and point.model not in allowed:
        return False
    in_group = domain_group(str(point.dataset)) is not None
    temporal = is_temporal(str(point.dataset))
    if shift == "domain":
        return in_group
    if shift == "temporal":
        return temporal
    return not in_group and not temporal


def shift_of(point: Grid) -> str:
    """The shift of a grid point (``feature`` for a point written by hand without one)."""
    return point.shift or "feature"
