"""Simulate the first N events of a paper-size Track sample and report the throughput.

GeSS's Track-Pileup (table 4) trains on 19,753 background and 20,846 Z -> mu mu events at
PU10. This benchmark simulates the first ``--events`` events of each PU10 sample of that
dataset (event ``i`` depends only on the process, the pileup, the seed and ``i``, so they are
the first events of the paper-size dataset) into an empty cache, with one worker process
per core, and writes wall time, CPU time, events per wall-second and per core-second.

    nice python packages/gs-data/benchmarks/track_paper_sample.py --events 2500 \
        --workers 2 --out /tmp/track-paper --json packages/gs-data/benchmarks/track_paper_sample.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
from pathlib import Path


def _cpu() -> float:
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=2500, help="events per sample (background and Z)")
    ap.add_argument("--pileup", type=int, default=10)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", type=Path, required=True, help="cache folder (should be empty)")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    from gs_data.track import generate_samples

    try:
        from tqdm import tqdm
    except ImportError:  # the bar is optional
        tqdm = None
    bar = tqdm(total=2 * a.events, unit="event") if tqdm is not None else None
    t0, c0 = time.perf_counter(), _cpu()
    generate_samples([("bkg", a.pileup, a.events), ("zmumu", a.pileup, a.events)], seed=0,
                     cache_dir=a.out, n_workers=a.workers,
                     callback=(lambda done, total: bar.update(done - bar.n)) if bar else None)
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    if bar:
        bar.close()
    n = 2 * a.events
    res = {"events": n, "pileup": a.pileup, "workers": a.workers, "wall_s": round(wall, 1),
           "cpu_s": round(cpu, 1), "events_per_wall_s": round(n / wall, 2),
           "events_per_core_s": round(n / cpu, 2), "cpu": f"{platform.machine()} x{os.cpu_count()}",
           "date": time.strftime("%Y-%m-%d"),
           "cache_mb": round(sum(f.stat().st_size for f in a.out.rglob("*") if f.is_file()) / 2**20, 1)}
    print(json.dumps(res))
    if a.json:
        a.json.write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
