"""The demo's output and report as a newcomer sees them (issue 33): a short console, a header
that says the data is synthetic / stand-in, no promise of an absent paper column, and an HTML
report that renders its Markdown (no literal ``**``) with its figures embedded, checked by
parsing and, where a Chromium is available, in headless Chromium.

The demo runs once for the module, as ``gs-bench demo`` in a subprocess, with every suite's
``max_epochs`` cut to 2 and LeBed scoring 6 of its 32 test graphs (3 per shard: a shard
correlates its own) with at most 2 re-training steps (the only changes from the shipped
demo: same suites, jobs, datasets, tables and figures).
"""

from __future__ import annotations

import base64
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

_DEMO = '''
import sys

#: the only change from the shipped demo: shorter training (and 6 of LeBed's 32 test graphs)
SHORT = {"lebed": {"max_epochs": 100, "test_graphs": 6, "lebed_max_steps": 2, "lebed_min_steps": 1}}


def main():
    import gs_bench.run as run

    shipped = run.run_suite

    def short(suite, **kw):
        kw["settings"] = {"max_epochs": 2, **SHORT.get(suite, {}), **(kw.get("settings") or {})}
        return shipped(suite, **kw)

    run.run_suite = short
    from gs_bench.cli import main as cli
    return cli(["demo", "--out", sys.argv[1]])


if __name__ == "__main__":  # the job workers are spawned: they import this file
    sys.exit(main())
'''


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """``(out folder, stdout, stderr)`` of one short demo run."""
    d = tmp_path_factory.mktemp("demo")
    script = d / "short_demo.py"
    script.write_text(_DEMO)
    env = dict(os.environ, MPLCONFIGDIR=str(d / "matplotlib"))
    res = subprocess.run([sys.executable, str(script), str(d / "out")], capture_output=True,
                         timeout=1800, env=env)
    # bytes, not text=True: universal newlines would turn each "\r" of a progress bar into a line
    stdout, stderr = (b.decode("utf-8", "replace") for b in (res.stdout, res.stderr))
    assert res.returncode == 0, stdout[-3000:] + stderr[-3000:]
    return d / "out", stdout, stderr


def test_demo_prints_a_screenful_ending_with_the_report_path(demo):
    """It printed ~420 lines (the split summaries and the whole Markdown report) and the
    line naming the report scrolled away."""
    out, stdout, stderr = demo
    lines = (stdout + stderr).rstrip("\n").split("\n")  # a bar redrawn with "\r" is one line
    assert len(lines) <= 30, f"{len(lines)} lines:\n" + "\n".join(lines)
    last = stdout.rstrip("\n").split("\n")[-1]
    assert last == f"report: {out / 'report' / 'report.md'}"
    assert (out / "report" / "report.md").is_file() and (out / "report" / "report.html").is_file()
    assert "SYNTHETIC" in stdout.split("\n")[0] and "STAND-IN" in stdout.split("\n")[0]


def test_demo_report_header_names_the_kind_of_every_dataset(demo):
    out, _, _ = demo
    text = (out / "report" / "report.md").read_text()
    header = text[: text.index("\n## ")]
    assert "- `synthetic-default`: **synthetic**, synthetic default graph (embedded, no download) " \
           "(suites edgewise, lebed, structural-shifts)" in header  # sorted: not the key order
    assert "- `molecular-fidelity`: **stand-in**, offline stand-in for qmof-hse06" in header
    assert "test the code, not the papers' findings" in header


def test_demo_report_promises_no_paper_value_it_does_not_print(demo):
    """The demo report promised "Paper values (Tables 9-10) beside ours" with none beside ours."""
    out, _, _ = demo
    text = (out / "report" / "report.md").read_text()
    assert not re.search(r"\(paper -?\d", text)  # no paper has the synthetic graph ...
    assert "Paper values" not in text  # ... so no table promises its values
    assert "No paper value in this table: the paper reports no synthetic-default at ID:OOD 50:50" in text
    assert "No paper value in this table: the paper reports none for synthetic-default." in text


class _Page(HTMLParser):
    """The images and the visible text of an HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.images: list[dict[str, str | None]] = []
        self.text: list[str] = []
        self._skip = 0
        self.strong: list[str] = []
        self._in_strong = False

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.images.append(dict(attrs))
        self._skip += tag in ("style", "script", "title")
        self._in_strong = self._in_strong or tag == "strong"

    def handle_endtag(self, tag):
        self._skip -= tag in ("style", "script", "title")
        if tag == "strong":
            self._in_strong = False

    def handle_data(self, data):
        if not self._skip:
            self.text.append(data)
            if self._in_strong:
                self.strong.append(data)


def _png_ok(data: bytes) -> tuple[int, int]:
    """(width, height) of a PNG whose chunks all pass their CRC and whose image data
    decompresses; AssertionError otherwise."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    pos, idat, size = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert zlib.crc32(kind + body) == crc, f"bad CRC in chunk {kind!r}"
        if kind == b"IHDR":
            size = struct.unpack(">II", body[:8])
        idat += body if kind == b"IDAT" else b""
        pos += 12 + length
        if kind == b"IEND":
            break
    assert size is not None and size[0] > 0 and size[1] > 0 and zlib.decompress(idat)
    return size


def _page(out: Path) -> _Page:
    page = _Page()
    page.feed((out / "report" / "report.html").read_text(encoding="utf-8"))
    return page


def test_report_html_embeds_every_figure_as_a_valid_png_and_renders_the_markdown(demo):
    """report.html showed a literal ``**Protocol (authors).**`` and linked its figures by
    relative path (broken once the file is moved)."""
    out, _, _ = demo
    md = (out / "report" / "report.md").read_text()
    page = _page(out)
    assert len(page.images) == md.count("![") >= 5
    for img in page.images:
        src = img.get("src") or ""
        assert src.startswith("data:image/png;base64,"), src[:80]
        _png_ok(base64.b64decode(src.split(",", 1)[1], validate=True))
    text = "".join(page.text)
    assert "**" not in text and "`" not in text
    assert "Protocol (authors)." in page.strong
    assert "synthetic" in page.strong and "stand-in" in page.strong


def test_report_html_says_what_markdown_it_says(demo):
    """An independent renderer (markdown-it-py, CommonMark with GitHub tables and raw HTML
    off) gives the same visible text as our HTML for the whole demo report."""
    markdown_it = pytest.importorskip("markdown_it", reason="markdown-it-py is not installed (the reference renderer)")
    out, _, _ = demo
    md = (out / "report" / "report.md").read_text()
    reference = _Page()
    reference.feed(markdown_it.MarkdownIt("commonmark", {"html": False}).enable("table").render(md))
    ours = _page(out)

    def words(parts: list[str]) -> list[str]:
        return re.sub(r"\s+", " ", "".join(parts)).split()

    assert words(ours.text) == words(reference.text)
    assert ours.strong == reference.strong
    assert [i.get("alt") for i in ours.images] == [i.get("alt") for i in reference.images]


def _no_browser(reason: str) -> None:
    """Skip with the reason; fail instead where a browser is required (``GS_REQUIRE_BROWSER=1``:
    ``.ci/run`` sets it after installing Chromium, so that CI never skips the browser check)."""
    if os.environ.get("GS_REQUIRE_BROWSER") == "1":
        pytest.fail(f"GS_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def chromium() -> tuple[object, str | None]:
    """(playwright's sync_playwright, executable or None for playwright's own browser), or a
    pytest skip naming what is missing (before the demo runs, for a test that needs both)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _no_browser("headless Chromium check not run: the playwright package is not installed "
                    "(pip install playwright; then `playwright install chromium`, or point "
                    "GS_CHROMIUM at a Chromium / chromium-headless-shell executable)")
    exe = os.environ.get("GS_CHROMIUM") or None
    if exe is None:
        for name in ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome"):
            exe = shutil.which(name)
            if exe:
                break
    return sync_playwright, exe


def test_report_html_in_headless_chromium_moved_alone(chromium, demo, tmp_path):
    """Chromium loads report.html copied alone into another folder: every image decoded
    (``complete`` with a natural width), and no ``**`` in the rendered text."""
    sync_playwright, exe = chromium
    out, _, _ = demo
    moved = tmp_path / "elsewhere" / "report.html"
    moved.parent.mkdir()
    shutil.copy(out / "report" / "report.html", moved)
    with sync_playwright() as p:
        try:
            browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        except Exception as exc:  # no browser downloaded and none on PATH
            _no_browser(f"headless Chromium check not run: no Chromium could be started ({str(exc).splitlines()[0]}); "
                        "install the distribution's chromium package, run `playwright install chromium` or set GS_CHROMIUM")
        page = browser.new_page()
        page.goto(moved.as_uri(), wait_until="load")
        images = page.evaluate(
            "Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.naturalHeight])")
        text = page.evaluate("document.body.innerText")
        strong = page.evaluate("Array.from(document.querySelectorAll('strong')).map(e => e.innerText)")
        browser.close()
    assert len(images) >= 5
    assert all(ok and w > 0 and h > 0 for ok, w, h in images), images
    assert "**" not in text and "Protocol (authors)." in strong
    assert "synthetic" in text
