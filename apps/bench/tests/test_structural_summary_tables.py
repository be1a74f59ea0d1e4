"""Tables 2 / 5 / 7 (average ranks) and Table 3 (win / tie / loss of +mod) of the
structural-shifts report, on SYNTHETIC records with known orderings."""

from __future__ import annotations

import pytest

from gs_bench.runners import structural as S


def _rec(ds, method, shift, seed, id_acc, ood_acc, auroc, ratio="50:50"):
    return {"status": "ok", "key": f"{ds}{method}{shift}{seed}{ratio}",
            "job": {"suite": "structural-shifts", "seed": seed, "settings": {},
                    "params": {"dataset": ds, "method": method, "strategy": shift, "ratio": ratio}},
            "metrics": {"id_acc": id_acc, "ood_acc": ood_acc, "ood_auroc": auroc}}


def _mod_records(delta, noise=0.001):
    """ERM and ERM + mod on two datasets x 3 shifts x 3 runs; +mod is ``delta`` better."""
    out = []
    for ds in ("cora-ml", "citeseer"):
        for sh in ("popularity", "locality", "density"):
            for s in range(3):
                e = noise * (s - 1)
                out.append(_rec(ds, "erm", sh, s, 0.80 + e, 0.70 + e, 0.75 + e))
                out.append(_rec(ds, "erm+mod", sh, s, 0.80 + delta + e, 0.70 + delta + e, 0.75 - delta + e))
    return out


def test_mod_counts_win_loss_and_tie():
    counts, used = S.mod_counts(_mod_records(0.05))
    assert used == ["citeseer", "cora-ml"]
    assert counts["erm+mod"] == [(2, 0, 0)] * 6      # clearly better accuracy: wins
    assert counts["se+mod"] == [(0, 0, 2)] * 3       # clearly lower AUROC: losses
    counts, _ = S.mod_counts(_mod_records(0.0005))   # within the run-to-run noise: ties
    assert counts["erm+mod"] == [(0, 2, 0)] * 6 and counts["se+mod"] == [(0, 2, 0)] * 3
    table = [t for t in S.summary_tables(_mod_records(0.05)) if "win/tie/loss" in t.title][0]
    assert table.rows[0][1] == "2/0/0 (4/2/1)"  # ours, then the paper's Table 3


def test_average_ranks_follow_the_means():
    recs = []
    order = ["de", "mixup", "erm", "eerm", "dann", "coral"]  # best first
    for ds in ("cora-ml", "citeseer"):
        for sh in ("popularity", "locality", "density"):
            for i, m in enumerate(order):
                recs.append(_rec(ds, m, sh, 0, 0.9 - 0.01 * i, 0.8 - 0.01 * i, 0.5, ratio="70:30"))
            for i, m in enumerate(["gpn", "natpn", "gpe", "natpe"]):
                recs.append(_rec(ds, m, sh, 0, 0.5, 0.5, 0.9 - 0.01 * i, ratio="70:30"))
    acc, det, used = S.average_ranks(recs, "70:30")
    assert used == ["citeseer", "cora-ml"]
    for rank, m in enumerate(order, 1):
        assert acc[m] == [float(rank)] * 6
    # SE is ERM's entropy AUROC (0.5), DE's too: they tie for the last two places
    assert det["gpn"] == [1.0] * 3 and det["natpe"] == [4.0] * 3
    assert det["se"] == [5.5] * 3 and det["de"] == [5.5] * 3
    title = [t.title for t in S.summary_tables(recs)]
    assert any("2 of the paper's 7 datasets" in t and "Table 5" in t for t in title)


def test_incomplete_columns_do_not_rank():
    recs = [_rec("cora-ml", "erm", "popularity", 0, 0.8, 0.7, 0.7)]
    acc, det, used = S.average_ranks(recs, "50:50")
    assert used == [] and all(v != v for v in acc["erm"])  # NaN: no complete column
    with pytest.raises(IndexError):
        [t for t in S.summary_tables(recs) if "Average ranks" in t.title][0]


def test_auroc_ranks_and_counts_sit_under_shift_columns_not_id_ood_ones():
    """The AUROC rows (one value per shift) stood in the accuracy tables' first three columns,
    headed "pop ID | pop OOD | loc ID": the locality rank read as popularity OOD. Each table now
    holds one kind of row, and every row fills its header."""
    recs = []
    for ds in ("cora-ml", "citeseer"):
        for sh in ("popularity", "locality", "density"):
            for i, m in enumerate(["de", "mixup", "erm", "eerm", "dann", "coral", "gpn", "natpn", "gpe", "natpe"]):
                recs.append(_rec(ds, m, sh, 0, 0.9 - 0.01 * i, 0.8 - 0.01 * i, 0.5 + 0.01 * i, ratio="70:30"))
    tables = S.summary_tables(recs) + S.summary_tables(_mod_records(0.05))
    assert tables
    for t in tables:
        assert all(len(row) == len(t.columns) for row in t.rows), t.title
        if "AUROC" in t.title:
            assert t.columns[1:] == ["popularity", "locality", "density"], t.title
        else:
            assert t.columns[1:] == ["pop ID", "pop OOD", "loc ID", "loc OOD", "den ID", "den OOD"], t.title
    assert {t.title.split(" over ")[0] for t in tables if "Average ranks" in t.title} == {
        "Average ranks of OOD robustness (accuracy)", "Average ranks of OOD detection (AUROC)"}
