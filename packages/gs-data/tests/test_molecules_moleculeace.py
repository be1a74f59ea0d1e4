"""MoleculeACE default: DrugOOD-style curation, domain-ordered splits, info levels."""

from __future__ import annotations

import csv
import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from gs_data.molecules import (
    MoleculeACEConfig,
    load_moleculeace_ood,
    moleculeace_split,
    murcko_scaffold,
    read_moleculeace,
)

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "drugood" / "moleculeace"
PARTS = ("train", "iid_val", "iid_test", "ood_val", "ood_test")


def _reference_scaffold(smiles: str) -> str:
    """Independent Bemis-Murcko scaffold: GetScaffoldForMol, then canonical SMILES."""
    from rdkit import Chem
    from rdkit.Chem.Scaffolds import MurckoScaffold

    core = MurckoScaffold.GetScaffoldForMol(Chem.MolFromSmiles(smiles))
    return Chem.MolToSmiles(core, isomericSmiles=False) if core.GetNumAtoms() else ""


@pytest.fixture(scope="module")
def records():
    return read_moleculeace(FIXTURE)


@pytest.fixture(scope="module")
def real_records():
    if importlib.util.find_spec("MoleculeACE") is None:
        pytest.skip("MoleculeACE is not installed (optional: `pip install --no-deps MoleculeACE`)")
    # three real target sets keep the test fast; the benchmark script builds all 30
    return read_moleculeace(targets=["CHEMBL2835_Ki", "CHEMBL2047_EC50", "CHEMBL1871_Ki"])


def test_read_counts_and_labels(records):
    rows = []
    for f in sorted(FIXTURE.glob("*.csv")):
        with f.open(newline="") as fh:
            rows += [(f.stem, r) for r in csv.DictReader(fh)]
    assert records.report.n_input == len(rows)
    assert records.report.counts() == {"invalid_smiles": 1, "missing_label": 1}
    assert len(records) == len(rows) - 2
    good = [(t, r) for t, r in rows if r["exp_mean [nM]"] and r["smiles"] != "C1CC(N"]
    # pActivity = -log10(nM * 1e-9); MoleculeACE's own y column is -log10(nM)
    np.testing.assert_allclose(records.p_activity, [9.0 + float(r["y"]) for _, r in good], atol=1e-9)
    assert records.target.tolist() == [t for t, _ in good]
    y = records.labels(7.0)
    np.testing.assert_array_equal(y, [int(9.0 - math.log10(float(r["exp_mean [nM]"])) >= 7.0) for _, r in good])
    assert records.labels(5.0).sum() >= y.sum() >= records.labels(9.0).sum()
    assert [murcko_scaffold(s) for s in records.smiles] == [_reference_scaffold(s) for s in records.smiles]


def test_read_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="CHEMBL"):
        read_moleculeace(tmp_path)
    with pytest.raises(ValueError, match="CHEMBL0_Ki"):
        read_moleculeace(FIXTURE, targets=["CHEMBL0_Ki"])
    with pytest.raises(ValueError, match="shift"):
        moleculeace_split(read_moleculeace(FIXTURE), "protein")


def _check_shifts(rec, config):
    scaffolds = np.array([_reference_scaffold(s) for s in rec.smiles])
    for shift in ("assay", "scaffold", "size"):
        split = moleculeace_split(rec, shift, config=config, seed=1)
        masks = np.stack([split.masks[p] for p in PARTS])
        assert (masks.sum(axis=0) == 1).all(), f"{shift}: parts must be disjoint and cover the data"
        assert all(split.masks[p].any() for p in PARTS), f"{shift}: empty part"
        src = split.masks["train"] | split.masks["iid_val"] | split.masks["iid_test"]
        tgt = split.masks["ood_val"] | split.masks["ood_test"]
        dom = rec.domain(shift)
        assert not set(dom[src].tolist()) & set(dom[tgt].tolist()), f"{shift}: a domain is on both sides"
        if shift == "scaffold":
            assert not set(scaffolds[src].tolist()) & set(scaffolds[tgt].tolist())
        if shift == "size":
            # size domains are ordered: every source molecule is larger than every target one
            assert rec.num_heavy_atoms[src].min() > rec.num_heavy_atoms[tgt].max()
        if shift in ("assay", "scaffold"):
            # domain-ordered by number of samples: the smallest source domain is at least
            # as large as the largest target domain
            _, cs = np.unique(dom[src], return_counts=True)
            _, ct = np.unique(dom[tgt], return_counts=True)
            assert cs.min() >= ct.max()
        # the source is made of whole domains: the shortest prefix of the domain order that
        # holds source_fraction of the samples, but never every domain (then all but the last)
        order = [str(v) for v in split.metadata["domain_order"]]
        labels = np.array([str(v) for v in dom.tolist()])
        share = np.cumsum([(labels == v).mean() for v in order])
        k = min(int(np.searchsorted(share, config.source_fraction - 1e-9)) + 1, len(order) - 1)
        assert set(labels[src].tolist()) == set(order[:k]), f"{shift}: source is not the prefix"
        assert src.mean() == pytest.approx(share[k - 1])
        assert src.mean() >= config.source_fraction - 1e-9 or k == len(order) - 1


def test_three_shifts_on_fixture(records):
    _check_shifts(records, MoleculeACEConfig(par_label_pool=4))


def test_three_shifts_on_real_moleculeace(real_records):
    assert len(real_records) > 1800
    _check_shifts(real_records, MoleculeACEConfig())
    # size shift: smallest molecules go to the target when size_descending=False
    split = moleculeace_split(real_records, "size", config=MoleculeACEConfig(size_descending=False))
    src = split.masks["train"] | split.masks["iid_val"] | split.masks["iid_test"]
    assert real_records.num_heavy_atoms[src].max() < real_records.num_heavy_atoms[~src].min()


def _check_info_levels(rec, pool_size):
    cfg = MoleculeACEConfig(par_label_pool=pool_size)
    base = moleculeace_split(rec, "scaffold", config=cfg, seed=0)
    par = moleculeace_split(rec, "scaffold", info_level="par_label", config=cfg, seed=0)
    pool = par.masks["ood_labeled"]
    assert pool.sum() == pool_size
    assert not (pool & (par.masks["ood_val"] | par.masks["ood_test"])).any()
    ood = base.masks["ood_val"] | base.masks["ood_test"]
    np.testing.assert_array_equal(pool | par.masks["ood_val"] | par.masks["ood_test"], ood)
    for part in ("train", "iid_val", "iid_test"):
        np.testing.assert_array_equal(base.masks[part], par.masks[part])
    feat = moleculeace_split(rec, "scaffold", info_level="o_feature", config=cfg, seed=0)
    np.testing.assert_array_equal(feat.masks["train_target"], feat.masks["ood_val"] | feat.masks["ood_test"])
    assert "train_target" not in base.masks and "ood_labeled" not in base.masks


def test_info_levels_on_fixture(records):
    _check_info_levels(records, 4)


def test_info_levels_on_real_moleculeace(real_records):
    _check_info_levels(real_records, 200)


def test_load_with_conformers_on_fixture(tmp_path):
    calls = []
    ds = load_moleculeace_ood(
        "scaffold", info_level="par_label", config=MoleculeACEConfig(par_label_pool=4),
        data_dir=FIXTURE, cache_dir=tmp_path, callback=lambda d, t: calls.append(d),
    )
    assert ds.report.counts() == {"invalid_smiles": 1, "missing_label": 1}
    assert ds.report.n_kept == len(ds) == ds.report.n_input - 2
    assert calls[-1] == len(set(ds.extra["smiles"].tolist()))
    assert ds.split.masks["ood_labeled"].sum() == 4
    assert set(np.unique(ds.y).tolist()) <= {0, 1}
    np.testing.assert_array_equal(ds.y, (ds.extra["p_activity"] >= 7.0).astype(int))
    for pos, smi in zip(ds.pos, ds.extra["smiles"], strict=True):
        from rdkit import Chem

        assert pos.shape == (Chem.MolFromSmiles(smi).GetNumAtoms(), 3)


def test_installed_package_layout_is_found_without_importing_it(tmp_path, monkeypatch):
    """``read_moleculeace()`` with no folder reads ``<MoleculeACE>/Data/benchmark_data`` of
    the installed package (the PyPI wheel ships its 30 CSVs there): a fake installed package
    with the fixture CSVs, first on ``sys.path``, is found; its ``__init__`` (which would
    import MoleculeACE's own dependencies) is never executed."""
    import shutil
    import sys

    from gs_data.molecules.moleculeace import moleculeace_data_dir

    pkg = tmp_path / "site" / "MoleculeACE"
    data = pkg / "Data" / "benchmark_data"
    data.mkdir(parents=True)
    (pkg / "__init__.py").write_text("raise RuntimeError('MoleculeACE must not be imported')\n")
    for f in FIXTURE.glob("*.csv"):
        shutil.copy(f, data / f.name)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.delitem(sys.modules, "MoleculeACE", raising=False)
    importlib.invalidate_caches()
    assert moleculeace_data_dir() == data
    rec = read_moleculeace(targets=["CHEMBL2835_Ki"])
    assert len(rec) > 0 and set(rec.target.tolist()) == {"CHEMBL2835_Ki"}
    assert "MoleculeACE" not in sys.modules
    shutil.rmtree(data)
    with pytest.raises(FileNotFoundError, match="no data folder"):
        moleculeace_data_dir()
