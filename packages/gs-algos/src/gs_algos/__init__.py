"""gs_algos."""

from gs_algos.__about__ import __version__

__all__ = ["__version__"]
