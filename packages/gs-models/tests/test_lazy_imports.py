"""The package namespace and the registry load the models on first use: the configs, the
presets and the registry's names do not pay for PyTorch Geometric (~5 s, mostly
``torch._dynamo``); ``gs-bench report`` and the CLI's checks read only those."""

from __future__ import annotations

import pytest


def test_presets_configs_and_names_load_without_torch_geometric(modules_after):
    mods = modules_after(
        "import gs_models\n"
        "gs_models.preset('structural-shifts-base'); gs_models.training_defaults('gess-egnn')\n"
        "assert 'egnn' in gs_models.available_models(); gs_models.NodeGNNConfig()"
    )
    assert "gs_models.registry" in mods
    assert "torch_geometric" not in mods and "gs_models.node" not in mods


def test_building_a_model_imports_its_module_and_gives_its_class():
    from gs_models import EGNN, NodeGNN, build_model

    assert type(build_model("gcn", 4, 2)) is NodeGNN
    assert type(build_model("gess-egnn", 4, 2)) is EGNN


def test_every_public_name_resolves_and_is_listed():
    import gs_models

    for name in gs_models.__all__:
        assert getattr(gs_models, name) is not None, name
    assert set(gs_models.__all__) <= set(dir(gs_models))
    with pytest.raises(AttributeError, match="module 'gs_models' has no attribute 'GCN2'"):
        gs_models.GCN2  # noqa: B018
