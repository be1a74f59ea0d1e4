"""gs-bench where users run it (issue 18): a multi-node Ray cluster, failing jobs, dying workers.

A local Ray cluster of a CPU-less head and two one-CPU worker nodes (``_ray_cluster.py``,
Ray's own multi-node harness) is started once for the module, in a folder of its own: the
workers' processes never share the driver's working directory. The driver is ``gs-bench run
--executor ray --address ...`` in another folder with a *relative* ``--out``, as a user
would type it. Most runs use the toy runner (``_toy_runner.py``: no data, no training) so
that they take seconds; one runs a small structural-shifts suite on the embedded synthetic
graph end to end.

Every test of the failure rules runs with both executors (local worker processes and Ray):
they behave the same.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parent
TOY_CLI = """\
import sys
import gs_bench.runners as r
r.RUNNERS["toy"] = "_toy_runner"
from gs_bench.cli import main
if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
"""
EXECUTORS = ["local", "ray"]


def _env() -> dict[str, str]:
    """The environment of every process here: the toy runner importable everywhere."""
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A running two-worker-node Ray cluster: ``address``, ``nodes_dir`` (the nodes' working
    directory). Skipped (with the reason) without Ray."""
    pytest.importorskip("ray", reason="Ray not installed (pip install 'ray>=2.40')")
    nodes_dir = tmp_path_factory.mktemp("ray-nodes")
    err = open(nodes_dir / "cluster.stderr.txt", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([sys.executable, str(TESTS / "_ray_cluster.py"), "2"], cwd=nodes_dir,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True,
                            env=_env())
    deadline = time.monotonic() + 300  # a liveness bound: Ray starts in ~30 s on 2 shared cores
    line = ""
    while not line:
        ready, _, _ = select.select([proc.stdout], [], [], 1.0)
        if ready:
            line = proc.stdout.readline()
            if not line:
                break
        if proc.poll() is not None or time.monotonic() > deadline:
            break
    if not line:
        proc.kill()
        err.close()
        pytest.fail("the local Ray cluster did not start: "
                    + (nodes_dir / "cluster.stderr.txt").read_text()[-3000:])
    info = json.loads(line)
    try:
        yield SimpleNamespace(address=info["address"], nodes_dir=nodes_dir)
    finally:
        proc.stdin.close()  # the helper shuts the cluster down
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
        err.close()


def _executor_args(executor: str, request, workers: int = 2) -> list[str]:
    if executor == "ray":
        return ["--executor", "ray", "--address", request.getfixturevalue("cluster").address,
                "--workers", str(workers)]
    return ["--workers", str(workers)]


def _driver(tmp_path: Path) -> Path:
    d = tmp_path / "driver"
    d.mkdir()
    (d / "toy_cli.py").write_text(TOY_CLI)
    return d


def _cli(driver: Path, *args, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "toy_cli.py", *args], cwd=driver, env=_env(),
                          capture_output=True, text=True, timeout=timeout)


def _toy_suite(driver: Path, n=(1, 2, 3), **settings) -> str:
    body = "".join(f"{k} = {json.dumps(v)}\n" for k, v in settings.items())
    (driver / "toy.toml").write_text(f'suite = "toy"\n[grid]\nn = {list(n)}\n[settings]\n{body}')
    return "toy.toml"


def _records(out: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((out / "results").glob("*.json"))]


def _by_n(out: Path) -> dict[int, dict]:
    return {r["job"]["params"]["n"]: r for r in _records(out)}


def _starts(trace: Path, key: str) -> int:
    return len(list(trace.glob(f"start.{key}.*")))


# ------------------------------------------------------------------------- a real suite on Ray
def test_a_two_node_cluster_runs_a_suite_with_a_relative_out_and_returns_every_record(cluster, tmp_path, tiny_suite):
    driver = _driver(tmp_path)
    (driver / "tiny.toml").write_text(tiny_suite(max_epochs=8, patience=4))
    res = _cli(driver, "run", "tiny.toml", "--out", "out", "--no-progress", "--executor", "ray",
               "--address", cluster.address, "--workers", "2")
    assert res.returncode == 0, res.stderr[-4000:]
    out = driver / "out"
    recs = _records(out)
    assert len(recs) == 4 and all(r["status"] == "ok" for r in recs)
    run_info = json.loads((out / "run-structural-shifts.json").read_text())
    for r in recs:
        assert r["device"] == "cpu"  # 'auto' on nodes without a GPU
        w = r["worker"]
        assert w["host"] == socket.gethostname() and w["versions"] == run_info["environment"]["versions"]
        assert w["threads"] == 1  # the job's num_cpus
        log = (out / "logs" / f"{r['key']}.log").read_text()
        assert "finished in" in log and "epoch" in log  # the job's own log, sent back
    report = (out / "report" / "report.md").read_text()
    assert "OOD robustness on synthetic-default" in report
    assert f"Computed on: {socket.gethostname()} (cpu): 4 jobs." in report
    # nothing was written relative to the workers' own working directory
    assert not any(p.name in ("out", "results", "logs") for p in cluster.nodes_dir.iterdir())


def test_workers_bounds_a_clusters_concurrency_and_jobs_run_in_the_nodes_folder(cluster, tmp_path):
    driver = _driver(tmp_path)
    trace = tmp_path / "trace"
    trace.mkdir()
    suite = _toy_suite(driver, n=(1, 2, 3, 4), sleep_s=1.5, trace_dir=str(trace))
    res = _cli(driver, "run", suite, "--out", "out", "--no-progress", "--executor", "ray",
               "--address", cluster.address, "--workers", "1")
    assert res.returncode == 0, res.stderr[-4000:]
    recs = _records(driver / "out")
    assert len(recs) == 4
    # two one-CPU nodes would run two jobs at once; --workers 1 allows one
    assert [r["metrics"]["concurrent"] for r in recs] == [1, 1, 1, 1]
    assert {r["metrics"]["cwd"] for r in recs} == {str(cluster.nodes_dir)} != {str(driver)}


# ------------------------------------------------------------------------- failing jobs
@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_failing_job_is_recorded_the_others_finish_and_a_rerun_retries_only_it(executor, request, tmp_path):
    driver = _driver(tmp_path)
    trace, flag = tmp_path / "trace", tmp_path / "fail-flag"
    trace.mkdir()
    flag.write_text("fail while this exists")
    suite = _toy_suite(driver, fail_n=2, fail_while=str(flag), trace_dir=str(trace))
    args = ["run", suite, "--out", "out", "--no-progress", *_executor_args(executor, request)]
    res = _cli(driver, *args)
    assert res.returncode == 1, res.stderr[-4000:]
    out = driver / "out"
    by_n = _by_n(out)
    assert sorted(by_n) == [1, 2, 3]
    assert by_n[1]["status"] == by_n[3]["status"] == "ok"
    bad = by_n[2]
    assert bad["status"] == "error" and f"RuntimeError: toy job n=2 fails while {flag} exists" in bad["error"]
    assert f"[on host {socket.gethostname()}]" in bad["error"] and bad["worker"]["host"] == socket.gethostname()
    assert "Traceback" in (out / "logs" / f"{bad['key']}.log").read_text()
    err = res.stderr
    assert "1 of 3 job(s) failed" in err and "retry only these" in err
    assert f"{bad['key']} toy[n=2, seed=0] on {socket.gethostname()}: RuntimeError: toy job n=2" in err
    assert "## Failed jobs" in (out / "report" / "report.md").read_text()  # the report is written
    flag.unlink()
    res = _cli(driver, *args)
    assert res.returncode == 0, res.stderr[-4000:]
    assert "3 jobs, 2 already done, 1 to run" in res.stderr
    assert {n: r["status"] for n, r in _by_n(out).items()} == {1: "ok", 2: "ok", 3: "ok"}
    assert [_starts(trace, by_n[n]["key"]) for n in (1, 2, 3)] == [1, 2, 1]


# ------------------------------------------------------------------------- dying workers
def _run_and_kill_one(driver: Path, args: list[str], pid_dir: Path) -> tuple[subprocess.Popen, str]:
    """Start ``gs-bench run`` in the background, wait for a job to start, ``kill -9`` its worker
    process; returns the run and the killed job's key."""
    with open(driver / "stderr.txt", "w") as err:
        proc = subprocess.Popen([sys.executable, "toy_cli.py", *args], cwd=driver, env=_env(),
                                stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + 300  # a liveness bound, not a speed requirement
    while not list(pid_dir.iterdir()):
        assert proc.poll() is None, (driver / "stderr.txt").read_text()[-3000:]
        assert time.monotonic() < deadline, "no job ever started"
        time.sleep(0.1)
    victim = sorted(pid_dir.iterdir())[0]
    # the job creates its pid file, then writes its key into it: on a loaded machine the
    # file can be seen empty in between (CI once read '' and looked up key '')
    while not (key := victim.read_text()):
        assert time.monotonic() < deadline, f"{victim} stayed empty"
        time.sleep(0.05)
    os.kill(int(victim.name), signal.SIGKILL)
    return proc, key


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_killed_worker_is_retried_and_the_run_completes(executor, request, tmp_path):
    driver = _driver(tmp_path)
    pid_dir, trace = tmp_path / "pids", tmp_path / "trace"
    pid_dir.mkdir()
    trace.mkdir()
    suite = _toy_suite(driver, sleep_s=4.0, pid_dir=str(pid_dir), trace_dir=str(trace))
    args = ["run", suite, "--out", "out", "--no-progress", "--retries", "2",
            *_executor_args(executor, request)]
    proc, key = _run_and_kill_one(driver, args, pid_dir)
    assert proc.wait(timeout=900) == 0, (driver / "stderr.txt").read_text()[-4000:]
    recs = {r["key"]: r for r in _records(driver / "out")}
    assert len(recs) == 3 and all(r["status"] == "ok" for r in recs.values())
    assert _starts(trace, key) >= 2  # the killed job ran again


def test_a_killed_ray_worker_without_retries_is_recorded_and_the_run_goes_on(cluster, tmp_path):
    driver = _driver(tmp_path)
    pid_dir, trace = tmp_path / "pids", tmp_path / "trace"
    pid_dir.mkdir()
    trace.mkdir()
    suite = _toy_suite(driver, sleep_s=4.0, pid_dir=str(pid_dir), trace_dir=str(trace))
    args = ["run", suite, "--out", "out", "--no-progress", "--retries", "0", "--executor", "ray",
            "--address", cluster.address, "--workers", "2"]
    proc, key = _run_and_kill_one(driver, args, pid_dir)
    assert proc.wait(timeout=900) == 1, (driver / "stderr.txt").read_text()[-4000:]
    err = (driver / "stderr.txt").read_text()
    recs = {r["key"]: r for r in _records(driver / "out")}
    assert len(recs) == 3
    assert recs[key]["status"] == "error" and "returned no record" in recs[key]["error"]
    assert all(r["status"] == "ok" for k, r in recs.items() if k != key)
    assert "1 of 3 job(s) failed" in err and key in err
    assert "returned no record" in (driver / "out" / "logs" / f"{key}.log").read_text()
    # the next run retries that job only
    res = _cli(driver, *args)
    assert res.returncode == 0, res.stderr[-4000:]
    assert "3 jobs, 2 already done, 1 to run" in res.stderr


# ------------------------------------------------------------------------- checks before any job
def test_a_node_that_lacks_the_data_stops_the_run_before_any_job(cluster, tmp_path):
    driver = _driver(tmp_path)
    (driver / "data").mkdir()
    (driver / "data" / "input.txt").write_text("present for the driver only")
    suite = _toy_suite(driver, require_file="data/input.txt")  # relative: the workers are elsewhere
    res = _cli(driver, "run", suite, "--out", "out", "--no-progress", "--executor", "ray",
               "--address", cluster.address, "--workers", "2")
    assert res.returncode == 2, res.stderr[-4000:]
    err = res.stderr
    assert "problem(s) on the Ray cluster before any job started" in err
    assert f"required file {cluster.nodes_dir / 'data' / 'input.txt'} is missing" in err
    assert f"node {socket.gethostname()}" in err
    assert not list((driver / "out").glob("results/*.json"))


def test_resources_no_node_has_and_cuda_without_gpus_stop_before_any_job(cluster, tmp_path):
    driver = _driver(tmp_path)
    (driver / "gpu.toml").write_text('suite = "toy"\n[grid]\nn = [1]\n[resources]\nnum_gpus = 1\n')
    base = ["--out", "out", "--no-progress", "--executor", "ray", "--address", cluster.address]
    res = _cli(driver, "run", "gpu.toml", *base)
    assert res.returncode == 2 and "num_gpus=1 but no node of the Ray cluster has that much" in res.stderr
    suite = _toy_suite(driver, n=(1,))
    res = _cli(driver, "run", suite, *base, "--device", "cuda")
    assert res.returncode == 2 and "needs a GPU per job: set num_gpus" in res.stderr
    assert not list((driver / "out").glob("results/*.json"))
