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

The suite is a package (issue 31): :mod:`.spec` (names, GeSS's tuned hyperparameters,
``Grid``, the typed ``Settings`` that hold every default; no torch), :mod:`.checks` (the checks
made before any job starts), :mod:`.data` and :mod:`.job` (``run_job`` on the typed settings,
on a worker), :mod:`.baselines` (the trivial baselines a job stores), :mod:`.curves` (learning
curves and their figure), :mod:`.findings` and :mod:`.report` (tables from records only). This
module keeps the names the single-file runner had and defines :data:`RUNNER`.
"""

from __future__ import annotations

from gs_bench.runner import SuiteRunner
from gs_bench.runners.gess.baselines import (
    BASELINE_OF_METRIC,
    HIT_COUNT,
    POSITION_ROWS,
    baseline_values,
    position_baselines,
    trivial_baselines,
)
from gs_bench.runners.gess.checks import (
    data_file,
    data_problem,
    fingerprint,
    par_label_pool_size,
    problems,
    stand_in_of,
    validate,
)
from gs_bench.runners.gess.curves import figures, learning_curves, mean_curve
from gs_bench.runners.gess.data import graph_parts, load_dataset, model_inputs, unit_coordinates
from gs_bench.runners.gess.findings import (
    FINDINGS,
    GUARD_MAE_RATIO,
    GUARD_POINTS,
    NOISE_Z,
    column_learned,
    learned,
    metric_variance,
    orderings,
)
from gs_bench.runners.gess.job import (
    model_overrides,
    order_jobs,
    pool_halves,
    pretrain_cache,
    run_job,
    shuffle_labels,
    standardize_default,
    train_config,
    train_subset,
)
from gs_bench.runners.gess.report import (
    SELECTION_COLUMNS,
    part_sizes,
    same_selection_comment,
    tables,
)
from gs_bench.runners.gess.spec import (
    ALGORITHMS,
    AXIS_ALIASES,
    BACKBONES,
    DATASETS,
    GESS_HPARAMS,
    INAPPLICABLE,
    LEVELS,
    NEGATIVE_CONTROL,
    O_FEATURE,
    PAPER_TL,
    TEST_SCORINGS,
    TRACK_SIZES,
    Grid,
    Settings,
    algorithm_names,
    algorithm_rank,
    check_algorithm,
    check_hparams,
    level_of,
    method_params,
    tl_size,
    track_sizes,
)

__all__ = ["AXIS_ALIASES", "DATASETS", "BACKBONES", "ALGORITHMS", "O_FEATURE", "PAPER_TL", "LEVELS",
           "INAPPLICABLE", "GESS_HPARAMS", "TRACK_SIZES", "Grid", "Settings", "algorithm_names",
           "tl_size", "level_of", "algorithm_rank", "check_algorithm", "check_hparams",
           "method_params", "track_sizes", "validate", "fingerprint", "data_file", "data_problem",
           "par_label_pool_size", "problems", "stand_in_of", "load_dataset", "unit_coordinates",
           "graph_parts", "model_inputs", "standardize_default", "train_config", "model_overrides", "run_job",
           "pool_halves", "pretrain_cache", "order_jobs", "BASELINE_OF_METRIC", "HIT_COUNT",
           "trivial_baselines", "baseline_values", "learning_curves", "mean_curve", "figures",
           "FINDINGS", "GUARD_POINTS", "GUARD_MAE_RATIO", "NOISE_Z", "learned", "column_learned",
           "metric_variance", "orderings", "NEGATIVE_CONTROL", "TEST_SCORINGS", "shuffle_labels", "train_subset",
           "POSITION_ROWS", "position_baselines",
           "SELECTION_COLUMNS", "tables", "same_selection_comment", "part_sizes", "RUNNER"]

# the single-file runner's names of its helpers (tests and apps/bench/checks scripts read some)
_check_algorithm, _check_hparams, _track_sizes, _algo_rank = check_algorithm, check_hparams, track_sizes, algorithm_rank
_fingerprint, _data_file, _stand_in_of = fingerprint, data_file, stand_in_of
_dataset, _parts, _model_inputs, _unit_coordinates = load_dataset, graph_parts, model_inputs, unit_coordinates
_pool_halves, _pretrain_cache = pool_halves, pretrain_cache
_baseline_values, _part_sizes, _mean_curve = baseline_values, part_sizes, mean_curve

RUNNER = SuiteRunner(
    name="gess", module=__name__, Grid=Grid, Settings=Settings,
    validate=validate, run_job=run_job, tables=tables, figures=figures,
    order_jobs=order_jobs, problems=problems, axis_aliases=AXIS_ALIASES,
    # the learning curve over training size: its points are one section of the report
    sweep_settings=("train_events",),
)
