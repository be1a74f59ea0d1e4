"""Render the JSON written by ``bench_properties.py`` as the Markdown table of the README.

Usage::

    python render_table.py bench_products.json [bench_small.json ...]
"""

from __future__ import annotations

import json
import sys

STEPS = ("build", "pagerank", "ppr", "clustering")


def _fmt(v) -> str:
    return f"{v:.2f}" if isinstance(v, (int, float)) else str(v)


def render(paths: list[str]) -> str:
    lines = [
        "| graph | library | build s | PageRank s | PPR s | clustering s | 3 properties + build s | peak RSS GB |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    ratios = []
    for p in paths:
        with open(p) as f:
            data = json.load(f)
        for graph, runs in data["runs"].items():
            for lib, r in runs.items():
                if r.get("exit", 1) != 0:
                    lines.append(f"| {graph} | {lib} | failed (exit {r.get('exit')}) | | | | | {r['peak_rss_gb']:.2f} |")
                    continue
                if isinstance(r.get("degree_order"), (int, float)):
                    # gs-splits: graph construction = CSR build + degree-ordered copy
                    r = {**r, "build": r["build"] + r["degree_order"]}
                total = sum(r[s] for s in STEPS if isinstance(r.get(s), (int, float)))
                lines.append(
                    f"| {graph} | {lib} | " + " | ".join(_fmt(r.get(s, "n/a")) for s in STEPS)
                    + f" | {total:.2f} | {r['peak_rss_gb']:.2f} |"
                )
            gs = runs.get("gs-splits", {})
            for step in STEPS[1:]:
                others = {lib: r[step] for lib, r in runs.items() if lib not in ("gs-splits", "networkx") and isinstance(r.get(step), (int, float))}
                if others and isinstance(gs.get(step), (int, float)):
                    best_lib = min(others, key=others.get)
                    ratios.append(f"| {graph} | {step} | {best_lib} {others[best_lib]:.2f} s | {gs[step]:.2f} s | {others[best_lib] / gs[step]:.2f}x |")
            if "networkx" in runs and runs["networkx"].get("exit") == 0 and gs:
                nx3 = sum(runs["networkx"][s] for s in STEPS[1:])
                gs3 = sum(gs[s] for s in STEPS[1:])
                ratios.append(f"| {graph} | 3 properties | networkx {nx3:.2f} s | {gs3:.2f} s | {nx3 / gs3:.1f}x |")
    lines += ["", "| graph | property | fastest reference | gs-splits | speed-up (reference / gs-splits) |", "|---|---|---|---|---:|", *ratios]
    return "\n".join(lines)


if __name__ == "__main__":
    print(render(sys.argv[1:]))
