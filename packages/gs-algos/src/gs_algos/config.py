"""Typed training configurations with the papers' defaults.

Three presets are provided as class methods of :class:`TrainConfig`:

* :meth:`TrainConfig.structural_shifts` — Bazhenov et al., *Evaluating Robustness and
  Uncertainty of Graph Models Under Structural Distributional Shifts*, appendix F: Adam,
  learning rate 3e-4, weight decay 1e-5; section 3.1: the checkpoint with the lowest
  Valid-In loss; the authors' code: 200 epochs, no early stopping (protocol
  ``"authors"``, the default). Our earlier protocol (best Valid-In accuracy, at most 1000
  epochs, patience 50) stays available as ``protocol="early-stop"``.
* :meth:`TrainConfig.edgewise` — Hsu et al., *What Makes Graph Neural Networks
  Miscalibrated?* / edgewise calibration, appendix C.2: Adam, learning rate 0.01, weight
  decay 5e-4, at most 2000 epochs, stop when validation has not improved for 100 epochs.
* :meth:`TrainConfig.gess` — GeSS, appendix F and table 8: Adam, learning rate 1e-3,
  weight decay 1e-5, batch size 256, 100 epochs (200 for Track-Pileup, batch 128 and
  150 iterations per epoch at the O-Feature level of Pileup), two model-selection tracks
  (ID validation and OOD validation, section 4.1 and appendix E), no early stopping.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

from gs_algos.device import check_device
from gs_algos.names import STOPPING_RULES, STRUCTURAL_PROTOCOLS
from gs_metrics import available_metrics, get_metric

__all__ = ["GOOD_CORA_TRAINING", "STRUCTURAL_PROTOCOLS", "TrainConfig"]

# STRUCTURAL_PROTOCOLS: the named training protocols of TrainConfig.structural_shifts, defined
# in gs_algos.names (importable without torch) and re-exported here.
#: GOOD's GOODCora/degree/covariate training per method: (Adam learning rate, epochs)
GOOD_CORA_TRAINING = {"erm": (1e-3, 100), "dann": (1e-3, 100), "coral": (1e-3, 100),
                      "mixup": (1e-3, 100), "eerm": (5e-3, 50)}

#: selection on the training loss; every other metric name comes from gs-metrics' registry
#: (:data:`gs_metrics.TASK_METRICS`: accuracy, auroc, mae and any registered one)
_LOSS = "loss"
_STOPPING = STOPPING_RULES
#: fields that do not change what is trained (left out of :meth:`TrainConfig.identity`)
_NOT_IDENTITY = ("device", "final_parts")
#: fields added after keys were in use: part of :meth:`TrainConfig.identity` (and of the
#: engine's checkpoint key) only when set, so every config that leaves them at their default
#: keeps the key it had (shared members and checkpoints stay valid)
_IDENTITY_IF_SET = {"standardize_targets": False, "norm_stats_graphs": 0}


@dataclass(frozen=True)
class TrainConfig:
    """Everything that determines one training run (besides the model, method and data).

    Parameters
    ----------
    lr, weight_decay
        Adam learning rate and (L2, ``torch.optim.Adam``-style) weight decay.
    max_epochs
        Upper bound on the number of epochs.
    patience
        Early stopping: stop when the first selection track has not improved for this
        many evaluated epochs (other tracks are only recorded).
        ``None`` trains for ``max_epochs`` (GeSS keeps every epoch and selects afterwards).
    batch_size
        Graph level: graphs per batch. Node level: ``None`` means full batch; an integer
        means mini-batches of that many training (seed) nodes with sampled neighbourhoods.
    num_neighbors
        Node-level mini-batch only: neighbours sampled per node and hop (``-1`` = all),
        one entry per hop. Must be given when ``batch_size`` is set at node level.
    iterations_per_epoch
        Graph level with an unlabeled target loader (O-Feature level): number of
        optimisation steps per epoch (GeSS table 8: 150). ``None`` = one pass over train.
    train_part
        Name of the labelled training part (``"in_train"`` for structural splits,
        ``"train"`` for GeSS).
    select_on
        Validation parts, one selection track each. The first one decides which weights
        are restored into the model at the end. GeSS: ``("iid_val", "ood_val")``.
    eval_parts
        Parts evaluated at every epoch (missing parts are ignored). ``None`` = all parts.
    final_parts
        Graph level: parts scored only once per selection track, after training, with the
        weights (and batch-norm statistics) that track kept, instead of at every epoch; they are
        left out of the per-epoch evaluation and of :attr:`FitResult.history`. A track's metrics
        are then what an every-epoch evaluation would have stored at its kept epoch, at a
        fraction of the cost (gs-bench's ``gess`` suite: the test parts of the ``medium``
        profile). Does not change what is trained (not in :meth:`identity`). Default: none.
    metric
        Selection metric: ``"accuracy"``, ``"auroc"`` (binary), ``"mae"`` (regression) or
        ``"loss"``.
    task
        ``"multiclass"``, ``"binary"`` or ``"regression"``.
    seed
        Seeds model initialisation, dropout, shuffling and every draw of the methods.
    eval_every
        Evaluate every this many epochs (selection happens only on evaluated epochs).
    stopping
        Early-stopping and checkpoint rule, applied per selection track:

        * ``"patience"`` (ours, the default): keep the weights of the epoch with the best
          ``metric`` (strictly better); stop after ``patience`` evaluations without a strictly
          better value on the first track.
        * ``"acc_or_nll"`` (the edgewise-calibration authors' rule, ``src/train.py`` of
          hans66hsu/structured_uncertainty_metrics; also the GMNN pre-training in
          ``src/train_gmnn.py``): the patience counter resets when validation accuracy
          ``>=`` its best so far **or** validation NLL ``<=`` its best so far; the weights are
          kept only when **both** hold; both bests are then updated independently
          (``max`` / ``min``). Needs a multiclass task; ``metric`` is ignored
          (:attr:`Track.value` holds the accuracy of the kept epoch). The paper (appendix C.2)
          only says "patience 100"; the rule is the released code's.
        * ``"gess"`` (the GeSS authors' rule, ``update_metrics`` in ``GESS/utils/metrics.py``
          of Graph-COM/GESS, applied to each of its two checkpoints every epoch): keep the
          weights when ``metric`` is strictly better, **or** equal to the best so far with a
          strictly lower ``loss`` on the same part. On small validation parts accuracy ties
          often (67 Track events: steps of 1.5 points), and the loss then decides. Patience
          as ``"patience"`` (GeSS runs without: ``patience=None``).
    norm_updates_per_step
        How many train-mode forward passes per optimisation step update the batch-norm
        running statistics (default 1: the loss's pass). The structural-shifts authors'
        Lightning modules compute three uncertainty estimates under ``torch.no_grad()`` in
        train mode in every training step (``general_step`` of
        ``source/modules/default_message_passing_network_module.py``), so their batch norms
        see 4 passes per step (5 for GPN / NatPN, whose knowledge uncertainty costs two);
        their validation, in eval mode, then uses statistics that follow the weights more
        closely, and the lowest Valid-In loss comes much earlier (CiteSeer: about epoch 17
        instead of 50). ``k > 1`` is applied as one pass with momentum ``1 - (1 - m)^k``
        for every batch norm of momentum ``m``: exactly the statistics of ``k`` identical
        passes (without dropout between them), at the cost of one.
    standardize_targets
        Regression only (ours, off by default; GeSS's code trains on raw targets): the model
        trains on the targets standardised with the training part's mean and standard
        deviation (``n - 1``): the loss (MSE) is computed against ``(y - mean) / std`` and the
        outputs are read as standardised values, which every evaluation maps back, so the
        selection metric, the tracks' metrics and :class:`~gs_algos.engine.EpochInfo` are in the targets' own
        units (eV for band gaps); the logged training loss is in standardised units. When the
        run ends the map is folded into the last linear layer of the model's task head
        (:func:`gs_algos.batch.head_of`: weights times ``std``, bias times ``std`` plus
        ``mean``), in the model and in every track's kept weights, so the returned model
        predicts in the targets' units (:func:`gs_algos.engine.fold_target_scale`). It matters
        where the targets sit far from zero relative to the number of optimisation steps:
        Adam moves each weight by about ``lr`` per step, so a default head needs thousands of
        steps to reach band gaps of 5-7 eV (GeSS's QMOF training makes about 4,300; a
        hundred-molecule training part a few dozen to a few hundred). A checkpoint holds the
        unfolded weights (a resumed run folds once, at its end).
        :func:`~gs_algos.finetune.finetune_graph` ignores it: a pre-trained (folded) model
        is fine-tuned on the raw targets.
    norm_stats_graphs
        Graph-level training only (ours, 0 = off by default; GeSS's code does not do it).
        Before every evaluation the batch norms' running statistics are recomputed under the
        current weights from up to this many training graphs (a fixed random subset; every
        batch-norm layer in train mode, everything else in eval mode, no gradient,
        cumulative averages), "precise BN" (Wu and Johnson 2021, "Rethinking 'batch' in
        BatchNorm", section 3). Why: the running means are exponential averages over the
        last ~``1 / momentum`` = 10 steps. GeSS trains ~30,000 Track events in batches of
        256, ~117 steps an epoch, so they trail the weights by a tenth of an epoch; a ci-size
        run (450 events, 7 steps an epoch) trails by more than an epoch. Sum-pooled graph
        embeddings (GeSS's ``add`` pooling) are large and grow while training (|g| ~ 430 ->
        780 over the first 4 epochs on Track), so eval-mode outputs land far from the
        trained range and every graph gets one class (measured: Track ERM, eval-mode
        validation accuracy 0.50 for 4 epochs where the recomputed statistics give
        0.62-0.69; ``apps/bench/measured/ci-gess``). The recomputed statistics are kept
        (they are in the weights the selection tracks keep); training continues from them.
    device
        Where training runs: ``"auto"`` (default: CUDA when available, else CPU), ``"cpu"``,
        ``"cuda"`` or ``"cuda:<index>"`` (:mod:`gs_algos.device`). The engine moves the model,
        the method and the data there, creates its batches, neighbour samples and the
        methods' tensors there, and returns the model on the device it was given on. The
        device does not change what is trained: it is left out of :meth:`identity` (cache and
        checkpoint keys), and CPU and GPU runs select the same way (GPU kernels round
        differently, so values agree to float tolerance, not bit for bit).
    """

    lr: float = 3e-4
    weight_decay: float = 1e-5
    max_epochs: int = 1000
    patience: int | None = 50
    batch_size: int | None = None
    num_neighbors: tuple[int, ...] | None = None
    iterations_per_epoch: int | None = None
    train_part: str = "in_train"
    select_on: tuple[str, ...] = ("in_valid",)
    eval_parts: tuple[str, ...] | None = None
    final_parts: tuple[str, ...] = ()
    metric: str = "accuracy"
    task: str = "multiclass"
    seed: int = 0
    eval_every: int = 1
    stopping: str = "patience"
    norm_updates_per_step: int = 1
    extra: dict = field(default_factory=dict)
    standardize_targets: bool = False
    norm_stats_graphs: int = 0
    device: str = "auto"

    def __post_init__(self) -> None:
        check_device(self.device, "TrainConfig.device")
        if not self.lr > 0:
            raise ValueError(f"lr must be > 0, got {self.lr!r}")
        if self.weight_decay < 0:
            raise ValueError(f"weight_decay must be >= 0, got {self.weight_decay!r}")
        if int(self.max_epochs) < 1:
            raise ValueError(f"max_epochs must be >= 1, got {self.max_epochs!r}")
        if self.patience is not None and int(self.patience) < 1:
            raise ValueError(f"patience must be None or >= 1, got {self.patience!r}")
        if self.batch_size is not None and int(self.batch_size) < 1:
            raise ValueError(f"batch_size must be None or >= 1, got {self.batch_size!r}")
        if self.metric != _LOSS and self.metric not in available_metrics():
            raise ValueError(f"metric must be one of {(_LOSS, *available_metrics())}, "
                             f"got {self.metric!r}")
        if self.task not in ("multiclass", "binary", "regression"):
            raise ValueError(
                f"task must be 'multiclass', 'binary' or 'regression', got {self.task!r}"
            )
        if isinstance(self.select_on, str) or len(self.select_on) == 0:
            raise ValueError(
                f"select_on must be a non-empty tuple of part names, got {self.select_on!r}"
            )
        if self.metric != _LOSS and self.task not in get_metric(self.metric).tasks:
            raise ValueError(f"metric {self.metric!r} does not apply to {self.task}; use one of "
                             f"{(_LOSS, *available_metrics(self.task))}")
        if isinstance(self.final_parts, str) or not all(isinstance(p, str) for p in self.final_parts):
            raise ValueError(f"final_parts must be a tuple of part names, got {self.final_parts!r}")
        if set(self.final_parts) & set(self.select_on):
            raise ValueError(f"final_parts {self.final_parts!r} must not hold a selection part "
                             f"(select_on {self.select_on!r}): those are needed at every epoch")
        if int(self.eval_every) < 1:
            raise ValueError(f"eval_every must be >= 1, got {self.eval_every!r}")
        if int(self.norm_updates_per_step) < 1:
            raise ValueError(
                f"norm_updates_per_step must be >= 1, got {self.norm_updates_per_step!r}"
            )
        if isinstance(self.norm_stats_graphs, bool) or int(self.norm_stats_graphs) < 0:
            raise ValueError(
                f"norm_stats_graphs must be an integer >= 0 (0: off), got {self.norm_stats_graphs!r}"
            )
        if self.stopping not in _STOPPING:
            raise ValueError(f"stopping must be one of {_STOPPING}, got {self.stopping!r}")
        if self.standardize_targets and self.task != "regression":
            raise ValueError(
                f"standardize_targets applies to regression only, got task={self.task!r}"
            )
        if self.stopping == "acc_or_nll" and self.task != "multiclass":
            raise ValueError(
                f"stopping='acc_or_nll' needs task='multiclass' (accuracy and NLL), got {self.task!r}"
            )

    @property
    def higher_is_better(self) -> bool:
        """Whether larger values of :attr:`metric` are better."""
        return False if self.metric == _LOSS else get_metric(self.metric).higher_is_better

    def replace(self, **changes) -> TrainConfig:
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)

    def identity(self) -> str:
        """``repr`` of everything that determines what is trained: every field but
        :attr:`device` (the key of shared members and checkpoints, so a member trained on a
        GPU is reused on a CPU and a run resumes on another device); fields added later
        (:attr:`standardize_targets`, :attr:`norm_stats_graphs`) only when set, so the keys of
        configs without them are those they had before they existed."""
        body = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self)
                         if f.repr and f.name not in _NOT_IDENTITY
                         and not (f.name in _IDENTITY_IF_SET
                                  and getattr(self, f.name) == _IDENTITY_IF_SET[f.name]))
        return f"{type(self).__qualname__}({body})"

    # ----------------------------------------------------------------- presets
    @classmethod
    def structural_shifts(cls, protocol: str = "authors", **changes) -> TrainConfig:
        """Structural-shifts paper: Adam lr 3e-4, weight decay 1e-5 (appendix F), full batch.

        ``protocol="authors"`` (default): 200 epochs, no early stopping, the weights of the
        epoch with the lowest Valid-In loss are restored. Paper section 3.1 ("Valid-In
        enables us to ... [compute] the validation loss ... and choose the best
        checkpoint"); the epochs and the rule are in the authors' code
        (yandex-research/structural-graph-shifts: ``configs/trainer_configs/
        standard_trainer_config.yaml`` ``num_epochs: 200``; ``source/modules/base_module.py``
        ``ModelCheckpoint(monitor=".../mask=valid_in/value=loss")``, mode ``min``, no
        ``EarlyStopping`` callback). A later epoch replaces the kept one only when its loss
        is strictly lower (as Lightning's ``ModelCheckpoint``). Batch-norm statistics are
        updated as by 4 passes per step (``norm_updates_per_step``), as in their modules.

        ``protocol="early-stop"``: our earlier protocol, best Valid-In *accuracy*, at most
        1000 epochs, patience 50 (not from the paper).
        """
        if protocol not in STRUCTURAL_PROTOCOLS:
            raise ValueError(
                f"protocol must be one of {list(STRUCTURAL_PROTOCOLS)}, got {protocol!r}"
            )
        rule = {
            "authors": {"max_epochs": 200, "patience": None, "metric": "loss",
                        "norm_updates_per_step": 4},
            "early-stop": {"max_epochs": 1000, "patience": 50, "metric": "accuracy"},
        }[protocol]
        base = cls(
            lr=3e-4,
            weight_decay=1e-5,
            train_part="in_train",
            select_on=("in_valid",),
            **rule,
        )
        return base.replace(**changes) if changes else base

    @classmethod
    def good_cora(cls, method: str, **changes) -> TrainConfig:
        """GOOD's training of ``method`` on its node-level Cora benchmark (divelab/GOOD
        ``configs/GOOD_configs/GOODCora/degree/covariate/<method>.yaml`` with
        ``configs/GOOD_configs/base.yaml``): Adam lr 1e-3, no weight decay, 100 epochs
        (EERM: lr 5e-3, 50 epochs), no early stopping, one forward pass per step, and the
        weights of the epoch with the best *accuracy* on the ID validation nodes
        (``GOOD/kernel/pipelines/basic_pipeline.py`` ``save_epoch``, ``id_best.ckpt``).

        The structural-shifts paper trained DANN, CORAL, Mixup and EERM "using the
        experimental framework from the GOOD benchmark" (section 4) but does not give the
        settings it ran it with; this preset is GOOD's published one
        (gs-bench ``robustness_framework = "good"``).
        """
        settings = GOOD_CORA_TRAINING.get(method)
        if settings is None:
            raise ValueError(
                f"method must be one of {sorted(GOOD_CORA_TRAINING)} (GOOD's GOODCora configs), "
                f"got {method!r}"
            )
        lr, epochs = settings
        base = cls(
            lr=lr,
            weight_decay=0.0,
            max_epochs=epochs,
            patience=None,
            metric="accuracy",
            train_part="in_train",
            select_on=("in_valid",),
            norm_updates_per_step=1,
        )
        return base.replace(**changes) if changes else base

    @classmethod
    def edgewise(cls, **changes) -> TrainConfig:
        """Edgewise-calibration paper, appendix C.2: Adam lr 0.01, weight decay 5e-4,
        at most 2000 epochs, patience 100.

        Stopping rule: the authors' ``"acc_or_nll"`` (``src/train.py``: patience resets when
        validation accuracy or NLL improves, weights kept when both do); our previous rule
        (best validation accuracy, ``stopping="patience"``) stays available. Only the
        validation part is evaluated per epoch (``eval_parts=("valid",)``): the rule needs
        nothing else, and the test part is scored once after training.
        """
        base = cls(
            lr=0.01,
            weight_decay=5e-4,
            max_epochs=2000,
            patience=100,
            train_part="train",
            select_on=("valid",),
            eval_parts=("valid",),
            metric="accuracy",
            stopping="acc_or_nll",
        )
        return base.replace(**changes) if changes else base

    @classmethod
    def gess(cls, shift: str = "default", level: str = "no-info", **changes) -> TrainConfig:
        """GeSS appendix F / table 8: Adam lr 1e-3, weight decay 1e-5, batch 256, 100 epochs.

        ``shift="pileup"``: 200 epochs (batch 128 at the O-Feature level; 75 epochs when
        fine-tuning at the Par-Label level). O-Feature: 150 iterations per epoch. Two
        selection tracks, ID validation then OOD validation (section 4.1, appendix E).
        """
        if level not in ("no-info", "o-feature", "par-label"):
            raise ValueError(
                f"level must be 'no-info', 'o-feature' or 'par-label', got {level!r}"
            )
        pileup = shift.lower() in ("pileup", "track-pileup")
        epochs = 200 if pileup else 100
        batch = 256
        iters = None
        if level == "o-feature":
            iters = 150
            batch = 128 if pileup else 256
        if level == "par-label" and pileup:
            epochs = 75
        base = cls(
            lr=1e-3,
            weight_decay=1e-5,
            max_epochs=epochs,
            patience=None,
            batch_size=batch,
            iterations_per_epoch=iters,
            train_part="train",
            select_on=("iid_val", "ood_val"),
            eval_parts=("iid_val", "iid_test", "ood_val", "ood_test"),
            metric="accuracy",
            stopping="gess",
        )
        return base.replace(**changes) if changes else base
