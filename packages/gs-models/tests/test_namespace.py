"""The package namespace (issue 57): ``import gs_models`` eagerly imports the configs, the
registry and the runtime helper, and nothing heavier (no torch, no PyTorch Geometric, ~5 s);
the models are names of their modules (``gs_models.node.NodeGNN``, ...), imported when asked
for or by :func:`gs_models.build_model`; no module answers unknown names through a PEP 562
``__getattr__``. ``gs-bench report`` and the CLI's checks read only the light part."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

import gs_models
import gs_models.configs

#: what ``import gs_models`` may load
LIGHT = {"gs_models", "gs_models.__about__", "gs_models._validation", "gs_models.configs",
         "gs_models.registry", "gs_models.runtime"}

#: gs-models 0.1.0's top-level names that are now names of their modules only
MOVED = {
    "knn": {"knn_graph"},
    "node": {"NodeGNN"},
    "pointcloud": {"DGCNN", "EGNN", "EGNNLayer", "PointCloudBackbone", "PointTransformer"},
    "posterior": {"BatchedRadialFlow", "DirichletHead", "GraphPosteriorNetwork", "NaturalPosteriorNetwork",
                  "PosteriorOutput", "log_certainty_budget"},
    "sampling": {"TorchNeighborSampler", "has_native_sampler", "neighbor_loader", "predict_in_batches",
                 "sample_neighbors"},
    "structured": {"EPFGNN", "GMNN", "LBPResult", "greedy_coloring", "loopy_belief_propagation",
                   "mean_field_edge_marginals", "undirected_pairs"},
}


def test_the_package_and_its_registry_load_neither_torch_nor_a_model_module(modules_after):
    mods = modules_after(
        "import gs_models\n"
        "missing = [n for n in gs_models.__all__ if not hasattr(gs_models, n)]\n"
        "assert not missing, missing\n"
        "gs_models.preset('structural-shifts-base'); gs_models.training_defaults('gess-egnn')\n"
        "assert 'egnn' in gs_models.available_models(); gs_models.NodeGNNConfig()"
    )
    # every public name is a plain attribute, and reading them and the registry loads nothing more
    loaded = {m for m in mods if m.split(".")[0] in ("torch", "torch_geometric", "gs_models")}
    assert loaded == LIGHT, "a new module imported by `import gs_models`: is it light?"


def test_building_a_model_imports_its_module_and_gives_its_class():
    from gs_models import build_model
    from gs_models.node import NodeGNN
    from gs_models.pointcloud import EGNN

    assert type(build_model("gcn", 4, 2)) is NodeGNN
    assert type(build_model("gess-egnn", 4, 2)) is EGNN


def test_every_public_name_resolves_from_a_light_module():
    assert len(gs_models.__all__) == len(set(gs_models.__all__))
    for name in gs_models.__all__:
        module = getattr(getattr(gs_models, name), "__module__", None)
        assert module is None or not module.startswith("gs_models") or module in LIGHT, (name, module)
    assert set(gs_models.configs.__all__) <= set(gs_models.__all__)
    with pytest.raises(AttributeError, match="module 'gs_models' has no attribute 'GCN2'"):
        gs_models.GCN2  # noqa: B018


@pytest.mark.parametrize("module", sorted(MOVED))
def test_the_models_are_names_of_their_modules(module):
    mod = importlib.import_module(f"gs_models.{module}")
    assert not MOVED[module] & set(gs_models.__all__)
    assert not MOVED[module] & set(vars(gs_models))  # gs_models.NodeGNN is an AttributeError now
    for name in MOVED[module]:
        assert name in mod.__all__ and getattr(mod, name).__module__ == mod.__name__, name


def test_no_module_answers_unknown_names_with_a_module_getattr(module_getattrs):
    assert module_getattrs(Path(gs_models.__file__).parent) == []
