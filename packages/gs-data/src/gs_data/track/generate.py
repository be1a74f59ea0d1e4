"""Seeded, cached, resumable and parallel generation of Track event samples.

A sample is identified by ``(process, pileup, seed, config)``; event ``i`` of it is a pure
function of that key and ``i`` (see :mod:`gs_data.track._sim`), so a sample of ``count``
events is always events ``0 .. count-1`` whatever the number of workers or interruptions.
Each finished event is written to its own file atomically (temporary file + rename); a
restarted run generates only the events whose files are missing, so an interrupted run
resumes with no duplicated and no missing event. When all ``count`` events exist they are
packed into ``pack-<count>.npz`` (atomic), which later calls load directly.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np

from gs_data._io import entry_lock
from gs_data.track.config import TrackSimConfig, check_process
from gs_data.track.deps import INSTALL_HINT, require
from gs_data.track.store import TrackEvents, atomic_savez, atomic_write_text

logger = logging.getLogger(__name__)

ProgressCallback = Callable[[int, int], None]
"""``callback(done, total)``, called after every finished event (from the calling process)."""

_WORKER: dict = {}


def default_cache_dir() -> Path:
    """``$GS_CACHE_DIR/track`` if set, else ``~/.cache/gs/track``."""
    root = os.environ.get("GS_CACHE_DIR")
    base = Path(root) if root else Path.home() / ".cache" / "gs"
    return base / "track"


def sample_dir(
    process: str, pileup: int, seed: int, cache_dir: str | Path, config: TrackSimConfig
) -> Path:
    """Folder of the sample ``(process, pileup, seed, config)`` inside ``cache_dir`` (keyed by
    the settings the process depends on, :meth:`TrackSimConfig.for_process`)."""
    return Path(cache_dir) / f"{process}-pu{int(pileup)}-seed{int(seed)}-{config.for_process(process).digest()}"


def _check_int(name: str, value, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
    return int(value)


def _event_path(folder: Path, index: int) -> Path:
    return folder / "events" / f"{index:09d}.npz"


def _packs(folder: Path) -> dict[int, Path]:
    out = {}
    for p in folder.glob("pack-*.npz"):
        try:
            out[int(p.stem.split("-")[1])] = p
        except ValueError:  # pragma: no cover - foreign file
            continue
    return out


def cached_event_count(
    process: str,
    pileup: int,
    seed: int = 0,
    cache_dir: str | Path | None = None,
    config: TrackSimConfig | None = None,
) -> int:
    """How many leading events ``0 .. n-1`` of a sample the cache holds (no simulation).

    Counts the largest pack plus the consecutive per-event files after it; a caller compares
    it with the events it needs to know whether :func:`generate_events` would have to
    simulate (and so need PYTHIA 8 and ACTS).
    """
    config, cache_root = _resolve(config, cache_dir)
    folder = sample_dir(process, pileup, seed, cache_root, config)
    if not folder.is_dir():
        return 0
    packs = _packs(folder)
    n = max(packs) if packs else 0
    while _event_path(folder, n).exists():
        n += 1
    return n


def make_simulator(config: TrackSimConfig | None = None, cache_dir: str | Path | None = None):
    """An :class:`~gs_data.track._sim.EventSimulator` (PYTHIA 8 + ACTS Fatras, Generic detector).

    For single events and particle guns (``simulate``, ``simulate_particles``); samples are
    better made with :func:`generate_events`. Needs the ``track`` extra.
    """
    config, cache_root = _resolve(config, cache_dir)
    try:
        require("pythia8mc")
        require("acts.examples")
    except ImportError as err:
        raise ImportError(f"the Track simulator needs PYTHIA 8 and ACTS: {INSTALL_HINT}") from err
    from gs_data.track._sim import EventSimulator

    return EventSimulator(config, cache_root)


def _worker_init(config_dict: dict, init_dir: str) -> None:
    from gs_data.track._sim import EventSimulator

    cfg = dict(config_dict)
    cfg["vertex_sigma_mm"] = tuple(cfg["vertex_sigma_mm"])
    _WORKER["sim"] = EventSimulator(TrackSimConfig(**cfg), init_dir)


def _worker_run(process: str, pileup: int, seed: int, index: int, out: str) -> int:
    event = _WORKER["sim"].simulate(process, pileup, seed, index)
    atomic_savez(out, **event)
    return index


def _event_from_pack(pack: TrackEvents, i: int) -> dict[str, np.ndarray]:
    ev = {c: np.array(v) for c, v in pack.event(i).items()}
    ev.update({c: np.array(v) for c, v in pack.event_particles(i).items()})
    ev["n_interactions"] = pack.n_interactions[i]
    ev["signal_mass"] = pack.signal_mass[i]
    return ev


def _resolve(config, cache_dir):
    if config is None:
        config = TrackSimConfig()
    if not isinstance(config, TrackSimConfig):
        raise TypeError(f"config must be a TrackSimConfig, got {type(config).__name__}")
    cache_root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    return config, cache_root


def generate_events(process: str, pileup: int, n_events: int, **options: Any) -> TrackEvents:
    """Simulate (or load from the cache) events ``0 .. n_events-1`` of one sample.

    Parameters
    ----------
    process
        ``"bkg"`` (pileup only), ``"zmumu"``, ``"zp80"``, ``"zp70"``, ``"zp60"``, ``"zp50"``,
        ``"zp20"``, ``"zp10"`` or ``"tau3mu"`` (GeSS appendix C.2).
    pileup
        Mean number of soft-QCD pileup interactions (GeSS: 10, 50, 90).
    n_events
        Number of events.

    Other Parameters
    ----------------
    **options
        The keyword options of :func:`generate_samples`, passed on unchanged (one definition
        of each option and its default):
    seed : int
        Seed of the sample (default 0); the same seed gives bit-identical events.
    cache_dir : str or Path
        Cache root (default :func:`default_cache_dir`).
    n_workers : int
        Worker processes (default 1); 1 simulates in this process.
    callback : callable
        ``callback(done, total)`` after every finished event (CLIs draw a progress bar).
    config : TrackSimConfig
        Simulation settings (default :class:`TrackSimConfig`).
    keep_event_files : bool
        Keep the per-event files after packing (default False: delete them; the pack serves later
        requests of any size up to its count).

    Returns
    -------
    TrackEvents
        The events in index order.

    Raises
    ------
    ImportError
        If events must be simulated (not cached yet) but PYTHIA 8 or ACTS is not installed.
    """
    return generate_samples([(process, pileup, n_events)], **options)[0]


def generate_samples(
    requests: list[tuple[str, int, int]],
    *,
    seed: int = 0,
    cache_dir: str | Path | None = None,
    n_workers: int = 1,
    callback: ProgressCallback | None = None,
    config: TrackSimConfig | None = None,
    keep_event_files: bool = False,
) -> list[TrackEvents]:
    """Several samples at once, ``(process, pileup, n_events)`` each, sharing one worker pool.

    Same contract as :func:`generate_events` for each request; ``callback(done, total)``
    counts the events of all requests together.
    """
    if not isinstance(requests, (list, tuple)):
        raise TypeError("requests must be a list of (process, pileup, n_events) tuples")
    seed = _check_int("seed", seed)
    n_workers = _check_int("n_workers", n_workers, 1)
    config, cache_root = _resolve(config, cache_dir)
    checked = []
    for req in requests:
        if not isinstance(req, (list, tuple)) or len(req) != 3:
            raise ValueError(f"each request must be (process, pileup, n_events), got {req!r}")
        process, pileup, n = req
        check_process(process)
        checked.append((process, _check_int("pileup", pileup), _check_int("n_events", n)))
    # one process at a time per sample (issue 34): another process packing a sample removes its
    # per-event files, so planning, simulating and packing all happen under the sample's lock;
    # locks are taken in sorted order, so two processes asking for several samples never deadlock
    # a sample asked for twice (two sizes) is planned once, at its largest size
    largest: dict[tuple[str, int], int] = {}
    for p, pu, n in checked:
        largest[(p, pu)] = max(n, largest.get((p, pu), 0))
    folders = sorted({sample_dir(p, pu, seed, cache_root, config) for p, pu in largest})
    with ExitStack() as locks:
        for folder in folders:
            locks.enter_context(entry_lock(folder, "Track sample"))
        keys = list(largest)
        plans = [_plan(p, pu, largest[(p, pu)], seed, cache_root, config) for p, pu in keys]
        made = dict(zip(keys, _generate(plans, seed, cache_root, config, n_workers, callback,
                                        keep_event_files), strict=True))
    return [made[(p, pu)] if n == largest[(p, pu)] else _slice(made[(p, pu)], n, made[(p, pu)].meta)
            for p, pu, n in checked]


def _generate(plans, seed, cache_root, config, n_workers, callback, keep_event_files):
    tasks = [(p["process"], p["pileup"], i, p["folder"]) for p in plans for i in p["missing"]]
    total = sum(p["n"] for p in plans if p["result"] is None)
    done = total - len(tasks)
    if callback is not None and done and total:
        callback(done, total)
    if tasks:
        _simulate(tasks, plans, seed, cache_root, config, n_workers, callback, done, total)
    return [_finish(p, keep_event_files) for p in plans]


def _plan(process, pileup, n, seed, cache_root, config) -> dict:
    folder = sample_dir(process, pileup, seed, cache_root, config)
    meta = {
        "process": process,
        "pileup": pileup,
        "seed": seed,
        "config": config.for_process(process).to_dict(),
        "config_digest": config.for_process(process).digest(),
    }
    plan = {
        "process": process,
        "pileup": pileup,
        "n": n,
        "folder": folder,
        "meta": meta,
        "result": None,
        "largest": None,
        "have": 0,
        "missing": [],
    }
    packs = _packs(folder)
    bigger = [c for c in packs if c >= n]
    if bigger:
        pack = TrackEvents.load(packs[min(bigger)])
        plan["result"] = pack if min(bigger) == n else _slice(pack, n, meta)
        return plan
    if packs:
        plan["largest"] = TrackEvents.load(packs[max(packs)])
        plan["have"] = len(plan["largest"])
    plan["missing"] = [i for i in range(plan["have"], n) if not _event_path(folder, i).exists()]
    return plan


def _simulate(tasks, plans, seed, cache_root, config, n_workers, callback, done, total):
    try:
        require("pythia8mc")
        require("acts.examples")
    except ImportError as err:
        raise ImportError(
            f"{len(tasks)} events are not in the cache {cache_root} and simulating them needs "
            f"PYTHIA 8 and ACTS: {INSTALL_HINT}"
        ) from err
    from gs_data.track._sim import ensure_init_file

    for p in plans:
        if p["missing"]:
            atomic_write_text(
                p["folder"] / "config.json", json.dumps(p["meta"], indent=2, sort_keys=True)
            )
    for proc in sorted({"bkg"} | {p["process"] for p in plans if p["missing"]}):
        ensure_init_file(proc, config, cache_root)
    for p in plans:  # one line per sample built, so that builds can be counted in the job logs
        if p["missing"]:
            logger.info("building the Track sample %s: simulating %d of its %d events",
                        p["folder"], len(p["missing"]), p["n"])
    logger.info("simulating %d Track events with %d workers", len(tasks), n_workers)
    if n_workers == 1:
        _worker_init(config.to_dict(), str(cache_root))
        try:
            for process, pileup, i, folder in tasks:
                _worker_run(process, pileup, seed, i, str(_event_path(folder, i)))
                done += 1
                if callback is not None:
                    callback(done, total)
        finally:
            _WORKER.clear()
        return
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        max_workers=min(n_workers, len(tasks)),
        mp_context=ctx,
        initializer=_worker_init,
        initargs=(config.to_dict(), str(cache_root)),
    ) as pool:
        futures = [
            pool.submit(_worker_run, process, pileup, seed, i, str(_event_path(folder, i)))
            for process, pileup, i, folder in tasks
        ]
        try:
            # one callback per finished event, as it finishes (waiting with FIRST_EXCEPTION
            # returned only when every event was done: a progress bar stood at 0 until the end)
            for fut in as_completed(futures):
                fut.result()  # re-raise a worker error here
                done += 1
                if callback is not None:
                    callback(done, total)
        except BaseException:
            for fut in futures:
                fut.cancel()
            raise


def _finish(plan: dict, keep_event_files: bool) -> TrackEvents:
    if plan["result"] is not None:
        return plan["result"]
    folder, n, have, largest = plan["folder"], plan["n"], plan["have"], plan["largest"]
    events = []
    for i in range(n):
        if i < have:
            events.append(_event_from_pack(largest, i))
        else:
            with np.load(_event_path(folder, i), allow_pickle=False) as z:
                events.append({k: z[k] for k in z.files})
    result = TrackEvents.from_event_dicts(events, meta=plan["meta"])
    result.save(folder / f"pack-{n}.npz")
    logger.info("packed the Track sample %s (%d events)", folder / f"pack-{n}.npz", n)
    if not keep_event_files:
        for i in range(have, n):
            _event_path(folder, i).unlink(missing_ok=True)
    # temporary files of a run that was killed while writing an event
    for tmp in (folder / "events").glob("*.tmp"):
        tmp.unlink(missing_ok=True)
    return result


def _slice(pack: TrackEvents, n: int, meta: dict) -> TrackEvents:
    events = [_event_from_pack(pack, i) for i in range(n)]
    return TrackEvents.from_event_dicts(events, meta=meta)
