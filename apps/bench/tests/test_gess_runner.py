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
    from gs_data.track.testing import synthetic_event

    root = tmp_path_factory.mktemp("track-cache")
    sizes = {"pileup": TrackPileupSizes(20, 20, 14, 3, 3, 14),
             "signal": TrackSignalSizes(n_bkg=20, n_bkg_pool=6, n_source_per_signal=8, n_target=16)}
    reqs = pileup_requests(50, sizes["pileup"]) + signal_requests("zp10", sizes["signal"])
    rng = np.random.default_rng(0)
    for process, pu, n in dict.fromkeys(reqs):
        n_sig = 0 if process == "bkg" else 2
        events = [synthetic_event(rng, int(rng.integers(4, 9)) + pu // 10, n_sig, max_hits=6, scale=100.0,
                                   shuffle=False, pdg=13, n_interactions=1) for _ in range(n)]
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
    # trivial baselines of the job's own parts, in the metric's unit
    want = {"accuracy": {"majority class"}, "auroc": {"AUC 50"}, "mae": {"train mean"}}[case.metric]
    if case.family == "track":
        want = want | {"hit-count threshold"}
    assert set(m["baselines"]) == want
    for b in m["baselines"].values():
        assert b["test_id"] is not None and b["test_ood"] is not None
        assert b["test_id"] >= 0 and (case.metric == "mae" or b["test_id"] <= 1)
    # learning curves: one value per epoch run, the selection metric on both validation parts
    c = m["curves"]
    assert c["epoch"] == [0, 1] and set(c) == {"epoch", "train_loss", "iid_val", "ood_val"}
    assert all(isinstance(v, float) and math.isfinite(v) for k in ("train_loss", "iid_val", "ood_val") for v in c[k])
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


def test_selected_test_scoring_gives_the_every_epoch_values_and_position_rows(kinds):
    """``test_scoring = "selected"`` (the medium profile) scores train and the test parts only at
    the kept epochs: the record's four columns equal those of the every-epoch evaluation. A
    Track record carries the position-only rows, each a fraction on both test parts (on
    SYNTHETIC events here: their values mean nothing)."""
    name, settings, _ = kinds["track"]
    every = gess.run_job(_job(name, "erm", settings))
    sel = gess.run_job(_job(name, "erm", {**settings, "test_scoring": "selected"}))
    for k in ("id_sel_test_id", "id_sel_test_ood", "ood_sel_test_id", "ood_sel_test_ood", "id_sel_epoch",
              "ood_sel_epoch"):
        assert sel[k] == pytest.approx(every[k], abs=1e-6), k
    assert sel["curves"]["train_loss"] == every["curves"]["train_loss"]  # scoring moved no RNG
    assert set(sel["position_baselines"]) == set(gess.POSITION_ROWS)
    for row in sel["position_baselines"].values():
        assert 0 <= row["test_id"] <= 1 and 0 <= row["test_ood"] <= 1
    assert gess.train_config(name, "erm", {"test_scoring": "selected"}, 0).final_parts == \
        ("train", "iid_test", "ood_test")
    with pytest.raises(ValueError, match="test_scoring must be"):
        gess.Settings(test_scoring="never")


def test_train_events_trains_on_a_fixed_subset_and_keeps_the_other_parts(kinds):
    """``train_events`` (a learning curve's point): the record's train size is N, the same
    subset whatever the seed; the test parts are unchanged; more than the part holds is refused."""
    name, settings, _ = kinds["track"]
    full = gess.run_job(_job(name, "erm", settings))["sizes"]
    m = gess.run_job(_job(name, "erm", {**settings, "train_events": 5}, seed=1))["sizes"]
    assert m["train"] == 5 and {k: v for k, v in m.items() if k != "train"} == \
        {k: v for k, v in full.items() if k != "train"}
    graphs = list(range(50))
    assert gess.train_subset(graphs, 10) == gess.train_subset(graphs, 10) == sorted(gess.train_subset(graphs, 10))
    with pytest.raises(ValueError, match="train_events = 99 exceeds the 50 training events"):
        gess.train_subset(graphs, 99)


def test_negative_control_trains_erm_on_permuted_train_labels(kinds, monkeypatch):
    """``erm-shuffled``: ERM on the train labels permuted among the train events (class balance
    kept, seeded by the job's seed); validation and test labels untouched."""
    import torch

    name, settings, _ = kinds["track"]
    seen = {}
    real_fit = __import__("gs_algos.engine", fromlist=["fit_graph"]).fit_graph

    def spy(model, parts, *a, **kw):
        seen["train"] = [float(g.y) for g in parts["train"]]
        seen["iid_val"] = [float(g.y) for g in parts["iid_val"]]
        return real_fit(model, parts, *a, **kw)

    monkeypatch.setattr("gs_algos.engine.fit_graph", spy)
    gess.run_job(_job(name, "erm", settings))
    plain = dict(seen)
    m = gess.run_job(_job(name, "erm-shuffled", settings))
    assert m["level"] == "no-info" and gess.level_of("erm-shuffled") == "no-info"
    assert sorted(seen["train"]) == sorted(plain["train"]) and seen["train"] != plain["train"]
    assert seen["iid_val"] == plain["iid_val"]
    graphs = [type("G", (), {"y": torch.tensor([float(i % 2)])})() for i in range(20)]
    gess.shuffle_labels(graphs, 3)
    again = [type("G", (), {"y": torch.tensor([float(i % 2)])})() for i in range(20)]
    gess.shuffle_labels(again, 3)
    assert [float(g.y) for g in graphs] == [float(g.y) for g in again]  # seeded


def test_tl_larger_than_the_pool_is_an_error_not_a_clamp(kinds):
    name, settings, _ = kinds["molecular-fidelity"]
    with pytest.raises(ValueError, match=r"tl-47: Par-Label needs 47 labelled OOD samples but the pool holds 46"):
        gess.run_job(_job(name, "tl-47", settings))


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
    monkeypatch.setattr("gs_data.track.deps.simulation_available", lambda: False)
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
    # TL-N beyond the stand-in's pool of 46 molecules
    path = tmp_path / "mine.toml"
    path.write_text(USER_SUITE)
    pre = _preflight(str(path), "demo")
    lines = [p.line() for p in pre.construction]
    assert len(lines) == 2, lines
    assert any("algorithm=dir" in ln and "DIR applies to classification only" in ln for ln in lines)
    assert any("algorithm=tl-100" in ln and "pool of molecular-fidelity holds 46" in ln for ln in lines)
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
    # the suite file has no [profiles.demo]: the plan line says so (issue 34 QA)
    assert err.strip().splitlines() == [
        f"gs-bench: cannot start: gess (demo: {path} has no [profiles.demo], so its [grid] and "
        "[settings] as written): 2 jobs planned; 1 fail by construction, 0 lack data "
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
    got = sorted((j.params.dataset, j.params.algorithm) for j in expand_jobs(cfg))
    assert got == [("molecular-fidelity", "erm"), ("moleculeace-size", "dir"), ("moleculeace-size", "erm")]
    path.write_text(base + '[[exclude]]\ndatset = "molecular-fidelity"\n')
    with pytest.raises(SuiteConfigError, match=r"exclude\[0\]\.datset: unknown grid axis; did you mean 'dataset'"):
        load_suite(str(path))
    # a profile's own rules add to the suite's, for that profile only
    path.write_text(base + '[[exclude]]\ndataset = "molecular-fidelity"\nalgorithm = ["dir"]\n'
                    '[profiles.ci]\n[[profiles.ci.exclude]]\ndataset = "moleculeace-size"\nalgorithm = "erm"\n')
    got = sorted((j.params.dataset, j.params.algorithm) for j in expand_jobs(load_suite(str(path), "ci")))
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
    monkeypatch.setattr("gs_data.track.deps.simulation_available", lambda: False)
    why = gess.data_problem("track-pileup-pu90", settings)  # PU90 was never cached
    assert why is not None and "bkg@PU90 (0/14 cached)" in why and "pip install 'pythia8mc>=8.317.2,<8.318'" in why


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


def test_the_erm_job_stores_the_tl_rows_pretraining(kinds, tmp_path):
    """The ERM job of a grid point trains exactly the TL rows' pre-training (issue 53's budget):
    it stores it, the TL row then loads it, with the results of training it afresh."""
    name, settings, _ = kinds["molecular-fidelity"]
    keys = ("id_sel_test_id", "id_sel_test_ood", "ood_sel_test_id", "ood_sel_test_ood")
    erm = gess.run_job({**_job(name, "erm", settings), "workdir": str(tmp_path)})
    assert len(list((tmp_path / "members").glob("*.pt"))) == 1
    tl = gess.run_job({**_job(name, "tl-5", settings), "workdir": str(tmp_path)})
    assert tl["pretrain_cached"] is True and tl["pretrain_epoch"] == erm["id_sel_epoch"]
    fresh = gess.run_job(_job(name, "tl-5", settings))
    assert fresh["pretrain_cached"] is False
    assert [tl[k] for k in keys] == pytest.approx([fresh[k] for k in keys], abs=1e-9)


def test_graph_parts_are_built_once_per_run_folder(kinds, tmp_path, monkeypatch):
    """The second job of a run folder reads the first one's graphs (kNN, position summaries)
    from ``<workdir>/graphs`` instead of building them, with the same results; a damaged file is
    rebuilt."""
    name, settings, _ = kinds["track"]
    keys = ("id_sel_test_id", "id_sel_test_ood", "ood_sel_test_id", "ood_sel_test_ood")
    first = gess.run_job({**_job(name, "erm", settings), "workdir": str(tmp_path)})
    (cached,) = (tmp_path / "graphs").glob("*.pt")
    built = []
    real = gess.graph_parts
    monkeypatch.setattr("gs_bench.runners.gess.job.graph_parts", lambda *a, **k: built.append(1) or real(*a, **k))
    second = gess.run_job({**_job(name, "erm", settings), "workdir": str(tmp_path)})
    assert built == [] and [second[k] for k in keys] == [first[k] for k in keys]
    assert second["position_baselines"] == first["position_baselines"] and second["sizes"] == first["sizes"]
    cached.write_bytes(b"not a torch file")
    third = gess.run_job({**_job(name, "erm", settings), "workdir": str(tmp_path)})
    assert built == [1] and [third[k] for k in keys] == [first[k] for k in keys]


def test_order_jobs_puts_tl_rows_last_smallest_n_first():
    jobs = [_job("molecular-fidelity", a, {}) for a in ("tl-100", "erm", "tl-20", "dann", "tl-100")]
    jobs[-1]["params"]["dataset"] = "moleculeace-size"
    order = [(j["params"]["algorithm"], j["params"]["dataset"]) for j in gess.order_jobs(jobs)]
    assert order == [("erm", "molecular-fidelity"), ("dann", "molecular-fidelity"),
                     ("tl-20", "molecular-fidelity"), ("tl-100", "molecular-fidelity"),
                     ("tl-100", "moleculeace-size")]
    # EGNN first, ERM first within a backbone (a partly finished medium run has its references)
    jobs = [_job("track-pileup-pu50", a, {}, backbone=b)
            for b, a in (("dgcnn", "erm"), ("egnn", "dann"), ("egnn", "tl-100"), ("egnn", "erm"))]
    order = [(j["params"]["backbone"], j["params"]["algorithm"]) for j in gess.order_jobs(jobs)]
    assert order == [("egnn", "erm"), ("egnn", "dann"), ("egnn", "tl-100"), ("dgcnn", "erm")]


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


def test_track_epochs_and_edge_features_apply_to_the_track_jobs_only():
    """``track_max_epochs`` / ``track_edge_features`` (ours, issue 29) change the Track jobs'
    epochs and backbone edges, every level included, and nothing else; unset: GeSS's."""
    settings = {"max_epochs": 8, "track_max_epochs": 30, "fidelity_max_epochs": 100,
                "track_edge_features": "distance_direction_beam_abs"}
    for name, algo, level in (("track-pileup-pu50", "erm", None), ("track-signal-tau3mu", "dann", None),
                              ("track-signal-tau3mu", "tl-100", "no-info"),
                              ("track-signal-tau3mu", "tl-100", None)):
        assert gess.train_config(name, algo, settings, 0, level).max_epochs == 30
    assert gess.train_config("moleculeace-scaffold", "erm", settings, 0).max_epochs == 8
    assert gess.train_config("molecular-fidelity", "erm", settings, 0).max_epochs == 100
    st = gess.Settings.from_mapping(settings)
    assert gess.model_overrides(gess.DATASETS["track-pileup-pu50"], st) == {
        "edge_features": "distance_direction_beam_abs"}
    assert gess.model_overrides(gess.DATASETS["moleculeace-scaffold"], st) == {}
    assert gess.model_overrides(gess.DATASETS["track-pileup-pu50"], gess.Settings()) == {}
    # track_pt_norm: the Track Point Transformer jobs only
    st = gess.Settings.from_mapping({**settings, "track_pt_norm": "batch"})
    track = gess.DATASETS["track-signal-tau3mu"]
    assert gess.model_overrides(track, st, "pointtransformer") == {
        "edge_features": "distance_direction_beam_abs", "pt_norm": "batch"}
    for backbone in ("egnn", "dgcnn", None):
        assert "pt_norm" not in gess.model_overrides(track, st, backbone)
    assert gess.model_overrides(gess.DATASETS["moleculeace-scaffold"], st, "pointtransformer") == {}
    with pytest.raises(ValueError, match="track_pt_norm must be"):
        gess.Settings(track_pt_norm="group")
    # track_pt_delta: likewise, and the model it builds has the edge-MLP positional term
    st = gess.Settings.from_mapping({**settings, "track_pt_norm": "batch", "track_pt_delta": "edge_mlp"})
    over = gess.model_overrides(track, st, "pointtransformer")
    assert over == {"edge_features": "distance_direction_beam_abs", "pt_norm": "batch",
                    "pt_delta": "edge_mlp"}
    for backbone in ("egnn", "dgcnn", None):
        assert "pt_delta" not in gess.model_overrides(track, st, backbone)
    from gs_models import PointCloudConfig
    from gs_models.pointcloud import PointTransformer

    model = PointTransformer(1, 2, PointCloudConfig(model="pointtransformer", hidden_channels=8, **over))
    assert all(layer.delta == "edge_mlp" for layer in model.layers)
    with pytest.raises(ValueError, match="track_pt_delta must be one of position, edge_mlp"):
        gess.Settings(track_pt_delta="mlp")
    with pytest.raises(ValueError, match="track_edge_features must be one of"):
        gess.Settings(track_edge_features="beam")
    with pytest.raises(ValueError, match="track_max_epochs"):
        gess.Settings(track_max_epochs=0)



def test_track_signal_min_pt_reaches_the_simulation_config_and_the_fingerprint():
    """``track_signal_min_pt_gev`` (ours, issue 29): unset, gs-data's default simulation
    (``None``: the caches of before); set, a ``TrackSimConfig`` with it, and the data
    fingerprint of the Track cases names it."""
    from gs_bench.runners.gess.data import track_sim_config

    assert track_sim_config({}) is None
    cfg = track_sim_config({"track_signal_min_pt_gev": 1.0})
    assert cfg.signal_min_pt_gev == 1.0 and cfg.min_pt_gev == 1.0
    base = gess.fingerprint("track-signal-tau3mu", {"track_sizes": "ci"})
    cut = gess.fingerprint("track-signal-tau3mu", {"track_sizes": "ci", "track_signal_min_pt_gev": 1.0})
    assert base != cut and "signal pT >= 1.0 GeV" in cut
    for bad in (-1.0, True, "1"):
        with pytest.raises(ValueError, match="track_signal_min_pt_gev"):
            gess.Settings(track_signal_min_pt_gev=bad)


def test_track_signal_event_reaches_the_simulation_config_and_the_fingerprint():
    """``track_signal_event`` (ours, issue 53): 'decay' gives a ``TrackSimConfig`` whose signal
    events carry their muons only, beside the pT threshold when both are set; the data
    fingerprint names it; any other value is refused by name."""
    from gs_bench.runners.gess.data import track_sim_config

    cfg = track_sim_config({"track_signal_event": "decay", "track_signal_min_pt_gev": 1.0})
    assert (cfg.signal_event, cfg.signal_min_pt_gev) == ("decay", 1.0)
    assert track_sim_config({"track_signal_event": "decay"}).signal_min_pt_gev is None
    base = gess.fingerprint("track-signal-tau3mu", {"track_sizes": "ci"})
    decay = gess.fingerprint("track-signal-tau3mu", {"track_sizes": "ci", "track_signal_event": "decay"})
    assert base != decay and "signal event 'decay'" in decay
    with pytest.raises(ValueError, match="track_signal_event must be 'hard', 'decay' or unset"):
        gess.Settings(track_signal_event="muons")


def test_precise_norm_statistics_reach_every_job_from_the_suite():
    from gs_bench.suites import load_suite

    for profile in ("demo", "ci", "paper"):
        assert load_suite("gess", profile).settings["norm_stats_graphs"] == 1024
    for name in ("track-pileup-pu50", "molecular-fidelity", "moleculeace-scaffold"):
        assert gess.train_config(name, "erm", {"norm_stats_graphs": 1024}, 0).norm_stats_graphs == 1024
        assert gess.train_config(name, "erm", {}, 0).norm_stats_graphs == 0
    with pytest.raises(ValueError, match="norm_stats_graphs"):
        gess.Settings(norm_stats_graphs=-1)


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
    """The record carries the train-mean predictor's MAE (``baselines``), and a 4-epoch ERM on the molecular
    stand-in (12 Adam steps) on standardised targets already predicts in eV near it; on raw eV
    (the old behaviour, GeSS's code) it still predicts about 1 eV for gaps of 5.8 eV, an MAE
    several times the mean's."""
    name, quick = "molecular-fidelity", {**QUICK, "max_epochs": 4, "batch_size": 64}
    ds = gess._dataset(name, quick, "no-info")
    parts = gess._parts(ds, "no-info")
    mean = float(np.mean([float(g.y) for g in parts["train"]]))
    want = float(np.mean([abs(float(g.y) - mean) for g in parts["iid_test"]]))
    m = gess.run_job(_job(name, "erm", quick))
    floor = m["baselines"]["train mean"]
    assert floor["test_id"] == pytest.approx(want)
    assert floor["test_ood"] > 0
    assert m["id_sel_test_id"] < 1.5 * floor["test_id"]
    old = gess.run_job(_job(name, "erm", {**quick, "standardize_targets": False}))
    assert old["id_sel_test_id"] > 2 * floor["test_id"]


LOW = {"accuracy": {"majority class": {"test_id": 0.5, "test_ood": 0.5}},
       "mae": {"train mean": {"test_id": 1.0, "test_ood": 1.2}}}


def _record(dataset, algorithm, test_id, test_ood, metric="accuracy", baselines="low", seed=0,
            curves=None, n_test=10_000):
    """A SYNTHETIC record: GeSS's columns as given (Test-ID at the best Val-ID epoch, Test-OOD at
    the best Val-OOD epoch), the crossed ones swapped (so a report that read Test-ID at the
    Val-OOD epoch, or Test-OOD at the Val-ID epoch, would decide otherwise);
    ``baselines="low"``: a trivial baseline far below ERM (:data:`LOW`), ``None``: none
    (records written before them); ``n_test`` samples in each test part (large by default, so
    that a few points decide a finding)."""
    m = {"metric": metric, "level": gess.level_of(algorithm),
         "id_sel_test_id": test_id, "id_sel_test_ood": test_id,
         "ood_sel_test_id": test_ood, "ood_sel_test_ood": test_ood,
         "sizes": {"train": 10, "iid_val": 2, "iid_test": n_test, "ood_val": 2, "ood_test": n_test}}
    if baselines is not None:
        m["baselines"] = LOW[metric] if baselines == "low" else baselines
    if curves is not None:
        m["curves"] = curves
    return {"status": "ok", "job": {"params": {"dataset": dataset, "backbone": "egnn", "algorithm": algorithm},
                                    "seed": seed}, "metrics": m}


def _findings(recs) -> dict[tuple[str, str], str]:
    table = gess.orderings(recs)
    return {(r[0].split(" ")[0] + " " + r[0].split(" ")[1], r[2].split(" /")[0]): r[4] for r in table.rows}


def _finding_records(erm_baselines=None):
    """ERM and the other algorithms on four datasets; ``erm_baselines(dataset, erm Test-ID,
    metric)`` gives the baselines of the ERM records (default: far below ERM)."""
    def erm(dataset, test_id, test_ood, metric="accuracy"):
        b = "low" if erm_baselines is None else erm_baselines(dataset, test_id, metric)
        return _record(dataset, "erm", test_id, test_ood, metric, baselines=b)

    return [
        erm("track-pileup-pu50", 0.80, 0.60), _record("track-pileup-pu50", "dann", 0.80, 0.65),
        erm("track-signal-tau3mu", 0.70, 0.75), _record("track-signal-tau3mu", "dann", 0.7, 0.80),
        _record("track-signal-tau3mu", "dir", 0.7, 0.70), _record("track-signal-tau3mu", "lri", 0.7, 0.76),
        erm("molecular-fidelity", 0.30, 0.50, "mae"),
        _record("molecular-fidelity", "tl-20", 0.30, 0.40, "mae"),
        erm("moleculeace-scaffold", 0.6, 0.5, "mae"),
        _record("moleculeace-scaffold", "tl-20", 0.6, 0.45, "mae"),
        _record("moleculeace-scaffold", "tl-100", 0.6, 0.47, "mae"),
    ]


def test_orderings_table_decides_each_gess_finding_from_the_records():
    """Synthetic records (made-up values) where ERM clearly beats the trivial baseline
    exercise each finding both ways, on GeSS's columns (Test-ID at the best Val-ID epoch,
    Test-OOD at the best Val-OOD epoch; the crossed values of :func:`_record` would flip the
    shift-hurts rows)."""
    recs = _finding_records()
    table = gess.orderings(recs)
    got = _findings(recs)
    assert got[("ERM does", "track-pileup-pu50")] == "holds"
    assert got[("ERM does", "track-signal-tau3mu")] == "does not hold"  # 70 < 75
    assert got[("ERM does", "molecular-fidelity")] == "holds"  # MAE 0.30 < 0.50: lower is better
    assert got[("DA (DANN,", "track-pileup-pu50")] == "does not hold"  # 5 points apart
    assert got[("DA (DANN)", "track-signal-tau3mu")] == "holds"
    assert got[("No-Info OOD", "track-signal-tau3mu")] == "holds"  # 1 of 2 better
    assert got[("Par-Label TL", "moleculeace-scaffold")] == "does not hold"  # TL-100 MAE worse than TL-20
    assert [r for r in table.rows if "fidelity" in r[0]][0][4] == "holds"  # TL 0.40 < ERM 0.50
    assert len(table.rows) == 9  # 4 shift-hurts, no-info, 2 DA, TL with N, TL concept
    assert "Test-OOD selected on Val-OOD" in table.title
    # the dataset table names the sample count of each part
    assert "Samples per part: train 10, iid_val 2, iid_test 10000" in gess.tables(recs)[0].note


def test_no_finding_holds_where_erm_does_no_better_than_the_trivial_baseline():
    def equal(dataset, erm_test_id, metric):  # the baseline scores what ERM scores on Test-ID
        name = "train mean" if metric == "mae" else "majority class"
        return {name: {"test_id": erm_test_id, "test_ood": 0.5}}

    recs = _finding_records(equal)
    got = _findings(recs)
    assert len(got) == 9
    for key, verdict in got.items():
        assert verdict.startswith("not decided: ERM did not learn on Test-ID (ERM "), key
        assert "holds" not in verdict
    assert got[("ERM does", "track-pileup-pu50")] == \
        "not decided: ERM did not learn on Test-ID (ERM 80.00 vs majority class 80.00; needs more than 10.00 points)"
    assert got[("ERM does", "molecular-fidelity")] == \
        "not decided: ERM did not learn on Test-ID (ERM 0.300 vs train mean 0.300)"


def test_guard_uses_the_strongest_baseline_and_its_exact_margins():
    def track(erm_id, base, hit=None):
        b = {"majority class": {"test_id": base, "test_ood": 0.5}}
        if hit is not None:
            b["hit-count threshold"] = {"test_id": hit, "test_ood": 0.5, "threshold": 9.0, "signal": "above"}
        return [_record("track-signal-tau3mu", "erm", erm_id, 0.6, baselines=b),
                _record("track-signal-tau3mu", "dann", 0.6, 0.7)]

    # 10 points above the majority class: judged (0.7 - 0.6 is 9.999... in floating point)
    assert set(_findings(track(0.70, 0.60)).values()) == {"holds"}
    assert all(v.startswith("not decided") for v in _findings(track(0.699, 0.60)).values())
    # the hit-count threshold is the stronger baseline: 5 points below it is not enough
    got = _findings(track(0.80, 0.50, hit=0.75))
    assert set(got.values()) == {
        "not decided: ERM did not learn on Test-ID (ERM 80.00 vs hit-count threshold 75.00; needs more than 10.00 points)"}
    # MAE: at most 0.8 x the train-mean predictor's
    def fid(erm_id):
        return [_record("molecular-fidelity", "erm", erm_id, 0.9, "mae",
                        baselines={"train mean": {"test_id": 1.0, "test_ood": 1.2}})]

    assert _findings(fid(0.8))[("ERM does", "molecular-fidelity")] == "holds"
    assert _findings(fid(0.81))[("ERM does", "molecular-fidelity")] == \
        "not decided: ERM did not learn on Test-ID (ERM 0.810 vs train mean 1.000)"
    assert gess.learned(0.70, 0.60, False) and not gess.learned(0.6999, 0.60, False)
    assert gess.learned(0.8, 1.0, True) and not gess.learned(0.8001, 1.0, True)


def test_a_test_ood_column_at_trivial_level_gives_not_decided_per_column():
    """Issue 53: every verdict is guarded per column. ERM learned Test-ID (90 against a hit-count
    row at 60) but its Test-OOD sits within noise of the hit-count row's Test-OOD (55 against 53,
    with 1,000 test events): every finding on that case, all of which rest on Test-OOD, is "not
    decided", naming the column; with ERM's Test-OOD well above the row (75), they are judged."""
    def case(erm_ood, n=1000):
        b = {"majority class": {"test_id": 0.5, "test_ood": 0.5},
             "hit-count threshold": {"test_id": 0.60, "test_ood": 0.53, "threshold": 9.0, "signal": "above"}}
        return [_record("track-signal-tau3mu", "erm", 0.90, erm_ood, baselines=b, n_test=n),
                _record("track-signal-tau3mu", "dann", 0.90, erm_ood + 0.2, n_test=n),
                _record("track-signal-tau3mu", "vrex", 0.90, erm_ood - 0.2, n_test=n)]

    got = _findings(case(0.55))
    assert len(got) == 3 and all(
        v.startswith("not decided: ERM did not learn on Test-OOD (ERM 55.00 vs hit-count threshold 53.00; "
                     "needs more than 10.00 points)") for v in got.values()), got
    judged = _findings(case(0.75))
    assert judged[("DA (DANN)", "track-signal-tau3mu")] == "holds"
    assert judged[("ERM does", "track-signal-tau3mu")] == "holds"
    # the margin is the larger of 10 points and 2 SE of the difference: with 40 test events
    # 2 SE is about 21 points, so 25 points above the row are needed, 20 are not enough
    few = _findings(case(0.73, n=40))
    assert all("did not learn on Test-OOD" in v and "needs more than 21." in v for v in few.values()), few
    ok, margin = gess.column_learned(case(0.80, n=40)[:1], "ood", 0.53)
    assert ok and margin == pytest.approx(2 * math.sqrt(0.8 * 0.2 / 40 + 0.53 * 0.47 / 40))


def test_records_without_baselines_give_not_decided_and_no_baseline_row():
    """Records written before the baselines (e.g. the committed measured runs)."""
    recs = [_record("track-signal-tau3mu", "erm", 0.9, 0.6, baselines=None),
            _record("track-signal-tau3mu", "dann", 0.9, 0.8, baselines=None)]
    assert set(_findings(recs).values()) == {"not decided: no baseline in the records"}
    table = gess.tables(recs)[0]
    assert [r[1] for r in table.rows] == ["erm", "dann"]
    assert "No trivial baseline row" in table.note


def test_tables_put_baselines_first_and_gess_columns_before_the_crossed_ones():
    b = {"majority class": {"test_id": 0.5, "test_ood": 0.4, "class": 1},
         "hit-count threshold": {"test_id": 0.6, "test_ood": 0.55, "threshold": 12.0, "signal": "above"}}
    recs = [_record("track-signal-tau3mu", "erm", 0.9, 0.7, baselines=b, seed=s) for s in (0, 1)]
    recs.append(_record("track-signal-tau3mu", "dann", 0.85, 0.75))
    table = gess.tables(recs)[0]
    assert table.columns[3:] == ["Test-ID (ID-sel)", "Test-OOD (OOD-sel)", "OOD-sel Test-ID", "ID-sel Test-OOD"]
    assert "as GeSS's code selects it" in table.title and "GESS/utils/metrics.py" in table.note
    rows = {r[1]: r for r in table.rows}
    assert [r[1] for r in table.rows[:2]] == ["majority class", "hit-count threshold"]
    assert rows["majority class"][0] == "—" and rows["majority class"][2] == "trivial"
    assert rows["majority class"][3:] == ["50.00 ± 0.00 (n=2)", "40.00 ± 0.00 (n=2)"] * 2
    assert rows["hit-count threshold"][3:5] == ["60.00 ± 0.00 (n=2)", "55.00 ± 0.00 (n=2)"]
    # GeSS's two columns first, then the crossed ones (swapped in _record)
    assert rows["erm"][3:] == ["90.00 ± 0.00 (n=2)", "70.00 ± 0.00 (n=2)", "70.00 ± 0.00 (n=2)", "90.00 ± 0.00 (n=2)"]
    dann = rows["dann"][3:]
    assert dann == ["85.00 (n=1)", "75.00 (n=1)", "75.00 (n=1)", "85.00 (n=1)"]
    # AUC: 50 by definition
    auc = [_record("moleculeace-scaffold", "erm", 0.8, 0.7, "auroc",
                   baselines={"AUC 50": {"test_id": 0.5, "test_ood": 0.5}})]
    assert gess.tables(auc)[0].rows[0][1:5] == ["AUC 50", "trivial", "50.00 (n=1)", "50.00 (n=1)"]


def test_trivial_baselines_are_fitted_on_the_jobs_train_part():
    import types

    import torch

    def g(y, hits):
        return types.SimpleNamespace(y=torch.tensor([float(y)]), pos=torch.zeros(hits, 3))

    # Track: signal events (y=1) carry more hits in train and Test-ID; Test-OOD all above
    parts = {"train": [g(0, 10), g(0, 11), g(0, 12), g(1, 30), g(1, 31)],
             "iid_test": [g(0, 9), g(1, 40), g(0, 13), g(0, 5)],
             "ood_test": [g(0, 60), g(1, 70)]}
    b = gess.trivial_baselines(parts, gess.DATASETS["track-pileup-pu50"])
    assert b["majority class"] == {"test_id": 0.75, "test_ood": 0.5, "class": 0}
    assert b["hit-count threshold"] == {"test_id": 0.75, "test_ood": 0.5, "threshold": 12.0, "signal": "above"}
    # regression: the train mean as prediction
    parts = {"train": [g(1.0, 3), g(3.0, 3)], "iid_test": [g(2.0, 3), g(4.0, 3)], "ood_test": [g(6.0, 3)]}
    b = gess.trivial_baselines(parts, gess.DATASETS["molecular-fidelity"])
    assert b == {"train mean": {"test_id": 1.0, "test_ood": 4.0, "prediction": 2.0}}
    # ROC-AUC: 50 by definition; an empty test part gives None
    b = gess.trivial_baselines({"train": [g(1, 3)], "iid_test": [g(0, 3)]}, gess.DATASETS["moleculeace-scaffold"])
    assert b == {"AUC 50": {"test_id": 0.5, "test_ood": 0.5}}
    b = gess.trivial_baselines({"train": [g(1, 3)], "iid_test": [g(0, 3)]}, gess.DATASETS["track-signal-tau3mu"])
    assert b["majority class"]["test_ood"] is None and b["hit-count threshold"]["threshold"] is None


def test_learning_curves_are_compact_lists_per_epoch():
    history = [{"epoch": 0, "train_loss": 0.693147181, "metrics": {"iid_val": {"accuracy": 0.512345678},
                                                                  "ood_val": {"accuracy": 0.5}}},
               {"epoch": 1, "train_loss": 0.61, "penalty": 3.0},  # not evaluated
               {"epoch": 2, "train_loss": float("nan"), "metrics": {"iid_val": {"accuracy": 0.7},
                                                                   "ood_val": {"accuracy": 0.6}}}]
    c = gess.learning_curves(history, "accuracy")
    assert c == {"epoch": [0, 1, 2], "train_loss": [0.69315, 0.61, None],
                 "iid_val": [0.51235, None, 0.7], "ood_val": [0.5, None, 0.6]}


def test_report_draws_learning_curves_and_none_for_old_records(tmp_path):
    curves = {"epoch": [0, 1, 2], "train_loss": [0.7, 0.6, 0.5], "iid_val": [0.6, 0.7, 0.75],
              "ood_val": [0.5, None, 0.6]}
    recs = [_record("track-signal-tau3mu", "erm", 0.9, 0.7, curves=curves, seed=s) for s in (0, 1)]
    recs += [_record("track-signal-tau3mu", "dann", 0.9, 0.7, curves=curves),
             _record("molecular-fidelity", "erm", 0.3, 0.5, "mae", baselines=None)]  # no curves
    figs = gess.figures(recs, tmp_path)
    assert [f.path for f in figs] == ["gess_curves_track-signal-tau3mu.png"]
    assert (tmp_path / figs[0].path).stat().st_size > 1000
    assert "mean over 1/2 seeds" in figs[0].caption
    epochs, mean = gess._mean_curve(recs[:2], "ood_val", 100.0)
    assert epochs == [0, 2] and mean == pytest.approx([50.0, 60.0])
    assert gess.figures([_record("molecular-fidelity", "erm", 0.3, 0.5, "mae")], tmp_path) == []


def test_gess_report_of_records_renders_baselines_figure_and_verdicts(tmp_path):
    """build_report on a results folder of SYNTHETIC gess records: the figure is written next
    to report.md and linked from it."""
    import json

    from gs_bench.report import build_report
    from gs_bench.store import ResultsStore

    curves = {"epoch": [0, 1], "train_loss": [0.7, 0.6], "iid_val": [0.6, 0.7], "ood_val": [0.5, 0.6]}
    recs = [_record("track-signal-tau3mu", "erm", 0.9, 0.7, curves=curves),
            _record("track-signal-tau3mu", "dann", 0.9, 0.8, curves=curves)]
    lines = []
    for i, r in enumerate(recs):
        r.update(key=f"k{i}", job={**r["job"], "suite": "gess", "settings": {}, "key": f"k{i}"})
        lines.append(json.dumps(r))
    (tmp_path / "results.jsonl").write_text("\n".join(lines) + "\n")
    assert all(ResultsStore.check_record(r) is None for r in recs)
    text = build_report(tmp_path).read_text()
    assert "![track-signal-tau3mu: training loss" in text and "(gess_curves_track-signal-tau3mu.png)" in text
    assert (tmp_path / "report" / "gess_curves_track-signal-tau3mu.png").is_file()
    assert "| — | majority class | trivial | 50.00 (n=1) |" in text
    assert "| DA (DANN) beats ERM under the signal shift |" in text and "| holds |" in text


def _same_selection(dataset, algorithm, value, epoch, seed=0):
    """A SYNTHETIC record whose ID- and OOD-selected tracks picked the same epoch."""
    r = _record(dataset, algorithm, value, value - 0.1, seed=seed)
    m = r["metrics"]
    m.update(ood_sel_test_id=m["id_sel_test_id"], id_sel_test_ood=m["ood_sel_test_ood"],
             id_sel_epoch=epoch, ood_sel_epoch=epoch)
    r["job"]["settings"] = {"max_epochs": 15}
    return r


def test_identical_id_and_ood_selection_columns_are_said_in_the_table_note():
    """Issue 33: GeSS's ID-sel and OOD-sel columns were identical in every row of the demo
    report with no comment. Now the note says so, with the selected epochs."""
    recs = [_same_selection("molecular-fidelity", "erm", 0.4, 14, seed=0),
            _same_selection("molecular-fidelity", "erm", 0.5, 14, seed=1),
            _same_selection("molecular-fidelity", "vrex", 0.45, 12)]
    note = gess.tables(recs)[0].note
    assert "**OOD-sel and ID-sel are identical in every row.** In each of the 3 runs the best Val-OOD " \
           "epoch is also the best Val-ID epoch: epochs 12, 14." in note
    last = [_same_selection("molecular-fidelity", "erm", 0.4, 14), _same_selection("molecular-fidelity", "dann", 0.3, 14)]
    assert "best Val-ID epoch (the last epoch, 14): epochs 14." in gess.tables(last)[0].note  # of 15, from 0
    # the trivial rows are equal by construction and do not count; one differing row: no comment
    recs.append(_record("molecular-fidelity", "tl-20", 0.6, 0.4))
    assert "identical in every row" not in gess.tables(recs)[0].note
    assert "identical in every row" not in gess.tables([_record("molecular-fidelity", "erm", 0.6, 0.4)])[0].note


def test_report_names_the_track_settings_of_ours_on_track_tables_only():
    """A Track table trained with issue 29's settings says so in its note (never reads as
    GeSS's protocol); other datasets, and records without them, get nothing."""
    from gs_bench.runners.gess.report import ours_not_gess

    def rec(dataset, **settings):
        return {"job": {"params": {"dataset": dataset}, "settings": settings}}

    ours = {"track_edge_features": "distance_direction_beam_abs", "track_max_epochs": 20}
    text = ours_not_gess([rec("track-pileup-pu50", **ours)])
    assert "Not GeSS's protocol (ours)" in text and "distance_direction_beam_abs" in text
    assert "20 Track epochs" in text and "pT" not in text
    assert "pT >= 1.0 GeV" in ours_not_gess([rec("track-signal-tau3mu", track_signal_min_pt_gev=1.0)])
    assert ours_not_gess([rec("moleculeace-scaffold", **ours)]) == ""
    assert ours_not_gess([rec("track-pileup-pu50", track_batch_size=16)]) == ""
    assert "Point Transformer blocks with batch norm" in ours_not_gess(
        [rec("track-pileup-pu50", track_pt_norm="batch")])
    assert "positional term edge_mlp" in ours_not_gess([rec("track-pileup-pu50", track_pt_delta="edge_mlp")])
    assert ours_not_gess([rec("track-pileup-pu50", track_pt_delta="position")]) == ""


def test_metric_variance_matches_binomial_and_a_simulated_auroc():
    """Accuracy: p (1 - p) / n. AUROC: Hanley-McNeil with two equal classes against the
    variance of scikit-learn's roc_auc_score over 4,000 seeded binormal draws (independent
    reference; HM is an approximation, so 15 %)."""
    from sklearn.metrics import roc_auc_score

    assert gess.metric_variance("accuracy", 0.9, 100) == pytest.approx(0.0009)
    assert gess.metric_variance("mae", 0.5, 100) is None
    assert gess.metric_variance("accuracy", 0.9, None) is None
    rng = np.random.default_rng(0)
    n = 200
    y = np.r_[np.zeros(n // 2), np.ones(n // 2)]
    aucs = [roc_auc_score(y, np.r_[rng.normal(0, 1, n // 2), rng.normal(1.2, 1, n // 2)])
            for _ in range(4000)]
    hm = gess.metric_variance("auroc", float(np.mean(aucs)), n)
    assert hm == pytest.approx(np.var(aucs), rel=0.15)


def test_findings_within_the_test_sets_noise_are_not_decided_both_ways():
    """DANN 3 events above ERM on 110 Track-Signal OOD events (88.18 vs 85.45): within
    2 standard errors (about 9 points), so not decided; the same values on 10,000 events hold,
    and a 20-point gap on 110 events is decided. MAE with two seeds uses their spread."""
    def signal(dann_ood, n):
        return [_record("track-signal-tau3mu", "erm", 0.90, 94 / 110, n_test=n),
                _record("track-signal-tau3mu", "dann", 0.90, dann_ood, n_test=n)]

    got = _findings(signal(97 / 110, 110))
    # 4 (v_a + v_b) / Δ² with v = p (1 - p): 4 x 0.2285 / 0.0273² = 1,228.5 events per part
    assert got[("DA (DANN)", "track-signal-tau3mu")] == \
        "not decided: within noise (needs about 1,229 test events per part, now 110)"
    row = [r for r in gess.orderings(signal(97 / 110, 110)).rows if r[0].startswith("DA (DANN)")][0]
    assert "(Δ +2.73, 2 SE 9." in row[3]
    assert _findings(signal(97 / 110, 10_000))[("DA (DANN)", "track-signal-tau3mu")] == "holds"
    assert _findings(signal(0.65, 110))[("DA (DANN)", "track-signal-tau3mu")] == "does not hold"
    # ERM's Test-ID 90.00 vs Test-OOD 85.45 on 110 events each: within noise too
    assert got[("ERM does", "track-signal-tau3mu")].startswith("not decided: within noise")

    def fid(tl_seeds):
        return ([_record("molecular-fidelity", "erm", 0.30, 0.50, "mae", seed=s) for s in (0, 1)]
                + [_record("molecular-fidelity", "tl-20", 0.30, v, "mae", seed=s)
                   for s, v in enumerate(tl_seeds)])

    rows = {r[0].split()[0]: r[4] for r in gess.orderings(fid((0.44, 0.46))).rows}
    assert rows["Par-Label"] == "holds"  # 0.45 +- 0.01 against 0.50 +- 0
    rows = {r[0].split()[0]: r[4] for r in gess.orderings(fid((0.20, 0.70))).rows}
    assert rows["Par-Label"].startswith("not decided: within noise")  # the same mean, seeds 0.5 apart
    # seeds' spread beyond the gap: more seeds, not events (accuracy, 3 seeds far apart)
    erm = [_record("track-signal-tau3mu", "erm", 0.9, v, n_test=1000, seed=i) for i, v in enumerate((0.6, 0.7, 0.8))]
    dann = [_record("track-signal-tau3mu", "dann", 0.9, v, n_test=1000, seed=i) for i, v in enumerate((0.62, 0.72, 0.82))]
    assert "more seeds, not more events" in _findings(erm + dann)[("DA (DANN)", "track-signal-tau3mu")]
    # one seed of MAE: no noise estimate, the plain ordering decides and the evidence says so
    one = [_record("molecular-fidelity", "erm", 0.30, 0.50, "mae"),
           _record("molecular-fidelity", "tl-20", 0.30, 0.45, "mae")]
    row = [r for r in gess.orderings(one).rows if r[0].startswith("Par-Label")][0]
    assert row[4] == "holds" and "no noise estimate" in row[3]


def test_pileup_closeness_and_no_info_counts_respect_the_noise():
    def pileup(dann_ood, n):
        return [_record("track-pileup-pu50", "erm", 0.90, 0.80, n_test=n),
                _record("track-pileup-pu50", "dann", 0.90, dann_ood, n_test=n)]

    assert _findings(pileup(0.81, 100_000))[("DA (DANN,", "track-pileup-pu50")] == "holds"
    assert _findings(pileup(0.81, 200))[("DA (DANN,", "track-pileup-pu50")].startswith(
        "not decided: within noise (gap ")
    assert _findings(pileup(0.60, 200))[("DA (DANN,", "track-pileup-pu50")] == "does not hold"
    # two no-info methods within noise of ERM: they might both be better, so not decided
    recs = [_record("track-signal-tau3mu", "erm", 0.90, 0.80, n_test=100),
            _record("track-signal-tau3mu", "dir", 0.90, 0.82, n_test=100),
            _record("track-signal-tau3mu", "lri", 0.90, 0.83, n_test=100)]
    assert _findings(recs)[("No-Info OOD", "track-signal-tau3mu")].startswith("not decided: within noise (2 of 2")


def test_moleculeace_missing_names_the_suite_setting_not_the_function_argument(monkeypatch):
    """Without the MoleculeACE package the data check names `--set moleculeace_dir=PATH`
    (gs-data's message names its function argument `data_dir=`, which a suite has not)."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a, **k: None if name == "MoleculeACE" else real(name, *a, **k))
    name = next(n for n, c in gess.DATASETS.items() if c.family == "moleculeace")
    why = gess.data_problem(name, {})
    assert why is not None and "--set moleculeace_dir=PATH" in why and "data_dir=" not in why
    why = gess.data_problem(name, {"moleculeace_dir": "/nonexistent/ace"})
    assert why is not None and why.startswith("moleculeace_dir /nonexistent/ace is not a folder")


def test_track_par_label_draw_is_half_background_half_signal(kinds):
    """GeSS's code draws N/2 background and N/2 signal events for Track's Par-Label set
    (``pool_halves`` groups a Track pool by class); ``uniform`` keeps ours."""
    from types import SimpleNamespace

    import torch

    from gs_algos.finetune import choose_labeled_per_half

    pool = [SimpleNamespace(y=torch.tensor([int(i % 5 == 0)])) for i in range(40)]  # 8 signal
    halves = gess.pool_halves(None, {}, pool)
    idx = choose_labeled_per_half(halves, 10, 0)
    assert sorted(int(pool[i].y) for i in idx) == [0] * 5 + [1] * 5
    assert gess.pool_halves(None, {"par_label_draw": "uniform"}, pool) is None
    name, settings, _ = kinds["track"]
    assert gess.run_job(_job(name, "tl-2", settings))["par_label_draw"] == "gess"


def test_train_events_records_make_the_size_curve_and_stay_out_of_the_grid_tables(tmp_path):
    """Records of a learning-curve point (``train_events``) are left out of the dataset table,
    the findings and the epoch curves (they would enter ERM's mean), and make the size-curve
    table and figure, with GeSS's published value at its training size (SYNTHETIC values)."""
    full = [_record("track-pileup-pu50", "erm", 0.94, 0.77, seed=s) for s in (0, 1)]
    for r in full:
        r["metrics"]["sizes"]["train"] = 3054
    small = _record("track-pileup-pu50", "erm", 0.80, 0.55)
    small["job"]["settings"] = {"train_events": 750}
    out = gess.tables(full + [small])
    main = out[0]
    erm = [r for r in main.rows if r[1] == "erm"][0]
    assert erm[3] == "94.00 ± 0.00 (n=2)"  # the 750-event record is not in it (it would make n=3)
    size = out[-1]
    assert size.title.startswith("GeSS learning curve over training size")
    assert [r[3] for r in size.rows] == ["750", "3,054", "30,448"]
    assert size.rows[0][6].startswith("55.00") and size.rows[1][6].startswith("77.00")
    assert size.rows[2][2] == "erm (GeSS, table 3)" and size.rows[2][6] == "87.65 ± 0.30"
    figs = gess.figures(full + [small], tmp_path)
    assert "gess_size_curve.png" in [f.path for f in figs] and (tmp_path / "gess_size_curve.png").stat().st_size > 0
    assert gess.tables(full)[-1].title != size.title  # no train_events record: no size table


def test_the_size_points_share_one_report_section():
    """``train_events`` is a sweep setting of the gess runner: the report keeps its records in
    the section of the full-size ones (the size table needs both), while another setting still
    sets records apart; the same grid point and seed at two sizes is not a duplicate."""
    from gs_bench.report import split_by_settings

    full = _record("track-pileup-pu50", "erm", 0.94, 0.77)
    full["key"], full["job"]["suite"], full["job"]["settings"] = "a", "gess", {}
    small = _record("track-pileup-pu50", "erm", 0.80, 0.55)
    small["key"], small["job"]["suite"], small["job"]["settings"] = "b", "gess", {"train_events": 750}
    other = _record("track-pileup-pu50", "erm", 0.80, 0.55)
    other["key"], other["job"]["suite"], other["job"]["settings"] = "c", "gess", {"track_max_epochs": 5}
    assert gess.RUNNER.sweep_settings == ("train_events",)
    groups = split_by_settings([full, small, other], gess.RUNNER.sweep_settings)
    assert sorted(sorted(r["key"] for r in recs) for _, recs in groups) == [["a", "b"], ["c"]]
    assert len(split_by_settings([full, small])) == 2  # without the sweep: apart, as before


def test_another_learning_curve_point_in_the_folder_is_no_warning(tmp_path, capsys):
    """A size point run into the folder of another (README "gess medium profile") warned that
    the folder "already holds records of other settings" shown "in tables of their own", though
    train_events is a sweep setting and the report keeps the points in one curve."""
    import json as _json

    from gs_bench.run import warn_other_settings
    from gs_bench.store import ResultsStore
    from gs_bench.suites import load_suite

    committed = Path(__file__).resolve().parents[1] / "measured" / "gess-medium-protocol" / "ours" / "results.jsonl"
    rec = _json.loads(committed.read_text().splitlines()[0])  # a real record, as a template
    cfg = load_suite("gess", "demo").with_overrides(settings={"train_events": 6})
    rec["job"]["settings"] = {**cfg.settings, "train_events": 5}
    rec["key"] = rec["job"]["key"] = "k750"
    store = ResultsStore(tmp_path)
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "k750.json").write_text(_json.dumps(rec))
    params = rec["job"]["params"]
    jobs = [{"key": "k1500", "params": params, "seed": rec["job"]["seed"]}]
    assert len(list(store.records())) == 1
    assert warn_other_settings(store, cfg, jobs) == 0
    assert "warning" not in capsys.readouterr().err
    other = load_suite("gess", "demo").with_overrides(settings={"train_events": 6, "track_max_epochs": 3})
    assert warn_other_settings(store, other, jobs) == 1  # a real other setting still warns
    assert "already holds 1 gess record(s) of other settings" in capsys.readouterr().err


def test_a_job_stopped_part_way_resumes_at_its_next_epoch_with_the_same_record(kinds, tmp_path, monkeypatch):
    """A No-Info job of a run folder saves a checkpoint every epoch
    (``<workdir>/checkpoints/<key>``): killed after its first epoch (here: an exception at the
    second), the job run again resumes at that epoch and gives the record of a job never
    stopped (DANN: the method's state and the target batches resume too); the checkpoint is
    removed once the record is made."""
    from gs_algos.engine import loop

    name, settings, _ = kinds["track"]
    settings = {**settings, "test_scoring": "selected"}
    for algo in ("erm", "dann"):
        plain = gess.run_job({**_job(name, algo, settings), "workdir": str(tmp_path / "plain"), "key": algo})
        if algo == "erm":  # saving checkpoints changes nothing: the record of a job without any
            assert plain == gess.run_job(_job(name, algo, settings))
        work = tmp_path / "stopped"
        real = loop._Loop._train_epoch
        seen: list[int] = []

        def dies_at_second_epoch(self, epoch, *args, real=real):
            if epoch == 1:
                raise KeyboardInterrupt("the worker was killed")
            return real(self, epoch, *args)

        monkeypatch.setattr(loop._Loop, "_train_epoch", dies_at_second_epoch)
        with pytest.raises(KeyboardInterrupt):
            gess.run_job({**_job(name, algo, settings), "workdir": str(work), "key": algo})
        ckpt = work / "checkpoints" / algo / "last.pt"
        assert ckpt.is_file(), "no checkpoint after the first epoch"
        monkeypatch.setattr(loop._Loop, "_train_epoch", real)
        monkeypatch.setattr(loop._Loop, "_train_epoch",
                            lambda self, epoch, *a, real=real, seen=seen: seen.append(epoch) or real(self, epoch, *a))
        resumed = gess.run_job({**_job(name, algo, settings), "workdir": str(work), "key": algo})
        monkeypatch.setattr(loop._Loop, "_train_epoch", real)
        assert seen == [1], f"{algo}: the resumed job trained epochs {seen}, not only the second"
        assert resumed == plain, algo
        assert not (work / "checkpoints" / algo).exists()
