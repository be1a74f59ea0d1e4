"""Physics of the Track simulation (PYTHIA 8 + ACTS Fatras in the Generic detector, 2 T).

These tests need the ``track`` extra (pythia8mc, pyacts); they are skipped, with that reason,
only where those optional packages are not installed. They simulate a handful of low-pileup
events (PU 2 to 10) into one temporary cache shared by the module.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip(
    "pythia8mc", reason="optional pythia8mc not installed (the track extra of gs-data)"
)
pytest.importorskip(
    "acts.examples", reason="optional pyacts not installed (the track extra of gs-data)"
)

from gs_data.track import (  # noqa: E402
    TrackSimConfig,
    decode_barcode,
    fit_circle,
    generate_events,
    helix_radius_mm,
    make_simulator,
    signal_track_radii_mm,
)
from gs_data.track.generate import sample_dir  # noqa: E402
from gs_data.track.store import HIT_COLUMNS  # noqa: E402

B_TESLA = 2.0
# barrel layer radii of the ACTS Generic detector (mm): pixel, short strips, long strips
GENERIC_BARREL_RADII = (32, 72, 116, 172, 260, 360, 500, 660, 820, 1020)


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("track-cache")


@pytest.fixture(scope="module")
def sim(cache):
    return make_simulator(TrackSimConfig(), cache)


@pytest.fixture(scope="module")
def samples(cache):
    """A few events of each kind (PU 5), simulated once for the module."""
    out = {}
    for process in ("bkg", "zmumu", "zp10", "tau3mu"):
        out[process] = generate_events(process, 5, 2, seed=11, cache_dir=cache)
    return out


def _layers(sim):
    """(volume, layer) -> (min, max) of the sensitive-surface centre radius and z."""
    gctx = sim.geometry_context
    table: dict[tuple[int, int], list] = {}

    def visit(surface):
        g = surface.geometryId
        c = surface.center(gctx)
        table.setdefault((g.volume, g.layer), []).append((math.hypot(c[0], c[1]), c[2]))

    sim.tracking_geometry.visitSurfaces(visit)
    out = {}
    for key, rows in table.items():
        r, z = np.asarray(rows).T
        out[key] = (r.min(), r.max(), z.min(), z.max())
    return out


def test_hit_radii_lie_on_generic_detector_layers(sim, samples):
    acts = pytest.importorskip("acts")
    layers = _layers(sim)
    barrel = {k: v for k, v in layers.items() if v[1] - v[0] < 5.0}
    # the geometry is the Generic detector: its barrel layers sit at the documented radii
    radii = sorted({round((v[0] + v[1]) / 2) for v in barrel.values()})
    assert radii == list(GENERIC_BARREL_RADII)
    n_checked = 0
    for events in samples.values():
        h = events.hits
        r = np.hypot(h["tx"], h["ty"])
        z = h["tz"]
        for k, gid in enumerate(h["geometry_id"].tolist()):
            g = acts.GeometryIdentifier(int(gid))
            rmin, rmax, zmin, zmax = layers[(g.volume, g.layer)]
            if (g.volume, g.layer) in barrel:
                # planar modules, tilted and staggered: a few mm around the layer radius
                assert rmin - 8.0 <= r[k] <= rmax + 8.0, (gid, r[k], rmin, rmax)
                assert zmin - 70.0 <= z[k] <= zmax + 70.0
            else:
                # endcap discs: the hit is on the disc (z) and inside its radial extent
                assert zmin - 8.0 <= z[k] <= zmax + 8.0, (gid, z[k], zmin, zmax)
                assert rmin - 80.0 <= r[k] <= rmax + 80.0
            n_checked += 1
        assert r.max() < 1040.0 and r.min() > 25.0 and np.abs(z).max() < 3000.0
    assert n_checked > 100


@pytest.mark.parametrize("pt", [1.0, 5.0, 20.0])
def test_single_muon_helix_radius_matches_pt(sim, pt):
    """A muon gun: the circle fitted to its hits has R = pT / (0.3 B) within 5%."""
    phi, eta = 0.4, 0.3
    px, py = pt * math.cos(phi), pt * math.sin(phi)
    pz = pt * math.sinh(eta)
    for charge, pdg in ((-1.0, 13), (1.0, -13)):
        hits = sim.simulate_particles(
            [(pdg, charge, 0.10566, (px, py, pz), (0, 0, 0, 0))], event_number=int(pt * 10)
        )
        primary = decode_barcode(hits["particle_id"])["generation"] == 0
        assert primary.sum() >= 8  # pixels and strips crossed
        _, _, radius = fit_circle(hits["tx"][primary], hits["ty"][primary])
        expected = float(helix_radius_mm(pt, B_TESLA))
        assert radius == pytest.approx(expected, rel=0.05)
        # the momentum stored with the hits is the generated one (GeV)
        assert np.hypot(hits["tpx"], hits["tpy"])[primary][0] == pytest.approx(pt, rel=0.01)


def test_signal_muon_helices_in_generated_events(samples):
    """Each signal muon's hits fit a circle of radius pT / (0.3 B) (pT generated), within 5%."""
    n_fitted = 0
    for process in ("zmumu", "zp10", "tau3mu"):
        events = samples[process]
        for i in range(len(events)):
            ev, parts = events.event(i), events.event_particles(i)
            for pid, px, py in zip(
                parts["p_particle_id"][parts["p_signal"] == 1],
                parts["p_px"][parts["p_signal"] == 1],
                parts["p_py"][parts["p_signal"] == 1],
                strict=True,
            ):
                sel = ev["particle_id"] == pid
                if sel.sum() < 6 or math.hypot(px, py) < 2.0:
                    continue  # too few hits, or curls up (no circle through 6 layers)
                radius = fit_circle(ev["tx"][sel], ev["ty"][sel])[2]
                assert radius == pytest.approx(
                    helix_radius_mm(math.hypot(px, py), B_TESLA), rel=0.05
                )
                n_fitted += 1
    assert n_fitted >= 6


def test_signal_labels_are_exactly_the_decay_muon_hits(samples):
    masses = {"zmumu": (60.0, 120.0), "zp10": (7.0, 13.0), "tau3mu": (1.70, 1.78)}
    bkg = samples["bkg"]
    assert bkg.hits["node_label"].sum() == 0 and bkg.particles["p_signal"].sum() == 0
    for process, (lo, hi) in masses.items():
        events = samples[process]
        for i in range(len(events)):
            ev, parts = events.event(i), events.event_particles(i)
            signal_ids = set(parts["p_particle_id"][parts["p_signal"] == 1].tolist())
            n_mu = 3 if process == "tau3mu" else 2
            assert len(signal_ids) >= n_mu
            # the signal particles are muons whose invariant mass is the decaying particle's
            assert set(np.abs(parts["p_pdg"][parts["p_signal"] == 1]).tolist()) == {13}
            assert lo <= float(events.signal_mass[i]) <= hi
            labelled = set(ev["particle_id"][ev["node_label"] == 1].tolist())
            with_hits = signal_ids & set(ev["particle_id"].tolist())
            # (a soft tau -> 3 mu muon may curl up inside the first layer and leave no hit)
            assert labelled == with_hits and len(labelled) >= 2
            # every hit of a signal muon is labelled, no other hit is
            is_sig = np.isin(ev["particle_id"], list(signal_ids))
            np.testing.assert_array_equal(ev["node_label"] == 1, is_sig)


def test_signal_track_radius_orders_like_gess(samples):
    r = {p: signal_track_radii_mm(samples[p]).mean() for p in ("tau3mu", "zp10", "zmumu")}
    assert r["tau3mu"] < r["zp10"] < r["zmumu"]


def _fresh_cache(cache: Path, root: Path) -> Path:
    """An empty sample cache holding only the PYTHIA tables (computing them is slow)."""
    (root / "pythia-init").mkdir(parents=True)
    for f in (cache / "pythia-init").glob("*.dat"):
        (root / "pythia-init" / f.name).write_bytes(f.read_bytes())
    return root


def test_same_seed_same_events_and_event_independence(cache, sim, samples, tmp_path):
    tmp_path = _fresh_cache(cache, tmp_path / "again")
    again = generate_events("zmumu", 5, 2, seed=11, cache_dir=tmp_path)
    first = samples["zmumu"]
    for c in HIT_COLUMNS:
        np.testing.assert_array_equal(again.hits[c], first.hits[c])
    # an event does not depend on what the simulator did before it
    alone = sim.simulate("zmumu", 5, 11, 1)
    np.testing.assert_array_equal(alone["tx"], first.event(1)["tx"])
    np.testing.assert_array_equal(alone["particle_id"], first.event(1)["particle_id"])
    other = generate_events("zmumu", 5, 1, seed=12, cache_dir=tmp_path)
    assert not np.array_equal(
        other.event(0)["tx"], first.event(0)["tx"][: len(other.event(0)["tx"])]
    )


def test_killed_generation_resumes_without_duplicates_or_gaps(cache, tmp_path):
    n = 10
    reference = generate_events("bkg", 5, n, seed=4, cache_dir=cache)
    # a fresh cache with the PYTHIA tables already computed (they are not what we test here)
    root = _fresh_cache(cache, tmp_path / "killed")
    folder = sample_dir("bkg", 5, 4, root, TrackSimConfig())
    # the child pauses 0.3 s after each event (through the progress callback) so that the
    # kill lands midway even on a busy machine
    code = (
        "import time\n"
        "from gs_data.track import generate_events\n"
        f"generate_events('bkg', 5, {n}, seed=4, cache_dir={str(root)!r},\n"
        "                callback=lambda done, total: time.sleep(0.3))\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], env=dict(os.environ))
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            done = list((folder / "events").glob("*.npz")) if (folder / "events").exists() else []
            if len(done) >= 2 or proc.poll() is not None:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    files = sorted((folder / "events").glob("*.npz"))
    assert 2 <= len(files) < n, "the generator should have been killed midway"
    assert not list(folder.glob("pack-*.npz"))
    calls = []
    resumed = generate_events(
        "bkg", 5, n, seed=4, cache_dir=root, callback=lambda d, t: calls.append(d)
    )
    assert calls[0] == len(files) and calls[-1] == n  # only the missing events were simulated
    assert len(resumed) == n
    for c in HIT_COLUMNS:
        np.testing.assert_array_equal(resumed.hits[c], reference.hits[c])
    np.testing.assert_array_equal(resumed.n_interactions, reference.n_interactions)


def test_parallel_workers_give_the_same_events(cache, samples, tmp_path):
    root = _fresh_cache(cache, tmp_path / "parallel")
    par = generate_events("bkg", 5, 2, seed=11, cache_dir=root, n_workers=2)
    for c in HIT_COLUMNS:
        np.testing.assert_array_equal(par.hits[c], samples["bkg"].hits[c])


def test_parallel_progress_is_reported_as_each_event_finishes(cache, tmp_path):
    """With worker processes the callback fires once per event while the others still run
    (it used to fire only when every event was done: a progress bar stood at 0 until then)."""
    root = _fresh_cache(cache, tmp_path / "progress")
    n = 6
    seen: list[tuple[int, int]] = []

    def callback(done, total):
        files = len(list(root.glob("bkg-*/events/*.npz")))
        seen.append((done, files))

    generate_events("bkg", 5, n, seed=12, cache_dir=root, n_workers=2, callback=callback)
    assert [d for d, _ in seen] == list(range(1, n + 1))
    assert seen[0][1] < n, f"the first report came after all {n} events were written: {seen}"


def test_signal_min_pt_keeps_only_decays_whose_muons_all_pass(cache):
    """``TrackSimConfig(signal_min_pt_gev=1)``: every generated signal muon of every event has
    pT >= 1 GeV (3 per tau -> 3 mu event), and the sample has its own cache key."""
    cfg = TrackSimConfig(signal_min_pt_gev=1.0)
    assert cfg.digest() != TrackSimConfig().digest()
    events = generate_events("tau3mu", 5, 3, seed=11, cache_dir=cache, config=cfg)
    for i in range(len(events)):
        parts = events.event_particles(i)
        sig = parts["p_signal"] == 1
        assert sig.sum() == 3
        assert np.all(np.hypot(parts["p_px"][sig], parts["p_py"][sig]) >= 1.0)


def test_signal_event_decay_keeps_of_the_hard_event_only_its_muons(cache):
    """``TrackSimConfig(signal_event="decay")``: the same hard events (the same seeds, the same
    accepted decays) as the default, but a signal event carries of its hard interaction only
    the signal muons; the default keeps the hard event's other charged particles, so it has
    more particles than the decay-only event (its pileup drawn alike)."""
    hard_cfg = TrackSimConfig()
    decay_cfg = TrackSimConfig(signal_event="decay")
    hard = generate_events("zmumu", 0, 3, seed=13, cache_dir=cache, config=hard_cfg)
    decay = generate_events("zmumu", 0, 3, seed=13, cache_dir=cache, config=decay_cfg)
    for i in range(3):
        ph, pd = hard.event_particles(i), decay.event_particles(i)
        # pileup 0: the decay-only event holds its two muons and nothing else
        assert pd["p_signal"].tolist() == [1, 1]
        assert np.all(np.abs(pd["p_pdg"]) == 13)
        assert (ph["p_signal"] == 1).sum() == 2 and len(ph["p_signal"]) > 2
        # the same muons: the same hard event and decay were generated
        np.testing.assert_allclose(np.sort(pd["p_px"]), np.sort(ph["p_px"][ph["p_signal"] == 1]))
