"""The package namespace (issue 57): ``import gs_data`` eagerly imports its API, every public
name a plain attribute, and loads neither torch nor PyTorch Geometric (the functions that build
or read tensors import them when they run); the PyG-native classes live in the sub-module
``gs_data.pyg`` and the embedded graph in ``gs_data.synthetic``, imported when asked for; no
module answers unknown names through a PEP 562 ``__getattr__``."""

from __future__ import annotations

import types
from pathlib import Path

import pytest

import gs_data

#: what ``import gs_data`` may load
LIGHT = {"gs_data", "gs_data.__about__", "gs_data._fingerprint", "gs_data._io", "gs_data._readers",
         "gs_data._registry", "gs_data._safe_pickle", "gs_data.datasets", "gs_data.edgewise",
         "gs_data.geometric", "gs_data.lebed", "gs_data.splits"}

#: gs-data 0.1.0's top-level names that are now names of the sub-module ``gs_data.pyg`` only
MOVED = {"StructuralNodeSplit", "NodeDataset", "get_idx_split"}


def test_importing_the_package_loads_neither_torch_nor_pyg(modules_after):
    mods = modules_after(
        "import gs_data\n"
        "missing = [n for n in gs_data.__all__ if not hasattr(gs_data, n)]\n"
        "assert not missing, missing"
    )
    # every public name is a plain attribute: reading them loads nothing more (no lazy facade)
    loaded = {m for m in mods if m.split(".")[0] in ("torch", "torch_geometric", "gs_data")}
    assert loaded == LIGHT, "a new module imported by `import gs_data`: is it light?"


def test_the_first_call_that_builds_tensors_imports_torch(modules_after):
    mods = modules_after(
        "import sys, gs_data\n"
        "assert 'torch' not in sys.modules\n"
        "data = gs_data.load('synthetic-default')\n"
        "assert type(data).__name__ == 'Data' and data.num_nodes == 3008"
    )
    assert {"torch", "torch_geometric.data"} <= mods


def test_every_public_name_resolves_from_a_light_module():
    assert len(gs_data.__all__) == len(set(gs_data.__all__))
    for name in gs_data.__all__:
        value = getattr(gs_data, name)
        module = value.__name__ if isinstance(value, types.ModuleType) else getattr(value, "__module__", None)
        assert module is None or not module.startswith("gs_data") or module in LIGHT, (name, module)
    with pytest.raises(AttributeError, match="module 'gs_data' has no attribute 'no_such_name'"):
        gs_data.no_such_name  # noqa: B018


def test_the_pyg_classes_moved_to_the_pyg_sub_module():
    import gs_data.pyg as pyg

    assert not MOVED & set(gs_data.__all__)
    assert not MOVED & set(vars(gs_data))  # gs_data.NodeDataset is an AttributeError now
    for name in MOVED:
        assert name in pyg.__all__ and getattr(pyg, name).__module__ == "gs_data.pyg", name


def test_no_module_answers_unknown_names_with_a_module_getattr(module_getattrs):
    assert module_getattrs(Path(gs_data.__file__).parent) == []
