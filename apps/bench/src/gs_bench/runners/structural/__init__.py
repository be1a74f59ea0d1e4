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

The suite is a package (issue 31): :mod:`.spec` (methods, presets, ``Grid``, the typed
``Settings`` that hold every default, the checks made before any job starts; no torch),
:mod:`.plan` (runs per grid point, job order), :mod:`.job` (``run_job`` on the typed settings,
on a worker), :mod:`.pictures` (the split a job used, stored by the job and drawn by the
report), :mod:`.report` (tables, paragraphs and figures from records only) and :mod:`.summary`
(the average-rank and +mod tables). This module keeps the names the single-file runner had and
defines :data:`RUNNER`.
"""

from __future__ import annotations

from gs_bench.runner import SuiteRunner
from gs_bench.runners.structural.job import (
    RUN_COUNT_SETTINGS,
    load_data,
    member_cache,
    run_job,
    split_data,
)
from gs_bench.runners.structural.pictures import (
    MASKS_READ,
    PICTURE_DIR,
    PICTURE_MAX_NODES,
    SPLIT_RECORD_VERSION,
    notes,
    read_picture,
    split_blocks,
    split_figure_notes,
    split_figures,
    split_record,
)
from gs_bench.runners.structural.plan import max_runs, order_jobs, runs
from gs_bench.runners.structural.report import (
    OFF_THRESHOLD,
    ROBUSTNESS_ROWS,
    figures,
    off_cells,
    paper_cells,
    paragraphs,
    pub_cell,
    split_table,
    tables,
)
from gs_bench.runners.structural.spec import (
    ALIASES,
    DEFAULT_PRESET,
    EARLY_STOP_PRESETS,
    GOOD_PRESET,
    LABELS,
    METHODS,
    PRESETS,
    ROBUSTNESS_FRAMEWORKS,
    SHIFT_ORDER,
    SPLIT_SOURCES,
    Grid,
    Settings,
    algo_name,
    canonical_method,
    check_authors_files,
    check_authors_ratios,
    domain_scope,
    has_files,
    method_label,
    method_names,
    model_preset,
    published_name,
    strategy_names,
    uses_authors_masks,
    validate,
)
from gs_bench.runners.structural.summary import (
    MOD_ALPHA,
    RANK_DETECT,
    RANK_ROBUST,
    average_ranks,
    cell_values,
    mod_counts,
    ood_auroc,
    rank_values,
    summary_tables,
)

__all__ = ["METHODS", "DEFAULT_PRESET", "GOOD_PRESET", "ALIASES", "ROBUSTNESS_FRAMEWORKS",
           "SPLIT_SOURCES", "MASKS_READ", "Grid", "Settings", "validate", "method_names", "method_label",
           "strategy_names", "model_preset", "canonical_method", "runs", "max_runs", "order_jobs",
           "uses_authors_masks", "domain_scope", "load_data", "split_data", "run_job",
           "PICTURE_DIR", "PICTURE_MAX_NODES", "SPLIT_RECORD_VERSION", "split_record",
           "OFF_THRESHOLD", "tables", "paper_cells", "off_cells", "paragraphs", "figures",
           "split_figures", "notes", "split_figure_notes", "split_table", "RANK_ROBUST",
           "RANK_DETECT", "MOD_ALPHA", "average_ranks", "mod_counts", "summary_tables", "RUNNER"]

# the single-file runner's names of its helpers (tests, gs_bench.compare and apps/bench/checks
# read some of them)
_LABELS, _PRESETS, _EARLY_STOP_PRESETS, _SHIFT_ORDER = LABELS, PRESETS, EARLY_STOP_PRESETS, SHIFT_ORDER
_ROBUSTNESS_ROWS, _RUN_COUNT_SETTINGS = ROBUSTNESS_ROWS, RUN_COUNT_SETTINGS
_canonical_method, _algo_name, _published_name, _has_files = canonical_method, algo_name, published_name, has_files
_check_authors_ratios, _check_authors_files = check_authors_ratios, check_authors_files
_load, _split, _member_cache = load_data, split_data, member_cache
_ood_auroc, _pub_cell, _cell_values, _ranks = ood_auroc, pub_cell, cell_values, rank_values
_split_blocks, _read_picture = split_blocks, read_picture

RUNNER = SuiteRunner(
    name="structural-shifts", module=__name__, Grid=Grid, Settings=Settings,
    validate=validate, run_job=run_job, tables=tables,
    figures=figures, paragraphs=paragraphs, notes=notes,
    runs=runs, max_runs=max_runs, order_jobs=order_jobs,
    # "se" / "se+mod" are the uncertainty view of the "erm" / "erm+mod" jobs: listed beside
    # them, planned once (issue 56 QA B7)
    value_aliases={"method": ALIASES},
)
