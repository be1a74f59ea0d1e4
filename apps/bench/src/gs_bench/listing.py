"""``gs-bench list``: the shipped suites, their profiles and what each covers; ``gs-bench
list SUITE``: every setting of one suite with the value a profile gives it, its default,
accepted values, the source of the default and what it does (from the runner's typed
``Settings``, the one place they are written)."""

from __future__ import annotations

from gs_bench.suites import (
    OPTIONAL_PROFILES,
    PROFILES,
    available_suites,
    expand_jobs,
    load_suite,
    setting_text,
    suite_profiles,
)

__all__ = ["listing_text", "print_listing", "settings_text"]


def listing_text() -> str:
    lines = ["Suites (run with: gs-bench run SUITE --profile PROFILE --out DIR)",
             "Sizes: the product grid points × seeds, read from the suite files alone (no data, no torch).",
             "`gs-bench run SUITE --profile P --out DIR --dry-run` counts the jobs it would run",
             "here; they differ where a method has its own run count (one 5-member ensemble,",
             "5 runs of GPN / NatPN, 1 of DANN / CORAL / Mixup / EERM in the ci profile), a grid",
             "point does not apply (e.g. a Cora domain shift) or a profile skips datasets whose",
             "files are missing.", ""]
    for name in available_suites():
        base = load_suite(name, "full")
        lines.append(f"{name}")
        if base.paper:
            lines.append(f"  paper: {base.paper}")
        for profile in PROFILES:
            if profile in OPTIONAL_PROFILES and profile not in suite_profiles(name):
                continue
            cfg = load_suite(name, profile)
            n = len(expand_jobs(cfg))  # grid x seeds less the [[exclude]] rules
            lines.append(f"  --profile {profile:<5} {n:>6} (grid points × seeds)  {cfg.description}")
        for axis, values in base.grid.items():
            lines.append(f"    {axis}: {', '.join(map(str, values))}")
        lines.append("")
    return "\n".join(lines)


def print_listing() -> None:
    print(listing_text())


def settings_text(suite: str, profile: str = "demo") -> str:
    """The settings of ``suite`` as ``profile`` resolves them: ``key = value``, then the
    default (where the profile or suite file sets another value), the accepted values, the
    source of the default and one line on what it does. Raises ``SuiteConfigError`` for an
    unknown suite or profile."""
    import dataclasses

    cfg = load_suite(suite, profile)
    typed = cfg.typed_settings
    lines = [f"{suite} (--profile {profile}): settings, as `gs-bench run {suite} --profile {profile}` "
             "uses them; change one with --set KEY=VALUE or in a suite file's [settings]", ""]
    if typed is None or not dataclasses.is_dataclass(typed):
        return "\n".join(lines + ["  (this suite has no typed settings)"])
    for f in dataclasses.fields(typed):
        value = getattr(typed, f.name)
        meta = f.metadata or {}
        lines.append(f"{f.name} = {setting_text(value)}")
        facts = []
        default = f.default if f.default is not dataclasses.MISSING else (
            f.default_factory() if f.default_factory is not dataclasses.MISSING else None)  # type: ignore[misc]
        if default != value:
            facts.append(f"default {setting_text(default)}")
        allowed = meta.get("allowed")
        if allowed is not None:
            facts.append("accepted " + (", ".join(v if isinstance(v, str) else setting_text(v) for v in allowed)
                                        if isinstance(allowed, (tuple, list)) else str(allowed)))
        if meta.get("cite"):
            facts.append(f"source: {meta['cite']}")
        if facts:
            lines.append("    " + " · ".join(facts))
        if meta.get("doc"):
            lines.append(f"    {meta['doc']}")
    return "\n".join(lines)
