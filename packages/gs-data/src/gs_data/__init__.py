"""gs_data."""

from gs_data.__about__ import __version__

__all__ = ["__version__"]
