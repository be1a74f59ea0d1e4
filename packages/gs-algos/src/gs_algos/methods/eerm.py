"""EERM: Explore-to-Extrapolate Risk Minimisation (Wu et al., ICLR 2022)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
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

    def forward(self, edge_index: Tensor) -> tuple[Tensor, Tensor]:
        """Sample an edited ``edge_index`` and the log-probability of the edits."""
        n = self.num_nodes
        logp_all = F.log_softmax(self.logits, dim=1)
        with torch.no_grad():
            picks = torch.multinomial(logp_all.exp(), self.num_edits, replacement=False)
        logp = logp_all.gather(1, picks).sum()
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
        new_ei = torch.stack([torch.cat([u, v]), torch.cat([v, u])])
        return new_ei, logp


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
        self._opt = torch.optim.Adam(self.explorers.parameters(), lr=self.explorer_lr)

    def optimizer_parameters(self):
        return []  # explorers are updated by their own (adversarial) optimiser

    def env_risks(
        self, model: nn.Module, batch: Batch, grad_model: bool = True
    ) -> tuple[Tensor, Tensor]:
        """Risks of the model in ``K`` freshly sampled environments and their log-probs."""
        if self._num_nodes != batch.data.num_nodes:
            if self._num_nodes is not None:
                raise ValueError(
                    "EERM works on one full graph (full batch); got a graph of "
                    f"{batch.data.num_nodes} nodes after one of {self._num_nodes}"
                )
            self.setup_graph(batch.data.num_nodes)
        risks, logps = [], []
        for ex in self.explorers:
            ei, logp = ex(batch.data.edge_index)
            with torch.set_grad_enabled(grad_model and torch.is_grad_enabled()):
                _, out = call_model(model, "node", _with_edges(batch.data, ei))
            risks.append(item_losses(out[batch.labeled], batch.y, batch.task).mean())
            logps.append(logp)
        return torch.stack(risks), torch.stack(logps)

    def explore(self, model: nn.Module, batch: Batch) -> float:
        """One REINFORCE update of the explorers; returns the sampled risk variance."""
        risks, logps = self.env_risks(model, batch, grad_model=False)
        var = risks.detach().var(unbiased=False)
        reward = var - self.baseline
        self._opt.zero_grad(set_to_none=True)
        (-(reward * logps.sum())).backward()
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
        risks, _ = self.env_risks(model, batch)
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


def _with_edges(data, edge_index: Tensor):
    from torch_geometric.data import Data

    return Data(x=data.x, edge_index=edge_index, num_nodes=data.num_nodes)
