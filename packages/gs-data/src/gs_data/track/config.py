"""Configuration of the Track simulation (GeSS section 3.2.1 and appendix C.2).

GeSS (``../shared/papers/gess-geometric-shifts.md``, section 3.2.1, appendix C.2) simulates
collision events at the LHC with PYTHIA 8 (soft-QCD pileup plus, for signal events, one hard
process) and propagates the particles through the ACTS Generic detector in a 2 T solenoid
field with ACTS Fatras. The settings the paper does not state are documented here, with the
reason for each choice.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass

#: Processes that can be simulated, with a stable integer code (used to derive seeds).
#: ``bkg`` is pileup only (a negative event); every other process adds one hard process whose
#: decay muons are the signal (``node_label == 1``).
PROCESSES: dict[str, int] = {
    "bkg": 0,
    "zmumu": 1,
    "zp80": 2,
    "zp70": 3,
    "zp60": 4,
    "zp50": 5,
    "zp20": 6,
    "zp10": 7,
    "tau3mu": 8,
}

#: Z' pole masses in GeV (GeSS appendix C.2: m0 in {80, 70, 60, 50} for the source,
#: {20, 10} for the target).
ZPRIME_MASSES: dict[str, float] = {
    "zp80": 80.0,
    "zp70": 70.0,
    "zp60": 60.0,
    "zp50": 50.0,
    "zp20": 20.0,
    "zp10": 10.0,
}

#: Pileup levels of GeSS (section 3.2.1): PU10 source, PU50 and PU90 targets.
PILEUP_LEVELS = (10, 50, 90)

#: What a signal event's hard interaction contributes (:attr:`TrackSimConfig.signal_event`).
SIGNAL_EVENTS = ("hard", "decay")


def check_process(process: str) -> str:
    """Validate a process name."""
    if not isinstance(process, str) or process not in PROCESSES:
        raise ValueError(f"process must be one of {sorted(PROCESSES)}, got {process!r}")
    return process


@dataclass(frozen=True)
class TrackSimConfig:
    """Settings of one Track simulation (GeSS section 3.2.1, appendix C.2).

    Parameters
    ----------
    ecm_gev
        Centre-of-mass energy of the proton-proton collisions (14 TeV, the LHC design
        energy that GeSS uses).
    bfield_tesla
        Strength of the constant solenoid field along z (GeSS: 2 T, the ``tesla='2T'`` of
        the released file names).
    min_pt_gev
        Transverse-momentum threshold of the charged final-state particles that are passed to
        the detector simulation. GeSS does not state it; 1 GeV reproduces GeSS table 5: the
        mean radius of background tracks there, 2724.96 mm, is pT = 0.3 B R = 1.63 GeV, the
        mean pT of soft-QCD tracks above 1 GeV. The decay muons of the signal are always
        simulated, whatever their pT. Only charged final-state particles produced within
        24 mm of the beam line and 1 m of the interaction point (the selection of the ACTS
        examples) are simulated; neutral particles leave no hits.
    max_abs_eta
        Pseudorapidity acceptance for background particles and for the signal muons of an
        accepted signal event (the tracker acceptance of the Generic detector, |eta| < 2.5).
    vertex_sigma_mm
        Gaussian smearing (x, y, z) of each interaction vertex along the beam line, the values of
        the ACTS examples (12.5 um transverse, 55.5 mm longitudinal).
    vertex_sigma_t_ns
        Gaussian smearing of the interaction time (5 ns, ACTS examples).
    interactions
        Enable multiple scattering, ionisation, bremsstrahlung and photon conversion in Fatras.
    max_hard_tries
        Hard-process events generated before giving up on finding an accepted signal decay.
    signal_min_pt_gev
        ``None`` (the default, as before): the signal muons are simulated whatever their pT.
        A number: a signal decay is accepted only if each of its muons (3 for tau -> 3 mu, 2
        for Z / Z') has at least this pT, the threshold the other particles get. GeSS does not
        say; with 1 GeV our tau -> 3 mu signal tracks have a mean radius of 4036 mm on the
        400 ci-size target events (GeSS table 5: 3979.66 mm; without the cut 2844 mm), which
        keeps 54 of those 400 decays (issue 29; ``apps/bench`` README). Left out of
        :meth:`to_dict` and the cache key when ``None``, so the caches of before stay valid.
    signal_event
        What a signal event's hard interaction contributes besides its pileup. ``"hard"`` (the
        default, as before): every charged final-state particle of the hard event that passes
        the cuts (the signal muons plus the event's initial-state radiation, underlying event
        and, for tau -> 3 mu from c cbar, the charm jets). ``"decay"``: the signal muons only,
        the reading of GeSS's "signal particles plus backgrounds" (GeSS section 3.2.1) in which
        a signal event differs from a background event by its signal tracks alone. GeSS's text
        and code do not say which (its code downloads processed events; issue 53). The same
        hard events are generated either way (the same seeds, the same accepted decays); left
        out of :meth:`to_dict` and the cache key when ``"hard"``.
    """

    ecm_gev: float = 14000.0
    bfield_tesla: float = 2.0
    min_pt_gev: float = 1.0
    max_abs_eta: float = 2.5
    vertex_sigma_mm: tuple[float, float, float] = (0.0125, 0.0125, 55.5)
    vertex_sigma_t_ns: float = 5.0
    interactions: bool = True
    max_hard_tries: int = 1000
    signal_min_pt_gev: float | None = None
    signal_event: str = "hard"

    def __post_init__(self) -> None:
        for name in ("ecm_gev", "bfield_tesla", "max_abs_eta", "vertex_sigma_t_ns"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"{name} must be a positive number, got {value!r}")
        if not isinstance(self.min_pt_gev, (int, float)) or self.min_pt_gev < 0:
            raise ValueError(f"min_pt_gev must be a number >= 0, got {self.min_pt_gev!r}")
        if len(self.vertex_sigma_mm) != 3 or any(s < 0 for s in self.vertex_sigma_mm):
            raise ValueError(
                f"vertex_sigma_mm must be three numbers >= 0, got {self.vertex_sigma_mm!r}"
            )
        if self.signal_min_pt_gev is not None and (
                isinstance(self.signal_min_pt_gev, bool) or not isinstance(self.signal_min_pt_gev, (int, float))
                or self.signal_min_pt_gev < 0):
            raise ValueError(f"signal_min_pt_gev must be None or a number >= 0, got {self.signal_min_pt_gev!r}")
        if self.signal_event not in SIGNAL_EVENTS:
            raise ValueError(f"signal_event must be one of {', '.join(map(repr, SIGNAL_EVENTS))}, "
                             f"got {self.signal_event!r}")
        if not isinstance(self.max_hard_tries, int) or self.max_hard_tries < 1:
            raise ValueError(f"max_hard_tries must be an int >= 1, got {self.max_hard_tries!r}")

    def to_dict(self) -> dict:
        """Plain-JSON form (stored next to generated events)."""
        d = dataclasses.asdict(self)
        d["vertex_sigma_mm"] = list(self.vertex_sigma_mm)
        if d["signal_min_pt_gev"] is None:  # the settings of before: their cache key unchanged
            del d["signal_min_pt_gev"]
        if d["signal_event"] == "hard":  # likewise
            del d["signal_event"]
        return d

    def for_process(self, process: str) -> TrackSimConfig:
        """The settings that determine the events of ``process``: all of them, except that
        background events (``"bkg"``, no signal decay) do not depend on
        :attr:`signal_min_pt_gev` and :attr:`signal_event`, which are dropped there, so that one
        background sample (and its cache folder) serves every signal setting."""
        if process == "bkg" and (self.signal_min_pt_gev is not None or self.signal_event != "hard"):
            return dataclasses.replace(self, signal_min_pt_gev=None, signal_event="hard")
        return self

    def digest(self) -> str:
        """Short hash of every setting; part of the cache key."""
        payload = json.dumps(self.to_dict(), sort_keys=True).encode()
        return hashlib.sha256(payload).hexdigest()[:12]


def pythia_settings(process: str, config: TrackSimConfig) -> list[str]:
    """PYTHIA 8 settings strings of one process (GeSS appendix C.2).

    * ``bkg`` (pileup): all inelastic soft-QCD processes.
    * ``zmumu``: Z (no gamma*) -> mu mu via ``WeakSingleBoson:ffbar2gmZ``.
    * ``zp<m>``: a Z' (PDG 32, no gamma*/Z interference) of pole mass m -> mu mu.
    * ``tau3mu``: c cbar production with D_s -> tau nu forced and tau -> 3 mu forced
      (isotropic phase space), the lepton-flavour-violating channel searched for at the LHC,
      where taus come mostly from D_s decays; this gives the soft muons whose track radius is
      closest to the background, as in GeSS table 5.
    """
    check_process(process)
    common = [
        f"Beams:eCM = {float(config.ecm_gev)}",
        "Print:quiet = on",
        "Next:numberCount = 0",
        "Random:setSeed = on",
    ]
    if process == "bkg":
        return common + ["SoftQCD:inelastic = on"]
    if process == "zmumu":
        return common + [
            "WeakSingleBoson:ffbar2gmZ = on",
            "WeakZ0:gmZmode = 2",
            "23:onMode = off",
            "23:onIfAny = 13",
        ]
    if process in ZPRIME_MASSES:
        m0 = ZPRIME_MASSES[process]
        return common + [
            "NewGaugeBoson:ffbar2gmZZprime = on",
            "Zprime:gmZmode = 3",
            f"32:m0 = {m0}",
            f"32:mMin = {0.5 * m0}",
            f"32:mMax = {1.5 * m0}",
            "32:onMode = off",
            "32:onIfAny = 13",
        ]
    # tau3mu
    return common + [
        "HardQCD:hardccbar = on",
        "PhaseSpace:pTHatMin = 5.",
        "431:onMode = off",
        "431:onIfMatch = 15 16",
        "15:oneChannel = 1 1.0 0 13 -13 13",
    ]
