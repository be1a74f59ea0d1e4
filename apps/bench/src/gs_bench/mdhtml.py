"""The Markdown of a gs-bench report as HTML: one source, so report.html says what report.md says.

A small CommonMark subset, the one the reports are written in: ATX headings (``#`` .. ``######``),
paragraphs (lines joined by soft breaks), GitHub pipe tables (``\\|`` is a literal bar in a
cell), ``-`` / ``*`` bullet lists, fenced code blocks, and inline code spans, ``**strong**``,
``*emphasis*`` / ``_emphasis_`` (CommonMark's flanking rules, simplified: no intraword ``_``),
links ``[text](url)``, images ``![alt](src)`` and backslash escapes. Raw HTML is not passed
through: ``<name>`` prints as text (CommonMark with ``html=False``). A test compares the text
this gives with markdown-it-py's on a demo report.

Images are embedded: ``image(src)`` returns the ``src`` to write (gs-bench passes a function that
reads the report folder's PNG into a ``data:`` URI, so the HTML file can be moved alone).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

__all__ = ["markdown_to_html", "inline"]

_ESCAPABLE = r"""!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~"""
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_RULE = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_BULLET = re.compile(r"^[-*]\s+(.*)$")
_FENCE = re.compile(r"^(```|~~~)")
_LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]*)\)")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EM_STAR = re.compile(r"(?<!\*)\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?!\*)")
_EM_UNDER = re.compile(r"(?<![\w_])_(?=[^\s_])(.+?)(?<=[^\s_])_(?![\w_])")


def _identity(src: str) -> str:
    return src


def inline(text: str, image: Callable[[str], str] = _identity) -> str:
    """HTML of one run of inline Markdown (the text is escaped; see the module docstring)."""
    slots: list[str] = []

    def keep(fragment: str) -> str:  # finished HTML, out of reach of the later rules
        slots.append(fragment)
        return f"\x00{len(slots) - 1}\x00"

    def code(m: re.Match[str]) -> str:
        body = m.group(2)
        if body.startswith(" ") and body.endswith(" ") and body.strip():
            body = body[1:-1]
        return keep(f"<code>{html.escape(body)}</code>")

    text = re.sub(r"(`+)(.+?)(?<!`)\1(?!`)", code, text, flags=re.S)
    text = re.sub(r"\\([" + re.escape(_ESCAPABLE) + "])", lambda m: keep(html.escape(m.group(1))), text)

    def link(m: re.Match[str]) -> str:
        bang, label, url = m.groups()
        if bang:
            return keep(f'<img src="{html.escape(image(url))}" alt="{html.escape(label)}">')
        return keep(f'<a href="{html.escape(url)}">') + label + keep("</a>")

    text = _LINK.sub(link, text)
    text = html.escape(text, quote=False)
    for _ in range(3):  # nested strong / emphasis
        new = _STRONG.sub(r"<strong>\2</strong>", text)
        new = _EM_STAR.sub(r"<em>\1</em>", new)
        new = _EM_UNDER.sub(r"<em>\1</em>", new)
        if new == text:
            break
        text = new
    while "\x00" in text:
        text = re.sub(r"\x00(\d+)\x00", lambda m: slots[int(m.group(1))], text)
    return text


def _cells(line: str) -> list[str]:
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    return [c.strip() for c in re.split(r"(?<!\\)\|", body)]


def markdown_to_html(text: str, image: Callable[[str], str] = _identity) -> str:
    """The HTML body of the Markdown ``text`` (no ``<html>`` / ``<body>``)."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if _FENCE.match(line):
            fence, body = line[:3], []
            i += 1
            while i < len(lines) and not lines[i].startswith(fence):
                body.append(lines[i])
                i += 1
            out.append("<pre><code>" + html.escape("\n".join(body) + "\n") + "</code></pre>")
            i += 1
            continue
        m = _HEADING.match(line)
        if m:
            level = len(m.group(1))
            out.append(f"<h{level}>{inline(m.group(2), image)}</h{level}>")
            i += 1
            continue
        if "|" in line and i + 1 < len(lines) and _RULE.match(lines[i + 1]) and "-" in lines[i + 1]:
            head = _cells(line)
            rows = []
            i += 2
            while i < len(lines) and lines[i].strip() and "|" in lines[i]:
                rows.append(_cells(lines[i]))
                i += 1
            # a newline between cells, rows and items, as CommonMark renderers write them: the
            # text of adjacent cells stays apart for a text extractor too
            th = "\n".join(f"<th>{inline(c, image)}</th>" for c in head)
            body = "\n".join(
                "<tr>\n" + "\n".join(f"<td>{inline(c, image)}</td>" for c in (r + [""] * len(head))[: len(head)])
                + "\n</tr>" for r in rows
            )
            out.append(f"<table>\n<thead>\n<tr>\n{th}\n</tr>\n</thead>\n<tbody>\n{body}\n</tbody>\n</table>")
            continue
        if _BULLET.match(line):
            items = []
            while i < len(lines) and _BULLET.match(lines[i]):
                items.append(inline(_BULLET.match(lines[i]).group(1), image))
                i += 1
            out.append("<ul>\n" + "\n".join(f"<li>{it}</li>" for it in items) + "\n</ul>")
            continue
        para = []
        while (i < len(lines) and lines[i].strip() and not _HEADING.match(lines[i])
               and not _FENCE.match(lines[i]) and not (para and _BULLET.match(lines[i]))):
            para.append(lines[i].strip())
            i += 1
        out.append(f"<p>{inline(chr(10).join(para), image)}</p>")
    return "\n".join(out) + "\n"
