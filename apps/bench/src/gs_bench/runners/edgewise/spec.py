"""The ``edgewise`` suite's schema: its models, grid axes and typed settings, and the checks
made before any job starts. Imports neither torch nor numba (the split and structured-variant
checks of :func:`validate` load gs-data / gs-models, which do, when they run).

:class:`Settings` is the one place a default of the suite is written: every field names its
type, default, accepted values and the source of the default (``dataclasses.fields(Settings)``
metadata ``cite`` / ``allowed`` / ``doc``). The job and the report read the typed object
(:meth:`Settings.from_job`, :meth:`Settings.from_record`), never the settings dict with a
default of their own.
"""

from __future__ import annotations

from dataclasses import dataclass

from gs_algos.names import STOPPING_RULES
from gs_bench.runner import axis, setting
from gs_bench.runners.common import data_root, dataset_fingerprints
from gs_bench.suites import (
    SuiteConfig,
    SuiteConfigError,
    TypedGrid,
    TypedSettings,
    check_choice,
    check_grid,
    check_nonnegative,
    check_positive,
)
from gs_models.configs import STRUCTURED_VARIANTS

__all__ = ["MODELS", "STRUCTURED", "FOLDS", "Grid", "Settings", "validate", "check_splits"]

MODELS = {
    "gcn": "edgewise-gcn",
    "gat": "edgewise-gat",
    "gmnn": "edgewise-gmnn",
    "epfgnn": "edgewise-epfgnn",
}
#: structured models: EM training (appendix C.2) and their own edge marginals
STRUCTURED = ("gmnn", "epfgnn")
#: a split's three folds over the non-test nodes; fold f validates, the others train (C.1)
FOLDS = (0, 1, 2)

_C2 = "edgewise calibration, appendix C.2"


@dataclass(frozen=True)
class Grid(TypedGrid):
    """One grid point of the suite (a job per point and seed): the suite file lists several
    values per axis, ``load_suite`` checks their types and :func:`validate` their values."""

    dataset: str = axis(doc="a gs-data node-classification dataset (checked with its files)")
    model: str = axis(allowed=MODELS, doc="the paper's model presets")
    split: int = axis(doc="one of the dataset's edgewise splits (checked against its files)")
    fold: int = axis(allowed=FOLDS, doc="the fold that validates; the two others train (C.1)")


@dataclass(frozen=True)
class Settings(TypedSettings):
    """``[settings]`` of the suite, the one place its keys, types and defaults are written
    (strict check in ``load_suite``, the same for command-line overrides). Defaults: appendix
    C.2 (Adam lr 0.01, weight decay 5e-4, up to 2000 epochs, patience 100, 15 ECE bins), the
    authors' stopping rule (``"acc_or_nll"``, their ``src/train.py``; ``"patience"`` is ours)
    and row-normalised features (their ``NormalizeFeatures``). GMNN / EPFGNN schedules:
    :class:`gs_algos.EMConfig`; ``structured_variant``: ``"released"`` (the authors' released
    models and EM loops) or ``"ours-v1"`` (our first implementation, the ci run of 14c2e36).
    :meth:`from_job` re-creates it on the worker."""

    lr: float = setting(0.01, cite=_C2 + " (Adam)", allowed="> 0")
    weight_decay: float = setting(5e-4, cite=_C2, allowed=">= 0")
    max_epochs: int = setting(2000, cite=_C2, allowed="> 0")
    patience: int = setting(100, cite=_C2, allowed="> 0")
    bins: int = setting(15, cite="edgewise calibration, sec. 4, eq. 1 (the paper's m)",
                        allowed="> 0", doc="ECE and reliability bins")
    stopping: str = setting(
        "acc_or_nll", cite="the authors' src/train.py (patience resets on accuracy or NLL)",
        allowed=STOPPING_RULES, doc="early-stopping rule (gs_algos.TrainConfig.stopping)")
    normalize_features: bool = setting(
        True, cite="the authors' src/data/data_utils.py (NormalizeFeatures)",
        allowed=(True, False), doc="row-normalise the node features")
    structured_variant: str = setting(
        "released", cite="the authors' released code (hans66hsu/structured_uncertainty_metrics)",
        allowed=STRUCTURED_VARIANTS, doc="GMNN / EPFGNN formulation")
    root: str | None = setting(
        None, cite="gs-bench (unset: gs-data's cache)",
        allowed='"shared" or a path', doc="data root (gs_bench.runners.common.data_root)")

    def __post_init__(self) -> None:
        check_positive(self, "lr", "max_epochs", "patience", "bins")
        check_nonnegative(self, "weight_decay")
        if self.stopping not in STOPPING_RULES:
            raise ValueError(f"stopping must be one of {', '.join(map(repr, STOPPING_RULES))}, "
                             f"got {self.stopping!r}")
        check_choice(self, "structured_variant", STRUCTURED_VARIANTS)


def validate(config: SuiteConfig) -> dict[str, str]:
    """The grid's models and folds (:class:`Grid`'s accepted values), the datasets and their
    splits; a fingerprint per dataset (the settings, the structured variant among them, were
    checked when :class:`Settings` was built)."""
    check_grid(config, Grid)
    Settings.from_config(config)  # a config built by hand: its settings' checks
    fingerprints = dataset_fingerprints(config)
    check_splits(config)
    return fingerprints


def check_splits(config: SuiteConfig) -> None:
    """Before any job: every split of the grid fits its graph (a split file written for another
    graph stops the run with an error naming the file)."""
    import gs_data

    root = data_root(Settings.from_config(config).root)
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
