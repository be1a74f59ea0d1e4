"""gs_metrics: calibration, detection, OOD detector scores, conformal prediction sets, task
metrics, trivial baselines and label-free evaluation for graph models.

Everything here is torch-free (numpy/scipy/scikit-learn); torch tensors are accepted by duck
typing. LeBed's score functions live in :mod:`gs_metrics.lebed` (torch-free too; the
re-training that trains a model is ``gs_algos.lebed``) and the reliability-diagram figure in
:mod:`gs_metrics.reliability` (``plot`` extra, matplotlib).
"""

from gs_metrics import (
    accumulate,
    baselines,
    calibration,
    conformal,
    detection,
    detectors,
    edgewise,
    label_free,
    reliability,
    task,
)
from gs_metrics.__about__ import __version__
from gs_metrics._validation import EmptyEvaluationWarning

# Each module's ``__all__`` is the one list of the names it gives the package: they are imported
# and exported from it, so a new public function is listed once, in its module.
from gs_metrics.accumulate import *  # noqa: F403
from gs_metrics.baselines import *  # noqa: F403
from gs_metrics.calibration import *  # noqa: F403
from gs_metrics.conformal import *  # noqa: F403
from gs_metrics.detection import *  # noqa: F403
from gs_metrics.detectors import *  # noqa: F403
from gs_metrics.edgewise import *  # noqa: F403
from gs_metrics.label_free import *  # noqa: F403
from gs_metrics.registry import (
    TASK_METRICS,
    TaskMetric,
    available_metrics,
    get_metric,
    register_metric,
    unregister_metric,
)
from gs_metrics.reliability import *  # noqa: F403
from gs_metrics.task import *  # noqa: F403

__all__ = [
    "__version__",
    "EmptyEvaluationWarning",
    *accumulate.__all__,
    *baselines.__all__,
    *calibration.__all__,
    *conformal.__all__,
    *detection.__all__,
    *detectors.__all__,
    *edgewise.__all__,
    *label_free.__all__,
    "TASK_METRICS",
    "TaskMetric",
    "available_metrics",
    "get_metric",
    "register_metric",
    "unregister_metric",
    *reliability.__all__,
    *task.__all__,
]
