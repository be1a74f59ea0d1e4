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


def test_a_grid_of_several_shifts_drops_the_domain_points_without_a_source(tmp_path):
    """The ci grid (feature + domain) narrowed to a feature-shift dataset, as
    ``gs-bench run lebed --profile ci --datasets planetoid-cora`` does: the feature jobs run,
    the domain points are left out (they refused to start before)."""
    jobs, _ = plan_jobs(_config(tmp_path, ["synthetic-default"], ["feature", "domain"]))
    assert {(j["params"]["dataset"], j["params"]["shift"]) for j in jobs} == {("synthetic-default", "feature")}


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


def test_domain_mix_rho_separates_the_source_from_the_targets():
    """Synthetic scores: rising with the error on the 16 target graphs, falling on the 6 source
    graphs. Each part gives its own sign; the authors' mix (41:328, so 2 source graphs beside
    16 targets) sits near the targets, the equal-thirds run far below."""
    from scipy.stats import spearmanr

    from gs_bench.runners.lebed.report import domain_mix_rho

    err_t = np.linspace(0.3, 0.6, 16)
    err_s = np.linspace(0.1, 0.4, 6)
    errors = np.r_[err_s, err_t]
    scores = np.r_[20 - 10 * err_s, 5 + 10 * err_t]
    is_src = [True] * 6 + [False] * 16
    d = domain_mix_rho(scores, errors, is_src, +1)
    assert d["source"] == pytest.approx(-1.0)
    assert d["target"] == pytest.approx(1.0)
    assert d["k"] == 2
    whole = spearmanr(errors, scores).statistic
    assert whole < d["mix"] < 1.0
    assert d["mix"] - whole > 0.2
    # a falling score (orientation -1) flips every part
    e = domain_mix_rho(-scores, errors, is_src, -1)
    assert (e["source"], e["target"]) == pytest.approx((d["source"], d["target"]))
    # too few graphs in a part: NaN, not a number from 2 points
    f = domain_mix_rho(scores[4:], errors[4:], is_src[4:], +1)
    assert np.isnan(f["source"]) and f["target"] == pytest.approx(1.0)


def test_the_report_draws_the_domain_table_for_domain_shift_records_only():
    from gs_bench.runners.lebed.report import tables
    from gs_bench.runners.lebed.spec import ESTIMATORS

    rng = np.random.default_rng(0)

    def record(dataset, shift, groups):
        n = len(groups)
        errors = rng.uniform(0.2, 0.6, n).tolist()
        scores = {k: rng.uniform(0, 1, n).tolist() for k in ESTIMATORS}
        return {"status": "ok", "job": {"params": {"dataset": dataset, "shift": shift, "model": "gcn", "shard": 0},
                        "seed": 0},
                "metrics": {"errors": errors, "scores": scores, "groups": groups,
                            "perturbations": ["feature_noise"] * n, "lebed_stop_steps": [6] * n,
                            "lebed_stopped_early": 1.0, "num_test_graphs": n, "set_size": n}}

    dom = record("acmv9", "domain", ["acmv9"] * 4 + ["citationv1"] * 4 + ["dblpv7"] * 4)
    feat = record("planetoid-cora", "feature", [str(i) for i in range(12)])
    titles = [t.title for t in tables([dom, feat])]
    assert any("by test domain" in t for t in titles)
    mix = next(t for t in tables([dom, feat]) if "by test domain" in t.title)
    assert {r[0] for r in mix.rows} == {"acmv9 / GCN / seed 0"}
    assert mix.rows[0][3].endswith("(4)") and mix.rows[0][4].endswith("(8)")
    assert not any("by test domain" in t.title for t in tables([feat]))


def test_bootstrap_interval_of_rho_holds_the_estimate_and_narrows_with_graphs():
    """200 graphs with a strong monotone relation: a narrow interval around rho, above 0.8;
    6 graphs of unrelated scores: a wide interval across 0. Orientation -1 mirrors it."""
    from scipy.stats import spearmanr

    from gs_bench.runners.lebed.report import bootstrap_interval

    rng = np.random.default_rng(1)
    err = rng.uniform(0, 1, 200)
    sc = err + rng.normal(0, 0.1, 200)
    lo, hi = bootstrap_interval(sc, err, +1)
    rho = spearmanr(sc, err).statistic
    assert lo < rho < hi and lo > 0.8 and hi - lo < 0.1
    assert bootstrap_interval(-sc, err, -1) == pytest.approx((lo, hi))
    lo6, hi6 = bootstrap_interval(rng.uniform(0, 1, 6), rng.uniform(0, 1, 6), +1)
    assert lo6 < 0 < hi6 and hi6 - lo6 > 0.8
    # the authors' mix: target graphs resampled, k source graphs drawn beside them
    is_src = [True] * 20 + [False] * 180
    mlo, mhi = bootstrap_interval(sc, err, +1, is_src, source_graphs=22)
    assert mlo > 0.8 and mhi <= 1.0
    assert np.isnan(bootstrap_interval(sc[:2], err[:2], +1)[0])


def test_induced_subgraph_is_networkx_subgraph_relabelled():
    """The domain pre-training graphs: the subgraph a mask induces, against networkx's."""
    import networkx as nx
    import torch
    from torch_geometric.data import Data

    from gs_bench.runners.lebed.job import induced_subgraph

    rng = np.random.default_rng(3)
    n = 40
    g_nx = nx.gnm_random_graph(n, 120, seed=3, directed=True)
    ei = torch.tensor(list(g_nx.edges()), dtype=torch.long).t()
    g = Data(x=torch.from_numpy(rng.normal(size=(n, 5))).float(), edge_index=ei,
             y=torch.from_numpy(rng.integers(0, 3, n)))
    mask = torch.from_numpy(rng.random(n) < 0.6)
    sub = induced_subgraph(g, mask)
    kept = np.flatnonzero(mask.numpy())
    new_id = {int(old): i for i, old in enumerate(kept)}
    want = sorted((new_id[u], new_id[v]) for u, v in g_nx.subgraph(kept.tolist()).edges())
    assert sorted(map(tuple, sub.edge_index.t().tolist())) == want
    assert sub.num_nodes == len(kept)
    assert torch.equal(sub.x, g.x[mask]) and torch.equal(sub.y, g.y[mask])


def test_domain_pretraining_settings_follow_the_authors_domain_script():
    """lr / weight decay: pretrain_gnn_domain.py's defaults for the domain shift, the
    pretrain-lebed.py ones for the others; a bad domain_pretrain names what is accepted."""
    from gs_bench.runners.lebed.job import pretrain_settings
    from gs_bench.runners.lebed.spec import Settings

    st = Settings()
    assert st.domain_pretrain == "induced"
    assert pretrain_settings({"shift": "domain"}, st) == (3e-3, 5e-4)
    assert pretrain_settings({"shift": "feature"}, st) == (1e-3, 5e-4)
    assert pretrain_settings({"shift": "temporal"}, Settings(pretrain_lr=0.02)) == (0.02, 5e-4)
    with pytest.raises(ValueError, match="domain_pretrain 'whole'.*induced, masks"):
        Settings(domain_pretrain="whole")


def test_domain_pretraining_graphs_are_induced_by_the_source_masks(shared_datasets):
    """``domain_pretrain = "induced"``: the train / validation graphs are the ACMv9 subgraphs
    of the runner's train / validation nodes, no edge leaves them, every node is used;
    ``"masks"`` keeps the whole source graph with its masks."""
    from gs_bench.runners.lebed.job import test_graph_set

    params = {"dataset": "acmv9", "shift": "domain", "model": "gcn"}
    base = {"root": str(shared_datasets), "domain_graphs": 1}
    graphs, g, tr, vg, va = test_graph_set(params, {**base, "domain_pretrain": "masks"})
    src = graphs.train
    assert g is src and vg is src and tr is src.train_mask and va is src.val_mask
    assert int(tr.sum()) + int(va.sum()) == src.num_nodes and not (tr & va).any()
    _, g2, tr2, vg2, va2 = test_graph_set(params, base)  # the default: induced
    assert tr2 is None and bool(va2.all()) and va2.numel() == vg2.num_nodes
    for sub, mask in ((g2, src.train_mask), (vg2, src.val_mask)):
        assert sub.num_nodes == int(mask.sum())
        assert sub.y.tolist() == src.y[mask].tolist()
        inside = mask[src.edge_index[0]] & mask[src.edge_index[1]]
        assert sub.edge_index.shape[1] == int(inside.sum()) < src.edge_index.shape[1]


def test_the_report_names_each_records_pre_training():
    """From the settings the job stored: a domain-shift record from before domain_pretrain
    is named as the masks protocol, not as today's default."""
    from gs_bench.runners.lebed.report import pretraining_of

    def rec(shift, **st):
        return {"job": {"params": {"shift": shift}, "settings": st}}

    assert "induced" in pretraining_of(rec("domain", domain_pretrain="induced", domain_pretrain_lr=3e-3))
    assert "lr 0.003" in pretraining_of(rec("domain", domain_pretrain="induced", domain_pretrain_lr=3e-3))
    old = pretraining_of(rec("domain", pretrain_lr=1e-3))
    assert "masks" in old and "before domain_pretrain" in old and "lr 0.001" in old
    assert pretraining_of(rec("feature", pretrain_lr=0.02)).startswith("Adam lr 0.02,")
