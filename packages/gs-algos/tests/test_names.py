"""gs_algos.names is the one table of gs-algos' method names: the class table, the named node
methods and the aliases are built from it and agree with it."""

from __future__ import annotations

import pytest

from gs_algos import names
from gs_algos.methods import METHODS
from gs_algos.node_methods import BUILTIN_NODE_METHODS, NODE_METHODS, node_method


def test_the_class_table_is_built_from_the_names_in_their_order():
    builtin = [m for m in METHODS if m in names.BUILTIN_METHODS]
    assert builtin == names.builtin_method_names()
    for name in builtin:
        assert tuple(METHODS[name].levels) == names.BUILTIN_METHODS[name].levels, name
    assert [m for m in names.builtin_method_names("graph")] == [
        "erm", "vrex", "groupdro", "dir", "lri", "mixup", "irm", "dann", "coral"]  # GeSS table 3


def test_the_named_node_methods_are_built_from_the_names():
    assert sorted(BUILTIN_NODE_METHODS) == sorted(names.builtin_node_method_names())
    assert [m for m in NODE_METHODS if m in BUILTIN_NODE_METHODS] == names.builtin_node_method_names()
    assert set(names.ROBUSTNESS_METHODS) == {"dann", "coral", "mixup", "eerm"}
    assert node_method("gpe", 3).num_members == 3 and node_method("natpe", 2).family == "natpn"


@pytest.mark.parametrize(("alias", "name"), list(names.ALIASES.items()))
def test_an_alias_is_its_method(alias, name):
    assert names.canonical_method(alias) == name
    assert type(node_method(alias)) is type(node_method(name))


def test_robustness_variants_and_their_default():
    assert names.DEFAULT_ROBUSTNESS_VARIANT in names.ROBUSTNESS_VARIANTS
