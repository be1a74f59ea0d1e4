"""The Python minor versions the gs packages claim, and an interpreter for each (CI helper).

    python .ci/pythons.py            # one line per claimed minor: "3.10 /path/to/python3.10"
    python .ci/pythons.py --check    # exit 1, naming it, if a claimed minor has no interpreter

The claim is the ``Programming Language :: Python :: 3.X`` classifiers, which must be the same
in every pyproject.toml and agree with ``requires-python`` (tests/test_repository.py checks
both). An interpreter is ``python3.X`` on PATH if it runs (pyenv's shims exist for versions
that are not active, and fail), else pyenv's ``~/.pyenv/versions/3.X.*``, else
``/usr/bin/python3.X`` (Debian's python3.X packages). Standard library only.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("packages/gs-splits", "packages/gs-metrics", "packages/gs-data", "packages/gs-models",
           "packages/gs-algos", "apps/bench")
_CLASSIFIER = re.compile(r'"Programming Language :: Python :: (3\.\d+)"')


def claimed_minors() -> list[str]:
    """The minors of the classifiers (those of gs-splits; the test keeps the others equal)."""
    text = (ROOT / FOLDERS[0] / "pyproject.toml").read_text()
    return sorted(set(_CLASSIFIER.findall(text)), key=lambda v: int(v.split(".")[1]))


def _runs(path: str, minor: str) -> bool:
    try:
        out = subprocess.run([path, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0 and out.stdout.strip() == minor


def interpreter(minor: str) -> str | None:
    """A working interpreter of ``minor`` on this machine, or None."""
    candidates = []
    found = shutil.which(f"python{minor}")
    if found:
        candidates.append(found)
    home = os.environ.get("PYENV_ROOT") or str(Path.home() / ".pyenv")
    candidates += sorted(glob.glob(f"{home}/versions/{minor}.*/bin/python{minor}"), reverse=True)
    candidates.append(f"/usr/bin/python{minor}")
    return next((c for c in candidates if os.path.exists(c) and _runs(c, minor)), None)


def main(argv: list[str]) -> int:
    missing = []
    for minor in claimed_minors():
        path = interpreter(minor)
        if path is None:
            missing.append(minor)
        elif "--check" not in argv:
            print(minor, path)
    if missing:
        print(f"no interpreter for Python {', '.join(missing)} on this machine, which the "
              "packages claim (classifiers): install it (Debian: apt-get install python3.X), or "
              "drop the claim", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
