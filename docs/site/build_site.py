"""Write the docs site's sources and configuration, then (with ``--build``) build it with MkDocs.

``python -m nox -s docs`` runs this. The site is generated, never edited by hand:

* the quick starts and guides are the repository's own Markdown (README.md, each package's
  README, ``docs/*.md``, ``docs/qa/*.md``, ``apps/bench/measured/README.md``), copied at their
  repository paths so that the links between them keep working; a relative link to any other
  file of the repository (source, CHANGELOG, a committed run) becomes a link to that file on
  the repository's web page, so the site has no dead internal link;
* the API reference of each package, from its docstrings (mkdocstrings, static analysis: no
  package is imported, so no torch is needed);
* the CLI reference, from the argparse parsers of ``gs-splits`` and ``gs-bench`` (``--help``
  of every command);
* the suites and their settings, from gs-bench's typed specs (``gs-bench list`` and
  ``gs-bench list SUITE``);
* the measured tables: the committed runs' index and the generated ``gs-bench compare`` block.

Usage: ``python docs/site/build_site.py [--build] [--out build/docs]``. With ``--build`` it
runs ``mkdocs build --strict`` (every warning an error: a dead link between pages, a missing
anchor, a page left out of the navigation).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REPO_URL = "https://github.com/gs-dev/gs/blob/main"
PACKAGES = {  # distribution -> (import name, source folder)
    "gs-splits": ("gs_splits", "packages/gs-splits/src"),
    "gs-data": ("gs_data", "packages/gs-data/src"),
    "gs-models": ("gs_models", "packages/gs-models/src"),
    "gs-metrics": ("gs_metrics", "packages/gs-metrics/src"),
    "gs-algos": ("gs_algos", "packages/gs-algos/src"),
    "gs-bench": ("gs_bench", "apps/bench/src"),
}
_LINK = re.compile(r"(!?\[[^\]\n]*\]\()([^)\s]+)(\))")
_FENCE = re.compile(r"^\s*(```|~~~)")


def pages_from_repository() -> list[str]:
    """The repository's Markdown that the site shows, as repository paths."""
    pages = ["README.md"]
    pages += sorted(str(p.relative_to(ROOT)) for p in (ROOT / "packages").glob("*/README.md"))
    pages += ["apps/bench/README.md", "apps/bench/measured/README.md"]
    pages += sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))
    pages += sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs" / "qa").glob("*.md"))
    return [p for p in pages if (ROOT / p).is_file()]


def rewrite_links(text: str, page: str, shown: set[str], copied: set[str]) -> str:
    """Relative links of ``page`` (a repository path) to files the site does not show point
    at the repository's web page; links to shown pages and copied images stay as written.
    Code blocks are left alone."""
    base = (ROOT / page).parent
    out, in_code = [], False
    for line in text.splitlines(keepends=True):
        if _FENCE.match(line):
            in_code = not in_code
        if in_code:
            out.append(line)
            continue

        def fix(m: re.Match[str]) -> str:
            target = m.group(2)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                return m.group(0)
            path, _, anchor = target.partition("#")
            resolved = (base / path).resolve()
            try:
                rel = str(resolved.relative_to(ROOT))
            except ValueError:  # outside the repository (../shared): the text stays, the link goes
                label = m.group(1).lstrip("!")[1:-2]
                return f"{label} (`{target}`)"
            if rel in shown or rel in copied:
                return m.group(0)
            if resolved.is_dir():
                url = f"{REPO_URL.replace('/blob/', '/tree/')}/{rel}"
            else:
                url = f"{REPO_URL}/{rel}"
            return f"{m.group(1)}{url}{'#' + anchor if anchor else ''}{m.group(3)}"

        out.append(_LINK.sub(fix, line))
    return "".join(out)


def _images(text: str, page: str) -> set[str]:
    base = (ROOT / page).parent
    found = set()
    for m in _LINK.finditer(text):
        if m.group(1).startswith("!") and not re.match(r"^[a-z]+:", m.group(2)):
            p = (base / m.group(2).partition("#")[0]).resolve()
            if p.is_file():
                found.add(str(p.relative_to(ROOT)))
    return found


def _help_of(parser: argparse.ArgumentParser, prog: str) -> list[tuple[str, str]]:
    """(command, --help text) of a parser and each of its sub-commands."""
    out = [(prog, parser.format_help())]
    for action in parser._actions:  # argparse keeps sub-parsers here
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += _help_of(sub, f"{prog} {name}")
    return out


def cli_page() -> str:
    sys.path[:0] = [str(ROOT / src) for _, src in PACKAGES.values()]
    from gs_bench.cli import _build_parser
    from gs_splits.cli import _parser

    lines = ["# CLI reference", "",
             "Generated from the argparse parsers (`docs/site/build_site.py`): the `--help` of every command.", ""]
    for tool, parser in (("gs-splits", _parser()), ("gs-bench", _build_parser())):
        lines += [f"## {tool}", ""]
        for prog, text in _help_of(parser, tool):
            if prog != tool:
                lines += [f"### {prog}", ""]
            lines += ["```text", text.rstrip(), "```", ""]
    return "\n".join(lines)


def suites_page() -> str:
    from gs_bench.listing import listing_text, settings_text
    from gs_bench.suites import available_suites

    lines = ["# Suites and their settings", "",
             "Generated from gs-bench's typed settings specs (`gs-bench list` and `gs-bench list SUITE`,",
             "the one place each setting is written).", "", "```text", listing_text().rstrip(), "```", ""]
    for suite in available_suites():
        lines += [f"## {suite}", "", "```text", settings_text(suite, "full").rstrip(), "```", ""]
    return "\n".join(lines)


def api_page(dist: str) -> str:
    module, src = PACKAGES[dist]
    pkg = ROOT / src / module
    mods = sorted(
        ".".join((module, *p.relative_to(pkg).with_suffix("").parts))
        for p in pkg.rglob("*.py")
        if not any(part.startswith("_") for part in p.relative_to(pkg).parts)
    )
    lines = [f"# {dist} API", "", f"Generated from the docstrings of `{module}` (mkdocstrings).", ""]
    for mod in [module] + mods:
        lines += [f"## `{mod}`", "", f"::: {mod}", "    options:", "      show_root_heading: false",
                  "      show_root_toc_entry: false", ""]
    return "\n".join(lines)


def measured_page() -> str:
    readme = (ROOT / "apps/bench/README.md").read_text(encoding="utf-8")
    begin = readme.find("<!-- gs-bench compare: begin")
    end = readme.find("<!-- gs-bench compare: end -->")
    block = readme[readme.index("\n", begin) + 1:end].strip() if begin >= 0 and end > begin else "(no block)"
    return "\n".join(["# Measured tables", "",
                      "Every committed run against the papers, as `gs-bench compare --readme` writes it into",
                      "`apps/bench/README.md`; the runs themselves are listed in",
                      "[the index of committed runs](../apps/bench/measured/README.md).", "", block, ""])


def write_sources(out: Path) -> Path:
    src = out / "src"
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    shown = set(pages_from_repository())
    copied: set[str] = set()
    texts = {p: (ROOT / p).read_text(encoding="utf-8") for p in shown}
    for page, text in texts.items():
        copied |= _images(text, page)
    for page, text in texts.items():
        dest = src / page
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(rewrite_links(text, page, shown, copied), encoding="utf-8")
    for image in copied:
        (src / image).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / image, src / image)
    ref = src / "reference"
    ref.mkdir()
    with contextlib.redirect_stdout(io.StringIO()):
        (ref / "cli.md").write_text(cli_page(), encoding="utf-8")
        (ref / "suites.md").write_text(suites_page(), encoding="utf-8")
    (ref / "measured.md").write_text(measured_page(), encoding="utf-8")
    for dist in PACKAGES:
        (ref / f"{dist}.md").write_text(api_page(dist), encoding="utf-8")

    def title(p: str) -> str:
        return {"README.md": "Overview"}.get(p, p.removesuffix("/README.md").removesuffix(".md"))

    nav = ["nav:", "  - Overview: README.md", "  - Quick starts:"]
    nav += [f"      - {title(p)}: {p}" for p in sorted(shown) if p.startswith(("packages/", "apps/bench/README"))]
    nav += ["  - Guides:"]
    nav += [f"      - {Path(p).stem}: {p}" for p in sorted(shown) if p.startswith("docs/")]
    nav += ["  - Reference:", "      - CLI: reference/cli.md", "      - Suites and settings: reference/suites.md",
            "      - Measured tables: reference/measured.md",
            "      - Committed runs: apps/bench/measured/README.md"]
    nav += [f"      - {dist} API: reference/{dist}.md" for dist in PACKAGES]
    paths = ", ".join(f'"{ROOT / s}"' for _, s in PACKAGES.values())
    config = out / "mkdocs.yml"
    config.write_text("\n".join([
        "site_name: gs — graph and geometric deep learning under distribution shift",
        f"docs_dir: {src}",
        f"site_dir: {out / 'site'}",
        "use_directory_urls: false",  # pages open from the file system too
        "theme:", "  name: readthedocs", "  navigation_depth: 3", "  highlightjs: false",  # no CDN: the site works offline
        "markdown_extensions:", "  - tables", "  - toc:", "      permalink: true", "  - fenced_code",
        "plugins:", "  - search", "  - mkdocstrings:", "      default_handler: python", "      handlers:",
        "        python:", f"          paths: [{paths}]", "          options:",
        "            docstring_style: numpy", "            show_source: false", "            members_order: source",
        "            filters: [\"!^_\"]", "            show_if_no_docstring: false",
        "validation:", "  omitted_files: warn", "  absolute_links: info", "  unrecognized_links: warn",
        "  anchors: warn",
        *nav, ""]), encoding="utf-8")
    return config


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "docs",
                    help="folder for the generated sources (src/), mkdocs.yml and the site (site/)")
    ap.add_argument("--build", action="store_true", help="then run `mkdocs build --strict`")
    args = ap.parse_args(argv)
    config = write_sources(args.out.resolve())
    print(f"docs sources: {config.parent / 'src'}; config: {config}")
    if args.build:
        return subprocess.call([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
