"""EERM: Explore-to-Extrapolate Risk Minimisation (Wu et al., ICLR 2022)."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from gs_algos.batch import Batch, TaskSpec, call_model, item_losses
from gs_algos.methods.base import Method

__all__ = ["EERM", "StructureExplorer"]


class StructureExplorer(nn.Module):
    """A context generator that edits the graph structure (EERM section 3.2).

    For every node ``i`` it samples ``num_edits`` partner nodes ``j`` from
    ``softmax(logits[i])`` without replacement and flips the (undirected) edge
    ``{i, j}``: it is added if absent and removed if present. ``logits`` is an
    ``(n, n)`` learnable matrix (so the explorer is tied to one graph of ``n`` nodes).
    """

    def __init__(self, num_nodes: int, num_edits: int) -> None:
        super().__init__()
        if num_edits < 1 or num_edits >= num_nodes:
            raise ValueError(
                f"num_edits must be in [1, num_nodes - 1] = [1, {num_nodes - 1}], got {num_edits}"
            )
        self.num_nodes = int(num_nodes)
        self.num_edits = int(num_edits)
        self.logits = nn.Parameter(torch.zeros(num_nodes, num_nodes))

    def weights(self) -> tuple[Tensor, Tensor, Tensor]:
        """``(e, cdf, norm)`` without gradient: ``e = exp(logits - rowmax)``, its row-wise
        cumulative sums and row sums, so ``softmax(logits) = e / norm`` (one pass over the
        ``(n, n)`` matrix each; :meth:`sample` and :meth:`reinforce_grad` share them)."""
        with torch.no_grad():
            e = self.logits - self.logits.amax(1, keepdim=True)
            e.exp_()
            cdf = e.cumsum(1)
            return e, cdf, cdf[:, -1:].clone()

    def sample(self, cdf: Tensor | None = None) -> Tensor:
        """``(n, num_edits)`` partners per node, drawn without replacement from
        ``softmax(logits[i])``: the same law as ``torch.multinomial(softmax(logits),
        num_edits, replacement=False)``, i.e. draw ``j`` from the softmax, then the next from
        the softmax without the nodes already drawn, ...; done by inverse-CDF draws
        (``searchsorted`` on the row's cumulative weights) with a redraw of a node already
        picked, which is the renormalised softmax over the others. ``cdf``: from
        :meth:`weights` (computed if not given)."""
        if cdf is None:
            cdf = self.weights()[1]
        return _draw_without_replacement(cdf, self.num_edits)

    def log_prob(self, picks: Tensor) -> Tensor:
        """``sum_i sum_{j in picks[i]} log softmax(logits[i])_j`` (the REINFORCE term)."""
        return (self.logits.gather(1, picks) - torch.logsumexp(self.logits, 1, keepdim=True)).sum()

    def reinforce_grad(self, picks: Tensor, reward: float, e: Tensor, norm: Tensor) -> Tensor:
        """Gradient of ``-reward * log_prob(picks)`` in closed form,
        ``reward * (k softmax(logits) - onehot(picks))`` with ``k = num_edits``, written into
        ``e`` (from :meth:`weights`, consumed): two passes over the matrix instead of
        autograd's log-sum-exp, gather and scatter."""
        g = e.mul_(float(reward) * picks.size(1) / norm)
        return g.scatter_add_(1, picks, torch.full(picks.shape, -float(reward), dtype=g.dtype,
                                                     device=g.device))

    def forward(self, edge_index: Tensor, with_log_prob: bool = True) -> tuple[Tensor, Tensor | None]:
        """Sample an edited ``edge_index`` and the log-probability of the edits (``None``
        with ``with_log_prob=False``: the model's update does not need it)."""
        picks = self.sample()
        return self.edit(edge_index, picks), (self.log_prob(picks) if with_log_prob else None)

    def edit(self, edge_index: Tensor, picks: Tensor) -> Tensor:
        """``edge_index`` with the undirected pairs ``{i, picks[i, :]}`` flipped (self pairs
        ignored), both directions of every edge."""
        n = self.num_nodes
        rows = torch.arange(n, device=picks.device).repeat_interleave(self.num_edits)
        cols = picks.reshape(-1)
        keep = rows != cols
        rows, cols = rows[keep], cols[keep]
        # undirected edit set, each pair once (i < j)
        a, b = torch.minimum(rows, cols), torch.maximum(rows, cols)
        edit = torch.unique(a * n + b)
        ei = edge_index.to(picks.device)
        ea, eb = torch.minimum(ei[0], ei[1]), torch.maximum(ei[0], ei[1])
        ea, eb = ea[ea != eb], eb[ea != eb]
        existing = torch.unique(ea * n + eb)
        # symmetric difference of the existing and the edited pairs
        both = torch.cat([existing, edit])
        ids, counts = torch.unique(both, return_counts=True)
        new = ids[counts == 1]
        u, v = new // n, new % n
        return torch.stack([torch.cat([u, v]), torch.cat([v, u])])


def _draw_without_replacement(cdf: Tensor, k: int, max_redraws: int = 64) -> Tensor:
    """``k`` distinct column indices per row of the row-wise cumulative weights ``cdf``,
    sequentially: position ``j`` is drawn from the weights and redrawn while it repeats an
    earlier position (so it follows the weights renormalised over the columns not yet
    drawn). Rows still repeating after ``max_redraws`` (their weight is concentrated on
    columns already drawn) draw from the renormalised weights directly."""
    n, m = cdf.shape
    total = cdf[:, -1:]
    picks = torch.empty(n, k, dtype=torch.long, device=cdf.device)
    for j in range(k):
        u = torch.rand(n, 1, dtype=cdf.dtype, device=cdf.device) * total
        cand = torch.searchsorted(cdf, u, right=True).squeeze(1).clamp_(max=m - 1)
        todo = torch.arange(n, device=cdf.device)
        for _ in range(max_redraws):
            dup = (picks[todo, :j] == cand.unsqueeze(1)).any(1) if j else torch.zeros_like(todo, dtype=torch.bool)
            picks[todo[~dup], j] = cand[~dup]
            todo = todo[dup]
            if todo.numel() == 0:
                break
            u = torch.rand(todo.numel(), 1, dtype=cdf.dtype, device=cdf.device) * total[todo]
            cand = torch.searchsorted(cdf[todo], u, right=True).squeeze(1).clamp_(max=m - 1)
        else:
            w = torch.diff(cdf[todo], dim=1, prepend=torch.zeros_like(cdf[todo, :1]))
            w.scatter_(1, picks[todo, :j], 0.0)
            picks[todo, j] = torch.multinomial(w, 1).squeeze(1)
    return picks


class EERM(Method):
    """EERM (Wu et al. 2022, eq. 5-6): ``K`` structure explorers create virtual
    environments; the model minimises ``Var_k(R_k) + beta * Mean_k(R_k)`` over the
    environments' risks, while the explorers are trained adversarially with REINFORCE to
    *maximise* the variance of the risks (reward ``Var_k(R_k)`` minus a running-mean
    baseline, gradient ``reward * grad sum_k log p_k``).

    The explorers have their own Adam optimiser (``explorer_lr``) and take
    ``explorer_steps`` updates before each model update. Full-batch node level only.
    """

    name = "eerm"
    levels = ("node",)
    tasks = ("multiclass", "binary", "regression")

    def __init__(
        self,
        num_envs: int = 3,
        num_edits: int = 5,
        beta: float = 1.0,
        explorer_lr: float = 1e-2,
        explorer_steps: int = 1,
    ) -> None:
        super().__init__()
        if num_envs < 2:
            raise ValueError(f"num_envs must be >= 2 (a variance needs environments), got {num_envs}")
        if beta < 0:
            raise ValueError(f"beta must be >= 0, got {beta!r}")
        self.num_envs, self.num_edits = int(num_envs), int(num_edits)
        self.beta, self.explorer_lr = float(beta), float(explorer_lr)
        self.explorer_steps = int(explorer_steps)
        self.explorers = nn.ModuleList()
        self.register_buffer("baseline", torch.zeros(()))
        self._opt: torch.optim.Optimizer | None = None
        self._num_nodes: int | None = None

    def setup_graph(self, num_nodes: int) -> None:
        """Create the explorers for a graph of ``num_nodes`` nodes."""
        self._num_nodes = int(num_nodes)
        self.explorers = nn.ModuleList(
            StructureExplorer(num_nodes, min(self.num_edits, num_nodes - 1))
            for _ in range(self.num_envs)
        )
        # fused: one kernel per step over the K (n, n) logit matrices (the bulk of EERM's
        # parameters); same update as the default Adam
        self._opt = torch.optim.Adam(self.explorers.parameters(), lr=self.explorer_lr,
                                     fused=_fused_ok(self.explorers))

    def _check_graph(self, batch: Batch) -> None:
        """Create the explorers on the first graph; refuse a graph of another size."""
        if self._num_nodes != batch.data.num_nodes:
            if self._num_nodes is not None:
                raise ValueError(
                    "EERM works on one full graph (full batch); got a graph of "
                    f"{batch.data.num_nodes} nodes after one of {self._num_nodes}"
                )
            self.setup_graph(batch.data.num_nodes)

    def optimizer_parameters(self):
        return []  # explorers are updated by their own (adversarial) optimiser

    def env_risks(
        self, model: nn.Module, batch: Batch, grad_model: bool = True, with_log_prob: bool = True
    ) -> tuple[Tensor, Tensor | None]:
        """Risks of the model in ``K`` freshly sampled environments and their log-probs
        (``None`` with ``with_log_prob=False``)."""
        self._check_graph(batch)
        risks, logps = [], []
        for ex in self.explorers:
            ei, logp = ex(batch.data.edge_index, with_log_prob=with_log_prob)
            with torch.set_grad_enabled(grad_model and torch.is_grad_enabled()):
                _, out = call_model(model, "node", _with_edges(batch.data, ei))
            risks.append(item_losses(out[batch.labeled], batch.y, batch.task).mean())
            logps.append(logp)
        return torch.stack(risks), (torch.stack(logps) if with_log_prob else None)

    def explore(self, model: nn.Module, batch: Batch) -> float:
        """One REINFORCE update of the explorers; returns the sampled risk variance.

        The gradient of ``-(Var_k(R_k) - baseline) * sum_k log p_k`` is written in closed
        form (:meth:`StructureExplorer.reinforce_grad`); it equals autograd's on
        :meth:`StructureExplorer.log_prob` (tested)."""
        self._check_graph(batch)
        envs, risks = [], []
        for ex in self.explorers:
            e, cdf, norm = ex.weights()
            picks = ex.sample(cdf)
            del cdf
            with torch.no_grad():
                _, out = call_model(model, "node", _with_edges(batch.data, ex.edit(batch.data.edge_index, picks)))
                risks.append(item_losses(out[batch.labeled], batch.y, batch.task).mean())
            envs.append((ex, picks, e, norm))
        var = torch.stack(risks).var(unbiased=False)
        reward = float(var - self.baseline)
        self._opt.zero_grad(set_to_none=True)
        for ex, picks, e, norm in envs:
            ex.logits.grad = ex.reinforce_grad(picks, reward, e, norm)
        self._opt.step()
        with torch.no_grad():
            self.baseline.mul_(0.9).add_(0.1 * var)
        return float(var)

    def training_loss(self, model, batch, epoch):
        if self._num_nodes is None:
            self.setup_graph(batch.data.num_nodes)
        explored = 0.0
        for _ in range(self.explorer_steps):
            explored = self.explore(model, batch)
        risks, _ = self.env_risks(model, batch, with_log_prob=False)
        var = risks.var(unbiased=False)
        loss = var + self.beta * risks.mean()
        return loss, {
            "loss": float(risks.mean().detach()),
            "variance": float(var.detach()),
            "explored_variance": explored,
        }

    def build(self, spec: TaskSpec) -> None:
        self._num_nodes = None

    def extra_checkpoint_state(self) -> dict:
        return {
            "num_nodes": self._num_nodes,
            "opt": self._opt.state_dict() if self._opt is not None else None,
        }

    def load_extra_checkpoint_state(self, state: dict) -> None:
        if state.get("num_nodes") is not None:
            if self._num_nodes != state["num_nodes"]:
                self.setup_graph(state["num_nodes"])
            if state.get("opt") is not None:
                self._opt.load_state_dict(state["opt"])

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        # explorers are created lazily: create them before loading their weights
        key = prefix + "explorers.0.logits"
        if key in state_dict and self._num_nodes != state_dict[key].size(0):
            self.setup_graph(state_dict[key].size(0))
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)


def _fused_ok(module: nn.Module) -> bool:
    """Fused Adam runs on CPU and CUDA floating-point parameters (torch >= 2.4)."""
    params = list(module.parameters())
    return bool(params) and all(
        p.device.type in ("cpu", "cuda") and p.is_floating_point() for p in params
    )


def _with_edges(data, edge_index: Tensor):
    from torch_geometric.data import Data

    return Data(x=data.x, edge_index=edge_index, num_nodes=data.num_nodes)
