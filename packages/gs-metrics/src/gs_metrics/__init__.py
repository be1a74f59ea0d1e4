"""gs_metrics."""

from gs_metrics.__about__ import __version__

__all__ = ["__version__"]
