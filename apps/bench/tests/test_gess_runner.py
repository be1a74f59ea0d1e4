"""The gess runner end to end on tiny inputs in the real stored formats (issue 17).

One job per (dataset kind x GeSS algorithm), 2 epochs each: the 4 kinds are Track (events in
gs-data's on-disk cache layout, SYNTHETIC hits, no simulator needed), QMOF (the QMOF-release
fixture of gs-data: real CoRE MOF structures, made-up band gaps), DrugOOD-3D (DrugOOD-format
JSON fixture, RDKit conformers) and the shipped molecular-fidelity stand-in; the 11
algorithms are GeSS's (ERM, VREx, GroupDRO, DIR, LRI, Mixup, DANN, DeepCoral, TL x 3 sizes,
scaled to each tiny pool). Plus: validation before running (every shipped suite x profile,
the construction / data distinction, --methods / --backbones for gess).
"""

from __future__ import annotations

import csv
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from gs_bench.runners import gess

FIXTURES = Path(__file__).resolve().parents[3] / "packages" / "gs-data" / "tests" / "fixtures"
NO_INFO = ["erm", "vrex", "groupdro", "dir", "lri", "mixup"]
O_FEATURE = ["dann", "coral"]
QUICK = {"max_epochs": 2, "batch_size": 16, "iterations_per_epoch": 2}


# ------------------------------------------------------------------------- tiny datasets
def _synthetic_event(rng: np.random.Generator, n_particles: int, n_signal: int) -> dict:
    """A SYNTHETIC event (random hits, not physics) in the simulator's column layout."""
    from gs_data.track import encode_barcode
    from gs_data.track.store import FLOAT_COLUMNS

    hits_per = rng.integers(3, 7, size=n_particles)
    pids = np.asarray([encode_barcode(1, 0, 1 + k, 0, 0) for k in range(n_particles)], np.uint64)
    pid = np.repeat(pids, hits_per)
    n = pid.size
    ev = {c: rng.normal(size=n).astype(np.float32) * 100 for c in FLOAT_COLUMNS}
    ev["tt"] = np.abs(ev["tt"])
    ev["particle_id"] = pid
    ev["geometry_id"] = rng.integers(0, 2**40, size=n).astype(np.uint64)
    sig = set(pids[:n_signal].tolist())
    ev["node_label"] = np.asarray([p in sig for p in pid.tolist()], dtype=np.int8)
    _, first, inv = np.unique(pid, return_index=True, return_inverse=True)
    ev["track_id"] = np.argsort(np.argsort(first))[inv.reshape(-1)].astype(np.int32)
    ev["p_particle_id"] = pids
    ev["p_pdg"] = np.full(n_particles, 13, np.int32)
    for c in ("p_px", "p_py", "p_pz", "p_vx", "p_vy", "p_vz"):
        ev[c] = rng.normal(size=n_particles).astype(np.float32)
    ev["p_signal"] = np.asarray([k < n_signal for k in range(n_particles)], np.int8)
    ev["n_interactions"] = np.asarray(1, np.int32)
    ev["signal_mass"] = np.asarray(91.0 if n_signal else 0.0)
    return ev


@pytest.fixture(scope="module")
def track_cache(tmp_path_factory):
    """gs-data's Track event cache holding tiny SYNTHETIC samples for the 'tiny' sizes."""
    from gs_data.track import (
        TrackEvents,
        TrackPileupSizes,
        TrackSignalSizes,
        TrackSimConfig,
        pileup_requests,
        signal_requests,
    )
    from gs_data.track.generate import sample_dir

    root = tmp_path_factory.mktemp("track-cache")
    sizes = {"pileup": TrackPileupSizes(20, 20, 14, 3, 3, 14),
             "signal": TrackSignalSizes(n_bkg=20, n_bkg_pool=6, n_source_per_signal=8, n_target=16)}
    reqs = pileup_requests(50, sizes["pileup"]) + signal_requests("zp10", sizes["signal"])
    rng = np.random.default_rng(0)
    for process, pu, n in dict.fromkeys(reqs):
        n_sig = 0 if process == "bkg" else 2
        events = [_synthetic_event(rng, int(rng.integers(4, 9)) + pu // 10, n_sig) for _ in range(n)]
        ev = TrackEvents.from_event_dicts(events, meta={"synthetic": True})
        ev.save(sample_dir(process, pu, 0, root, TrackSimConfig()) / f"pack-{n}.npz")
    return root, sizes


@pytest.fixture(scope="module")
def qmof_root(tmp_path_factory):
    """The gs-data QMOF fixture (real CoRE MOF CIFs, made-up gaps) with every readable
    material listed 4 times under new ids, so the fidelity split has a Par-Label pool of 6."""
    src = FIXTURES / "qmof"
    root = tmp_path_factory.mktemp("qmof")
    (root / "relaxed_structures").mkdir()
    with open(src / "qmof.csv") as fh:
        rows = list(csv.DictReader(fh))
    good = [r for r in rows if (src / "relaxed_structures" / f"{r['qmof_id']}.cif").is_file()
            and r["qmof_id"] != "qmof-fx90002"]
    out = []
    for copy in range(4):
        for r in good:
            new = dict(r, qmof_id=f"{r['qmof_id']}-c{copy}")
            shutil.copy(src / "relaxed_structures" / f"{r['qmof_id']}.cif",
                        root / "relaxed_structures" / f"{new['qmof_id']}.cif")
            out.append(new)
    with open(root / "qmof.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(out)
    return root


@pytest.fixture(scope="module")
def kinds(track_cache, qmof_root, tmp_path_factory):
    """Per dataset kind: (dataset name, settings, the three TL sizes within its pool)."""
    track_root, _ = track_cache
    conformers = tmp_path_factory.mktemp("conformers")
    return {
        "track": ("track-pileup-pu50", {**QUICK, "track_sizes": "tiny",
                                        "track_cache_dir": str(track_root)}, (2, 4, 8)),
        "qmof": ("qmof-hse06", {**QUICK, "qmof_root": str(qmof_root)}, (2, 4, 6)),
        "drugood3d": ("drugood3d-scaffold", {**QUICK, "drugood_root": str(FIXTURES / "drugood"),
                                             "par_label_pool": 4, "cache_dir": str(conformers)},
                      (1, 2, 4)),
        "molecular-fidelity": ("molecular-fidelity", dict(QUICK), (5, 10, 20)),
    }


@pytest.fixture(autouse=True)
def _tiny_track_sizes(monkeypatch, track_cache):
    monkeypatch.setitem(gess.TRACK_SIZES, "tiny", track_cache[1])


def _job(dataset, algorithm, settings, backbone="egnn", seed=0):
    return {"suite": "gess", "params": {"dataset": dataset, "backbone": backbone, "algorithm": algorithm},
            "settings": settings, "seed": seed, "key": "test"}


# ------------------------------------------------------------- 4 kinds x 11 algorithms
ELEVEN = [*NO_INFO, *O_FEATURE, "tl-a", "tl-b", "tl-c"]


@pytest.mark.parametrize("kind", ["track", "qmof", "drugood3d", "molecular-fidelity"])
@pytest.mark.parametrize("algorithm", ELEVEN)
def test_one_tiny_job_per_dataset_kind_and_algorithm(kinds, kind, algorithm):
    name, settings, tl = kinds[kind]
    algo = f"tl-{tl['abc'.index(algorithm[-1])]}" if algorithm.startswith("tl-") else algorithm
    case = gess.DATASETS[name]
    if (algo, case.task) in gess.INAPPLICABLE:  # DIR on the regression (fidelity) kinds
        with pytest.raises(ValueError, match="DIR applies to classification only"):
            gess.run_job(_job(name, algo, settings))
        return
    m = gess.run_job(_job(name, algo, settings))
    assert m["epochs_run"] == 2
    assert m["level"] == gess.level_of(algo)
    assert m["metric"] == case.metric
    for sel in ("id", "ood"):
        for test in ("id", "ood"):
            v = m[f"{sel}_sel_test_{test}"]
            assert math.isfinite(v), (sel, test, v)
            assert v >= 0 and (case.metric == "mae" or v <= 1)
    sizes = m["sizes"]
    assert sizes["train"] > 0 and sizes["ood_test"] > 0
    if algo in O_FEATURE:
        assert sizes["train_target"] > 0  # the unlabeled target pool reached the method
    if algo.startswith("tl-"):
        assert m["tl_n"] == int(algo[3:]) <= sizes["ood_labeled"]
    if algo in ("dann", "coral", "vrex", "groupdro", "lri", "mixup", "dir") and not case.stand_in:
        assert m["hparams_source"] in ("gess", "ours")


def test_track_signal_runs_with_its_subgroups(kinds, track_cache, monkeypatch):
    root, _ = track_cache
    settings = {**QUICK, "track_sizes": "tiny", "track_cache_dir": str(root)}
    m = gess.run_job(_job("track-signal-zp10", "groupdro", settings))
    assert m["epochs_run"] == 2 and m["metric"] == "accuracy"
    assert m["hparams"] == {"variant": "gess", "step_size": 0.01}  # GeSS's zp_10 value


def test_tl_larger_than_the_pool_is_an_error_not_a_clamp(kinds):
    name, settings, _ = kinds["molecular-fidelity"]
    with pytest.raises(ValueError, match=r"tl-26: Par-Label needs 26 labelled OOD samples but the pool holds 25"):
        gess.run_job(_job(name, "tl-26", settings))


def test_method_params_are_gess_tuned_then_suite_overrides():
    p, src = gess.method_params("drugood3d-scaffold", "dann", {})
    assert p == {"variant": "gess", "source_domains": False, "domain_weight": 0.001} and src == "gess"
    p, _ = gess.method_params("moleculeace-scaffold", "dann", {"domain_head": "subgroups"})
    assert p["source_domains"] is True  # the subgroup head stays an option
    p, src = gess.method_params("track-pileup-pu90", "lri", {"hparams": {"lri": {"info_loss_coef": 3.0}}})
    assert p == {"info_loss_coef": 3.0} and src == "suite"
    p, src = gess.method_params("molecular-fidelity", "lri", {})
    assert p == {} and src == "ours"  # GeSS does not run LRI on the fidelity shift
    assert gess.method_params("track-signal-tau3mu", "dir", {})[0] == {"causal_ratio": 0.5, "alpha": 1e-4}


# ------------------------------------------------------------ validation before running
def _preflight(suite, profile, **overrides):
    from gs_bench.preflight import check_suite
    from gs_bench.suites import load_suite

    return check_suite(load_suite(suite, profile).with_overrides(**overrides))


@pytest.mark.parametrize("suite", ["structural-shifts", "edgewise", "lebed", "gess"])
@pytest.mark.parametrize("profile", ["demo", "ci", "full"])
def test_shipped_suites_have_no_job_that_fails_by_construction(suite, profile, tmp_path, monkeypatch):
    """Every shipped suite x profile plans without a construction problem. Data problems
    (files this machine lacks) are allowed and reported separately; here the data root is
    an empty folder, so every profile that needs downloaded data shows them."""
    monkeypatch.setenv("GS_DATA_ROOT", str(tmp_path / "empty"))
    monkeypatch.setenv("GS_CACHE_DIR", str(tmp_path / "empty-cache"))
    pre = _preflight(suite, profile)
    assert pre.construction == [], "\n".join(p.line() for p in pre.construction)
    assert len(pre.jobs) > 0
    assert all(p.kind == "data" for p in pre.problems)
    if profile == "demo":  # the demo profiles run on embedded / shipped data
        assert pre.problems == []


def test_gess_full_profile_is_the_paper_grid_and_only_lacks_data(tmp_path, monkeypatch):
    monkeypatch.setenv("GS_DATA_ROOT", str(tmp_path / "empty"))
    monkeypatch.setenv("GS_CACHE_DIR", str(tmp_path / "empty-cache"))
    # as on a machine without PYTHIA 8 + ACTS (with them, Track events can be simulated)
    monkeypatch.setattr("gs_data.track._deps.simulation_available", lambda: False)
    pre = _preflight("gess", "full")
    # 10 shift cases x 3 backbones x 11 algorithms x 3 seeds, less the fidelity exclusions
    # (2 QMOF cases x {dir, lri, mixup} x 3 backbones x 3 seeds)
    assert len(pre.jobs) == (10 * 11 - 2 * 3) * 3 * 3 == 936
    assert pre.construction == []
    assert pre.failing_jobs("data") == 936  # no Track cache, QMOF or DrugOOD files here
    assert {p.where for p in pre.data} == {f"dataset={d}" for d in
                                           load_grid("gess", "full")["dataset"]}
    algos = {j["params"]["algorithm"] for j in pre.jobs}
    assert {"tl-100", "tl-500", "tl-1000"} <= algos and "finetune" not in algos


def load_grid(suite, profile):
    from gs_bench.suites import load_suite

    return load_suite(suite, profile).grid


USER_SUITE = ('suite = "gess"\n[grid]\ndataset = ["molecular-fidelity"]\nbackbone = ["egnn"]\n'
              'algorithm = ["erm", "dir", "tl-20", "tl-100"]\n')


def test_inapplicable_and_oversized_jobs_are_construction_problems(tmp_path):
    # a user's suite without the shipped [[exclude]] rule: DIR on a regression dataset, and
    # TL-N beyond the stand-in's pool of 25 molecules
    path = tmp_path / "mine.toml"
    path.write_text(USER_SUITE)
    pre = _preflight(str(path), "demo")
    lines = [p.line() for p in pre.construction]
    assert len(lines) == 2, lines
    assert any("algorithm=dir" in ln and "DIR applies to classification only" in ln for ln in lines)
    assert any("algorithm=tl-100" in ln and "pool of molecular-fidelity holds 25" in ln for ln in lines)
    assert pre.failing_jobs("construction") == 2 and pre.data == []


def test_dry_run_lists_problems_on_stdout_and_stops(capsys, tmp_path):
    from gs_bench.cli import main

    path = tmp_path / "mine.toml"
    path.write_text(USER_SUITE)
    code = main(["run", str(path), "--methods", "erm", "dir", "--out",
                 str(tmp_path / "o"), "--dry-run"])
    out, err = capsys.readouterr()
    assert code == 2
    assert "[construction] dataset=molecular-fidelity, algorithm=dir (1 job)" in out
    assert err.strip().splitlines() == [
        "gs-bench: cannot start: gess (demo): 2 jobs planned; 1 fail by construction, 0 lack data "
        "on this machine; nothing started (problems listed above)"]
    assert not (tmp_path / "o").exists()  # nothing started, nothing written
    # a real run stops the same way, before any job
    assert main(["run", str(path), "--methods", "dir", "--out", str(tmp_path / "o")]) == 2
    assert not (tmp_path / "o" / "results").exists()
    # the shipped suite leaves DIR out on the fidelity cases and says so
    assert main(["run", "gess", "--methods", "erm", "dir", "--out", str(tmp_path / "o"), "--dry-run"]) == 0
    assert ("gess (demo): 1 job planned (1 grid point left out by the suite's [[exclude]] rules); "
            "0 fail by construction") in capsys.readouterr().err


def test_methods_and_backbones_filters_work_for_gess(capsys, tmp_path):
    from gs_bench.cli import main

    code = main(["run", "gess", "--profile", "demo", "--methods", "erm", "vrex", "--backbones",
                 "egnn", "dgcnn", "--out", str(tmp_path / "o"), "--dry-run"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "gess (demo): 4 jobs planned; 0 fail by construction" in err  # 2 algorithms x 2 backbones
    assert main(["run", "gess", "--profile", "demo", "--methods", "nope", "--out",
                 str(tmp_path / "o"), "--dry-run"]) == 2
    assert "unknown algorithm 'nope'" in capsys.readouterr().err
    # suites without a backbone axis say so
    assert main(["run", "lebed", "--backbones", "egnn", "--out", str(tmp_path / "o"), "--dry-run"]) == 2
    assert "has no axis 'backbone'" in capsys.readouterr().err


def test_exclude_rules_are_checked_and_drop_grid_points(tmp_path):
    from gs_bench.suites import SuiteConfigError, expand_jobs, load_suite

    base = ('suite = "gess"\n[grid]\ndataset = ["molecular-fidelity", "moleculeace-size"]\n'
            'backbone = ["egnn"]\nalgorithm = ["erm", "dir"]\n')
    path = tmp_path / "s.toml"
    path.write_text(base + '[[exclude]]\ndataset = "molecular-fidelity"\nalgorithm = ["dir"]\n')
    cfg = load_suite(str(path))
    got = sorted((j.params["dataset"], j.params["algorithm"]) for j in expand_jobs(cfg))
    assert got == [("molecular-fidelity", "erm"), ("moleculeace-size", "dir"), ("moleculeace-size", "erm")]
    path.write_text(base + '[[exclude]]\ndatset = "molecular-fidelity"\n')
    with pytest.raises(SuiteConfigError, match=r"exclude\[0\]\.datset: unknown grid axis; did you mean 'dataset'"):
        load_suite(str(path))
    # a profile's own rules add to the suite's, for that profile only
    path.write_text(base + '[[exclude]]\ndataset = "molecular-fidelity"\nalgorithm = ["dir"]\n'
                    '[profiles.ci]\n[[profiles.ci.exclude]]\ndataset = "moleculeace-size"\nalgorithm = "erm"\n')
    got = sorted((j.params["dataset"], j.params["algorithm"]) for j in expand_jobs(load_suite(str(path), "ci")))
    assert got == [("molecular-fidelity", "erm"), ("moleculeace-size", "dir")]
    assert len(expand_jobs(load_suite(str(path), "demo"))) == 3
    path.write_text(base + '[profiles.ci]\n[[profiles.ci.exclude]]\nalgo = "erm"\n')
    with pytest.raises(SuiteConfigError, match=r"profiles\.ci\.exclude\[0\]\.algo: unknown grid axis"):
        load_suite(str(path), "ci")


def test_old_gess_names_get_a_hint():
    from gs_bench.suites import SuiteConfigError

    with pytest.raises(SuiteConfigError, match="replaced by tl-100, tl-500 and tl-1000"):
        _preflight("gess", "demo", axes={"algorithm": ["finetune"]})
    with pytest.raises(SuiteConfigError, match="one dataset per shift case: track-pileup-pu50"):
        _preflight("gess", "demo", axes={"dataset": ["track-pileup"]})


def test_track_data_problem_goes_away_when_the_cache_holds_the_events(track_cache, monkeypatch):
    root, _ = track_cache
    settings = {"track_sizes": "tiny", "track_cache_dir": str(root)}
    assert gess.data_problem("track-pileup-pu50", settings) is None
    assert gess.data_problem("track-signal-zp10", settings) is None
    monkeypatch.setattr("gs_data.track._deps.simulation_available", lambda: False)
    why = gess.data_problem("track-pileup-pu90", settings)  # PU90 was never cached
    assert why is not None and "bkg@PU90 (0/14 cached)" in why and 'gs-data[track]' in why


# ------------------------------------------------------- shared ERM pre-training of TL
def test_tl_rows_share_one_erm_pretraining_with_the_same_results(kinds, tmp_path):
    name, settings, _ = kinds["molecular-fidelity"]
    keys = ("id_sel_test_id", "id_sel_test_ood", "ood_sel_test_id", "ood_sel_test_ood")
    first = gess.run_job({**_job(name, "tl-5", settings), "workdir": str(tmp_path)})
    second = gess.run_job({**_job(name, "tl-10", settings), "workdir": str(tmp_path)})
    assert (first["pretrain_cached"], second["pretrain_cached"]) == (False, True)
    assert len(list((tmp_path / "members").glob("*.pt"))) == 1
    assert second["pretrain_epoch"] == first["pretrain_epoch"]
    fresh = gess.run_job(_job(name, "tl-10", settings))  # no results folder: no cache
    assert fresh["pretrain_cached"] is False
    assert [second[k] for k in keys] == [fresh[k] for k in keys]  # loading = training again
    other_seed = gess.run_job({**_job(name, "tl-5", settings, seed=1), "workdir": str(tmp_path)})
    assert other_seed["pretrain_cached"] is False
    off = gess.run_job({**_job(name, "tl-5", {**settings, "share_pretraining": False}),
                        "workdir": str(tmp_path)})
    assert off["pretrain_cached"] is False
    assert len(list((tmp_path / "members").glob("*.pt"))) == 2


def test_order_jobs_puts_tl_rows_last_smallest_n_first():
    jobs = [_job("molecular-fidelity", a, {}) for a in ("tl-100", "erm", "tl-20", "dann", "tl-100")]
    jobs[-1]["params"]["dataset"] = "moleculeace-size"
    order = [(j["params"]["algorithm"], j["params"]["dataset"]) for j in gess.order_jobs(jobs)]
    assert order == [("erm", "molecular-fidelity"), ("dann", "molecular-fidelity"),
                     ("tl-20", "molecular-fidelity"), ("tl-100", "molecular-fidelity"),
                     ("tl-100", "moleculeace-size")]


# --------------------------------------------------------- task and metric from gs-data
def test_runner_reads_task_and_metric_from_the_gs_data_registry(tmp_path, monkeypatch):
    import dataclasses

    from gs_bench.preflight import check_suite
    from gs_bench.suites import load_suite
    from gs_data.geometric import GEOMETRIC_DATASETS

    assert gess.DATASETS is GEOMETRIC_DATASETS
    assert set(load_grid("gess", "full")["dataset"]) <= set(GEOMETRIC_DATASETS)
    # a registry entry turned into a regression case makes DIR inapplicable on it
    spec = GEOMETRIC_DATASETS["moleculeace-size"]
    monkeypatch.setitem(GEOMETRIC_DATASETS, "moleculeace-size",
                        dataclasses.replace(spec, task="regression", metric="mae"))
    cfg = load_suite("gess", "demo").with_overrides(
        axes={"dataset": ["moleculeace-size"], "backbone": ["egnn"], "algorithm": ["erm", "dir"]})
    pre = check_suite(cfg)
    assert [p.where for p in pre.construction] == ["dataset=moleculeace-size, algorithm=dir"]
    assert gess.train_config("moleculeace-size", "erm", {}, 0).metric == "mae"


# ------------------------------------------------------------ GeSS's Par-Label draw
def test_par_label_draw_is_gess_half_per_ood_part_where_the_pool_has_two_halves(kinds):
    name, settings, _ = kinds["drugood3d"]  # pool: 2 from ood_val + 2 from ood_test
    ds = gess._dataset(name, settings, "par-label")
    halves = gess._pool_halves(ds, settings)
    assert halves.tolist().count(0) == 2 and halves.tolist().count(1) == 2
    m = gess.run_job(_job(name, "tl-2", settings))
    assert m["par_label_draw"] == "gess"
    assert gess.run_job(_job(name, "tl-2", {**settings, "par_label_draw": "uniform"}))["par_label_draw"] == "uniform"
    # the fidelity pool is its own third of the target (GeSS table 4): drawn uniformly
    fname, fsettings, _ = kinds["molecular-fidelity"]
    assert gess.run_job(_job(fname, "tl-5", fsettings))["par_label_draw"] == "uniform"
    with pytest.raises(ValueError, match="par_label_draw must be 'gess'"):
        gess.Settings(par_label_draw="half")


def test_track_batch_size_applies_to_the_track_jobs_only():
    settings = {"batch_size": 64, "track_batch_size": 16, "max_epochs": 3}
    assert gess.train_config("track-pileup-pu50", "erm", settings, 0).batch_size == 16
    assert gess.train_config("track-signal-tau3mu", "dann", settings, 0).batch_size == 16
    assert gess.train_config("molecular-fidelity", "erm", settings, 0).batch_size == 64
    assert gess.train_config("track-pileup-pu50", "erm", {"batch_size": 64}, 0).batch_size == 64
    with pytest.raises(ValueError, match="track_batch_size"):
        gess.Settings(track_batch_size=0)


def test_fidelity_epochs_and_target_standardisation_per_dataset():
    settings = {"max_epochs": 8, "batch_size": 64, "fidelity_max_epochs": 100}
    for name in ("molecular-fidelity", "molecular-fidelity-hse06_10hf", "qmof-hse06"):
        assert gess.train_config(name, "erm", settings, 0).max_epochs == 100
        assert gess.train_config(name, "dann", settings, 0).max_epochs == 100
    for name in ("moleculeace-scaffold", "track-signal-tau3mu"):
        assert gess.train_config(name, "erm", settings, 0).max_epochs == 8
    assert gess.train_config("molecular-fidelity", "erm", {"max_epochs": 8}, 0).max_epochs == 8
    # standardised targets on the stand-in (ours); GeSS's code trains QMOF on raw eV
    assert gess.train_config("molecular-fidelity", "erm", {}, 0).standardize_targets
    assert gess.train_config("molecular-fidelity", "tl-20", {}, 0, "no-info").standardize_targets
    assert not gess.train_config("qmof-hse06", "erm", {}, 0).standardize_targets
    assert not gess.train_config("moleculeace-scaffold", "erm", {}, 0).standardize_targets
    off = {"standardize_targets": False}
    assert not gess.train_config("molecular-fidelity", "erm", off, 0).standardize_targets
    assert gess.train_config("qmof-hse06", "erm", {"standardize_targets": True}, 0).standardize_targets
    # classification jobs never get it, whatever the setting says
    assert not gess.train_config("track-signal-tau3mu", "erm", {"standardize_targets": True}, 0) \
        .standardize_targets
    with pytest.raises(ValueError, match="fidelity_max_epochs"):
        gess.Settings(fidelity_max_epochs=0)


def test_fidelity_erm_predicts_ev_and_nears_the_train_mean_in_a_few_epochs():
    """The record carries the train-mean predictor's MAE, and a 4-epoch ERM on the molecular
    stand-in (12 Adam steps) on standardised targets already predicts in eV near it; on raw eV
    (the old behaviour, GeSS's code) it still predicts about 1 eV for gaps of 5.8 eV, an MAE
    several times the mean's."""
    name, quick = "molecular-fidelity", {**QUICK, "max_epochs": 4, "batch_size": 64}
    ds = gess._dataset(name, quick, "no-info")
    parts = gess._parts(ds, "no-info")
    mean = float(np.mean([float(g.y) for g in parts["train"]]))
    want = float(np.mean([abs(float(g.y) - mean) for g in parts["iid_test"]]))
    m = gess.run_job(_job(name, "erm", quick))
    assert m["train_mean_test_id"] == pytest.approx(want)
    assert m["train_mean_test_ood"] > 0
    assert m["id_sel_test_id"] < 1.5 * m["train_mean_test_id"]
    old = gess.run_job(_job(name, "erm", {**quick, "standardize_targets": False}))
    assert old["id_sel_test_id"] > 2 * m["train_mean_test_id"]
    # the report prints the floor under the table
    rec = {"status": "ok", "job": {"params": {"dataset": name, "backbone": "egnn", "algorithm": "erm"}, "seed": 0},
           "metrics": m}
    note = gess.tables([rec])[0].note
    assert f"Train-mean predictor (every sample predicted as the mean training target): Test-ID " \
           f"{m['train_mean_test_id']:.3f}" in note


def _record(dataset, algorithm, test_id, test_ood, metric="accuracy"):
    return {"status": "ok", "job": {"params": {"dataset": dataset, "backbone": "egnn", "algorithm": algorithm},
                                    "seed": 0},
            "metrics": {"metric": metric, "level": gess.level_of(algorithm),
                        "id_sel_test_id": test_id, "id_sel_test_ood": test_ood,
                        "ood_sel_test_id": test_id, "ood_sel_test_ood": test_ood,
                        "sizes": {"train": 10, "iid_val": 2, "iid_test": 2, "ood_val": 2, "ood_test": 2}}}


def test_orderings_table_decides_each_gess_finding_from_the_records():
    """Synthetic records (made-up values) exercise each finding both ways."""
    recs = [
        _record("track-pileup-pu50", "erm", 0.80, 0.60), _record("track-pileup-pu50", "dann", 0.80, 0.65),
        _record("track-signal-tau3mu", "erm", 0.70, 0.75), _record("track-signal-tau3mu", "dann", 0.7, 0.80),
        _record("track-signal-tau3mu", "dir", 0.7, 0.70), _record("track-signal-tau3mu", "lri", 0.7, 0.76),
        _record("molecular-fidelity", "erm", 0.30, 0.50, "mae"),
        _record("molecular-fidelity", "tl-20", 0.30, 0.40, "mae"),
        _record("moleculeace-scaffold", "erm", 0.6, 0.5, "mae"),
        _record("moleculeace-scaffold", "tl-20", 0.6, 0.45, "mae"),
        _record("moleculeace-scaffold", "tl-100", 0.6, 0.47, "mae"),
    ]
    table = gess.orderings(recs)
    got = {(r[0].split(" ")[0] + " " + r[0].split(" ")[1], r[2].split(" /")[0]): r[4] for r in table.rows}
    assert got[("ERM does", "track-pileup-pu50")] == "holds"
    assert got[("ERM does", "track-signal-tau3mu")] == "does not hold"  # 70 < 75
    assert got[("ERM does", "molecular-fidelity")] == "holds"  # MAE 0.30 < 0.50: lower is better
    assert got[("DA (DANN,", "track-pileup-pu50")] == "does not hold"  # 5 points apart
    assert got[("DA (DANN)", "track-signal-tau3mu")] == "holds"
    assert got[("No-Info OOD", "track-signal-tau3mu")] == "holds"  # 1 of 2 better
    assert got[("Par-Label TL", "moleculeace-scaffold")] == "does not hold"  # TL-100 MAE worse than TL-20
    assert [r for r in table.rows if "fidelity" in r[0]][0][4] == "holds"  # TL 0.40 < ERM 0.50
    assert len(table.rows) == 9  # 4 shift-hurts, no-info, 2 DA, TL with N, TL concept
    # the dataset table names the sample count of each part
    assert "Samples per part: train 10, iid_val 2" in gess.tables(recs)[0].note
