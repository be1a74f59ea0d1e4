"""Run every code block of the READMEs and docs as written, each alone, on this checkout.

The blocks of README.md, ``packages/*/README.md``, ``apps/bench/README.md`` and
``docs/*.md``:

* ```` ```python ```` blocks run in a fresh ``python`` process (the interpreter running this
  script, which has the packages installed);
* ```` ```bash ```` blocks run with ``bash -e``;
* ```` ```toml ```` blocks must parse (``tomllib``);
* blocks without a language are output listings or diagrams and are not run.

Each runs in a scratch folder that holds links to the repository's top-level entries (so
``python packages/...`` and ``./packages/...`` resolve as from the repository root) and
nothing else: what a block writes stays there, and ``../shared`` is not beside it. A block
that cannot run that way is marked, on the line right above its fence, with the reason::

    <!-- not run: needs data: ../shared/datasets/structural-shifts (the CoraML file) -->

The reasons start with one of :data:`REASONS`. ``--list`` prints every block with its status;
``python docs/site/readme_blocks.py`` runs them and exits 1 if a block that is not marked
fails (``nox -s docs`` runs it in CI). A block that installs (``pip install``, ``uv pip``)
installs into the environment of the interpreter running this script, so it runs only with
``--allow-install`` (the nox session's throwaway environment passes it): in a development
venv it would replace the editable installs.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: why a block may be left out, and what that means
REASONS = {
    "needs data": "reads files that are not in a plain clone (../shared, a big generated graph)",
    "long": "a measurement or a run of minutes to hours (its figures are in the README beside it)",
    "cluster": "needs a Ray cluster or a GPU",
    "changes the repository": "commits, tags or uploads (the release procedure)",
    "runs the CI": "the test command itself (.ci/run runs it as written, step 1)",
}
_MARK = re.compile(r"<!--\s*not run:\s*(.+?)\s*-->")
TIMEOUT = 600


@dataclass
class Block:
    file: str
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    mark: str | None  # the "not run" reason, or None

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def markdown_files() -> list[str]:
    files = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("packages/*/README.md")),
             "apps/bench/README.md", *sorted(str(p.relative_to(ROOT)) for p in ROOT.glob("docs/*.md"))]
    return [f for f in files if (ROOT / f).is_file()]


def blocks(file: str) -> list[Block]:
    lines = (ROOT / file).read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        m = re.match(r"^(\s*)```\s*([\w+-]*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        indent, lang = len(m.group(1)), m.group(2).lower()
        j = i + 1
        while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
            j += 1
        code = "\n".join(line[indent:] if line[:indent].strip() == "" else line for line in lines[i + 1:j])
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        mark = _MARK.search(lines[k]) if k >= 0 else None
        out.append(Block(file, i + 1, lang, code + "\n", mark.group(1) if mark else None))
        i = j + 1
    return out


def scratch() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="gs-readme-block-"))
    for entry in ROOT.iterdir():
        if entry.name not in (".git", "build", ".nox"):
            (folder / entry.name).symlink_to(entry)
    return folder


_INSTALLS = re.compile(r"\bpip\s+install\b|\buv\s+pip\b")


def run(block: Block, allow_install: bool = False) -> tuple[bool, str, float]:
    """(passed, what it printed at the end, seconds)."""
    t = time.perf_counter()
    if block.lang != "python" and _INSTALLS.search(block.code) and not allow_install:
        return False, (f"installs into {sys.prefix}: run with --allow-install in a throwaway environment "
                       "(python -m nox -s docs does)"), 0.0
    if block.lang == "toml":
        try:
            tomllib.loads(block.code)
            return True, "parses", time.perf_counter() - t
        except tomllib.TOMLDecodeError as exc:
            return False, str(exc), time.perf_counter() - t
    cwd = scratch()
    cmd = [sys.executable, "-c", block.code] if block.lang == "python" else ["bash", "-e", "-c", block.code]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "MPLBACKEND": "Agg"}
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
        out = (proc.stdout + proc.stderr).strip().splitlines()
        return proc.returncode == 0, "\n".join(out[-8:]), time.perf_counter() - t
    except subprocess.TimeoutExpired:
        return False, f"timed out after {TIMEOUT} s", time.perf_counter() - t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", action="store_true", help="list the blocks and their status; run nothing")
    ap.add_argument("--allow-install", action="store_true",
                    help="run the blocks that pip-install into this interpreter's environment too "
                         "(only in a throwaway environment, such as the nox session's)")
    ap.add_argument("files", nargs="*", help="only these Markdown files (repository paths)")
    args = ap.parse_args(argv)
    todo = [b for f in (args.files or markdown_files()) for b in blocks(f)]
    problems, counts = [], {"ran": 0, "not code": 0, **{r: 0 for r in REASONS}}
    for b in todo:
        if b.mark is not None:
            reason = next((r for r in REASONS if b.mark.startswith(r)), None)
            if reason is None:
                problems.append(f"{b.where}: 'not run: {b.mark}' does not start with one of: {', '.join(REASONS)}")
                continue
            counts[reason] += 1
            if args.list:
                print(f"{b.where} [{b.lang}] not run: {b.mark}")
            continue
        if b.lang not in ("python", "bash", "sh", "toml"):
            counts["not code"] += 1
            if args.list:
                print(f"{b.where} [{b.lang or 'no language'}] not code (output or diagram)")
            continue
        if args.list:
            print(f"{b.where} [{b.lang}] runs")
            continue
        ok, tail, seconds = run(b, args.allow_install)
        counts["ran"] += 1
        print(f"{'ok  ' if ok else 'FAIL'} {b.where} [{b.lang}] {seconds:.1f} s", flush=True)
        if not ok:
            problems.append(f"{b.where} [{b.lang}] failed:\n    " + tail.replace("\n", "\n    "))
    print("blocks: " + ", ".join(f"{k} {v}" for k, v in counts.items() if v or k == "ran"))
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
