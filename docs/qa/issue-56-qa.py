#!/usr/bin/env python3
"""Issue 56: the QA table, re-runnable on any tree.

    python docs/qa/issue-56-qa.py [--out docs/qa/issue-56-qa.md] [--keep] [--only ID,ID,...]

Runs every case below as a subprocess against the code of the tree this file lives in (each
``packages/*/src`` and ``apps/bench/src`` go first on PYTHONPATH; ``gs-bench`` / ``gs-splits``
are the console scripts beside ``sys.executable``), with every input built in a fresh scratch
folder ``$S`` (removed at the end unless ``--keep``), and writes the Markdown table: case id,
category, the command as run (``$S`` for the scratch folder), the expectation, what was seen
(exit code, the telling output line, seconds) and the verdict. Exit status 1 when any case
failed.

Needs: Linux, the project's virtual environment (numpy, scipy, torch), root for the cases that
use ``unshare -m`` (a read-only bind mount, a 2 MiB tmpfs; they are reported as FAILED with the
reason if ``unshare`` is refused). Every case runs with a timeout, so a hang is a FAILED case;
the cases that read a never-ending file run under ``ulimit -v`` so that they cannot take the
machine's memory. Nothing outside ``$S`` is written except by the code under test (the numba
cache beside ``gs_splits``, as any run).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "issue-56"
BIN = Path(sys.executable).parent
DEEP = 100_000  # nesting depth of the crafted JSON / TOML files
NO_TRACEBACK = r"Traceback \(most recent call last\)"


# ---------------------------------------------------------------------------------------- cases
@dataclass
class Case:
    id: str
    cat: str
    cmd: str  # bash; $S is the scratch folder
    expect: str
    rc: int | tuple | None = 2
    match: tuple = ()  # regexes that stdout+stderr must match (re.M)
    nomatch: tuple = ()  # regexes that must not match
    one_line: bool = False  # exactly one non-empty line on stderr
    max_err_lines: int | None = None  # at most this many non-empty stderr lines
    max_s: float | None = None
    exists: tuple = ()  # paths ($S/...) that must exist afterwards
    absent: tuple = ()  # paths that must not exist afterwards
    timeout: float = 120
    pre: Callable | None = None
    post: Callable | None = None  # post(case, res) -> list of problems
    # filled in by run()
    seen: str = ""
    ok: bool = False
    secs: float = 0.0
    problems: list = field(default_factory=list)


CASES: list[Case] = []


def case(*a, **k) -> Case:
    c = Case(*a, **k)
    if any(x.id == c.id for x in CASES):
        raise SystemExit(f"duplicate case id {c.id}")
    CASES.append(c)
    return c


# --------------------------------------------------------------------------------- the fixtures
ZIP_HELPER = r'''
"""One crafted archive for gs-data's OGB loader (gs_data.datasets._ensure_raw -> extract_zip).
Prints what happened: the error, what changed outside the dataset's own folder, what is left."""
import hashlib, os, shutil, stat, sys, zipfile
from pathlib import Path

scen = sys.argv[1]
base = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(os.environ["S"]) / "zip" / scen
shutil.rmtree(base, ignore_errors=True)
root = base / "data"
ogb = root / "ogb"
own = ogb / "arxiv"
outside = base / "outside"
(ogb / "products" / "raw").mkdir(parents=True)
(ogb / "products" / "raw" / "edge.csv.gz").write_bytes(b"products, keep me")
outside.mkdir()
(outside / "keep.txt").write_bytes(b"outside, keep me")
arch = ogb / "arxiv.zip"
NAMES = ("edge.csv.gz", "node-feat.csv.gz", "node-label.csv.gz")
RAW = [(f"arxiv/raw/{f}", f.encode() * 40) for f in NAMES]


def write(entries, method=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(arch, "w", method) as zf:
        for name, data, *mode in entries:
            info = zipfile.ZipInfo(name)
            info.compress_type = method
            if mode:
                info.external_attr = mode[0] << 16
            zf.writestr(info, data)


def patch_headers(fn):
    b = bytearray(arch.read_bytes())
    for sig, off in ((b"PK\x03\x04", 0), (b"PK\x01\x02", 2)):
        k = 0
        while (k := b.find(sig, k)) >= 0:
            fn(b, k + off)
            k += 4
    arch.write_bytes(bytes(b))


LINK = stat.S_IFLNK | 0o777
if scen in ("other", "prelink", "prelink-dir", "existing-ok"):
    write(RAW + [("products/raw/edge.csv.gz", b"evil"), ("products/raw/new.csv", b"evil")])
elif scen == "dotdot":
    write(RAW + [("../escape.txt", b"evil"), ("../../outside/keep.txt", b"evil"), ("../../outside/new.txt", b"evil")])
elif scen == "absolute":
    write(RAW + [(str(outside / "abs.txt"), b"evil"), ("/abs2.txt", b"evil"), (str(ogb / "products" / "raw" / "edge.csv.gz"), b"evil")])
elif scen == "inner-dotdot":
    write(RAW + [("arxiv/../../outside/up.txt", b"evil"), ("arxiv/../products/raw/edge.csv.gz", b"evil")])
elif scen == "symlink-entry":
    write(RAW[1:] + [("arxiv/raw/edge.csv.gz", b"../../products/raw/edge.csv.gz", LINK),
                     ("arxiv/link-out", str(outside).encode(), LINK)])
elif scen == "symlink-folder":
    write([("arxiv/raw", str(outside).encode(), LINK)] + RAW)
elif scen == "truncated":
    write(RAW)
    b = arch.read_bytes()
    arch.write_bytes(b[: len(b) // 2])
elif scen in ("badcrc", "existing-fail"):
    write(RAW, zipfile.ZIP_STORED)
    b = bytearray(arch.read_bytes())
    k = b.rfind(b"node-label.csv.gz" * 2)  # the last member's data
    b[k] ^= 0xFF
    arch.write_bytes(bytes(b))
elif scen == "method99":
    write(RAW)
    patch_headers(lambda b, k: b.__setitem__(slice(k + 8, k + 10), (99).to_bytes(2, "little")))
elif scen == "encrypted":
    write(RAW)
    patch_headers(lambda b, k: b.__setitem__(k + 6, b[k + 6] | 1))
elif scen == "no-own-folder":
    write([("products/raw/edge.csv.gz", b"evil")])
elif scen == "own-is-file":
    write([("arxiv", b"a file, not the folder")])
elif scen == "full-disk":
    write(RAW[:1] + [("arxiv/raw/node-feat.csv.gz", b"\0" * (8 << 20))] + RAW[2:])
elif scen in ("keep-dotdot", "keep-none"):
    write(RAW + [("../escape.txt", b"evil"), ("/abs.txt", b"evil")])
else:
    sys.exit(f"unknown scenario {scen}")
if scen == "prelink":  # a link in the dataset's folder pointing at a neighbour's file
    (own / "raw").mkdir(parents=True)
    os.symlink("../../products/raw/edge.csv.gz", own / "raw" / "edge.csv.gz")
if scen == "prelink-dir":  # a folder of the dataset that is a link to a folder outside it
    own.mkdir()
    os.symlink(str(outside), own / "raw")
if scen in ("existing-ok", "existing-fail"):
    (own / "split" / "time").mkdir(parents=True)
    (own / "split" / "time" / "train.csv.gz").write_bytes(b"arxiv split, keep me")


def snap(top):
    out = {}
    for dirpath, dirs, files in os.walk(top):
        for n in dirs + files:
            p = Path(dirpath) / n
            if p.is_symlink():
                out[p] = "link:" + os.readlink(p)
            elif p.is_dir():
                out[p] = "dir"
            elif p.is_file():
                out[p] = "file:" + hashlib.sha256(p.read_bytes()).hexdigest()[:12]
            else:
                out[p] = "other"
    return out


before = snap(base)
try:
    if scen == "keep-dotdot":
        from gs_data._io import extract_zip
        extract_zip(arch, ogb, keep="../x")
    elif scen == "keep-none":
        from gs_data._io import extract_zip
        extract_zip(arch, base / "dest", keep=None)
        own = base / "dest"
    else:
        from gs_data._registry import resolve_name
        from gs_data.datasets import _ensure_raw
        _ensure_raw(resolve_name("ogbn-arxiv"), root, download=True, progress=None, verify=False)
    print("result: ok")
    failed = False
except Exception as exc:  # noqa: BLE001
    print(f"result: error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
    failed = True
after = snap(base)


def rel(p):
    return str(p.relative_to(base))


def mine(p):
    return p == own or own in p.parents


changed = sorted(rel(p) for p in set(before) | set(after)
                 if before.get(p) != after.get(p) and not mine(p))
print("outside own folder changed:", ", ".join(changed) if changed else "none")
new = sorted(rel(p) for p in set(after) - set(before))
gone = sorted(rel(p) for p in set(before) - set(after))
print("new:", ", ".join(new) if new else "none")
print("removed:", ", ".join(gone) if gone else "none")
links = sorted(rel(p) for p, v in after.items() if v.startswith("link:") and before.get(p) != v)
print("new links:", ", ".join(links) if links else "none")
print("temporary folders left:", ", ".join(rel(p) for p in after if p.name.startswith(".extract-")) or "none")
if failed:
    print("left after the failure:", ", ".join(new) if new else "nothing")
'''


def deep_json(kind: str = "list") -> str:
    return "[" * DEEP + "]" * DEEP if kind == "list" else '{"a":' * DEEP + "1" + "}" * DEEP


def graph_pairs(n: int = 40) -> list:
    return sorted({tuple(sorted((i, (i + 1) % n))) for i in range(n)} |
                  {tuple(sorted((i, (i * 7 + 3) % n))) for i in range(n) if (i * 7 + 3) % n != i})


#: the line of the bad id appended to the test graph (a comment line, then both directions of each pair)
BAD_LINE = 2 + 2 * len(graph_pairs())
CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def write_graph(path: Path, n: int = 40) -> None:
    """A clean undirected graph, both directions listed (no normalisation warnings)."""
    lines = ["# a 40-node test graph"] + [f"{u} {v}\n{v} {u}" for u, v in graph_pairs(n)]
    path.write_text("\n".join(lines) + "\n")


def build_fixtures(S: Path, env: dict) -> None:
    import numpy as np
    import scipy.io as sio
    import scipy.sparse as sp

    for d in ("tmp", "mpl", "gsdata", "ntmp", "ntmp2", "rohome", "ro", "ro-parent", "full", "full2", "zip"):
        (S / d).mkdir(parents=True, exist_ok=True)
    (S / "zc.py").write_text(ZIP_HELPER)
    (S / "load.py").write_text("import sys, gs_data\ntry:\n    gs_data.load(sys.argv[1], root=sys.argv[2])\n"
                               "except Exception as exc:\n    sys.exit(f'{type(exc).__name__}: {exc}')\n"
                               "print('loaded')\n")
    write_graph(S / "g.txt")
    base = (S / "g.txt").read_text()
    ids = {"underscore": "1_0", "plus": "+5", "arabic": "\u0661\u0662", "fullwidth": "\uff11\uff12",
           "float": "2.0", "negative": "-1", "2p64": str(2**64), "2p63": str(2**63),
           "19digits": "1234567890123456789", "hex": "0x1F", "exp": "1e3", "18digits": "999999999999999999"}
    for name, v in ids.items():
        (S / f"id-{name}.txt").write_text(base + f"3 {v}\n{v} 3\n")
    (S / "empty.txt").write_text("")
    # property files for --property-file
    p = np.arange(40, dtype=float)
    p[5] = np.nan
    np.save(S / "prop-nan.npy", p)
    # data roots holding structural-shifts/cora-ml/data.mat (the structure of gs-data's fixture)
    d = sio.loadmat(REPO / "packages/gs-data/tests/fixtures/structural-shifts/pubmed/data.mat")
    f = d["features"].toarray()

    def mat(root: str, x) -> Path:
        target = S / root / "structural-shifts" / "cora-ml" / "data.mat"
        target.parent.mkdir(parents=True, exist_ok=True)
        if x is not None:
            sio.savemat(target, {"features": x, "labels": d["labels"], "edges": d["edges"]})
        return target

    mat("root-ok", sp.csc_matrix(f))
    for name, (i, j), value, sparse in (("root-nan", (3, 2), np.nan, True), ("root-inf", (4, 1), np.inf, False),
                                        # finite in float64, inf in float32
                                        ("root-big", (5, 0), 1e300, True)):
        g = f.copy()
        g[i, j] = value
        mat(name, sp.csc_matrix(g) if sparse else g)
    os.mkfifo(mat("root-fifo", None))
    os.symlink("/dev/zero", mat("root-zero", None))
    os.symlink(str(S / "no-such-file.mat"), mat("root-dangling", None))
    mat("root-dir", None).mkdir()
    # suite files
    (S / "dup.toml").write_text('suite = "structural-shifts"\n[grid]\ndataset = ["synthetic-default"]\n'
                                'strategy = ["popularity", "popularity"]\nratio = ["50:50"]\nmethod = ["erm"]\n')
    (S / "dup-ds.toml").write_text('suite = "structural-shifts"\nseeds = 2\n[grid]\n'
                                   'dataset = ["synthetic-default", "synthetic-default"]\n'
                                   'strategy = ["popularity", "density"]\nratio = ["50:50"]\nmethod = ["erm"]\n')
    (S / "bad.toml").write_text('suite = "structural-shifts"\n[grid\n')
    (S / "dir.toml").mkdir()
    (S / "empty.toml").write_text("")
    (S / "binary.toml").write_bytes(b"\xff\xfe\x00suite")
    (S / "deep.toml").write_text('suite = "structural-shifts"\n[grid]\ndataset = ' + deep_json() + "\n")
    # a run folder of finished jobs: records for exactly the jobs `--methods erm --seeds 1` plans
    helper = S / "mkdone.py"
    helper.write_text(
        "import json, os, sys\n"
        "from gs_bench.suites import load_suite\nfrom gs_bench.preflight import check_suite\n"
        "c = load_suite('structural-shifts', 'demo').with_overrides(seeds=1, axes={'method': ['erm']})\n"
        "out = sys.argv[1]; os.makedirs(out + '/results')\n"
        "for j in check_suite(c).jobs:\n"
        "    rec = {'key': j['key'], 'status': 'ok', 'error': None, 'job': j, 'wall_time_s': 1.0,\n"
        "           'metrics': {'id_acc': 0.9, 'ood_acc': 0.7, 'ood_auroc': 0.8, 'drop': -0.2}}\n"
        "    json.dump(rec, open(f\"{out}/results/{j['key']}.json\", 'w'))\n")
    r = subprocess.run([sys.executable, str(helper), str(S / "done")], env=env, capture_output=True, text=True, timeout=120)
    if r.returncode:
        raise SystemExit(f"building the finished run folder failed:\n{r.stderr}")
    # crafted run folders from one real structural-shifts record (docs/qa/issue-56/ss-record.json)
    rec = json.loads((FIXTURES / "ss-record.json").read_text())

    def runfolder(name: str, records: int = 1, runfile: str | None = None) -> Path:
        out = S / name
        (out / "results").mkdir(parents=True)
        (out / "run-structural-shifts.json").write_text(runfile if runfile is not None else json.dumps(
            {"suite": "structural-shifts", "profile": "demo", "grid": {}, "settings": {}, "seeds": records,
             "jobs": records}))
        for i in range(records):
            r2 = json.loads(json.dumps(rec))
            key = f"{i:020x}"
            r2["key"] = r2["job"]["key"] = key
            r2["job"]["seed"] = i
            (out / "results" / f"{key}.json").write_text(json.dumps(r2))
        return out

    runfolder("rf-ok")
    (runfolder("rf-nested", 2) / "results" / "ffffffffffffffffffff.json").write_text(deep_json())
    (runfolder("rf-nested-cmp", 2) / "results" / "ffffffffffffffffffff.json").write_text(deep_json())
    (runfolder("rf-nonutf8") / "results" / "eeeeeeeeeeeeeeeeeeee.json").write_bytes(b'{"key": "\xff\xfe"}')
    (runfolder("rf-folder-record") / "results" / "dddddddddddddddddddd.json").mkdir()
    good_run = (S / "rf-ok" / "run-structural-shifts.json").read_text()
    runfolder("rf-truncated-runfile", runfile=good_run[: len(good_run) // 2])
    runfolder("rf-nested-runfile", runfile=deep_json("dict"))
    pic = rec["metrics"]["split"]["picture"]
    for name, how in (("rf-pic-nested", "nested"), ("rf-pic-fifo", "fifo"), ("rf-pic-zero", "zero")):
        target = runfolder(name) / pic
        target.parent.mkdir(parents=True)
        if how == "nested":
            target.write_text(deep_json())
        elif how == "fifo":
            os.mkfifo(target)
        else:
            os.symlink("/dev/zero", target)
    # foreign folders: another tool's run-structural-shifts.json and results/
    for name, runfile in (("foreign", '{"tool": "other", "note": "not written by gs-bench"}\n'),
                          ("foreign-suite", '{"suite": "structural-shifts", "tool": "other"}\n'),
                          ("foreign-nested", deep_json())):
        out = S / name
        (out / "results").mkdir(parents=True)
        (out / "run-structural-shifts.json").write_text(runfile)
        (out / "results" / "mine.json").write_text('{"a": 1}\n')
        (out / "results" / "x.json").write_text("not json\n")
        (out / "results" / "deep.json").write_text(deep_json())
    # archived run folders (results.jsonl, one record per line)
    for name, bad in (("arch-trunc", None), ("arch-nested", deep_json())):
        out = S / name
        out.mkdir()
        lines = []
        for i in range(2):
            r2 = json.loads(json.dumps(rec))
            r2["key"] = r2["job"]["key"] = f"{i:020x}"
            r2["job"]["seed"] = i
            lines.append(json.dumps(r2))
        third = lines[0][: len(lines[0]) // 2] if bad is None else bad
        (out / "results.jsonl").write_text(lines[0] + "\n" + (third + "\n" + lines[1] if bad else lines[1] + "\n" + third))
    # an on-disk CSR folder and damaged copies of its meta.json
    r = subprocess.run([str(BIN / "gs-splits"), "convert", str(S / "g.txt"), str(S / "csr"), "--no-progress"],
                       env=env, capture_output=True, text=True, timeout=120)
    if r.returncode:
        raise SystemExit(f"gs-splits convert of the test graph failed:\n{r.stderr}")
    shutil.copytree(S / "csr", S / "csr-nested")
    (S / "csr-nested" / "meta.json").write_text(deep_json("dict"))
    shutil.copytree(S / "csr", S / "csr-trunc")
    m = (S / "csr" / "meta.json").read_text()
    (S / "csr-trunc" / "meta.json").write_text(m[: len(m) // 2])
    # warm the numba cache of the tree (so that no case pays or logs the first compilation)
    subprocess.run([str(BIN / "gs-splits"), "make", str(S / "g.txt"), "--out", str(S / "warm")], env=env,
                   capture_output=True, timeout=300)


# ------------------------------------------------------------------------------ helpers for cases
def copy_done(name: str) -> Callable:
    def pre(S: Path) -> None:
        shutil.copytree(S / "done", S / name)
    return pre


def lock_file(name: str, content: str | None = None, pid: int | None = None) -> Callable:
    def pre(S: Path) -> None:
        shutil.copytree(S / "done", S / name)
        text = content if content is not None else json.dumps(
            {"host": socket.gethostname(), "pid": pid, "started": "2026-01-01T00:00:00+00:00"})
        (S / name / ".lock").write_text(text)
    return pre


def dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


def files_in(rel: str, expected: set) -> Callable:
    def post(c: Case, S: Path) -> list:
        have = {p.name for p in (S / rel).iterdir()} if (S / rel).is_dir() else set()
        return [] if have == expected else [f"{rel} holds {sorted(have)}, expected {sorted(expected)}"]
    return post


def count_dirs(rel: str, pattern: str, n: int) -> Callable:
    def post(c: Case, S: Path) -> list:
        got = sorted(p.name for p in (S / rel).glob(pattern))
        return [] if len(got) == n else [f"{len(got)} {pattern} folder(s) in $S/{rel}: {got}, expected {n}"]
    return post


def both(*fns) -> Callable:
    def post(c: Case, S: Path) -> list:
        return [p for f in fns for p in f(c, S)]
    return post


GSB_DRY = "gs-bench run structural-shifts --dry-run"


# ================================================================================ the case list
def define_cases() -> None:
    # ---------------------------------------------------------------- 1. archives (issue item 1)
    zc = "python $S/zc.py"
    ok_inside = ("^result: ok$", "^outside own folder changed: none$", "^temporary folders left: none$")
    nothing_left = ("^outside own folder changed: none$", "^left after the failure: nothing$",
                    "^temporary folders left: none$")
    case("A1", "archives", f"{zc} other", "a crafted ogb/arxiv.zip with a top-level products/ folder: "
         "only arxiv/ is written; products/ keeps its file, gets no new one", rc=0,
         match=ok_inside + ("^removed: none$",))
    case("A2", "archives", f"{zc} dotdot", "'../escape.txt', '../../outside/keep.txt' and '../../outside/new.txt' "
         "entries: nothing created or replaced outside arxiv/", rc=0, match=ok_inside)
    case("A3", "archives", f"{zc} absolute", "absolute entries ($S/zip/absolute/outside/abs.txt, /abs2.txt, the "
         "neighbour's absolute path): nothing created or replaced outside arxiv/", rc=0, match=ok_inside,
         absent=("$S/zip/absolute/outside/abs.txt", "/abs2.txt"))
    case("A4", "archives", f"{zc} inner-dotdot", "'arxiv/../../outside/up.txt', 'arxiv/../products/raw/edge.csv.gz': "
         "nothing outside arxiv/", rc=0, match=ok_inside)
    case("A5", "archives", f"{zc} symlink-entry", "symlink entries (arxiv/raw/edge.csv.gz -> the neighbour's file, "
         "arxiv/link-out -> a folder outside): no link is created, the neighbour is not written", rc=0,
         match=("^outside own folder changed: none$", "^new links: none$", "^temporary folders left: none$"))
    case("A6", "archives", f"{zc} symlink-folder", "a symlink entry arxiv/raw -> a folder outside, then files under "
         "arxiv/raw/: nothing is written outside through it, no link is left", rc=None,
         match=("^outside own folder changed: none$", "^new links: none$", "^temporary folders left: none$"))
    case("A7", "archives", f"{zc} truncated", "a truncated zip: CorruptRawFileError naming the archive; nothing "
         "left (no arxiv/, no temporary folder)", rc=0,
         match=(r"^result: error: CorruptRawFileError: \S*arxiv\.zip: not a valid zip",) + nothing_left)
    case("A8", "archives", f"{zc} badcrc", "a bad CRC in the last member (the first ones already extracted): "
         "CorruptRawFileError naming the archive; nothing left", rc=0,
         match=(r"^result: error: CorruptRawFileError: \S*arxiv\.zip",) + nothing_left)
    case("A9", "archives", f"{zc} method99", "members with an unknown compression method (99): nothing left",
         rc=0, match=("^result: error",) + nothing_left)
    case("A10", "archives", f"{zc} method99", "members with an unknown compression method: the error names the "
         "archive (CorruptRawFileError, like any other unreadable archive; not a bare NotImplementedError)",
         rc=0, match=(r"^result: error: CorruptRawFileError: \S*arxiv\.zip",))
    case("A11", "archives", f"{zc} encrypted", "members flagged as encrypted: the error names the archive "
         "(CorruptRawFileError); nothing left", rc=0,
         match=(r"^result: error: CorruptRawFileError: \S*arxiv\.zip",) + nothing_left)
    case("A12", "archives", f"{zc} no-own-folder", "an archive without arxiv/ (only products/...): the load fails "
         "and leaves nothing (no empty arxiv/ folder)", rc=0,
         match=("^result: error: MissingRawFileError",) + nothing_left)
    case("A13", "archives", f"{zc} own-is-file", "an entry 'arxiv' that is a file, not the folder: fails, "
         "leaves nothing", rc=0, match=("^result: error",) + nothing_left)
    case("A14", "archives", f"{zc} existing-fail", "a failing archive over an existing arxiv/ holding "
         "split/time/train.csv.gz: that file stays, nothing else is left", rc=0,
         match=("^result: error", "^removed: none$") + nothing_left)
    case("A15", "archives", f"{zc} existing-ok", "a good archive over an existing arxiv/: the file it lacks "
         "(split/time/train.csv.gz) stays; the products/ entries are not extracted", rc=0,
         match=ok_inside + ("^removed: none$",))
    case("A16", "archives", f"{zc} prelink", "arxiv/raw/edge.csv.gz is already a link to the neighbour's file: "
         "extraction replaces the link, never writes through it", rc=0, match=ok_inside)
    case("A16b", "archives", f"{zc} prelink-dir", "arxiv/raw is already a link to a folder outside the dataset's "
         "folder: nothing is written through it (refused naming the link), nothing outside changes", rc=0,
         match=(r"^result: error: \w+: \S+/arxiv/raw is a symbolic link", "^outside own folder changed: none$",
                "^temporary folders left: none$"))
    case("A17", "archives", "unshare -m sh -c 'mount -t tmpfs -o size=2m tmpfs $S/zip && python $S/zc.py full-disk "
         "$S/zip/full-disk'", "a full disk (2 MiB tmpfs) while extracting an 8 MiB member: an error, nothing "
         "left (no partial files, no temporary folder)", rc=0, match=("^result: error",) + nothing_left)
    case("A18", "archives", f"{zc} keep-dotdot", "extract_zip(keep='../x'): ValueError, nothing written", rc=0,
         match=(r"^result: error: ValueError: keep must be one folder name", "^new: none$"))
    case("A19", "archives", f"{zc} keep-none", "extract_zip(keep=None) of '../escape.txt' and '/abs.txt' into "
         "dest/: nothing outside dest/", rc=0, match=ok_inside)
    case("A20", "archives", r"grep -rlE 'tarfile|unpack_archive|extractall|\.extract\(' "
         f"{REPO}/packages/*/src {REPO}/apps/*/src --include=*.py",
         "which code unpacks archives: only gs_data/_io.py (extract_zip); no tar reader anywhere. (zipfile "
         "elsewhere reads members by name: torch .pt in _safe_pickle, .npz in gs_splits.ondisk; .gz files are "
         "single gzip streams with no paths inside: OGB CSVs, the molecules JSON)", rc=0,
         match=(r"gs_data/_io\.py$",), nomatch=(r"^(?!.*gs_data/_io\.py$).+$",))

    # ------------------------------------------------------------------- 2. duplicate grid values
    case("B1", "duplicates", f"{GSB_DRY} --methods erm erm --out $S/o-b1",
         "'erm' planned once: one note, 3 jobs (3 strategies x erm), exit 0", rc=0,
         match=(r"method: 'erm' is listed 2 times; planned once", r": 3 jobs planned"), absent=("$S/o-b1",))
    case("B2", "duplicates", "gs-bench run $S/dup.toml --dry-run --out $S/o-b2",
         'strategy = ["popularity", "popularity"]: one note naming grid.strategy, 1 job', rc=0,
         match=(r"dup\.toml: grid\.strategy: 'popularity' is listed 2 times; planned once", r": 1 job planned"))
    case("B3", "duplicates", f"{GSB_DRY} --datasets synthetic-default synthetic-default --out $S/o-b3",
         "the dataset planned once: a note, 6 jobs (3 strategies x erm, de)", rc=0,
         match=(r"dataset: 'synthetic-default' is listed 2 times; planned once", r": 6 jobs planned"))
    case("B4", "duplicates", "gs-bench run $S/dup-ds.toml --dry-run --out $S/o-b4",
         "a dataset listed twice in a suite file (2 strategies, 2 seeds): a note, 4 jobs", rc=0,
         match=(r"grid\.dataset: 'synthetic-default' is listed 2 times; planned once", r": 4 jobs planned"))
    case("B5", "duplicates", "gs-bench run gess --methods erm erm --dry-run --out $S/o-b5",
         "gess: --methods maps to the algorithm axis; planned once, a note, 1 job", rc=0,
         match=(r"algorithm: 'erm' is listed 2 times; planned once", r": 1 job planned"))
    case("B6", "duplicates", "gs-bench run edgewise --methods gcn gcn --dry-run --out $S/o-b6",
         "edgewise: --methods maps to the model axis; planned once, a note, 1 job", rc=0,
         match=(r"model: 'gcn' is listed 2 times; planned once", r": 1 job planned"))
    case("B7", "duplicates", f"{GSB_DRY} --methods erm se --out $S/o-b7",
         "'se' is gs-algos' alias of 'erm' (the same training; the report shows SE from the erm records): "
         "the same jobs are not planned twice under two names: a note, 3 jobs", rc=0,
         match=(r"\bse\b.*(alias|same|planned once)", r": 3 jobs planned"))

    # --------------------------------------------------------------- 3. run-folder / record readers
    case("C1", "run folders", "gs-bench report $S/foreign",
         "another tool's folder holding a run-structural-shifts.json (not gs-bench's) and results/*.json: "
         "nothing moved, said so, exit 2", rc=2,
         match=(r"is not a gs run folder", r"nothing moved to quarantine"),
         absent=("$S/foreign/results/quarantine",), post=files_in("foreign/results", {"mine.json", "x.json", "deep.json"}))
    case("C2", "run folders", "gs-bench report $S/foreign-suite",
         'the same with a run file {"suite": "structural-shifts", "tool": "other"} (suite key only): not a run '
         "folder, nothing moved", rc=2, match=(r"not a gs run folder",),
         absent=("$S/foreign-suite/results/quarantine",))
    case("C3", "run folders", "gs-bench report $S/foreign-nested",
         "a foreign folder whose run file and one record are 100000-deep JSON: no RecursionError, nothing moved",
         rc=2, match=(r"deep\.json: nested deeper",), nomatch=(r"RecursionError",),
         absent=("$S/foreign-nested/results/quarantine",))
    case("C4", "run folders", "gs-bench report $S/rf-nested",
         "a run folder with 2 good records and one 100000-deep JSON record: that record quarantined and named, "
         "the report written, exit 0", rc=0,
         match=(r"ffffffffffffffffffff\.json: nested deeper", r"report written to"),
         nomatch=(r"RecursionError",), exists=("$S/rf-nested/results/quarantine/ffffffffffffffffffff.json",))
    case("C5", "run folders", "gs-bench run structural-shifts --methods erm --seeds 1 --no-progress --out $S/lock-nested",
         "a finished run folder whose .lock is 100000-deep JSON: the lock is named unreadable and taken over, the "
         "run goes on (0 jobs to run), no RecursionError", rc=0,
         match=(r"removing unreadable lock file \S*lock-nested/\.lock", r"3 already done, 0 to run"),
         nomatch=(r"RecursionError",), pre=lock_file("lock-nested", content=deep_json()))
    case("C6", "run folders", "gs-bench report $S/rf-truncated-runfile",
         "a truncated run-structural-shifts.json: named, the records still reported, exit 0", rc=0,
         match=(r"rf-truncated-runfile/run-structural-shifts\.json is not a readable gs-bench run file",
                r"report written to"))
    case("C7", "run folders", "gs-bench report $S/rf-nested-runfile",
         "a run file that is 100000-deep JSON: named, no RecursionError, the records reported", rc=0,
         match=(r"run-structural-shifts\.json is not a readable gs-bench run file",), nomatch=(r"RecursionError",))
    case("C8", "run folders", "gs-bench report $S/arch-trunc",
         "an archived run (results.jsonl) whose last line is truncated: that line skipped by file and line, "
         "the rest reported", rc=0,
         match=(r"results\.jsonl line 3 skipped", r"report written to"))
    case("C9", "run folders", "gs-bench report $S/arch-nested",
         "a results.jsonl line that is 100000-deep JSON: skipped by file and line, no RecursionError", rc=0,
         match=(r"results\.jsonl line 2 skipped",), nomatch=(r"RecursionError",))
    case("C10", "run folders", "gs-bench report $S/rf-nonutf8",
         "a record that is not UTF-8: quarantined, named", rc=0,
         match=(r"eeeeeeeeeeeeeeeeeeee\.json: not a UTF-8",),
         exists=("$S/rf-nonutf8/results/quarantine/eeeeeeeeeeeeeeeeeeee.json",))
    case("C11", "run folders", "gs-bench report $S/rf-folder-record",
         "a folder named like a record (results/<key>.json/): skipped and left in place", rc=0,
         match=(r"dddddddddddddddddddd\.json: a folder",), exists=("$S/rf-folder-record/results/dddddddddddddddddddd.json",))
    case("C12", "run folders", "gs-bench compare $S/rf-nested-cmp",
         "compare on a run folder with a 100000-deep record: no RecursionError, exit 0, the record quarantined",
         rc=0, nomatch=(r"RecursionError", r"internal error"),
         exists=("$S/rf-nested-cmp/results/quarantine/ffffffffffffffffffff.json",))
    case("C13", "run folders", "gs-bench report $S/rf-pic-nested",
         "a split picture (split-pictures/*.json, read by the report) that is 100000-deep JSON: named as "
         "unreadable, the figure left out, exit 0, no RecursionError", rc=0,
         match=(r"split picture \S+ unreadable",), nomatch=(r"RecursionError", r"internal error"))
    case("C14", "run folders", "gs-bench report $S/rf-pic-fifo",
         "a split picture that is a FIFO: named (not a regular file), no hang", rc=0,
         match=(r"split picture \S+",), max_s=20, timeout=20)
    case("C15", "run folders", "ulimit -v 3000000; gs-bench report $S/rf-pic-zero",
         "a split picture that is a link to /dev/zero (run under a 3 GB memory cap): named, no MemoryError", rc=0,
         match=(r"split picture \S+",), nomatch=(r"MemoryError", r"internal error"), timeout=30)
    case("C16", "run folders", "gs-bench report $S/rf-ok",
         "the crafted run folder itself (one real record): the report is written, exit 0 (control)", rc=0,
         match=(r"report written to",))

    # ------------------------------------------------------------------------ 4. numeric options
    def refuse(cid, args, opt, extra="", cmd=None, max_s=2.0, timeout=20):
        command = cmd or f"{GSB_DRY} {args} --out $S/o-{cid}"
        case(cid, "numeric options", command, f"refused within 2 s, exit 2, one line naming {opt}{extra}; "
             "nothing written", rc=2, match=(re.escape(opt),), one_line=True, max_s=max_s,
             absent=(f"$S/o-{cid}",), timeout=timeout)

    for i, v in enumerate(("0", "-1", "1000000000", "1001", "1.5", "nan")):
        refuse(f"N-seeds{i + 1}", f"--seeds {v}", "--seeds", f" (--seeds {v})")
    for i, v in enumerate(("0", "-2", "1000000", "1001", str(4 * CORES + 1), "1.0")):
        refuse(f"N-workers{i + 1}", f"--workers {v}", "--workers",
               f" (--workers {v}{': above 4 per core here' if v == str(4 * CORES + 1) else ''})")
    for i, v in enumerate(("0", "-1", "1000000", str(CORES + 1), "inf")):
        refuse(f"N-threads{i + 1}", f"--threads {v}", "--threads", f" (--threads {v})")
    refuse("N-threads6", "--threads 1000000 --executor ray", "--threads",
           " (with --executor ray too: a job cannot use a million torch threads on any node)")
    for i, v in enumerate(("-1", "101", "1e9", "nan")):
        refuse(f"N-retries{i + 1}", f"--retries {v}", "--retries", f" (--retries {v})")
    for i, (kv, key) in enumerate((("lr=-1", "lr"), ("lr=nan", "lr"), ("lr=inf", "lr"), ("lr=1e400", "lr"),
                                   ("weight_decay=-1e-5", "weight_decay"), ("weight_decay=nan", "weight_decay"),
                                   ("max_epochs=2.5", "max_epochs"), ("max_epochs=0", "max_epochs"),
                                   ("max_epochs=99999999999999999999", "max_epochs"),
                                   ("ensemble_size=-2", "ensemble_size"), ("ensemble_size=1e9", "ensemble_size"),
                                   ("ensemble_size=1000000000", "ensemble_size"),
                                   ("domains=0", "domains"), ("domains=nan", "domains"),
                                   ("domains=1000000000", "domains"),
                                   ("posterior_runs=-1", "posterior_runs"), ("posterior_runs=1000000000", "posterior_runs"),
                                   ("robustness_runs=1000000000", "robustness_runs"),
                                   ("ensemble_runs=2.0", "ensemble_runs"), ("ensemble_runs=1000000000", "ensemble_runs"),
                                   ("patience=-5", "patience"), ("posterior_runs=1001", "posterior_runs"))):
        note = {"max_epochs=99999999999999999999": " (beyond int64)",
                "ensemble_size=1000000000": " (a billion members per ensemble)",
                "domains=1000000000": " (more domains than the graph has nodes; gs-splits --domains refuses it)",
                "posterior_runs=1000000000": " (a run count, like --seeds)",
                "posterior_runs=1001": " (a run count above --seeds' 1000)",
                "robustness_runs=1000000000": " (a run count, like --seeds)",
                "ensemble_runs=1000000000": " (a run count, like --seeds)"}.get(kv, "")
        refuse(f"N-set{i + 1}", f"--set {kv}", key, f" (--set {kv}){note}")
    case("N-set23", "numeric options", f"{GSB_DRY} --set \"lr=$(python -c 'print(\"[\"*500+\"]\"*500)')\" --out $S/o-N-set23",
         "--set lr=<a list nested 500 deep>: refused within 2 s, exit 2, one line naming --set (or lr); no traceback",
         rc=2, match=(r"--set|\blr\b",), one_line=True, max_s=2.0, timeout=20, absent=("$S/o-N-set23",))
    case("N-set24", "numeric options", f"{GSB_DRY} --methods gpn dann --set posterior_runs=1000 --set robustness_runs=1000 "
         "--out $S/o-N-set24", "the largest valid run counts (1000, as --seeds): a dry run of 6000 jobs within 10 s, "
         "exit 0 (no hang)", rc=0, match=(r": 6000 jobs planned",), max_s=10, timeout=60)
    refuse("N-address1", "--address x", "--address", " (needs --executor ray)")
    refuse("N-address2", "--address ''", "--address", " (empty, without --executor ray)")
    refuse("N-out1", "", "--out", " (--out '')", cmd=f"{GSB_DRY} --out ''")
    refuse("N-out2", "", "--out", " (--out ' ')", cmd=f"{GSB_DRY} --out ' '")
    refuse("N-device1", "--device bogus", "--device")
    refuse("N-device2", "--device cuda:-1", "--device")
    # gs-splits make
    mk = "gs-splits make $S/g.txt"

    def refuse_mk(cid, args, opt, extra=""):
        case(cid, "numeric options", f"{mk} {args} --out $S/o-{cid}",
             f"refused within 2 s, exit 2, one line naming {opt}{extra}; nothing written", rc=2,
             match=(re.escape(opt),), one_line=True, max_s=2.0, timeout=20,
             absent=(f"$S/o-{cid}.npz", f"$S/o-{cid}.json"))

    for i, v in enumerate(("'-0.1,0.2,0.2,0.3,0.4'", "=-0.1,0.2,0.2,0.3,0.4", "' -0.1,0.2,0.2,0.3,0.4'",
                           "nan,0.2,0.2,0.2,0.4", "inf,0,0,0,0", "1e400,0,0,0,0", "0.5,0.5", "50:40",
                           "0.3,0.1,0.1,0.1,0.4,", "0.3,0.1,0.1,0.1,0.40000001")):
        arg = f"--sizes{v}" if v.startswith("=") else f"--sizes {v}"
        refuse_mk(f"N-sizes{i + 1}", arg, "--sizes", f" ({arg})")
    for i, v in enumerate(("-1", "1.5", "nan")):
        refuse_mk(f"N-seed{i + 1}", f"--seed {v}", "--seed", f" (--seed {v})")
    for i, v in enumerate(("0", "-5", "2147483648", "1e3")):
        refuse_mk(f"N-numnodes{i + 1}", f"--num-nodes {v}", "--num-nodes", f" (--num-nodes {v})")
    for i, v in enumerate(("0", "-3", "1000000000", "41", "2.5")):
        refuse_mk(f"N-domains{i + 1}", f"--domains {v}", "--domains",
                  f" (--domains {v}{' on a 40-node graph' if v in ('1000000000', '41') else ''})")
    for i, v in enumerate(("-0.1", "1.5", "nan", "inf", "abc", "0")):
        refuse_mk(f"N-tie{i + 1}", f"--tie-fraction {v}", "--tie-fraction", f" (--tie-fraction {v})")
    for i, v in enumerate(("0", "-1G", "abc", "1e400", "nanG", "1K")):
        refuse_mk(f"N-memory{i + 1}", f"--memory {v}", "--memory", f" (--memory {v})")
    case("N-mkout1", "numeric options", f"{mk} --out ''",
         "--out '': refused at once, exit 2, one line naming --out (not a message about PosixPath('.'))", rc=2,
         match=(r"--out",), one_line=True, max_s=2.0, timeout=20)
    case("N-mkout2", "numeric options", f"cd $S/tmp && {mk} --out ' '",
         "--out ' ' (blank): refused, exit 2, one line naming --out; no ' .npz' written", rc=2,
         match=(r"--out",), one_line=True, max_s=2.0, timeout=20, absent=("$S/tmp/ .npz", "$S/tmp/ .json"))
    case("N-workdir", "numeric options", f"mkdir -p $S/wd-empty && cd $S/wd-empty && {mk} --path ondisk --workdir '' --out $S/o-wd",
         "--workdir '': refused, exit 2, one line naming --workdir (not read as the current folder)", rc=2,
         match=(r"--workdir",), one_line=True, max_s=2.0, timeout=20, post=files_in("wd-empty", set()))
    case("N-convout", "numeric options", "mkdir -p $S/cv-empty && cd $S/cv-empty && gs-splits convert $S/g.txt ''",
         "gs-splits convert OUT_DIR '': refused naming out_dir, nothing written into the current folder", rc=2,
         match=(r"out_dir|empty",), one_line=True, max_s=2.0, timeout=20, post=files_in("cv-empty", set()))
    case("N-ok1", "numeric options", f"{mk} --sizes '0.3, 0.1,0.1,0.1,0.4' --seed 7 --domains 40 --tie-fraction 1 "
         "--memory 64K --out $S/o-N-ok1", "valid edge values (a space after a comma, --domains = the node count, "
         "--tie-fraction 1, the smallest --memory) are accepted: exit 0, the split written", rc=0,
         exists=("$S/o-N-ok1.npz", "$S/o-N-ok1.json"))
    case("N-ok2", "numeric options", f"{GSB_DRY} --seeds 1000 --workers {4 * CORES} --threads {CORES} --retries 100 --out $S/o-N-ok2",
         "the largest valid values (--seeds 1000, --workers 4 per core, --threads = cores, --retries 100): "
         "a dry run of 3003 jobs (3 x 1000 ERM runs, 3 DE ensembles) within 10 s, exit 0", rc=0,
         match=(r": 3003 jobs planned",), max_s=10)

    # ------------------------------------------------------------------------ 5. node ids in edge lists
    for name, v, why in (("underscore", "1_0", "not a non-negative integer"), ("plus", "+5", "not a non-negative integer"),
                         ("arabic", "\u0661\u0662", "not a non-negative integer"),
                         ("fullwidth", "\uff11\uff12", "not a non-negative integer"),
                         ("float", "2.0", "not a non-negative integer"), ("negative", "-1", "not a non-negative integer"),
                         ("hex", "0x1F", "not a non-negative integer"), ("exp", "1e3", "not a non-negative integer"),
                         ("2p64", str(2**64), "too large"), ("2p63", str(2**63), "too large"),
                         ("19digits", "1234567890123456789", "too large")):
        case(f"I-{name}", "node ids", f"gs-splits make $S/id-{name}.txt --out $S/o-id-{name}",
             f"node id {v!r}: refused, exit 2, one line naming the file, line {BAD_LINE} and the id ({why})", rc=2,
             match=(rf"id-{name}\.txt: line {BAD_LINE}: node id '{re.escape(v)}' is {why}",), one_line=True, max_s=5,
             absent=(f"$S/o-id-{name}.npz",))
    for name, v, why in (("underscore", "1_0", "not a non-negative integer"), ("plus", "+5", "not a non-negative integer"),
                         ("arabic", "\u0661\u0662", "not a non-negative integer"),
                         ("fullwidth", "\uff11\uff12", "not a non-negative integer"), ("2p64", str(2**64), "too large")):
        case(f"I-conv-{name}", "node ids", f"gs-splits convert $S/id-{name}.txt $S/c-id-{name} --no-progress",
             f"convert: node id {v!r} refused naming file, line and id ({why})", rc=2,
             match=(rf"id-{name}\.txt: line {BAD_LINE}: node id '{re.escape(v)}' is {why}",), one_line=True, max_s=5)
    case("I-18digits", "node ids", "gs-splits make $S/id-18digits.txt --relabel --out $S/o-id-18",
         "an 18-digit id (999999999999999999) with --relabel: accepted, mapping written", rc=0,
         exists=("$S/o-id-18.npz", "$S/o-id-18.node_ids.npy"))
    case("I-18sparse", "node ids", "gs-splits make $S/id-18digits.txt --out $S/o-id-18b",
         "the same without --relabel: refused as sparse ids, pointing to --relabel", rc=2,
         match=(r"--relabel",), one_line=True)

    # -------------------------------------------------------------------------- 6. data checks
    ci = "gs-bench run structural-shifts --profile ci --split-source seeded --datasets cora-ml --dry-run"
    for cid, root, what, pat in (
            ("D1", "root-nan", "a NaN in the (sparse) features", r"data\.mat: the node features hold 1 NaN / inf value\(s\), the first at node 3, feature 2 \(nan\)"),
            ("D2", "root-inf", "an inf in dense features", r"data\.mat: the node features hold 1 NaN / inf value\(s\), the first at node 4, feature 1 \(inf\)"),
            ("D3", "root-big", "1e300 (finite in float64, inf as the float32 a model trains on)", r"data\.mat: the node features hold 1 NaN / inf value\(s\), the first at node 5, feature 0"),
            ("D4", "root-fifo", "a FIFO in place of data.mat", r"data\.mat is a FIFO \(named pipe\), not a regular file"),
            ("D5", "root-zero", "a symlink to /dev/zero in place of data.mat", r"data\.mat \(a symbolic link to /dev/zero\) is a character device"),
            ("D6", "root-dangling", "a dangling symlink in place of data.mat", r"data\.mat is a symbolic link to \S+no-such-file\.mat, which does not exist"),
            ("D7", "root-dir", "a folder in place of data.mat", r"data\.mat is a folder, not a regular file")):
        case(cid, "data checks", f"{ci} --set root=$S/{root} --out $S/o-{cid}",
             f"{what}: the dry run stops, exit 2, naming the file{' and the first bad entry' if cid < 'D4' else ' as such (not missing)'}; no hang",
             rc=2, match=(pat,), nomatch=(r"suite is valid", r"\bmissing\b"), timeout=60, absent=(f"$S/o-{cid}",))
    case("D8", "data checks", f"{ci} --set root=$S/root-ok --out $S/o-D8",
         "the same file without NaN (control): the suite is valid, exit 0", rc=0, match=(r"the suite is valid",))
    case("D9", "data checks", "python $S/load.py cora-ml $S/root-nan",
         "gs_data.load of the NaN file: CorruptRawFileError naming the file and the entry", rc=1,
         match=(r"CorruptRawFileError: \S+root-nan/structural-shifts/cora-ml/data\.mat: the node features hold",))
    case("D10", "data checks", "unshare -m sh -c 'mount --bind -o ro $S/ro $S/ro && gs-bench run structural-shifts "
         "--methods erm --seeds 1 --no-progress --out $S/ro'",
         "a read-only run folder (real, bind mount): exit 2, one line naming the run folder as read-only; no "
         "temporary lock file named, no 'Free some space'", rc=2, match=(r"the run folder \S+/ro is read-only",),
         nomatch=(r"\.lock\.\d+\.[0-9a-f]+\.tmp", r"Free some space"), one_line=True)
    case("D11", "data checks", "unshare -m sh -c 'mount --bind -o ro $S/ro-parent $S/ro-parent && gs-bench run "
         "structural-shifts --methods erm --seeds 1 --no-progress --out $S/ro-parent/new'",
         "a new run folder inside a read-only folder: exit 2, one line naming it read-only", rc=2,
         match=(r"ro-parent/new.*read-only",), nomatch=(r"Free some space",), one_line=True)
    case("D12", "data checks", "unshare -m sh -c 'mount -t tmpfs -o size=2m tmpfs $S/full && mkdir $S/full/o && "
         "(dd if=/dev/zero of=$S/full/fill bs=64k 2>/dev/null; true) && gs-bench run structural-shifts --methods erm "
         "--seeds 1 --no-progress --out $S/full/o'",
         "a full disk (2 MiB tmpfs): exit 2, one line naming the folder, 'nothing was lost'", rc=2,
         match=(r"No space left on device; nothing was lost",), one_line=True)
    case("D13", "data checks", "unshare -m sh -c 'mount -t tmpfs -o size=2m tmpfs $S/full2 && cp -r $S/done $S/full2/o && "
         "(dd if=/dev/zero of=$S/full2/fill bs=64k 2>/dev/null; true) && gs-bench run structural-shifts --methods erm "
         "--seeds 1 --no-progress --out $S/full2/o; rc=$?; echo records-kept=$(ls $S/full2/o/results | wc -l); exit $rc'",
         "a full disk holding a finished run (3 records): exit 2, 'nothing was lost: the 3 finished record(s)', "
         "the 3 records still there", rc=2, match=(r"nothing was lost: the 3 finished record", r"^records-kept=3$"))
    case("D14", "data checks", "ulimit -v 3000000; gs-splits make /dev/zero --out $S/o-D14",
         "gs-splits make of /dev/zero (a character device; under a 3 GB memory cap, since without it the "
         "reader takes all memory): refused at once as not a regular file, exit 2, no MemoryError", rc=2,
         match=(r"/dev/zero.*(character device|not a regular file)",), nomatch=(r"MemoryError",), max_s=10, timeout=30)
    case("D15", "data checks", "ulimit -v 3000000; gs-splits convert /dev/zero $S/c-D15 --no-progress",
         "gs-splits convert of /dev/zero: refused as not a regular file, exit 2, no hang, nothing left in "
         "$S/c-D15", rc=2, match=(r"/dev/zero.*(character device|not a regular file)",), max_s=10, timeout=20,
         absent=("$S/c-D15/.partial",))
    case("D16", "data checks", "gs-splits make <(cat $S/g.txt) --out $S/o-D16",
         "an edge list read from a pipe (process substitution, a FIFO with a writer) keeps working: exit 0",
         rc=0, exists=("$S/o-D16.npz",), timeout=60)
    case("D17", "data checks", "gs-splits make $S/g.txt --property-file $S/prop-nan.npy --out $S/o-D17",
         "a NaN in a --property-file: refused naming the file and node 5", rc=2,
         match=(r"prop-nan\.npy: property contains 1 NaN/inf value\(s\) \(first at node 5",), one_line=True)

    # ---------------------------------------------------------------------- 7. litter and noise
    src = REPO / "packages" / "gs-splits" / "src"
    numba_run = ("HOME=$S/rohome TMPDIR=$S/{tmp} env -u NUMBA_CACHE_DIR -u XDG_CACHE_HOME "
                 "gs-splits make $S/g.txt --out $S/o-numba-$i")
    case("L1", "litter", f"unshare -m sh -c 'mount --bind -o ro {src} {src} && mount --bind -o ro $S/rohome $S/rohome && "
         f"for i in 1 2 3; do {numba_run.format(tmp='ntmp')} || exit 1; done'",
         "numba's cache unusable (gs_splits' folder and $HOME read-only, NUMBA_CACHE_DIR unset), 3 runs: one "
         "gs-splits-numba-* folder in the private TMPDIR, reused (compiled once), each run exit 0", rc=0,
         match=(r"cached in \S+/ntmp/gs-splits-numba-\d+, reused",),
         post=both(count_dirs("ntmp", "gs-splits-numba-*", 1),
                   lambda c, S: [] if len(re.findall("compiling kernels", c.out)) <= 1 else
                   [f"kernels compiled {len(re.findall('compiling kernels', c.out))} times"]))
    case("L2", "litter", f"mkdir -m 777 $S/ntmp2/gs-splits-numba-{os.getuid()} && unshare -m sh -c 'mount --bind -o ro {src} {src} && "
         f"mount --bind -o ro $S/rohome $S/rohome && for i in 1 2; do {numba_run.format(tmp='ntmp2')} || exit 1; done'",
         "the same with a world-writable gs-splits-numba-<uid> planted: not used (numba unpickles its index); "
         "one numbered alternative, reused by the 2nd run", rc=0,
         match=(r"cached in \S+/ntmp2/gs-splits-numba-\d+-1, reused",),
         post=lambda c, S: [] if not any((S / "ntmp2" / f"gs-splits-numba-{os.getuid()}").iterdir()) else
         ["the planted folder was written"])
    case("L3", "litter", f"{GSB_DRY} --out $S/o-L3",
         "a dry run: no FutureWarning / DeprecationWarning line on stderr, no --out folder", rc=0,
         nomatch=(r"FutureWarning|DeprecationWarning",), absent=("$S/o-L3",))
    case("L4", "litter", "gs-bench run structural-shifts --methods erm --seeds 1 --no-progress --out $S/done-L4",
         "a real run (finished folder: imports the runner, writes the report): no FutureWarning / "
         "DeprecationWarning on stderr", rc=0, match=(r"3 already done, 0 to run",),
         nomatch=(r"FutureWarning|DeprecationWarning",), pre=copy_done("done-L4"))
    case("L5", "litter", "python -c \"import warnings; from gs_bench.executors import quiet_third_party_warnings as q; q(); "
         "warnings.warn_explicit('torch.jit.script is deprecated', FutureWarning, 'torch/jit/_script.py', 1, "
         "module='torch.jit._script'); warnings.warn_explicit('ours changed', FutureWarning, 'gs_models/x.py', 1, "
         "module='gs_models.x')\"",
         "the filter gs-bench installs: a torch FutureWarning (as torch 2.14 raises on import) is hidden, one "
         "raised in a gs_* module still shows", rc=0, match=(r"ours changed",), nomatch=(r"torch\.jit\.script",))
    case("L6", "litter", f"{mk} --domains 1000000000 --out $S/o-L6",
         "a refused split writes nothing (no .npz, .json, .csr beside it)", rc=2,
         absent=("$S/o-L6.npz", "$S/o-L6.json", "$S/o-L6.csr"))
    case("L7", "litter", "find $S/zip -name '.extract-*'",
         "after all archive cases: no .extract-* temporary folder anywhere", rc=0, match=(r"^$",),
         nomatch=(r"\.extract-",))

    # ------------------------------------------------------------------ 8. what must keep holding
    case("K1", "keeps holding", "gs-bench run structural-shifts --methods erm --seeds 1 --no-progress --out $S/lock-live",
         "a .lock of a live process (this QA script's pid, this host): refused, exit 2, one line naming the "
         "holder and the lock file; the lock stays", rc=2,
         match=(rf"in use by another gs-bench run \(host \S+, pid {os.getpid()}", r"lock-live/\.lock"), one_line=True,
         exists=("$S/lock-live/.lock",), pre=lock_file("lock-live", pid=os.getpid()))
    case("K2", "keeps holding", "gs-bench run structural-shifts --methods erm --seeds 1 --no-progress --out $S/lock-stale",
         "a .lock of a dead pid on this host: taken over with a warning, the run goes on, the lock removed at the end",
         rc=0, match=(r"removing stale lock \S+lock-stale/\.lock of pid \d+", r"3 already done, 0 to run"),
         absent=("$S/lock-stale/.lock",), pre=lambda S: lock_file("lock-stale", pid=dead_pid())(S))
    case("K3", "keeps holding", "gs-bench run structural-shifts --methods erm --seeds 1 --no-progress --out $S/lock-dir",
         "a folder named .lock: refused, named", rc=2, match=(r"lock-dir/\.lock is a folder",), one_line=True,
         pre=lambda S: (copy_done("lock-dir")(S), (S / "lock-dir" / ".lock").mkdir()))
    case("K4", "keeps holding", "gs-bench run structural-shifts --methods erm --seeds 1 --no-progress --out $S/lock-other-host",
         "a .lock of another host: refused (its process cannot be checked), naming the file to delete", rc=2,
         match=(r"host elsewhere\.invalid", r"delete \S+lock-other-host/\.lock"), one_line=True,
         pre=lock_file("lock-other-host", content='{"host": "elsewhere.invalid", "pid": 1, "started": "x"}'))
    case("K5", "keeps holding", "gs-bench run structural-shifts --profile ci --datasets cora-ml --set root=$S/root-ok "
         "--split-source seeded --seeds 1000 --dry-run --out $S/o-K5 & p=$!; sleep 3; kill -TERM $p; wait $p",
         "SIGTERM during a dry run: exit 143, 'dry run: nothing was started or written' (no 'resume'), no --out", rc=143,
         match=(r"stopped by SIGTERM; dry run: nothing was started or written",), nomatch=(r"resume",),
         absent=("$S/o-K5",))
    case("K6", "keeps holding", "gs-bench run structural-shifts --methods erm --seeds 1 --no-progress --out $S/done-K6",
         "a finished folder run again: every job already done, nothing trained, exit 0", rc=0,
         match=(r"3 jobs, 3 already done, 0 to run",), pre=copy_done("done-K6"), max_s=60)
    case("K7", "keeps holding", "mkdir -p $S/done-K7/results && cp $S/done/results/*.json $S/done-K7/results/ && "
         "printf '{\"key\": \"trunc' > $S/done-K7/results/00000000000000000000.json && gs-bench report $S/done-K7",
         "a truncated record in a folder without a run file: skipped by name and left in place (not a run folder)",
         rc=0, match=(r"00000000000000000000\.json: not valid JSON",),
         exists=("$S/done-K7/results/00000000000000000000.json",))
    case("K8", "keeps holding", "gs-bench run $S/dup.toml --seeds 1 --dry-run --out $S/o-K8",
         "a dry run writes nothing: no --out folder", rc=0, absent=("$S/o-K8",))

    # ------------------------------------------------------------------------- 9. hostile user
    H = "hostile user"
    case("H1", H, "gs-bench run nope --dry-run --out $S/o-H1", "an unknown suite: one line listing the suites",
         rc=2, match=(r"unknown suite 'nope'; available suites",), one_line=True, max_s=2)
    case("H2", H, f"{GSB_DRY} --profile nope --out $S/o-H2", "an unknown profile: one line with the choices",
         rc=2, match=(r"--profile: invalid choice: 'nope'",), one_line=True, max_s=2)
    case("H3", H, f"{GSB_DRY} --datasets cora-mll --out $S/o-H3", "a misspelt dataset: did you mean 'cora-ml'",
         rc=2, match=(r"unknown dataset 'cora-mll'; did you mean 'cora-ml'",), one_line=True, max_s=2)
    case("H4", H, f"{GSB_DRY} --methods ermm --out $S/o-H4", "a misspelt method: did you mean 'erm'",
         rc=2, match=(r"unknown method 'ermm' for structural-shifts; did you mean 'erm'",), one_line=True, max_s=2)
    case("H5", H, f"{GSB_DRY} --set dropuot=0.1 --out $S/o-H5", "an unknown --set key: one line, the accepted keys",
         rc=2, match=(r"settings\.dropuot: unknown key",), one_line=True, max_s=2)
    case("H6", H, "gs-bench run $S/bad.toml --dry-run --out $S/o-H6", "a suite file that is not TOML: one line "
         "with line and column", rc=2, match=(r"bad\.toml is not valid TOML: .*line 2",), one_line=True)
    case("H7", H, "gs-bench run $S/dir.toml --dry-run --out $S/o-H7", "a suite path that is a directory",
         rc=2, match=(r"dir\.toml is a directory",), one_line=True)
    case("H8", H, "gs-bench run $S/empty.toml --dry-run --out $S/o-H8", "an empty suite file",
         rc=2, match=(r"empty\.toml: missing `suite",), one_line=True)
    case("H9", H, "gs-bench run $S/binary.toml --dry-run --out $S/o-H9", "a suite file that is not UTF-8",
         rc=2, match=(r"binary\.toml is not UTF-8",), one_line=True)
    case("H10", H, "gs-bench run $S/deep.toml --dry-run --out $S/o-H10",
         "a suite file with an array nested 100000 deep: one line naming the file, exit 2, no traceback",
         rc=2, match=(r"deep\.toml",), nomatch=(r"RecursionError",), one_line=True)
    case("H11", H, "gs-bench list nope", "list of an unknown suite", rc=2, match=(r"unknown suite 'nope'",), one_line=True)
    case("H12", H, "gs-bench report $S/nonexistent", "report of a missing folder", rc=2,
         match=(r"run folder \S+nonexistent does not exist",), one_line=True)
    case("H13", H, "gs-bench report $S/g.txt", "report of a file", rc=2, match=(r"g\.txt does not exist \(or is not a folder\)",),
         one_line=True)
    case("H14", H, f"{GSB_DRY} --set lr --out $S/o-H14", "--set without '='", rc=2,
         match=(r"--set: expected KEY=VALUE, got 'lr'",), one_line=True, max_s=2)
    case("H15", H, "gs-bench run structural-shifts --methods erm --seeds 1 --no-progress --out $S/g.txt",
         "--out names an existing file: exit 2, one line naming it", rc=2, match=(r"g\.txt",), one_line=True)
    case("H16", H, "gs-bench demo --seed -1 --no-train --out $S/o-H16",
         "gs-bench demo --seed -1: refused as a bad option (exit 2, one line naming --seed), not an internal error",
         rc=2, match=(r"--seed",), nomatch=(r"internal error",), one_line=True, max_s=2)
    case("H17", H, "gs-splits make $S/nonexistent.txt --out $S/o-H17", "a missing graph file", rc=2,
         match=(r"graph file not found: \S+nonexistent\.txt",), one_line=True)
    case("H18", H, "gs-splits make $S/empty.txt --out $S/o-H18", "an empty edge list", rc=2,
         match=(r"empty\.txt: the edge list is empty",), one_line=True)
    case("H19", H, "gs-splits make $S/csr-nested --out $S/o-H19",
         "an on-disk CSR folder whose meta.json is 100000-deep JSON: one line naming meta.json, exit 2, no "
         "RecursionError", rc=2, match=(r"csr-nested/meta\.json",), nomatch=(r"RecursionError", r"internal error"),
         one_line=True)
    case("H20", H, "gs-splits make $S/csr-trunc --out $S/o-H20", "a truncated meta.json: named", rc=2,
         match=(r"csr-trunc/meta\.json: not readable JSON",), one_line=True)
    case("H21", H, "gs-bench run structural-shifts --unset lr --set lr=0.1 --dry-run --out $S/o-H21",
         "--set and --unset of one key: one line", rc=2, match=(r"--unset: lr is also given to --set",), one_line=True)
    case("H22", H, "gs-bench", "no command: the help on stderr, exit 2", rc=2, match=(r"Commands:",))
    case("H23", H, "ulimit -v 3000000; gs-splits convert $S/g.txt $S/c-H23 --no-progress",
         "convert of the 40-node graph in a shell limited to 3 GB of address space: done (exit 0), or at "
         "most one 'out of memory' line (exit 2); no traceback", rc=(0, 2), max_err_lines=1, timeout=60)
    case("H24", H, "ulimit -v 3000000; gs-splits make $S/g.txt --out $S/o-H24",
         "make of the 40-node graph under the same limit: exit 0", rc=0, exists=("$S/o-H24.npz",), timeout=60)


# ==================================================================================== running
def run_case(c: Case, S: Path, env: dict) -> None:
    shown = c.cmd
    if c.pre is not None:
        c.pre(S)
    t0 = time.monotonic()

    p = subprocess.Popen(["bash", "-c", c.cmd], cwd=S, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    timed_out = False
    try:
        out, err = p.communicate(timeout=c.timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = p.communicate()
    c.secs = time.monotonic() - t0
    out_s, err_s = out.decode(errors="replace"), err.decode(errors="replace")
    c.out = out_s + "\n" + err_s  # type: ignore[attr-defined]
    both_s = c.out
    probs = []
    rc = p.returncode
    if timed_out:
        probs.append(f"no answer within {c.timeout:.0f} s (killed)")
    elif c.rc is not None and rc not in (c.rc if isinstance(c.rc, tuple) else (c.rc,)):
        probs.append(f"exit {rc}, expected {c.rc}")
    for rx in c.match:
        if not re.search(rx, both_s, re.M):
            probs.append(f"no line matches /{rx}/")
    for rx in (*c.nomatch, NO_TRACEBACK):
        m = re.search(rx, both_s, re.M)
        if m:
            probs.append(f"matches /{rx}/: {m.group(0)[:80]!r}")
    err_lines = [ln for ln in err_s.splitlines() if ln.strip()]
    if c.one_line and len(err_lines) != 1 and not timed_out:
        probs.append(f"{len(err_lines)} stderr lines, expected 1")
    if c.max_err_lines is not None and len(err_lines) > c.max_err_lines and not timed_out:
        probs.append(f"{len(err_lines)} stderr lines, expected at most {c.max_err_lines}")
    if c.max_s is not None and c.secs > c.max_s and not timed_out:
        probs.append(f"took {c.secs:.1f} s, expected <= {c.max_s:g} s")
    for pth in c.exists:
        if not os.path.lexists(pth.replace("$S", str(S))):
            probs.append(f"{pth} missing")
    for pth in c.absent:
        if os.path.lexists(pth.replace("$S", str(S))):
            probs.append(f"{pth} exists")
    if c.post is not None and not timed_out:
        probs += c.post(c, S)
    c.problems, c.ok = probs, not probs
    # the telling line: the first line a match regex finds, else the first error-like stderr line,
    # else the last stderr line, else the last stdout line
    line = ""
    for rx in c.match:
        m = re.search(rx if rx.startswith("^") else rf"^.*(?:{rx}).*$", both_s, re.M)
        if m and m.group(0).strip():
            line = m.group(0)
            break
    if not line:
        bad = [ln for ln in err_lines if re.search(r"error|Error|refused|cannot|unreadable|stopped|warning", ln)]
        outl = [ln for ln in out_s.splitlines() if ln.strip()]
        line = bad[0] if bad else err_lines[-1] if err_lines else outl[-1] if outl else ""
    c.seen = f"exit {'timeout' if timed_out else rc}, {c.secs:.1f} s" + (f": `{short(line, S)}`" if line.strip() else "")
    if probs:
        c.seen += "; **" + "; ".join(short(x, S, 160) for x in probs) + "**"
    c.shown = shown  # type: ignore[attr-defined]


def tree_state() -> tuple[str, str]:
    """The short commit of the tree and ``git status --porcelain`` of its tracked files."""
    git = ["git", "-C", str(REPO)]
    commit = subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(git + ["status", "--porcelain", "--untracked-files=no"], capture_output=True,
                           text=True).stdout.strip()
    return commit or "unknown", dirty


def short(text: str, S: Path, n: int = 220) -> str:
    text = text.replace(str(S), "$S").replace("`", "'").replace("|", "\\|").strip()
    return text if len(text) <= n else text[: n - 3] + "..."


def md_cmd(cmd: str) -> str:
    return f"`{cmd}`"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="write the Markdown table here (default: stdout)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    ap.add_argument("--only", help="comma-separated case ids (prefix match) to run")
    args = ap.parse_args()
    try:
        os.nice(10)
    except OSError:
        pass
    t_start = time.monotonic()
    tree_at_start = tree_state()
    S = Path(tempfile.mkdtemp(prefix="issue-56-qa-"))
    pypath = ":".join([str(p) for p in sorted((REPO / "packages").glob("*/src"))] + [str(REPO / "apps/bench/src")])
    env = dict(os.environ, PYTHONPATH=pypath, S=str(S), GS_DATA_ROOT=str(S / "gsdata"), TMPDIR=str(S / "tmp"),
               MPLCONFIGDIR=str(S / "mpl"), PATH=f"{BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    env.pop("GS_SHARED_DATA", None)
    env.pop("PYTHONWARNINGS", None)
    try:
        define_cases()
        cases = CASES
        if args.only:
            wanted = args.only.split(",")
            cases = [c for c in CASES if any(c.id == w or c.id.startswith(w) for w in wanted)]
        print(f"scratch folder {S}; building the inputs ...", file=sys.stderr)
        build_fixtures(S, env)
        for i, c in enumerate(cases, 1):
            try:
                run_case(c, S, env)
            except Exception as exc:  # noqa: BLE001 - a broken case is a failed case, not a stop
                c.ok, c.seen = False, f"**the case itself failed: {type(exc).__name__}: {exc}**"
                c.shown = c.cmd  # type: ignore[attr-defined]
            print(f"[{i}/{len(cases)}] {c.id}: {'held' if c.ok else 'FAILED'} ({c.secs:.1f} s)"
                  + ("" if c.ok else f"  {'; '.join(c.problems)[:300]}"), file=sys.stderr)
        total = time.monotonic() - t_start
        held = sum(c.ok for c in cases)
        failed = [c for c in cases if not c.ok]
        commit, dirty = tree_at_start
        moved = tree_state() != tree_at_start
        tv = subprocess.run([sys.executable, "-c", "import torch, numpy, numba; print(torch.__version__, "
                             "numpy.__version__, numba.__version__)"], capture_output=True, text=True, env=env).stdout.split()
        tv = tv + ["?"] * (3 - len(tv))
        lines = [
            "# Issue 56: QA table",
            "",
            f"- **Date:** {datetime.date.today().isoformat()}. **Commit tested:** `{commit}`"
            + (" (with uncommitted changes)" if dirty else "") + f" of `{REPO}`"
            + (f"; **the tree changed while the cases ran** (now `{tree_state()[0]}`"
               f"{' with uncommitted changes' if tree_state()[1] else ''}): run it again on a still tree"
               if moved else "") + ".",
            f"- **Environment:** {os.uname().sysname} {os.uname().release}, {os.cpu_count()} CPU(s), Python "
            f"{sys.version.split()[0]}, torch {tv[0]}, numpy {tv[1]}, numba {tv[2]}; run as "
            f"{'root' if os.geteuid() == 0 else 'uid ' + str(os.geteuid())}, under `nice -n 10`.",
            f"- **Counts: {len(cases)} cases, {held} held, {len(failed)} FAILED.** Total run time {total:.0f} s.",
            "- **How:** `python docs/qa/issue-56-qa.py --out docs/qa/issue-56-qa.md` builds every input in a fresh "
            "scratch folder `$S` and runs each command with `bash -c` in `$S`, with the tree's `packages/*/src` and "
            "`apps/bench/src` first on `PYTHONPATH`, `GS_DATA_ROOT=$S/gsdata`, `TMPDIR=$S/tmp`, a timeout per case "
            "(a hang is a FAILED case; the cases that read a never-ending file run under `ulimit -v`). A case holds when every part of its "
            "expectation holds: the exit code, the output lines named, \"one line\" (exactly one non-empty stderr "
            "line), the seconds, and the files that must or must not exist afterwards; no case may print a "
            "Python traceback.",
            "- **Inputs:** `$S/g.txt` a 40-node undirected edge list (both directions, no warnings); "
            f"`$S/id-<name>.txt` the same plus `3 <id>` / `<id> 3` on lines {BAD_LINE}-{BAD_LINE + 1}; "
            "`$S/root-*/structural-shifts/"
            "cora-ml/data.mat` copies of gs-data's pubmed fixture with the change named; `$S/done` a finished run "
            "folder (records for exactly the 3 jobs `--methods erm --seeds 1` plans, written through "
            "`gs_bench.preflight.check_suite`, so nothing trains); `$S/rf-*` run folders made of "
            "`docs/qa/issue-56/ss-record.json` (one real structural-shifts record) plus a run file; "
            "`$S/foreign*` another tool's folder; `$S/arch-*` archived runs (`results.jsonl`); `$S/zc.py "
            "SCENARIO` builds `$S/zip/SCENARIO/data/ogb/arxiv.zip` beside a neighbour `ogb/products/` and a "
            "folder `outside/`, loads `ogbn-arxiv` through `gs_data.datasets._ensure_raw` (which calls "
            "`extract_zip`) and prints the error, every path changed outside `ogb/arxiv/`, new links and what "
            "is left; 100000-deep JSON is `[[[...]]]` (or `{\"a\":{...}}`).",
            "",
            "| # | category | command | expected | seen | verdict |",
            "|---|---|---|---|---|---|",
        ]
        for c in cases:
            lines.append(f"| {c.id} | {c.cat} | {md_cmd(short(c.shown, S, 400))} | {c.expect.replace('|', '/')} | "
                         f"{c.seen} | {'held' if c.ok else '**FAILED**'} |")
        if failed:
            lines += ["", "## Failed cases", ""]
            for c in failed:
                lines.append(f"- **{c.id}** `{short(c.shown, S, 400)}`: {'; '.join(short(p, S, 300) for p in c.problems)}")
        text = "\n".join(lines) + "\n"
        if args.out:
            args.out.write_text(text)
            print(f"wrote {args.out}: {len(cases)} cases, {held} held, {len(failed)} FAILED, {total:.0f} s",
                  file=sys.stderr)
        else:
            sys.stdout.write(text)
        return 1 if failed else 0
    finally:
        if args.keep:
            print(f"kept {S}", file=sys.stderr)
        else:
            subprocess.run(["chmod", "-R", "u+w", str(S)], capture_output=True)
            shutil.rmtree(S, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
