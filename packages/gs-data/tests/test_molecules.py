"""DrugOOD-3D: GeSS conformers, cache, parallel generation, DrugOOD JSON loader, reports."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gs_data.molecules import (
    ATOM_TYPES,
    NUM_ATOM_TYPES,
    OTHER_ATOM_TYPE,
    ConformerConfig,
    ConformerError,
    ProcessingReport,
    atom_type_index,
    conformer_cache_key,
    embed_conformer,
    generate_conformers,
    load_drugood3d,
    read_drugood_json,
    split_from_parts,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "drugood"
SMALL = ["CCO", "c1ccncc1", "CC(=O)Nc1ccc(O)cc1", "OC(=O)c1ccccc1O", "CCN(CC)CC", "C1CCNCC1"]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("conformers")


def _reference_conformer(smiles: str, seed: int):
    """Independent reference: the GeSS recipe written out with plain RDKit calls."""
    from rdkit import Chem
    from rdkit.Chem import AllChem

    m = Chem.AddHs(Chem.MolFromSmiles(smiles))
    assert AllChem.EmbedMolecule(m, randomSeed=seed) == 0
    # 0: MMFF converged within the 1000 iterations (1 would be "not converged", -1 "no
    # parameters"): the reference is a finished optimisation, not a cut-off one
    assert AllChem.MMFFOptimizeMolecule(m, maxIters=1000) == 0
    m = Chem.RemoveHs(m)
    return [a.GetSymbol() for a in m.GetAtoms()], m.GetConformer().GetPositions()


def test_atom_types_are_gess_13_elements_plus_other():
    assert len(ATOM_TYPES) == 13 and NUM_ATOM_TYPES == 14 and OTHER_ATOM_TYPE == 13
    assert [atom_type_index(s) for s in ("C", "N", "O", "Cl", "Si")] == [0, 1, 2, 6, 12]
    assert atom_type_index("Se") == OTHER_ATOM_TYPE
    conf = embed_conformer("OC(=O)c1ccc(Br)cc1.[K+]")  # K is not one of the 13 types
    assert conf.atom_type.tolist() == [atom_type_index(s) for s in conf.symbols]
    assert conf.symbols[-1] == "K" and conf.atom_type[-1] == OTHER_ATOM_TYPE
    assert conf.atom_type[conf.symbols.index("Br")] == 7
    with pytest.raises(TypeError, match="symbol"):
        atom_type_index(6)


def test_conformer_matches_plain_rdkit_recipe_and_is_reproducible():
    smi = "CC(=O)Nc1ccc(O)cc1"  # paracetamol
    a = embed_conformer(smi, ConformerConfig(seed=0))
    b = embed_conformer(smi, ConformerConfig(seed=0))
    symbols, ref = _reference_conformer(smi, 0)
    assert list(a.symbols) == symbols  # hydrogens removed: 11 heavy atoms
    assert a.num_atoms == 11 and a.pos.shape == (11, 3)
    np.testing.assert_array_equal(a.pos, ref)
    np.testing.assert_array_equal(a.pos, b.pos)
    c = embed_conformer(smi, ConformerConfig(seed=7))
    assert not np.allclose(a.pos, c.pos)  # another seed gives another embedding


def test_conformer_failures_have_reasons():
    with pytest.raises(ConformerError) as err:
        embed_conformer("C1CC(N")
    assert err.value.reason == "invalid_smiles"
    with pytest.raises(ConformerError) as err:
        embed_conformer("Cl")  # HCl: MMFF94 has no parameters
    assert err.value.reason == "mmff_setup_failed"
    with pytest.raises(TypeError, match="smiles"):
        embed_conformer(None)
    with pytest.raises(ValueError, match="mmff_variant"):
        ConformerConfig(mmff_variant="UFF")


def test_generate_conformers_reports_cache_and_callback(cache_dir):
    smiles = [*SMALL, "not a smiles", "Cl"]
    calls = []
    confs, report = generate_conformers(
        smiles, cache_dir=cache_dir, callback=lambda d, t: calls.append((d, t)), ids=list("abcdefgh")
    )
    assert [c is None for c in confs] == [False] * 6 + [True, True]
    assert report.n_input == 8 and report.n_kept == 6
    assert report.counts() == {"invalid_smiles": 1, "mmff_setup_failed": 1}
    assert [s["id"] for s in report.skipped] == ["g", "h"]
    assert calls == [(i, 8) for i in range(1, 9)]
    # one content-addressed file per molecule (failures too), no temporary files left
    key = conformer_cache_key("CCO", ConformerConfig())
    assert (cache_dir / key[:2] / f"{key}.npz").is_file()
    assert len(list(cache_dir.rglob("*.npz"))) == 8
    assert not list(cache_dir.rglob(".tmp-*"))
    assert conformer_cache_key("CCO", ConformerConfig(seed=1)) != key
    # second pass reads the cache and gives identical coordinates
    again, report2 = generate_conformers(smiles, cache_dir=cache_dir)
    for x, y in zip(confs, again, strict=True):
        assert (x is None and y is None) or np.array_equal(x.pos, y.pos)
    assert report2.counts() == report.counts()


def test_corrupt_cache_file_is_recomputed(cache_dir):
    key = conformer_cache_key("CCCO", ConformerConfig())
    path = cache_dir / key[:2] / f"{key}.npz"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not an npz file")
    (conf,), report = generate_conformers(["CCCO"], cache_dir=cache_dir)
    assert conf is not None and report.n_kept == 1
    np.testing.assert_array_equal(conf.pos, embed_conformer("CCCO").pos)


def test_two_workers_give_the_same_conformers():
    one, _ = generate_conformers(SMALL, n_workers=1)
    two, rep = generate_conformers(SMALL, n_workers=2, chunk_size=2)
    assert rep.n_kept == len(SMALL)
    for a, b in zip(one, two, strict=True):
        np.testing.assert_array_equal(a.pos, b.pos)
    with pytest.raises(ValueError, match="n_workers"):
        generate_conformers(SMALL, n_workers=0)
    with pytest.raises(ValueError, match="n_workers"):
        generate_conformers(SMALL, n_workers=True)


def _real_moleculeace_smiles(n: int) -> list[str]:
    """The first ``n`` SMILES of a real MoleculeACE target (CHEMBL264_Ki, the benchmark's)."""
    import csv
    import importlib.util

    if importlib.util.find_spec("MoleculeACE") is None:
        pytest.skip("MoleculeACE is not installed (optional: `pip install --no-deps MoleculeACE`)")
    from gs_data.molecules import moleculeace_data_dir

    with (moleculeace_data_dir() / "CHEMBL264_Ki.csv").open(newline="") as fh:
        return [row["smiles"] for _, row in zip(range(n), csv.DictReader(fh), strict=False)]


def _same(a, b) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert (x is None) == (y is None)
        if x is not None:
            assert x.symbols == y.symbols and x.mmff_converged == y.mmff_converged
            np.testing.assert_array_equal(x.atom_type, y.atom_type)
            np.testing.assert_array_equal(x.pos, y.pos)  # bit for bit, not approximately


def test_real_molecules_serial_parallel_and_cache_give_identical_coordinates(tmp_path):
    smiles = _real_moleculeace_smiles(10)
    serial, rep1 = generate_conformers(smiles, n_workers=1)
    parallel, rep2 = generate_conformers(smiles, n_workers=2, chunk_size=3, cache_dir=tmp_path)
    cached, rep3 = generate_conformers(smiles, n_workers=2, cache_dir=tmp_path)
    assert rep1.n_kept >= 8 and rep1.counts() == rep2.counts() == rep3.counts()
    _same(serial, parallel)
    _same(serial, cached)
    for smi, conf in zip(smiles, serial, strict=True):  # and the plain RDKit recipe
        if conf is not None:
            np.testing.assert_array_equal(conf.pos, _reference_conformer(smi, 0)[1])


class _NoPool:
    def __init__(self, *args, **kwargs):
        raise AssertionError("no worker process should be started")


def test_warm_cache_and_small_auto_jobs_start_no_worker(tmp_path, monkeypatch):
    import gs_data.molecules.conformers as conformers

    first, _ = generate_conformers(SMALL, n_workers=2, chunk_size=1, cache_dir=tmp_path)
    monkeypatch.setattr(conformers, "ProcessPoolExecutor", _NoPool)
    again, _ = generate_conformers(SMALL, n_workers=2, chunk_size=1, cache_dir=tmp_path)  # all cached
    _same(first, again)
    auto, _ = generate_conformers(SMALL[:3])  # n_workers=None, 3 molecules: in this process
    _same(first[:3], auto)
    assert conformers.default_n_workers() >= 1


class _BrokenFuture:
    def result(self):
        from concurrent.futures.process import BrokenProcessPool

        raise BrokenProcessPool("a child process terminated abruptly")


class _BrokenPool:
    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def submit(self, *args, **kwargs):
        return _BrokenFuture()


def test_dead_workers_fall_back_to_this_process(monkeypatch, caplog):
    import gs_data.molecules.conformers as conformers

    monkeypatch.setattr(conformers, "ProcessPoolExecutor", _BrokenPool)
    monkeypatch.setattr(conformers, "as_completed", iter)
    with caplog.at_level("WARNING", logger="gs_data.molecules.conformers"):
        confs, report = generate_conformers(SMALL, n_workers=2, chunk_size=2)
    assert report.n_kept == len(SMALL)
    _same(confs, generate_conformers(SMALL, n_workers=1)[0])
    assert "__main__" in caplog.text


def test_cache_key_covers_every_setting_and_the_rdkit_version(monkeypatch):
    import gs_data.molecules.conformers as conformers

    base = conformer_cache_key("CCO", ConformerConfig())
    variants = [
        ConformerConfig(seed=1),
        ConformerConfig(max_iters=999),
        ConformerConfig(mmff_variant="MMFF94s"),
        ConformerConfig(remove_hs=False),
    ]
    keys = {conformer_cache_key("CCO", c) for c in variants} | {conformer_cache_key("OCC", ConformerConfig())}
    assert base not in keys and len(keys) == 5
    monkeypatch.setattr(conformers, "_rdkit_version", lambda: "1999.09.1")
    assert conformer_cache_key("CCO", ConformerConfig()) != base


def test_progress_bar_on_request(capsys):
    calls = []
    generate_conformers(SMALL, n_workers=1, progress=True, callback=lambda d, t: calls.append(d))
    err = capsys.readouterr().err
    assert f"{len(SMALL)}/{len(SMALL)}" in err and "/s" in err
    assert calls == list(range(1, len(SMALL) + 1))
    generate_conformers(SMALL, n_workers=1)  # default: no bar off a terminal
    assert capsys.readouterr().err == ""


def test_read_drugood_json_counts_skips():
    rec = read_drugood_json(FIXTURES / "lbap_core_ic50_assay.json")
    raw = json.loads((FIXTURES / "lbap_core_ic50_assay.json").read_text())["split"]
    n_raw = sum(len(v) for v in raw.values())
    assert rec.report.n_input == n_raw and len(rec) == n_raw - 2
    assert rec.report.counts() == {"invalid_smiles": 1, "missing_label": 1}
    # kept items are exactly the file's items, in order
    kept = [it for part in ("train", "iid_val", "iid_test", "ood_val", "ood_test") for it in raw[part]
            if it["cls_label"] is not None and it["smiles"] != "C1CC(N"]
    assert rec.smiles.tolist() == [it["smiles"] for it in kept]
    assert rec.cls_label.tolist() == [it["cls_label"] for it in kept]
    assert rec.domain_id.tolist() == [it["domain_id"] for it in kept]


def test_read_drugood_json_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="lbap_core_ic50"):
        read_drugood_json(tmp_path / "lbap_core_ic50_size.json")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"split": {"train": []}}))
    with pytest.raises(ValueError, match="iid_val"):
        read_drugood_json(bad)


@pytest.mark.parametrize("shift", ["assay", "scaffold", "size"])
def test_load_drugood3d_all_levels(shift, cache_dir):
    raw = json.loads((FIXTURES / f"lbap_core_ic50_{shift}.json").read_text())["split"]
    ds = load_drugood3d(FIXTURES, shift, cache_dir=cache_dir)
    assert ds.report.counts() == {"invalid_smiles": 1, "missing_label": 1}
    assert ds.report.n_input == sum(len(v) for v in raw.values())
    sizes = ds.split.sizes()
    assert sizes["train"] == len(raw["train"]) - 1 and sizes["ood_test"] == len(raw["ood_test"]) - 1
    assert sizes["ood_val"] == len(raw["ood_val"])
    assert all(p.shape[1] == 3 for p in ds.pos)
    assert ds.num_atoms().tolist() == [
        __import__("rdkit.Chem", fromlist=["Chem"]).MolFromSmiles(s).GetNumAtoms() for s in ds.extra["smiles"]
    ]
    data = ds.to_pyg([0])[0]
    assert data.x.shape == (ds.num_atoms()[0], 1) and int(data.x.max()) < NUM_ATOM_TYPES

    feat = load_drugood3d(FIXTURES, shift, info_level="o_feature", cache_dir=cache_dir)
    np.testing.assert_array_equal(feat.split.train_target, feat.split.ood_val | feat.split.ood_test)

    par = load_drugood3d(FIXTURES, shift, info_level="par_label", par_label_per_part=2, cache_dir=cache_dir, seed=3)
    pool = par.split.ood_labeled
    assert pool.sum() == 4
    assert not (pool & (par.split.ood_val | par.split.ood_test)).any()
    np.testing.assert_array_equal(pool | par.split.ood_val | par.split.ood_test, ds.split.ood_val | ds.split.ood_test)
    assert (pool & ds.split.ood_val).sum() == 2  # the same number from each OOD part


def test_split_from_parts_rejects_bad_input():
    with pytest.raises(ValueError, match="unknown part"):
        split_from_parts(["train", "test"], [0, 1])
    with pytest.raises(ValueError, match="par_label_per_part"):
        split_from_parts(["train", "ood_val", "ood_test"], [0, 1, 1], info_level="par_label", par_label_per_part=1)
    with pytest.raises(ValueError, match="info_level"):
        split_from_parts(["train"], [0], info_level="some")


def test_processing_report_bookkeeping():
    r = ProcessingReport("x", n_input=3, n_kept=1)
    r.skip(1, "invalid_smiles", "bad")
    with pytest.raises(ValueError, match="nothing|kept"):
        r.check()
    r.skip(2, "missing_label")
    r.check()
    assert r.summary() == "x: kept 1 of 3; skipped 2 (invalid_smiles: 1, missing_label: 1)"
    assert json.loads(r.to_json())["counts"] == {"invalid_smiles": 1, "missing_label": 1}
    with pytest.raises(ValueError, match="reason"):
        r.skip(3, "too_big")


def test_par_label_pool_origin_follows_the_given_parts_and_subsets():
    """DrugOOD-3D's pool is removed from ood_val and ood_test in equal numbers (GeSS
    appendix C.1); the split records the part of each pool sample, in index order, and
    ``subset_split`` (conformer failures dropped) keeps the record aligned."""
    from gs_data.molecules.moleculeace import subset_split

    parts = ["train"] * 6 + ["ood_val"] * 8 + ["ood_test"] * 10
    s = split_from_parts(parts, list(range(24)), info_level="par_label", par_label_per_part=3, seed=1)
    pool = np.flatnonzero(s.ood_labeled)
    origin = s.metadata["ood_labeled_origin"]
    assert origin == [parts[i] for i in pool] and origin.count("ood_val") == 3
    keep = np.ones(24, dtype=bool)
    keep[pool[0]] = False
    sub = subset_split(s, keep)
    assert sub.metadata["ood_labeled_origin"] == origin[1:]
    assert len(sub.metadata["ood_labeled_origin"]) == int(sub.ood_labeled.sum())
    assert "ood_labeled_origin" not in split_from_parts(parts, list(range(24))).metadata
