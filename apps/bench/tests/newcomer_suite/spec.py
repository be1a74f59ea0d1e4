"""The ``coin`` suite's schema (a newcomer's toy suite: no data, no torch): grid axes, the
typed settings with their one default each, and the checks made before any job starts."""

from __future__ import annotations

from dataclasses import dataclass

from gs_bench.runner import axis, setting
from gs_bench.suites import SuiteConfig, SuiteConfigError, TypedGrid, TypedSettings


@dataclass(frozen=True)
class Grid(TypedGrid):
    """One job per (bias, seed): a grid point's bias."""

    bias: float = axis(doc="the probability of heads")


@dataclass(frozen=True)
class Settings(TypedSettings):
    """``[settings]``: the only place the suite's defaults are written."""

    flips: int = setting(100, cite="toy suite", allowed="> 0", doc="coin flips per job")


def validate(config: SuiteConfig) -> dict[str, str]:
    """Checks before any job: every bias a probability. Returns data fingerprints (none)."""
    for b in config.grid["bias"]:
        if not 0.0 <= float(b) <= 1.0:
            raise SuiteConfigError(f"grid.bias: {b!r} is not a probability in [0, 1]")
    return {}
