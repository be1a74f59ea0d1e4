"""Runner of the ``edgewise`` suite (edgewise-calibration paper, section 4, appendix C).

One job = (dataset, model, split, fold, seed). A split holds 85 % test nodes and 3 folds
over the other 15 %; fold ``f`` validates and the two other folds train (appendix C.1).
Models are the paper's presets (GCN 2 x 64, GAT 2 layers x 8 heads x 8; dropout 0.5; Adam
lr 0.01, weight decay 5e-4, up to 2000 epochs, patience 100). GCN and GAT give node marginals
and the naive mean-field edge marginals (products of node marginals), as in the paper.

Metrics (fractions): nodewise ECE, edgewise ECE, agree ECE, disagree ECE (15 bins, eq. 1-8),
node accuracy, edge accuracy, NLL and Brier score, homophily of the evaluated edges.

The suite is a package (issue 31): :mod:`.spec` (models, ``Grid``, the typed ``Settings`` that
hold every default, the checks made before any job starts; no torch), :mod:`.job` (``run_job``
on the typed settings, on a worker) and :mod:`.report` (tables and figures from records only).
This module keeps the names the single-file runner had and defines :data:`RUNNER`.
"""

from __future__ import annotations

from gs_bench.runner import SuiteRunner
from gs_bench.runners.edgewise.job import (
    fit_structured,
    load_data,
    pack_bins,
    reliability,
    run_job,
    score,
    split_masks,
    train_config,
)
from gs_bench.runners.edgewise.report import (
    OFF_THRESHOLD,
    ORDER,
    STRUCT_VARIANTS,
    bins_label,
    differences,
    draw_reliability,
    figures,
    metric_values,
    off_cells,
    paper_cell,
    paper_cells,
    table_rows,
    tables,
    unpack_bins,
)
from gs_bench.runners.edgewise.spec import (
    FOLDS,
    MODELS,
    STRUCTURED,
    Grid,
    Settings,
    check_splits,
    validate,
)

__all__ = ["MODELS", "STRUCTURED", "FOLDS", "Grid", "Settings", "validate", "check_splits",
           "split_masks", "load_data", "train_config", "run_job", "score", "fit_structured",
           "reliability", "pack_bins", "ORDER", "STRUCT_VARIANTS", "OFF_THRESHOLD", "paper_cell",
           "metric_values", "table_rows", "tables", "paper_cells", "off_cells", "differences",
           "figures", "bins_label", "unpack_bins", "draw_reliability", "RUNNER"]

# the single-file runner's names of its helpers (tests and apps/bench/checks read some of them)
_check_splits, _split_masks, _load, _score, _fit_structured = check_splits, split_masks, load_data, score, fit_structured
_bins, _pack, _ORDER, _cell, _values, _rows = reliability, pack_bins, ORDER, paper_cell, metric_values, table_rows
_STRUCT_VARIANTS, _bins_text, _unpack, _diagram = STRUCT_VARIANTS, bins_label, unpack_bins, draw_reliability

RUNNER = SuiteRunner(
    name="edgewise", module=__name__, Grid=Grid, Settings=Settings,
    validate=validate, run_job=run_job, tables=tables, figures=figures,
)
