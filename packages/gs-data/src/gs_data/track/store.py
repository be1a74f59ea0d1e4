"""Storage of Track events: an in-memory container and the on-disk layout (numpy only).

A sample of events (one process, one pileup level, one seed) lives in one folder::

    <cache>/<process>-pu<PU>-seed<seed>-<config digest>/
        config.json              the simulation settings and the sample key
        events/000000123.npz     one file per finished event (atomic write), kept until packed
        pack-<count>.npz         events 0..count-1 concatenated (atomic write)

Hit columns follow the ACTS ``CsvSimHitWriter`` (the columns of the GeSS raw files): ``tx, ty,
tz`` (mm), ``tt`` (ns), ``tpx, tpy, tpz, te`` (GeV, momentum before the hit), ``deltapx ...
deltae`` (change at the hit), ``particle_id`` (the 64-bit ACTS barcode in the legacy encoding
of the ACTS versions GeSS used), ``geometry_id``, plus ``node_label`` (1 for hits of the signal
decay muons) and ``track_id`` (dense per event, in order of first appearance, as GeSS).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gs_data._io import atomic_write

FLOAT_COLUMNS = (
    "tx", "ty", "tz", "tt",
    "tpx", "tpy", "tpz", "te",
    "deltapx", "deltapy", "deltapz", "deltae",
)  # fmt: skip
HIT_COLUMNS = FLOAT_COLUMNS + ("particle_id", "geometry_id", "node_label", "track_id")
PARTICLE_COLUMNS = (
    "p_particle_id", "p_pdg", "p_px", "p_py", "p_pz", "p_vx", "p_vy", "p_vz", "p_signal",
)  # fmt: skip
EVENT_COLUMNS = ("n_interactions", "signal_mass")

_HIT_DTYPES = {
    **{c: np.float32 for c in FLOAT_COLUMNS},
    "particle_id": np.uint64,
    "geometry_id": np.uint64,
    "node_label": np.int8,
    "track_id": np.int32,
}
_PARTICLE_DTYPES = {
    "p_particle_id": np.uint64,
    "p_pdg": np.int32,
    **{c: np.float32 for c in ("p_px", "p_py", "p_pz", "p_vx", "p_vy", "p_vz")},
    "p_signal": np.int8,
}


def encode_barcode(
    vertex_primary: int, vertex_secondary: int, particle: int, generation: int, sub_particle: int
) -> int:
    """ACTS particle barcode as one 64-bit integer (legacy layout 12|12|16|8|16 bits).

    This is the ``particle_id`` of the ACTS CSV files of the ACTS releases GeSS used.
    """
    return (
        (int(vertex_primary) & 0xFFF) << 52
        | (int(vertex_secondary) & 0xFFF) << 40
        | (int(particle) & 0xFFFF) << 24
        | (int(generation) & 0xFF) << 16
        | (int(sub_particle) & 0xFFFF)
    )


def decode_barcode(particle_id) -> dict[str, np.ndarray]:
    """Inverse of :func:`encode_barcode` (vectorised)."""
    pid = np.asarray(particle_id, dtype=np.uint64)
    return {
        "vertex_primary": ((pid >> np.uint64(52)) & np.uint64(0xFFF)).astype(np.int64),
        "vertex_secondary": ((pid >> np.uint64(40)) & np.uint64(0xFFF)).astype(np.int64),
        "particle": ((pid >> np.uint64(24)) & np.uint64(0xFFFF)).astype(np.int64),
        "generation": ((pid >> np.uint64(16)) & np.uint64(0xFF)).astype(np.int64),
        "sub_particle": (pid & np.uint64(0xFFFF)).astype(np.int64),
    }


def atomic_savez(path: str | Path, **arrays) -> None:
    """``numpy.savez`` through :func:`gs_data._io.atomic_write` (temporary file, then rename)."""
    with atomic_write(path) as f:
        np.savez(f, **arrays)


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write text through :func:`gs_data._io.atomic_write` (temporary file, then rename)."""
    with atomic_write(path, "w") as f:
        f.write(text)


@dataclass
class TrackEvents:
    """A sample of Track events, as concatenated hit and particle columns with offsets.

    Attributes
    ----------
    hits
        Hit columns (see the module docstring), concatenated over events.
    hit_ptr
        int64 offsets, shape (n_events + 1,): the hits of event i are
        ``hits[c][hit_ptr[i]:hit_ptr[i + 1]]``.
    particles
        Columns of the generated particles passed to the detector simulation
        (``p_particle_id``, ``p_pdg``, momentum ``p_px, p_py, p_pz`` in GeV, production
        vertex ``p_vx, p_vy, p_vz`` in mm, ``p_signal``); may be empty for loaded raw data.
    particle_ptr
        int64 offsets of the particles, shape (n_events + 1,).
    n_interactions
        Number of pp interactions per event (pileup plus the hard process).
    signal_mass
        Invariant mass (GeV) of the signal decay muons at generator level, 0 for background.
    meta
        The sample key and simulation settings.
    """

    hits: dict[str, np.ndarray]
    hit_ptr: np.ndarray
    particles: dict[str, np.ndarray] = field(default_factory=dict)
    particle_ptr: np.ndarray | None = None
    n_interactions: np.ndarray | None = None
    signal_mass: np.ndarray | None = None
    meta: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.hit_ptr) - 1

    def event(self, i: int) -> dict[str, np.ndarray]:
        """Hit columns of event ``i`` (views, no copy)."""
        i = self._check(i)
        a, b = self.hit_ptr[i], self.hit_ptr[i + 1]
        return {c: v[a:b] for c, v in self.hits.items()}

    def event_particles(self, i: int) -> dict[str, np.ndarray]:
        """Particle columns of event ``i``."""
        i = self._check(i)
        if self.particle_ptr is None:
            return {}
        a, b = self.particle_ptr[i], self.particle_ptr[i + 1]
        return {c: v[a:b] for c, v in self.particles.items()}

    def positions(self, i: int) -> np.ndarray:
        """Hit positions (tx, ty, tz) of event ``i`` in mm, shape (n_hits, 3)."""
        ev = self.event(i)
        return np.stack([ev["tx"], ev["ty"], ev["tz"]], axis=1)

    def num_hits(self) -> np.ndarray:
        """Number of hits per event."""
        return np.diff(self.hit_ptr)

    def num_tracks(self) -> np.ndarray:
        """Number of distinct particles leaving hits per event (GeSS table 5 "#Tracks")."""
        out = np.zeros(len(self), dtype=np.int64)
        pid = self.hits["particle_id"]
        for i in range(len(self)):
            out[i] = np.unique(pid[self.hit_ptr[i] : self.hit_ptr[i + 1]]).size
        return out

    def __iter__(self) -> Iterator[dict[str, np.ndarray]]:
        for i in range(len(self)):
            yield self.event(i)

    def _check(self, i) -> int:
        if not isinstance(i, (int, np.integer)) or not -len(self) <= i < len(self):
            raise IndexError(f"event index must be an int in [0, {len(self)}), got {i!r}")
        return int(i) % len(self)

    # ------------------------------------------------------------------ (de)serialisation
    def to_arrays(self) -> dict[str, np.ndarray]:
        """Flat dict of arrays (the ``.npz`` layout)."""
        out = {f"hit_{c}": v for c, v in self.hits.items()}
        out.update({f"part_{c}": v for c, v in self.particles.items()})
        out["hit_ptr"] = self.hit_ptr
        if self.particle_ptr is not None:
            out["particle_ptr"] = self.particle_ptr
        if self.n_interactions is not None:
            out["n_interactions"] = self.n_interactions
        if self.signal_mass is not None:
            out["signal_mass"] = self.signal_mass
        out["meta"] = np.asarray(json.dumps(self.meta, sort_keys=True))
        return out

    @classmethod
    def from_arrays(cls, arrays) -> TrackEvents:
        """Inverse of :meth:`to_arrays`."""
        keys = list(arrays.keys())
        hits = {
            k[4:]: np.asarray(arrays[k]) for k in keys if k.startswith("hit_") and k != "hit_ptr"
        }
        parts = {k[5:]: np.asarray(arrays[k]) for k in keys if k.startswith("part_")}
        meta = json.loads(str(arrays["meta"])) if "meta" in keys else {}
        return cls(
            hits=hits,
            hit_ptr=np.asarray(arrays["hit_ptr"], dtype=np.int64),
            particles=parts,
            particle_ptr=(
                np.asarray(arrays["particle_ptr"], dtype=np.int64)
                if "particle_ptr" in keys
                else None
            ),
            n_interactions=np.asarray(arrays["n_interactions"])
            if "n_interactions" in keys
            else None,
            signal_mass=np.asarray(arrays["signal_mass"]) if "signal_mass" in keys else None,
            meta=meta,
        )

    def save(self, path: str | Path) -> None:
        """Write to ``path`` (``.npz``, atomic)."""
        atomic_savez(path, **self.to_arrays())

    @classmethod
    def load(cls, path: str | Path) -> TrackEvents:
        """Read a file written by :meth:`save` (needs neither PYTHIA nor ACTS)."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"no Track events file at {path}")
        with np.load(path, allow_pickle=False) as z:
            return cls.from_arrays({k: z[k] for k in z.files})

    @classmethod
    def concatenate(cls, parts: Sequence[TrackEvents], meta: dict | None = None) -> TrackEvents:
        """Concatenate samples (events in the given order)."""
        if not parts:
            raise ValueError("parts must contain at least one TrackEvents")
        hit_cols = list(parts[0].hits)
        part_cols = list(parts[0].particles)
        hits = {c: np.concatenate([p.hits[c] for p in parts]) for c in hit_cols}
        particles = {c: np.concatenate([p.particles[c] for p in parts]) for c in part_cols}

        def _ptr(ptrs):
            sizes = np.concatenate([np.diff(p) for p in ptrs])
            return np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)

        def _cat(name):
            vals = [getattr(p, name) for p in parts]
            return None if any(v is None for v in vals) else np.concatenate(vals)

        has_pp = all(p.particle_ptr is not None for p in parts)
        return cls(
            hits=hits,
            hit_ptr=_ptr([p.hit_ptr for p in parts]),
            particles=particles,
            particle_ptr=_ptr([p.particle_ptr for p in parts]) if has_pp else None,
            n_interactions=_cat("n_interactions"),
            signal_mass=_cat("signal_mass"),
            meta=dict(meta if meta is not None else parts[0].meta),
        )

    @classmethod
    def from_event_dicts(cls, events: Sequence[dict], meta: dict | None = None) -> TrackEvents:
        """Build from per-event dicts as returned by the simulator."""
        if len(events) == 0:
            return cls(
                hits={c: np.zeros(0, _HIT_DTYPES[c]) for c in HIT_COLUMNS},
                hit_ptr=np.zeros(1, np.int64),
                particles={c: np.zeros(0, _PARTICLE_DTYPES[c]) for c in PARTICLE_COLUMNS},
                particle_ptr=np.zeros(1, np.int64),
                n_interactions=np.zeros(0, np.int32),
                signal_mass=np.zeros(0, np.float64),
                meta=dict(meta or {}),
            )
        hits = {
            c: np.concatenate([e[c] for e in events]).astype(_HIT_DTYPES[c]) for c in HIT_COLUMNS
        }
        parts = {
            c: np.concatenate([e[c] for e in events]).astype(_PARTICLE_DTYPES[c])
            for c in PARTICLE_COLUMNS
        }
        nh = [len(e["tx"]) for e in events]
        npart = [len(e["p_particle_id"]) for e in events]
        return cls(
            hits=hits,
            hit_ptr=np.concatenate([[0], np.cumsum(nh)]).astype(np.int64),
            particles=parts,
            particle_ptr=np.concatenate([[0], np.cumsum(npart)]).astype(np.int64),
            n_interactions=np.asarray([int(e["n_interactions"]) for e in events], np.int32),
            signal_mass=np.asarray([float(e["signal_mass"]) for e in events], np.float64),
            meta=dict(meta or {}),
        )


def load_track_events(path: str | Path) -> TrackEvents:
    """Load generated Track events from a ``.npz`` file or a sample folder.

    Works without PYTHIA and ACTS. A folder is a sample folder of the generator cache: the
    largest ``pack-<count>.npz`` in it is loaded.

    Parameters
    ----------
    path
        A file written by :meth:`TrackEvents.save` or a sample folder.
    """
    path = Path(path)
    if path.is_dir():
        packs = sorted(path.glob("pack-*.npz"), key=lambda p: int(p.stem.split("-")[1]))
        if not packs:
            raise FileNotFoundError(
                f"no pack-<count>.npz in {path}: generate the sample first "
                "(gs_data.track.generate_events) or pass a .npz file"
            )
        return TrackEvents.load(packs[-1])
    return TrackEvents.load(path)
