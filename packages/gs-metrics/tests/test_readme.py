"""Every Python block of the README runs as written, each copy-pasted into a fresh interpreter."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest


def _python_blocks() -> list[str]:
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


def test_readme_has_the_quick_start_blocks():
    blocks = _python_blocks()
    assert len(blocks) >= 4, len(blocks)  # the first example, detectors, ECE variants, conformal
    joined = "\n".join(blocks)
    for name in ("energy_score", "gnnsafe_propagation", "mahalanobis_score", "binning",
                 "aps_scores", "raps_scores", "daps_scores", "conformal_threshold"):
        assert name in joined, name


@pytest.mark.parametrize("index", range(len(_python_blocks())))
def test_readme_example_runs(index, capsys):
    code = _python_blocks()[index]
    with warnings.catch_warnings():
        # every number it prints is defined: no empty subset (EmptyEvaluationWarning is a
        # RuntimeWarning), no invalid arithmetic
        warnings.simplefilter("error", RuntimeWarning)
        exec(compile(code, f"README.md block {index}", "exec"), {"__name__": "__readme__"})
    printed = [line for line in capsys.readouterr().out.split("\n") if line]
    assert printed, "the block prints its results"
    assert len(printed) >= code.count("print("), printed
    assert not any("nan" in line.lower() for line in printed), printed
