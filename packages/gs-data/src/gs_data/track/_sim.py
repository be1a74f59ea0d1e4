"""The event simulator: PYTHIA 8 generation and ACTS Fatras detector response.

Imported only where the ``track`` extra is installed (see :mod:`gs_data.track.deps`).
Every event is a pure function of ``(process, pileup, seed, index, config)``: all its random
numbers (number of pileup interactions, vertices, PYTHIA seeds, the Fatras event number) are
drawn from ``numpy.random.SeedSequence([seed, process code, pileup, index])``, and PYTHIA is
re-seeded (``Rndm::init``) before each interaction, so an event does not depend on which
worker produced it or on what was generated before it.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np

from gs_data._io import atomic_path, entry_lock
from gs_data.track.config import PROCESSES, TrackSimConfig, check_process, pythia_settings
from gs_data.track.deps import require
from gs_data.track.store import FLOAT_COLUMNS, encode_barcode

logger = logging.getLogger(__name__)

_MAX_PYTHIA_SEED = 900_000_000
_MAX_RHO_MM = 24.0
_MAX_Z_MM = 1000.0
_SIGNAL_PARENTS = {"zmumu": 23, "tau3mu": 15}


def _signal_parent(process: str) -> int:
    return _SIGNAL_PARENTS.get(process, 32)


def event_seed_sequence(process: str, pileup: int, seed: int, index: int) -> np.random.SeedSequence:
    """The seed sequence of one event (its only source of randomness)."""
    return np.random.SeedSequence([int(seed), PROCESSES[process], int(pileup), int(index)])


def _init_file(cache_dir: Path, process: str, config: TrackSimConfig) -> Path:
    key = f"{process}-{config.for_process(process).digest()}"
    return cache_dir / "pythia-init" / f"mpi-{key}.dat"


def ensure_init_file(process: str, config: TrackSimConfig, init_dir: str | Path) -> Path:
    """Compute PYTHIA's multiparton-interaction tables of ``process`` once and save them.

    The tables take up to half a minute to compute for soft QCD; they are saved atomically
    and every PYTHIA instance (including the first) reads them back, so all workers start
    from bit-identical tables.
    """
    pythia8mc = require("pythia8mc")
    path = _init_file(Path(init_dir), process, config)
    if path.exists():
        return path
    with entry_lock(path, "PYTHIA initialisation file"):  # computed once (issue 34)
        if path.exists():
            return path
        logger.info("building the PYTHIA initialisation file %s", path)
        with atomic_path(path) as tmp:  # PYTHIA creates the file (umask applies)
            builder = pythia8mc.Pythia("", False)
            for s in pythia_settings(process, config):
                builder.readString(s)
            builder.readString("MultipartonInteractions:reuseInit = 1")
            builder.readString(f"MultipartonInteractions:initFile = {tmp}")
            if not builder.init():
                raise RuntimeError(f"PYTHIA initialisation failed for process {process!r}")
    return path


def _make_pythia(process: str, config: TrackSimConfig, init_dir: Path):
    """A PYTHIA instance for ``process`` initialised from the saved tables."""
    pythia8mc = require("pythia8mc")
    path = ensure_init_file(process, config, init_dir)
    pythia = pythia8mc.Pythia("", False)
    for s in pythia_settings(process, config):
        pythia.readString(s)
    pythia.readString("MultipartonInteractions:reuseInit = 2")
    pythia.readString(f"MultipartonInteractions:initFile = {path}")
    if not pythia.init():
        raise RuntimeError(f"PYTHIA initialisation failed for process {process!r}")
    return pythia


class EventSimulator:
    """Simulates Track events of any process at any pileup (one instance per worker).

    Parameters
    ----------
    config
        Simulation settings.
    init_dir
        Folder for PYTHIA's saved initialisation tables (shared by all workers).
    """

    def __init__(self, config: TrackSimConfig, init_dir: str | Path):
        self.config = config
        self.init_dir = Path(init_dir)
        self._pythia: dict[str, object] = {}
        acts = require("acts")
        ae = require("acts.examples")
        self._acts, self._ae = acts, ae
        u = acts.UnitConstants
        self._u = u
        self._detector = ae.GenericDetector(logLevel=acts.logging.ERROR)
        self._geometry = self._detector.trackingGeometry()
        self._field = acts.ConstantBField(acts.Vector3(0.0, 0.0, config.bfield_tesla * u.T))
        # the per-event randomness enters through the event number of the algorithm context
        self._rnd = ae.RandomNumbers(seed=1)
        inter = bool(config.interactions)
        self._fatras = ae.FatrasSimulation(
            level=acts.logging.ERROR,
            inputParticles="particles_input",
            outputParticles="particles_simulated",
            outputSimHits="simhits",
            randomNumbers=self._rnd,
            trackingGeometry=self._geometry,
            magneticField=self._field,
            generateHitsOnSensitive=True,
            emScattering=inter,
            emEnergyLossIonisation=inter,
            emEnergyLossRadiation=inter,
            emPhotonConversion=inter,
        )
        self._inject, self._collect = _make_io_algorithms(acts, ae)

    @property
    def tracking_geometry(self):
        """The ACTS tracking geometry of the Generic detector."""
        return self._geometry

    @property
    def geometry_context(self):
        """The nominal ACTS geometry context of the detector."""
        ctx = self._detector.nominalGeometryContext
        return ctx() if callable(ctx) else ctx

    def pythia(self, process: str):
        """The (lazily initialised) PYTHIA instance of a process ('bkg' is soft-QCD pileup)."""
        if process not in self._pythia:
            self._pythia[process] = _make_pythia(process, self.config, self.init_dir)
        return self._pythia[process]

    # ------------------------------------------------------------------ generation
    def _hard_event(self, process: str, pythia_seed: int):
        """Generate the hard process until a signal decay lies in the acceptance."""
        pythia = self.pythia(process)
        pythia.rndm.init(pythia_seed)
        parent = _signal_parent(process)
        max_eta = self.config.max_abs_eta
        min_pt = self.config.signal_min_pt_gev
        for _ in range(self.config.max_hard_tries):
            if not pythia.next():
                continue
            ev = pythia.event
            signal: set[int] = set()
            mass = 0.0
            for i in range(ev.size()):
                p = ev[i]
                if p.idAbs() != parent or p.iBotCopyId() != i or p.daughter1() == 0:
                    continue
                muons = [
                    j for j in p.daughterListRecursive() if ev[j].isFinal() and ev[j].idAbs() == 13
                ]
                need = 3 if process == "tau3mu" else 2
                if len(muons) < need or any(abs(ev[j].eta()) > max_eta for j in muons):
                    continue
                if min_pt is not None and any(ev[j].pT() < min_pt for j in muons):
                    continue
                signal.update(muons)
                px = sum(ev[j].px() for j in muons)
                py = sum(ev[j].py() for j in muons)
                pz = sum(ev[j].pz() for j in muons)
                e = sum(ev[j].e() for j in muons)
                mass = max(mass, math.sqrt(max(e * e - px * px - py * py - pz * pz, 0.0)))
            if signal:
                return ev, signal, mass
        raise RuntimeError(
            f"no accepted {process} signal decay in {self.config.max_hard_tries} PYTHIA events; "
            "raise TrackSimConfig.max_hard_tries or widen max_abs_eta"
        )

    def _particles(self, ev, signal: set[int], vertex: np.ndarray) -> list[tuple]:
        """Charged final-state particles passed to Fatras: (pdg, q, m, p3, x4, is_signal)."""
        min_pt, max_eta = self.config.min_pt_gev, self.config.max_abs_eta
        # signal_event = "decay": of the hard event only its signal muons (pileup has no signal)
        decay_only = bool(signal) and self.config.signal_event == "decay"
        out = []
        for i in range(ev.size()):
            p = ev[i]
            if not p.isFinal() or not p.isCharged():
                continue
            is_sig = i in signal
            if not is_sig and (decay_only or p.pT() < min_pt or abs(p.eta()) > max_eta):
                continue
            # production inside the beam pipe (as the ACTS examples select): decay products of
            # long-lived hadrons made far out (PYTHIA decays every hadron) are dropped
            if math.hypot(p.xProd(), p.yProd()) > _MAX_RHO_MM or abs(p.zProd()) > _MAX_Z_MM:
                continue
            out.append(
                (
                    p.id(),
                    p.charge(),
                    p.m(),
                    (p.px(), p.py(), p.pz()),
                    (
                        p.xProd() + vertex[0],
                        p.yProd() + vertex[1],
                        p.zProd() + vertex[2],
                        p.tProd() + vertex[3],
                    ),
                    is_sig,
                )
            )
        return out

    def simulate(self, process: str, pileup: int, seed: int, index: int) -> dict[str, np.ndarray]:
        """Simulate one event.

        Parameters
        ----------
        process
            One of :data:`gs_data.track.config.PROCESSES`.
        pileup
            Mean number of soft-QCD pileup interactions (Poisson distributed per event).
        seed
            Seed of the sample (an int >= 0).
        index
            Index of the event in the sample (an int >= 0).

        Returns
        -------
        dict
            Hit columns (``tx`` ... ``deltae`` float32, ``particle_id`` and ``geometry_id``
            uint64, ``node_label`` int8, ``track_id`` int32) and particle columns
            (``p_particle_id``, ``p_pdg``, ``p_px``, ``p_py``, ``p_pz``, ``p_vx``, ``p_vy``,
            ``p_vz``, ``p_signal``), plus the scalars ``n_interactions`` and ``signal_mass``.
        """
        check_process(process)
        ss = event_seed_sequence(process, pileup, seed, index)
        rng = np.random.default_rng(ss)
        n_pileup = int(rng.poisson(pileup)) if pileup > 0 else 0
        sx, sy, sz = self.config.vertex_sigma_mm
        st = self.config.vertex_sigma_t_ns * self._u.ns
        n_total = n_pileup + (process != "bkg")
        vertices = rng.normal(0.0, 1.0, size=(n_total, 4)) * np.array([sx, sy, sz, st])
        py_seeds = rng.integers(1, _MAX_PYTHIA_SEED, size=n_total)
        fatras_event = int(rng.integers(0, 2**62))

        interactions: list[list[tuple]] = []
        signal_mass = 0.0
        k = 0
        if process != "bkg":
            ev, signal, signal_mass = self._hard_event(process, int(py_seeds[0]))
            interactions.append(self._particles(ev, signal, vertices[0]))
            k = 1
        soft = self.pythia("bkg")
        for j in range(k, n_total):
            soft.rndm.init(int(py_seeds[j]))
            while not soft.next():  # pragma: no cover - PYTHIA failures are rare
                pass
            interactions.append(self._particles(soft.event, set(), vertices[j]))

        out = self._run_fatras(interactions, fatras_event)
        out["n_interactions"] = np.asarray(n_total, dtype=np.int32)
        out["signal_mass"] = np.asarray(signal_mass, dtype=np.float64)
        return out

    def simulate_particles(self, particles, event_number: int = 0) -> dict[str, np.ndarray]:
        """Fatras response to given particles (a particle gun), all from one vertex.

        Parameters
        ----------
        particles
            Sequence of ``(pdg, charge, mass_gev, (px, py, pz) in GeV, (x, y, z, t) in mm)``.
        event_number
            Selects the random stream of the material effects.

        Returns
        -------
        dict
            Hit and particle columns as in :meth:`simulate` (no scalars).
        """
        rows = []
        for k, part in enumerate(particles):
            if len(part) != 5:
                raise ValueError(
                    f"particle {k} must be (pdg, charge, mass, (px, py, pz), (x, y, z, t)), "
                    f"got {part!r}"
                )
            pdg, q, m, p3, x4 = part
            rows.append(
                (int(pdg), float(q), float(m), tuple(map(float, p3)), tuple(map(float, x4)), False)
            )
        return self._run_fatras([rows], int(event_number))

    def _run_fatras(self, interactions: list[list[tuple]], event_number: int) -> dict:
        acts, ae = self._acts, self._ae
        from acts.ActsFatrasPythonBindings import Barcode

        container = ae.SimParticleContainer()
        p_rows = []
        for v, particles in enumerate(interactions):
            for n, (pdg, q, m, p3, x4, is_sig) in enumerate(particles):
                bc = Barcode()
                bc.vertexPrimary = v + 1
                bc.particle = n + 1
                sp = ae.SimParticle(bc, acts.PdgParticle(int(pdg)), float(q), float(m))
                sp.fourPosition = acts.Vector4(*x4)
                pabs = math.sqrt(p3[0] ** 2 + p3[1] ** 2 + p3[2] ** 2)
                sp.direction = acts.Vector3(p3[0] / pabs, p3[1] / pabs, p3[2] / pabs)
                sp.absoluteMomentum = pabs
                container.insert(sp)
                p_rows.append((encode_barcode(v + 1, 0, n + 1, 0, 0), pdg, *p3, *x4[:3], is_sig))

        self._inject.particles = container
        wb = ae.WhiteBoard(acts.logging.ERROR)
        for i, alg in enumerate((self._inject, self._fatras, self._collect)):
            ctx = ae.AlgorithmContext(i, event_number, wb, 0)
            code = alg.internalExecute(ctx)
            if code != ae.ProcessCode.SUCCESS:
                raise RuntimeError(f"ACTS algorithm {alg.name()} failed with {code}")
        rows = self._collect.rows
        self._inject.particles = None

        hits: dict[str, np.ndarray] = {}
        arr = np.asarray([r[:12] for r in rows], dtype=np.float64).reshape(-1, 12)
        for c, name in enumerate(FLOAT_COLUMNS):
            hits[name] = arr[:, c].astype(np.float32)
        pid = np.asarray([r[12] for r in rows], dtype=np.uint64)
        hits["particle_id"] = pid
        hits["geometry_id"] = np.asarray([r[13] for r in rows], dtype=np.uint64)
        sig_ids = {row[0] for row in p_rows if row[-1]}
        hits["node_label"] = np.fromiter(
            (p in sig_ids for p in pid.tolist()), dtype=np.int8, count=len(pid)
        )
        # dense track ids in order of first appearance, as GeSS numbers them
        _, first, inverse = np.unique(pid, return_index=True, return_inverse=True)
        order = np.argsort(np.argsort(first))
        hits["track_id"] = order[inverse].astype(np.int32).reshape(-1)

        parr = np.asarray([r[1:8] for r in p_rows], dtype=np.float64).reshape(-1, 7)
        hits["p_particle_id"] = np.asarray([r[0] for r in p_rows], dtype=np.uint64)
        hits["p_pdg"] = parr[:, 0].astype(np.int32)
        for c, name in enumerate(("p_px", "p_py", "p_pz", "p_vx", "p_vy", "p_vz")):
            hits[name] = parr[:, c + 1].astype(np.float32)
        hits["p_signal"] = np.asarray([r[-1] for r in p_rows], dtype=np.int8)
        return hits


def _make_io_algorithms(acts, ae):
    """Python ACTS algorithms that put our particles on the whiteboard and read the hits back."""

    class _Inject(ae.IAlgorithm):
        def __init__(self):
            super().__init__(name="gs_inject", level=acts.logging.ERROR)
            self.handle = ae.WriteDataHandle(self, ae.SimParticleContainer, "OutputParticles")
            self.handle.initialize("particles_input")
            self.particles = None

        def execute(self, ctx):
            self.handle(ctx, self.particles)
            return ae.ProcessCode.SUCCESS

    class _Collect(ae.IAlgorithm):
        def __init__(self):
            super().__init__(name="gs_collect", level=acts.logging.ERROR)
            self.handle = ae.ReadDataHandle(self, ae.SimHitContainer, "InputSimHits")
            self.handle.initialize("simhits")
            self.rows: list[tuple] = []

        def execute(self, ctx):
            ns = acts.UnitConstants.ns
            rows = []
            for h in self.handle(ctx.eventStore):
                x = h.fourPosition
                b = h.momentum4Before
                a = h.momentum4After
                bc = h.particleId
                rows.append(
                    (
                        x[0],
                        x[1],
                        x[2],
                        x[3] / ns,
                        b[0],
                        b[1],
                        b[2],
                        b[3],
                        a[0] - b[0],
                        a[1] - b[1],
                        a[2] - b[2],
                        a[3] - b[3],
                        encode_barcode(
                            bc.vertexPrimary,
                            bc.vertexSecondary,
                            bc.particle,
                            bc.generation,
                            bc.subParticle,
                        ),
                        h.geometryId.value,
                    )
                )
            self.rows = rows
            return ae.ProcessCode.SUCCESS

    return _Inject(), _Collect()
