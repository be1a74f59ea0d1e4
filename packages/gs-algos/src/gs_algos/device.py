"""Where training runs: the ``device`` setting of :class:`~gs_algos.config.TrainConfig` and friends.

Accepted values (:func:`check_device`):

* ``"auto"`` (the default): the current CUDA device when ``torch.cuda.is_available()``,
  else the CPU;
* ``"cpu"``;
* ``"cuda"`` (the current CUDA device) or ``"cuda:<index>"`` (e.g. ``"cuda:1"``).

:func:`resolve_device` turns a value into a :class:`torch.device` when training starts, so a
configuration written on a laptop runs on a GPU node unchanged. The engine moves the model,
the method and the data to that device, creates every tensor of its own there (batches,
neighbour samples, the methods' internal tensors) and hands the model back on the device it
came in on (see :func:`gs_algos.engine.fit_node`).
"""

from __future__ import annotations

import copy
from contextlib import AbstractContextManager
from typing import Any

import torch
from torch import nn

from gs_algos.device_names import DEVICE_CHOICES, check_device_name

__all__ = [
    "DEVICE_CHOICES", "check_device", "resolve_device", "as_device", "fork_rng_of", "device_name",
    "module_device", "data_to",
]

def check_device(value: object, what: str = "device") -> str:
    """``value`` if it is an accepted device name (see the module docstring), else ``ValueError``
    naming ``what`` (the field or option) and the accepted values. Checks the spelling only;
    whether CUDA is present is checked by :func:`resolve_device`."""
    if isinstance(value, torch.device):
        value = str(value)
    return check_device_name(value, what)


def resolve_device(value: str | torch.device = "auto", what: str = "device") -> torch.device:
    """The :class:`torch.device` that ``value`` names on this machine.

    ``"auto"`` is ``cuda:<current>`` when CUDA is available, else ``cpu``; ``"cuda"`` is the
    current CUDA device with its index (so that records and RNG forks name it). A CUDA device
    on a machine without one (or an index beyond the devices present) raises ``ValueError``
    saying what was found.
    """
    name = check_device(value, what)
    if name == "cpu":
        return torch.device("cpu")
    available = torch.cuda.is_available()
    if name == "auto":
        if not available:
            return torch.device("cpu")
        name = "cuda"
    if not available:
        raise ValueError(
            f"{what} {name!r} needs a CUDA GPU, but torch.cuda.is_available() is False on this "
            f"machine (torch {torch.__version__}); use 'cpu' or 'auto'"
        )
    count = torch.cuda.device_count()
    index = int(name.split(":")[1]) if ":" in name else torch.cuda.current_device()
    if index >= count:
        raise ValueError(
            f"{what} {name!r}: this machine has {count} CUDA device(s) (cuda:0 .. cuda:{count - 1})"
        )
    return torch.device("cuda", index)


def as_device(value: str | torch.device = "auto", what: str = "device") -> torch.device:
    """The device to train on: ``value`` itself when it is already a resolved
    :class:`torch.device` (the CPU, or CUDA with an index, as :func:`resolve_device` returns),
    else :func:`resolve_device` of it.

    The trainers of gs-algos call this, so that a caller that resolved the device once (gs-bench
    resolves ``--device`` once per job, on the machine that runs it, and passes the
    ``torch.device`` down) is not second-guessed, while a name (``"auto"``, ``"cuda"``) still
    works as before.
    """
    if isinstance(value, torch.device) and (value.type != "cuda" or value.index is not None):
        return value
    return resolve_device(value, what)


def device_name(device: torch.device) -> str:
    """A readable name of ``device`` for records: ``"cpu"`` or ``"cuda:0 (NVIDIA H100 ...)"``."""
    if device.type == "cuda":
        try:
            return f"{device} ({torch.cuda.get_device_name(device)})"
        except (RuntimeError, AssertionError):  # pragma: no cover - no driver
            return str(device)
    return str(device)


def fork_rng_of(device: torch.device) -> AbstractContextManager:
    """``torch.random.fork_rng`` over the CPU generator and, on CUDA, that device's generator:
    a run leaves the caller's global RNG states as they were on every device it draws on."""
    if device.type == "cuda":
        index = device.index if device.index is not None else torch.cuda.current_device()
        return torch.random.fork_rng(devices=[index])
    return torch.random.fork_rng(devices=[])


def module_device(module: nn.Module) -> torch.device:
    """The device of ``module``'s first parameter (or buffer); CPU for a module without any."""
    for t in module.parameters():
        return t.device
    for t in module.buffers():
        return t.device
    return torch.device("cpu")


def data_to(data: Any, device: torch.device) -> Any:
    """``data`` (a PyG ``Data`` / ``Batch``, or any object holding tensors as attributes) on
    ``device``: a shallow copy whose tensors are moved, so the caller's object is left as it
    is (tensors already on ``device`` are not copied)."""
    out = copy.copy(data)
    if hasattr(out, "to") and callable(out.to):
        return out.to(device)
    for name, value in list(vars(out).items()):
        if isinstance(value, torch.Tensor):
            setattr(out, name, value.to(device))
    return out
