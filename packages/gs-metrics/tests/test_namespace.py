"""The package namespace: every module's ``__all__`` is what ``gs_metrics`` exports from it."""

from __future__ import annotations

import importlib

import gs_metrics

MODULES = ("accumulate", "baselines", "calibration", "conformal", "detection", "detectors",
           "edgewise", "label_free", "reliability", "task")


def test_every_exported_name_resolves_once():
    assert len(gs_metrics.__all__) == len(set(gs_metrics.__all__))
    for name in gs_metrics.__all__:
        assert getattr(gs_metrics, name) is not None, name


def test_each_module_gives_the_package_its_whole_all():
    for module in MODULES:
        names = importlib.import_module(f"gs_metrics.{module}").__all__
        assert set(names) <= set(gs_metrics.__all__), module
    public = {n for n, v in vars(gs_metrics).items()
              if not n.startswith("_") and not isinstance(v, type(gs_metrics))}
    assert public == set(gs_metrics.__all__) - {"__version__"}
