"""LeBed suite, domain shift: which grid points run, and one real ACDNE job end to end."""

from __future__ import annotations

import numpy as np
import pytest

from gs_bench.run import plan_jobs
from gs_bench.runners import lebed
from gs_bench.suites import SuiteConfigError, load_suite


def _config(tmp_path, datasets, shifts, extra=""):
    path = tmp_path / "lebed.toml"
    path.write_text(
        'suite = "lebed"\nseeds = 1\n[grid]\n'
        f"dataset = {datasets!r}\nshift = {shifts!r}\nmodel = [\"gcn\"]\n"
        f'[settings]\nroot = "shared"\n{extra}'.replace("'", '"')
    )
    return load_suite(str(path), "full")


def test_domain_shift_runs_only_from_a_domain_group(tmp_path, shared_datasets, monkeypatch):
    monkeypatch.setenv("GS_SHARED_DATA", str(shared_datasets))
    cfg = _config(tmp_path, ["synthetic-default", "acmv9"], ["feature", "domain"])
    jobs, _ = plan_jobs(cfg)
    assert sorted((j["params"]["dataset"], j["params"]["shift"]) for j in jobs) == [
        ("acmv9", "domain"),
        ("synthetic-default", "feature"),
    ]
    with pytest.raises(SuiteConfigError, match="source domain"):
        plan_jobs(_config(tmp_path, ["synthetic-default"], ["domain"]))
    with pytest.raises(SuiteConfigError, match="domain-shift group"):
        plan_jobs(_config(tmp_path, ["acmv9"], ["feature"]))


def test_domain_shift_job_on_real_acdne_graphs(shared_datasets):
    """ACMv9 source, test graphs from ACMv9 / Citationv1 / DBLPv7 (1 per domain and
    perturbation, a few training epochs): errors are true error rates, scores are finite."""
    job = {
        "params": {"dataset": "acmv9", "shift": "domain", "model": "gcn"},
        "settings": {"root": str(shared_datasets), "domain_graphs": 1, "max_epochs": 5,
                     "patience": 5, "pretrain_lr": 0.01, "lebed_max_steps": 5, "lebed_min_steps": 1},
        "seed": 0,
    }
    out = lebed.run_job(job)
    assert out["num_test_graphs"] == 3 * 4
    errors = np.asarray(out["errors"])
    assert ((errors >= 0) & (errors <= 1)).all() and errors.std() > 0
    for k in lebed.ESTIMATORS:
        assert len(out["scores"][k]) == 12 and np.isfinite(out["scores"][k]).all()
        assert -1 <= out[f"{k}_spearman"] <= 1
