"""Tables from records only."""

from __future__ import annotations

from gs_bench.report import Table


def tables(records):
    rows = [[f"{r['job']['params']['bias']:.2f}", str(r["job"]["seed"]), f"{r['metrics']['heads']:.2f}"]
            for r in sorted(records, key=lambda r: (r["job"]["params"]["bias"], r["job"]["seed"]))]
    return [Table("Coin flips: share of heads", ["bias", "seed", "heads"], rows)]
