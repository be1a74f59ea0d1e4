"""The job of the ``gess`` suite: train one backbone with one algorithm on one shift case and
evaluate both selection tracks (runs on a worker; torch is imported inside the functions).

``job.device`` (the executor's, from ``gs-bench run --device``, resolved once on the worker) is
passed to gs-algos as it is: it is not a setting and not in the job key."""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from gs_bench.runners.gess.baselines import position_baselines, trivial_baselines
from gs_bench.runners.gess.checks import fingerprint
from gs_bench.runners.gess.curves import learning_curves
from gs_bench.runners.gess.data import cached_graph_parts, graph_parts, load_dataset, model_inputs
from gs_bench.runners.gess.spec import (
    BACKBONES,
    DATASETS,
    DEFERRED_PARTS,
    INAPPLICABLE,
    NEGATIVE_CONTROL,
    Grid,
    Settings,
    check_algorithm,
    level_of,
    method_params,
    tl_size,
)
from gs_bench.suites import Job

__all__ = ["standardize_default", "train_config", "model_overrides", "run_job", "pool_halves", "pretrain_cache",
           "order_jobs", "shuffle_labels", "train_subset"]

_EVAL_PARTS = ("train", "iid_val", "iid_test", "ood_val", "ood_test")


def standardize_default(name: str) -> bool:
    """Whether a regression job on dataset ``name`` trains on standardised targets when the
    suite does not say (``standardize_targets`` unset): yes for the molecular fidelity
    stand-in (ours), no for QMOF.

    GeSS's code trains QMOF with MSE on raw eV (``MSELoss`` in ``GESS/utils/metrics.py``,
    ``y`` unscaled in ``GESS/data/gess_datasets/qmof.py``); with 10,781 training materials in
    batches of 256 for 100 epochs that is about 4,300 Adam steps, enough to reach gaps of 2-4
    eV. The stand-in had 135 training molecules (249 since issue 29): GeSS's schedule gave it 100
    steps (batch 256) and the old ci profile 24 (8 epochs of 64), after which raw-eV ERM predicted about 0.9 eV
    for gaps of 5.6 eV (Test-ID MAE 4.68 eV, 3.7 x the train-mean predictor's 1.26); apps/bench
    README, "molecular-fidelity: ERM against the train-mean predictor"."""
    return DATASETS[name].family == "molecular-fidelity"


def train_config(name: str, algorithm: str, settings: Settings | Mapping[str, Any], seed: int,
                 level: str | None = None, device: Any = "auto"):
    """The :class:`gs_algos.TrainConfig` of a job: GeSS table 8 for the shift and level,
    then the suite's ``max_epochs`` / ``batch_size`` / ``iterations_per_epoch`` (and
    ``track_batch_size`` / ``fidelity_max_epochs`` for their families), standardised regression
    targets (:func:`standardize_default`, ``standardize_targets``); ``device`` from
    ``gs-bench run --device`` (the job's, passed on as it is)."""
    from gs_algos.config import TrainConfig

    st = Settings.from_mapping(settings)
    case = DATASETS[name]
    level = level or level_of(algorithm)
    cfg = TrainConfig.gess(shift=case.shift, level=level, seed=seed, task=case.task, metric=case.metric,
                           device=device)
    changes: dict[str, Any] = {}
    if st.max_epochs:
        changes.update(max_epochs=int(st.max_epochs))
    if st.batch_size:
        changes.update(batch_size=int(st.batch_size))
    if case.family == "track" and st.track_batch_size:
        changes.update(batch_size=int(st.track_batch_size))
    if case.family == "track" and st.track_max_epochs:
        changes.update(max_epochs=int(st.track_max_epochs))
    if case.shift == "fidelity" and st.fidelity_max_epochs:
        changes.update(max_epochs=int(st.fidelity_max_epochs))
    std = st.standardize_targets
    if case.task == "regression" and (standardize_default(name) if std is None else bool(std)):
        changes.update(standardize_targets=True)
    if st.norm_stats_graphs:
        changes.update(norm_stats_graphs=int(st.norm_stats_graphs))
    if cfg.iterations_per_epoch is not None and st.iterations_per_epoch:
        changes.update(iterations_per_epoch=int(st.iterations_per_epoch))
    if st.test_scoring == "selected":
        changes.update(final_parts=DEFERRED_PARTS)
    return cfg.replace(**changes) if changes else cfg


def model_overrides(case, settings: Settings, backbone: str | None = None) -> dict[str, Any]:
    """Backbone config fields the suite's settings change for ``case`` (ours; unset: GeSS's):
    ``edge_features`` for the Track cases when ``track_edge_features`` is set, and ``pt_norm`` /
    ``pt_delta`` for the Track Point Transformer jobs when ``track_pt_norm`` /
    ``track_pt_delta`` are."""
    out: dict[str, Any] = {}
    if case.family != "track":
        return out
    if settings.track_edge_features:
        out["edge_features"] = settings.track_edge_features
    if backbone == "pointtransformer":
        pt = {"pt_norm": settings.track_pt_norm, "pt_delta": settings.track_pt_delta}
        out.update((k, v) for k, v in pt.items() if v)
    return out


def run_job(job: Job | Mapping[str, Any]) -> dict[str, Any]:
    """Train ``job.params`` (a :class:`Grid` point: dataset, backbone, algorithm) on
    ``job.device`` and evaluate both selection tracks; Par-Label's ``tl-<N>`` fine-tunes the
    grid point's shared ERM pre-training (:func:`pretrain_cache`)."""
    job = Job.of(job, Grid)  # a job dict written by hand (a test, a check script) too
    # the typed settings, re-created from the dict that entered the job's key and its record
    point, st, seed = job.params, Settings.from_job(job), job.seed
    name, algo = point.dataset, point.algorithm
    case = DATASETS[name]
    check_algorithm(algo)
    reason = INAPPLICABLE.get((algo, case.task))
    if reason:
        raise ValueError(f"{name} x {algo}: {reason}")
    level = level_of(algo)
    ds = load_dataset(name, st, level)
    track = case.family == "track"
    parts = cached_graph_parts(
        job.workdir, name, level, st,
        lambda: graph_parts(ds, level, unit_coordinates=track, knn_k=case.knn_k, position_summary=track),
        unit_coordinates=track, knn_k=case.knn_k, position_summary=track)
    if st.train_events is not None:
        parts["train"] = train_subset(parts["train"], int(st.train_events))
    if algo == NEGATIVE_CONTROL:
        shuffle_labels(parts["train"], seed)
    model = _seeded_model(ds, case, point, st, seed)
    kwargs, source = method_params(name, algo, st)
    if tl_size(algo) is not None:
        res, tl = _par_label(job, ds, parts, model)
    else:
        res, tl = _fit(job, parts, model, kwargs), {}
    out: dict[str, Any] = {"metric": case.metric, "level": level, "epochs_run": res.epochs_run,
                           "hparams": {k: v for k, v in kwargs.items()}, "hparams_source": source,
                           "stand_in": case.stand_in}
    for track_name, sel_track in res.tracks.items():
        sel = "id" if track_name == "iid_val" else "ood"
        out[f"{sel}_sel_test_id"] = float(sel_track.metrics.get("iid_test", {}).get(case.metric, float("nan")))
        out[f"{sel}_sel_test_ood"] = float(sel_track.metrics.get("ood_test", {}).get(case.metric, float("nan")))
        out[f"{sel}_sel_epoch"] = int(sel_track.epoch)
    out["sizes"] = {k: len(v) for k, v in parts.items()}
    out["baselines"] = trivial_baselines(parts, case)
    # as before issue 57, every job with a selection track stores them ({} where the events have
    # no position summary: not a Track case): the loop above used to rebind `track` to its
    # last selection track, which is truthy
    if track or res.tracks:
        out["position_baselines"] = position_baselines(parts)
    out["curves"] = learning_curves(res.history, case.metric)
    out.update(tl)
    return out


def _seeded_model(ds, case, point: Grid, st: Settings, seed: int):
    """The job's backbone (``gess-<backbone>`` with the suite's overrides), seeded."""
    from gs_algos.engine import seeded
    from gs_models import build_model

    in_ch, categorical = model_inputs(ds, case)
    return seeded(
        lambda: build_model(BACKBONES[point.backbone], in_ch, 1, categorical=categorical, k=case.knn_k,
                            **model_overrides(case, st, point.backbone)),
        seed,
    )


def _eval_parts(parts: dict[str, Any]) -> dict[str, Any]:
    """The parts every epoch evaluates (and the train part)."""
    return {k: v for k, v in parts.items() if k in _EVAL_PARTS}


def _fit(job: Job, parts: dict[str, Any], model, kwargs: dict[str, Any]):
    """No-Info and O-Feature training of ``job``'s algorithm (the negative control trains as
    ERM on its permuted labels). The ERM job stores its training as the TL rows' pre-training."""
    from gs_algos.engine import fit_graph
    from gs_algos.methods import METHODS

    point, st, seed = job.params, Settings.from_job(job), job.seed
    algo, level = point.algorithm, level_of(point.algorithm)
    meth = METHODS["erm" if algo == NEGATIVE_CONTROL else algo](**kwargs)
    target = parts.get("train_target") if level == "o-feature" else None
    cfg = train_config(point.dataset, algo, st, seed, device=job.device)
    ckpt = epoch_checkpoint_dir(job)
    if ckpt is None:
        res = fit_graph(model, _eval_parts(parts), meth, cfg, target=target)
    else:
        # every epoch saved: a job stopped part-way (a killed worker, a rebooted machine)
        # resumes at its next epoch, exactly (the engine restores weights, optimiser, method
        # state, selection tracks and RNG); the file goes once the record is made
        res = fit_graph(model, _eval_parts(parts), meth, cfg, target=target,
                        checkpoint_dir=ckpt, checkpoint_every=1, resume=True)
        shutil.rmtree(ckpt, ignore_errors=True)
    if algo == "erm":
        # the ERM job's training is the TL rows' pre-training (the same No-Info config,
        # method, seed and model; the weights of the best Val-ID epoch): store it for them
        cache = pretrain_cache(job)
        if cache is not None:
            key = cache.key("gess-erm-pretrain", seed, cfg, model)
            if not cache.path(key).is_file():
                cache.save(key, model, res.best.epoch)
    return res


def epoch_checkpoint_dir(job: Job) -> Path | None:
    """Where a No-Info / O-Feature job of a run folder keeps its per-epoch checkpoint:
    ``<workdir>/checkpoints/<job key>`` (``None`` for a job run without a run folder). The key
    holds the settings, data and package versions, so a checkpoint is only ever resumed by the
    same job; the engine refuses one written with another training config."""
    if job.workdir is None or not job.key:
        return None
    return Path(job.workdir) / "checkpoints" / str(job.key)


def _par_label(job: Job, ds, parts: dict[str, Any], model) -> tuple[Any, dict[str, Any]]:
    """Par-Label ``tl-<N>``: ERM pre-training with the No-Info protocol (GeSS: the No-Info ERM
    checkpoint), then full fine-tuning on N labelled OOD samples with the Par-Label protocol
    (table 8: 75 epochs on Track-Pileup). The pre-trained model is shared by the TL rows of a
    grid point (tl-100/500/1000): the first trains and stores it, the others load it
    (fine-tuning is seeded, so the results are the same either way). The training result and
    the record's TL fields."""
    from gs_algos.engine import fit_graph
    from gs_algos.finetune import finetune_graph
    from gs_algos.methods import METHODS

    point, st, seed = job.params, Settings.from_job(job), job.seed
    name, algo, n_tl = point.dataset, point.algorithm, tl_size(point.algorithm)
    pool = parts.get("ood_labeled", [])
    if n_tl > len(pool):
        raise ValueError(
            f"{name} x {algo}: Par-Label needs {n_tl} labelled OOD samples but the pool holds "
            f"{len(pool)}; use a smaller tl-<N>"
        )
    eval_parts = _eval_parts(parts)
    pre_cfg = train_config(name, algo, st, seed, "no-info", device=job.device)
    cache = pretrain_cache(job)

    def pretrain(m) -> int:
        return fit_graph(m, eval_parts, METHODS["erm"](), pre_cfg).best.epoch

    if cache is None:
        pre_epoch, pretrain_cached = pretrain(model), False
    else:  # trained once when two workers reach the same grid point (issue 34)
        pre_epoch, pretrain_cached = cache.load_or_train(
            cache.key("gess-erm-pretrain", seed, pre_cfg, model), model, pretrain)
    halves = pool_halves(ds, st, pool if DATASETS[name].family == "track" else None)
    _, res = finetune_graph(model, {**eval_parts, "ood_labeled": pool}, n_tl,
                            train_config(name, algo, st, seed, device=job.device), seed=seed,
                            pool_halves=halves)
    return res, {"tl_n": n_tl, "pretrain_epoch": int(pre_epoch), "pretrain_cached": pretrain_cached,
                 "par_label_draw": "gess" if halves is not None else "uniform"}


def train_subset(graphs: list, n: int) -> list:
    """``train_events``: a random subset of ``n`` training graphs, the same for every job seed and
    algorithm (a fixed generator), in their original order; ``n`` above the part's size is an
    error (the learning curve would silently flatten)."""
    if n > len(graphs):
        raise ValueError(f"train_events = {n} exceeds the {len(graphs)} training events of this dataset")
    keep = np.sort(np.random.default_rng(0x7EA1).permutation(len(graphs))[:n])
    return [graphs[i] for i in keep.tolist()]


def shuffle_labels(graphs: list, seed: int) -> None:
    """The negative control (:data:`~gs_bench.runners.gess.spec.NEGATIVE_CONTROL`): the train
    graphs' labels permuted among them, seeded by the job's seed (the class balance is kept,
    every link between an event and its label is cut). In place."""
    import torch

    ys = [g.y for g in graphs]
    order = np.random.default_rng(np.random.SeedSequence([int(seed), 0x5F1]).generate_state(1)[0]).permutation(len(ys))
    for g, i in zip(graphs, order.tolist(), strict=True):
        g.y = torch.as_tensor(ys[i]).clone()


def pool_halves(ds, settings: Settings | Mapping[str, Any], track_pool=None) -> np.ndarray | None:
    """0/1 per labelled-pool item for GeSS's draw of half the Par-Label set from each group
    (``par_label_draw = "gess"``, the default), or ``None`` for a uniform draw from the whole
    pool: ``par_label_draw = "uniform"`` (ours), or a pool of neither kind (the fidelity shift).

    The groups: for QMOF and DrugOOD-3D, the items removed from Val-OOD (0) and Test-OOD (1)
    (appendix C.1); for Track (``track_pool``, the pool's graphs), the class, since GeSS's code
    draws N/2 background and N/2 signal events (Graph-COM/GESS ``track.py``: Pileup's labelled
    pairs ``5000 .. 5000 + N/2``, Signal's N/2 taus plus N/2 background events; the paper's
    text does not say)."""
    if Settings.from_mapping(settings).par_label_draw != "gess":
        return None
    if track_pool is not None:
        return np.asarray([int(g.y.reshape(-1)[0]) for g in track_pool], dtype=np.int64)
    origin = ds.split.metadata.get("ood_labeled_origin")
    if origin is None:
        return None
    return (np.asarray(origin) == "ood_test").astype(np.int64)


def pretrain_cache(job: Job | Mapping[str, Any]):
    """Where the TL rows of one grid point share their ERM pre-training
    (``<results>/members``, gs-algos' :class:`~gs_algos.node_methods.MemberCache`, as the
    structural runner's shared members), or ``None`` without a results folder or with
    ``share_pretraining = false``. The tag holds everything the pre-training depends on
    besides its seed, training configuration and model shapes (which the key adds): the
    dataset, backbone, settings (the job's dict, as it entered the job key), the data files'
    fingerprint and the package versions; the algorithm is left out, so tl-100, tl-500 and
    tl-1000 share one entry."""
    import json

    from gs_algos.node_methods import MemberCache

    job = Job.of(job, Grid)
    st = Settings.from_job(job)
    if not job.workdir or not st.share_pretraining:
        return None
    import gs_algos
    import gs_data
    import gs_models
    import gs_splits

    point = {k: v for k, v in job.point.items() if k != "algorithm"}
    tag = json.dumps({
        "suite": job.suite, "params": point, "level": "par-label",
        "settings": {k: v for k, v in job.settings.items() if k not in ("hparams", "share_pretraining")},
        "data": fingerprint(job.params.dataset, st),
        "versions": [m.__version__ for m in (gs_splits, gs_data, gs_models, gs_algos)],
    }, sort_keys=True, default=str)
    return MemberCache(Path(job.workdir) / "members", tag)


def order_jobs(jobs: list[Job]) -> list[Job]:
    """EGNN (GeSS's headline backbone) before the others; within a backbone ERM first (the
    reference of every finding; its job stores the TL rows' pre-training), then the other
    algorithms, then TL rows, smallest N first across the grid points: each grid point's first
    TL job trains the shared ERM pre-training (:func:`pretrain_cache`) where no ERM job did,
    before its larger-N rows start on another worker, which then load it instead of training it
    again. A partly finished run thus holds the jobs its findings need most."""
    def rank(job: Job) -> tuple[int, int, int]:
        point = Job.of(job, Grid).params  # a job dict written by hand too
        first = int((point.backbone or "egnn") != "egnn")
        n = tl_size(point.algorithm)
        if n is not None:
            return (first, 2, n)
        return (first, 0 if point.algorithm == "erm" else 1, 0)

    return sorted(jobs, key=rank)  # stable: the grid order within each rank
