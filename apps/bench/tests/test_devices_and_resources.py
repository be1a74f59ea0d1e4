"""``gs-bench run --device / --threads`` and the suites' ``[resources]`` (issue 18): what a
record says about where it ran, what stays out of the job key, and how resources are read.

The runs use the toy runner (``_toy_runner.py``: no data, no training), in this process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gs_bench import runners
from gs_bench.cli import main
from gs_bench.executors import available_cores, default_threads
from gs_bench.suites import SuiteConfigError, job_resources, load_suite

TESTS = Path(__file__).resolve().parent


@pytest.fixture
def toy(monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(TESTS))
    monkeypatch.setitem(runners.RUNNERS, "toy", "_toy_runner")

    def write(text: str = "", n=(1, 2)) -> Path:
        path = tmp_path / "toy.toml"
        path.write_text(f'suite = "toy"\n[grid]\nn = {list(n)}\n{text}')
        return path

    return write


def _records(out: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((out / "results").glob("*.json"))]


# ------------------------------------------------------------------------------ records
def test_a_record_stores_the_device_threads_and_the_worker_that_ran_it(toy, tmp_path):
    import socket

    from gs_bench.executors import package_versions

    out = tmp_path / "out"
    assert main(["run", str(toy()), "--out", str(out), "--no-progress", "--device", "cpu",
                 "--threads", "1"]) == 0
    for rec in _records(out):
        assert rec["device"] == "cpu"
        w = rec["worker"]
        assert w["host"] == socket.gethostname() and w["device"] == "cpu" and w["threads"] == 1
        assert w["versions"] == package_versions()
        assert "device" not in rec["job"] and "workdir" not in rec["job"]  # as planned, no more


def test_default_threads_are_the_cores_divided_by_the_workers(toy, tmp_path):
    out = tmp_path / "out"
    assert main(["run", str(toy(n=(1, 2, 3))), "--out", str(out), "--no-progress", "--workers", "2"]) == 0
    assert {r["worker"]["threads"] for r in _records(out)} == {max(1, available_cores() // 2)}
    assert default_threads(1) == available_cores() and default_threads(10**6) == 1


def test_the_device_does_not_change_the_job_keys_unless_asked(toy, tmp_path, capsys):
    suite, out = toy(), tmp_path / "out"
    assert main(["run", str(suite), "--out", str(out), "--no-progress", "--device", "cpu"]) == 0
    keys = sorted(r["key"] for r in _records(out))
    capsys.readouterr()
    assert main(["run", str(suite), "--out", str(out), "--no-progress", "--device", "auto"]) == 0
    assert "2 jobs, 2 already done, 0 to run" in capsys.readouterr().err
    assert main(["run", str(suite), "--out", str(out), "--no-progress", "--device", "cpu",
                 "--device-in-key"]) == 0
    assert "2 jobs, 0 already done, 2 to run" in capsys.readouterr().err
    assert len(set(r["key"] for r in _records(out)) - set(keys)) == 2


@pytest.mark.parametrize(("args", "message"), [
    (["--device", "gpu"], "--device must be one of 'auto', 'cpu', 'cuda', 'cuda:<index>', got 'gpu'"),
    (["--threads", "0"], "--threads: must be >= 1"),
    (["--retries", "-1"], "--retries: must be from 0 to 100, got -1"),
    (["--retries", "1000000"], "--retries: must be from 0 to 100, got 1000000"),
    (["--workers", "1000000"], "--workers: at most 1000, got 1000000"),
    (["--workers", "999"], "--workers: at most 4 per CPU core with the local executor"),
    (["--workers", "1001", "--executor", "ray"], "--workers: at most 1000, got 1001"),
    (["--workers", "-3"], "--workers: must be >= 1, got -3"),
    (["--threads", "2000", "--executor", "ray"], "--threads: at most 1024, got 2000"),
    (["--threads", "1000000"], "--threads: at most 1024, got 1000000"),
    (["--threads", "999"], "--threads: at most the"),
    (["--seeds", "1000000000"], "--seeds: at most 1000, got 1000000000"),
    (["--address", "auto"], "--address: needs --executor ray"),
    (["--out", ""], "argument --out: an empty path"),
])
def test_bad_device_threads_and_retries_are_one_line_errors(toy, tmp_path, capsys, args, message):
    with pytest.raises(SystemExit) as exc:
        main(["run", str(toy()), "--out", str(tmp_path / "out"), "--no-progress", *args])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    # the run command's own name and help, where these options are described
    assert err.startswith("gs-bench run: error: ") and err.endswith("(see gs-bench run --help)")


def test_cuda_on_a_machine_without_one_stops_before_any_job(toy, tmp_path, capsys, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    out = tmp_path / "out"
    assert main(["run", str(toy()), "--out", str(out), "--no-progress", "--device", "cuda:1"]) == 2
    assert "--device 'cuda:1' needs a CUDA GPU" in capsys.readouterr().err
    assert not (out / "results").exists()


# ------------------------------------------------------------------------------ [resources]
def test_resources_default_and_per_axis_values_and_profiles(toy):
    path = toy("""
[resources]
num_cpus = 2
[resources.n.3]
num_gpus = 0.5
[profiles.ci.grid]
n = [3, 4]
[profiles.ci.resources]
num_cpus = 4
[profiles.ci.resources.n.4]
num_cpus = 8
""", n=(1, 2, 3))
    demo, ci = load_suite(str(path), "demo"), load_suite(str(path), "ci")
    assert job_resources(demo.resources, {"n": 1}) == {"num_cpus": 2.0, "num_gpus": 0.0}
    assert job_resources(demo.resources, {"n": 3}) == {"num_cpus": 2.0, "num_gpus": 0.5}
    assert job_resources(ci.resources, {"n": 3}) == {"num_cpus": 4.0, "num_gpus": 0.5}
    assert job_resources(ci.resources, {"n": 4}) == {"num_cpus": 8.0, "num_gpus": 0.0}
    assert job_resources({}, {"n": 1}) == {"num_cpus": 1.0, "num_gpus": 0.0}


def test_the_larger_of_two_matching_overrides_wins():
    res = {"a": {"x": {"num_cpus": 2}}, "b": {"y": {"num_cpus": 4, "num_gpus": 1}}}
    assert job_resources(res, {"a": "x", "b": "y"}) == {"num_cpus": 4.0, "num_gpus": 1.0}
    assert job_resources(res, {"b": "y", "a": "x"}) == {"num_cpus": 4.0, "num_gpus": 1.0}


@pytest.mark.parametrize(("text", "message"), [
    ("[resources]\nnum_gpu = 1\n", "resources.num_gpu: unknown key; did you mean 'num_gpus'?"),
    ("[resources]\nnum_cpus = 0\n", "resources.num_cpus: expected a number > 0"),
    ("[resources]\nnum_gpus = -1\n", "resources.num_gpus: expected a number >= 0"),
    ("[resources]\nnum_cpus = \"2\"\n", "resources.num_cpus: expected a number > 0"),
    ("[resources.n.7]\nnum_cpus = 2\n", "resources.n.7: '7' is not a value of grid axis 'n'"),
    ("[resources.n.1]\nthreads = 2\n", "resources.n.1.threads: unknown key"),
    ("[resources]\nn = 3\n", "resources.n: expected a table of axis values"),
    ("[profiles.ci.resources]\nnum_gpus = true\n", "profiles.ci.resources.num_gpus: expected a number >= 0"),
])
def test_bad_resources_name_the_key_and_what_is_accepted(toy, text, message):
    with pytest.raises(SuiteConfigError, match=None) as err:
        load_suite(str(toy(text)), "ci")
    assert message in str(err.value)


def test_the_resources_stay_out_of_the_job_keys(toy, tmp_path):
    from gs_bench.run import plan_jobs

    a = load_suite(str(toy("[resources]\nnum_cpus = 1\n")), "demo")
    b = load_suite(str(toy("[resources]\nnum_cpus = 8\nnum_gpus = 1\n")), "demo")
    assert [j["key"] for j in plan_jobs(a)[0]] == [j["key"] for j in plan_jobs(b)[0]]


def test_shipped_suites_load_with_their_resources():
    for suite in ("structural-shifts", "edgewise", "lebed", "gess"):
        for profile in ("demo", "ci", "full"):
            cfg = load_suite(suite, profile)
            assert job_resources(cfg.resources, {})["num_cpus"] >= 1


# ------------------------------------------------------------------ one resolution per job
#: (suite, grid of one cheap demo job, settings that shorten it)
_ONE_JOB = {
    "structural-shifts": ({"method": ["erm"]}, {"max_epochs": 2}),
    "edgewise": ({"model": ["gcn"]}, {"max_epochs": 2}),
    "lebed": ({}, {"max_epochs": 2, "noise_levels": 1, "mask_levels": 1, "test_graphs": 6,
                   "lebed_max_steps": 2, "lebed_min_steps": 0}),
    "gess": ({"algorithm": ["erm"]}, {"max_epochs": 1}),
}


@pytest.mark.parametrize("suite", sorted(_ONE_JOB))
def test_the_device_is_resolved_exactly_once_per_job(suite, tmp_path, monkeypatch):
    """Issue 31: ``--device`` is resolved once, where the job runs (executors.run_one), and the
    resolved torch.device travels down: the runner and gs-algos' trainers never resolve it
    again (gs_algos.as_device takes a resolved device as it is)."""
    import torch

    import gs_algos.device as dev
    from gs_bench.executors import run_one
    from gs_bench.preflight import plan_jobs

    calls: list[object] = []
    real = dev.resolve_device

    def counting(value="auto", what="device"):
        calls.append(value)
        return real(value, what)

    monkeypatch.setattr(dev, "resolve_device", counting)
    axes, settings = _ONE_JOB[suite]
    config = load_suite(suite, "demo").with_overrides(axes=axes, settings=settings)
    jobs, _ = plan_jobs(config)
    record = run_one(runners.RUNNERS[suite] + ":run_job", jobs[0], workdir=str(tmp_path),
                     device="auto")
    assert record["status"] == "ok", record["error"]
    assert calls == ["auto"], f"{suite}: resolve_device called {len(calls)} times: {calls}"
    assert record["device"] == "cpu" or record["device"].startswith("cuda")
    # and a name handed to gs-algos directly still resolves (users who call it without gs-bench)
    assert isinstance(dev.as_device("auto"), torch.device) and len(calls) == 2


def test_a_record_stores_the_cpu_seconds_of_its_job(tmp_path, monkeypatch):
    """``cpu_time_s``: the process's CPU seconds over the job (``time.process_time``), which a
    paused or crowded run does not inflate as it does ``wall_time_s`` (issue 30's estimates)."""
    import time

    from gs_bench.executors import run_one

    (tmp_path / "cpu_probe_runner.py").write_text("def run_job(job):\n    return {'ok': 1}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    ticks = iter([5.0, 7.5])
    monkeypatch.setattr(time, "process_time", lambda: next(ticks, 7.5))
    record = run_one("cpu_probe_runner:run_job", {"key": "k", "params": {}, "seed": 0}, device="cpu")
    assert record["status"] == "ok", record["error"]
    assert record["cpu_time_s"] == 2.5
    assert record["wall_time_s"] >= 0


def test_a_value_listed_twice_is_planned_once_and_said_in_one_line(toy, tmp_path, capsys):
    """Issue 56: ``n = [1, 2, 2]`` in a grid, or an axis repeated on the command line (``--methods erm erm``),
    planned the same job key twice (and trained it twice); now the plan counts distinct keys and
    one line names the repeated value."""
    suite = toy(n=(1, 2, 2))
    cfg = load_suite(str(suite), "demo")
    assert cfg.grid["n"] == [1, 2] and len(cfg.notes) == 1 and "2 is listed 2 times; planned once" in cfg.notes[0]
    out = tmp_path / "out"
    assert main(["run", str(suite), "--out", str(out), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "grid.n: 2 is listed 2 times; planned once" in err and "2 jobs, 0 already done, 2 to run" in err
    assert len(_records(out)) == 2
    # the command line: an axis given twice over
    over = cfg.with_overrides(axes={"n": [1, 1, 1]})
    assert over.grid["n"] == [1] and any("command line: n: 1 is listed 3 times" in n for n in over.notes)
    from gs_bench.suites import expand_jobs

    assert len(expand_jobs(over)) == 1


def test_an_alias_listed_beside_its_name_is_planned_once(tmp_path, capsys):
    """Issue 56 QA B7: structural-shifts' 'se' is gs-algos' alias of 'erm' (the same training);
    `--methods erm se` planned the same jobs twice under two names."""
    from gs_bench.suites import load_suite

    both = load_suite("structural-shifts", "demo").with_overrides(axes={"method": ["erm", "se"]})
    assert both.grid["method"] == ["erm"]
    assert list(both.notes) == ["command line: method: 'se' is 'erm' (the same jobs); planned once, as 'erm'"]
    alone = load_suite("structural-shifts", "demo").with_overrides(axes={"method": ["se"]})
    assert alone.grid["method"] == ["se"] and not alone.notes  # an alias alone is kept as given
    assert main(["run", "structural-shifts", "--methods", "se+mod", "erm+mod", "--out", str(tmp_path / "o"),
                 "--dry-run"]) == 0
    assert "'se+mod' is 'erm+mod' (the same jobs); planned once" in capsys.readouterr().err
