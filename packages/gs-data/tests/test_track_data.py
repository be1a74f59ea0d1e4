"""gs_data.track without the simulator: storage, loaders, formulas, splits and builders.

Nothing here needs PYTHIA or ACTS. Events built by hand are synthetic and named so.
"""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pytest

from gs_data.track import (
    PROCESSES,
    TrackEvents,
    TrackPileupSizes,
    TrackSignalSizes,
    TrackSimConfig,
    build_track_pileup,
    build_track_signal,
    decode_barcode,
    encode_barcode,
    fit_circle,
    generate_events,
    helix_radius_mm,
    hit_count_subgroups,
    load_track_events,
    mean_tracks_per_event,
    signal_track_radii_mm,
    split_counts,
)
from gs_data.track.analysis import GESS_MEAN_BACKGROUND_RADIUS_MM
from gs_data.track.generate import sample_dir
from gs_data.track.raw import events_from_gess_frames, gess_raw_path, load_gess_raw, save_gess_raw
from gs_data.track.store import FLOAT_COLUMNS, HIT_COLUMNS
from gs_data.track.testing import synthetic_event


def synthetic_sample(seed: int, n: int, n_signal: int = 0) -> TrackEvents:
    rng = np.random.default_rng(seed)
    events = [synthetic_event(rng, int(rng.integers(5, 40)), n_signal) for _ in range(n)]
    return TrackEvents.from_event_dicts(events, meta={"synthetic": True})


# ---------------------------------------------------------------------------------- storage
def test_barcode_legacy_layout_round_trip():
    assert encode_barcode(1, 0, 3, 0, 0) == (1 << 52) | (3 << 24)
    assert encode_barcode(4095, 4095, 65535, 255, 65535) == 2**64 - 1
    ids = np.asarray([encode_barcode(7, 2, 300, 1, 9), encode_barcode(1, 0, 1, 0, 0)], np.uint64)
    d = decode_barcode(ids)
    assert d["vertex_primary"].tolist() == [7, 1]
    assert d["vertex_secondary"].tolist() == [2, 0]
    assert d["particle"].tolist() == [300, 1]
    assert d["generation"].tolist() == [1, 0]
    assert d["sub_particle"].tolist() == [9, 0]


def test_track_events_save_load_concatenate(tmp_path):
    a, b = synthetic_sample(1, 4, 2), synthetic_sample(2, 3)
    path = tmp_path / "a.npz"
    a.save(path)
    back = TrackEvents.load(path)
    assert len(back) == 4 and back.meta == {"synthetic": True}
    for c in HIT_COLUMNS:
        assert back.hits[c].dtype == a.hits[c].dtype
        np.testing.assert_array_equal(back.hits[c], a.hits[c])
    both = TrackEvents.concatenate([a, b])
    assert len(both) == 7
    np.testing.assert_array_equal(both.event(5)["tx"], b.event(1)["tx"])
    np.testing.assert_array_equal(both.event_particles(4)["p_px"], b.event_particles(0)["p_px"])
    np.testing.assert_array_equal(both.n_interactions, np.full(7, 3))
    # tracks are the distinct particle ids of an event (GeSS table 5 '#Tracks')
    expected = [len(set(a.event(i)["particle_id"].tolist())) for i in range(4)]
    assert a.num_tracks().tolist() == expected
    assert mean_tracks_per_event(a) == pytest.approx(np.mean(expected))
    with pytest.raises(IndexError, match="event index"):
        a.event(4)
    with pytest.raises(FileNotFoundError, match="no Track events file"):
        TrackEvents.load(tmp_path / "missing.npz")


def test_load_track_events_from_sample_folder(tmp_path):
    folder = tmp_path / "bkg-pu10-seed0-x"
    synthetic_sample(3, 2).save(folder / "pack-2.npz")
    synthetic_sample(4, 5).save(folder / "pack-5.npz")
    assert len(load_track_events(folder)) == 5
    with pytest.raises(FileNotFoundError, match="pack-<count>"):
        load_track_events(tmp_path)


# ---------------------------------------------------------------------------------- formulas
def test_helix_radius_worked_examples():
    # R[m] = pT[GeV] / (0.3 B[T]): 1 GeV in 2 T curls with R = 1.667 m
    assert helix_radius_mm(1.0, 2.0) == pytest.approx(1000.0 / 0.6)
    assert helix_radius_mm(np.array([0.6, 6.0]), 1.0).tolist() == pytest.approx([2000.0, 20000.0])
    # GeSS table 5: mean background radius 2724.96 mm is a mean pT of 1.635 GeV at 2 T
    assert GESS_MEAN_BACKGROUND_RADIUS_MM * 0.6 / 1000 == pytest.approx(1.635, abs=1e-3)
    with pytest.raises(ValueError, match="bfield_tesla"):
        helix_radius_mm(1.0, 0.0)


def test_fit_circle_exact_and_against_geometric_least_squares():
    from scipy.optimize import least_squares

    t = np.linspace(0.1, 0.7, 10)
    x, y = 3.0 + 1200.0 * np.cos(t), -40.0 + 1200.0 * np.sin(t)
    xc, yc, r = fit_circle(x, y)
    assert (xc, yc, r) == pytest.approx((3.0, -40.0, 1200.0), rel=1e-9)

    rng = np.random.default_rng(0)
    xn, yn = x + rng.normal(0, 0.05, x.size), y + rng.normal(0, 0.05, y.size)
    ref = least_squares(lambda p: np.hypot(xn - p[0], yn - p[1]) - p[2], x0=[0.0, 0.0, 1000.0]).x
    assert fit_circle(xn, yn)[2] == pytest.approx(ref[2], rel=2e-3)
    with pytest.raises(ValueError, match="collinear"):
        fit_circle([0, 1, 2], [0, 1, 2])
    with pytest.raises(ValueError, match="length >= 3"):
        fit_circle([0, 1], [0, 1])


def test_signal_track_radii_use_first_hit_momentum():
    rng = np.random.default_rng(5)
    ev = synthetic_event(rng, 6, n_signal=2)
    pid = ev["particle_id"]
    sig = ev["p_particle_id"][:2]
    expected = []
    for p in sig:
        sel = np.flatnonzero(pid == p)
        first = sel[np.argmin(ev["tt"][sel])]
        expected.append(np.hypot(ev["tpx"][first], ev["tpy"][first]) / 0.6 * 1000)
    events = TrackEvents.from_event_dicts([ev], meta={"config": {"bfield_tesla": 2.0}})
    got = signal_track_radii_mm(events)
    assert sorted(got.tolist()) == pytest.approx(sorted(expected), rel=1e-6)


# ---------------------------------------------------------------------------------- splits
def test_split_counts_reproduce_gess_table4():
    """Track's part sizes are gs_splits.split_sizes (one group); split_counts is deprecated."""
    from gs_splits import split_sizes

    # Track-Pileup source (background, signal) and Track-Signal background, GeSS table 4
    def counts(n, fractions):
        return split_sizes(n, fractions, groups=(len(fractions),))

    assert counts(19753, (0.75, 0.125, 0.125)) == [14814, 2469, 2470]
    assert counts(20846, (0.75, 0.125, 0.125)) == [15634, 2605, 2607]
    assert counts(19753, (0.6, 0.1, 0.1, 0.1, 0.1)) == [11851, 1975, 1975, 1975, 1977]
    assert counts(4000, (0.75, 0.125, 0.125)) == [3000, 500, 500]
    assert counts(20000, (0.75, 0.125, 0.125)) == [15000, 2500, 2500]
    with pytest.warns(DeprecationWarning, match="split_sizes"):
        assert split_counts(19753, (0.6, 0.1, 0.1, 0.1, 0.1)) == [11851, 1975, 1975, 1975, 1977]
    with pytest.raises(ValueError, match="sum to 1"), pytest.warns(DeprecationWarning):
        split_counts(10, (0.5, 0.4))


def test_hit_count_subgroups_match_numpy_histogram():
    x = np.random.default_rng(0).integers(100, 5000, size=500)
    groups = hit_count_subgroups(x, 5)
    counts, _ = np.histogram(x, bins=5)  # equal-width bins, last one closed
    assert np.bincount(groups, minlength=5).tolist() == counts.tolist()
    assert groups[np.argmax(x)] == 4 and groups[np.argmin(x)] == 0
    assert hit_count_subgroups(np.array([7, 7, 7])).tolist() == [0, 0, 0]


# ---------------------------------------------------------------------------------- GeSS raw
def test_gess_raw_pickle_round_trip(tmp_path):
    pd = pytest.importorskip(
        "pandas", reason="pandas (needed by the GeSS raw loader) not installed"
    )
    events = synthetic_sample(6, 3, n_signal=2)
    path = gess_raw_path(tmp_path, "zmumu", 10)
    assert path == tmp_path / "raw" / "z2mu" / "signal_events_2T_pileups_10.pkl"
    assert gess_raw_path(tmp_path, "zp50", 90).name == "signal_events_m0_50_pileups_90.pkl"
    assert gess_raw_path(tmp_path, "bkg", 10, for_train=True).name == (
        "bkg_events_2T_pileups_10_for_train.pkl"
    )
    save_gess_raw(events, path)
    with open(path, "rb") as f:
        raw = pickle.load(f)
    assert isinstance(raw, list) and isinstance(raw[0][0], pd.DataFrame)
    assert raw[0][1] == pytest.approx(91.0)
    back = load_gess_raw(path)
    assert len(back) == 3
    for c in FLOAT_COLUMNS + ("particle_id", "geometry_id", "node_label", "track_id"):
        np.testing.assert_array_equal(back.hits[c], events.hits[c])
    # a frame missing a column is rejected with its name
    bad = [(raw[0][0].drop(columns=["deltae"]), 0.0)]
    with pytest.raises(ValueError, match="deltae"):
        events_from_gess_frames(bad)
    with pytest.raises(FileNotFoundError, match="place the file there"):
        load_gess_raw(tmp_path / "nope.pkl")


# ---------------------------------------------------------------------------------- no simulator
def test_import_and_loaders_work_without_pythia_and_acts(tmp_path):
    code = (
        "import sys; sys.modules['pythia8mc'] = None; sys.modules['acts'] = None\n"
        "sys.modules['acts.examples'] = None\n"
        "import numpy as np, gs_data.track as t\n"
        "from gs_data.track.generate import sample_dir\n"
        "cfg = t.TrackSimConfig()\n"
        f"root = {str(tmp_path)!r}\n"
        "ev = t.TrackEvents.from_event_dicts([], meta={})\n"
        "ev.save(sample_dir('bkg', 10, 0, root, cfg) / 'pack-0.npz')\n"
        "assert len(t.generate_events('bkg', 10, 0, cache_dir=root)) == 0\n"
        "try:\n"
        "    t.generate_events('bkg', 10, 2, cache_dir=root)\n"
        "except ImportError as e:\n"
        "    print('IMPORTERROR', e)\n"
        "try:\n"
        "    t.make_simulator()\n"
        "except ImportError as e:\n"
        "    print('IMPORTERROR', e)\n"
        "print(sorted(m for m in sys.modules if m.startswith(('pythia8mc', 'acts')) and sys.modules[m]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lines = out.stdout.strip().splitlines()
    assert len([x for x in lines if x.startswith("IMPORTERROR")]) == 2, out.stdout + out.stderr
    from gs_data.track.deps import INSTALL_HINT

    assert all(INSTALL_HINT in x for x in lines if x.startswith("IMPORTERROR"))
    assert lines[-1] == "[]"


def test_generate_events_validates_input(tmp_path):
    with pytest.raises(ValueError, match="process must be one of"):
        generate_events("higgs", 10, 1, cache_dir=tmp_path)
    with pytest.raises(ValueError, match="n_events"):
        generate_events("bkg", 10, -1, cache_dir=tmp_path)
    with pytest.raises(ValueError, match="pileup"):
        generate_events("bkg", 2.5, 1, cache_dir=tmp_path)
    with pytest.raises(TypeError, match="TrackSimConfig"):
        generate_events("bkg", 10, 1, cache_dir=tmp_path, config={"bfield_tesla": 2})
    # its options are generate_samples' (one definition each): an unknown one, or an option
    # given by position, is refused before anything is simulated
    with pytest.raises(TypeError, match="n_worker"):
        generate_events("bkg", 10, 1, cache_dir=tmp_path, n_worker=2)
    with pytest.raises(TypeError):
        generate_events("bkg", 10, 1, 0)
    with pytest.raises(ValueError, match="n_workers"):
        generate_events("bkg", 10, 1, cache_dir=tmp_path, n_workers=0)
    with pytest.raises(ValueError, match="min_pt_gev"):
        TrackSimConfig(min_pt_gev=-1)
    # the signal muons' threshold (issue 29): unset, the settings and cache key of before
    assert "signal_min_pt_gev" not in TrackSimConfig().to_dict()
    assert TrackSimConfig().digest() == TrackSimConfig(signal_min_pt_gev=None).digest()
    assert TrackSimConfig(signal_min_pt_gev=1.0).to_dict()["signal_min_pt_gev"] == 1.0
    assert TrackSimConfig(signal_min_pt_gev=1.0).digest() != TrackSimConfig().digest()
    for bad in (-1, True, "1"):
        with pytest.raises(ValueError, match="signal_min_pt_gev"):
            TrackSimConfig(signal_min_pt_gev=bad)
    # what a signal event carries (issue 53): "hard" (the default) keeps the key of before,
    # "decay" has its own for the signal samples and none for the background one
    assert "signal_event" not in TrackSimConfig().to_dict()
    assert TrackSimConfig(signal_event="hard").digest() == TrackSimConfig().digest()
    decay = TrackSimConfig(signal_event="decay")
    assert decay.to_dict()["signal_event"] == "decay"
    assert decay.digest() != TrackSimConfig().digest()
    assert decay.for_process("tau3mu").digest() == decay.digest()
    assert decay.for_process("bkg").digest() == TrackSimConfig().digest()
    with pytest.raises(ValueError, match="signal_event must be one of 'hard', 'decay'"):
        TrackSimConfig(signal_event="muons")
    assert set(PROCESSES) == {
        "bkg",
        "zmumu",
        "zp80",
        "zp70",
        "zp60",
        "zp50",
        "zp20",
        "zp10",
        "tau3mu",
    }


def test_cached_packs_serve_smaller_requests(tmp_path):
    cfg = TrackSimConfig()
    sample = synthetic_sample(7, 6)
    sample.save(sample_dir("bkg", 10, 3, tmp_path, cfg) / "pack-6.npz")
    four = generate_events("bkg", 10, 4, seed=3, cache_dir=tmp_path)
    assert len(four) == 4
    for c in HIT_COLUMNS:
        np.testing.assert_array_equal(four.hits[c], sample.hits[c][: sample.hit_ptr[4]])


# ---------------------------------------------------------------------------------- builders
def _fill_cache(root, seed, requests):
    cfg = TrackSimConfig()
    for k, (process, pileup, n) in enumerate(requests):
        ev = synthetic_sample(100 + k, n, n_signal=0 if process == "bkg" else 2)
        ev.save(sample_dir(process, pileup, seed, root, cfg) / f"pack-{n}.npz")


def test_build_track_pileup_splits_on_synthetic_cache(tmp_path):
    sizes = TrackPileupSizes(40, 48, 30, 10, 8, 24)
    _fill_cache(
        tmp_path, 1, [("bkg", 10, 40), ("zmumu", 10, 48), ("bkg", 90, 30), ("zmumu", 90, 30)]
    )
    ds = build_track_pileup(90, sizes, seed=1, cache_dir=tmp_path)
    assert len(ds) == 40 + 48 + 60
    s = ds.splits
    assert len(s["train"]) == 30 + 36 and len(s["iid_val"]) == 5 + 6
    assert len(s["iid_test"]) == 5 + 6
    assert len(s["ood_val"]) == 20 and len(s["ood_test"]) == 16
    assert len(s["train_target"]) == 48 and len(s["ood_labeled"]) == 24
    # ID splits are disjoint and cover the source; OOD val/test/labeled pool are disjoint
    src = np.concatenate([s["train"], s["iid_val"], s["iid_test"]])
    assert np.unique(src).size == src.size == 88
    assert set(ds.domain[src]) == {"source"}
    ood = np.concatenate([s["ood_val"], s["ood_test"], s["ood_labeled"]])
    assert np.unique(ood).size == ood.size and set(ds.domain[ood]) == {"target"}
    # balanced classes in the target splits, 5 subgroups in the source, none in the target
    assert ds.y[s["ood_val"]].sum() == 10 and ds.y[s["ood_test"]].sum() == 8
    assert set(ds.group[src].tolist()) <= set(range(5)) and set(ds.group[ood]) == {-1}
    # subgroups are the equal-width hit-count bins of each class
    bkg = np.flatnonzero((ds.domain == "source") & (ds.y == 0))
    np.testing.assert_array_equal(ds.group[bkg], hit_count_subgroups(ds.num_hits()[bkg]))
    assert ds.features(0).shape == (ds.positions(0).shape[0], 1)
    assert (ds.features(0) == 1).all()
    # the same parts as a gs_splits.Split
    assert ds.split.sizes() == {k: len(v) for k, v in s.items()}
    np.testing.assert_array_equal(ds.split.groups, ds.group)
    np.testing.assert_array_equal(ds.split.indices("ood_val"), s["ood_val"])
    data = ds.to_pyg([0, len(ds) - 1])
    assert tuple(data[1].pos.shape) == (ds.positions(len(ds) - 1).shape[0], 3)
    assert float(data[1].x.sum()) == data[1].pos.shape[0] and float(data[1].y) == 1.0
    assert data[0].track_ids.max().item() + 1 == ds.samples[ds.sample[0]].num_tracks()[0]
    again = build_track_pileup(90, sizes, seed=1, cache_dir=tmp_path)
    assert all(np.array_equal(again.splits[k], s[k]) for k in s)


def test_build_track_signal_splits_on_synthetic_cache(tmp_path):
    sizes = TrackSignalSizes(n_bkg=50, n_bkg_pool=12, n_source_per_signal=16, n_target=40)
    reqs = [("bkg", 10, 62)] + [(p, 10, 16) for p in ("zmumu", "zp80", "zp70", "zp60", "zp50")]
    _fill_cache(tmp_path, 0, reqs + [("zp10", 10, 40)])
    ds = build_track_signal("zp10", sizes, cache_dir=tmp_path)
    s = ds.splits
    # background 0.6 / 0.1 / 0.1 / 0.1 / 0.1 of 50 = 30 / 5 / 5 / 5 / 5; signals 12 / 2 / 2 each
    assert (ds.y[s["train"]] == 0).sum() == 30 and (ds.y[s["train"]] == 1).sum() == 60
    assert (ds.y[s["iid_val"]] == 0).sum() == 5 and (ds.y[s["iid_val"]] == 1).sum() == 10
    assert (ds.y[s["ood_val"]] == 0).sum() == 5 and (ds.y[s["ood_val"]] == 1).sum() == 5
    assert (ds.y[s["ood_test"]] == 1).sum() == 5
    assert (ds.y[s["train_target"]] == 1).sum() == 30 and (ds.y[s["train_target"]] == 0).sum() == 12
    assert sorted(set(ds.group[s["train"]][ds.y[s["train"]] == 1].tolist())) == [0, 1, 2, 3, 4]
    assert {ds.process(i) for i in s["ood_test"] if ds.y[i] == 1} == {"zp10"}
    assert not set(s["train_target"]) & set(s["ood_val"]) | set(s["ood_test"]) & set(
        s["train_target"]
    )
    with pytest.raises(ValueError, match="target must be one of"):
        build_track_signal("zmumu", sizes, cache_dir=tmp_path)


def test_cached_event_count_and_the_builders_requests(tmp_path):
    from gs_data.track import cached_event_count, pileup_requests, signal_requests

    cfg = TrackSimConfig()
    assert cached_event_count("bkg", 10, 0, tmp_path, cfg) == 0
    synthetic_sample(1, 5).save(sample_dir("bkg", 10, 0, tmp_path, cfg) / "pack-5.npz")
    assert cached_event_count("bkg", 10, 0, tmp_path, cfg) == 5
    assert cached_event_count("bkg", 10, 1, tmp_path, cfg) == 0  # another seed
    # per-event files after the pack count while they are consecutive
    folder = sample_dir("bkg", 10, 0, tmp_path, cfg) / "events"
    folder.mkdir()
    for i in (5, 6, 8):
        (folder / f"{i:09d}.npz").write_bytes(b"")
    assert cached_event_count("bkg", 10, 0, tmp_path, cfg) == 7
    sizes = TrackPileupSizes(40, 48, 30, 10, 8, 24)
    assert pileup_requests(90, sizes) == [("bkg", 10, 40), ("zmumu", 10, 48), ("bkg", 90, 30),
                                          ("zmumu", 90, 30)]
    sig = TrackSignalSizes(n_bkg=50, n_bkg_pool=12, n_source_per_signal=16, n_target=40)
    assert signal_requests("zp10", sig) == (
        [("bkg", 10, 62)] + [(p, 10, 16) for p in ("zmumu", "zp80", "zp70", "zp60", "zp50")]
        + [("zp10", 10, 40)])


# ---------------------------------------------------------------------------------- shared cache
RACE_CHILD = r"""
import hashlib, logging, os, sys, time
import numpy as np
logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")  # build lines on stderr
from gs_data.track.testing import synthetic_event
import gs_data.track._sim as sim
import gs_data.track.generate as gen

go, root, log = int(sys.argv[2]), sys.argv[3], sys.argv[4]


class FakeSimulator:  # no PYTHIA: event i is a pure function of (seed, i); every call is logged
    def simulate(self, process, pileup, seed, index):
        with open(log, "a") as fh:
            fh.write(f"{os.getpid()} {index}\n")
        time.sleep(0.05)  # a real event takes seconds: let the other process overlap
        return synthetic_event(np.random.default_rng([seed, index]), 6)


gen.require = lambda name: None
sim.ensure_init_file = lambda *a, **k: None
gen._worker_init = lambda *a, **k: gen._WORKER.__setitem__("sim", FakeSimulator())
print("ready", flush=True)
os.read(go, 1)  # both processes start here at the same moment
ev = gen.generate_events("bkg", 10, int(sys.argv[5]), seed=4, cache_dir=root)
h = hashlib.sha256()
for c in sorted(ev.to_arrays()):
    if c != "meta":
        h.update(c.encode() + np.ascontiguousarray(ev.to_arrays()[c]).tobytes())
print(len(ev), h.hexdigest())
"""


def test_two_processes_asking_for_one_track_sample_build_it_once(tmp_path):
    """Issue 34: a gess suite with --workers 2 on an empty cache failed with FileNotFoundError
    on events/000000000.npz: one worker packed the sample and removed its per-event files while
    the other still read them. Two processes ask for the same sample at the same moment; each
    event is simulated once, the sample is packed once, and both get identical events."""
    import os
    from pathlib import Path

    n = 12
    root, log = tmp_path / "cache", tmp_path / "simulated.txt"
    go_r, go_w = os.pipe()
    tests = str(Path(__file__).resolve().parent)
    procs = [
        subprocess.Popen([sys.executable, "-c", RACE_CHILD, tests, str(go_r), str(root), str(log), str(n)],
                         pass_fds=(go_r,), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    os.close(go_r)
    try:
        for p in procs:  # both have imported everything and wait for the same byte
            assert p.stdout.readline().strip() == "ready", p.communicate()[1][-3000:]
        os.write(go_w, b"gg")
    finally:
        os.close(go_w)
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (_out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-3000:]
    lines = log.read_text().split()
    indices = sorted(int(i) for i in lines[1::2])
    assert indices == list(range(n)), f"events simulated more than once: {indices}"
    assert len(set(lines[0::2])) == 1, "one process built the sample, the other read it"
    assert outs[0][0] == outs[1][0] and outs[0][0].split()[0] == str(n)
    # the log lines that docs/qa/issue-34-workers.md counts in the job logs: one build, one pack
    logged = "".join(err for _, err in outs)
    assert logged.count("generate: building the Track sample") == 1, logged[-3000:]
    assert logged.count("generate: packed the Track sample") == 1, logged[-3000:]
    folder = sample_dir("bkg", 10, 4, root, TrackSimConfig())
    assert sorted(p.name for p in folder.glob("pack-*.npz")) == [f"pack-{n}.npz"]
    assert not list((folder / "events").glob("*"))
