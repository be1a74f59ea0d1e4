"""The built docs site in headless Chromium: every page served over HTTP on localhost, with no
console error, no broken image and no literal Markdown in its text.

Run by ``python -m nox -s docs`` after the build (``GS_DOCS_SITE`` names the built site). A
missing browser skips, with the reason, unless ``GS_REQUIRE_BROWSER=1`` (``.ci/run`` sets it
after installing Chromium): then it fails.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import threading
from pathlib import Path

import pytest

SITE = Path(os.environ.get("GS_DOCS_SITE", Path(__file__).resolve().parents[2] / "build" / "docs" / "site"))
REQUIRED = os.environ.get("GS_REQUIRE_BROWSER") == "1"
# Markdown that a renderer should have turned into markup: **bold**, a heading hash at the
# start of a line, a fenced block, a [link](target), a table's |---| rule
LITERAL_MARKDOWN = re.compile(r"\*\*\w[^*\n]*\*\*|^#{1,6} \w|^```|\]\((?:https?:|\.{0,2}/|#)[^)\s]*\)|\|\s*-{3,}\s*\|",
                              re.MULTILINE)
# the text of the page without code (pre / code blocks legitimately show Markdown and CLI text)
TEXT_WITHOUT_CODE = """() => {
  const body = document.querySelector('[role=main]') || document.body;
  const copy = body.cloneNode(true);
  copy.querySelectorAll('pre, code, script, style').forEach(e => e.remove());
  return copy.innerText;
}"""


def _unavailable(reason: str) -> None:
    if REQUIRED:
        pytest.fail(f"GS_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed (pip install playwright)")
    exe = os.environ.get("GS_CHROMIUM") or next(
        (p for p in map(shutil.which, ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome")) if p),
        None)
    with sync_playwright() as p:
        try:
            b = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        except Exception as exc:  # no browser on PATH and none downloaded
            _unavailable(f"no Chromium could be started ({str(exc).splitlines()[0]}); install the "
                         "distribution's chromium package or set GS_CHROMIUM")
        yield b
        b.close()


@pytest.fixture(scope="module")
def server():
    if not (SITE / "index.html").is_file():
        pytest.fail(f"no built site at {SITE}: run `python -m nox -s docs` (or set GS_DOCS_SITE)")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(SITE))
    handler.log_message = lambda *a, **k: None  # type: ignore[attr-defined]
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def _pages() -> list[str]:
    if not SITE.is_dir():
        return []
    return sorted(str(p.relative_to(SITE)) for p in SITE.rglob("*.html") if p.name != "404.html")


def test_the_site_has_the_expected_pages():
    pages = set(_pages())
    assert "index.html" in pages, f"no built site at {SITE}"
    for page in ("reference/cli.html", "reference/suites.html", "reference/measured.html",
                 "reference/gs-splits.html", "reference/gs-bench.html", "packages/gs-splits/index.html",
                 "apps/bench/index.html", "docs/architecture.html"):
        assert page in pages, page


@pytest.mark.parametrize("page", _pages())
def test_page_in_chromium(browser, server, page):
    """No console error or uncaught exception, every image decoded, no literal Markdown."""
    tab = browser.new_page()
    errors: list[str] = []
    tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.goto(f"{server}/{page}", wait_until="load")
    tab.wait_for_load_state("networkidle")
    images = tab.evaluate("Array.from(document.images).map(i => [i.src, i.complete, i.naturalWidth])")
    text = tab.evaluate(TEXT_WITHOUT_CODE)
    tab.close()
    assert not errors, errors
    assert all(ok and w > 0 for _, ok, w in images), [src for src, ok, w in images if not (ok and w > 0)]
    literal = LITERAL_MARKDOWN.findall(text)
    assert not literal, literal[:5]
