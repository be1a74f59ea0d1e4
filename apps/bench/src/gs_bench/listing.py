"""``gs-bench list``: the shipped suites, their profiles and what each covers."""

from __future__ import annotations

from gs_bench.suites import PROFILES, available_suites, expand_jobs, load_suite

__all__ = ["listing_text", "print_listing"]


def listing_text() -> str:
    lines = ["Suites (run with: gs-bench run SUITE --profile PROFILE --out DIR)", ""]
    for name in available_suites():
        base = load_suite(name, "full")
        lines.append(f"{name}")
        if base.paper:
            lines.append(f"  paper: {base.paper}")
        for profile in PROFILES:
            cfg = load_suite(name, profile)
            n = len(expand_jobs(cfg))  # grid x seeds less the [[exclude]] rules
            lines.append(f"  --profile {profile:<5} {n:>6} jobs  {cfg.description}")
        for axis, values in base.grid.items():
            lines.append(f"    {axis}: {', '.join(map(str, values))}")
        lines.append("")
    return "\n".join(lines)


def print_listing() -> None:
    print(listing_text())
