"""Reader and writer of the GeSS raw Track files (pickled per-event pandas frames).

GeSS released Track as pickles, one per (process, pileup level)::

    <root>/raw/background/bkg_events_2T_pileups_<PU>.pkl
    <root>/raw/background/bkg_events_2T_pileups_<PU>_for_train.pkl   (Track-Signal O-Feature pool)
    <root>/raw/z2mu/signal_events_2T_pileups_<PU>.pkl
    <root>/raw/z'2mu/signal_events_m0_<m0>_pileups_<PU>.pkl
    <root>/raw/tau3mu/signal_events_2T_pileups_<PU>.pkl

Each pickle holds a list of events; an event is a pair ``(hits, signal_im)``: a
``pandas.DataFrame`` with one row per hit and the ACTS hit columns (``tx, ty, tz, tt, tpx, tpy,
tpz, te, deltapx, deltapy, deltapz, deltae, particle_id, geometry_id``) plus ``node_label``, and
the invariant mass of the signal. Track ids are the particles numbered in order of first
appearance. Only the processed versions are downloadable (Zenodo records 10070680 and
10012747); users who have the raw pickles can load them here. They are read with a restricted
unpickler (:data:`GESS_PICKLE_GLOBALS`: the numpy / pandas / builtin names a list of frames
needs), so a file that asks for anything else is refused naming the file, and nothing from it
runs. pandas is imported lazily.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from gs_data._io import CorruptRawFileError
from gs_data._safe_pickle import NUMPY_ARRAY_GLOBALS, UnsafePickleError, restricted_load
from gs_data.track.config import ZPRIME_MASSES, check_process
from gs_data.track.deps import require
from gs_data.track.store import FLOAT_COLUMNS, TrackEvents

REQUIRED_COLUMNS = FLOAT_COLUMNS + ("particle_id", "geometry_id", "node_label")

#: what a pickled list of ``(DataFrame, float)`` pairs holds: numpy arrays and pandas' frame,
#: index and block reconstruction (pandas 1.x and 2.x+ names), nothing else
GESS_PICKLE_GLOBALS = NUMPY_ARRAY_GLOBALS | {
    ("builtins", "slice"),
    ("pandas", "DataFrame"),
    ("pandas.core.frame", "DataFrame"),
    ("pandas", "Index"),
    ("pandas.core.indexes.base", "Index"),
    ("pandas.core.indexes.base", "_new_Index"),
    ("pandas", "RangeIndex"),
    ("pandas.core.indexes.range", "RangeIndex"),
    ("pandas", "StringDtype"),
    ("pandas.arrays", "StringArray"),
    ("pandas._libs.arrays", "__pyx_unpickle_NDArrayBacked"),
    ("pandas._libs.internals", "_unpickle_block"),
    ("pandas.core.internals.blocks", "new_block"),
    ("pandas.core.internals.managers", "BlockManager"),
}


def gess_raw_path(
    root: str | Path, process: str, pileup: int, *, for_train: bool = False, tesla: str = "2T"
) -> Path:
    """Where GeSS keeps the raw pickle of ``process`` at ``pileup`` under ``root``."""
    check_process(process)
    raw = Path(root) / "raw"
    if for_train and process != "bkg":
        raise ValueError("for_train=True exists only for process 'bkg'")
    if process == "bkg":
        suffix = "_for_train" if for_train else ""
        return raw / "background" / f"bkg_events_{tesla}_pileups_{int(pileup)}{suffix}.pkl"
    if process == "zmumu":
        return raw / "z2mu" / f"signal_events_{tesla}_pileups_{int(pileup)}.pkl"
    if process == "tau3mu":
        return raw / "tau3mu" / f"signal_events_{tesla}_pileups_{int(pileup)}.pkl"
    m0 = int(ZPRIME_MASSES[process])
    return raw / "z'2mu" / f"signal_events_m0_{m0}_pileups_{int(pileup)}.pkl"


def _track_ids(particle_id: np.ndarray) -> np.ndarray:
    _, first, inverse = np.unique(particle_id, return_index=True, return_inverse=True)
    rank = np.argsort(np.argsort(first))
    return rank[inverse.reshape(-1)].astype(np.int32)


def events_from_gess_frames(events: Sequence, meta: dict | None = None) -> TrackEvents:
    """Convert GeSS raw events (``(DataFrame, signal_im)`` pairs) to :class:`TrackEvents`."""
    rows = []
    for k, item in enumerate(events):
        if not isinstance(item, (tuple, list)) or len(item) < 1:
            raise ValueError(
                f"event {k} must be a (hits DataFrame, signal_im) pair, got {type(item).__name__}"
            )
        frame = item[0]
        missing = [c for c in REQUIRED_COLUMNS if c not in getattr(frame, "columns", ())]
        if missing:
            raise ValueError(f"event {k}: hits frame lacks the columns {missing}")
        ev = {c: frame[c].to_numpy() for c in REQUIRED_COLUMNS}
        ev["particle_id"] = ev["particle_id"].astype(np.uint64)
        ev["track_id"] = _track_ids(ev["particle_id"])
        ev["signal_mass"] = float(item[1]) if len(item) > 1 and item[1] is not None else 0.0
        ev["n_interactions"] = -1
        for c in (
            "p_particle_id",
            "p_pdg",
            "p_px",
            "p_py",
            "p_pz",
            "p_vx",
            "p_vy",
            "p_vz",
            "p_signal",
        ):
            ev[c] = np.zeros(0)
        rows.append(ev)
    return TrackEvents.from_event_dicts(rows, meta=meta)


def load_gess_raw(path: str | Path) -> TrackEvents:
    """Load one GeSS raw Track pickle (see the module docstring) as :class:`TrackEvents`.

    Needs pandas (to unpickle the frames), not PYTHIA or ACTS. Particle columns are empty
    and ``n_interactions`` is -1 (the raw files do not store them).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"no GeSS raw Track pickle at {path}; place the file there (see "
            "gs_data.track.raw.gess_raw_path for the layout GeSS uses)"
        )
    require("pandas")
    try:
        with open(path, "rb") as f:
            events = restricted_load(f, GESS_PICKLE_GLOBALS, path=path, what="GeSS raw Track pickle")
    except UnsafePickleError:
        raise
    except Exception as exc:  # noqa: BLE001 - truncated, damaged, written by an unknown pandas
        raise CorruptRawFileError(
            f"{path}: cannot read this GeSS raw Track pickle ({type(exc).__name__}: {exc}); "
            "replace it with a good copy"
        ) from exc
    if not isinstance(events, list):
        raise ValueError(f"{path} must hold a list of events, got {type(events).__name__}")
    return events_from_gess_frames(events, meta={"source": str(path)})


def to_gess_frames(events: TrackEvents) -> list[tuple]:
    """Export events in the GeSS raw layout: a list of ``(DataFrame, signal_im)`` pairs."""
    pd = require("pandas")
    out = []
    for i in range(len(events)):
        ev = events.event(i)
        frame = pd.DataFrame({c: np.asarray(ev[c]) for c in REQUIRED_COLUMNS})
        mass = float(events.signal_mass[i]) if events.signal_mass is not None else 0.0
        out.append((frame, mass))
    return out


def save_gess_raw(events: TrackEvents, path: str | Path) -> None:
    """Write events as a GeSS raw pickle (atomic: temporary file, then rename)."""
    from gs_data._io import atomic_write

    frames = to_gess_frames(events)
    with atomic_write(Path(path)) as f:
        pickle.dump(frames, f, protocol=4)
