"""gs_splits."""

from gs_splits.__about__ import __version__

__all__ = ["__version__"]
