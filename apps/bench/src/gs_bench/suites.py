"""Declarative benchmark suites: one TOML file per suite, expanded into jobs.

A suite file (see ``gs_bench/suites/*.toml`` for the shipped ones) has::

    suite = "structural-shifts"          # which runner executes its jobs
    description = "..."
    seeds = 5                             # seeds 0..seeds-1 become an axis of the grid

    [grid]                                # axes: the cartesian product becomes the jobs
    dataset = ["cora-ml", "citeseer"]
    strategy = ["popularity", "locality", "density"]
    method = ["erm", "se", "de"]

    [settings]                            # fixed values passed to every job (paper defaults)
    model = "structural-shifts-base"

    [profiles.demo]                       # a profile overrides seeds, grid axes and settings
    seeds = 1
    [profiles.demo.grid]
    dataset = ["synthetic-default"]

Every job is keyed by a hash of its complete resolved configuration (suite, grid point,
settings, seed, data fingerprint and package versions), so re-running skips finished jobs
and any change of setting or package version makes a new job.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.resources
import itertools
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = [
    "SuiteConfig",
    "Job",
    "SuiteConfigError",
    "available_suites",
    "load_suite",
    "expand_jobs",
    "job_key",
    "PROFILES",
]

PROFILES = ("demo", "ci", "full")
_TOP_KEYS = {"suite", "description", "seeds", "grid", "settings", "profiles", "paper"}
_PROFILE_KEYS = {"seeds", "grid", "settings", "description"}


class SuiteConfigError(ValueError):
    """A suite file or a command-line override that cannot be run; the message says what to fix."""


@dataclass(frozen=True)
class SuiteConfig:
    """A suite resolved for one profile."""

    suite: str
    profile: str
    description: str
    seeds: int
    grid: dict[str, list[Any]]
    settings: dict[str, Any]
    source: str
    paper: str = ""

    def with_overrides(
        self,
        *,
        seeds: int | None = None,
        axes: dict[str, list[Any]] | None = None,
        settings: dict[str, Any] | None = None,
    ) -> SuiteConfig:
        grid = copy.deepcopy(self.grid)
        for axis, values in (axes or {}).items():
            if axis not in grid:
                raise SuiteConfigError(
                    f"suite {self.suite!r} has no axis {axis!r}; its axes are {sorted(grid)}"
                )
            if not values:
                raise SuiteConfigError(f"--{axis}s needs at least one value")
            grid[axis] = list(values)
        if seeds is not None and seeds < 1:
            raise SuiteConfigError(f"--seeds must be >= 1, got {seeds}")
        return SuiteConfig(
            suite=self.suite,
            profile=self.profile,
            description=self.description,
            seeds=self.seeds if seeds is None else seeds,
            grid=grid,
            settings={**self.settings, **(settings or {})},
            source=self.source,
            paper=self.paper,
        )


@dataclass(frozen=True)
class Job:
    """One unit of work: a grid point, a seed and the suite settings."""

    suite: str
    params: dict[str, Any]
    settings: dict[str, Any]
    seed: int
    key: str = field(default="")

    def describe(self) -> str:
        parts = [f"{k}={v}" for k, v in self.params.items()]
        return f"{self.suite}[{', '.join(parts)}, seed={self.seed}]"

    def as_dict(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "params": self.params,
            "settings": self.settings,
            "seed": self.seed,
            "key": self.key,
        }


def available_suites() -> list[str]:
    folder = importlib.resources.files("gs_bench") / "suites"
    return sorted(p.name.removesuffix(".toml") for p in folder.iterdir() if p.name.endswith(".toml"))


def _read_toml(name_or_path: str) -> tuple[dict[str, Any], str]:
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.exists():
        if not path.is_file():
            raise SuiteConfigError(f"suite file {path} does not exist")
        text, source = path.read_text(encoding="utf-8"), str(path)
    else:
        names = available_suites()
        if name_or_path not in names:
            raise SuiteConfigError(
                f"unknown suite {name_or_path!r}; available suites: {', '.join(names)} "
                "(or pass the path of a suite .toml file)"
            )
        res = importlib.resources.files("gs_bench") / "suites" / f"{name_or_path}.toml"
        text, source = res.read_text(encoding="utf-8"), f"gs_bench/suites/{name_or_path}.toml"
    try:
        return tomllib.loads(text), source
    except tomllib.TOMLDecodeError as exc:
        raise SuiteConfigError(f"suite file {source} is not valid TOML: {exc}") from exc


def _check_grid(grid: Any, where: str) -> dict[str, list[Any]]:
    if not isinstance(grid, dict):
        raise SuiteConfigError(f"{where}: [grid] must be a table of axis = [values]")
    for axis, values in grid.items():
        if not isinstance(values, list) or not values:
            raise SuiteConfigError(
                f"{where}: grid axis {axis!r} must be a non-empty list, got {values!r}"
            )
    return grid


def load_suite(name_or_path: str, profile: str = "demo") -> SuiteConfig:
    """Load a suite by name (shipped) or path (your own TOML) and resolve ``profile``."""
    raw, source = _read_toml(name_or_path)
    unknown = set(raw) - _TOP_KEYS
    if unknown:
        raise SuiteConfigError(
            f"{source}: unknown top-level keys {sorted(unknown)}; accepted: {sorted(_TOP_KEYS)}"
        )
    if "suite" not in raw or not isinstance(raw["suite"], str):
        raise SuiteConfigError(f"{source}: missing `suite = \"<runner name>\"`")
    from gs_bench.runners import RUNNERS

    if raw["suite"] not in RUNNERS:
        raise SuiteConfigError(
            f"{source}: suite = {raw['suite']!r} has no runner; known: {sorted(RUNNERS)}"
        )
    if profile not in PROFILES:
        raise SuiteConfigError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
    grid = dict(_check_grid(raw.get("grid", {}), source))
    settings = dict(raw.get("settings", {}))
    seeds = raw.get("seeds", 1)
    description = raw.get("description", "")
    profiles = raw.get("profiles", {})
    if profile in profiles:
        prof = profiles[profile]
        bad = set(prof) - _PROFILE_KEYS
        if bad:
            raise SuiteConfigError(
                f"{source}: profile {profile!r} has unknown keys {sorted(bad)}; accepted: {sorted(_PROFILE_KEYS)}"
            )
        pgrid = _check_grid(prof.get("grid", {}), f"{source} [profiles.{profile}]")
        for axis in pgrid:
            if axis not in grid:
                raise SuiteConfigError(
                    f"{source}: profile {profile!r} sets axis {axis!r} that the [grid] does not have"
                )
        grid.update(pgrid)
        settings.update(prof.get("settings", {}))
        seeds = prof.get("seeds", seeds)
        description = prof.get("description", description)
    if not isinstance(seeds, int) or isinstance(seeds, bool) or seeds < 1:
        raise SuiteConfigError(f"{source}: seeds must be a positive integer, got {seeds!r}")
    return SuiteConfig(
        suite=raw["suite"],
        profile=profile,
        description=description,
        seeds=seeds,
        grid=grid,
        settings=settings,
        source=source,
        paper=raw.get("paper", ""),
    )


def job_key(payload: dict[str, Any]) -> str:
    """Stable hash of a job's complete resolved configuration (canonical JSON, SHA-256)."""
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:20]


def expand_jobs(
    config: SuiteConfig,
    *,
    versions: dict[str, str] | None = None,
    fingerprints: dict[str, str] | None = None,
) -> list[Job]:
    """The cartesian product of the grid axes times the seeds, each job with its key.

    ``fingerprints`` maps a dataset name to a fingerprint of its content; ``versions`` maps
    distribution names to versions. Both enter the key.
    """
    axes = list(config.grid)
    jobs: list[Job] = []
    for values in itertools.product(*(config.grid[a] for a in axes)):
        params = dict(zip(axes, values, strict=False))
        for seed in range(config.seeds):
            payload = {
                "suite": config.suite,
                "params": params,
                "settings": config.settings,
                "seed": seed,
                "versions": versions or {},
                "data": (fingerprints or {}).get(str(params.get("dataset", "")), ""),
            }
            jobs.append(Job(config.suite, params, dict(config.settings), seed, job_key(payload)))
    return jobs
