"""gs_bench."""

from gs_bench.__about__ import __version__

__all__ = ["__version__"]
