"""``apps/bench/checks/archive_in_progress.py``: the finished records of a run go into a folder
that is committed, and ``--restore`` turns that folder back into a run folder that ``gs-bench
run`` resumes from (a new machine has the commits, not the run)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "checks" / "archive_in_progress.py"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)


def _record(key: str, status: str = "ok") -> dict:
    return {"key": key, "status": status, "wall_time_s": 1.5,
            "job": {"suite": "lebed", "params": {"model": "gcn", "dataset": "cora"}}, "metrics": {"rho": 0.5}}


def test_archive_then_restore_gives_back_the_finished_records(tmp_path):
    run = tmp_path / "run"
    (run / "results").mkdir(parents=True)
    (run / "run-lebed.json").write_text(json.dumps({"suite": "lebed", "profile": "ci", "jobs": 3}))
    for key, status in (("a1", "ok"), ("b2", "ok"), ("c3", "failed")):
        (run / "results" / f"{key}.json").write_text(json.dumps(_record(key, status)))
    dest = tmp_path / "committed"
    assert _run(str(run), str(dest)).returncode == 0
    assert [json.loads(x)["key"] for x in (dest / "results.jsonl").read_text().splitlines()] == ["a1", "b2"]

    new = tmp_path / "new-machine" / "run"
    (new / "results").mkdir(parents=True)
    mine = dict(_record("b2"), metrics={"rho": 0.9})  # a record the new run already has: kept
    (new / "results" / "b2.json").write_text(json.dumps(mine))
    p = _run("--restore", str(dest), str(new))
    assert p.returncode == 0 and "1 records restored" in p.stdout and "1 already there" in p.stdout
    assert json.loads((new / "results" / "a1.json").read_text()) == _record("a1")
    assert json.loads((new / "results" / "b2.json").read_text())["metrics"] == {"rho": 0.9}
    assert not (new / "results" / "c3.json").exists()
    assert json.loads((new / "run-lebed.json").read_text())["suite"] == "lebed"


def test_restore_from_a_folder_without_an_archive_exits_2(tmp_path):
    p = _run("--restore", str(tmp_path / "nothing"), str(tmp_path / "run"))
    assert p.returncode == 2 and "holds no archived run" in p.stderr
    assert _run(str(tmp_path / "nothing"), str(tmp_path / "x")).returncode == 2


def test_progress_gives_the_median_cpu_seconds_of_the_records_that_store_them(tmp_path):
    run = tmp_path / "run"
    (run / "results").mkdir(parents=True)
    (run / "run-lebed.json").write_text(json.dumps({"suite": "lebed", "profile": "ci", "jobs": 4}))
    # wall times inflated by a pause; CPU seconds 10, 30, 20 and one older record without them
    for key, cpu in (("a1", 10.0), ("b2", 30.0), ("c3", 20.0), ("d4", None)):
        rec = dict(_record(key), wall_time_s=1000.0)
        if cpu is not None:
            rec["cpu_time_s"] = cpu
        (run / "results" / f"{key}.json").write_text(json.dumps(rec))
    dest = tmp_path / "committed"
    assert _run(str(run), str(dest)).returncode == 0
    progress = (dest / "PROGRESS.md").read_text()
    assert "gcn 20 (3)" in progress  # the median of 10, 20, 30 over the 3 records that have it
    assert "gcn 4,000" in progress  # the summed wall seconds, named as such


def test_progress_names_the_command_that_resumes_the_run(tmp_path):
    """Derived from run-*.json against the suite's profile: narrowed axes become --datasets /
    --methods, other settings --set, a profile's setting the run lacks --unset; a narrowed axis
    no option reaches is named instead."""
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        from archive_in_progress import resume_command
    finally:
        sys.path.remove(str(SCRIPT.parent))
    from gs_bench.suites import load_suite

    base = load_suite("lebed", "ci")
    info = {"suite": "lebed", "profile": "ci", "grid": {**base.grid, "dataset": ["citationv1", "dblpv7"]},
            "settings": {**base.settings, "domain_graphs": 5}, "seeds": base.seeds, "workers": 2}
    cmd = resume_command(info, Path("/runs/x"))
    assert cmd == ("OMP_NUM_THREADS=1 gs-bench run lebed --profile ci --datasets citationv1 dblpv7 "
                   "--set domain_graphs=5 --workers 2 --out /runs/x")
    # a setting of the profile that the run took back (gs-bench run --unset KEY)
    ss = load_suite("structural-shifts", "ci")
    unset = {"suite": "structural-shifts", "profile": "ci", "grid": ss.grid, "seeds": ss.seeds,
             "settings": {k: v for k, v in ss.settings.items() if k != "root"}, "workers": 1}
    assert resume_command(unset, Path("r")) == ("OMP_NUM_THREADS=1 gs-bench run structural-shifts "
                                                "--profile ci --unset root --workers 1 --out r")
    # a setting the profile gained after the run started, with a real default: named, no --unset
    older = {**info, "settings": {k: v for k, v in info["settings"].items() if k != "domain_pretrain"}}
    cmd = resume_command(older, Path("/runs/x"))
    assert "--unset domain_pretrain" not in cmd and "(but no option gives setting domain_pretrain absent)" in cmd
    info["grid"]["shard"] = [0, 1]
    assert "(but no option gives axis shard = [0, 1])" in resume_command(info, Path("/runs/x"))
    # the whole profile as it is: no narrowing, no --set
    same = {"suite": "lebed", "profile": "ci", "grid": base.grid, "settings": base.settings,
            "seeds": base.seeds, "workers": 1}
    assert resume_command(same, Path("r")) == "OMP_NUM_THREADS=1 gs-bench run lebed --profile ci --workers 1 --out r"
    run = tmp_path / "run"
    (run / "results").mkdir(parents=True)
    (run / "run-lebed.json").write_text(json.dumps({**same, "jobs": 1}))
    (run / "results" / "a1.json").write_text(json.dumps(_record("a1")))
    assert _run(str(run), str(tmp_path / "committed")).returncode == 0
    assert f"--workers 1 --out {run}`" in (tmp_path / "committed" / "PROGRESS.md").read_text()
