"""The suites as packages (issue 31; lebed and edgewise so far): one typed ``Settings`` holds
every default and is checked once, from the suite file and from the command line alike; the
runner interface is an object, not names looked up with ``getattr``."""

from __future__ import annotations

import ast
import dataclasses
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import gs_bench.runners.edgewise as edgewise
import gs_bench.runners.gess as gess
import gs_bench.runners.lebed as lebed
import gs_bench.runners.structural as structural
from gs_bench.cli import main
from gs_bench.runner import HOOKS, OPTIONAL_HOOKS, Runner, SuiteRunner
from gs_bench.runners import RUNNERS, load_runner
from gs_bench.runners.lebed.spec import Settings
from gs_bench.suites import SuiteConfigError, TypedSettings, load_suite

PACKAGE = Path(lebed.__file__).resolve().parent
SETTINGS = [f.name for f in dataclasses.fields(Settings)]
#: the suites that are packages with a typed Settings: (suite, package, a grid and settings of
#: a tiny suite file, a setting and its typo)
PACKAGES = {
    "lebed": (lebed, 'dataset = ["synthetic-default"]\nshift = ["feature"]\nmodel = ["gcn"]',
              "noise_levels", "noise_level"),
    "edgewise": (edgewise, 'dataset = ["synthetic-default"]\nmodel = ["gcn"]\nsplit = [0]\nfold = [0]',
                 "max_epochs", "max_epoch"),
    "gess": (gess, 'dataset = ["molecular-fidelity"]\nbackbone = ["egnn"]\nalgorithm = ["erm"]',
             "track_sizes", "track_size"),
    "structural-shifts": (structural, 'dataset = ["synthetic-default"]\nstrategy = ["popularity"]\n'
                          'ratio = ["50:50"]\nmethod = ["erm"]', "ensemble_size", "ensemble_sise"),
}


def _suite(tmp_path: Path, settings: str = "", profile_settings: str = "") -> Path:
    path = tmp_path / "lebed.toml"
    path.write_text(
        'suite = "lebed"\nseeds = 1\n[grid]\ndataset = ["synthetic-default"]\nshift = ["feature"]\n'
        f'model = ["gcn"]\n[settings]\nnoise_levels = 2\nmask_levels = 2\n{settings}\n'
        f"[profiles.ci]\n[profiles.ci.settings]\nmax_epochs = 3\n{profile_settings}\n"
    )
    return path


def _accepted_keys_named(message: str) -> bool:
    return all(name in message for name in SETTINGS)


# ------------------------------------------------------------------------------ one schema
@pytest.mark.parametrize("suite", sorted(PACKAGES))
def test_settings_fields_carry_type_default_allowed_values_and_a_citation(suite):
    schema = PACKAGES[suite][0].Settings
    assert issubclass(schema, TypedSettings)
    for f in dataclasses.fields(schema):
        assert f.metadata.get("cite"), f"{suite}.{f.name}: no citation of its default"
        assert f.metadata.get("allowed") is not None, f"{suite}.{f.name}: no accepted values"
        assert f.type, f.name
    assert Settings().noise_levels == 20 and Settings().lebed_protocol == "authors"
    assert edgewise.Settings().bins == 15 and edgewise.Settings().stopping == "acc_or_nll"


@pytest.mark.parametrize("suite", sorted(PACKAGES))
def test_accepted_values_are_values_not_the_python_name_of_a_table(suite):
    """``gs-bench list SUITE`` shows ``accepted`` to users: the values, never a dotted name."""
    import re

    for f in dataclasses.fields(PACKAGES[suite][0].Settings):
        allowed = f.metadata["allowed"]
        if isinstance(allowed, str):
            assert not re.fullmatch(r"[a-z_]+(\.[A-Za-z_]+)+", allowed), f"{suite}.{f.name}: {allowed}"


def test_lebed_spec_copies_of_accepted_values_are_the_tables_values():
    """lebed's spec writes three tables out so that ``gs-bench list`` needs no PyTorch."""
    import typing

    from gs_algos.lebed import LeBedConfig
    from gs_bench.runners.lebed import spec
    from gs_data.lebed import GENERATORS

    hints = typing.get_type_hints(LeBedConfig)
    assert spec.GENERATORS == GENERATORS
    assert spec.EPSILON_MODES == typing.get_args(hints["epsilon_mode"])
    assert spec.STRUCTURE_FROM == typing.get_args(hints["structure_from"])


def test_specs_import_neither_torch_nor_numba():
    code = ("import sys, gs_bench.runners.lebed.spec, gs_bench.runners.edgewise.spec, "
            "gs_bench.runners.gess.spec, gs_bench.runners.gess.checks, gs_bench.runners.structural.spec, "
            "gs_bench.runner; "
            "print(sorted(m for m in ('torch', 'numba') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def setting_defaults_outside_spec(package: Path, names: list[str]) -> list[str]:
    """Every ``<x>.get("<setting>", ...)`` / ``.setdefault`` / ``.pop`` and every
    ``<x>["<setting>"]`` in the package's sources: a setting read from a dict, with a
    default of its own or none, instead of from the typed ``Settings``."""
    found = []
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            key = None
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("get", "setdefault", "pop") and node.args):
                key = node.args[0]
            elif isinstance(node, ast.Subscript):
                key = node.slice
            if isinstance(key, ast.Constant) and key.value in names:
                found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("suite", sorted(PACKAGES))
def test_no_setting_is_read_from_a_dict_with_a_default_of_its_own(suite):
    package = PACKAGES[suite][0]
    names = [f.name for f in dataclasses.fields(package.Settings)]
    assert setting_defaults_outside_spec(Path(package.__file__).resolve().parent, names) == []


def test_the_source_check_finds_a_planted_default(tmp_path):
    copy = tmp_path / "lebed"
    shutil.copytree(PACKAGE, copy, ignore=lambda d, names: [n for n in names if n == "__pycache__"])
    job = copy / "job.py"
    job.write_text(job.read_text() + '\n\ndef _planted(settings):\n'
                   '    return settings.get("noise_levels", 20), settings["shards"]\n')
    found = setting_defaults_outside_spec(copy, SETTINGS)
    assert len(found) == 2 and all(f.startswith("job.py:") for f in found), found


# ------------------------------------------------------------- a typo stops the run at once
def test_a_typo_in_a_toml_setting_names_the_key_and_the_accepted_keys(tmp_path):
    with pytest.raises(SuiteConfigError) as exc:
        load_suite(str(_suite(tmp_path, settings="noise_level = 3")), "full")
    msg = str(exc.value)
    assert "settings.noise_level: unknown key; did you mean 'noise_levels'?" in msg
    assert _accepted_keys_named(msg), msg
    with pytest.raises(SuiteConfigError) as exc:  # in a profile's settings too
        load_suite(str(_suite(tmp_path, profile_settings="pretrain_rl = 0.1")), "ci")
    assert "profiles.ci.settings.pretrain_rl: unknown key" in str(exc.value)
    assert _accepted_keys_named(str(exc.value))


def test_a_typo_in_a_command_line_setting_stops_the_run_before_any_job(tmp_path, capsys, monkeypatch):
    started = []
    monkeypatch.setattr("gs_bench.run.execute", lambda *a, **k: started.append(a))
    out = tmp_path / "out"
    code = main(["run", str(_suite(tmp_path)), "--profile", "ci", "--set", "noise_level=3",
                 "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and not started and not out.exists()
    assert err.count("\n") == 1, err  # one message
    assert "settings.noise_level: unknown key; did you mean 'noise_levels'?" in err
    assert _accepted_keys_named(err), err
    # a setting of another suite is not silently carried into this one's jobs either
    assert main(["run", str(_suite(tmp_path)), "--robustness-variant", "good", "--out", str(out)]) == 2
    assert "settings.robustness_variant: unknown key" in capsys.readouterr().err
    # a wrong type and a bad value are caught by the same schema
    assert main(["run", str(_suite(tmp_path)), "--set", "noise_levels=many", "--out", str(out)]) == 2
    assert "settings.noise_levels: expected an integer, got 'many'" in capsys.readouterr().err
    assert main(["run", str(_suite(tmp_path)), "--set", "lebed_protocol=ours", "--out", str(out)]) == 2
    assert "lebed_protocol 'ours' is not accepted; choose one of authors, legacy" in capsys.readouterr().err
    assert not started and not out.exists()


def test_overrides_go_through_the_schema_and_leave_the_dict_as_before(tmp_path):
    config = load_suite(str(_suite(tmp_path)), "ci")
    assert isinstance(config.typed_settings, Settings)
    assert config.typed_settings.max_epochs == 3 and config.typed_settings.generator == "eerm-gat"
    over = config.with_overrides(settings={"noise_levels": 3, "feature_models": ["gcn"]})
    # the dict (job keys, records) is the file's keys plus the command line's, as before
    assert over.settings == {"noise_levels": 3, "mask_levels": 2, "max_epochs": 3,
                             "feature_models": ["gcn"]}
    assert over.typed_settings == dataclasses.replace(config.typed_settings, noise_levels=3,
                                                      feature_models=["gcn"])
    with pytest.raises(SuiteConfigError, match=r"command line: settings\.shard: unknown key"):
        config.with_overrides(settings={"shard": 2})


def test_the_worker_recreates_the_typed_settings_from_the_job_dict(tmp_path):
    config = load_suite(str(_suite(tmp_path)), "ci")
    job = {"params": {"dataset": "synthetic-default", "shift": "feature", "model": "gcn"},
           "settings": dict(config.settings), "seed": 0}
    assert Settings.from_job(job) == config.typed_settings
    with pytest.raises(SuiteConfigError, match="settings.noise_level: unknown key"):
        Settings.from_job({**job, "settings": {"noise_level": 3}})


# ------------------------------------------------------------------------ the runner object
def test_the_lebed_runner_is_an_object_with_every_hook():
    runner = load_runner("lebed")
    assert runner is lebed.RUNNER and isinstance(runner, Runner)
    assert RUNNERS["lebed"] == runner.module == "gs_bench.runners.lebed"
    assert runner.Settings is Settings and runner.run_job is lebed.run_job
    assert runner.paragraphs([]) == [] and runner.notes([], Path(".")) == []
    assert runner.runs({}, {}, 3) == 3 and runner.max_runs({}, 3) == 3
    assert runner.order_jobs([{"key": "a"}]) == [{"key": "a"}] and dict(runner.axis_aliases) == {}


@pytest.mark.parametrize("suite", sorted(RUNNERS))
def test_every_suite_has_a_runner_object(suite):
    runner = load_runner(suite)
    assert isinstance(runner, Runner)
    for hook in (*HOOKS, *OPTIONAL_HOOKS):
        assert hasattr(runner, hook), (suite, hook)


def test_a_runner_module_without_a_required_hook_is_refused():
    import types

    module = types.ModuleType("toy_without_tables")
    module.Grid, module.Settings = lebed.Grid, lebed.Settings
    module.validate = module.run_job = lambda *a: {}
    with pytest.raises(TypeError, match="lacks tables"):
        SuiteRunner.from_module("toy", module)


def test_gs_bench_no_longer_looks_hooks_up_by_name():
    """The eleven ``getattr(runner, ...)`` / ``hasattr(runner, ...)`` of before are gone: the
    only lookup by name left is :meth:`SuiteRunner.from_module`."""
    src = Path(lebed.__file__).resolve().parents[2]
    hits = []
    for path in sorted(src.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2
                    and isinstance(node.args[1], ast.Constant)
                    and node.args[1].value in (*HOOKS, *OPTIONAL_HOOKS, "AXIS_ALIASES", "Grid",
                                               "Settings")):
                hits.append(f"{path.relative_to(src)}:{node.lineno}")
    assert hits == []


# ------------------------------------------------------------------ the same for each package
def _tiny(tmp_path: Path, suite: str, settings: str = "") -> Path:
    grid = PACKAGES[suite][1]
    path = tmp_path / f"{suite}.toml"
    path.write_text(f'suite = "{suite}"\nseeds = 1\n[grid]\n{grid}\n[settings]\n{settings}\n')
    return path


@pytest.mark.parametrize("suite", sorted(PACKAGES))
def test_a_typo_from_toml_or_command_line_names_the_key_and_the_accepted_keys(suite, tmp_path, capsys):
    package, _, key, typo = PACKAGES[suite]
    accepted = [f.name for f in dataclasses.fields(package.Settings)]
    with pytest.raises(SuiteConfigError) as exc:
        load_suite(str(_tiny(tmp_path, suite, f"{typo} = 3")), "full")
    assert f"settings.{typo}: unknown key; did you mean '{key}'?" in str(exc.value)
    assert all(name in str(exc.value) for name in accepted)
    out = tmp_path / "out"
    assert main(["run", str(_tiny(tmp_path, suite)), "--set", f"{typo}=3", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"command line: settings.{typo}: unknown key" in err, err
    assert all(name in err for name in accepted) and not out.exists()


@pytest.mark.parametrize("suite", sorted(PACKAGES))
def test_the_runner_of_a_package_is_its_runner_object(suite):
    package = PACKAGES[suite][0]
    assert load_runner(suite) is package.RUNNER and package.RUNNER.module == RUNNERS[suite]
    assert package.RUNNER.Settings.from_job({"settings": {}}) == package.RUNNER.Settings()


def test_edgewise_reads_its_settings_typed_on_the_worker_and_in_the_report():
    from gs_algos.config import TrainConfig

    cfg = edgewise.train_config({"lr": 0.05}, seed=1)
    ref = TrainConfig.edgewise(seed=1, device="auto", lr=0.05, weight_decay=5e-4, max_epochs=2000,
                               patience=100, stopping="acc_or_nll")
    assert cfg == ref
    rec = {"job": {"settings": {"stopping": "patience", "bins": 10, "gone_setting": 1}}, "metrics": {}}
    assert edgewise.Settings.from_record(rec).bins == 10  # an older record's unknown key is left out
    assert any("stopping = 'patience'" in d for d in edgewise.differences([{**rec, "job": {
        **rec["job"], "seed": 0, "params": {"dataset": "d", "model": "gcn"}}}]))


def test_lebed_retraining_settings_are_checked_before_any_job(tmp_path):
    """``lebed_epsilon_mode`` and friends reach gs-algos' ``LeBedConfig`` (which owns their
    accepted values): validate builds it for every dataset and model of the grid, so a bad
    value stops the plan instead of failing every job."""
    from gs_bench.preflight import plan_jobs

    config = load_suite(str(_suite(tmp_path, settings='lebed_epsilon_mode = "rel"')), "full")
    with pytest.raises(SuiteConfigError, match="synthetic-default / gcn: epsilon_mode must be 'absolute' or 'relative'"):
        plan_jobs(config)
    config = load_suite(str(_suite(tmp_path, settings="lebed_min_steps = 50\nlebed_max_steps = 5")), "full")
    with pytest.raises(SuiteConfigError, match="lebed re-training settings of synthetic-default / gcn"):
        plan_jobs(config)


def test_edgewise_score_with_reliability_packs_the_nodewise_bins():
    # the package split once let a keyword named `reliability` shadow the function of that name
    import numpy as np

    from gs_bench.runners.edgewise.job import score

    rng = np.random.default_rng(0)
    probs = rng.dirichlet(np.ones(3), size=30)
    y = rng.integers(0, 3, 30)
    ei = np.stack([np.arange(29), np.arange(1, 30)])
    out = score(probs, y, ei, np.arange(30) >= 10, None, 10, with_reliability=True)
    assert set(out["reliability"]) == {"node", "all", "agree", "disagree"}
    assert "reliability" not in score(probs, y, ei, np.arange(30) >= 10, None, 10)


# ------------------------------------------------------------------ a newcomer's suite
def test_a_newcomer_adds_a_suite_with_one_package_and_one_line(tmp_path, monkeypatch, capsys):
    """docs/architecture.md "Add a suite": the package in ``newcomer_suite/`` (spec, job,
    report, ``RUNNER``), placed under ``gs_bench/runners/``, plus one line in ``RUNNERS`` is
    all a suite needs: it plans, runs, resumes, reports, and its settings are checked."""
    import gs_bench.runners as runners_pkg

    runners_dir = tmp_path / "runners"
    shutil.copytree(Path(__file__).resolve().parent / "newcomer_suite", runners_dir / "coin",
                    ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(runners_pkg, "__path__", [*runners_pkg.__path__, str(runners_dir)])
    monkeypatch.setitem(RUNNERS, "coin", "gs_bench.runners.coin")  # the one line
    suite = tmp_path / "coin.toml"
    suite.write_text('suite = "coin"\nseeds = 2\n[grid]\nbias = [0.2, 0.9]\n[settings]\nflips = 400\n')
    out = tmp_path / "out"
    assert main(["run", str(suite), "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    assert "4 jobs, 0 already done" in capsys.readouterr().err
    assert main(["run", str(suite), "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    assert "4 jobs, 4 already done, 0 to run" in capsys.readouterr().err
    assert main(["report", str(out)]) == 0
    report = (out / "report" / "report.md").read_text()
    assert "Coin flips: share of heads" in report
    heads = [float(line.split("|")[3]) for line in report.splitlines() if line.startswith("| 0.")]
    assert len(heads) == 4 and all(h < 0.4 for h in heads[:2]) and all(h > 0.8 for h in heads[2:])
    # its settings are checked like a shipped suite's, from the file and the command line
    suite.write_text(suite.read_text().replace("flips = 400", "flip = 400"))
    with pytest.raises(SuiteConfigError, match=r"settings\.flip: unknown key; did you mean 'flips'"):
        load_suite(str(suite), "full")
    suite.write_text(suite.read_text().replace("flip = 400", "flips = 400"))
    assert main(["run", str(suite), "--out", str(tmp_path / "o2"), "--set", "flip=3"]) == 2
    assert "flip" in capsys.readouterr().err and not (tmp_path / "o2" / "results").exists()


# ------------------------------------------------------------------- typed jobs (issue 57)
RUNNERS_DIR = PACKAGE.parent
#: a job or a grid point read as a dict: what issue 57 took out of every runner
DICT_READ = re.compile(r"\b(job|params)(\[|\.get\()")


def dict_reads(folder: Path) -> list[str]:
    """Every ``job[...]``, ``job.get(...)``, ``params[...]`` or ``params.get(...)`` in the
    Python files under ``folder``: what the issue's ``grep -E`` finds."""
    return [f"{path.relative_to(folder)}:{n}: {line.strip()}"
            for path in sorted(folder.rglob("*.py"))
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if DICT_READ.search(line)]


def test_no_runner_reads_a_job_or_a_grid_point_as_a_dict():
    assert dict_reads(RUNNERS_DIR) == []


def test_the_dict_read_check_finds_a_planted_one(tmp_path):
    copy = tmp_path / "lebed"
    shutil.copytree(PACKAGE, copy, ignore=lambda d, names: [n for n in names if n == "__pycache__"])
    (copy / "job.py").write_text((copy / "job.py").read_text() + '\n\ndef _planted(job):\n'
                                 '    return job["params"]["model"], job.get("device", "auto")\n')
    assert len(dict_reads(copy)) == 1


@pytest.mark.parametrize("suite", sorted(PACKAGES))
def test_a_job_carries_its_grid_point_as_the_runners_grid(suite, tmp_path):
    from gs_bench.suites import expand_jobs

    package, grid = PACKAGES[suite][:2]
    path = tmp_path / f"{suite}.toml"
    path.write_text(f'suite = "{suite}"\nseeds = 2\n[grid]\n{grid}\n')
    jobs = expand_jobs(load_suite(str(path), "full"))
    assert len(jobs) == 2 and all(isinstance(j.params, package.Grid) for j in jobs)
    written = dict(line.split(" = ") for line in grid.splitlines())
    # the record's / key's params are the grid's axes as written, in its order
    assert list(jobs[0].as_dict()["params"]) == list(written)
    for axis, value in jobs[0].as_dict()["params"].items():
        assert getattr(jobs[0].params, axis) == value


def test_an_axis_left_out_takes_its_default_and_stays_out_of_the_key(tmp_path):
    from gs_bench.suites import expand_jobs

    config = load_suite(str(_suite(tmp_path)), "ci")
    (job,) = expand_jobs(config)
    assert job.params.shard == 0 and "shard" not in job.as_dict()["params"]


@pytest.mark.parametrize(("suite", "axis", "bad", "message"), [
    ("edgewise", "model", "gcnn", "unknown model 'gcnn'; did you mean 'gcn'?"),
    ("edgewise", "fold", 3, "unknown fold 3; accepted: 0, 1, 2"),
    ("lebed", "shift", "featur", "unknown shift 'featur'; did you mean 'feature'?"),
    ("structural-shifts", "ratio", "50:5", "unknown ID:OOD ratio '50:5'"),
    ("structural-shifts", "method", "ermm", "unknown method 'ermm' for structural-shifts; did you mean 'erm'?"),
    ("gess", "backbone", "egnnn", "unknown backbone 'egnnn'; did you mean 'egnn'?"),
    ("gess", "algorithm", "finetune", "replaced by tl-100"),
])
def test_a_grid_value_outside_its_fields_accepted_values_stops_validate(suite, axis, bad, message, tmp_path):
    package, grid = PACKAGES[suite][:2]
    path = tmp_path / f"{suite}.toml"
    path.write_text(f'suite = "{suite}"\n[grid]\n{grid}\n')
    config = load_suite(str(path), "full").with_overrides(axes={axis: [bad]})
    with pytest.raises(SuiteConfigError, match=re.escape(message)):
        package.validate(config)


def test_the_grid_fields_declare_their_accepted_values():
    for suite, axis in (("edgewise", "model"), ("lebed", "model"), ("lebed", "shift"),
                        ("structural-shifts", "ratio"), ("gess", "backbone")):
        f = {f.name: f for f in dataclasses.fields(PACKAGES[suite][0].Grid)}[axis]
        assert f.metadata["allowed"], (suite, axis)
    assert [f.name for f in dataclasses.fields(lebed.Grid) if f.default is dataclasses.MISSING] == \
        ["dataset", "shift", "model"]


def test_a_job_dict_becomes_the_typed_job_the_runner_gets(tmp_path):
    from gs_bench.suites import Job

    given = {"suite": "structural-shifts", "key": "k", "seed": 1, "settings": {"domains": 5},
             "params": {"dataset": "cora-ml", "method": "erm"}, "workdir": str(tmp_path)}
    job = Job.of(given, structural.Grid)
    assert job.params == structural.Grid(dataset="cora-ml", strategy=None, ratio=None, method="erm")
    assert job.point == {"dataset": "cora-ml", "method": "erm"} and job.workdir == tmp_path
    assert job.device == "auto" and job.as_dict() == {k: v for k, v in given.items() if k != "workdir"}
    assert Job.of(job, device="cpu").device == "cpu"
    with pytest.raises(TypeError, match="has no axis strategi"):
        Job.of({**given, "params": {"strategi": "popularity"}}, structural.Grid)


def test_run_one_gives_the_runner_a_typed_job_with_the_resolved_device(tmp_path, monkeypatch):
    import torch

    from gs_bench.executors import run_one

    (tmp_path / "typed_probe_runner.py").write_text(
        "from dataclasses import dataclass\n\n"
        "@dataclass(frozen=True)\nclass Grid:\n    n: int\n\n"
        "def run_job(job):\n"
        "    return {'grid': type(job.params).__name__, 'n': job.params.n, 'device': repr(job.device),\n"
        "            'workdir': str(job.workdir)}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    given = {"suite": "probe", "key": "k", "params": {"n": 3}, "settings": {}, "seed": 0}
    record = run_one("typed_probe_runner:run_job", given, workdir=str(tmp_path), device="cpu")
    assert record["status"] == "ok", record["error"]
    assert record["metrics"] == {"grid": "Grid", "n": 3, "device": repr(torch.device("cpu")),
                                 "workdir": str(tmp_path)}
    assert record["job"] == given  # the record keeps the job as it was given
