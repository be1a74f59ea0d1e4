"""One of each (issue 20): the pieces that used to stand in two or more places stand in one.

Each check reads the source tree as text (and, where a pattern needs it, as Python syntax)
and fails naming the file and what was found, so a second copy cannot come back unnoticed:

* atomic writes: a temporary file renamed into place is written only by the one helper
  of each layer (docs/architecture.md, "One of each");
* fingerprints: content (arrays, files) is hashed only by ``gs_data.fingerprint`` (and, in
  the bottom layer that cannot import it, ``gs_splits.CSRGraph.fingerprint``);
* samplers: one neighbour sampler, ``gs_models.sampling.sample_neighbors``;
* uncertainty measures: computed only in gs-metrics; the torch wrappers convert and call it;
* the edgewise GCN config (and any other model config literal) is written once;
* reliability plots: drawn only by ``gs_metrics.plot_reliability_diagram``, never with a
  hard-coded number of bins in a caption;
* split sizes: the floor-and-rest part sizes only in ``gs_splits.split_sizes``.

Every check is also run on a copy of the tree with a planted second copy, and must fail there.
"""

from __future__ import annotations

import ast
import functools
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: the code of the six distributions: library sources, scripts, benchmarks, checks (no tests)
CODE_DIRS = ("packages", "apps")
SKIP_PARTS = {"tests", ".nox", "build", "dist", "__pycache__", "measured"}

#: the atomic-write helper of each layer (gs-models and gs-metrics write no files; gs-bench and
#: the gs-models benchmark use gs-data's)
ATOMIC_HELPERS = {
    "packages/gs-splits/src/gs_splits/_atomic.py",
    "packages/gs-data/src/gs_data/_io.py",
    "packages/gs-algos/src/gs_algos/checkpoint.py",
}
#: ``os.replace`` calls that are moves, not writes: file -> (count, why)
RENAMES_THAT_ARE_NOT_WRITES = {
    "apps/bench/src/gs_bench/store.py": (1, "moves an unreadable record into quarantine/"),
    "packages/gs-splits/src/gs_splits/ondisk/csr.py": (1, "moves the finished CSR files out of .partial/"),
    "packages/gs-splits/src/gs_splits/ondisk/properties.py": (1, "moves the finished degree-ordered folder into place"),
}
FINGERPRINT_HELPERS = {
    "packages/gs-data/src/gs_data/_fingerprint.py",  # gs_data.fingerprint, the one
    "packages/gs-splits/src/gs_splits/graph.py",  # CSRGraph.fingerprint: bottom layer, no gs-data
}
SAMPLER_MODULE = "packages/gs-models/src/gs_models/sampling.py"
RELIABILITY_MODULE = "packages/gs-metrics/src/gs_metrics/reliability.py"
SPLIT_SIZE_MODULE = "packages/gs-splits/src/gs_splits/split.py"
METRICS_SRC = "packages/gs-metrics/src/"


def _files(root: Path) -> Iterator[tuple[str, str]]:
    for d in CODE_DIRS:
        for path in sorted((root / d).rglob("*.py")):
            rel = path.relative_to(root)
            if SKIP_PARTS.intersection(rel.parts):
                continue
            yield rel.as_posix(), path.read_text(encoding="utf-8")


@functools.cache
def _tree(text: str) -> ast.Module:
    return ast.parse(text)


def _functions(text: str) -> Iterator[tuple[str, str]]:
    """(name, source) of every function in ``text``, docstrings left out."""
    lines = text.splitlines()
    for node in ast.walk(_tree(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
                body = body[1:]
            if body:
                yield node.name, "\n".join(lines[body[0].lineno - 1 : body[-1].end_lineno])


def _string_constants(text: str) -> Iterator[str]:
    """String literals that are not docstrings (captions, messages, f-string parts)."""
    tree = _tree(text)
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant):
                docstrings.add(id(node.body[0].value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.value


# ---------------------------------------------------------------------------------- the checks
def atomic_write_copies(root: Path) -> list[str]:
    bad = []
    pattern = re.compile(r"\bos\.(replace|rename)\(|\bmkstemp\(|NamedTemporaryFile\(")
    for rel, text in _files(root):
        if rel in ATOMIC_HELPERS:
            continue
        hits = pattern.findall(text)
        allowed = RENAMES_THAT_ARE_NOT_WRITES.get(rel, (0, ""))[0]
        if len(hits) > allowed:
            bad.append(f"{rel}: {len(hits)} temporary-file/rename call(s) outside the atomic-write "
                       f"helpers {sorted(ATOMIC_HELPERS)}")
    return bad


def fingerprint_copies(root: Path) -> list[str]:
    bad = []
    for rel, text in _files(root):
        if rel in FINGERPRINT_HELPERS or "hashlib" not in text:
            continue
        if "tobytes(" in text or re.search(r"def \w*fingerprint\w*\(", text) and "sha256(" in text:
            bad.append(f"{rel}: hashes content itself; use gs_data.fingerprint")
        if "/runners/" in rel:
            bad.append(f"{rel}: a runner imports hashlib; fingerprints come from gs_data.fingerprint")
    return bad


def sampler_copies(root: Path) -> list[str]:
    bad = []
    pattern = re.compile(r"def \w*sample_neighbo\w*\(|class \w*NeighborSampler\b|def _sample\(")
    for rel, text in _files(root):
        if rel != SAMPLER_MODULE and pattern.search(text):
            bad.append(f"{rel}: a neighbour sampler outside {SAMPLER_MODULE}")
    return bad


#: line-for-line re-implementations of an authors' function that a committed check runs *beside*
#: ours to compare them (the point of the check, so not a second implementation of ours)
AUTHORS_REFERENCES = {
    # LEBED-cora-amz/ATC_helper.py get_entropy (sum p log p), compared with gs-metrics' entropy
    "apps/bench/checks/lebed_baseline_signs.py": {"get_entropy"},
}


def uncertainty_copies(root: Path) -> list[str]:
    bad = []
    names = re.compile(r"entropy$|uncertaint|mutual_information|max_prob")
    computes = re.compile(r"\blog\(|digamma\(|\.log\(\)")
    for rel, text in _files(root):
        if rel.startswith(METRICS_SRC):
            continue
        for name, body in _functions(text):
            if name in AUTHORS_REFERENCES.get(rel, ()):
                continue
            if names.search(name) and "dirichlet_entropy" != name and computes.search(body):
                bad.append(f"{rel}: {name}() computes an uncertainty measure; call gs-metrics'")
    return bad


def repeated_model_configs(root: Path) -> list[str]:
    seen: dict[str, str] = {}
    bad = []
    for rel, text in _files(root):
        for node in ast.walk(_tree(text)):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "NodeGNNConfig" and node.keywords and not node.args):
                key = ast.dump(ast.Call(func=node.func, args=[], keywords=sorted(
                    node.keywords, key=lambda k: k.arg or "")))
                where = f"{rel}:{node.lineno}"
                if key in seen:
                    bad.append(f"{where}: the same NodeGNNConfig as {seen[key]}; name it once")
                seen.setdefault(key, where)
    return bad


def reliability_plot_copies(root: Path) -> list[str]:
    bad = []
    for rel, text in _files(root):
        if rel == RELIABILITY_MODULE:
            continue
        if re.search(r"\.plot\(\[0, 1\], \[0, 1\]", text):
            bad.append(f"{rel}: draws a reliability diagonal; use gs_metrics.plot_reliability_diagram")
        for s in _string_constants(text):
            if re.search(r"\b15 bins\b|k/15\b", s):
                bad.append(f"{rel}: a string hard-codes 15 bins ({s.strip()[:60]!r})")
    return bad


def split_size_copies(root: Path) -> list[str]:
    bad = []
    for rel, text in _files(root):
        if rel == SPLIT_SIZE_MODULE:
            continue
        if re.search(r"def split_sizes\(", text):
            bad.append(f"{rel}: a second split_sizes")
        for name, body in _functions(text):
            if re.search(r"size|count|cut|part", name) and "floor(" in body:
                bad.append(f"{rel}: {name}() computes part sizes with floor; use gs_splits.split_sizes")
    return bad


CHECKS: dict[str, tuple[Callable[[Path], list[str]], str, str]] = {
    # name: (check, file to plant a copy in, the copy)
    "atomic writes": (atomic_write_copies, "packages/gs-models/src/gs_models/_planted.py",
                      "import os\n\ndef save(p, b):\n    open(p + '.tmp', 'wb').write(b)\n    os.replace(p + '.tmp', p)\n"),
    "fingerprints": (fingerprint_copies, "apps/bench/src/gs_bench/runners/_planted.py",
                     "import hashlib\n\ndef fp(a):\n    return hashlib.sha256(a.tobytes()).hexdigest()\n"),
    "samplers": (sampler_copies, "packages/gs-algos/src/gs_algos/_planted.py",
                 "def sample_neighbors(edge_index, num_nodes, seeds, k, g):\n    return seeds\n"),
    "uncertainty measures": (uncertainty_copies, "packages/gs-algos/src/gs_algos/_planted.py",
                             "import torch\n\ndef entropy(p):\n    return -(p * torch.log(p)).sum(-1)\n"),
    "edgewise GCN config": (repeated_model_configs, "apps/bench/src/gs_bench/_planted.py",
                            "from gs_models import NodeGNNConfig\nC = NodeGNNConfig(model='gcn', hidden_channels=64, "
                            "num_layers=2, dropout=0.5, norm=None, activation='relu', head='conv')\n"),
    "reliability plot": (reliability_plot_copies, "apps/bench/src/gs_bench/_planted.py",
                         "def diagram(ax):\n    ax.plot([0, 1], [0, 1], 'k--')\n    return 'diagrams (15 bins)'\n"),
    "split-size helpers": (split_size_copies, "packages/gs-data/src/gs_data/_planted.py",
                           "import math\n\ndef part_sizes(n, fr):\n    c = [math.floor(n * f) for f in fr[:-1]]\n"
                           "    return c + [n - sum(c)]\n"),
}


@pytest.mark.parametrize("piece", list(CHECKS))
def test_one_of_each(piece):
    check = CHECKS[piece][0]
    assert check(ROOT) == []


@pytest.mark.parametrize("piece", list(CHECKS))
def test_a_planted_second_copy_is_caught(piece, tmp_path):
    check, rel, code = CHECKS[piece]
    def ignore(folder: str, names: list[str]) -> list[str]:  # only the .py files are read
        return [n for n in names if n in SKIP_PARTS
                or (not n.endswith(".py") and not (Path(folder) / n).is_dir())]

    for d in CODE_DIRS:
        shutil.copytree(ROOT / d, tmp_path / d, ignore=ignore)
    (tmp_path / rel).write_text(code, encoding="utf-8")
    found = check(tmp_path)
    assert found and any(rel in line for line in found), found


def test_the_shared_pieces_are_the_same_objects():
    """The names kept for compatibility are the one implementation, not copies."""
    import gs_models
    from gs_models.configs import EDGEWISE_GCN, EPFGNNConfig, GMNNConfig

    assert gs_models.preset("edgewise-gcn") is EDGEWISE_GCN
    assert GMNNConfig().q is EDGEWISE_GCN and EPFGNNConfig().backbone is EDGEWISE_GCN
