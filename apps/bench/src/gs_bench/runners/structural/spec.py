"""The ``structural-shifts`` suite's schema: its methods and model presets, grid axes and typed
settings, and the checks made before any job starts. Imports neither torch nor numba (the
method and strategy registries that :func:`method_names` and :func:`strategy_names` read, and
the data checks of :func:`validate`, are loaded when they run).

:class:`Settings` is the one place a default of the suite is written: every field names its
type, default, accepted values and the source of the default (``dataclasses.fields(Settings)``
metadata ``cite`` / ``allowed`` / ``doc``). The job, the planning hooks and the report read the
typed object (:meth:`Settings.from_job`, :meth:`Settings.from_record`), never the settings dict
with a default of their own.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gs_algos.names import ALIASES as ALGO_ALIASES
from gs_algos.names import (
    DEFAULT_ROBUSTNESS_VARIANT,
    ROBUSTNESS_VARIANTS,
    STRUCTURAL_PROTOCOLS,
    builtin_node_method_names,
)
from gs_bench.names import ROBUSTNESS_FRAMEWORKS, SPLIT_SOURCES
from gs_bench.runner import axis, setting
from gs_bench.runners.common import data_root, dataset_fingerprint, dataset_fingerprints
from gs_bench.suites import (
    MAX_SEEDS,
    DataMissingError,
    SuiteConfig,
    SuiteConfigError,
    TypedGrid,
    TypedSettings,
    check_at_most,
    check_grid,
    check_nonnegative,
    check_positive,
)
from gs_splits.names import DOMAIN_SCOPES, PAPER_SIZES

__all__ = ["LABELS", "PRESETS", "DEFAULT_PRESET", "METHODS", "GOOD_PRESET", "ALIASES",
           "ROBUSTNESS_FRAMEWORKS", "SPLIT_SOURCES", "EARLY_STOP_PRESETS", "SHIFT_ORDER",
           "method_names", "method_label", "strategy_names", "model_preset", "algo_name",
           "canonical_method", "published_name", "Grid", "Settings", "validate", "has_files",
           "check_authors_ratios", "check_authors_files", "uses_authors_masks", "domain_scope"]

log = logging.getLogger("gs_bench.runners.structural")

#: Labels in tables where they differ from the gs-algos name (upper-cased by :func:`method_label`).
LABELS = {"erm": "ERM / SE", "erm+mod": "ERM + mod", "mixup": "Mixup", "natpn": "NatPN",
          "natpe": "NatPE"}
#: Model presets under the "authors" protocol where they differ from :data:`DEFAULT_PRESET`
#: (appendix F: the posterior networks and the "+ mod" models have their own).
PRESETS = {"erm+mod": "structural-shifts-mod", "gpn": "structural-shifts-gpn",
           "natpn": "structural-shifts-natpn", "gpe": "structural-shifts-gpn",
           "natpe": "structural-shifts-natpn"}
#: model preset of a method :data:`PRESETS` does not name
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
    m: (LABELS.get(m, m.upper()), PRESETS.get(m, DEFAULT_PRESET)) for m in _suite_methods()
}
#: gs-models preset of DANN / CORAL / Mixup / EERM under ``robustness_framework = "good"``
GOOD_PRESET = "good-gcn"
# "se" and "se+mod" are the uncertainty view of the "erm" / "erm+mod" jobs (same training):
# gs-algos' aliases (gs_algos.names.ALIASES), and each one's "+mod".
ALIASES = {**ALGO_ALIASES, **{f"{a}+mod": f"{m}+mod" for a, m in ALGO_ALIASES.items()}}
#: preset of the "early-stop" protocol (our earlier layer order) where it differs
EARLY_STOP_PRESETS = {
    "structural-shifts-base": "structural-shifts-base-early-stop",
    "structural-shifts-mod": "structural-shifts-mod-early-stop",
}
#: the paper's shifts in its tables' order; registered strategies follow them
SHIFT_ORDER = ("popularity", "locality", "density", "random")


def method_names() -> list[str]:
    """Methods the suite accepts: :data:`METHODS`, then every other named method of gs-algos
    (read from its registry at call time, so a registered method needs no edit here).

    The built-in names come from :mod:`gs_algos.names` (no torch); the registry is read only
    when this process has imported it: nothing registers itself on import, so a method can be
    registered only through :mod:`gs_algos.node_methods`, and a CLI that never loaded it
    refuses a misspelt method without loading torch (issue 58: 1.6-1.9 s)."""
    import sys

    from gs_algos.names import builtin_node_method_names

    names = [*METHODS, *(m for m in builtin_node_method_names() if m not in METHODS)]
    if "gs_algos.node_methods" in sys.modules:
        from gs_algos.node_methods import available_node_methods

        names += [m for m in available_node_methods() if m not in names]
    return names


def method_label(method: str) -> str:
    """The label of a method in tables (its name for a method :data:`METHODS` does not name)."""
    name = canonical_method(method)
    return METHODS[name][0] if name in METHODS else name


def strategy_names() -> tuple[str, ...]:
    """Split strategies the suite accepts: gs-splits' strategy registry
    (:func:`gs_splits.available_strategies`, the paper's four first), read at call time; the
    built-in names from :mod:`gs_splits.names` without the kernels (numba) where this process
    has not loaded the registry, where alone a strategy can be registered."""
    import sys

    if "gs_splits.strategies" not in sys.modules:
        from gs_splits.names import BUILTIN_STRATEGIES

        return BUILTIN_STRATEGIES
    from gs_splits import available_strategies

    return available_strategies()


def model_preset(method: str, protocol: str = "authors") -> str:
    """The gs-models preset a method trains under ``protocol``."""
    name = canonical_method(method)
    preset = METHODS[name][1] if name in METHODS else DEFAULT_PRESET
    return EARLY_STOP_PRESETS.get(preset, preset) if protocol == "early-stop" else preset


def algo_name(method: str) -> str:
    """The gs-algos named method of a suite method (``erm+mod`` trains as ``erm``)."""
    return canonical_method(method).replace("+mod", "")


def canonical_method(name: str) -> str:
    """The suite method ``name`` stands for (``se`` -> ``erm``, ``se+mod`` -> ``erm+mod``)."""
    return ALIASES.get(name, name)


def published_name(method: str) -> str:
    """The name of a method in the paper's tables (:mod:`gs_bench.published`): ERM's OOD
    detection is the paper's SE (``erm`` -> ``se``, ``erm+mod`` -> ``se+mod``)."""
    return {m: a for a, m in ALIASES.items()}.get(method, method)


def _method_choices() -> list[str]:
    """The ``method`` values the suite accepts: :func:`method_names` and their aliases."""
    return sorted({*method_names(), *ALIASES})


@dataclass(frozen=True)
class Grid(TypedGrid):
    """One grid point of the suite (a job per point and run): the suite file lists several
    values per axis, ``load_suite`` checks their types and :func:`validate` their values (the
    registries of strategies and methods are read when it runs)."""

    dataset: str = axis(doc="a gs-data node-classification dataset (checked with its files)")
    strategy: str = axis(allowed=strategy_names, doc="a gs-splits split strategy")
    ratio: str = axis(allowed=PAPER_SIZES, unknown="unknown ID:OOD ratio {value!r}",
                      doc="the ID:OOD sizes")
    method: str = axis(allowed=_method_choices, unknown="unknown method {value!r} for structural-shifts",
                       doc="a named node method of gs-algos (se: erm's uncertainty view)")


_F = "SS appendix F"
_BY_PROTOCOL = "unset: the protocol's value (gs_algos.TrainConfig.structural_shifts"


@dataclass(frozen=True)
class Settings(TypedSettings):
    """``[settings]`` of the suite, the one place its keys, types and defaults are written
    (strict check in ``load_suite``, the same for command-line overrides). Defaults: appendix
    F of the paper (Adam lr 3e-4, weight decay 1e-5, ensembles of 5, k = 10 domains) and the
    authors' protocol (``protocol = "authors"``: 200 epochs, no early stopping, lowest
    Valid-In loss; see :meth:`gs_algos.TrainConfig.structural_shifts`). ``max_epochs`` /
    ``patience`` left unset take the protocol's values. ``root = "shared"`` reads
    ``$GS_SHARED_DATA``. :meth:`from_job` re-creates it on the worker.

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

    protocol: str = setting(
        "authors", cite="SS sec. 3.1; the authors' code (200 epochs, lowest Valid-In loss)",
        allowed=STRUCTURAL_PROTOCOLS, doc="training protocol (gs_algos.TrainConfig.structural_shifts)")
    split_source: str = setting(
        "seeded", cite="gs-bench (gs-splits, split seed 0; the authors publish 50:50 masks only)",
        allowed=SPLIT_SOURCES, doc="where a job's split comes from")
    lr: float = setting(3e-4, cite=_F + " (Adam)", allowed="> 0")
    weight_decay: float = setting(1e-5, cite=_F, allowed=">= 0")
    max_epochs: int | None = setting(
        None, cite=_BY_PROTOCOL + ": 200 authors, 1000 early-stop)", allowed="1 to 1000000 or unset")
    patience: int | None = setting(
        None, cite=_BY_PROTOCOL + ": none authors, 50 early-stop)", allowed="1 to 1000000 or unset")
    ensemble_size: int = setting(5, cite=_F + " (ensembles of 5)", allowed="1 to 100",
                                 doc="members of DE, GPE and NatPE")
    ensemble_runs: int = setting(1, cite="the authors' code (one 5-member ensemble per cell)",
                                 allowed="1 to 1000", doc="runs of an ensemble")
    posterior_runs: int | None = setting(
        None, cite="unset: seeds (the authors' num_inits of GPN / NatPN is 5, the suite file's)",
        allowed="1 to 1000 or unset", doc="runs of GPN and NatPN")
    robustness_runs: int | None = setting(
        None, cite="gs-bench (unset: seeds; the ci profile runs 1 to fit its time budget)",
        allowed="1 to 1000 or unset", doc="runs of DANN, CORAL, Mixup and EERM")
    share_members: bool = setting(
        True, cite="the authors' code (SE runs 1..3 are DE members 1..3, GPN / NatPN runs the "
        "GPE / NatPE members)", allowed=(True, False),
        doc="train a member once for both methods of its family (<out>/members/)")
    domains: int = setting(10, cite=_F + " (k = 10 domains)", allowed="1 to 10000 (and the graph's nodes)",
                           doc="property domains of DANN, CORAL, Mixup and EERM")
    robustness_variant: str = setting(
        DEFAULT_ROBUSTNESS_VARIANT, cite="SS sec. 4 (the GOOD benchmark's code)",
        allowed=ROBUSTNESS_VARIANTS, doc="formulation of DANN, CORAL, Mixup and EERM")
    robustness_framework: str = setting(
        "paper", cite="SS appendix F and sec. 3.1 (the training of every other method)",
        allowed=ROBUSTNESS_FRAMEWORKS, doc="how DANN, CORAL, Mixup and EERM are trained")
    domain_scope: str | None = setting(
        None, cite=_F + " ('which nodes in the training set belong to which domain'); unset: "
        "in_train with robustness_variant 'good', all with 'ours-v1'", allowed=DOMAIN_SCOPES,
        doc="the nodes the domain bins are cut over")
    skip_missing_datasets: bool = setting(
        False, cite="gs-bench (the paper and full profiles set it)", allowed=(True, False),
        doc="leave out a dataset without its files (a warning) instead of stopping")
    root: str | None = setting(
        None, cite="gs-bench (unset: gs-data's cache)",
        allowed='"shared" or a path', doc="data root (gs_bench.runners.common.data_root)")

    def __post_init__(self) -> None:
        check_positive(self, "lr", "max_epochs", "patience", "ensemble_size", "ensemble_runs",
                       "posterior_runs", "robustness_runs", "domains")
        check_at_most(self, ensemble_size=100, ensemble_runs=MAX_SEEDS, posterior_runs=MAX_SEEDS,
                      robustness_runs=MAX_SEEDS, domains=10_000)
        check_nonnegative(self, "weight_decay")
        for name, accepted in (("protocol", STRUCTURAL_PROTOCOLS), ("split_source", SPLIT_SOURCES),
                               ("robustness_variant", ROBUSTNESS_VARIANTS),
                               ("robustness_framework", ROBUSTNESS_FRAMEWORKS),
                               ("domain_scope", (None, *DOMAIN_SCOPES))):
            value = getattr(self, name)
            if value not in accepted:
                raise ValueError(f"unknown {name} {value!r}; accepted: "
                                 f"{', '.join(a for a in accepted if a is not None)}")

    def train_changes(self) -> dict[str, Any]:
        """The training settings a job passes to :meth:`gs_algos.TrainConfig.structural_shifts`:
        ``lr`` and ``weight_decay``, and ``max_epochs`` / ``patience`` where set (unset: the
        protocol's)."""
        changes = {"lr": self.lr, "weight_decay": self.weight_decay}
        return {**changes, **{k: v for k, v in (("max_epochs", self.max_epochs),
                                                ("patience", self.patience)) if v is not None}}


def validate(config: SuiteConfig) -> dict[str, str]:
    """Check datasets, strategies, ratios and methods before any job starts (the settings'
    values were checked when :class:`Settings` was built); a fingerprint per dataset."""
    check_grid(config, Grid)
    st = Settings.from_config(config)
    if st.split_source == "authors":  # a suite problem: checked before the data, so it shows without it
        check_authors_ratios(config)
    if st.skip_missing_datasets:
        fingerprints, skipped = {}, {}
        for name in config.grid["dataset"]:
            try:
                fingerprints.update(dataset_fingerprints(config.with_overrides(axes={"dataset": [name]})))
            except SuiteConfigError as exc:
                skipped[name] = str(exc)
        if not fingerprints:
            first = next(iter(skipped.values()), "")
            raise DataMissingError(first if len(skipped) == 1 else
                                   f"none of the grid's {len(skipped)} datasets has its files; the first: {first}")
        if skipped:  # one line for all of them (the paper profile skips five on a usual machine)
            log.warning("skipping %d of %d datasets without their files (skip_missing_datasets): %s; "
                        "the first: %s", len(skipped), len(config.grid["dataset"]),
                        ", ".join(skipped), next(iter(skipped.values())))
    else:
        fingerprints = dataset_fingerprints(config)
    if st.split_source in ("authors", "authors-where-published"):
        check_authors_files(config, list(fingerprints), strict=st.split_source == "authors")
    return fingerprints


def has_files(name: str, settings: Settings | Mapping[str, Any]) -> bool:
    """Whether dataset ``name`` has its files under the settings' data root."""
    try:
        dataset_fingerprint(name, Settings.from_mapping(settings).root)
    except SuiteConfigError:
        return False
    return True


def check_authors_ratios(config: SuiteConfig) -> None:
    """``split_source = "authors"`` admits the 50:50 ratio only (the authors' published files)."""
    for r in config.grid["ratio"]:
        if r != "50:50":
            raise SuiteConfigError(
                f"split_source 'authors' has 50:50 splits only (the authors' files); got ratio {r!r}; "
                "'authors-where-published' uses them at 50:50 and gs-splits at the other ratios"
            )


def check_authors_files(config: SuiteConfig, datasets: list[str], strict: bool = True) -> None:
    """``split_source = "authors"``: the authors publish 50:50 splits only; every file must
    be present (the error names the path to place it at). ``strict=False``
    (``"authors-where-published"``): other ratios use gs-splits, so only the 50:50 files are
    checked, and only if the grid has that ratio."""
    from gs_data.splits import authors_split_path

    if strict:
        check_authors_ratios(config)
    if "50:50" not in config.grid["ratio"]:
        return
    root = data_root(Settings.from_config(config).root)
    for name in datasets:
        for strategy in config.grid["strategy"]:
            path = authors_split_path(name, strategy, root)
            if not path.is_file():
                raise DataMissingError(
                    f"split_source 'authors': {path} is missing; copy the authors' "
                    f"datasets/<name>/splits/{strategy}.pth there"
                )


def uses_authors_masks(settings: Settings | Mapping[str, Any], ratio: str) -> bool:
    """Whether a job with these settings and ID:OOD ratio reads the authors' published masks."""
    source = Settings.from_mapping(settings).split_source
    return source == "authors" or (source == "authors-where-published" and ratio == "50:50")


def domain_scope(settings: Settings | Mapping[str, Any]) -> str:
    """The nodes the domain bins are cut over: setting ``domain_scope``, else ``"in_train"``
    for the ``"good"`` robustness variant and ``"all"`` for ``"ours-v1"``."""
    st = Settings.from_mapping(settings)
    if st.domain_scope is not None:
        return str(st.domain_scope)
    return "all" if st.robustness_variant == "ours-v1" else "in_train"
