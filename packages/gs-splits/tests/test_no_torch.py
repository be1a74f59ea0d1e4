"""Installing only gs-splits (plus its plot extra) pulls no torch."""

from __future__ import annotations

import importlib.metadata as md
import os
import re
import subprocess
import sys

import pytest

FORBIDDEN = {"torch", "torch-geometric", "torch_geometric", "pytorch", "torchvision"}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements(dist: str, extras: set[str]) -> list[tuple[str, set[str]]]:
    out = []
    for req in md.requires(dist) or []:
        name_part, _, marker = req.partition(";")
        m = re.match(r"\s*([A-Za-z0-9_.\-]+)\s*(\[([^\]]*)\])?", name_part)
        name = m.group(1)
        sub_extras = {x.strip() for x in (m.group(3) or "").split(",") if x.strip()}
        marker = marker.strip()
        if marker:
            em = re.findall(r"extra\s*==\s*['\"]([^'\"]+)['\"]", marker)
            if em and not (set(em) & extras):
                continue
            if not em:
                from packaging.markers import Marker  # pragma: no cover - rarely reached

                if not Marker(marker).evaluate():
                    continue
        out.append((name, sub_extras))
    return out


def test_requirement_tree_of_gs_splits_plot_has_no_torch():
    seen: set[str] = set()
    stack = [("gs-splits", {"plot"})]
    missing = []
    while stack:
        name, extras = stack.pop()
        key = _norm(name)
        assert key not in {_norm(f) for f in FORBIDDEN}, f"{key} is in the requirement tree of gs-splits[plot]"
        if key in seen:
            continue
        seen.add(key)
        try:
            md.distribution(name)
        except md.PackageNotFoundError:
            missing.append(name)
            continue
        stack.extend(_requirements(name, extras))
    assert {"numpy", "scipy", "matplotlib", "scikit-learn"} <= seen
    assert not missing, f"declared but not installed: {missing}"


def test_importing_gs_splits_does_not_import_torch():
    code = "import sys, gs_splits, gs_splits.plot, gs_splits.cli, gs_splits.diagnostics, gs_splits.ondisk; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.isolated
def test_isolated_environment_has_no_torch():
    if os.environ.get("GS_NOX_SESSION") != "tests-gs_splits":
        pytest.skip("only applies inside the isolated nox session 'tests-gs_splits' (GS_NOX_SESSION unset here)")
    names = {_norm(d.metadata["Name"]) for d in md.distributions()}
    assert "torch" not in names and "torch-geometric" not in names


def test_the_package_and_its_names_load_without_numba():
    """``import gs_splits`` resolves its names on first use, and gs_splits.names (domain scopes,
    paper sizes and strategies, parts, information levels) imports only the standard library:
    a CLI or a suite check reads them without compiling numba kernels."""
    code = ("import sys, gs_splits, gs_splits.names as n; gs_splits.DOMAIN_SCOPES; n.PAPER_SIZES\n"
            "print(sorted({'numba', 'torch', 'scipy'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
