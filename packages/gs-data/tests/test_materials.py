"""QMOF loader, the GeSS fidelity shift, and the shipped molecular four-fidelity default."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest

from gs_data.materials import (
    DEFAULT_MOLECULAR_SUBSET,
    FIDELITIES,
    GESS_QMOF_TOTAL,
    MOLECULAR_FIDELITY_FILE,
    MOLECULAR_SUBSETS,
    FidelityShiftConfig,
    assign_fidelities,
    fidelity_sizes,
    fidelity_split,
    load_molecular_fidelity,
    load_qmof,
    molecular_fidelity_means,
    molecular_fidelity_metadata,
    read_molecular_fidelity,
    read_qmof,
)

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "qmof"
ID_PARTS = ("train", "iid_val", "iid_test")


def _parse_p1_cif(path: Path) -> tuple[list[str], np.ndarray]:
    """Independent reader for the fixture's P1 CIFs: symbols and Cartesian positions."""
    text = path.read_text()
    cell = {k: float(re.search(rf"_cell_{k}\s+([-\d.]+)", text).group(1)) for k in
            ("length_a", "length_b", "length_c", "angle_alpha", "angle_beta", "angle_gamma")}
    a, b, c = cell["length_a"], cell["length_b"], cell["length_c"]
    al, be, ga = (np.radians(cell[f"angle_{x}"]) for x in ("alpha", "beta", "gamma"))
    # standard orientation (a along x, b in the xy plane), as ase uses
    va = np.array([a, 0, 0])
    vb = np.array([b * np.cos(ga), b * np.sin(ga), 0])
    cx = c * np.cos(be)
    cy = c * (np.cos(al) - np.cos(be) * np.cos(ga)) / np.sin(ga)
    vc = np.array([cx, cy, np.sqrt(c * c - cx * cx - cy * cy)])
    lines = [ln.strip() for ln in text.splitlines()]
    header: list[str] = []
    rows: list[list[str]] = []
    for k, ln in enumerate(lines):
        if ln == "loop_" and lines[k + 1].startswith("_atom_site_"):
            j = k + 1
            while lines[j].startswith("_"):
                header.append(lines[j])
                j += 1
            while j < len(lines) and lines[j] and not lines[j].startswith(("loop_", "_", "#")):
                rows.append(lines[j].split())
                j += 1
            break
    col = {h: i for i, h in enumerate(header)}
    symbols = [r[col["_atom_site_type_symbol"]] for r in rows]
    frac = [[float(r[col[f"_atom_site_fract_{x}"]]) for x in "xyz"] for r in rows]
    return symbols, np.asarray(frac) @ np.stack([va, vb, vc])


def test_read_qmof_fixture_counts_and_structures():
    rec = read_qmof(FIXTURE)
    with (FIXTURE / "qmof.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rec.report.n_input == len(rows)
    assert rec.report.counts() == {"missing_label": 1, "unreadable_structure": 2}
    assert {s["id"] for s in rec.report.skipped} == {"qmof-fx90001", "qmof-fx90002", "qmof-fx90003"}
    assert len(rec) == len(rows) - 3
    by_id = {r["qmof_id"]: r for r in rows}
    for i, qid in enumerate(rec.ids):
        expected = [float(by_id[qid][f"outputs.{f}.bandgap"] or "nan") for f in FIDELITIES]
        np.testing.assert_array_equal(rec.gaps[i], expected)
    from ase.data import atomic_numbers

    for i in (0, 5, 17):
        symbols, pos = _parse_p1_cif(FIXTURE / "relaxed_structures" / f"{rec.ids[i]}.cif")
        assert rec.numbers[i].tolist() == [atomic_numbers[s] for s in symbols]
        np.testing.assert_allclose(rec.pos[i], pos, atol=1e-6)


def test_read_qmof_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="qmof.csv"):
        read_qmof(tmp_path)
    (tmp_path / "qmof.csv").write_text("qmof_id,outputs.pbe.bandgap\nx,1.0\n")
    with pytest.raises(ValueError, match="hle17"):
        read_qmof(tmp_path)


def test_fidelity_sizes_are_gess_table_4_and_scale_down():
    cfg = FidelityShiftConfig()
    assert fidelity_sizes(GESS_QMOF_TOTAL, cfg) == (6000, 2000)
    assert fidelity_sizes(30, cfg) == (9, 3)
    assert fidelity_sizes(30, FidelityShiftConfig(scale_to_data=False)) == (6000, 2000)
    with pytest.raises(ValueError, match="target"):
        FidelityShiftConfig(target="pbe")


@pytest.mark.parametrize("target", ["hse06", "hse06_10hf"])
def test_fidelity_split_reproduces_gess_table_4(target):
    # synthetic labels (every material has all four values): only the counts matter here
    gaps = np.ones((GESS_QMOF_TOTAL, 4))
    cfg = FidelityShiftConfig(target=target)
    fid, rep = assign_fidelities(gaps, cfg, seed=0)
    assert rep.n_skipped == 0
    others = [f for f in ("hle17", "hse06_10hf", "hse06") if f != target]
    assert (fid == target).sum() == 6000 and all((fid == f).sum() == 2000 for f in others)
    assert (fid == "pbe").sum() == GESS_QMOF_TOTAL - 10000
    sizes = {}
    for level in ("no_info", "o_feature", "par_label"):
        split = fidelity_split(fid, cfg, info_level=level, seed=0)
        sizes[level] = split.sizes()
        # GeSS table 4: 10781 / 1796 / 1798 source, 2000 / 2000 OOD (+2000 Par-Label pool)
        assert [sizes[level][p] for p in (*ID_PARTS, "ood_val", "ood_test")] == [10781, 1796, 1798, 2000, 2000]
        src = np.logical_or.reduce([split.masks[p] for p in ID_PARTS])
        assert set(fid[src].tolist()) == {"pbe", *others}
        assert set(fid[split.masks["ood_val"] | split.masks["ood_test"]].tolist()) == {target}
        if level == "par_label":
            pool = split.masks["ood_labeled"]
            assert pool.sum() == 2000 and not (pool & (split.masks["ood_val"] | split.masks["ood_test"])).any()
        if level == "o_feature":
            np.testing.assert_array_equal(split.masks["train_target"], fid == target)
    no, par = (fidelity_split(fid, cfg, info_level=lv, seed=0) for lv in ("no_info", "par_label"))
    # evaluation parts are identical across information levels (GeSS appendix E)
    np.testing.assert_array_equal(no.masks["ood_val"], par.masks["ood_val"])
    np.testing.assert_array_equal(no.masks["ood_test"], par.masks["ood_test"])


def test_assignment_respects_missing_labels():
    rng = np.random.default_rng(0)
    gaps = rng.uniform(0, 5, size=(200, 4))  # synthetic
    gaps[:120, 3] = np.nan  # HSE06 missing for 120 materials
    gaps[150:160, 0] = np.nan  # PBE missing for 10
    fid, rep = assign_fidelities(gaps, FidelityShiftConfig(n_target=60, n_other_high=20, scale_to_data=False), seed=1)
    assert not np.isnan(gaps[fid == "hse06", 3]).any() and (fid == "hse06").sum() == 60
    cols = {f: i for i, f in enumerate(FIDELITIES)}
    assert all(np.isfinite(gaps[i, cols[f]]) for i, f in enumerate(fid) if f)
    assert rep.n_kept + rep.n_skipped == 200 and set(rep.counts()) <= {"missing_label"}
    with pytest.raises(ValueError, match="hse06"):
        assign_fidelities(gaps, FidelityShiftConfig(n_target=90, scale_to_data=False))


def test_load_qmof_fixture_all_levels():
    ds = load_qmof(FIXTURE, target="hse06_10hf", info_level="par_label", seed=2)
    assert ds.report.counts() == {"missing_label": 1, "unreadable_structure": 2}
    assert len(ds) == 30 and ds.metadata["fidelity_counts"]["hse06_10hf"] == 9
    cols = [FIDELITIES.index(f) for f in ds.domain]
    np.testing.assert_array_equal(ds.y, ds.extra["gaps_all"][np.arange(len(ds)), cols])
    assert ds.split.sizes()["ood_labeled"] == 3
    data = ds.to_pyg([0])[0]
    assert data.pos.shape[1] == 3 and data.x.shape == (ds.num_atoms()[0], 1)
    assert data.x.max() < ds.num_atom_types


# ------------------------------------------------------------------ molecular default


def _shipped_doc() -> dict:
    from gs_data.materials import read_molecular_fidelity_document

    return read_molecular_fidelity_document()


def _rdkit_conjugated(smiles: str) -> bool:
    """Independent class tag: any aromatic atom or conjugated bond (RDKit perception)."""
    from rdkit import Chem

    mol = Chem.MolFromSmiles(smiles)
    return any(a.GetIsAromatic() for a in mol.GetAtoms()) or any(b.GetIsConjugated() for b in mol.GetBonds())


def test_shipped_molecular_file_is_complete_and_documented():
    from rdkit import Chem

    meta = molecular_fidelity_metadata()
    assert meta["method"]["basis"] == "6-31g" and meta["method"]["grid_level"] == 0
    assert meta["method"]["density_fitting"] is True and meta["versions"]["pyscf"]
    assert meta["cost"]["total_cpu_s"] > 0 and meta["cost"]["total_wall_s"] >= meta["cost"]["wall_s_this_run"]
    assert meta["method"]["checks"]["check_water_energy_difference_hartree"] < 1e-8
    assert meta["method"]["checks"]["hse06_10hf_rsh_coeff(omega,alpha,beta)"] == [0.11, 0.0, 0.1]
    mols = _shipped_doc()["molecules"]
    assert len({m["name"] for m in mols}) == len(mols)
    assert len({Chem.CanonSmiles(m["smiles"]) for m in mols}) == len(mols)
    for m in mols:
        mol = Chem.AddHs(Chem.MolFromSmiles(m["smiles"]))
        assert [a.GetSymbol() for a in mol.GetAtoms()] == m["symbols"], m["name"]
        assert np.asarray(m["pos_angstrom"]).shape == (mol.GetNumAtoms(), 3)
        assert m["num_heavy_atoms"] == mol.GetNumHeavyAtoms()
        assert m["conjugated"] is _rdkit_conjugated(m["smiles"]), m["name"]
        assert set(m["fidelities"]) == set(FIDELITIES) and all(f["converged"] for f in m["fidelities"].values())
    rec = read_molecular_fidelity()
    assert len(rec) == len(mols) >= 170  # the generation runs so far (see the file's "cost")
    assert np.isfinite(rec.gaps).all()
    # both classes are represented
    assert min(len(read_molecular_fidelity(subset=s)) for s in ("conjugated", "rest")) >= 50


def test_file_summary_and_readme_report_the_means_of_the_file():
    doc = _shipped_doc()
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    rows = {
        m.group(1): m.groups()[1:]
        for m in re.finditer(
            r"^\| gs: (all|conjugated|rest)\b[^|]*\| (\d+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) "
            r"\| (yes|no) \| ([\d.]+)% \|$",
            readme, flags=re.M,
        )
    }
    assert set(rows) == set(MOLECULAR_SUBSETS)
    for subset in MOLECULAR_SUBSETS:
        means = molecular_fidelity_means(subset=subset)
        # the generator's summary block
        block = doc["summary"][subset]
        assert block["num_molecules"] == means["num_molecules"]
        assert block["increasing_in_fidelity_order"] is means["increasing"]
        np.testing.assert_allclose([block["mean_gap_ev"][f] for f in FIDELITIES],
                                   [means["mean_gap_ev"][f] for f in FIDELITIES], atol=1e-4)
        assert block["fraction_of_molecules_in_fidelity_order"] == pytest.approx(means["fraction_in_order"], abs=1e-4)
        # the README table (two decimals)
        n, *vals, holds, pct = rows[subset]
        assert int(n) == means["num_molecules"], subset
        assert [float(v) for v in vals] == [round(means["mean_gap_ev"][f], 2) for f in FIDELITIES], subset
        assert (holds == "yes") is means["increasing"], subset
        assert float(pct) == round(100 * means["fraction_in_order"], 1), subset
    total = read_molecular_fidelity(subset="all")
    parts = [read_molecular_fidelity(subset=s) for s in ("conjugated", "rest")]
    assert sum(len(p) for p in parts) == len(total)
    assert set(parts[0].ids).isdisjoint(parts[1].ids)
    # the generation cost stated in the README is the file's
    cpu = re.search(r"Generation cost: ([\d,]+) CPU-seconds", readme)
    assert cpu and int(cpu.group(1).replace(",", "")) == round(doc["cost"]["total_cpu_s"])


def test_molecular_gaps_open_with_short_range_exact_exchange():
    rec = read_molecular_fidelity()
    mean = dict(zip(FIDELITIES, np.nanmean(rec.gaps, axis=0), strict=True))
    # PBE (no exact exchange) lowest, HSE06 (25% SR exact exchange) highest, HSE06* between
    assert mean["pbe"] < mean["hse06_10hf"] < mean["hse06"]
    assert mean["pbe"] < mean["hle17"] < mean["hse06"]
    # per molecule: more short-range exact exchange opens the gap
    assert (rec.gaps[:, 2] > rec.gaps[:, 0]).mean() > 0.95 and (rec.gaps[:, 3] > rec.gaps[:, 2]).all()


def test_molecular_subsets_and_bad_input(tmp_path):
    with pytest.raises(ValueError, match="subset"):
        read_molecular_fidelity(subset="aromatic")
    with pytest.raises(ValueError, match="subset"):
        load_molecular_fidelity(subset="")
    doc = _shipped_doc()
    untagged = {**doc, "molecules": [{k: v for k, v in m.items() if k != "conjugated"} for m in doc["molecules"][:3]]}
    (tmp_path / "old.json").write_text(json.dumps(untagged))
    assert len(read_molecular_fidelity(tmp_path / "old.json")) == 3  # "all" needs no tag
    with pytest.raises(ValueError, match="conjugated"):
        read_molecular_fidelity(tmp_path / "old.json", subset="conjugated")
    conj = read_molecular_fidelity(subset="conjugated")
    by_name = {m["name"]: m for m in doc["molecules"]}
    assert all(by_name[i]["conjugated"] for i in conj.ids)
    ds = load_molecular_fidelity()
    assert ds.metadata["subset"] == DEFAULT_MOLECULAR_SUBSET
    assert len(ds) == len(read_molecular_fidelity(subset=DEFAULT_MOLECULAR_SUBSET))


def test_molecular_default_builds_the_fidelity_shift(tmp_path):
    ds = load_molecular_fidelity(target="hse06", info_level="par_label")
    n = len(ds)
    n_t, n_o = fidelity_sizes(n, FidelityShiftConfig())
    assert ds.metadata["fidelity_counts"]["hse06"] == n_t
    assert ds.metadata["fidelity_counts"]["hle17"] == ds.metadata["fidelity_counts"]["hse06_10hf"] == n_o
    pool = ds.split.masks["ood_labeled"]
    assert pool.sum() == n_t // 3 and not (pool & ds.split.out_of_distribution).any()
    assert all(len(p) == len(a) for p, a in zip(ds.pos, ds.atom_type, strict=True))
    # a copy of the file in the same format loads too
    doc = json.loads(json.dumps({**molecular_fidelity_metadata(), "molecules": []}))
    (tmp_path / "empty.json").write_text(json.dumps(doc))
    assert len(read_molecular_fidelity(tmp_path / "empty.json")) == 0


# ------------------------------------------------------------------ the shipped file's layout
#: SHA-256 of the molecules as canonical JSON (sorted keys, compact). The 471 molecules of
#: issue 29 (the generator resumed to the end of its list, ``--max-heavy-atoms 13``); the 255
#: of before (the indented 370 KB file of issue 20, then this compact gzipped one) are the
#: first 255 of them, value for value (:data:`_FIRST_255_SHA256`).
_MOLECULES_SHA256 = "c937b3f7efa85e76c62f6c6b7dea63f5fdd677cd6777804fe94176cd4a98ad7b"
_FIRST_255_SHA256 = "638bc49a8b542b7a0eb401eb1ae03807a8d8bea063d6943a317fb6f2178152cb"


def test_shipped_molecules_are_compact_gzipped_and_unchanged():
    import gzip
    import hashlib
    from importlib import resources

    folder = resources.files("gs_data.materials").joinpath("data")
    raw = folder.joinpath(MOLECULAR_FIDELITY_FILE).read_bytes()
    assert MOLECULAR_FIDELITY_FILE.endswith(".json.gz") and raw[:2] == b"\x1f\x8b"
    assert len(raw) < 150_000  # 115 KB for 471 molecules; the indented JSON of 255 was 370 KB
    text = gzip.decompress(raw)
    assert b"\n" not in text and b": " not in text  # compact separators, no indentation
    doc = json.loads(text)
    assert list(doc) == ["molecules"]  # the data only: the provenance is kept apart
    canonical = json.dumps(doc["molecules"], sort_keys=True, separators=(",", ":")).encode()
    assert hashlib.sha256(canonical).hexdigest() == _MOLECULES_SHA256
    first = json.dumps(doc["molecules"][:255], sort_keys=True, separators=(",", ":")).encode()
    assert hashlib.sha256(first).hexdigest() == _FIRST_255_SHA256  # resumed: the old file kept
    assert len(doc["molecules"]) == 471
    assert sum(len(m["symbols"]) for m in doc["molecules"]) == 5471
    assert sum(m["conjugated"] for m in doc["molecules"]) == 283


def test_shipped_provenance_is_readable_apart_and_matches_the_data():
    import gzip
    import hashlib
    from importlib import resources

    from gs_data.materials import MOLECULAR_FIDELITY_PROVENANCE

    folder = resources.files("gs_data.materials").joinpath("data")
    prov = json.loads(folder.joinpath(MOLECULAR_FIDELITY_PROVENANCE).read_text(encoding="utf-8"))
    assert "molecules" not in prov and prov["generator"].endswith("make_fidelity_gaps.py")
    assert prov["data_file"] == MOLECULAR_FIDELITY_FILE and prov["data_num_molecules"] == 471
    data = gzip.decompress(folder.joinpath(MOLECULAR_FIDELITY_FILE).read_bytes())
    assert prov["data_sha256"] == hashlib.sha256(data).hexdigest()
    assert [s["name"] for s in prov["skipped"]] == ["hydrogen chloride", "hydrogen fluoride", "carbon monoxide"]
    meta = molecular_fidelity_metadata()
    assert {k: meta[k] for k in prov} == prov and "molecules" not in meta


def test_a_data_file_and_a_foreign_provenance_are_refused(tmp_path):
    import gzip
    import shutil
    from importlib import resources

    from gs_data.materials import MOLECULAR_FIDELITY_PROVENANCE, read_molecular_fidelity_document

    folder = resources.files("gs_data.materials").joinpath("data")
    data = tmp_path / "mine.json.gz"
    data.write_bytes(gzip.compress(b'{"molecules":[]}'))
    with resources.as_file(folder.joinpath(MOLECULAR_FIDELITY_PROVENANCE)) as prov:
        shutil.copy(prov, tmp_path / "mine.provenance.json")
    with pytest.raises(ValueError, match="do not belong together"):
        read_molecular_fidelity_document(data)
    (tmp_path / "mine.provenance.json").unlink()
    assert read_molecular_fidelity_document(data) == {"molecules": []}
    # the single-file layout of earlier releases is still read
    single = tmp_path / "single.json"
    single.write_text(json.dumps({"description": "x", "molecules": []}, indent=1))
    assert read_molecular_fidelity_document(single)["description"] == "x"
