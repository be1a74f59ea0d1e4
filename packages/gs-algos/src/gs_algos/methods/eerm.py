"""EERM: Explore-to-Extrapolate Risk Minimisation (Wu et al., ICLR 2022).

Two variants (:class:`EERM` ``variant``): ``"ours-v1"`` (our earlier formulation: editors
over the whole graph, undirected flips, a running-mean REINFORCE baseline) and ``"good"``
(the GOOD benchmark's ``EERM`` / ``EERMGCN``, which the structural-shifts paper ran).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from gs_algos.batch import Batch, TaskSpec, call_model, item_losses
from gs_algos.methods.base import Method

__all__ = ["EERM", "GoodGraphEditor", "StructureExplorer", "good_eerm_beta"]


class StructureExplorer(nn.Module):
    """A context generator that edits the graph structure (EERM section 3.2).

    For every node ``i`` it samples ``num_edits`` partner nodes ``j`` from
    ``softmax(logits[i])`` without replacement and flips the (undirected) edge
    ``{i, j}``: it is added if absent and removed if present. ``logits`` is an
    ``(n, n)`` learnable matrix (so the explorer is tied to one graph of ``n`` nodes).
    """

    def __init__(self, num_nodes: int, num_edits: int, device: torch.device | None = None) -> None:
        super().__init__()
        if num_edits < 1 or num_edits >= num_nodes:
            raise ValueError(
                f"num_edits must be in [1, num_nodes - 1] = [1, {num_nodes - 1}], got {num_edits}"
            )
        self.num_nodes = int(num_nodes)
        self.num_edits = int(num_edits)
        self.logits = nn.Parameter(torch.zeros(num_nodes, num_nodes, device=device))

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


def good_eerm_beta(base: float, epoch: int, max_epochs: int) -> float:
    """GOOD's EERM risk weight ``beta = 10 b e / E + b (1 - e / E)`` at epoch ``e`` of ``E``
    (``GOOD/ood_algorithms/algorithms/EERM.py`` lines 90-91): ``b`` at the first epoch,
    rising linearly towards ``10 b``."""
    if max_epochs < 1:
        raise ValueError(f"max_epochs must be >= 1, got {max_epochs!r}")
    t = epoch / max_epochs
    return 10.0 * base * t + base * (1.0 - t)


class GoodGraphEditor(nn.Module):
    """GOOD's EERM graph editors (``Graph_Editer``, ``GOOD/networks/models/EERM.py`` lines
    73-103, adapted there from qitianwu/GraphOOD-EERM): ``K`` matrices ``B_k`` of shape
    ``(n, n)`` over the ``n`` training nodes, initialised ``U(0, 1)``.

    Editor ``k`` draws, for every node ``i``, ``s`` distinct partners ``S[i, :]`` without
    replacement from row ``i`` of ``P = softmax(B_k, dim=0)`` (the *column* softmax, as
    ``torch.multinomial(P, s)`` there) and flips the directed adjacency entries
    ``(S[i, j] -> i)`` (``M[S, col] = 1``, ``C = A + M (1 - 2 A)``): exactly ``n s``
    entries change, self pairs included. Its log-probability is GOOD's
    ``sum_i (sum_j B_k[S[i, j], i] - logsumexp_r B_k[r, i])`` (lines 99-101: the
    log-sum-exp of column ``i`` once per node whatever ``s``, and columns although the
    draws use rows; we keep GOOD's expression, the REINFORCE term its editors follow).
    """

    def __init__(self, num_editors: int, num_nodes: int, num_edits: int,
                 device: torch.device | None = None) -> None:
        super().__init__()
        if num_edits < 1 or num_edits > num_nodes:
            raise ValueError(
                f"num_edits must be in [1, num_nodes] = [1, {num_nodes}], got {num_edits}"
            )
        self.num_nodes, self.num_edits = int(num_nodes), int(num_edits)
        self.B = nn.Parameter(torch.empty(int(num_editors), int(num_nodes), int(num_nodes),
                                          device=device))
        nn.init.uniform_(self.B)

    def sample(self, k: int) -> Tensor:
        """``(n, s)`` partners per node for editor ``k`` (see the class docstring)."""
        with torch.no_grad():
            p = torch.softmax(self.B[k], dim=0)
            return torch.multinomial(p, self.num_edits, replacement=False)

    def log_prob(self, k: int, picks: Tensor) -> Tensor:
        """GOOD's log-probability of ``picks`` under editor ``k`` (differentiable in ``B``)."""
        bk = self.B[k]
        cols = torch.arange(bk.size(1), device=bk.device).unsqueeze(1).expand_as(picks)
        return (bk[picks, cols].sum(1) - torch.logsumexp(bk, dim=0)).sum()

    def edit(self, edge_index: Tensor, picks: Tensor) -> Tensor:
        """``edge_index`` (directed, ``(2, E)``, on the ``n`` nodes) with the entries
        ``(picks[i, j] -> i)`` flipped: added where absent, removed where present."""
        n = self.num_nodes
        ei = edge_index.to(picks.device)
        existing = torch.unique(ei[0] * n + ei[1])
        dst = torch.arange(n, device=picks.device).unsqueeze(1).expand_as(picks)
        flips = (picks * n + dst).reshape(-1)  # distinct: distinct picks per destination
        ids, counts = torch.unique(torch.cat([existing, flips]), return_counts=True)
        new = ids[counts == 1]
        return torch.stack([new // n, new % n])


class EERM(Method):
    """EERM (Wu et al. 2022, eq. 5-6): ``K`` structure explorers create virtual
    environments; the model minimises ``Var_k(R_k) + beta * Mean_k(R_k)`` over the
    environments' risks, while the explorers are trained adversarially with REINFORCE to
    *maximise* the variance of the risks. Full-batch node level only.

    Variants (``variant``):

    * ``"ours-v1"`` (default): ``num_envs`` = 3 explorers of :class:`StructureExplorer`
      over the whole graph, ``num_edits`` = 5 undirected flips per node drawn from the row
      softmax, population variance, constant ``beta`` = 1, reward ``Var_k(R_k)`` minus a
      running-mean baseline, explorer Adam lr ``explorer_lr`` = 1e-2, ``explorer_steps`` = 1
      explorer updates (on fresh draws, without model gradient) before the model's risks
      are drawn again.
    * ``"good"``: GOOD's ``EERM`` (``GOOD/ood_algorithms/algorithms/EERM.py``) with its
      model ``EERMGCN`` (``GOOD/networks/models/EERM.py``) and the settings of
      GOODCora/degree/covariate (``configs/GOOD_configs/GOODCora/degree/covariate/
      EERM.yaml``: ``ood_param`` 3, ``extra_param`` = [K 10, T 1, 2 samples, lr 5e-3]).
      Training sees only the subgraph induced by the training nodes (``subgraph(
      train_mask, ...)``, relabelled; ``EERM.py`` lines 45-48), edited by the ``K`` = 10
      :class:`GoodGraphEditor` s, 2 directed flips per node (``num_edits``); in each of
      ``T`` = 1 rounds (``explorer_steps``) the risks ``R_k`` (cross-entropy over the
      training nodes) of all ``K`` edited graphs are computed once, ``Var, Mean =
      torch.var_mean(R)`` (the *unbiased* variance), the editors take one Adam step
      (lr 5e-3) on ``-Var.detach() * sum_k log p_k`` (no baseline; lines 52-66) and the
      model's loss is ``Var + beta_e Mean`` of those same risks, with ``beta_e`` =
      :func:`good_eerm_beta` (``beta`` = 3 at the first epoch to 30 at the last; algorithm
      ``EERM.py`` lines 90-93). GOOD optimises only the feature extractor (``stage_control``,
      lines 34-41, replaces the optimiser by ``Adam(model.gnn.parameters())``, the GNN
      without its classifier, at epoch 0): with ``freeze_head`` (default in this variant)
      :meth:`attach` marks the model's head as not trained, so it keeps its initial
      weights, as there. Prediction uses the whole graph (line 69). Needs
      ``TaskSpec.max_epochs`` (the engine sets it).
    """

    name = "eerm"
    levels = ("node",)
    tasks = ("multiclass", "binary", "regression")

    _DEFAULTS = {
        "ours-v1": {"num_envs": 3, "num_edits": 5, "beta": 1.0, "explorer_lr": 1e-2,
                    "explorer_steps": 1, "freeze_head": False},
        "good": {"num_envs": 10, "num_edits": 2, "beta": 3.0, "explorer_lr": 5e-3,
                 "explorer_steps": 1, "freeze_head": True},
    }

    def __init__(
        self,
        num_envs: int | None = None,
        num_edits: int | None = None,
        beta: float | None = None,
        explorer_lr: float | None = None,
        explorer_steps: int | None = None,
        variant: str = "ours-v1",
        freeze_head: bool | None = None,
    ) -> None:
        super().__init__()
        from gs_algos.methods.robust import check_variant

        self.variant = check_variant(variant)
        d = self._DEFAULTS[self.variant]
        num_envs = d["num_envs"] if num_envs is None else num_envs
        num_edits = d["num_edits"] if num_edits is None else num_edits
        beta = d["beta"] if beta is None else beta
        explorer_lr = d["explorer_lr"] if explorer_lr is None else explorer_lr
        explorer_steps = d["explorer_steps"] if explorer_steps is None else explorer_steps
        freeze_head = d["freeze_head"] if freeze_head is None else freeze_head
        if num_envs < 2:
            raise ValueError(f"num_envs must be >= 2 (a variance needs environments), got {num_envs}")
        if beta < 0:
            raise ValueError(f"beta must be >= 0, got {beta!r}")
        if int(explorer_steps) < 1:
            raise ValueError(f"explorer_steps must be >= 1, got {explorer_steps!r}")
        self.num_envs, self.num_edits = int(num_envs), int(num_edits)
        self.beta, self.explorer_lr = float(beta), float(explorer_lr)
        self.explorer_steps = int(explorer_steps)
        self.freeze_head = bool(freeze_head)
        self.explorers = nn.ModuleList()
        self.editor: GoodGraphEditor | None = None
        self.register_buffer("baseline", torch.zeros(()))
        self._opt: torch.optim.Optimizer | None = None
        self._num_nodes: int | None = None

    def setup_graph(self, num_nodes: int) -> None:
        """Create the explorers (``"good"``: the editors over ``num_nodes`` training nodes)
        for a graph of ``num_nodes`` nodes, on the method's device (that of its ``baseline``
        buffer, which the engine moves to the training device)."""
        self._num_nodes = int(num_nodes)
        dev = self.baseline.device
        if self.variant == "good":
            self.editor = GoodGraphEditor(self.num_envs, num_nodes, min(self.num_edits, num_nodes),
                                          device=dev)
            params = self.editor.parameters()
            self._opt = torch.optim.Adam(params, lr=self.explorer_lr)
            return
        self.explorers = nn.ModuleList(
            StructureExplorer(num_nodes, min(self.num_edits, num_nodes - 1), device=dev)
            for _ in range(self.num_envs)
        )
        # fused: one kernel per step over the K (n, n) logit matrices (the bulk of EERM's
        # parameters); same update as the default Adam
        self._opt = torch.optim.Adam(self.explorers.parameters(), lr=self.explorer_lr,
                                     fused=_fused_ok(self.explorers))

    def _check_graph(self, batch: Batch) -> None:
        """Create the explorers on the first graph; refuse a graph of another size."""
        n = batch.num_labeled if self.variant == "good" else batch.data.num_nodes
        if self._num_nodes != n:
            if self._num_nodes is not None:
                raise ValueError(
                    "EERM works on one full graph (full batch); got a graph of "
                    f"{n} nodes after one of {self._num_nodes}"
                )
            self.setup_graph(n)

    def optimizer_parameters(self):
        return []  # explorers are updated by their own (adversarial) optimiser

    def attach(self, model: nn.Module) -> None:
        if self.freeze_head:
            from gs_algos.batch import head_of

            for p in head_of(model).parameters():
                p.requires_grad_(False)

    def beta_at(self, epoch: int) -> float:
        """The weight of the mean risk at ``epoch`` (``"good"``: :func:`good_eerm_beta`)."""
        if self.variant == "good":
            return good_eerm_beta(self.beta, epoch, int(self.spec.max_epochs))
        return self.beta

    def env_risks(
        self, model: nn.Module, batch: Batch, grad_model: bool = True, with_log_prob: bool = True
    ) -> tuple[Tensor, Tensor | None]:
        """Risks of the model in ``K`` freshly sampled environments and their log-probs
        (``None`` with ``with_log_prob=False``)."""
        self._check_graph(batch)
        if self.variant == "good":
            return self._good_env_risks(model, batch, grad_model, with_log_prob)
        risks, logps = [], []
        for ex in self.explorers:
            ei, logp = ex(batch.data.edge_index, with_log_prob=with_log_prob)
            with torch.set_grad_enabled(grad_model and torch.is_grad_enabled()):
                _, out = call_model(model, "node", _with_edges(batch.data, ei))
            risks.append(item_losses(out[batch.labeled], batch.y, batch.task).mean())
            logps.append(logp)
        return torch.stack(risks), (torch.stack(logps) if with_log_prob else None)

    def _train_subgraph(self, batch: Batch):
        """GOOD: the subgraph induced by the training nodes, relabelled 0..n_train-1."""
        from torch_geometric.data import Data
        from torch_geometric.utils import subgraph

        data = batch.data
        ei, _ = subgraph(batch.labeled, data.edge_index, relabel_nodes=True,
                         num_nodes=int(data.num_nodes))
        return Data(x=data.x[batch.labeled], edge_index=ei, num_nodes=batch.num_labeled), ei

    def _good_env_risks(self, model, batch, grad_model, with_log_prob):
        sub, ei = self._train_subgraph(batch)
        risks, logps = [], []
        for k in range(self.num_envs):
            picks = self.editor.sample(k)
            edited = self.editor.edit(ei, picks)
            with torch.set_grad_enabled(grad_model and torch.is_grad_enabled()):
                _, out = call_model(model, "node", _with_edges(sub, edited))
            risks.append(item_losses(out, batch.y, batch.task).mean())
            if with_log_prob:
                logps.append(self.editor.log_prob(k, picks))
        return torch.stack(risks), (torch.stack(logps) if with_log_prob else None)

    def explore(self, model: nn.Module, batch: Batch) -> float:
        """One REINFORCE update of the explorers (``"ours-v1"``); returns the sampled risk
        variance.

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

    def _good_step(self, model, batch, epoch):
        """GOOD's ``EERMGCN.forward`` in training (``EERM.py`` lines 44-67) and the loss of
        ``EERM.loss_postprocess`` (algorithms ``EERM.py`` lines 90-96)."""
        self._check_graph(batch)
        for t in range(self.explorer_steps):
            last = t == self.explorer_steps - 1
            risks, logps = self._good_env_risks(model, batch, grad_model=last, with_log_prob=True)
            var, mean = torch.var_mean(risks)  # unbiased, as torch.var_mean there
            self._opt.zero_grad(set_to_none=True)
            (-(var.detach()) * logps.sum()).backward()
            self._opt.step()
        beta = self.beta_at(epoch)
        loss = var + beta * mean
        return loss, {"loss": float(mean.detach()), "variance": float(var.detach()),
                      "beta": beta}

    def training_loss(self, model, batch, epoch):
        if self.variant == "good":
            return self._good_step(model, batch, epoch)
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
        if self.variant == "good" and spec.max_epochs is None:
            raise ValueError(
                "EERM(variant='good') ramps beta over training and needs TaskSpec.max_epochs "
                "(fit_node sets it)"
            )

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
        key = prefix + ("editor.B" if self.variant == "good" else "explorers.0.logits")
        n = state_dict[key].size(-1) if key in state_dict else None
        if n is not None and self._num_nodes != n:
            self.setup_graph(n)
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
