"""Benchmark of the Track simulation (PYTHIA 8 + ACTS Fatras), next to GeSS table 5.

Measures, in one run:

1. events per second per core at PU10 and PU90 (one process, after initialisation);
2. the wall time to build the demo-size Track-Pileup (PU50, PU90) and Track-Signal
   (tau -> 3 mu, Z' 20, Z' 10) datasets from an empty cache with ``--workers`` processes,
   split into the one-off PYTHIA initialisation (cached afterwards) and the simulation;
3. the mean number of tracks per event at PU10/50/90 and the mean signal-track radius per
   signal type, printed next to GeSS table 5 (55.76 / 232.58 / 408.38 tracks; radii
   3979.66 / 8754.34 / 16014.98 / 58092.27 mm for tau -> 3 mu / Z' 10 / Z' 20 / Z).

Usage (from the repository root; needs the track extra, ``pip install ./packages/gs-splits './packages/gs-data[track]'``)::

    nice python packages/gs-data/benchmarks/track_simulation.py --workers 2 --out /tmp/track-bench

Results are written as JSON to ``<out>/results.json`` and printed as a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import time
from pathlib import Path

import numpy as np


def _rate(process: str, pileup: int, n: int, cache: Path) -> dict:
    from gs_data.track import TrackSimConfig, make_simulator

    sim = make_simulator(TrackSimConfig(), cache)
    sim.simulate(process, pileup, 999, 0)  # initialise PYTHIA for this process
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    for i in range(1, n + 1):
        sim.simulate(process, pileup, 999, i)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    return {
        "process": process,
        "pileup": pileup,
        "events": n,
        "wall_s": wall,
        "cpu_s": cpu,
        "events_per_s_per_core": n / cpu,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("/tmp/gs-track-bench"))
    parser.add_argument("--rate-events", type=int, default=20, help="events per rate measurement")
    parser.add_argument("--keep", action="store_true", help="reuse an existing cache in --out")
    args = parser.parse_args(argv)

    from gs_data.track import (
        GESS_MEAN_SIGNAL_RADIUS_MM,
        GESS_MEAN_TRACKS,
        TrackSimConfig,
        build_track_pileup,
        build_track_signal,
        mean_tracks_per_event,
        signal_track_radii_mm,
    )
    from gs_data.track._sim import ensure_init_file
    from gs_data.track.analysis import GESS_MEAN_BACKGROUND_RADIUS_MM, background_track_radii_mm
    from gs_data.track.config import PROCESSES

    cache = args.out / "cache"
    if cache.exists() and not args.keep:
        shutil.rmtree(cache)
    cache.mkdir(parents=True, exist_ok=True)
    results: dict = {"workers": args.workers, "cpu_count": os.cpu_count()}

    # 2a. one-off PYTHIA initialisation (tables cached on disk afterwards)
    t0 = time.perf_counter()
    for process in PROCESSES:
        ensure_init_file(process, TrackSimConfig(), cache)
    results["pythia_init_s"] = time.perf_counter() - t0
    print(
        f"PYTHIA initialisation of {len(PROCESSES)} processes: {results['pythia_init_s']:.1f} s",
        flush=True,
    )

    # 2b. demo-size datasets from an empty sample cache
    timings = {}
    datasets = {}
    t_all = time.perf_counter()
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_start = r0.ru_utime + r0.ru_stime + r1.ru_utime + r1.ru_stime
    for name, build in (
        (
            "Track-Pileup PU50",
            lambda: build_track_pileup(50, "demo", cache_dir=cache, n_workers=args.workers),
        ),
        (
            "Track-Pileup PU90",
            lambda: build_track_pileup(90, "demo", cache_dir=cache, n_workers=args.workers),
        ),
        (
            "Track-Signal tau3mu",
            lambda: build_track_signal("tau3mu", "demo", cache_dir=cache, n_workers=args.workers),
        ),
        (
            "Track-Signal zp20",
            lambda: build_track_signal("zp20", "demo", cache_dir=cache, n_workers=args.workers),
        ),
        (
            "Track-Signal zp10",
            lambda: build_track_signal("zp10", "demo", cache_dir=cache, n_workers=args.workers),
        ),
    ):
        t0 = time.perf_counter()
        datasets[name] = build()
        timings[name] = time.perf_counter() - t0
        print(f"{name}: {len(datasets[name])} events in {timings[name]:.1f} s", flush=True)
    results["demo_build_s"] = timings
    results["demo_total_s"] = time.perf_counter() - t_all
    # CPU seconds of this process and of all worker processes: on an idle machine with
    # ``workers`` cores the build takes about cpu / workers (the wall time above includes
    # waiting for cores that other jobs use)
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    results["demo_cpu_s"] = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime - cpu_start
    results["demo_events"] = {k: len(v) for k, v in datasets.items()}
    n_sim = sum(len(ev) for ds in datasets.values() for ev in ds.samples.values())
    results["demo_simulated_events_upper_bound"] = n_sim

    # 3. GeSS table 5
    pu = datasets["Track-Pileup PU50"].samples | datasets["Track-Pileup PU90"].samples
    tracks = {}
    for level in (10, 50, 90):
        parts = [pu[f"bkg@PU{level}"], pu[f"zmumu@PU{level}"]]
        tracks[level] = float(np.mean(np.concatenate([p.num_tracks() for p in parts])))
        tracks[f"{level}_bkg_only"] = mean_tracks_per_event(pu[f"bkg@PU{level}"])
    results["mean_tracks"] = tracks
    sig = (
        datasets["Track-Signal tau3mu"].samples
        | datasets["Track-Signal zp20"].samples
        | datasets["Track-Signal zp10"].samples
    )
    radii = {
        p: float(signal_track_radii_mm(sig[f"{p}@PU10"]).mean())
        for p in ("tau3mu", "zp10", "zp20", "zmumu", "zp50", "zp60", "zp70", "zp80")
    }
    radii["background"] = float(background_track_radii_mm(sig["bkg@PU10"]).mean())
    results["mean_signal_radius_mm"] = radii
    order = ["tau3mu", "zp10", "zp20", "zmumu"]
    results["radius_order_as_gess"] = bool(
        all(radii[a] < radii[b] for a, b in zip(order, order[1:], strict=False))
    )

    # 1. events per second per core (after the datasets, so PYTHIA tables exist)
    results["rates"] = [
        _rate("bkg", 10, args.rate_events, cache),
        _rate("bkg", 90, max(3, args.rate_events // 4), cache),
    ]

    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=2))

    print("\n| quantity | this run | GeSS table 5 |\n|---|---|---|")
    for level in (10, 50, 90):
        print(
            f"| mean tracks per event, PU{level} | {tracks[level]:.2f} | {GESS_MEAN_TRACKS[level]} |"
        )
    for p in order:
        print(
            f"| mean signal-track radius {p} (mm) | {radii[p]:.0f} | "
            f"{GESS_MEAN_SIGNAL_RADIUS_MM[p]} |"
        )
    print(
        f"| mean background-track radius (mm) | {radii['background']:.0f} | "
        f"{GESS_MEAN_BACKGROUND_RADIUS_MM} |"
    )
    print("\n| measurement | value |\n|---|---|")
    for r in results["rates"]:
        print(
            f"| events/s per core, {r['process']} PU{r['pileup']} | "
            f"{r['events_per_s_per_core']:.2f} |"
        )
    print(f"| PYTHIA initialisation (once, cached) | {results['pythia_init_s']:.0f} s |")
    for k, v in timings.items():
        print(f"| demo build {k}, {args.workers} workers | {v:.0f} s |")
    print(f"| demo build total, {args.workers} workers | {results['demo_total_s']:.0f} s |")
    print(f"| demo build CPU time (all processes) | {results['demo_cpu_s']:.0f} s |")
    print(f"| load average during the run | {os.getloadavg()} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
