"""``run_job``: flip a biased coin ``flips`` times (on a worker)."""

from __future__ import annotations

import random
from typing import Any

from gs_bench.suites import Job

from .spec import Settings


def run_job(job: Job) -> dict[str, Any]:
    settings = Settings.from_job(job)
    rng = random.Random(job.seed)
    bias = float(job.params.bias)
    heads = sum(rng.random() < bias for _ in range(settings.flips))
    return {"heads": heads / settings.flips}
