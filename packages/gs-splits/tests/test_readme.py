"""The README's quick start runs as written (a new user copies it first; it used names it
never defined: edge_index, labels)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_quick_start_block_runs_as_written(tmp_path, monkeypatch):
    text = README.read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(tmp_path)  # it saves coraml-locality.npz / .json
    scope: dict = {}
    exec(compile(block, str(README), "exec"), scope)  # noqa: S102 - the README's own code
    split = scope["split"]
    assert split.num_nodes == 500 and (tmp_path / "coraml-locality.npz").is_file()
    assert sum(int(m.sum()) for m in split.masks.values()) == 500
