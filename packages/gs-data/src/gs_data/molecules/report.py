"""Processing reports: every item a loader skips is counted, with a reason.

Shared by :mod:`gs_data.molecules` and :mod:`gs_data.materials`. A loader never drops an
item silently: each skipped item is recorded as ``(item id, reason, detail)`` and the
report is returned alongside the data (and logged at INFO level).
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ProcessingReport", "SKIP_REASONS"]

logger = logging.getLogger(__name__)

#: Reasons a loader may skip an item for. Nothing else is ever dropped.
SKIP_REASONS = (
    "invalid_smiles",  # RDKit could not parse the SMILES
    "embedding_failed",  # ETKDG EmbedMolecule returned -1
    "mmff_setup_failed",  # MMFF94 has no parameters for the molecule (optimiser returned -1)
    "missing_label",  # label absent, empty or not a finite number
    "unreadable_structure",  # CIF (or other structure file) missing or not parseable by ase
)


@dataclass
class ProcessingReport:
    """What a loader read, kept and skipped (and why).

    Attributes
    ----------
    source : str
        What was processed (file name, dataset name).
    n_input : int
        Number of items read from the source.
    n_kept : int
        Number of items in the returned data.
    skipped : list of dict
        One entry per skipped item: ``{"id": ..., "reason": ..., "detail": ...}`` with
        ``reason`` one of :data:`SKIP_REASONS`.
    """

    source: str
    n_input: int = 0
    n_kept: int = 0
    skipped: list[dict[str, Any]] = field(default_factory=list)

    def skip(self, item_id: Any, reason: str, detail: str = "") -> None:
        """Record one skipped item; ``reason`` must be one of :data:`SKIP_REASONS`."""
        if reason not in SKIP_REASONS:
            raise ValueError(f"reason must be one of {SKIP_REASONS}, got {reason!r}")
        self.skipped.append({"id": item_id, "reason": reason, "detail": str(detail)})

    @property
    def n_skipped(self) -> int:
        """Number of skipped items."""
        return len(self.skipped)

    def counts(self) -> dict[str, int]:
        """Number of skipped items per reason (only reasons that occurred)."""
        return dict(sorted(Counter(s["reason"] for s in self.skipped).items()))

    def merge(self, other: ProcessingReport) -> ProcessingReport:
        """A new report adding ``other``'s counts and skipped items to this one."""
        return ProcessingReport(
            source=f"{self.source}+{other.source}",
            n_input=self.n_input + other.n_input,
            n_kept=self.n_kept + other.n_kept,
            skipped=[*self.skipped, *other.skipped],
        )

    def check(self) -> None:
        """Raise ``ValueError`` unless ``n_input == n_kept + n_skipped`` (nothing lost)."""
        if self.n_input != self.n_kept + self.n_skipped:
            raise ValueError(
                f"{self.source}: {self.n_input} items read but {self.n_kept} kept + "
                f"{self.n_skipped} skipped"
            )

    def summary(self) -> str:
        """One line: ``source: kept k of n; skipped s (reason: count, ...)``."""
        parts = ", ".join(f"{r}: {c}" for r, c in self.counts().items())
        return (
            f"{self.source}: kept {self.n_kept} of {self.n_input}; skipped {self.n_skipped}"
            + (f" ({parts})" if parts else "")
        )

    def log(self) -> None:
        """Log :meth:`summary` at INFO (WARNING if anything was skipped)."""
        level = logging.WARNING if self.skipped else logging.INFO
        logger.log(level, "%s", self.summary())

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return {
            "source": self.source,
            "n_input": self.n_input,
            "n_kept": self.n_kept,
            "n_skipped": self.n_skipped,
            "counts": self.counts(),
            "skipped": list(self.skipped),
        }

    def to_json(self) -> str:
        """:meth:`to_dict` as a JSON string."""
        return json.dumps(self.to_dict(), indent=2, default=str)
