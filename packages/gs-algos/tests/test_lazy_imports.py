"""The package namespace loads its submodules on first use: the light parts (devices, the
training configuration) do not pay for PyTorch Geometric, whose import (~5 s, mostly
``torch._dynamo``) every gs-bench worker process and CLI check paid before."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(("code", "engine"), [
    ("from gs_algos.device import resolve_device", False),
    ("import gs_algos; gs_algos.TrainConfig; gs_algos.resolve_device", False),
    # the engine and the named methods: gs-bench's checks before any job and its report
    ("import gs_algos.engine", True),
    ("from gs_algos.node_methods import available_node_methods, node_method; node_method('gpn')", True),
])
def test_devices_the_config_and_the_engine_load_without_torch_geometric(code, engine, modules_after):
    mods = modules_after(code)
    assert "gs_algos.device" in mods
    assert "torch_geometric" not in mods and "gs_models.sampling" not in mods
    assert ("gs_algos.engine" in mods) == engine


def test_every_public_name_resolves_and_is_listed():
    import gs_algos

    for name in gs_algos.__all__:
        assert getattr(gs_algos, name) is not None, name
    assert set(gs_algos.__all__) <= set(dir(gs_algos))
    from gs_algos.engine import fit_graph

    assert gs_algos.fit_graph is fit_graph
    with pytest.raises(AttributeError, match="module 'gs_algos' has no attribute 'fit_everything'"):
        gs_algos.fit_everything  # noqa: B018


def test_the_names_module_loads_without_torch(modules_after):
    """gs_algos.names (methods, aliases, robustness variants, protocols) is what the CLI, the
    suite checks and the reports read at module top: it must not import torch."""
    mods = modules_after("import gs_algos.names as n; n.canonical_method('se'); n.builtin_method_names('graph')")
    assert "gs_algos.names" in mods
    assert "torch" not in mods and "numba" not in mods
