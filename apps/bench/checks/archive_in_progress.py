"""Commit the finished records of a long run that is still going (issue 30's background runs).

    python apps/bench/checks/archive_in_progress.py RUN_FOLDER DEST
    python apps/bench/checks/archive_in_progress.py --restore DEST RUN_FOLDER

Writes ``DEST/results.jsonl`` (every finished record of ``RUN_FOLDER/results``, one per line,
sorted by job key), copies ``RUN_FOLDER/run-*.json`` and writes ``DEST/PROGRESS.md``: how many
of the run's jobs are finished, per grid value, with their wall times and, for records that
store it, the median CPU seconds per job (``cpu_time_s``). ``gs-bench report DEST``
draws the tables of what is there; the run itself resumes from ``RUN_FOLDER`` with its own
command. Exit status 2 on a folder that is not a run folder.

``--restore DEST RUN_FOLDER`` goes the other way, for a new machine that has the committed
records but not the run folder: one ``RUN_FOLDER/results/<key>.json`` per line of
``DEST/results.jsonl`` (records already there are kept, never overwritten) and the run file, so
that the run's own command resumes after the committed jobs. Exit status 2 when ``DEST`` holds
no ``results.jsonl`` and one ``run-*.json``.
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path


def restore(dest: Path, run: Path) -> int:
    from gs_bench.report import archived_records
    from gs_bench.store import ResultsStore

    infos = sorted(dest.glob("run-*.json"))
    if not (dest / "results.jsonl").is_file() or len(infos) != 1:
        print(f"archive_in_progress: error: {dest} holds no archived run (results.jsonl and one run-*.json)",
              file=sys.stderr)
        return 2
    run.mkdir(parents=True, exist_ok=True)
    if not (run / infos[0].name).exists():
        shutil.copy2(infos[0], run / infos[0].name)
    store = ResultsStore(run)
    store.results_dir.mkdir(exist_ok=True)
    written = kept = 0
    for rec in archived_records(dest / "results.jsonl"):
        if store.has(rec["key"]):
            kept += 1
            continue
        store.put(rec["key"], rec)
        written += 1
    print(f"{written} records restored into {store.results_dir} ({kept} already there, kept)")
    return 0


#: the `gs-bench run` option that narrows each grid axis (edgewise's models and gess's
#: algorithms are narrowed with --methods)
AXIS_OPTIONS = {"dataset": "--datasets", "method": "--methods", "model": "--methods",
                "algorithm": "--methods", "backbone": "--backbones"}


def resume_command(info: dict, run: Path) -> str:
    """The `gs-bench run` command that resumes the run of ``info`` (its run-*.json) in ``run``:
    the suite and profile, the axes narrowed from the profile's grid, the seeds and settings
    that differ from the profile's. A difference no option can express is named instead (the
    command would then plan other jobs)."""
    from gs_bench.suites import load_suite

    parts = ["OMP_NUM_THREADS=1", "gs-bench", "run", info["suite"], "--profile", info["profile"]]
    try:
        base = load_suite(info["suite"], info["profile"])
    except Exception as exc:  # noqa: BLE001 - a suite this checkout no longer ships
        return f"(no command: the suite or profile does not load here: {exc})"
    problems = []
    for axis, values in (info.get("grid") or {}).items():
        if list(values) == list(base.grid.get(axis, [])):
            continue
        option = AXIS_OPTIONS.get(axis)
        if option is None:
            problems.append(f"axis {axis} = {values}")
        else:
            parts += [option, *map(str, values)]
    if info.get("seeds") not in (None, base.seeds):
        parts += ["--seeds", str(info["seeds"])]
    for key, value in (info.get("settings") or {}).items():
        if base.settings.get(key) != value:
            parts += ["--set", f"{key}={json.dumps(value)}"]
    import dataclasses

    typed = base.typed_settings
    defaults = {f.name: f.default for f in dataclasses.fields(typed)} if typed is not None else {}
    for key in base.settings:
        if key not in (info.get("settings") or {}):
            # --unset takes back a setting whose default is unset; another one the run lacks
            # (a key the profile gained after the run started) no option can take back
            if defaults.get(key) is None:
                parts += ["--unset", key]
            else:
                problems.append(f"setting {key} absent")
    parts += ["--workers", str(info.get("workers") or 1), "--out", str(run)]
    text = " ".join(parts)
    return text + (f" (but no option gives {'; '.join(problems)})" if problems else "")


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "--restore":
        return restore(Path(argv[1]), Path(argv[2]))
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    run, dest = Path(argv[0]), Path(argv[1])
    infos = sorted(run.glob("run-*.json"))
    if not (run / "results").is_dir() or len(infos) != 1:
        print(f"archive_in_progress: error: {run} is not a gs-bench run folder (no results/ and one run-*.json)",
              file=sys.stderr)
        return 2
    from gs_bench.store import ResultsStore, atomic_write_text

    info = json.loads(infos[0].read_text())
    # the store's reader, sorted by key; read-only (quarantine=False): the run may still be going
    records = [r for r in ResultsStore(run, quarantine=False).records() if r["status"] == "ok"]
    dest.mkdir(parents=True, exist_ok=True)
    atomic_write_text(dest / "results.jsonl", "".join(json.dumps(r, sort_keys=True) + "\n" for r in records))
    shutil.copy2(infos[0], dest / infos[0].name)

    by = defaultdict(Counter)
    wall = defaultdict(float)
    cpu = defaultdict(list)
    for r in records:
        for k, v in r["job"]["params"].items():
            by[k][v] += 1
        p = r["job"]["params"]
        # the method axis of each suite; gess has none: its grid point (dataset / backbone / algorithm)
        name = p.get("method") or p.get("model") or " / ".join(
            str(p[k]) for k in ("dataset", "backbone", "algorithm") if k in p)
        wall[name] += r["wall_time_s"]
        if r.get("cpu_time_s") is not None:  # records written before gs-bench stored it have none
            cpu[name].append(r["cpu_time_s"])
    lines = [f"# {info['suite']} ({info['profile']}): in progress", "",
             f"{len(records)} of {info['jobs']} jobs finished (records in results.jsonl; "
             f"code of git revision {info.get('environment', {}).get('git_revision', '?')[:12]}).",
             f"Written by `python apps/bench/checks/archive_in_progress.py {run} {dest}`; the run resumes "
             "from its own folder with the command in run-*.json's profile (`gs-bench run ... --out`); on a "
             f"machine without that folder, `python apps/bench/checks/archive_in_progress.py --restore {dest} "
             f"{run}` makes it from these records first.", "",
             f"Resume (derived from run-*.json): `{resume_command(info, run)}`", ""]
    for k, counts in by.items():
        lines.append(f"- {k}: " + ", ".join(f"{v} {n}" for v, n in sorted(counts.items())))
    lines.append("- wall seconds per method / model (gess: grid point), summed (includes any time the run was paused or "
                 "shared the machine, so not a cost): "
                 + ", ".join(f"{m} {s:,.0f}" for m, s in sorted(wall.items())))
    if cpu:
        lines.append("- CPU seconds per job (median over the records that store `cpu_time_s`, "
                     "their count in brackets): "
                     + ", ".join(f"{m} {statistics.median(v):,.0f} ({len(v)})" for m, v in sorted(cpu.items())))
    atomic_write_text(dest / "PROGRESS.md", "\n".join(lines) + "\n")
    print(f"{len(records)} of {info['jobs']} records -> {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
