"""LeBed: label-free test-error estimation of a trained GNN on an unlabeled test graph.

Reference: "Online GNN Evaluation Under Test-time Graph Distribution Shifts"
(``lebed-online-gnn-evaluation.txt``), section 2.2, eq. (4)-(8) and algorithm 1.

S1 (eq. 4)
    Run the trained model (parameters ``theta*``) on the test graph: embeddings ``Z*`` and
    pseudo-labels ``argmax Y*``.
Reference structure score (eq. 6-7)
    ``g(Z) =`` binary cross-entropy of ``sigmoid(cos(z_i, z_j))`` against the adjacency, on the
    test graph's edges (label 1) plus an equal number of non-edges (label 0) sampled once with
    ``seed`` (instead of all ``M^2`` pairs of eq. 7, which does not scale).
S2 (eq. 5, algorithm 1 lines 2-10)
    Re-train a copy of the model from the saved initial parameters ``theta_0`` with cross-entropy
    on the pseudo-labels. After each step ``t`` compute ``D_stru = |g(Z_t) - g(Z*)|``; stop at the
    first ``t >= min_steps`` with ``D_stru <= epsilon`` (epsilon absolute, or ``epsilon * |g(Z*)|``
    in the "relative" mode of the paper's sensitivity study), else after ``max_steps``.
S3 (eq. 8)
    ``LeBed = ||theta* - theta_t||_2`` over all trainable parameters. Orientation: grows with the
    test error (+1).

Model-agnostic: any ``torch.nn.Module`` whose ``forward(x, edge_index)`` returns
``(embeddings, logits)``. This is the only module of gs_metrics that imports torch (``lebed``
extra).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import torch
import torch.nn.functional as F

__all__ = ["LeBedConfig", "LeBedResult", "lebed_score", "sample_non_edges", "structure_score"]


@dataclass(frozen=True)
class LeBedConfig:
    """Settings of the LeBed re-training (paper section 2.2, algorithm 1, appendix D).

    Attributes
    ----------
    max_steps : int
        ``q``, the maximum number of re-training steps (algorithm 1). The paper reports average
        stopping steps of 5-585 (table A1); 300 is our default, not a paper value.
    min_steps : int
        Earliest step at which the stopping rule may fire (algorithm 1 allows step 1). Default 5:
        ``sigmoid(cos)`` lies in [0.27, 0.73], so the structure score of the *random* initial
        embeddings is often already close to the reference and a rule allowed at step 1 can stop
        before any learning happened (seen on Cora: Spearman 0.66 instead of 1.0).
    epsilon : float
        Tolerance of the structure discrepancy ``D_stru`` (eq. 6). Default 0.01, inside the
        range of the paper's sensitivity study (0.005-0.2, table A2; 0.02 is its example of a
        fixed constant); with 0.01 and ``min_steps=5`` the rule fires at steps 10-29 of 60 on
        the noisy-Cora test.
    epsilon_mode : {"absolute", "relative"}
        ``"absolute"``: stop when ``D_stru <= epsilon``; ``"relative"``: when
        ``D_stru <= epsilon * |g(Z*)|`` (the paper's "fixed ratio" setting, e.g. 0.03 = 3%).
    lr, weight_decay : float
        Adam settings of the re-training (the paper does not state them; 0.01 and 5e-4 are the
        usual GCN settings).
    """

    max_steps: int = 300
    min_steps: int = 5
    epsilon: float = 0.01
    epsilon_mode: Literal["absolute", "relative"] = "absolute"
    lr: float = 0.01
    weight_decay: float = 5e-4

    def __post_init__(self) -> None:
        if self.max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {self.max_steps}")
        if not 0 <= self.min_steps <= self.max_steps:
            raise ValueError(
                f"min_steps must lie in [0, max_steps={self.max_steps}], got {self.min_steps}"
            )
        if self.epsilon < 0:
            raise ValueError(f"epsilon must be >= 0, got {self.epsilon}")
        if self.epsilon_mode not in ("absolute", "relative"):
            raise ValueError(
                f"epsilon_mode must be 'absolute' or 'relative', got {self.epsilon_mode!r}"
            )


@dataclass(frozen=True)
class LeBedResult:
    """Outcome of :func:`lebed_score`.

    Attributes
    ----------
    score : float
        ``||theta* - theta_t||_2`` (eq. 8).
    stop_step : int
        Step ``t`` whose parameters were used.
    stopped_early : bool
        True when the stopping rule fired (``D_stru`` within tolerance), False when the step
        limit was reached.
    reference : float
        ``g(Z*)``, the structure score of the trained model.
    tolerance : float
        The absolute tolerance that was applied.
    structure_scores : list of float
        ``g(Z_t)`` after each step ``t = 1..stop_step``.
    """

    score: float
    stop_step: int
    stopped_early: bool
    reference: float
    tolerance: float
    structure_scores: list[float] = field(repr=False)


def _edge_array(edge_index: Any) -> np.ndarray:
    if isinstance(edge_index, torch.Tensor):
        edge_index = edge_index.detach().cpu().numpy()
    ei = np.asarray(edge_index)
    if ei.ndim != 2 or ei.shape[0] != 2 or not np.issubdtype(ei.dtype, np.integer):
        raise ValueError(
            f"edge_index must be an integer array of shape (2, E), got {ei.shape} {ei.dtype}"
        )
    return ei.astype(np.int64)


def sample_non_edges(
    edge_index: Any, num_nodes: int, num_samples: int, seed: int | np.random.Generator = 0
) -> np.ndarray:
    """Sample ``num_samples`` distinct node pairs ``(i, j)``, ``i != j``, that are not edges in
    either direction; returns an int64 array of shape (2, num_samples)."""
    rng = np.random.default_rng(seed)
    ei = _edge_array(edge_index)
    n = int(num_nodes)
    if n < 2:
        raise ValueError("need at least 2 nodes to sample non-edges")
    lo, hi = np.minimum(ei[0], ei[1]), np.maximum(ei[0], ei[1])
    taken = np.unique(lo * n + hi)
    capacity = n * (n - 1) // 2 - taken.size
    if num_samples > capacity:
        raise ValueError(f"cannot sample {num_samples} non-edges: the graph has only {capacity}")
    found = np.zeros(0, dtype=np.int64)
    for _ in range(100):
        need = num_samples - found.size
        if need <= 0:
            break
        k = max(2 * need, 64)
        i = rng.integers(0, n, k)
        j = rng.integers(0, n, k)
        ok = i != j
        a, b = np.minimum(i, j)[ok], np.maximum(i, j)[ok]
        key = a * n + b
        pos = np.searchsorted(taken, key)
        pos[pos == taken.size] = 0
        key = key[taken[pos] != key] if taken.size else key
        key = key[~np.isin(key, found)]
        _, first = np.unique(key, return_index=True)
        key = key[np.sort(first)]  # distinct, in the random order drawn
        found = np.concatenate([found, key[:need]])
    else:  # pragma: no cover - only for nearly complete graphs
        raise RuntimeError("non-edge sampling did not converge; the graph is too dense")
    return np.stack([found // n, found % n])


def structure_score(embeddings: torch.Tensor, pos: torch.Tensor, neg: torch.Tensor) -> float:
    """``g(s(Z), A)`` of eq. (7) on sampled pairs: mean binary cross-entropy of
    ``sigmoid(cos(z_i, z_j))`` with target 1 on the edges ``pos`` and 0 on the non-edges ``neg``."""
    z = F.normalize(embeddings.detach().double(), dim=1, eps=1e-12)
    pairs = torch.cat([pos, neg], dim=1)
    cos = (z[pairs[0]] * z[pairs[1]]).sum(dim=1)
    target = torch.cat([torch.ones(pos.shape[1]), torch.zeros(neg.shape[1])]).to(cos)
    return float(F.binary_cross_entropy_with_logits(cos, target))


def _forward(model: torch.nn.Module, x, edge_index):
    out = model(x, edge_index)
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(
            "LeBed needs a model whose forward(x, edge_index) returns (embeddings, logits); "
            f"got {type(out).__name__}"
        )
    return out


def _flat_params(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach() for k, v in model.named_parameters() if v.requires_grad}


def lebed_score(
    model: torch.nn.Module,
    init_state: Mapping[str, torch.Tensor],
    x: torch.Tensor,
    edge_index: torch.Tensor,
    *,
    config: LeBedConfig | None = None,
    seed: int = 0,
    callback: Callable[[int, float, float], None] | None = None,
) -> LeBedResult:
    """LeBed score of a trained ``model`` on an unlabeled test graph ``(x, edge_index)``.

    Parameters
    ----------
    model : torch.nn.Module
        The trained model (``theta*``); ``forward(x, edge_index) -> (embeddings, logits)``.
        It is not modified (a deep copy is re-trained).
    init_state : mapping
        The model's saved initial ``state_dict`` (``theta_0``).
    x : Tensor, shape (M, d)
        Test-graph node features.
    edge_index : Tensor of int64, shape (2, E)
        Test-graph edges.
    config : LeBedConfig, optional
        Re-training and stopping settings.
    seed : int
        Seeds the non-edge sample and torch's RNG inside a forked RNG state (dropout), so the
        result is reproducible and the global RNG is untouched.
    callback : callable, optional
        Called after each step as ``callback(step, structure_score, discrepancy)``.

    Returns
    -------
    LeBedResult
    """
    cfg = config or LeBedConfig()
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model)!r}")
    if not isinstance(x, torch.Tensor) or x.ndim != 2:
        raise TypeError("x must be a 2-D torch tensor of node features")
    ei_np = _edge_array(edge_index)
    n = x.shape[0]
    if ei_np.size and (ei_np.min() < 0 or ei_np.max() >= n):
        raise ValueError(f"edge_index must hold node indices in [0, {n})")
    ei = torch.as_tensor(ei_np, device=x.device)
    theta_star = _flat_params(model)
    rng = np.random.default_rng(seed)
    neg = torch.as_tensor(sample_non_edges(ei_np, n, ei_np.shape[1], rng), device=x.device)

    was_training = model.training
    model.eval()
    with torch.no_grad():
        z_star, logits_star = _forward(model, x, ei)
    model.train(was_training)
    pseudo = logits_star.argmax(dim=1)
    reference = structure_score(z_star, ei, neg)
    tol = cfg.epsilon if cfg.epsilon_mode == "absolute" else cfg.epsilon * abs(reference)

    scores: list[float] = []
    stopped = False
    step = 0
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        retrained = copy.deepcopy(model)
        retrained.load_state_dict(init_state)
        params = [p for p in retrained.parameters() if p.requires_grad]
        opt = torch.optim.Adam(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
        for step in range(1, cfg.max_steps + 1):
            retrained.train()
            opt.zero_grad()
            _, logits = _forward(retrained, x, ei)
            loss = F.cross_entropy(logits, pseudo)
            loss.backward()
            opt.step()
            retrained.eval()
            with torch.no_grad():
                z, _ = _forward(retrained, x, ei)
            g = structure_score(z, ei, neg)
            scores.append(g)
            d = abs(g - reference)
            if callback is not None:
                callback(step, g, d)
            if step >= cfg.min_steps and d <= tol:
                stopped = True
                break
    theta = _flat_params(retrained)
    sq = sum(float(((theta_star[k].double() - theta[k].double()) ** 2).sum()) for k in theta_star)
    return LeBedResult(
        score=float(np.sqrt(sq)),
        stop_step=step,
        stopped_early=stopped,
        reference=reference,
        tolerance=float(tol),
        structure_scores=scores,
    )
