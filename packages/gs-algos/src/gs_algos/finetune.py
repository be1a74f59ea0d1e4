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

__all__ = ["PAR_LABEL_SIZES", "choose_labeled", "choose_labeled_per_half", "finetune_graph", "finetune_node"]

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


def choose_labeled_per_half(halves: Sequence[int] | np.ndarray, n_labels: int,
                            seed: int | np.random.Generator) -> np.ndarray:
    """GeSS's Par-Label draw: ``n_labels // 2`` positions among the pool items removed from
    Val-OOD (``halves == 0``) and the other ``n_labels - n_labels // 2`` among those removed
    from Test-OOD (``halves == 1``), each drawn with ``seed``; sorted positions into the pool.

    GeSS appendix C.1 removes 1000 samples from each of Val-OOD and Test-OOD to form the
    Train-OOD pool; its fine-tuning sets of N = 100 / 500 / 1000 take half of N from each.
    A half with too few items is a ``ValueError`` naming both counts.
    """
    h = np.asarray(halves)
    if h.ndim != 1 or not np.isin(h, (0, 1)).all():
        raise ValueError("halves must be a 1-d sequence of 0 (from Val-OOD) and 1 (from Test-OOD)")
    if n_labels < 1:
        raise ValueError(f"n_labels must be >= 1, got {n_labels}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    want = (n_labels // 2, n_labels - n_labels // 2)
    out = []
    for half, k in enumerate(want):
        members = np.flatnonzero(h == half)
        if k > members.size:
            raise ValueError(
                f"n_labels={n_labels} needs {k} pool items from the "
                f"{'Val-OOD' if half == 0 else 'Test-OOD'} half, which holds {members.size}"
            )
        out.append(members[rng.choice(members.size, size=k, replace=False)])
    return np.sort(np.concatenate(out))


def _keep_head(config: TrainConfig) -> TrainConfig:
    """``config`` without :attr:`~TrainConfig.standardize_targets`: fine-tuning starts from
    a trained model whose outputs are in the targets' units."""
    return config.replace(standardize_targets=False) if config.standardize_targets else config


def finetune_graph(
    pretrained: nn.Module,
    parts: Mapping[str, Sequence[Any]],
    n_labels: int,
    config: TrainConfig | None = None,
    *,
    pool_part: str = "ood_labeled",
    seed: int = 0,
    pool_halves: Sequence[int] | np.ndarray | None = None,
    **fit_kwargs: Any,
) -> tuple[nn.Module, FitResult]:
    """Full fine-tuning (all parameters) of a copy of ``pretrained`` on ``n_labels``
    graphs drawn from ``parts[pool_part]`` (the labelled OOD pool).

    ``pool_halves`` (one 0/1 per pool item: removed from Val-OOD / Test-OOD) selects GeSS's
    draw of half of the labels from each (:func:`choose_labeled_per_half`); without it the
    labels are drawn uniformly from the whole pool (:func:`choose_labeled`, ours). The other
    parts (validation / test) are used as in :func:`fit_graph`; the copy is returned with
    its result, ``pretrained`` is left unchanged. The pre-trained model is fine-tuned on the
    raw targets: ``config.standardize_targets`` is ignored here (a model trained with it
    predicts in the targets' units already; standardising again with the few fine-tuning
    labels would misread its outputs).
    """
    if pool_part not in parts:
        raise ValueError(f"pool part {pool_part!r} not among the parts {sorted(parts)}")
    pool = list(parts[pool_part])
    if pool_halves is not None:
        if len(pool_halves) != len(pool):
            raise ValueError(f"pool_halves has {len(pool_halves)} entries for a pool of {len(pool)}")
        idx = choose_labeled_per_half(pool_halves, n_labels, seed)
    else:
        idx = choose_labeled(len(pool), n_labels, seed)
    cfg = _keep_head(config if config is not None else TrainConfig.gess(level="par-label"))
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
    ``pretrained`` (``config.standardize_targets`` ignored, as there)."""
    config = _keep_head(config)
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
