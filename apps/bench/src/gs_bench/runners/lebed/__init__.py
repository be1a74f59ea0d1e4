"""Runner of the ``lebed`` suite (LeBed paper, section 3, tables 2-4, figure 5).

One job = (dataset, shift, model, seed). Shifts: ``feature`` (EERM environments of any graph,
320 test graphs; Table 2), ``domain`` (the dataset names the source domain of an ACM / DBLP /
Citation group; 3 domains x 4 perturbations x 30 = 360 test graphs; Table 3) and ``temporal``
(OGB-arxiv periods, 3 x 4 x 30 = 360 test graphs; Table 4). The model (LeBed preset: 2-layer
encoder, hidden 256, output 32 without activation, linear classifier) is pre-trained as the
authors do (:func:`gs_algos.lebed.pretrain`: the training graph, checkpoint with the best
accuracy on the validation graph), its initial parameters are kept, and on every unlabeled test
graph we compute the true test error and eight label-free scores: LeBed (eq. 4-8, re-training
in :mod:`gs_algos.lebed` with the authors' per-(dataset, model) settings) and the appendix-C
baselines ConfScore, Entropy, ATC-MC, ATC-NE (thresholds fitted on the validation graph), and
the threshold method with tau = 0.7 / 0.8 / 0.9. Per method we report Spearman rho and the R^2
of a linear fit between score and true error across the test graphs (section 3.1), rho per
perturbation type, and LeBed's stopping steps.

Sign convention: our rho is computed on orientation-corrected scores (each score grows with
the error; :data:`ORIENT`), so a good estimator has rho > 0. The paper prints raw rho of each
score against the error: its ConfScore / ATC / threshold columns (scores that fall as the error
grows) are negative when they work, and the authors' "Entropy" is the negative entropy.
:func:`gs_bench.published.lebed_published` converts the paper's values to our convention
(:data:`gs_bench.published.LEBED_SIGN`) so the two columns compare.

The suite is a package (issue 31): :mod:`.spec` (names, ``Grid``, the typed ``Settings`` that
hold every default, the checks made before any job starts; no torch), :mod:`.job` (``run_job``
on the typed settings, on a worker) and :mod:`.report` (tables and figures from records only).
This module keeps the names the single-file runner had and defines :data:`RUNNER`.
"""

from __future__ import annotations

from gs_bench.runner import SuiteRunner
from gs_bench.runners.lebed.job import run_job, subsample, test_graph_set
from gs_bench.runners.lebed.report import (
    LABELS,
    figures,
    paper_family,
    pool_shards,
    seed_cell,
    tables,
)
from gs_bench.runners.lebed.spec import (
    DOMAIN_GROUPS,
    ESTIMATORS,
    MODELS,
    ORIENT,
    PROTOCOLS,
    SETTING_KEYS,
    SHIFTS,
    Grid,
    Settings,
    applicable,
    domain_group,
    is_temporal,
    lebed_config,
    validate,
)

__all__ = ["SHIFTS", "DOMAIN_GROUPS", "MODELS", "ESTIMATORS", "ORIENT", "PROTOCOLS", "SETTING_KEYS",
           "Grid", "Settings", "validate", "applicable", "domain_group", "is_temporal",
           "lebed_config", "test_graph_set", "subsample", "run_job", "LABELS", "paper_family",
           "seed_cell", "pool_shards", "tables", "figures", "RUNNER"]

# the single-file runner's names of its helpers (apps/bench/checks scripts read some of them)
_domain_group, _is_temporal, _test_graphs, _subsample = domain_group, is_temporal, test_graph_set, subsample
_family, _pooled, _cell, _LABELS = paper_family, pool_shards, seed_cell, LABELS

RUNNER = SuiteRunner(
    name="lebed", module=__name__, Grid=Grid, Settings=Settings,
    validate=validate, run_job=run_job, tables=tables,
    figures=figures, applicable=applicable,
)
