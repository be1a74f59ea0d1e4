"""Import cost by structure (issue 57): ``import gs_algos`` loads no torch and has no PEP 562
facade; the heavy parts are explicit modules (``gs_algos.engine``, ...), and the light ones
(devices, the training configuration, the engine, the named methods) do not pay for PyTorch
Geometric, whose import (~5 s, mostly ``torch._dynamo``) every gs-bench worker process and
CLI check paid before."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "gs_algos"


@pytest.mark.parametrize(("code", "engine"), [
    ("from gs_algos.device import resolve_device", False),
    ("from gs_algos.config import TrainConfig; from gs_algos.device import resolve_device", False),
    # the engine and the named methods: gs-bench's checks before any job and its report
    ("import gs_algos.engine", True),
    ("from gs_algos.node_methods import available_node_methods, node_method; node_method('gpn')", True),
])
def test_devices_the_config_and_the_engine_load_without_torch_geometric(code, engine, modules_after):
    mods = modules_after(code)
    assert "gs_algos.device" in mods
    assert "torch_geometric" not in mods and "gs_models.sampling" not in mods
    assert ("gs_algos.engine" in mods) == engine


def test_the_package_imports_no_torch(modules_after):
    mods = modules_after("import gs_algos; gs_algos.__version__")
    assert "torch" not in mods and "numpy" not in mods
    assert {m for m in mods if m.startswith("gs_algos")} == {"gs_algos", "gs_algos.__about__"}


@pytest.mark.parametrize("path", ["__init__.py", "engine/__init__.py"])
def test_no_module_getattr_facade(path):
    """The PEP 562 facades are gone: a name is an attribute of the module that defines or
    imports it, so IDEs, type checkers and ``dir()`` see it."""
    tree = ast.parse((SRC / path).read_text())
    assert not [n.name for n in tree.body if isinstance(n, ast.FunctionDef)
                and n.name in ("__getattr__", "__dir__")]


@pytest.mark.parametrize("module", ["gs_algos", "gs_algos.engine", "gs_algos.config",
                                    "gs_algos.methods", "gs_algos.registry", "gs_algos.em",
                                    "gs_algos.finetune", "gs_algos.search", "gs_algos.batch",
                                    "gs_algos.device"])
def test_every_public_name_resolves(module):
    mod = importlib.import_module(module)
    for name in mod.__all__:
        assert getattr(mod, name) is not None, name
    with pytest.raises(AttributeError, match="fit_everything"):
        mod.fit_everything  # noqa: B018


def test_the_engine_names_are_its_modules_objects():
    from gs_algos.engine import fit_graph, fit_node
    from gs_algos.engine.graph import fit_graph as graph_fit
    from gs_algos.engine.node import fit_node as node_fit

    assert fit_graph is graph_fit and fit_node is node_fit


def test_the_names_module_loads_without_torch(modules_after):
    """gs_algos.names (methods, aliases, robustness variants, protocols) is what the CLI, the
    suite checks and the reports read at module top: it must not import torch."""
    mods = modules_after("import gs_algos.names as n; n.canonical_method('se'); n.builtin_method_names('graph')")
    assert "gs_algos.names" in mods
    assert "torch" not in mods and "numba" not in mods
