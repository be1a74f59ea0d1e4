"""SYNTHETIC Track events for tests of code downstream of the event cache.

:func:`synthetic_event` returns one event in the simulator's output layout (the columns of
:mod:`gs_data.track.store`: hits with :data:`~gs_data.track.store.FLOAT_COLUMNS`, particle
barcodes, geometry ids, the signal label, the per-particle table). Its hits are random numbers,
not physics: use it to test storage, packing, dataset assembly and the benchmark plumbing
without PYTHIA and ACTS, never to judge a model. gs-data's and gs-bench's tests both build their
tiny event caches from it.
"""

from __future__ import annotations

import numpy as np

from gs_data.track.store import FLOAT_COLUMNS, encode_barcode

__all__ = ["synthetic_event"]


def synthetic_event(
    rng: np.random.Generator,
    n_particles: int,
    n_signal: int = 0,
    *,
    max_hits: int = 8,
    scale: float = 1.0,
    shuffle: bool = True,
    pdg: int = 211,
    n_interactions: int = 3,
) -> dict[str, np.ndarray]:
    """A SYNTHETIC event: ``n_particles`` particles (the first ``n_signal`` of them signal) with
    3 to ``max_hits`` hits each, hit columns drawn from ``N(0, scale^2)`` (``tt`` made
    non-negative), in the column layout the simulator writes.

    ``shuffle`` puts the hits in random order (as a detector readout would), else particle by
    particle; ``pdg`` is every particle's PDG id; ``n_interactions`` the pileup count stored
    with the event. Particles are numbered 50 per primary vertex.
    """
    if n_particles < 1 or not 0 <= n_signal <= n_particles:
        raise ValueError(f"need n_particles >= 1 and 0 <= n_signal <= n_particles, got "
                         f"{n_particles} and {n_signal}")
    hits_per = rng.integers(3, max_hits + 1, size=n_particles)
    pids = np.asarray(
        [encode_barcode(1 + k // 50, 0, 1 + k % 50, 0, 0) for k in range(n_particles)],
        dtype=np.uint64,
    )
    pid = np.repeat(pids, hits_per)
    if shuffle:
        pid = pid[rng.permutation(pid.size)]
    n = pid.size
    ev = {c: rng.normal(size=n).astype(np.float32) * np.float32(scale) for c in FLOAT_COLUMNS}
    ev["tt"] = np.abs(ev["tt"])
    ev["particle_id"] = pid
    ev["geometry_id"] = rng.integers(0, 2**40, size=n).astype(np.uint64)
    sig = set(pids[:n_signal].tolist())
    ev["node_label"] = np.asarray([p in sig for p in pid.tolist()], dtype=np.int8)
    _, first, inv = np.unique(pid, return_index=True, return_inverse=True)
    ev["track_id"] = np.argsort(np.argsort(first))[inv.reshape(-1)].astype(np.int32)
    ev["p_particle_id"] = pids
    ev["p_pdg"] = np.full(n_particles, pdg, np.int32)
    for c in ("p_px", "p_py", "p_pz", "p_vx", "p_vy", "p_vz"):
        ev[c] = rng.normal(size=n_particles).astype(np.float32)
    ev["p_signal"] = np.asarray([k < n_signal for k in range(n_particles)], np.int8)
    ev["n_interactions"] = np.asarray(n_interactions, np.int32)
    ev["signal_mass"] = np.asarray(91.0 if n_signal else 0.0)
    return ev
