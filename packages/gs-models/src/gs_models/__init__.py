"""gs_models."""

from gs_models.__about__ import __version__

__all__ = ["__version__"]
