"""The papers' values are data (``gs_bench/published/*.csv``): every row is read back from the
papers' own text at the line and cell it names, and the lookups return what the files hold."""

from __future__ import annotations

import csv
import re
from collections import defaultdict
from pathlib import Path

import pytest

from gs_bench import published as P

PAPERS_DIR = Path(__file__).resolve().parents[4] / "shared" / "papers"
TABLES = Path(P.__file__).resolve().parent

# "85.80 ± 1.10", "$12.47 \pm 4.37$", "$4.07{\pm}1.86$", "95.75(0.08)†", "-10.01 %", "+3.24 %",
# "4.0" and the win/tie/loss counts "4/2/1" (written here, not imported from the generator).
_VALUE = re.compile(r"(\d+/\d+/\d+)|([-+]?\d+\.\d+)\s*%?\s*(?:(?:\\pm|\{\\pm\}|±)\s*(\d+\.\d+)|\((\d+\.\d+)\))?")
_NUMBER = re.compile(r"^-?\d+\.\d+$")


def _paper_lines(name: str) -> list[str]:
    return [line.replace("\xa0", " ") for line in (PAPERS_DIR / name).read_text(encoding="utf-8").splitlines()]


def _values_after_label(lines: list[str], index: int, label: str, stream: bool) -> list[tuple[str, str | None]]:
    """The printed values that follow the row label on line ``index``: the (mean, spread) pairs
    of a one-line row, or for LeBed's text (one number per line) the numbers that follow."""
    line = lines[index]
    if stream:
        assert line.startswith(label), (index + 1, label, line[:60])
        text = " ".join([line[len(label):], *lines[index + 1:index + 40]])
        return [(tok, None) for tok in text.split() if _NUMBER.match(tok)]
    # the label as a whole word: "ERM" is not the end of "EERM" nor the start of "ERM + mod"
    m = re.search(r"(?<![\w+])" + re.escape(label) + r"(?!\w)(?!\s*\+\s*mod)", line)
    assert m is not None, (index + 1, label, line[:80])
    return [(g1, None) if g1 else (g2, g3 or g4 or None) for g1, g2, g3, g4 in _VALUE.findall(line[m.end():])]


def _captions(lines: list[str]) -> dict[str, int]:
    out = {}
    for i, line in enumerate(lines):
        m = re.match(r"(Table \d+):", line)
        if m and m.group(1) not in out:
            out[m.group(1)] = i
    return out


@pytest.mark.skipif(not (PAPERS_DIR / "structural-shifts.md").is_file(),
                    reason="../shared/papers (the papers' text) is not beside this checkout")
@pytest.mark.parametrize("paper", sorted(P.PAPER_FILES))
def test_every_value_is_the_papers_text_at_its_line_and_cell(paper):
    """Each row's mean and spread are the paper's printed numbers at the row's line and cell,
    under the row's label, inside the table it names (where the text carries the caption)."""
    _, name = P.PAPER_FILES[paper]
    lines = _paper_lines(name)
    captions = _captions(lines)
    starts = sorted(captions.values())
    stream = name.endswith(".txt")
    rows = P.paper_values(paper)
    assert rows
    for v in rows:
        found = _values_after_label(lines, v.line - 1, v.row, stream)
        assert v.cell < len(found), (v.key, v.line, found)
        assert found[v.cell] == (v.mean, v.spread), (v.key, v.table, v.line, v.cell, found[v.cell])
        if v.table in captions:  # the row lies between its table's caption and the next one
            start = captions[v.table]
            end = next((s for s in starts if s > start), len(lines))
            assert start < v.line - 1 < end, (v.key, v.table, v.line)


@pytest.mark.skipif(not (PAPERS_DIR / "structural-shifts.md").is_file(),
                    reason="../shared/papers (the papers' text) is not beside this checkout")
def test_the_per_dataset_tables_are_complete():
    """Tables 9, 10, 16 and 17 (structural shifts) and 1 and 3 (edgewise): every value of every
    row of the table in the text is in the file, so no row or column was left out."""
    for paper, tables in (("structural-shifts", ("Table 9", "Table 10", "Table 16", "Table 17")),
                          ("edgewise-calibration", ("Table 1", "Table 3"))):
        lines = _paper_lines(P.PAPER_FILES[paper][1])
        held = defaultdict(set)
        labels = {}
        for v in P.paper_values(paper):
            if v.table in tables:
                held[v.line].add(v.cell)
                labels[v.line] = v.row
        per_table = defaultdict(int)
        for v in P.paper_values(paper):
            if v.table in tables:
                per_table[v.table] += 1
        assert per_table == {t: (42 if t in ("Table 9", "Table 10") else 21 if paper == "structural-shifts" else 48)
                             for t in tables}
        for line, cells in held.items():
            n = len(_values_after_label(lines, line - 1, labels[line], False))
            assert cells == set(range(n)), (paper, line, sorted(cells), n)


def test_table_files_are_well_formed():
    """One header, unique keys, numbers that parse, a spread only with a run count where the
    paper's ± s is over several runs, and line / cell positions that can be looked up."""
    for paper in P.PAPER_FILES:
        with (TABLES / f"{paper}.csv").open(encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f)
            assert reader.fieldnames == ["key", "table", "row", "column", "mean", "spread", "runs", "line", "cell"]
            rows = list(reader)
        keys = [r["key"] for r in rows]
        assert len(keys) == len(set(keys)), paper
        for r in rows:
            assert re.fullmatch(r"Table \d+", r["table"]), r
            assert r["row"] and r["column"], r
            if "/" not in r["mean"]:
                float(r["mean"])
            if r["spread"]:
                assert float(r["spread"]) >= 0, r
            assert int(r["line"]) >= 1 and int(r["cell"]) >= 0, r
            assert r["runs"] == "" or int(r["runs"]) >= 1, r


def test_lookups_return_the_files_values():
    """published / published_spread / published_runs, the GeSS and LeBed lookups, the ranks and
    the "+mod" counts all answer from the table files (each checked against the raw rows)."""
    ss = {v.key: v for v in P.paper_values("structural-shifts")}
    v = ss[("cora-ml", "locality", "eerm", "ood_acc")]
    assert P.published("structural-shifts", *v.key) == (float(v.mean), "SS " + v.table)
    assert P.published_spread("structural-shifts", *v.key) == float(v.spread)
    assert P.published_runs("structural-shifts", *v.key) == v.runs
    de = ss[("cora-ml", "locality", "de", "ood_acc")]
    assert float(de.spread) == 0 and P.published_runs("structural-shifts", *de.key) is None
    assert P.published("structural-shifts", "cora-ml", "locality", "nope", "ood_acc") is None
    n_cells = sum(1 for k in ss if k[0] not in ("rank", "mod"))
    ew = P.paper_values("edgewise-calibration")
    assert len(P.PUBLISHED) == n_cells + len(ew)
    for v in ew:
        assert P.published("edgewise", *v.key) == (float(v.mean), "EW " + v.table)
        assert P.published_runs("edgewise", *v.key) == 75

    g = {v.key: v for v in P.paper_values("gess")}
    tid, tood = g[("dgcnn", "track-signal-tau3mu", "lri", "Test-ID")], g[("dgcnn", "track-signal-tau3mu", "lri", "Test-OOD")]
    assert P.gess_track_published("dgcnn", "track-signal-tau3mu", "lri") == (
        float(tid.mean), float(tid.spread), float(tood.mean), float(tood.spread))
    assert P.gess_track_published("dgcnn", "track-signal-tau3mu", "nope") is None

    lb = {v.key: v for v in P.paper_values("lebed")}
    rho, r2 = lb[("dblp", "conf", "sage", "rho")], lb[("dblp", "conf", "sage", "r2")]
    assert P.lebed_published("dblp", "sage", "conf") == (-float(rho.mean), float(r2.mean), "LeBed " + rho.table)
    assert P.lebed_published("dblp", "nope", "conf") is None
    assert P.lebed_rho_table()[("dblp", "conf")][2] == float(rho.mean)

    table, acc, det = P.structural_ranks("90:10")
    assert table == "Table 7" and set(acc) == {"erm", "mixup", "eerm", "dann", "coral", "de"}
    assert all(len(r) == 6 for r in acc.values()) and all(len(r) == 3 for r in det.values())
    assert acc["mixup"][0] == float(ss[("rank", "90:10", "accuracy", "mixup", "popularity", "id")].mean)
    assert P.structural_ranks("60:40") is None
    counts = P.structural_mod_counts()
    assert [len(counts["erm+mod"]), len(counts["se+mod"])] == [6, 3]
    assert all(sum(c) == P.SS_PAPER_DATASETS for cs in counts.values() for c in cs)
    with pytest.raises(ValueError, match="paper: 'nope' is not one of"):
        P.paper_values("nope")
