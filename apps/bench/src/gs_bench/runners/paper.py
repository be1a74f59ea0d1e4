"""What the structural-shifts and edgewise reports share: both lay their cells beside a paper's
tables. The cell against the paper (:func:`cell_against_paper`), the cells off it
(:func:`cells_off`, :data:`OFF_THRESHOLD`; each defined once in :mod:`gs_bench.report`, which
``gs-bench compare`` reads too) and the table of the cells off the paper that ends both reports
(:func:`off_cells_table`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gs_bench.report import OFF_THRESHOLD, Table, cell_against_paper, cells_off

__all__ = ["OFF_THRESHOLD", "cell_against_paper", "cells_off", "off_cells_table"]


def off_cells_table(cells: Sequence[dict[str, Any]], what: str, columns: Sequence[str],
                    fields: Sequence[str]) -> Table | None:
    """The table of the paper cells (:func:`cell_against_paper`) further than
    :data:`OFF_THRESHOLD` points from the paper, None where none is: per cell its ``fields``,
    its runs, ours, the paper's value and Δ, under ``columns``; the title counts them among
    ``cells`` (``what`` names those, e.g. ``"cells with a paper value"``). The structural-shifts
    and edgewise reports end with it."""
    off = cells_off(cells)
    if not off:
        return None
    return Table(
        f"Cells more than {OFF_THRESHOLD:g} points from the paper ({len(off)} of {len(cells)} {what})",
        list(columns),
        [[*(c[k] for k in fields), str(c["n"]), f"{c['ours']:.2f}", f"{c['paper']:.2f}",
          f"{c['delta']:+.2f}"] for c in off],
        note="The gs-bench README gives one sentence of explanation per cell of the committed ci run.",
    )
