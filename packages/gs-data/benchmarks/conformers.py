"""Benchmark: GeSS conformers per second for one real MoleculeACE target, before and after.

Embeds the distinct molecules of one MoleculeACE ChEMBL set (default ``CHEMBL264_Ki``,
2,862 molecules; ``--limit N`` takes the first N in file order) the GeSS way (ETKDG seed
0, MMFF94, 1000 iterations) three times:

* **before**: the serial path (``generate_conformers(n_workers=1)``, no cache), which was
  the default until issue 17 and whose code did not change;
* **after, cold cache**: ``generate_conformers`` with ``--workers`` processes (default:
  the CPU cores of this process) writing an empty on-disk cache;
* **after, warm cache**: the same call again, every molecule now read from the cache.

The cache is a temporary folder (``GS_DATA_ROOT`` too), removed at the end: the user's
cache is never read or written. The three results are checked to be identical (same
molecules dropped, same coordinates bit for bit). Reports molecules per wall-clock second
and per CPU second (this process + its workers), the load average before and after, and
optionally writes a JSON file. Usage (repository root)::

    nice -n 19 env OMP_NUM_THREADS=1 python packages/gs-data/benchmarks/conformers.py \\
        --target CHEMBL264_Ki --json /tmp/conformers.json
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import resource
import signal
import sys
import tempfile
import time
from pathlib import Path


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished (waited-for) child processes."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _target_smiles(target: str, limit: int) -> list[str]:
    from gs_data.molecules import moleculeace_data_dir

    path = moleculeace_data_dir() / f"{target}.csv"
    if not path.is_file():
        names = sorted(p.stem for p in path.parent.glob("CHEMBL*.csv"))
        raise SystemExit(f"no MoleculeACE target {target!r}; available: {', '.join(names)}")
    with path.open(newline="") as fh:
        smiles = list(dict.fromkeys(row["smiles"].strip() for row in csv.DictReader(fh)))
    return smiles[:limit] if limit > 0 else smiles


def _timed(label: str, fn) -> dict:
    print(f"[{time.strftime('%H:%M:%S')}] {label} ...", file=sys.stderr, flush=True)
    t0, c0 = time.perf_counter(), _cpu_seconds()
    confs, report = fn()
    wall, cpu = time.perf_counter() - t0, _cpu_seconds() - c0
    n = report.n_input
    print(f"[{time.strftime('%H:%M:%S')}] {label}: {n} molecules in {wall:.1f} s "
          f"({n / wall:.2f}/s wall, {n / cpu:.2f}/s CPU)", file=sys.stderr, flush=True)
    return {"label": label, "confs": confs, "n_molecules": n, "n_kept": report.n_kept,
            "dropped": report.counts(), "wall_s": wall, "cpu_s": cpu,
            "molecules_per_s": n / wall, "molecules_per_cpu_s": n / cpu}


def _identical(a: list, b: list) -> bool:
    import numpy as np

    return len(a) == len(b) and all(
        (x is None and y is None)
        or (x is not None and y is not None and x.symbols == y.symbols and np.array_equal(x.pos, y.pos))
        for x, y in zip(a, b, strict=True)
    )


def main(argv: list[str] | None = None) -> int:
    from gs_data.molecules.conformers import default_n_workers

    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="The default target takes about 10 CPU minutes per pass on a current x86 core.",
    )
    ap.add_argument("--target", default="CHEMBL264_Ki",
                    help="MoleculeACE set (CSV stem shipped by the MoleculeACE package; default %(default)s)")
    ap.add_argument("--limit", type=int, default=0,
                    help="only the first N distinct molecules of the target (default 0: all)")
    ap.add_argument("--workers", type=int, default=default_n_workers(),
                    help="worker processes of the 'after' runs (default: CPU cores of this process, %(default)s)")
    ap.add_argument("--chunk-size", type=int, default=16, help="molecules per worker task (default %(default)s)")
    ap.add_argument("--skip-before", action="store_true", help="do not run the serial 'before' pass")
    ap.add_argument("--progress", action="store_true", help="progress bar on stderr")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures to this JSON file")
    args = ap.parse_args(argv)
    if args.workers < 1 or args.chunk_size < 1:
        ap.error("--workers and --chunk-size must be >= 1")

    from gs_data.molecules import generate_conformers

    smiles = _target_smiles(args.target, args.limit)
    load_start = os.getloadavg()
    runs = []
    with tempfile.TemporaryDirectory(prefix="gs-conformer-bench-") as tmp:
        os.environ["GS_DATA_ROOT"] = str(Path(tmp) / "data-root")  # nothing reaches the user's cache
        cache = Path(tmp) / "conformers"
        kw = dict(chunk_size=args.chunk_size, progress=args.progress, source=args.target)
        if not args.skip_before:
            runs.append(_timed("before: serial, no cache",
                               lambda: generate_conformers(smiles, n_workers=1, **kw)))
        runs.append(_timed(f"after: {args.workers} workers, cold cache",
                           lambda: generate_conformers(smiles, n_workers=args.workers, cache_dir=cache, **kw)))
        runs.append(_timed(f"after: {args.workers} workers, warm cache",
                           lambda: generate_conformers(smiles, n_workers=args.workers, cache_dir=cache, **kw)))
        cache_files = sum(1 for _ in cache.rglob("*.npz"))
    load_end = os.getloadavg()
    identical = all(_identical(runs[0]["confs"], r["confs"]) for r in runs[1:])

    import rdkit

    result = {
        "target": args.target,
        "n_molecules": len(smiles),
        "limit": args.limit,
        "workers": args.workers,
        "chunk_size": args.chunk_size,
        "identical_results": identical,
        "cache_files": cache_files,
        "machine": {"platform": platform.platform(), "python": platform.python_version(),
                    "rdkit": rdkit.__version__, "cpu_cores": default_n_workers(),
                    "load_avg_start": load_start, "load_avg_end": load_end},
        "runs": [{k: v for k, v in r.items() if k != "confs"} for r in runs],
    }
    print(f"\n{args.target}: {len(smiles)} distinct molecules, {runs[0]['n_kept']} kept "
          f"(dropped: {runs[0]['dropped'] or 'none'}); results identical: {identical}")
    print(f"load average (1/5/15 min) start {'/'.join(f'{x:.2f}' for x in load_start)}, "
          f"end {'/'.join(f'{x:.2f}' for x in load_end)}; {default_n_workers()} cores\n")
    print("| run | wall s | molecules/s | CPU s | molecules/CPU s |")
    print("|---|---:|---:|---:|---:|")
    for r in runs:
        print(f"| {r['label']} | {r['wall_s']:.1f} | {r['molecules_per_s']:.2f} | {r['cpu_s']:.1f} "
              f"| {r['molecules_per_cpu_s']:.2f} |")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0 if identical else 1


if __name__ == "__main__":  # required: the workers are spawned processes
    # a terminated run still removes its temporary cache (the with-block unwinds on SystemExit)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.exit(main())
