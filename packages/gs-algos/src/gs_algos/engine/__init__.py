"""The training engine: node-level (full batch or sampled mini-batches) and graph-level
loops with early stopping, selection tracks, best-checkpoint restore, deterministic
seeding, exact resume from disk checkpoints and a per-epoch callback.

Modules: :mod:`~gs_algos.engine.node` (:func:`fit_node`, :func:`predict_node`) and
:mod:`~gs_algos.engine.graph` (:func:`fit_graph`, :func:`predict_graph`,
:func:`recompute_norm_stats`) check their inputs and hand them to the one set-up of
:mod:`~gs_algos.engine.prepare`, which runs the epoch loop of :mod:`~gs_algos.engine.loop`;
:mod:`~gs_algos.engine.results` holds what a run returns and :mod:`~gs_algos.engine.scale`
the standardised regression targets. Every public name is importable from
``gs_algos.engine``. The neighbour sampler of mini-batch training is gs-models'
(``gs_models.sample_neighbors``); PyTorch Geometric is imported by the first graph-level or
mini-batch run, not by ``import gs_algos.engine``.

Determinism: the whole run executes inside ``torch.random.fork_rng`` seeded with
``config.seed`` (the caller's global RNG is left untouched); shuffling and neighbour
sampling use a generator reseeded from ``(seed, epoch)`` at every epoch, so an epoch's
order does not depend on history; dropout and the methods' draws use the forked global
torch RNG whose state is saved in every checkpoint. Resuming a run from its checkpoint
therefore replays exactly the epochs that an uninterrupted run would have (on CPU).

Devices: ``config.device`` (:mod:`gs_algos.device`) picks where a run trains. The model, the
method and the data are moved there for the run and the model and method are handed back on
the device the model came in on (as Lightning's ``Trainer`` does), so code that predicts after
training needs no change; every tensor the engine creates (indices, batches, neighbour
samples, the methods' modules and buffers) is created on the training device. Shuffling of
graph-level loaders stays on a CPU generator (the same batches on every device); neighbour
sampling draws from a generator on the training device, seeded alike (on CPU it is the CPU
generator itself, so CPU runs are unchanged).
"""

from gs_algos.engine.graph import fit_graph, predict_graph, recompute_norm_stats
from gs_algos.engine.loop import batch_norm_updates
from gs_algos.engine.node import fit_node, predict_node
from gs_algos.engine.prepare import RunOptions
from gs_algos.engine.results import EpochInfo, FitResult, Track, evaluate_outputs, seeded
from gs_algos.engine.scale import TargetScale, fold_target_scale

__all__ = [
    "EpochInfo",
    "FitResult",
    "RunOptions",
    "TargetScale",
    "Track",
    "batch_norm_updates",
    "evaluate_outputs",
    "fit_graph",
    "fit_node",
    "fold_target_scale",
    "predict_graph",
    "predict_node",
    "recompute_norm_stats",
    "seeded",
]
