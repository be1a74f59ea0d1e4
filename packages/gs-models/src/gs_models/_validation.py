"""Input validation shared by every module (raise early, name the input, say what is accepted).

torch is imported by the tensor checks only, so the configs (which use the number checks) load
without it: gs-bench validates its suites' model settings against them at planning time."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import Tensor

__all__ = ["check_edge_index", "check_node_features", "check_positive_int", "check_probability"]


def check_positive_int(value: object, name: str, *, minimum: int = 1) -> int:
    """Return ``value`` as an int if it is an integer ``>= minimum``; raise otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(
            f"{name} must be an int >= {minimum}, got {value!r} ({type(value).__name__})"
        )
    if value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value}")
    return value


def check_probability(value: object, name: str, *, allow_one: bool = False) -> float:
    """Return ``value`` as a float in ``[0, 1)`` (or ``[0, 1]``); raise otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a float in [0, 1), got {value!r}")
    upper_ok = value <= 1.0 if allow_one else value < 1.0
    if not (value >= 0.0 and upper_ok):
        bound = "[0, 1]" if allow_one else "[0, 1)"
        raise ValueError(f"{name} must be a float in {bound}, got {value}")
    return float(value)


def check_node_features(x: object, in_channels: int, *, name: str = "x") -> Tensor:
    """Check that ``x`` is a float tensor of shape ``(num_nodes, in_channels)``."""
    import torch

    if not isinstance(x, torch.Tensor):
        raise TypeError(
            f"{name} must be a torch.Tensor of shape (num_nodes, {in_channels}), got {type(x).__name__}"
        )
    if x.dim() != 2 or x.size(1) != in_channels:
        raise ValueError(
            f"{name} has shape {tuple(x.shape)}; this model was built with in_channels={in_channels}, "
            f"so it accepts a float tensor of shape (num_nodes, {in_channels})"
        )
    if not torch.is_floating_point(x):
        raise TypeError(f"{name} must be a floating-point tensor, got dtype {x.dtype}")
    return x


def check_edge_index(edge_index: object, num_nodes: int, *, name: str = "edge_index") -> Tensor:
    """Check that ``edge_index`` is an integer tensor of shape ``(2, num_edges)`` with valid node ids."""
    import torch

    if not isinstance(edge_index, torch.Tensor):
        raise TypeError(
            f"{name} must be a torch.Tensor of shape (2, num_edges), got {type(edge_index).__name__}"
        )
    if edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise ValueError(f"{name} has shape {tuple(edge_index.shape)}; expected (2, num_edges)")
    if edge_index.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"{name} must have dtype torch.long (or int32), got {edge_index.dtype}")
    if edge_index.numel() > 0:
        lo, hi = int(edge_index.min()), int(edge_index.max())
        if lo < 0 or hi >= num_nodes:
            raise ValueError(
                f"{name} holds node ids in [{lo}, {hi}]; accepted are ids in [0, {num_nodes - 1}]"
            )
    return edge_index
