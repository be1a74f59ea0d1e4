"""Nothing lost, nothing silently wrong (issue 19): corrupt records, the run lock, orphan
workers after ``kill -9``, SIGINT / SIGTERM, strict suite configs, umask of written files.

The runs use a toy runner (``_toy_runner.py``: no data, no training) registered for the test
only, so they take seconds."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gs_bench import runners
from gs_bench.cli import main
from gs_bench.store import ResultsStore, RunLock, atomic_write_text
from gs_bench.suites import SuiteConfigError, load_suite

TESTS = Path(__file__).resolve().parent
TOY_CLI = """\
import sys
import gs_bench.runners as r
r.RUNNERS["toy"] = "_toy_runner"
from gs_bench.cli import main
if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
"""


@pytest.fixture
def toy(monkeypatch, tmp_path):
    """Register the toy runner in this process; return a writer of toy suite files."""
    monkeypatch.syspath_prepend(str(TESTS))
    monkeypatch.setitem(runners.RUNNERS, "toy", "_toy_runner")

    def write(n=(1, 2), seeds=1, **settings) -> Path:
        path = tmp_path / "toy.toml"
        body = "".join(f"{k} = {json.dumps(v)}\n" for k, v in settings.items())
        path.write_text(f'suite = "toy"\nseeds = {seeds}\n[grid]\nn = {list(n)}\n[settings]\n{body}')
        return path

    return write


def _record_files(out: Path) -> list[Path]:
    return sorted((out / "results").glob("*.json"))


# ------------------------------------------------------------------------------ results store
def test_corrupt_and_foreign_records_are_quarantined_and_the_report_keeps_the_good_ones(toy, tmp_path, capsys, caplog):
    out = tmp_path / "out"
    assert main(["run", str(toy(n=(1, 2, 3))), "--out", str(out), "--no-progress", "--report", "md"]) == 0
    good = _record_files(out)
    assert len(good) == 3
    rows = {}  # the report row of each good record, "| n | seed | value |"
    for f in good:
        rec = json.loads(f.read_text())
        n = rec["job"]["params"]["n"]
        rows[f.name] = f"| {n} | 0 | {10 * n} |"
    good[0].write_text(good[0].read_text()[:40])                     # truncated
    (out / "results" / "aaaa.json").write_text('{"key": "bbbb", "job": {}}')  # foreign: key mismatch
    (out / "results" / "cccc.json").write_text("[1, 2]")              # not a record
    (out / "results" / "dddd.json").write_text(json.dumps(
        {"key": "dddd", "status": "ok", "metrics": {}, "job": {"suite": "other-project", "params": {}}}))
    (out / "results" / "eeee.json").write_bytes(b"\xff\xfe\x00garbage")  # not text
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    err = capsys.readouterr().err
    quarantined = sorted(p.name for p in (out / "results" / "quarantine").iterdir())
    assert quarantined == sorted([good[0].name, "aaaa.json", "cccc.json", "dddd.json", "eeee.json"])
    assert "skipped 5 unreadable record(s)" in err
    for name in quarantined:
        assert name in err
    assert any(str(out / "results" / "aaaa.json") in r.getMessage() for r in caplog.records)
    report = (out / "report" / "report.md").read_text()
    assert "2 job records (0 failed)" in report
    # the two intact records are reported, the truncated one is not (which record is first
    # depends on the job keys, which depend on the installed versions)
    assert all(rows[f.name] in report for f in good[1:])
    assert rows[good[0].name] not in report


def test_deeply_nested_files_are_unreadable_not_a_crash(toy, tmp_path, capsys):
    """Issue 56: a record, a run file or a lock nested past the JSON parser's recursion limit
    raised ``RecursionError`` ("internal error"); each is now read as unreadable: the record
    quarantined by name, the lock as one of unknown holder, the report made from the rest."""
    out = tmp_path / "out"
    assert main(["run", str(toy(n=(1, 2))), "--out", str(out), "--no-progress"]) == 0
    deep = "[" * 100_000 + "]" * 100_000
    (out / "results" / "ffff.json").write_text(deep)
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    err = capsys.readouterr().err
    assert "ffff.json" in err and (out / "results" / "quarantine" / "ffff.json").is_file()
    (out / ".lock").write_text(deep)
    assert RunLock(out).holder() == {}
    (out / ".lock").unlink()
    # a truncated run file: the report still comes from the records, and names the file
    run_file = next(out.glob("run-*.json"))
    run_file.write_text(run_file.read_text()[:30])
    assert main(["report", str(out)]) == 0


def test_report_of_another_tools_folder_moves_nothing(tmp_path, capsys):
    """Issue 56: a folder of another program that happens to hold ``run-gess.json`` and
    ``results/*.json``: only a run file that ``gs-bench run`` wrote makes it a run folder whose
    unreadable records ``report`` may move to quarantine."""
    from gs_bench.store import read_run_file

    out = tmp_path / "theirs"
    (out / "results").mkdir(parents=True)
    (out / "run-gess.json").write_text(json.dumps({"tool": "theirs", "suite": "gess"}))
    (out / "results" / "model.json").write_text(json.dumps({"weights": [1, 2]}))
    assert read_run_file(out / "run-gess.json") is None
    assert not ResultsStore(out).is_run_folder()
    assert main(["report", str(out)]) != 0  # no records of ours: nothing to report
    assert (out / "results" / "model.json").is_file() and not (out / "results" / "quarantine").exists()


def test_run_reruns_the_job_whose_record_was_corrupt(toy, tmp_path, capsys):
    suite, out = toy(n=(1, 2)), tmp_path / "out"
    assert main(["run", str(suite), "--out", str(out), "--no-progress"]) == 0
    victim = _record_files(out)[1]
    victim.write_text("{\"key\": ")
    capsys.readouterr()
    assert main(["run", str(suite), "--out", str(out), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "2 jobs, 1 already done, 1 to run" in err
    assert json.loads(victim.read_text())["status"] == "ok"
    assert (out / "results" / "quarantine" / victim.name).read_text() == "{\"key\": "


# ------------------------------------------------------------------------------ lock
def test_a_second_run_on_a_locked_folder_stops_naming_the_holder(toy, tmp_path, capsys):
    out = tmp_path / "out"
    with RunLock(out):
        assert main(["run", str(toy()), "--out", str(out), "--no-progress"]) == 2
        err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"pid {os.getpid()}" in err and socket.gethostname() in err and "in use by another gs-bench run" in err
    assert not (out / "results").exists()
    assert not (out / ".lock").exists(), "the lock is released on exit"


def test_a_stale_lock_of_a_dead_process_is_taken_over(toy, tmp_path, capsys, caplog):
    out = tmp_path / "out"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    out.mkdir()
    (out / ".lock").write_text(json.dumps({"host": socket.gethostname(), "pid": dead.pid, "started": "x"}))
    assert main(["run", str(toy()), "--out", str(out), "--no-progress"]) == 0
    assert len(_record_files(out)) == 2
    assert any("stale lock" in r.getMessage() for r in caplog.records)
    # a lock of another host cannot be checked from here: it is respected
    (out / ".lock").write_text(json.dumps({"host": "elsewhere.example", "pid": 1, "started": "x"}))
    assert main(["run", str(toy()), "--out", str(out), "--no-progress"]) == 2
    assert "host elsewhere.example" in capsys.readouterr().err


# ------------------------------------------------------------------------------ processes
def _pid_gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def _default_sigint() -> None:
    """In the child before exec: SIGINT back to its default. A shell without job control
    starts background commands (``cmd &``, CI runners, nohup) with SIGINT ignored, the child
    would inherit that and never see the test's Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start_toy_run(tmp_path: Path, workers: int, sleep_s: float, **popen):
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    suite = tmp_path / "toy.toml"
    suite.write_text(f'suite = "toy"\n[grid]\nn = [1, 2, 3, 4]\n[settings]\nsleep_s = {sleep_s}\n'
                     f'pid_dir = "{pid_dir}"\n')
    script = tmp_path / "toy_cli.py"
    script.write_text(TOY_CLI)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    # output to files, not pipes: an orphan holding a pipe open would block the test's read
    with open(tmp_path / "stdout.txt", "w") as out, open(tmp_path / "stderr.txt", "w") as err:
        proc = subprocess.Popen(
            [sys.executable, str(script), "run", str(suite), "--out", str(tmp_path / "out"),
             "--no-progress", "--workers", str(workers)],
            stdout=out, stderr=err, env=env, preexec_fn=_default_sigint, **popen,
        )
    deadline = time.monotonic() + 240  # a liveness bound, not a speed requirement
    while len(list(pid_dir.iterdir())) < workers:
        assert proc.poll() is None, (tmp_path / "stderr.txt").read_text()
        assert time.monotonic() < deadline, "the workers never started their jobs"
        time.sleep(0.1)
    return proc, [int(p.name) for p in pid_dir.iterdir()]


def _wait_gone(pids: list[int], seconds: float = 60) -> list[int]:
    deadline = time.monotonic() + seconds  # generous bound: without the fix they never exit
    while time.monotonic() < deadline and not all(map(_pid_gone, pids)):
        time.sleep(0.1)
    return [p for p in pids if not _pid_gone(p)]


def test_workers_die_with_their_parent_after_kill_minus_9(tmp_path):
    proc, workers = _start_toy_run(tmp_path, workers=2, sleep_s=600)
    assert all(w != proc.pid for w in workers)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    alive = _wait_gone(workers)
    for pid in alive:  # never leave an orphan behind, even when the test fails
        os.kill(pid, signal.SIGKILL)
    assert alive == [], "orphan workers kept running after their parent was killed"
    assert not (tmp_path / "out" / "results").exists() or not list((tmp_path / "out" / "results").glob("*.json"))
    logs = [p.read_text() for p in (tmp_path / "out" / "logs").glob("*.log")]
    assert logs and not any("finished" in text for text in logs), "no job may claim to have finished"


@pytest.mark.parametrize(("sig", "group", "code", "name"), [
    (signal.SIGINT, True, 130, "SIGINT"),    # Ctrl-C: the whole process group gets it
    (signal.SIGTERM, False, 143, "SIGTERM"),  # kill PID / a scheduler: only the parent gets it
])
def test_sigint_and_sigterm_stop_cleanly_with_one_line(tmp_path, sig, group, code, name):
    proc, workers = _start_toy_run(tmp_path, workers=2, sleep_s=600, start_new_session=True)
    if group:
        os.killpg(proc.pid, sig)
    else:
        os.kill(proc.pid, sig)
    try:
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    err = (tmp_path / "stderr.txt").read_text()
    alive = _wait_gone(workers)
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    assert proc.returncode == code, err
    assert "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"gs-bench: stopped by {name}; 0 finished record(s) kept in"), err
    assert "run the same command again to resume" in last
    assert alive == []
    assert not (tmp_path / "out" / ".lock").exists()


# ------------------------------------------------------------------------------ suite configs
def test_unknown_suite_key_is_an_error_with_a_suggestion(toy, tmp_path, capsys):
    path = toy(max_epoch=3)
    path.write_text(path.read_text().replace("[settings]\nmax_epoch", "[settings]\nsleep_sec"))
    with pytest.raises(SuiteConfigError, match=r"settings\.sleep_sec: unknown key; did you mean 'sleep_s'\?"):
        load_suite(str(path))
    shipped = tmp_path / "ss.toml"
    shipped.write_text(
        'suite = "structural-shifts"\n[grid]\ndataset = ["synthetic-default"]\nstrategy = ["density"]\n'
        'ratio = ["50:50"]\nmethod = ["erm"]\n[profiles.ci.settings]\nmax_epoch = 3\n'
    )
    assert main(["run", str(shipped), "--out", str(tmp_path / "o"), "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "profiles.ci.settings.max_epoch: unknown key; did you mean 'max_epochs'?" in err
    for bad, hint in (("sed = 3", "did you mean 'seeds'"), ("[profiles.dmeo]\nseeds = 1", "did you mean 'demo'"),
                      ("[grid]\nn = [1]\nm = [2]", "unknown grid axis")):
        p = tmp_path / "bad.toml"
        p.write_text(f'suite = "toy"\n{bad}\n' + ("" if bad.startswith("[grid]") else "[grid]\nn = [1]\n"))
        with pytest.raises(SuiteConfigError, match=hint):
            load_suite(str(p))


@pytest.mark.parametrize(("snippet", "message"), [
    ('[profiles.ci.settings]\nlr = "fast"', r"profiles\.ci\.settings\.lr: expected a number, got 'fast' \(a string\)"),
    ("[settings]\nmax_epochs = 2.5", r"settings\.max_epochs: expected an integer( or nothing \(leave the key out\))?, got 2\.5"),
    ("[settings]\nroot = 3", r"settings\.root: expected a string or nothing"),
    ("[settings]\npatience = true", r"settings\.patience: expected an integer( or nothing \(leave the key out\))?, got True \(a boolean\)"),
    ('[profiles.demo.grid]\nratio = [50]', r"profiles\.demo\.grid\.ratio: expected a list of a string"),
    ("[settings]\nmax_epochs = 0", r"max_epochs must be > 0 and finite, got 0"),
])
def test_bad_setting_type_names_the_key_path(tmp_path, snippet, message):
    path = tmp_path / "s.toml"
    path.write_text(
        'suite = "structural-shifts"\n[grid]\ndataset = ["synthetic-default"]\nstrategy = ["density"]\n'
        f'ratio = ["50:50"]\nmethod = ["erm"]\n{snippet}\n'
    )
    with pytest.raises(SuiteConfigError, match=message):
        load_suite(str(path), "ci")


def test_profiles_that_are_not_tables_are_a_config_error(tmp_path):
    """Found by test_fuzz_suites: ``profiles = 1`` was read as a table before its type was
    checked (an internal AttributeError instead of the one-line error)."""
    path = tmp_path / "s.toml"
    for value in ("1", '"ci"', "[1, 2]"):
        path.write_text(f'suite = "structural-shifts"\nprofiles = {value}\n')
        with pytest.raises(SuiteConfigError, match=r"profiles must be tables \[profiles\.<name>\], got"):
            load_suite(str(path), "demo")


def test_nested_settings_tables_are_checked_with_their_full_path(toy, tmp_path):
    path = toy()
    path.write_text(path.read_text() + '[profiles.ci.settings.train]\nlr = "fast"\n')
    with pytest.raises(SuiteConfigError, match=r"profiles\.ci\.settings\.train\.lr: expected a number, got 'fast'"):
        load_suite(str(path), "demo")  # every profile is checked, not only the one that runs
    path.write_text(path.read_text().replace('lr = "fast"', "max_epoch = 3"))
    with pytest.raises(SuiteConfigError, match=r"settings\.train\.max_epoch: unknown key; did you mean 'max_epochs'"):
        load_suite(str(path), "ci")
    path.write_text(path.read_text().replace("max_epoch = 3", "lr = 0.5"))
    assert load_suite(str(path), "ci").settings["train"] == {"lr": 0.5}


def test_valid_settings_still_load_and_ints_count_as_floats(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(
        'suite = "structural-shifts"\n[grid]\ndataset = ["synthetic-default"]\nstrategy = ["density"]\n'
        'ratio = ["50:50"]\nmethod = ["erm"]\n[settings]\nlr = 1\n[profiles.ci.settings]\nroot = "shared"\n'
    )
    cfg = load_suite(str(path), "ci")
    assert cfg.settings == {"lr": 1, "root": "shared"}


def test_every_setting_a_runner_reads_is_declared_in_its_schema():
    """The runner's ``Settings`` is the one place a setting is declared: a key read in the
    runner (``settings.get("x", default)``, ``settings["x"]``, ``"x" in settings``) must be a
    field, and a literal default there must equal the field's default. A suite that is a
    package (issue 31: lebed, edgewise) reads no setting from the dict at all: its code reads
    the typed ``Settings`` (``tests/test_suite_packages.py`` checks that more broadly)."""
    import ast
    import dataclasses
    import importlib

    for suite, module in runners.RUNNERS.items():
        mod = importlib.import_module(module)
        fields = {f.name: f.default for f in dataclasses.fields(mod.Settings)}
        axes = {f.name for f in dataclasses.fields(mod.Grid)}  # split_figures folds the ratio in
        package = hasattr(mod, "__path__")
        sources = sorted(Path(mod.__file__).parent.rglob("*.py")) if package else [Path(mod.__file__)]
        read: dict[str, object] = {}
        for node in (n for src in sources for n in ast.walk(ast.parse(src.read_text()))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                    and isinstance(node.func.value, (ast.Name, ast.Attribute))
                    and getattr(node.func.value, "id", getattr(node.func.value, "attr", "")) == "settings"
                    and node.args and isinstance(node.args[0], ast.Constant)):
                default = node.args[1] if len(node.args) > 1 else None
                read[node.args[0].value] = ast.literal_eval(default) if isinstance(default, ast.Constant) else ...
            elif (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "settings"
                  and isinstance(node.slice, ast.Constant)):
                read.setdefault(node.slice.value, ...)
        if package:
            assert not read, f"{suite}: reads settings {sorted(read)} from the dict, not from its Settings"
            continue
        assert read, suite
        for key, default in read.items():
            if key in axes:
                continue
            assert key in fields, f"{suite}: the runner reads setting {key!r}; declare it in {module}.Settings"
            if default is not ... and default is not None:
                assert fields[key] == default, f"{suite}: default of {key!r} differs: runner {default!r}, schema {fields[key]!r}"


# ------------------------------------------------------------------------------ umask
@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_written_files_follow_the_umask(tmp_path, mask):
    old = os.umask(mask)
    try:
        atomic_write_text(tmp_path / "a.json", "{}")
        ResultsStore(tmp_path).put("k", {"status": "ok"})
    finally:
        os.umask(old)
    for p in (tmp_path / "a.json", tmp_path / "results" / "k.json"):
        assert stat.S_IMODE(p.stat().st_mode) == 0o666 & ~mask, oct(p.stat().st_mode)


# ------------------------------------------------------------- issue 34: the second pass
def _toy_cli(tmp_path: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    script = tmp_path / "toy_cli.py"
    script.write_text(TOY_CLI)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=timeout)


def test_a_folder_of_two_settings_reports_each_apart_and_every_cell_shows_n(toy, tmp_path, capsys):
    """A re-run into the same --out after changing a setting: the report averaged both
    settings' records (seed 0 counted twice). Now each setting is a section of its own, named
    by the keys that differ, every mean cell says its n, and the second run warns."""
    out = tmp_path / "out"
    first = toy(n=(1, 2), seeds=2)
    first.write_text(first.read_text() + "[settings.train]\nlr = 0.01\n")
    assert main(["run", str(first), "--out", str(out), "--no-progress"]) == 0
    second = toy(n=(1, 2), seeds=2)
    second.write_text(second.read_text() + "[settings.train]\nlr = 0.02\n")
    capsys.readouterr()
    assert main(["run", str(second), "--out", str(out), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert f"warning: {out} already holds 4 toy record(s) of other settings (train.lr=0.01; this run: train.lr=0.02)" in err
    report = (out / "report" / "report.md").read_text()
    assert "## toy (train.lr=0.01)" in report and "## toy (train.lr=0.02)" in report
    assert report.count("| 1 | 10.50 ± 0.50 (n=2) |") == 2 and "(n=4)" not in report
    # a setting written out at its default is the same variant as leaving it out
    third = toy(n=(1,), seeds=1)
    third.write_text(third.read_text() + "[settings.train]\nlr = 0.01\nmax_epochs = 10\n")
    capsys.readouterr()
    assert main(["run", str(third), "--out", str(out), "--no-progress"]) == 0
    assert "train.max_epochs" not in capsys.readouterr().err


def test_records_of_one_grid_point_under_two_keys_are_never_averaged():
    """Same settings, other package versions (a re-run after an upgrade): two groups."""
    from gs_bench.report import fmt_mean_std, split_by_settings

    def rec(key, seed, version):
        return {"key": key, "status": "ok", "metrics": {"v": seed},
                "job": {"suite": "nosuch", "params": {"n": 1}, "settings": {"a": 1}, "seed": seed},
                "worker": {"versions": {"gs-algos": version}}}

    groups = split_by_settings([rec("k1", 0, "0.1"), rec("k2", 1, "0.1"), rec("k3", 0, "0.2")])
    assert [(label, [r["key"] for r in recs]) for label, recs in groups] == [
        ("versions gs-algos=0.1", ["k1", "k2"]), ("versions gs-algos=0.2", ["k3"])]
    assert split_by_settings([rec("k1", 0, "0.1"), rec("k2", 1, "0.2")])[0][0] == ""  # no duplicate
    assert fmt_mean_std([0.1, 0.3]) == "20.00 ± 10.00 (n=2)" and fmt_mean_std([0.5]) == "50.00 (n=1)"


def test_report_of_a_folder_gs_did_not_write_moves_nothing(toy, tmp_path, capsys):
    """``gs-bench report DIR`` moved every non-record ``DIR/results/*.json`` to quarantine,
    even without a gs run file. Now it leaves them in place and says so."""
    foreign = tmp_path / "other"
    (foreign / "results").mkdir(parents=True)
    theirs = foreign / "results" / "config.json"
    theirs.write_text('{"learning_rate": 0.1}')
    assert main(["report", str(foreign)]) == 2
    err = capsys.readouterr().err
    assert theirs.read_text() == '{"learning_rate": 0.1}' and not (foreign / "results" / "quarantine").exists()
    assert f"{foreign} is not a gs run folder (no run-<suite>.json): skipped 1 file(s)" in err
    assert "config.json" in err and not (foreign / "report").exists()
    # gs records copied there without their run file are reported; the foreign file stays
    out = tmp_path / "out"
    assert main(["run", str(toy(n=(1,))), "--out", str(out), "--no-progress"]) == 0
    for rec in (out / "results").glob("*.json"):
        (foreign / "results" / rec.name).write_text(rec.read_text())
    capsys.readouterr()
    assert main(["report", str(foreign)]) == 0
    assert theirs.is_file() and not (foreign / "results" / "quarantine").exists()
    assert "not a gs run folder" in capsys.readouterr().err


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_failing_job_is_one_line_whatever_workers_and_v_shows_the_traceback(tmp_path, workers):
    """``--workers 1`` printed the traceback and every per-epoch log line, ``--workers 2``
    neither. Now both print one line per failure (naming the log file); the traceback and the
    job's log lines are in that file, and ``-v`` prints the traceback too."""
    flag = tmp_path / "fail-flag"
    flag.write_text("")
    (tmp_path / "toy.toml").write_text(
        f'suite = "toy"\n[grid]\nn = [1, 2]\n[settings]\nfail_n = 2\nfail_while = "{flag}"\n')
    base = ["run", "toy.toml", "--out", "out", "--no-progress", "--workers", workers]
    res = _toy_cli(tmp_path, *base)
    assert res.returncode == 1, res.stderr
    assert "Traceback" not in res.stderr and "INFO" not in res.stderr and "toy epoch" not in res.stderr, res.stderr
    failed = [ln for ln in res.stderr.splitlines() if "RuntimeError: toy job n=2" in ln]
    assert len(failed) == 2, res.stderr  # the line as it happens, and the end-of-run summary
    (key,) = [r["key"] for r in map(json.loads, map(Path.read_text, (tmp_path / "out" / "results").glob("*.json")))
              if r["status"] == "error"]
    log = (tmp_path / "out" / "logs" / f"{key}.log").read_text()
    assert "Traceback" in log and "toy epoch 1 of job n=2" in log
    assert f"(log: out/logs/{key}.log)" in res.stderr
    res = _toy_cli(tmp_path, *base, "-v")
    assert res.returncode == 1 and "Traceback (most recent call last)" in res.stderr, res.stderr


def test_an_unreachable_ray_address_fails_fast_in_one_line_naming_it(toy, tmp_path, capsys, monkeypatch):
    """``--executor ray --address`` to a host nobody listens on retried for over 5 minutes with
    no gs message. Ray is not needed for the test: a stand-in module records ``ray.init``."""
    import socket as _socket
    import types

    calls = []
    fake = types.ModuleType("ray")
    fake.is_initialized = lambda: False
    fake.init = lambda **kw: calls.append(kw) or (_ for _ in ()).throw(
        ConnectionError("Could not find any running Ray instance"))
    monkeypatch.setitem(sys.modules, "ray", fake)
    with _socket.socket() as s:  # a port that was free a moment ago: nobody listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"127.0.0.1:{port}"
    start = time.monotonic()
    code = main(["run", str(toy(n=(1,))), "--out", str(tmp_path / "out"), "--no-progress",
                 "--executor", "ray", "--address", address])
    assert time.monotonic() - start < 60
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"gs-bench: cannot reach the Ray cluster at {address}") and calls == []
    from gs_bench.executors import ClusterCheckError, check_reachable

    with pytest.raises(ClusterCheckError, match="expected HOST:PORT"):
        check_reachable("head-node:port")


@pytest.mark.parametrize(("settings", "message"), [
    ("lr = inf", "settings.lr: expected a finite number, got inf"),
    ("lr = nan", "settings.lr: expected a finite number, got nan"),
    ("lr = 1e400", "settings.lr: expected a finite number, got inf"),
    ("weight_decay = -1e-5", "settings: weight_decay must be >= 0 and finite, got -1e-05"),
])
def test_numeric_settings_are_finite_and_in_range_before_any_job(tmp_path, capsys, tiny_suite, settings, message):
    """``lr = inf`` passed validation and the job died at epoch 1; a negative weight decay was
    caught inside the job only."""
    path = tmp_path / "s.toml"
    path.write_text(tiny_suite(seeds=1, strategies=("popularity",)) + settings + "\n")
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


def test_nested_non_finite_settings_name_their_path(toy, tmp_path):
    path = toy(n=(1,))
    path.write_text(path.read_text() + "[settings.train]\nlr = -inf\n")
    with pytest.raises(SuiteConfigError, match=r"settings\.train\.lr: expected a finite number, got -inf"):
        load_suite(str(path))


def test_a_full_disk_at_start_names_the_path_and_says_nothing_was_lost(toy, tmp_path, capsys, monkeypatch):
    """Before: ``gs-bench: [Errno 28] No space left on device``, no path."""
    import contextlib
    import errno

    import gs_data

    out = tmp_path / "out"
    assert main(["run", str(toy(n=(1,))), "--out", str(out), "--no-progress"]) == 0
    kept = sorted(p.read_text() for p in (out / "results").glob("*.json"))

    class Full:
        def write(self, text):
            raise OSError(errno.ENOSPC, "No space left on device")

    @contextlib.contextmanager
    def full_disk(path, mode="wb", encoding=None):
        yield Full()

    monkeypatch.setattr(gs_data, "atomic_write", full_disk)
    capsys.readouterr()
    assert main(["run", str(toy(n=(1, 2))), "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(f"gs-bench: cannot write {out / 'run-toy.json'}: No space left on device; "
                             f"nothing was lost: the 1 finished record(s) in {out / 'results'} are kept")
    assert sorted(p.read_text() for p in (out / "results").glob("*.json")) == kept


@pytest.mark.parametrize("code", ["EROFS", "EACCES"])
def test_a_read_only_run_folder_is_named_as_read_only(toy, tmp_path, capsys, monkeypatch, code):
    """Issue 56: a read-only --out named a temporary lock file and said "Free some space". (This
    machine runs the tests as root, whom a mode of 0o555 does not stop, so the refusal of the
    file system is simulated where the lock is created.)"""
    import errno

    from gs_bench import store

    out = tmp_path / "out"
    out.mkdir()
    real_open = store.os.open

    def refuse(path, *a, **k):
        if str(path).startswith(str(out)):
            raise OSError(getattr(errno, code), os.strerror(getattr(errno, code)), str(path))
        return real_open(path, *a, **k)

    real_unlink = os.unlink

    def refuse_unlink(path, *a, **k):  # a read-only file system refuses even a missing file's unlink
        if str(path).startswith(str(out)):
            raise OSError(getattr(errno, code), os.strerror(getattr(errno, code)), str(path))
        return real_unlink(path, *a, **k)

    monkeypatch.setattr(store.os, "open", refuse)
    monkeypatch.setattr(os, "unlink", refuse_unlink)
    assert main(["run", str(toy(n=(1,))), "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(f"gs-bench: cannot write {out}: {os.strerror(getattr(errno, code))}: the run "
                             f"folder {out} is read-only or not writable by this user"), err
    assert "space" not in err[0] and ".lock" not in err[0]


def test_a_profile_the_suite_file_lacks_is_an_error_naming_its_profiles(toy, tmp_path, capsys):
    """``--profile ci`` on a file without ``[profiles.ci]`` ran the base settings silently."""
    path = toy(n=(1,))
    path.write_text(path.read_text() + "[profiles.demo]\nseeds = 1\n[profiles.paper]\nseeds = 2\n")
    assert main(["run", str(path), "--profile", "ci", "--out", str(tmp_path / "o"), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert ("no [profiles.ci] in this suite file; the profiles it has: demo, paper, and full (its "
            "[grid] and [settings] as written)") in err
    assert load_suite(str(path), "full").seeds == 1  # full is the base settings
    bare = toy(n=(1,))
    assert load_suite(str(bare), "demo").seeds == 1  # a file without profiles runs as written
    with pytest.raises(SuiteConfigError, match=r"no \[profiles\.ci\] in this suite file; it has no profiles: "
                                               "run it without --profile, or with --profile full"):
        load_suite(str(bare), "ci")


@pytest.mark.parametrize("dry", [True, False])
def test_the_default_demo_profile_a_file_lacks_is_stated_and_an_explicit_one_is_an_error(
        toy, tmp_path, capsys, dry):
    """The default ``--profile demo`` on a file without ``[profiles.demo]`` ran its base
    settings without a word (QA of issue 34); ``--profile demo`` named on the command line
    is now an error like ``--profile ci``, and the default says so in its plan line."""
    path = toy(n=(1,))
    path.write_text(path.read_text() + "[profiles.ci]\nseeds = 2\n")
    out = tmp_path / "o"
    assert main(["run", str(path), "--profile", "demo", "--out", str(out), "--dry-run"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no [profiles.demo] in this suite file; the profiles it has: ci, and full" in err[0], err
    assert not out.exists()
    assert main(["run", str(path), "--out", str(out), "--no-progress", *(["--dry-run"] if dry else [])]) == 0
    err = capsys.readouterr().err
    assert f"toy (demo: {path} has no [profiles.demo], so its [grid] and [settings] as written): " in err, err
    assert load_suite(str(path)).profile_missing and not load_suite(str(path), "ci").profile_missing


@pytest.mark.parametrize("dry", [True, False])
def test_an_exclude_that_removes_every_job_says_no_jobs_remain(toy, tmp_path, capsys, dry):
    """Exit 0 and "run `gs-bench run ... --out` first" before issue 34."""
    path = toy(n=(1, 2))
    path.write_text(path.read_text() + "[[exclude]]\nn = [1, 2]\n")
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--no-progress", *(["--dry-run"] if dry else [])]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no jobs remain (the [[exclude]] rules leave out all 2 grid point(s))" in err[0], err
    assert "first" not in err[0] and not out.exists()


def test_a_suite_path_that_is_a_directory_says_so(tmp_path, capsys):
    (tmp_path / "suites.toml").mkdir()
    for name in ("suites.toml", str(tmp_path)):
        assert main(["run", str(tmp_path / name) if name.endswith(".toml") else name,
                     "--out", str(tmp_path / "o"), "--dry-run"]) == 2
        err = capsys.readouterr().err
        assert "is a directory, not a suite .toml file" in err and "does not exist" not in err


def test_a_refused_ray_connection_names_the_token_when_this_machine_has_one(toy, tmp_path, capsys,
                                                                           monkeypatch):
    """Ray >= 2.59 turns token authentication on for clusters that ``ray start`` makes; a client
    without ``RAY_AUTH_MODE=token`` is refused with a bare ConnectionError (found running the
    issue-34 Ray runs). The one line says what to export. Ray itself is a stand-in module."""
    import socket as _socket
    import types

    fake = types.ModuleType("ray")
    fake.is_initialized = lambda: False
    fake.init = lambda **kw: (_ for _ in ()).throw(
        ConnectionError("Failed to connect to Ray cluster at the address"))
    monkeypatch.setitem(sys.modules, "ray", fake)
    (tmp_path / "home" / ".ray").mkdir(parents=True)
    (tmp_path / "home" / ".ray" / "auth_token").write_text("secret")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    monkeypatch.delenv("RAY_AUTH_TOKEN", raising=False)
    with _socket.socket() as server:  # something listens there, so the reachability check passes
        server.bind(("127.0.0.1", 0))
        server.listen()
        address = f"127.0.0.1:{server.getsockname()[1]}"
        code = main(["run", str(toy(n=(1,))), "--out", str(tmp_path / "out"), "--no-progress",
                     "--executor", "ray", "--address", address])
    err = [line for line in capsys.readouterr().err.strip().splitlines()
           if line.startswith("gs-bench:")]  # (the plan line comes first)
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"gs-bench: cannot connect to the Ray cluster at {address}")
    assert "export RAY_AUTH_MODE=token" in err[0]

    from gs_bench.executors import _auth_hint

    home = str(tmp_path / "home")
    assert "RAY_AUTH_MODE=token" in _auth_hint({}, home)
    assert _auth_hint({"RAY_AUTH_MODE": "token"}, home) == ""
    assert _auth_hint({"RAY_AUTH_TOKEN": "abc"}, home) == ""
    assert _auth_hint({}, str(tmp_path / "elsewhere")) == ""  # no token here: no hint


def test_a_node_that_cannot_import_gs_bench_is_named_in_one_line():
    """The workers of a cluster run the environment ``ray start`` ran in: a node check that
    cannot unpickle ``gs_bench`` there says so (it printed only Ray's
    ``RayTaskError(RaySystemError): ray::_probe() (pid=..)``)."""
    from gs_bench.executors import _probe_failure

    class RayTaskError(Exception):
        pass

    exc = RayTaskError("ray::_probe() (pid=16405, ip=192.0.2.2)\nSystem error: No module named "
                       "'gs_bench'\ntraceback: Traceback (most recent call last): ...")
    msg = _probe_failure(exc)
    assert "\n" not in msg and "cannot import 'gs_bench'" in msg and "ray start" in msg
    other = _probe_failure(RayTaskError("ray::_probe() failed\nmore"))
    assert other == "the node check failed: RayTaskError: ray::_probe() failed"


@pytest.mark.parametrize("kind", ["nested", "fifo", "dev-zero", "not-a-dict"])
def test_an_unreadable_split_picture_leaves_the_figure_out_without_a_hang_or_crash(tmp_path, kind, caplog):
    """Issue 56 QA C13-C15: a split picture (read by the structural report) nested 100000 deep
    crashed the report with RecursionError, a FIFO hung it, a link to /dev/zero ran it out of
    memory."""
    from gs_bench.runners.structural.pictures import PICTURE_DIR, read_picture

    pic = tmp_path / PICTURE_DIR / "x.json"
    pic.parent.mkdir()
    if kind == "nested":
        pic.write_text("[" * 100000 + "]" * 100000)
    elif kind == "fifo":
        os.mkfifo(pic)
    elif kind == "dev-zero":
        pic.symlink_to("/dev/zero")
    else:
        pic.write_text("[1, 2]")
    with caplog.at_level("WARNING"):
        assert read_picture(tmp_path, f"{PICTURE_DIR}/x.json") is None
    assert "the appendix-H figure is left out" in caplog.text
