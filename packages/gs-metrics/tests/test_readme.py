"""The README's first code example runs as written, copy-pasted into a fresh interpreter."""

from __future__ import annotations

import warnings
from pathlib import Path


def _first_python_block() -> str:
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    start = text.index("```python") + len("```python")
    return text[start:text.index("```", start)]


def test_readme_first_example_runs(capsys):
    code = _first_python_block()
    with warnings.catch_warnings():
        # every number it prints is defined: no empty subset (EmptyEvaluationWarning is a
        # RuntimeWarning), no invalid arithmetic
        warnings.simplefilter("error", RuntimeWarning)
        exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})
    out = capsys.readouterr().out.split("\n")
    printed = [line for line in out if line]
    assert len(printed) == code.count("print("), printed
    assert not any("nan" in line.lower() for line in printed), printed
