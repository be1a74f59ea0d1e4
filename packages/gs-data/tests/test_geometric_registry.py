"""The geometric dataset registry (GeSS's shift cases and their stand-ins, issue 17).

One table (``gs_data.geometric.GEOMETRIC_DATASETS``) states task, metric, info levels and
shift of every case; ``gs_data.load`` / ``gs_data.load_geometric`` load each one. Checked
against GeSS tables 2 and 4 and section 4.1 (ACC for Track, MAE for the fidelity shift,
AUC for DrugOOD-3D), and by loading every family from the fixtures in the real formats.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import gs_data
from gs_data.geometric import (
    GEOMETRIC_DATASETS,
    GeometricSpec,
    available_geometric,
    geometric_spec,
    is_geometric,
    missing_geometric_data,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures"
#: GeSS table 2: the ten shift cases (dataset, shift, target) and the metric of section 4.1.
GESS_CASES = {
    "track-pileup-pu50": ("pileup", "accuracy"),
    "track-pileup-pu90": ("pileup", "accuracy"),
    "track-signal-tau3mu": ("signal", "accuracy"),
    "track-signal-zp20": ("signal", "accuracy"),
    "track-signal-zp10": ("signal", "accuracy"),
    "qmof-hse06": ("fidelity", "mae"),
    "qmof-hse06_10hf": ("fidelity", "mae"),
    "drugood3d-assay": ("assay", "auroc"),
    "drugood3d-scaffold": ("scaffold", "auroc"),
    "drugood3d-size": ("size", "auroc"),
}


def test_the_ten_gess_cases_with_their_task_metric_and_shift():
    gess = [n for n, s in GEOMETRIC_DATASETS.items() if not s.stand_in]
    assert sorted(gess) == sorted(GESS_CASES)
    for name, (shift, metric) in GESS_CASES.items():
        s = geometric_spec(name)
        assert (s.shift, s.metric) == (shift, metric), name
        assert s.task == ("regression" if metric == "mae" else "binary")
        assert s.info_levels == ("no_info", "o_feature", "par_label")
        assert s.point_labels == (s.family == "track")  # node-level tracking labels
    assert {geometric_spec(n).metric_label for n in GESS_CASES} == {"ACC", "MAE", "AUC"}
    assert not geometric_spec("qmof-hse06").higher_is_better
    assert geometric_spec("drugood3d-size").higher_is_better


def test_each_stand_in_names_a_gess_case_and_copies_its_task_metric_and_shift():
    stand_ins = {n: s for n, s in GEOMETRIC_DATASETS.items() if s.stand_in}
    assert sorted(stand_ins) == ["molecular-fidelity", "molecular-fidelity-hse06_10hf",
                                 "moleculeace-assay", "moleculeace-scaffold", "moleculeace-size"]
    for name, s in stand_ins.items():
        real = GEOMETRIC_DATASETS[s.stand_in_for]
        assert not real.stand_in
        assert (s.task, s.metric, s.shift, s.case, s.knn_k, s.gess_config) == (
            real.task, real.metric, real.shift, real.case, real.knn_k, real.gess_config), name


def test_names_are_case_and_separator_insensitive_and_errors_list_the_names():
    assert geometric_spec("QMOF_HSE06-10HF").name == "qmof-hse06_10hf"
    assert is_geometric("Track-Pileup-PU50") and not is_geometric("cora-ml") and not is_geometric(3)
    with pytest.raises(ValueError, match=r"unknown geometric dataset 'track-pileup'.*track-pileup-pu50"):
        geometric_spec("track-pileup")
    with pytest.raises(TypeError, match="name must be a str"):
        geometric_spec(None)
    assert available_geometric() == list(GEOMETRIC_DATASETS)


def test_a_spec_whose_metric_does_not_fit_its_task_is_rejected():
    base = dict(name="x", family="qmof", shift="fidelity", case="hse06", knn_k=10,
                gess_config="QMOF/fidelity/hse06", data="", paper="")
    with pytest.raises(ValueError, match="metric 'accuracy' does not fit task 'regression'"):
        GeometricSpec(task="regression", metric="accuracy", **base)
    with pytest.raises(ValueError, match="shift of a qmof case must be one of"):
        GeometricSpec(**{**base, "shift": "size"}, task="regression", metric="mae")
    with pytest.raises(ValueError, match="metric must be one of"):
        GeometricSpec(task="binary", metric="f1", **base)


def test_importing_the_registry_imports_neither_torch_nor_rdkit():
    code = ("import sys, gs_data, gs_data.geometric as g; g.geometric_spec('qmof-hse06'); "
            "g.missing_geometric_data('drugood3d-size', root='/nonexistent'); "
            "print('torch' in sys.modules, 'rdkit' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


# ------------------------------------------------------------------ loading each family
def test_load_the_shipped_molecular_fidelity_stand_in_through_gs_data_load():
    ds = gs_data.load("molecular-fidelity", info_level="par_label")
    assert ds.split.sizes()["ood_labeled"] > 0
    assert np.issubdtype(np.asarray(ds.y).dtype, np.floating)  # regression labels (eV)
    with pytest.raises(ValueError, match="info_level must be one of"):
        gs_data.load("molecular-fidelity", info_level="full-label")
    with pytest.raises(ValueError, match=r"options \['sizes'\] are not accepted"):
        gs_data.load("molecular-fidelity", sizes="ci")
    with pytest.raises(TypeError, match="only geometric datasets accept"):
        gs_data.load("synthetic-default", info_level="no_info")


def test_load_qmof_from_a_root_and_name_the_missing_file(tmp_path):
    ds = gs_data.load("qmof-hse06_10hf", root=FIXTURES / "qmof", info_level="o_feature", seed=2)
    assert ds.split.sizes()["train_target"] > 0 and len(ds) == 30
    assert missing_geometric_data("qmof-hse06", root=FIXTURES / "qmof") is None
    with pytest.raises(FileNotFoundError, match=r"qmof\.csv is missing.*stand-in: molecular-fidelity"):
        gs_data.load("qmof-hse06", root=tmp_path)


def test_load_drugood3d_and_its_moleculeace_fallback(tmp_path, caplog):
    cache = tmp_path / "conformers"
    ds = gs_data.load_geometric("drugood3d-size", root=FIXTURES / "drugood", cache_dir=cache)
    assert ds.name.startswith("drugood") and ds.split.sizes()["ood_test"] > 0
    assert set(np.unique(ds.y)) <= {0, 1}
    # no DrugOOD file: the MoleculeACE stand-in of the same shift, said in the log and the name
    ace = FIXTURES / "drugood" / "moleculeace"
    with caplog.at_level("WARNING", logger="gs_data.geometric"):
        fb = gs_data.load("drugood3d-scaffold", root=tmp_path, data_dir=ace, cache_dir=cache)
    assert fb.name == "moleculeace-scaffold"
    assert "loading the MoleculeACE stand-in moleculeace-scaffold" in caplog.text
    with pytest.raises(FileNotFoundError, match="lbap_core_ic50_scaffold.json is missing"):
        gs_data.load_geometric("drugood3d-scaffold", root=tmp_path, stand_in=False)
    direct = gs_data.load("moleculeace-scaffold", data_dir=ace, cache_dir=cache)
    np.testing.assert_array_equal(direct.y, fb.y)


def test_load_track_through_the_registry(tmp_path):
    """Real simulation of a tiny Track-Pileup (PU10 source, PU50 target) when PYTHIA 8 +
    ACTS are installed; the dataset carries point-level signal labels."""
    from gs_data.track import TrackPileupSizes
    from gs_data.track.deps import simulation_available

    if not simulation_available():
        pytest.skip("PYTHIA 8 + ACTS not installed (the track extra: pip install './packages/gs-data[track]')")
    ds = gs_data.load("track-pileup-pu50", sizes=TrackPileupSizes(2, 2, 2, 1, 1, 2),
                      cache_dir=tmp_path)
    assert ds.name == "Track-Pileup" and len(ds) == 2 + 2 + 2 * 2
    assert ds.split.sizes()["ood_test"] == 2
    g = ds.to_pyg([0])[0]
    assert g.node_label.shape[0] == g.pos.shape[0]
    with pytest.raises(ValueError, match=r"options \['target'\] are not accepted"):
        gs_data.load("track-signal-zp10", target="zp20", cache_dir=tmp_path)
