"""Results store (atomic, resumable) and suite configs (declarative, validated, keyed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gs_bench.store import ResultsStore, atomic_write_text
from gs_bench.suites import (
    OPTIONAL_PROFILES,
    PROFILES,
    UNSET,
    SuiteConfigError,
    available_suites,
    expand_jobs,
    job_key,
    load_suite,
    suite_profiles,
)


def test_atomic_write_leaves_no_temporary_files(tmp_path):
    target = tmp_path / "a" / "b.json"
    atomic_write_text(target, '{"x": 1}')
    atomic_write_text(target, '{"x": 2}')
    assert json.loads(target.read_text()) == {"x": 2}
    assert [p.name for p in target.parent.iterdir()] == ["b.json"]


def test_atomic_write_keeps_old_content_when_serialisation_fails(tmp_path):
    store = ResultsStore(tmp_path)
    store.put("k1", {"metrics": {"acc": 0.5}})
    with pytest.raises(TypeError):
        store.put("k1", {"metrics": {"acc": object()}})
    assert store.get("k1")["metrics"] == {"acc": 0.5}
    assert store.keys() == ["k1"]


def test_store_roundtrip_and_resume_state(tmp_path):
    store = ResultsStore(tmp_path)
    assert not store.has("abc") and len(store) == 0
    store.put("abc", {"status": "ok"})
    again = ResultsStore(tmp_path)
    assert again.has("abc") and again.get("abc") == {"key": "abc", "status": "ok"}
    with pytest.raises(ValueError, match="does not match"):
        store.put("abc", {"key": "other"})


@pytest.mark.parametrize("suite", ["structural-shifts", "edgewise"])
@pytest.mark.parametrize("profile", PROFILES)
def test_shipped_suites_load_for_every_profile(suite, profile):
    assert suite in available_suites()
    if profile in OPTIONAL_PROFILES and profile not in suite_profiles(suite):
        # an optional profile (gess's medium) is refused by name where the file lacks it
        with pytest.raises(SuiteConfigError, match=rf"no \[profiles.{profile}\] in this suite file"):
            load_suite(suite, profile)
        return
    cfg = load_suite(suite, profile)
    assert cfg.suite == suite and cfg.profile == profile and cfg.seeds >= 1
    jobs = expand_jobs(cfg)
    n = cfg.seeds
    for values in cfg.grid.values():
        n *= len(values)
    assert len(jobs) == n
    assert len({j.key for j in jobs}) == n, "job keys must be unique"


def test_structural_shifts_defaults_are_the_papers():
    cfg = load_suite("structural-shifts", "full")
    assert cfg.settings["lr"] == 3e-4 and cfg.settings["weight_decay"] == 1e-5
    assert cfg.grid["ratio"] == ["50:50", "70:30", "90:10"]
    assert cfg.grid["strategy"] == ["popularity", "locality", "density", "random"]  # + appendix B
    # the authors' runs: 3 of each single model, one ensemble of 5 members
    assert cfg.seeds == 3 and cfg.settings["ensemble_size"] == 5 and cfg.settings["ensemble_runs"] == 1
    assert cfg.settings["protocol"] == "authors"
    assert load_suite("structural-shifts", "demo").grid["dataset"] == ["synthetic-default"]


def test_job_key_depends_on_everything_that_determines_the_result():
    cfg = load_suite("structural-shifts", "demo")
    base = {j.describe(): j.key for j in expand_jobs(cfg, versions={"gs-algos": "1"})}
    other_version = {j.describe(): j.key for j in expand_jobs(cfg, versions={"gs-algos": "2"})}
    other_data = {
        j.describe(): j.key
        for j in expand_jobs(cfg, versions={"gs-algos": "1"}, fingerprints={"synthetic-default": "x"})
    }
    assert base.keys() == other_version.keys() == other_data.keys()
    assert all(base[d] != other_version[d] for d in base)
    assert all(base[d] != other_data[d] for d in base)
    assert job_key({"a": 1, "b": 2}) == job_key({"b": 2, "a": 1})


def test_overrides(tmp_path):
    cfg = load_suite("structural-shifts", "ci").with_overrides(seeds=2, axes={"dataset": ["cora-ml"]})
    assert cfg.seeds == 2 and cfg.grid["dataset"] == ["cora-ml"]
    with pytest.raises(SuiteConfigError, match="no axis 'colour'"):
        cfg.with_overrides(axes={"colour": ["red"]})
    with pytest.raises(SuiteConfigError, match="seeds must be >= 1"):
        cfg.with_overrides(seeds=0)


def test_unset_takes_a_profile_setting_back_to_none_and_keys_jobs_as_if_never_set(tmp_path):
    """gess ci sets track_max_epochs = 30; unsetting it gives the jobs of a suite file that
    never set it (the per-case default of GeSS Table 8), not a key holding None."""
    ci = load_suite("gess", "ci")
    assert ci.settings["track_max_epochs"] == 30
    cfg = ci.with_overrides(settings={"track_max_epochs": UNSET})
    assert "track_max_epochs" not in cfg.settings and cfg.typed_settings.track_max_epochs is None
    assert {k: v for k, v in ci.settings.items() if k != "track_max_epochs"} == cfg.settings
    import gs_bench

    text = (Path(gs_bench.__file__).parent / "suites" / "gess.toml").read_text()
    assert "track_max_epochs = 30\n" in text
    never = tmp_path / "gess.toml"
    never.write_text(text.replace("track_max_epochs = 30\n", ""))
    assert ({j.key for j in expand_jobs(cfg)}
            == {j.key for j in expand_jobs(load_suite(str(never), "ci"))})
    assert {j.key for j in expand_jobs(cfg)}.isdisjoint(j.key for j in expand_jobs(ci))
    # a setting with a real default cannot be unset, an unknown one is named with a suggestion
    with pytest.raises(SuiteConfigError, match="cannot be unset .*--set track_seed=VALUE"):
        ci.with_overrides(settings={"track_seed": UNSET})
    with pytest.raises(SuiteConfigError, match="unknown setting.*track_max_epochs"):
        ci.with_overrides(settings={"track_max_epoch": UNSET})
    # did-you-mean ignores case on both sides
    from gs_bench.suites import did_you_mean

    assert did_you_mean("GPNx", ["GPN"]) == "; did you mean 'GPN'?"
    assert did_you_mean("TRACK_MAX_EPOCHS", ["track_max_epochs"]) == "; did you mean 'track_max_epochs'?"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("suite = \"structural-shifts\"\n[grid\n", "not valid TOML"),
        ("suite = \"nope\"\n", "has no runner"),
        ("[grid]\ndataset=['a']\n", "missing `suite"),
        ("suite = \"edgewise\"\ncolour = 1\n", "unknown top-level keys"),
        ("suite = \"edgewise\"\n[grid]\ndataset = []\n", "non-empty list"),
        ("suite = \"edgewise\"\nseeds = 0\n", "positive integer"),
        ("suite = \"edgewise\"\n[grid]\nmodel=['gcn']\n[profiles.demo.grid]\nsize=[1]\n", "does not have"),
    ],
)
def test_malformed_suite_files_are_rejected_with_what_to_fix(tmp_path, text, message):
    path = tmp_path / "mine.toml"
    path.write_text(text)
    with pytest.raises(SuiteConfigError, match=message):
        load_suite(str(path), "demo")


def test_unknown_suite_and_profile():
    with pytest.raises(SuiteConfigError, match="available suites"):
        load_suite("structural", "demo")
    with pytest.raises(SuiteConfigError, match="unknown profile"):
        load_suite("edgewise", "huge")


def test_a_folder_named_like_a_record_is_skipped_and_left_in_place(tmp_path, caplog):
    """Issue 34 QA (R3): ``results/<key>.json`` that is a folder stopped ``report`` with a raw
    ``[Errno 21] Is a directory``; it is now skipped with a warning naming it, and not moved."""
    store = ResultsStore(tmp_path)
    store.results_dir.mkdir(parents=True)
    (tmp_path / "run-toy.json").write_text("{}")  # a gs run folder: quarantine is allowed here
    folder = store.results_dir / ("b" * 20 + ".json")
    folder.mkdir()
    assert list(store.records()) == []
    assert folder.is_dir()
    assert [p for p, _ in store.skipped] == [folder]
    assert "a folder, not a record file" in caplog.text


def test_a_lock_that_is_a_folder_is_one_clear_error_without_a_false_removal_warning(tmp_path, caplog):
    """Issue 34 QA (K9): ``.lock`` as a folder warned "removing unreadable lock file" (it was
    not removed), then failed on the write; now one error naming it as a folder."""
    from gs_bench.store import LockedError, RunLock

    (tmp_path / ".lock").mkdir()
    with pytest.raises(LockedError, match=r"\.lock is a folder, not a gs-bench lock file"):
        RunLock(tmp_path).acquire()
    assert "removing" not in caplog.text
    assert (tmp_path / ".lock").is_dir()
