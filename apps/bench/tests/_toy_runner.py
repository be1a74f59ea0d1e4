"""A toy suite runner for the robustness tests (no data, no torch): each job optionally
writes ``<pid_dir>/<pid>`` when it starts, sleeps ``sleep_s`` seconds, and returns
``value = n * 10 + seed``. Registered in ``gs_bench.runners.RUNNERS`` by the tests only."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gs_bench.report import Table


@dataclass(frozen=True)
class Grid:
    n: list[int]


@dataclass(frozen=True)
class Train:
    """A nested settings table (``[settings.train]``), to test key paths through tables."""

    lr: float = 0.01
    max_epochs: int = 10


@dataclass(frozen=True)
class Settings:
    sleep_s: float = 0.0
    pid_dir: str | None = None
    label: str = "toy"
    train: Train = field(default_factory=Train)


def validate(config) -> dict[str, str]:
    return {}


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    settings = job["settings"]
    if settings.get("pid_dir"):
        Path(settings["pid_dir"], str(os.getpid())).write_text(job["key"])
    end = time.monotonic() + float(settings.get("sleep_s", 0.0))
    while time.monotonic() < end:
        time.sleep(0.05)
    return {"value": job["params"]["n"] * 10 + job["seed"]}


def tables(records) -> list[Table]:
    rows = [[str(r["job"]["params"]["n"]), str(r["job"]["seed"]), str(r["metrics"]["value"])]
            for r in sorted(records, key=lambda r: (r["job"]["params"]["n"], r["job"]["seed"]))]
    return [Table("toy values", ["n", "seed", "value"], rows)]
