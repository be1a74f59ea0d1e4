"""Which code computed each record: source fingerprints in the records, a warning when a run
folder is resumed by other code, and a report line when its records mix code versions.

Job keys hold settings, data and package versions, not the source (a key per commit would make
every code change re-run everything), so these are how a changed model or loop shows up in a
resumed folder instead of mixing in unseen. The runs use the toy runner of
``test_robustness.py`` (no data, no training)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gs_bench import runners
from gs_bench.cli import main
from gs_bench.executors import SOURCE_PACKAGES, source_fingerprints, tree_hash

TESTS = Path(__file__).resolve().parent


@pytest.fixture
def toy(monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(TESTS))
    monkeypatch.setitem(runners.RUNNERS, "toy", "_toy_runner")
    path = tmp_path / "toy.toml"
    path.write_text('suite = "toy"\nseeds = 1\n[grid]\nn = [1, 2, 3]\n[settings]\n')
    return path


def _records(out: Path) -> list[Path]:
    return sorted((out / "results").glob("*.json"))


def test_tree_hash_follows_the_code_files_and_nothing_else(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for root in (a, b):
        (root / "sub").mkdir(parents=True)
        (root / "mod.py").write_text("x = 1\n")
        (root / "sub" / "suite.toml").write_text("[grid]\n")
    assert tree_hash(a) == tree_hash(b)  # same files elsewhere: same hash
    first = tree_hash(a)
    (a / "__pycache__").mkdir()
    (a / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\x00\x01")
    (a / "__pycache__" / "stale.py").write_text("y = 2\n")
    (a / "NOTES.md").write_text("docs do not change behaviour\n")
    assert tree_hash(a) == first
    (a / "mod.py").write_text("x = 2\n")
    assert tree_hash(a) != first  # one byte of code
    (a / "mod.py").write_text("x = 1\n")
    assert tree_hash(a) == first
    (a / "sub" / "suite.toml").rename(a / "sub" / "other.toml")
    assert tree_hash(a) != first  # a renamed file
    assert re.fullmatch(r"[0-9a-f]{12}", first)


def test_source_fingerprints_cover_our_six_packages():
    fps = source_fingerprints()
    assert set(fps) == set(SOURCE_PACKAGES)
    assert all(re.fullmatch(r"[0-9a-f]{12}", v) for v in fps.values()), fps


def test_records_carry_the_fingerprints_and_a_resume_by_other_code_warns(toy, tmp_path, capsys):
    out = tmp_path / "out"
    cmd = ["run", str(toy), "--out", str(out), "--no-progress"]
    assert main(cmd) == 0
    recs = _records(out)
    assert len(recs) == 3
    for f in recs:
        assert json.loads(f.read_text())["worker"]["sources"] == source_fingerprints()
    run_file = json.loads((out / "run-toy.json").read_text())
    assert run_file["environment"]["sources"] == source_fingerprints()

    capsys.readouterr()
    assert main(cmd) == 0  # same code: nothing to say
    assert "other source code" not in capsys.readouterr().err

    # a record as a former version of gs-algos and gs-models would have written it, one of the
    # running code and one from before fingerprints were stored
    for f, change in zip(recs, ({"gs-algos": "0" * 12, "gs-models": "1" * 12}, {}, None),
                         strict=True):
        rec = json.loads(f.read_text())
        if change is None:
            del rec["worker"]["sources"]
        else:
            rec["worker"]["sources"].update(change)
        f.write_text(json.dumps(rec))
    capsys.readouterr()
    assert main(cmd + ["--report", "md"]) == 0
    err = capsys.readouterr().err
    assert "warning: 1 of the 3 toy record(s)" in err
    assert "gs-algos (1), gs-models (1)" in err
    assert "3 already done, 0 to run" in err  # kept, not re-run
    report = (out / "report" / "report.md").read_text()
    line = next(x for x in report.splitlines() if x.startswith("Source:"))
    assert "2 versions of the source of gs-algos, gs-models" in line
    assert f"gs-algos {source_fingerprints()['gs-algos']}" in line and "gs-algos 000000000000" in line
    assert "1 record(s) without a fingerprint" in line


def test_one_code_version_adds_no_source_line(toy, tmp_path):
    out = tmp_path / "out"
    assert main(["run", str(toy), "--out", str(out), "--no-progress", "--report", "md"]) == 0
    assert "Source:" not in (out / "report" / "report.md").read_text()
    # beside records written before fingerprints were stored, one version is not the whole story
    from gs_bench.report import sources_summary

    recs = [json.loads(f.read_text()) for f in sorted((out / "results").glob("*.json"))]
    assert len(recs) >= 2
    del recs[0]["worker"]["sources"]
    line = sources_summary(recs)
    assert line.startswith(f"Source: {len(recs) - 1} record(s) carry a fingerprint")
    assert "1 record(s) were written before records stored one" in line
    for r in recs:
        r["worker"].pop("sources", None)
    assert sources_summary(recs) == ""  # none has one (the committed ci runs): nothing to say


def test_a_worker_that_lives_through_an_edit_says_so(toy, tmp_path, capsys, monkeypatch):
    """The fingerprint is taken once per process; when our files change on disk while it lives,
    its records name the packages (``worker.sources_edited``), and the report and the resume
    warning count them."""
    from gs_bench import executors
    from gs_bench.report import sources_summary

    start = source_fingerprints()
    assert executors.sources_edited() == []  # nothing edited since this process took it
    assert "sources_edited" not in executors.worker_info()
    edited = {**start, "gs-algos": "f" * 12}
    on_disk = executors._source_fingerprints_on_disk
    monkeypatch.setattr(executors, "_source_fingerprints_on_disk", lambda: edited)
    assert executors.sources_edited() == ["gs-algos"]
    assert source_fingerprints() == start  # the cached one stays the process start's
    assert executors.worker_info()["sources_edited"] == ["gs-algos"]

    out = tmp_path / "out"
    cmd = ["run", str(toy), "--out", str(out), "--no-progress"]
    assert main(cmd) == 0  # the toy runs in this process: its records carry the mark
    recs = [json.loads(f.read_text()) for f in _records(out)]
    assert recs and all(r["worker"]["sources_edited"] == ["gs-algos"] for r in recs)
    line = sources_summary(recs)
    assert line.startswith("Source: ") and f"{len(recs)} record(s) were computed by a worker" in line
    assert f"gs-algos ({len(recs)})" in line
    monkeypatch.setattr(executors, "_source_fingerprints_on_disk", on_disk)
    capsys.readouterr()
    assert main(cmd) == 0
    assert f"warning: {len(recs)} of the {len(recs)} toy record(s)" in capsys.readouterr().err
    recs[0]["worker"].pop("sources_edited")
    assert f"{len(recs) - 1} record(s) were computed by a worker" in sources_summary(recs)
