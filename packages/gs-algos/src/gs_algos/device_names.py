"""The names that the ``device`` setting accepts, without importing torch.

The CLI and suite validation of gs-bench check a ``--device`` value with
:func:`check_device_name` before they import anything heavy, so a misspelt device is rejected
in a fraction of a second; :func:`gs_algos.device.check_device` (which also accepts a
:class:`torch.device`) and :func:`gs_algos.device.resolve_device` use the same rule.
"""

from __future__ import annotations

import re

__all__ = ["DEVICE_CHOICES", "check_device_name"]

#: What ``device`` accepts (``"cuda:<index>"`` stands for any index).
DEVICE_CHOICES = ("auto", "cpu", "cuda", "cuda:<index>")

_PATTERN = re.compile(r"^(auto|cpu|cuda(:\d+)?)$")


def check_device_name(value: object, what: str = "device") -> str:
    """``value`` if it is an accepted device name (``"auto"``, ``"cpu"``, ``"cuda"``,
    ``"cuda:<index>"``), else ``ValueError`` naming ``what`` (the field or option) and the
    accepted values. Checks the spelling only; whether CUDA is present is checked by
    :func:`gs_algos.device.resolve_device`."""
    if not isinstance(value, str) or not _PATTERN.match(value):
        raise ValueError(
            f"{what} must be one of {', '.join(repr(c) for c in DEVICE_CHOICES)}, got {value!r}"
        )
    return value
