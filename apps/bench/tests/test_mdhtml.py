"""report.html is report.md rendered (gs_bench.mdhtml), figures embedded (issue 33)."""

from __future__ import annotations

import base64
import json
import re

import pytest

from gs_bench.mdhtml import inline, markdown_to_html

SAMPLE = """# gs benchmark report

3 job records (0 failed). Versions: gs-data 0.1.0.

Data (what each dataset of this run is):

- `synthetic-default`: **synthetic**, synthetic default graph (embedded, no download) (suite lebed)
- `cora-ml`: **real**, CoraML (structural-shifts .mat) (suite structural-shifts)

## structural-shifts

**Protocol (authors).** Adam, learning rate 0.01; masks in datasets/<name>/splits/<shift>.pth, `in_train_mask` and in_train_mask stay as written; 3 * 4 = 12.

### OOD robustness on cora-ml (ID:OOD 50:50): accuracy (%)

| method | popularity ID | a \\| b |
|---|---|---|
| ERM | 81.20 (n=1) | *x* |

No paper value in this table.

![ID vs OOD test accuracy](fig.png)

*ID vs OOD test accuracy.*
"""


def test_inline_markdown():
    assert inline("**Protocol (authors).** Adam") == "<strong>Protocol (authors).</strong> Adam"
    assert inline("in_train_mask and _x_ and *y*") == "in_train_mask and <em>x</em> and <em>y</em>"
    assert inline("`**not bold**` <name> & 3 * 4 * 5") == "<code>**not bold**</code> &lt;name&gt; &amp; 3 * 4 * 5"
    assert inline(r"a \| b \* c") == "a | b * c"
    assert inline("![cap](f.png) [t](u)", image=lambda s: "data:" + s) == \
        '<img src="data:f.png" alt="cap"> <a href="u">t</a>'


def test_blocks_tables_lists_and_images():
    out = markdown_to_html(SAMPLE, image=lambda s: f"data:image/png;base64,{s}")
    assert "<h1>gs benchmark report</h1>" in out and "<h3>OOD robustness on cora-ml" in out
    assert "<li><code>synthetic-default</code>: <strong>synthetic</strong>, synthetic default graph" in out
    assert "<th>a | b</th>" in out and "<td><em>x</em></td>" in out
    assert '<img src="data:image/png;base64,fig.png" alt="ID vs OOD test accuracy">' in out
    assert "**" not in re.sub(r"<code>.*?</code>", "", out)


def test_same_text_as_markdown_it():
    """The independent reference: markdown-it-py (CommonMark, tables on, raw HTML off)."""
    markdown_it = pytest.importorskip("markdown_it", reason="markdown-it-py is not installed (the reference renderer)")
    ref = markdown_it.MarkdownIt("commonmark", {"html": False}).enable("table").render(SAMPLE)

    def norm(h: str) -> str:  # tags and attributes as both write them, whitespace aside
        h = re.sub(r'<img src="([^"]*)" alt="([^"]*)"\s*/?>', r"[img \1 \2]", h)
        h = re.sub(r"<(/?)(\w+)[^>]*>", r"<\1\2>", h)
        return re.sub(r"\s+", "", h)

    assert norm(markdown_to_html(SAMPLE)) == norm(ref)


def _gess_run(tmp_path):
    """A results folder of two SYNTHETIC gess records with learning curves (one figure)."""
    curves = {"epoch": [0, 1], "train_loss": [0.7, 0.6], "iid_val": [0.6, 0.7], "ood_val": [0.5, 0.6]}
    lines = []
    for i, algo in enumerate(("erm", "dann")):
        m = {"metric": "accuracy", "level": "no_info" if algo == "erm" else "o_feature",
             "id_sel_test_id": 0.9, "id_sel_test_ood": 0.7, "ood_sel_test_id": 0.9, "ood_sel_test_ood": 0.7,
             "id_sel_epoch": 1, "ood_sel_epoch": 1, "curves": curves,
             "sizes": {"train": 10, "iid_val": 2, "iid_test": 2, "ood_val": 2, "ood_test": 2}}
        lines.append(json.dumps({"key": f"k{i}", "status": "ok", "metrics": m, "job": {
            "suite": "gess", "key": f"k{i}", "seed": 0, "settings": {"max_epochs": 2},
            "params": {"dataset": "track-signal-tau3mu", "backbone": "egnn", "algorithm": algo}}}))
    (tmp_path / "results.jsonl").write_text("\n".join(lines) + "\n")
    return tmp_path


def test_html_report_embeds_its_figures_and_shows_no_markdown(tmp_path):
    """Before: report.html linked report/<figure>.png by relative path (broken once moved) and
    printed notes as escaped Markdown (literal ``**``)."""
    from gs_bench.report import build_report

    run = _gess_run(tmp_path)
    md = build_report(run, "md").read_text()
    html = build_report(run, "html").read_text()
    srcs = re.findall(r'<img src="([^"]*)"', html)
    assert len(srcs) == md.count("![") == 1
    png = base64.b64decode(srcs[0].split(",", 1)[1])
    assert srcs[0].startswith("data:image/png;base64,") and png[:8] == b"\x89PNG\r\n\x1a\n"
    text = re.sub(r"<code>.*?</code>", "", re.sub(r"<style>.*?</style>", "", html))
    assert "**" not in text
    assert "<strong>OOD-sel and ID-sel are identical in every row.</strong>" in html
    # the header names the data kind (Track: simulated as GeSS did, not GeSS's files)
    assert "<li><code>track-signal-tau3mu</code>: <strong>simulated</strong>, events simulated" in html
