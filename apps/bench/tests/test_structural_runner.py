"""The structural-shifts runner: named methods from gs-algos, runs per method, the
authors' split files, the generated protocol paragraph and the report's section order.
Training runs use the embedded SYNTHETIC default graph; the split-file test uses the real
files of ../shared/datasets (skipped when absent)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

from gs_bench.runners import structural
from gs_bench.suites import SuiteConfigError, load_suite


@pytest.mark.parametrize("name", ["cora-ml", "citeseer"])
@pytest.mark.parametrize("strategy", ["popularity", "locality", "density"])
def test_split_source_authors_gives_the_files_masks_exactly(shared_datasets, name, strategy):
    path = shared_datasets / "structural-shifts" / name / "splits" / f"{strategy}.pth"
    if not path.is_file():
        pytest.skip(f"{path} not on this machine")
    raw = torch.load(path, weights_only=True)
    settings = {"root": str(shared_datasets), "split_source": "authors"}
    data = structural._split(structural._load(name, settings),
                             {"dataset": name, "strategy": strategy, "ratio": "50:50"}, settings)
    for theirs, ours in (("train", "in_train"), ("valid_in", "in_valid"), ("test_in", "in_test"),
                         ("valid_out", "out_valid"), ("test_out", "out_test")):
        assert torch.equal(getattr(data, f"{ours}_mask"), raw[theirs].bool()), ours


def test_split_source_authors_is_validated_before_any_job(tmp_path):
    cfg = load_suite("structural-shifts", "ci").with_overrides(
        settings={"split_source": "authors", "root": str(tmp_path)}
    )
    with pytest.raises(SuiteConfigError):
        structural.validate(cfg)
    cfg = load_suite("structural-shifts", "full").with_overrides(
        settings={"split_source": "authors", "root": str(tmp_path)}, axes={"ratio": ["50:50"]})
    with pytest.raises(SuiteConfigError, match=r"none of the grid's 7 datasets has its files; the first: dataset 'cora-ml'"):
        structural.validate(cfg)
    # one dataset: its own reason, not a pointer to warnings
    with pytest.raises(SuiteConfigError, match=r"^dataset 'citeseer': "):
        structural.validate(cfg.with_overrides(axes={"dataset": ["citeseer"]}))
    # a ratio the authors did not publish is a suite error, found before (and without) the data
    cfg = load_suite("structural-shifts", "ci").with_overrides(
        settings={"split_source": "authors", "root": str(tmp_path / "absent")}, axes={"ratio": ["70:30"]})
    with pytest.raises(SuiteConfigError, match="50:50 splits only"):
        structural.validate(cfg)
    with pytest.raises(SuiteConfigError, match="split_source"):
        structural.validate(load_suite("structural-shifts", "ci").with_overrides(
            settings={"split_source": "theirs"}))


def test_ci_profile_has_the_twelve_methods_and_authors_runs():
    cfg = load_suite("structural-shifts", "ci")
    methods = set(cfg.grid["method"])
    # robustness: ERM, DANN, CORAL, EERM, Mixup, DE; uncertainty: SE (= ERM's jobs), GPN,
    # NatPN, DE, GPE, NatPE
    assert methods == {"erm", "dann", "coral", "eerm", "mixup", "de", "gpn", "natpn", "gpe", "natpe"}
    assert cfg.grid["dataset"] == ["cora-ml", "citeseer"] and cfg.grid["ratio"] == ["50:50"]
    assert cfg.grid["strategy"] == ["popularity", "locality", "density"]
    assert cfg.seeds == 3 and cfg.settings["protocol"] == "authors"
    s = cfg.settings
    assert structural.runs({"method": "erm", "dataset": "cora-ml"}, s, cfg.seeds) == 3
    assert structural.runs({"method": "de", "dataset": "cora-ml"}, s, cfg.seeds) == 1
    assert structural.runs({"method": "natpe", "dataset": "cora-ml"}, s, cfg.seeds) == 1
    # the authors' num_inits of gpn / natpn: 5 runs, the members GPE / NatPE combine
    assert structural.runs({"method": "gpn", "dataset": "cora-ml"}, s, cfg.seeds) == 5
    # ci budget: one run of the robustness methods other than ERM; the full profile keeps 3
    assert structural.runs({"method": "eerm", "dataset": "cora-ml"}, s, cfg.seeds) == 1
    full_s = load_suite("structural-shifts", "full").settings
    assert structural.runs({"method": "eerm", "dataset": "cora-ml"},
                           {**full_s, "skip_missing_datasets": False}, 3) == 3
    assert s["share_members"] is True
    full = load_suite("structural-shifts", "full")
    assert "random" in full.grid["strategy"] and full.grid["ratio"] == ["50:50", "70:30", "90:10"]
    assert structural.runs({"method": "erm", "dataset": "pubmed"},
                           {**full.settings, "root": "/nonexistent"}, 3) == 0


def test_single_models_are_planned_before_the_ensembles_that_reuse_them():
    jobs = structural.order_jobs([
        {"params": {"method": m}, "settings": {"ensemble_size": 5}}
        for m in ("de", "erm", "gpe", "eerm", "gpn", "natpe", "mixup")
    ])
    assert [j["params"]["method"] for j in jobs] == ["eerm", "erm", "gpn", "mixup", "de", "gpe", "natpe"]


def test_long_runs_finish_one_ratio_before_the_next():
    jobs = structural.order_jobs([
        {"params": {"method": m, "ratio": r}, "settings": {"ensemble_size": 5}}
        for r in ("50:50", "70:30") for m in ("de", "erm", "eerm")
    ])
    assert [(j["params"]["ratio"], j["params"]["method"]) for j in jobs] == [
        ("50:50", "eerm"), ("50:50", "erm"), ("50:50", "de"),
        ("70:30", "eerm"), ("70:30", "erm"), ("70:30", "de")]


def test_authors_where_published_reads_the_authors_masks_at_50_50_only(tmp_path):
    settings = {"split_source": "authors-where-published"}
    assert structural.uses_authors_masks(settings, "50:50")
    assert not structural.uses_authors_masks(settings, "70:30")
    assert structural.uses_authors_masks({"split_source": "authors"}, "90:10")
    assert not structural.uses_authors_masks({}, "50:50")
    # the other ratios need no authors' file: validation passes without one ...
    cfg = load_suite("structural-shifts", "ci").with_overrides(
        settings={"split_source": "authors-where-published"}, axes={"ratio": ["70:30"]})
    paper = load_suite("structural-shifts", "paper")
    assert paper.grid["ratio"] == ["50:50", "70:30", "90:10"] and "erm+mod" in paper.grid["method"]
    assert paper.settings["split_source"] == "authors-where-published"
    try:
        structural.validate(cfg)
    except SuiteConfigError as exc:  # only the datasets' raw files may be missing here
        assert "authors" not in str(exc), exc
    # ... but at 50:50 a missing authors' file is named
    cfg = load_suite("structural-shifts", "ci").with_overrides(
        settings={"split_source": "authors-where-published", "root": str(tmp_path)})
    with pytest.raises(SuiteConfigError):
        structural.validate(cfg)


def test_model_presets_follow_the_protocol():
    assert structural.model_preset("erm") == "structural-shifts-base"
    assert structural.model_preset("erm", "early-stop") == "structural-shifts-base-early-stop"
    assert structural.model_preset("se+mod") == "structural-shifts-mod"
    assert structural.model_preset("gpn", "early-stop") == "structural-shifts-gpn"




def test_tiny_run_uses_named_methods_and_writes_the_protocol(tmp_path, tiny_suite):
    import subprocess

    suite = tmp_path / "tiny.toml"
    suite.write_text(tiny_suite(strategies=("popularity",), methods=("erm", "de", "gpe"), max_epochs=4, ensemble_size=2))
    out = tmp_path / "out"
    res = subprocess.run([sys.executable, "-m", "gs_bench.cli", "run", str(suite), "--out", str(out),
                          "--no-progress"], capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stderr
    recs = [json.loads(p.read_text()) for p in sorted((out / "results").glob("*.json"))]
    by_method: dict[str, list] = {}
    for r in recs:
        by_method.setdefault(r["job"]["params"]["method"], []).append(r["metrics"])
    assert {k: len(v) for k, v in by_method.items()} == {"erm": 2, "de": 1, "gpe": 1}
    assert sorted(m["member_seeds"][0] for m in by_method["erm"]) == [43, 44]
    assert by_method["de"][0]["member_seeds"] == [43, 44]
    assert all(len(m["best_epochs"]) == 2 for m in by_method["de"] + by_method["gpe"])
    # shared members: DE loaded the two ERM runs (same seeds), so 2 ERM + 2 GPN members
    # were trained, not 6, and DE's members restored the ERM runs' epochs
    assert len(list((out / "members").glob("*.pt"))) == 4
    erm_epochs = {m["member_seeds"][0]: m["best_epochs"][0] for m in by_method["erm"]}
    assert by_method["de"][0]["best_epochs"] == [erm_epochs[43], erm_epochs[44]]
    assert all(m["protocol"] == "authors" and m["split_source"] == "seeded" for v in by_method.values() for m in v)
    text = (out / "report" / "report.md").read_text()
    assert "**Protocol (authors).**" in text and "4 epochs, no early stopping" in text
    assert "lowest loss on Valid-In (the validation nodes of the ID part)" in text and "conv → GELU → batch norm" in text
    assert "Training as in the paper authors' code (protocol = \"authors\")" in text
    assert "DE 1 run of 2 members, seeds 43–44" in text
    assert "ID and" in text and "OOD nodes" in text  # split picture caption with the counts


def test_report_sections_follow_the_papers_order(tmp_path, monkeypatch):
    from gs_bench import report
    from gs_bench.runner import SuiteRunner
    from gs_bench.store import ResultsStore

    def Fake(suite):  # a runner with the required hooks only: the optional ones default
        return SuiteRunner(name=suite, module=__name__, Grid=structural.Grid, Settings=structural.Settings,
                           validate=lambda config: {}, run_job=lambda job: {},
                           tables=lambda recs: [report.Table(f"table of {suite}", ["a"], [["1"]])])

    store = ResultsStore(tmp_path)
    store.root.mkdir(parents=True, exist_ok=True)
    for i, suite in enumerate(["gess", "edgewise", "lebed", "structural-shifts"]):
        rec = {"key": f"k{i}", "status": "ok", "job": {"suite": suite, "params": {}, "settings": {}, "seed": 0},
               "metrics": {}}
        (tmp_path / "results").mkdir(exist_ok=True)
        (tmp_path / "results" / f"k{i}.json").write_text(json.dumps(rec))
    monkeypatch.setattr("gs_bench.runners.load_runner", Fake)
    text = Path(report.build_report(tmp_path)).read_text()
    pos = [text.index(f"## {s}") for s in ("structural-shifts", "edgewise", "lebed", "gess")]
    assert pos == sorted(pos)


def _rec(dataset, ratio, method, strategy, seed, **metrics):
    base = {"id_acc": 0.8, "ood_acc": 0.7, "drop": -0.125, "ood_auroc": 0.75}
    base.update(metrics)
    return {"key": f"{dataset}{ratio}{method}{strategy}{seed}", "status": "ok",
            "job": {"suite": "structural-shifts", "seed": seed, "settings": {},
                    "params": {"dataset": dataset, "ratio": ratio, "method": method, "strategy": strategy}},
            "metrics": base}


def test_paper_values_beside_cells_for_every_ratio():
    recs = [_rec("cora-ml", r, m, "popularity", s) for r in ("50:50", "70:30") for m in ("erm", "de")
            for s in range(2)]
    text = "\n".join(t.to_markdown() for t in structural.tables(recs))
    # Table 9 (ERM popularity ID 85.80), Table 16 (DE popularity 70.55), Table 1 / Table 4 rows
    assert "80.00 ± 0.00 (n=2) (paper 85.80, Δ -5.80; SS Table 9)" in text
    assert "75.00 ± 0.00 (n=2) (paper 70.55, Δ +4.45; SS Table 16)" in text
    assert "-12.50 % (n=2) (paper -3.94, Δ -8.56; SS Table 1)" in text
    assert "-12.50 % (n=2) (paper -7.56, Δ -4.94; SS Table 4)" in text
    assert "75.00 (n=2) (paper 82.06, Δ -7.06; SS Table 4)" in text


def test_ood_tables_score_single_dirichlet_models_by_mutual_information():
    """The authors' single GPN / NatPN score OOD by knowledge uncertainty (mutual
    information); their ensembles by minus alpha_0: the table reads the matching record field."""
    rec = {"metrics": {"ood_auroc": 0.6, "ood_auroc_knowledge": 0.8}}
    assert structural._ood_auroc(rec, "gpn") == 0.8
    assert structural._ood_auroc(rec, "natpn") == 0.8
    assert structural._ood_auroc(rec, "gpe") == 0.6
    assert structural._ood_auroc(rec, "de") == 0.6
    assert structural._ood_auroc({"metrics": {"ood_auroc": 0.7}}, "gpn") == 0.7


def test_off_cells_lists_exactly_the_cells_further_than_five_points_from_the_paper():
    # CoraML popularity, paper: ERM 85.80 / 82.42 (Table 9), SE 75.67 (Table 16), DE AUROC 70.55;
    # Mixup has no AUROC row, ERM's AUROC is reported as SE
    recs = [_rec("cora-ml", "50:50", "erm", "popularity", s, id_acc=0.86, ood_acc=0.70, ood_auroc=0.76)
            for s in range(2)]
    recs += [_rec("cora-ml", "50:50", "de", "popularity", 0, id_acc=0.87, ood_acc=0.827, ood_auroc=0.80)]
    recs += [_rec("cora-ml", "50:50", "mixup", "popularity", 0, id_acc=0.80)]
    recs += [_rec("cora-ml", "70:30", "erm", "popularity", 0, ood_acc=0.1)]  # no paper cell
    cells = structural.paper_cells(recs)
    # ERM: ID, OOD, SE AUROC; DE: ID, OOD, AUROC; Mixup: ID, OOD (no AUROC row)
    assert len(cells) == 8
    off = {(c["method"], c["metric"]): round(c["delta"], 2) for c in structural.off_cells(recs)}
    assert off == {("erm", "ood_acc"): -12.42, ("de", "ood_auroc"): 9.45, ("mixup", "id_acc"): -9.27,
                   ("mixup", "ood_acc"): -13.65}
    text = "\n".join(t.to_markdown() for t in structural.tables(recs))
    assert "Cells more than 5 points from the paper (4 of 8 cells with a paper value)" in text


def test_robustness_variant_and_domain_scope_settings(tmp_path, monkeypatch):
    """DANN / CORAL / Mixup / EERM train GOOD's formulations by default, with the domains cut
    over the training nodes; ``robustness_variant = "ours-v1"`` alone restores the earlier
    formulation and domains; bad values are refused before any job."""
    import numpy as np

    monkeypatch.setenv("GS_DATA_ROOT", str(tmp_path))  # the split cache
    cfg = load_suite("structural-shifts", "ci")
    assert structural.domain_scope(cfg.settings) == "in_train"
    assert structural.domain_scope({"robustness_variant": "ours-v1"}) == "all"
    assert structural.domain_scope({"robustness_variant": "ours-v1", "domain_scope": "in_train"}) == "in_train"
    for bad in ({"robustness_variant": "theirs"}, {"domain_scope": "train"}):
        with pytest.raises(SuiteConfigError):
            structural.validate(load_suite("structural-shifts", "demo").with_overrides(settings=bad))
    # the job's split: 10 domains over the training nodes (50:50, seeded split, synthetic graph)
    params = {"dataset": "synthetic-default", "strategy": "popularity", "ratio": "50:50"}
    data = structural._split(structural._load("synthetic-default", {}), params, {})
    counts = np.bincount(data.domain[data.in_train_mask].numpy(), minlength=10)
    assert counts.size == 10 and counts.max() - counts.min() <= 1
    old = structural._split(structural._load("synthetic-default", {}), params,
                            {"robustness_variant": "ours-v1"})
    assert set(old.domain[old.in_train_mask].tolist()) == {0, 1, 2, 3, 4}
    # the job asks gs-algos for the variant of the setting
    import gs_algos.node_methods as nm

    asked = []
    real = nm.node_method

    def spy(name, k=5, robustness_variant="good"):
        asked.append((name, robustness_variant))
        raise RuntimeError("stop")

    monkeypatch.setattr(nm, "node_method", spy)
    for settings in ({}, {"robustness_variant": "ours-v1"}):
        with pytest.raises(RuntimeError, match="stop"):
            structural.run_job({"params": {**params, "method": "dann"}, "settings": settings, "seed": 0})
    assert asked == [("dann", "good"), ("dann", "ours-v1")]
    monkeypatch.setattr(nm, "node_method", real)


def test_robustness_framework_good_trains_goods_gcn_with_goodcora_training(tmp_path, monkeypatch):
    """``robustness_framework = "good"``: DANN / CORAL / Mixup / EERM get GOOD's GCN
    (``good-gcn``: 3 x 300, ReLU, dropout 0.5) and GOOD's GOODCora training (lr 1e-3, no
    weight decay, 100 epochs; EERM lr 5e-3, 50 epochs; best Valid-In accuracy); ERM and the
    others keep the paper's; "paper" keeps everything as before; a bad value stops the suite."""
    import gs_algos.node_methods as nm

    monkeypatch.setenv("GS_DATA_ROOT", str(tmp_path))
    with pytest.raises(SuiteConfigError, match="robustness_framework"):
        structural.validate(load_suite("structural-shifts", "demo").with_overrides(
            settings={"robustness_framework": "goods"}))
    structural.validate(load_suite("structural-shifts", "demo").with_overrides(
        settings={"robustness_framework": "good"}))
    seen = []

    class Spy:
        def fit(self, build, data, cfg, **kw):
            model = build()
            seen.append((model.config.hidden_channels, model.config.activation, model.config.dropout,
                         cfg.lr, cfg.weight_decay, cfg.max_epochs, cfg.metric, cfg.patience))
            raise RuntimeError("stop")

    monkeypatch.setattr(nm, "node_method", lambda *a, **k: Spy())
    params = {"dataset": "synthetic-default", "strategy": "popularity", "ratio": "50:50"}
    for method, framework in (("dann", "good"), ("eerm", "good"), ("erm", "good"), ("dann", "paper")):
        with pytest.raises(RuntimeError, match="stop"):
            structural.run_job({"params": {**params, "method": method},
                                "settings": {"robustness_framework": framework}, "seed": 0})
    assert seen == [
        (300, "relu", 0.5, 1e-3, 0.0, 100, "accuracy", None),   # DANN in GOOD's framework
        (300, "relu", 0.5, 5e-3, 0.0, 50, "accuracy", None),    # EERM: GOOD's EERM.yaml
        (256, "gelu", 0.2, 3e-4, 1e-5, 200, "loss", None),      # ERM is not a GOOD method
        (256, "gelu", 0.2, 3e-4, 1e-5, 200, "loss", None),      # "paper": as before
    ]
    # the protocol paragraph says which framework the robustness rows were trained in
    rec = {"job": {"params": {**params, "method": "dann"}, "seed": 0,
                   "settings": {"robustness_framework": "good"}},
           "metrics": {"member_seeds": [0]}}
    assert "trained in GOOD's framework" in " ".join(structural.paragraphs([rec]))


def _run_option(dest):
    from gs_bench.cli import _build_parser

    sub = next(a for a in _build_parser()._actions if a.dest == "command")
    return next(a for a in sub.choices["run"]._actions if a.dest == dest)


def test_robustness_variant_values_and_default_are_gs_algos_names():
    """Issue 31: the values of ``robustness_variant`` are written once,
    :data:`gs_algos.names.ROBUSTNESS_VARIANTS` (``tests/test_one_definition.py`` finds the one
    literal); the suite's ``Settings`` and the CLI's choices read that tuple, and the default is
    the ``Settings`` field's (the CLI's is None: the suite's setting)."""
    import dataclasses

    from gs_algos import names

    field = {f.name: f for f in dataclasses.fields(structural.Settings)}["robustness_variant"]
    assert field.metadata["allowed"] is names.ROBUSTNESS_VARIANTS
    assert field.default == names.DEFAULT_ROBUSTNESS_VARIANT == structural.Settings().robustness_variant
    option = _run_option("robustness_variant")
    assert option.choices is names.ROBUSTNESS_VARIANTS and option.default is None
    # the suite's own choices, offered by the CLI too, are gs_bench.names' (light for --help)
    for key in ("split_source", "robustness_framework"):
        field = {f.name: f for f in dataclasses.fields(structural.Settings)}[key]
        assert _run_option(key).choices is field.metadata["allowed"] and _run_option(key).default is None


def test_settings_values_are_checked_by_the_schema_and_read_typed():
    """A bad value of a setting with accepted values stops ``load_suite`` / ``--set`` (before
    issue 31 only ``validate`` saw it); the job and the report read the typed settings, whose
    training changes are those of the settings dict before (lr and weight decay always, the
    epochs and patience where set)."""
    cfg = load_suite("structural-shifts", "demo")
    for key, bad in (("protocol", "ours"), ("split_source", "theirs"), ("robustness_variant", "v2"),
                     ("robustness_framework", "goods"), ("domain_scope", "train")):
        with pytest.raises(SuiteConfigError, match=f"unknown {key} '{bad}'; accepted: "):
            cfg.with_overrides(settings={key: bad})
    st = structural.Settings.from_config(cfg)
    assert st.train_changes() == {"lr": 1e-3, "weight_decay": 1e-5, "max_epochs": 80}
    assert structural.Settings().train_changes() == {"lr": 3e-4, "weight_decay": 1e-5}
    from gs_algos.config import TrainConfig

    assert (TrainConfig.structural_shifts("authors", **structural.Settings().train_changes())
            == TrainConfig.structural_shifts("authors"))
    # the planning hooks take the settings dict of a job, or the typed object
    assert structural.max_runs(cfg.settings, 1) == structural.max_runs(st, 1) == 5  # posterior_runs
    assert structural.max_runs({}, 3) == 3 and structural.max_runs({"robustness_runs": 4}, 3) == 4


def test_member_cache_tag_follows_the_preset_config(tmp_path, monkeypatch):
    """A preset changed in the code (issue 30: the "+mod" SAGE of the authors) gets a new
    member-cache tag, so a run resumed after the change retrains its members instead of
    loading those of the old model; an unchanged preset keeps its tag."""
    import dataclasses

    import gs_models.registry as reg
    from gs_bench.runners.structural.job import member_cache

    job = {"suite": "structural-shifts", "seed": 0, "workdir": str(tmp_path),
           "params": {"dataset": "synthetic-default", "strategy": "popularity", "ratio": "50:50",
                      "method": "erm+mod"},
           "settings": {"share_members": True}}
    before = member_cache(job, "structural-shifts-mod").tag
    assert member_cache(job, "structural-shifts-mod").tag == before
    name, cfg, train = reg._PRESETS["structural-shifts-mod"]
    monkeypatch.setitem(reg._PRESETS, "structural-shifts-mod",
                        (name, dataclasses.replace(cfg, sage_self_loops=not cfg.sage_self_loops), train))
    assert member_cache(job, "structural-shifts-mod").tag != before


def test_protocol_paragraph_counts_runs_members_and_seeds_in_words():
    from gs_bench.runners.structural.report import _runs_text, _seeds_text

    assert _runs_text(1, 1) == "1 run" and _runs_text(3, 1) == "3 runs"
    assert _runs_text(1, 5) == "1 run of 5 members" and _runs_text(2, 5) == "2 runs of 5 members"
    assert _seeds_text([43]) == "seed 43"  # it said "seeds 43–43"
    assert _seeds_text([43, 44, 45]) == "seeds 43–45"
    assert _seeds_text([43, 45]) == "seeds 43, 45"  # not a range: no dash that hides the gap


def test_datasets_without_files_are_skipped_in_one_warning(shared_datasets, tmp_path, caplog):
    """The paper profile on a machine with two of its seven datasets: one warning names the
    five it skips (it was a warning per dataset), and no warning when it then has none at all."""
    import logging

    root = tmp_path / "root"
    (root / "structural-shifts").mkdir(parents=True)
    for name in ("cora-ml", "citeseer"):
        (root / "structural-shifts" / name).symlink_to(shared_datasets / "structural-shifts" / name)
    cfg = load_suite("structural-shifts", "paper").with_overrides(
        settings={"root": str(root), "split_source": "seeded"})
    with caplog.at_level(logging.WARNING, logger="gs_bench.runners.structural"):
        fingerprints = structural.validate(cfg)
    warnings = [r.getMessage() for r in caplog.records if "skipping" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].startswith("skipping 5 of 7 datasets without their files")
    assert "pubmed" in warnings[0] and "cora-ml" not in warnings[0].split("the first:")[0]
    assert len(fingerprints) == 2, fingerprints
