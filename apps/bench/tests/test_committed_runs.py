"""The committed runs under ``apps/bench/measured/`` still report, and still key, as before.

Issue 31 moves the runners into packages and makes their settings typed objects; nothing of
that may change what a finished run reports or which job a record answers:

* ``gs-bench report`` on a copy of each committed run writes, byte for byte, the report
  committed beside its records (``report.md``, or ``report/report.md`` for the gess runs): the
  report a reader opens is the one the current code writes. (Until 2026-12-06 the reference was
  a copy in ``tests/golden/``, written by main at 1f50d64 and refreshed on each deliberate
  change, while three run folders kept older reports: "seeds 43–43", no data block.)
* the job keys of the shipped suites, for fixed versions and data fingerprints, are those main
  computed at 1f50d64 (a digest per suite and profile), and each committed run's suite file,
  loaded again, gives exactly the settings dict its records hold (the dict that enters the
  key).

After a deliberate report change: run ``gs-bench report`` on a copy of the run folder
(``results.jsonl`` and ``run-*.json``) and copy its ``report/report.md`` over the committed
one.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from gs_bench.report import build_report
from gs_bench.suites import OPTIONAL_PROFILES, PROFILES, expand_jobs, load_suite, suite_profiles

MEASURED = Path(__file__).resolve().parents[1] / "measured"
#: run folders under measured/ (a "/" for one inside another)
RUNS = ["ci-lebed", "ci-edgewise", "ci-structural-shifts", "ci-structural-shifts-good", "ci-gess",
        "paper-structural-shifts", "ci-lebed-sources",
        "ci-gess/gess-frame-8ep", "ci-gess/pt-norm-20ep", "ci-gess/pt-30ep", "ci-lebed/former-pretrain",
        "gess-medium-protocol/gess", "gess-medium-protocol/ours"]


def _committed_report(name: str) -> Path:
    top = MEASURED / name / "report.md"
    return top if top.is_file() else MEASURED / name / "report" / "report.md"


def _copy_run(name: str, tmp_path: Path) -> Path:
    src, dst = MEASURED / name, tmp_path / name.replace("/", "--")
    dst.mkdir()
    for f in [src / "results.jsonl", *src.glob("run-*.json")]:
        shutil.copy2(f, dst / f.name)
    return dst


@pytest.mark.parametrize("name", RUNS)
def test_committed_run_reports_byte_for_byte_as_before(name, tmp_path):
    run = _copy_run(name, tmp_path)
    path = Path(build_report(run))
    committed = _committed_report(name)
    assert path.read_bytes() == committed.read_bytes(), (
        f"the report of apps/bench/measured/{name} changed: diff {path} {committed}")


@pytest.mark.parametrize("name", RUNS)
def test_every_picture_beside_a_committed_report_is_one_it_shows(name):
    """A figure left beside a report that no longer draws it reads as part of the run."""
    report = _committed_report(name)
    text = report.read_text()
    orphans = [p.name for p in report.parent.glob("*.png") if f"]({p.name})" not in text]
    assert not orphans, f"{report.parent}: pictures the report does not show: {orphans}"


#: sha256 (first 16 hex) of the sorted job keys of every shipped suite and profile, with
#: versions {"gs-bench": "0.1.0"} and no data fingerprints, as main computed them at 1f50d64
#: (gess ci: changed on purpose by issue 29's Track settings, track_max_epochs = 20 and
#: track_edge_features, and Track DIR / LRI left out of it; again by track_pt_norm = "batch";
#: again by track_max_epochs = 30; again by track_pt_delta = "edge_mlp"; lebed, every profile:
#: changed on purpose by issue 30's domain_pretrain = "induced" and its lr / weight decay; gess
#: medium: added by issue 53, only where a suite file defines it; lebed demo: again by issue
#: 58's 2 shards, one per demo worker)
KEY_DIGESTS = {
    ("structural-shifts", "demo"): "cb71fafb52945d41",
    ("structural-shifts", "ci"): "d609bf3e551ab8e9",
    ("structural-shifts", "paper"): "a8b9cf4e2e103ede",
    ("structural-shifts", "full"): "3681c374a82558b6",
    ("edgewise", "demo"): "1fab534a9d2c6eea",
    ("edgewise", "ci"): "6549b0a4034d2d78",
    ("edgewise", "paper"): "089792125975143a",
    ("edgewise", "full"): "089792125975143a",
    ("lebed", "demo"): "0c9c747e4a319c28",
    ("lebed", "ci"): "57d26511a75b182c",
    ("lebed", "paper"): "3013977c188af854",
    ("lebed", "full"): "3013977c188af854",
    ("gess", "demo"): "1219038ddf6e618b",
    ("gess", "ci"): "f27c4664e714141b",
    ("gess", "medium"): "8ac7656aa934c242",  # issue 53: 12 epochs, our protocol, TL-200 on Pileup
    ("gess", "paper"): "07ebfad8ec0a3e97",
    ("gess", "full"): "ca0d91176525a790",
}


@pytest.mark.parametrize("suite", ["structural-shifts", "edgewise", "lebed", "gess"])
def test_job_keys_of_the_shipped_suites_are_those_of_before(suite):
    for profile in PROFILES:
        if profile in OPTIONAL_PROFILES and profile not in suite_profiles(suite):
            assert (suite, profile) not in KEY_DIGESTS
            continue
        config = load_suite(suite, profile)
        keys = sorted(j.key for j in expand_jobs(config, versions={"gs-bench": "0.1.0"}, fingerprints={}))
        digest = hashlib.sha256(",".join(keys).encode()).hexdigest()[:16]
        assert digest == KEY_DIGESTS[(suite, profile)], (suite, profile)


@pytest.mark.parametrize("name", ["ci-lebed", "ci-edgewise"])
def test_a_committed_runs_suite_gives_its_records_settings_dict(name, tmp_path):
    """The grid and settings a committed run stored, written as a suite file and loaded again,
    give the settings dict of its records (which entered their keys); the typed object beside
    it is the runner's ``Settings``."""
    (info_path,) = (MEASURED / name).glob("run-*.json")
    info = json.loads(info_path.read_text())
    lines = [f'suite = "{info["suite"]}"', f"seeds = {info['seeds']}", "[grid]",
             *(f"{k} = {json.dumps(v)}" for k, v in info["grid"].items()), "[settings]",
             *(f"{k} = {json.dumps(v)}" for k, v in info["settings"].items())]
    path = tmp_path / "suite.toml"
    path.write_text("\n".join(lines) + "\n")
    config = load_suite(str(path), "full")
    records = [json.loads(line) for line in (MEASURED / name / "results.jsonl").read_text().splitlines()
               if line.strip()]
    assert all(r["job"]["settings"] == config.settings for r in records)
    assert type(config.typed_settings).__name__ == "Settings"
    for key, value in config.settings.items():
        assert getattr(config.typed_settings, key) == value
