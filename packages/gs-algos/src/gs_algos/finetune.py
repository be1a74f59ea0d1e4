"""Par-Label level (GeSS section 4.1): fine-tune a pretrained ERM model on a few
labelled OOD samples (100 / 500 / 1000 in the paper)."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from gs_algos.config import TrainConfig
from gs_algos.engine import FitResult, fit_graph, fit_node

__all__ = ["PAR_LABEL_SIZES", "choose_labeled", "finetune_graph", "finetune_node"]

PAR_LABEL_SIZES: tuple[int, ...] = (100, 500, 1000)
"""Numbers of labelled OOD samples of the Par-Label level (GeSS section 4.1)."""


def choose_labeled(pool_size: int, n_labels: int, seed: int | np.random.Generator) -> np.ndarray:
    """``n_labels`` distinct positions in ``range(pool_size)``, drawn with ``seed``, sorted."""
    if n_labels < 1:
        raise ValueError(f"n_labels must be >= 1, got {n_labels}")
    if n_labels > pool_size:
        raise ValueError(
            f"n_labels={n_labels} exceeds the {pool_size} labelled OOD samples available"
        )
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    return np.sort(rng.choice(pool_size, size=n_labels, replace=False))


def finetune_graph(
    pretrained: nn.Module,
    parts: Mapping[str, Sequence[Any]],
    n_labels: int,
    config: TrainConfig | None = None,
    *,
    pool_part: str = "ood_labeled",
    seed: int = 0,
    **fit_kwargs: Any,
) -> tuple[nn.Module, FitResult]:
    """Full fine-tuning (all parameters) of a copy of ``pretrained`` on ``n_labels``
    graphs drawn from ``parts[pool_part]`` (the labelled OOD pool).

    The other parts (validation / test) are used as in :func:`fit_graph`; the copy is
    returned with its result, ``pretrained`` is left unchanged.
    """
    if pool_part not in parts:
        raise ValueError(f"pool part {pool_part!r} not among the parts {sorted(parts)}")
    pool = list(parts[pool_part])
    idx = choose_labeled(len(pool), n_labels, seed)
    cfg = config if config is not None else TrainConfig.gess(level="par-label")
    new_parts = {k: v for k, v in parts.items() if k != pool_part}
    new_parts[cfg.train_part] = [pool[i] for i in idx]
    model = copy.deepcopy(pretrained)
    return model, fit_graph(model, new_parts, None, cfg, **fit_kwargs)


def finetune_node(
    pretrained: nn.Module,
    data: Any,
    masks: Mapping[str, torch.Tensor],
    n_labels: int,
    config: TrainConfig,
    *,
    pool_part: str,
    seed: int = 0,
    **fit_kwargs: Any,
) -> tuple[nn.Module, FitResult]:
    """Node-level analogue of :func:`finetune_graph`: ``n_labels`` nodes of the mask
    ``pool_part`` become the training part of a fine-tuning run of a copy of
    ``pretrained``."""
    if pool_part not in masks:
        raise ValueError(f"pool part {pool_part!r} not among the masks {sorted(masks)}")
    pool = torch.nonzero(masks[pool_part]).flatten()
    idx = choose_labeled(pool.numel(), n_labels, seed)
    train = torch.zeros_like(masks[pool_part])
    train[pool[torch.as_tensor(idx, device=pool.device)]] = True
    new_masks = {k: v for k, v in masks.items() if k != pool_part}
    new_masks[config.train_part] = train
    model = copy.deepcopy(pretrained)
    return model, fit_node(model, data, None, config, masks=new_masks, **fit_kwargs)
