"""Adding a split strategy, a dataset, a model, a method and a metric: one registration call each.

Issue 20's acceptance test, and the code the "Where does my change go" table of
``docs/architecture.md`` shows. Every toy below is added through its package's public
registration function only (no monkeypatching, no edit of another file) and then used end to
end through the consumers that read that registry: the ``gs-splits`` CLI, ``gs_data.load``,
``make_split`` and ``StructuralNodeSplit``, gs-algos' method tables and training engine,
gs-metrics' look-up, and gs-bench's structural-shifts suite (validation, planning and one job
run in this process). If a consumer kept its own list of names, these tests would fail until
that second file were edited too. Each registration is removed again by its fixture.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_geometric")

STRATEGY = "toy-node-id"
DATASET = "toy-two-rings"
METHOD = "toy-flooding"
METRIC = "toy-error-rate"
MODEL = "toy-linear"


# --------------------------------------------------------------------- the four toys
def node_id_property(graph, rng):
    """A toy split strategy: the node id is the property (largest ids are ID)."""
    return np.arange(graph.num_nodes, dtype=np.float64)


def read_two_rings(root):
    """A toy dataset: two rings of 20 nodes, one per class, with class-revealing features."""
    from gs_data import RawGraph

    n = 40
    src = np.arange(n)
    dst = np.where(src % 20 == 19, src - 19, src + 1)
    edges = np.concatenate([np.stack([src, dst]), np.stack([dst, src])], axis=1)
    y = (src >= 20).astype(np.int64)
    x = np.eye(2, dtype=np.float32)[y] + np.random.default_rng(0).normal(0, 0.1, (n, 2)).astype(np.float32)
    return RawGraph(np.unique(edges, axis=1).astype(np.int64), x, y, {}, {"format": "toy"})


def error_rate(outputs, target):
    """A toy metric: 1 - accuracy of class scores (n, C)."""
    return float(np.mean(np.asarray(outputs).argmax(1) != np.asarray(target)))


@dataclass(frozen=True)
class LinearConfig:
    """Hyperparameters of the toy model (the paper's settings would be the defaults)."""

    bias: bool = True


class Linear(torch.nn.Module):
    """A toy model: one linear layer on the node features; ``(embeddings, outputs)``."""

    def __init__(self, in_channels: int, out_channels: int, config: LinearConfig):
        super().__init__()
        self.config = config
        self.lin = torch.nn.Linear(in_channels, out_channels, bias=config.bias)

    def forward(self, x, edge_index):
        return x, self.lin(x)


@pytest.fixture
def toy_model():
    from gs_models import register_model, unregister_model

    register_model(MODEL, LinearConfig, Linear)
    yield MODEL
    unregister_model(MODEL)


@pytest.fixture
def toy_strategy():
    from gs_splits import register_strategy, unregister_strategy

    register_strategy(STRATEGY, node_id_property, "the node id (a toy)")
    yield STRATEGY
    unregister_strategy(STRATEGY)


@pytest.fixture
def toy_dataset():
    from gs_data import DatasetSpec, register_dataset, unregister_dataset

    register_dataset(DatasetSpec(name=DATASET, title="two rings (a toy)", raw_files=(),
                                 reader=read_two_rings, where="built in memory"))
    yield DATASET
    unregister_dataset(DATASET)


@pytest.fixture
def toy_method():
    from gs_algos.methods import Method
    from gs_algos.registry import register_method, unregister_method

    class Flooding(Method):
        """A toy method: flooding (Ishida et al. 2020) of the mean loss at level 0.1."""

        name = METHOD

        def training_loss(self, model, batch, epoch):
            _, out = batch.forward(model)
            loss = (batch.losses(out).mean() - 0.1).abs() + 0.1
            return loss, {"loss": float(loss.detach())}

    register_method(METHOD, Flooding)
    yield Flooding
    unregister_method(METHOD)


@pytest.fixture
def toy_metric():
    from gs_metrics import register_metric, unregister_metric

    register_metric(METRIC, error_rate, tasks=("multiclass",), higher_is_better=False)
    yield METRIC
    unregister_metric(METRIC)


# --------------------------------------------------------------------- one test per toy
def test_a_registered_strategy_reaches_the_split_the_cli_and_gs_data(toy_strategy, tmp_path, capsys):
    import gs_data
    from gs_data.pyg import StructuralNodeSplit, structural_strategies
    from gs_splits import available_strategies, structural_split
    from gs_splits.cli import main

    assert toy_strategy in available_strategies() and toy_strategy in structural_strategies()
    edges = np.array([[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 5, 6, 7, 8, 9, 0]])
    split = structural_split(edges, toy_strategy, sizes=(0.3, 0.1, 0.1, 0.1, 0.4), seed=0)
    assert split.metadata["strategy"] == toy_strategy
    assert split.indices("out_test").tolist() == [0, 1, 2, 3]  # smallest ids: most shifted

    # the CLI: listed in --help, accepted by --strategy
    with pytest.raises(SystemExit):
        main(["make", "--help"])
    assert toy_strategy in capsys.readouterr().out
    graph = tmp_path / "ring.txt"
    graph.write_text("\n".join(f"{u} {v}" for u, v in edges.T) + "\n")
    assert main(["make", str(graph), "--strategy", toy_strategy, "--out", str(tmp_path / "s")]) == 0
    assert json.loads((tmp_path / "s.json").read_text())["strategy"] == toy_strategy

    # gs-data: make_split and the PyG transform
    data = gs_data.load("synthetic-default")
    out = gs_data.make_split(data, toy_strategy, cache_dir=tmp_path / "cache")
    assert out.split_metadata["strategy"] == toy_strategy
    assert int(StructuralNodeSplit(toy_strategy)(data.clone()).in_train_mask.sum()) > 0


def test_a_registered_dataset_loads_and_splits(toy_dataset, toy_strategy):
    import gs_data

    assert toy_dataset in gs_data.available_datasets()
    data = gs_data.load(toy_dataset)
    assert (data.num_nodes, data.x.shape[1], data.name) == (40, 2, toy_dataset)
    assert data.provenance["dataset"] == toy_dataset
    assert gs_data.graph_stats(data)["edges_undirected"] == 40
    split = gs_data.make_split(data, toy_strategy, sizes="50:50", use_cache=False)
    assert int(split.out_test_mask.sum()) == 16


def test_a_registered_model_is_built_and_trained(toy_model, toy_dataset):
    import gs_data
    from gs_algos.config import TrainConfig
    from gs_algos.engine import fit_node
    from gs_models import available_models, build_model

    assert toy_model in available_models()
    model = build_model(toy_model, 2, 2, bias=False)
    assert isinstance(model, Linear) and model.lin.bias is None
    data = gs_data.make_split(gs_data.load(toy_dataset), "random", sizes="50:50", use_cache=False)
    res = fit_node(model, data, None, TrainConfig(lr=0.1, max_epochs=5, device="cpu"))
    assert 0.0 <= res.best.metrics["in_valid"]["accuracy"] <= 1.0


def test_a_registered_method_and_metric_train_a_model(toy_method, toy_metric, toy_dataset):
    import gs_data
    from gs_algos.config import TrainConfig
    from gs_algos.engine import fit_node
    from gs_algos.methods import METHODS
    from gs_algos.node_methods import node_method
    from gs_algos.registry import available_methods
    from gs_metrics import available_metrics, get_metric
    from gs_models import build_model

    assert METHODS[toy_method.name] is toy_method and toy_method.name in available_methods("node")
    assert node_method(toy_method.name).name == toy_method.name
    assert toy_metric in available_metrics("multiclass") and toy_metric not in available_metrics("binary")
    assert get_metric(toy_metric)(np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([1, 1])) == 0.5

    data = gs_data.make_split(gs_data.load(toy_dataset), "random", sizes="50:50", use_cache=False)
    model = build_model("gcn", 2, 2, hidden_channels=8, num_layers=2)
    cfg = TrainConfig(lr=0.05, max_epochs=5, metric=toy_metric, device="cpu")
    assert not cfg.higher_is_better  # the direction comes from gs-metrics' registry
    res = fit_node(model, data, METHODS[toy_method.name](), cfg)
    assert 0.0 <= res.best.metrics["in_valid"][toy_metric] <= 1.0
    with pytest.raises(ValueError, match="does not apply to binary"):
        TrainConfig(metric=toy_metric, task="binary")


def test_gs_bench_accepts_and_runs_the_registered_names(toy_strategy, toy_dataset, toy_method,
                                                       tmp_path, monkeypatch):
    from gs_bench.run import plan_jobs
    from gs_bench.runners import structural
    from gs_bench.suites import SuiteConfigError, load_suite

    monkeypatch.chdir(tmp_path)
    suite = tmp_path / "toy.toml"
    suite.write_text("\n".join([
        'suite = "structural-shifts"', "seeds = 1", "[grid]", f'dataset = ["{toy_dataset}"]',
        f'strategy = ["{toy_strategy}"]', 'ratio = ["50:50"]', f'method = ["{toy_method.name}"]',
        "[settings]", "max_epochs = 3"]) + "\n")
    jobs, _ = plan_jobs(load_suite(str(suite)))
    assert [j["params"]["method"] for j in jobs] == [toy_method.name]
    metrics = structural.run_job({**jobs[0], "workdir": str(tmp_path)})
    assert 0.0 <= metrics["id_acc"] <= 1.0
    record = {"status": "ok", "job": jobs[0], "metrics": metrics}
    text = "\n".join(t.to_markdown() for t in structural.tables([record]))
    assert toy_method.name in text and toy_strategy in text
    # the gess suite (graph level) accepts it as an algorithm too
    from gs_bench.runners import gess

    assert toy_method.name in gess.algorithm_names()
    with pytest.raises(SuiteConfigError, match="unknown strategy"):
        structural.validate(load_suite(str(suite)).with_overrides(axes={"strategy": ["toy-nope"]}))
