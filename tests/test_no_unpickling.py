"""No pickle on a path a user's data reaches (issue 34): an import-linter-style source check.

Unpickling runs code named by the file. The library and app sources (``packages/*/src``,
``apps/bench/src``) may read pickled data only through ``gs_data._safe_pickle`` (a restricted
unpickler) or ``torch.load(..., weights_only=True)``. This test parses every source file and
fails, naming file and line, on

* ``pickle.load`` / ``pickle.loads`` / ``pickle.Unpickler(...)`` (also ``cPickle``, ``dill``,
  ``joblib.load``, ``pandas.read_pickle``), except the restricted unpickler's own module;
* ``allow_pickle=True`` anywhere (``np.load``);
* ``weights_only=False``, and a ``torch.load`` call without ``weights_only=True``.

The check is also run on planted examples, and must find each of them.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the one module that may subclass pickle.Unpickler (it admits an explicit allow-list only)
RESTRICTED_UNPICKLER = "packages/gs-data/src/gs_data/_safe_pickle.py"
PICKLE_MODULES = {"pickle", "cPickle", "_pickle", "dill", "cloudpickle", "joblib"}


def _source_files() -> list[Path]:
    files = [p for src in ROOT.glob("packages/*/src") for p in src.rglob("*.py")]
    files += list((ROOT / "apps" / "bench" / "src").rglob("*.py"))
    return sorted(files)


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _const(kw: ast.keyword) -> object:
    return kw.value.value if isinstance(kw.value, ast.Constant) else "<expr>"


def unguarded_unpickling(text: str, name: str = "<src>", *, restricted_ok: bool = False) -> list[str]:
    """Every unguarded unpickling call in the Python source ``text``, as ``name:line: what``."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.Call):
            continue
        func = _dotted(node.func)
        head, _, last = func.rpartition(".")
        kws = {kw.arg: _const(kw) for kw in node.keywords if kw.arg}
        where = f"{name}:{node.lineno}"
        if head.split(".")[0] in PICKLE_MODULES and last in {"load", "loads", "Unpickler"}:
            if not (restricted_ok and last == "Unpickler"):
                found.append(f"{where}: {func}(...)")
        if last == "read_pickle":
            found.append(f"{where}: {func}(...)")
        if kws.get("allow_pickle") is not None and kws.get("allow_pickle") is not False:
            found.append(f"{where}: allow_pickle={kws['allow_pickle']}")
        if "weights_only" in kws and kws["weights_only"] is not True:
            found.append(f"{where}: weights_only={kws['weights_only']}")
        elif func == "torch.load" and "weights_only" not in kws:
            found.append(f"{where}: torch.load without weights_only=True")
    return found


def test_no_source_file_unpickles_without_a_guard():
    problems = []
    for path in _source_files():
        rel = path.relative_to(ROOT).as_posix()
        problems += unguarded_unpickling(path.read_text(encoding="utf-8"), rel,
                                         restricted_ok=rel == RESTRICTED_UNPICKLER)
    assert not problems, "unguarded unpickling (use gs_data._safe_pickle or weights_only=True):\n" + "\n".join(problems)
    assert (ROOT / RESTRICTED_UNPICKLER).is_file()


def test_the_check_finds_planted_unpickling():
    planted = {
        "import pickle\nx = pickle.load(open('f', 'rb'))\n": "pickle.load",
        "import pickle\nx = pickle.loads(b'')\n": "pickle.loads",
        "import pickle\nclass U(pickle.Unpickler): pass\nU(f).load()\n": None,  # the class alone is no call
        "import pickle\nu = pickle.Unpickler(f)\n": "pickle.Unpickler",
        "import numpy as np\nnp.load('a.npz', allow_pickle=True)\n": "allow_pickle=True",
        "import numpy as np\nflag = True\nnp.load('a.npz', allow_pickle=flag)\n": "allow_pickle=<expr>",
        "import torch\ntorch.load('a.pt', weights_only=False)\n": "weights_only=False",
        "import torch\ntorch.load('a.pt')\n": "without weights_only",
        "import pandas as pd\npd.read_pickle('a.pkl')\n": "read_pickle",
        "import joblib\njoblib.load('m.joblib')\n": "joblib.load",
    }
    for src, expect in planted.items():
        got = unguarded_unpickling(src)
        if expect is None:
            assert got == [], src
        else:
            assert got and expect in got[0], (src, got)
    ok = "import torch, numpy as np\ntorch.load('a.pt', map_location='cpu', weights_only=True)\nnp.load('a.npz', allow_pickle=False)\n"
    assert unguarded_unpickling(ok) == []
