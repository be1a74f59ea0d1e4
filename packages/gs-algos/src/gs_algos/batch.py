"""What a method sees at one training step: :class:`TaskSpec` and :class:`Batch`.

The engine turns node-level graphs and graph-level (point-cloud) datasets into the same
small object, so that every method works at both levels where its idea applies:

* an *item* is a node (node level) or a graph (graph level);
* :meth:`Batch.forward` runs the model on the batch and returns one embedding row and one
  output row per item (the gs-models contract: node models ``forward(x, edge_index)``,
  point-cloud backbones ``forward(x, pos, batch)``, both returning
  ``(embeddings, outputs)``);
* ``labeled`` indexes the items that carry a training label (their labels are ``y``,
  their domains ``domain``), ``target`` the unlabeled target-domain items (O-Feature
  level / domain adaptation).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = ["TaskSpec", "Batch", "call_model", "item_losses", "head_of", "knn_kwargs"]


@dataclass(frozen=True)
class TaskSpec:
    """Static facts about the task, given to :meth:`gs_algos.methods.Method.setup`.

    Attributes
    ----------
    level
        ``"node"`` or ``"graph"``.
    task
        ``"multiclass"``, ``"binary"`` or ``"regression"``.
    num_outputs
        Model output width (number of classes for multiclass, 1 otherwise).
    embedding_dim
        Width of the model's embeddings (measured on the first batch).
    num_domains
        Number of distinct domain ids among labelled training items (0 if none given).
    has_target
        Whether unlabeled target-domain items are available (O-Feature level).
    feature_dim, pos_dim
        Width of the input features ``x`` and (graph level) of the coordinates ``pos``.
    max_epochs
        Number of training epochs of the run (``TrainConfig.max_epochs``; ``None`` when
        unknown), for methods whose weights follow a schedule over training (GOOD's DANN
        reversal coefficient, GOOD's EERM ``beta``).
    device
        The :class:`torch.device` the run trains on (``None``: the CPU), for methods that
        create tensors or modules during training (EERM's structure explorers).
    """

    level: str
    task: str
    num_outputs: int
    embedding_dim: int
    num_domains: int = 0
    has_target: bool = False
    feature_dim: int = 0
    pos_dim: int = 0
    max_epochs: int | None = None
    device: torch.device | None = None


def knn_kwargs(data: Any) -> dict[str, Tensor]:
    """``{"edge_index": data.knn_index}`` when the point clouds carry their coordinate kNN
    graph (built once, e.g. by gs-bench's gess runner; PyG batching offsets it like any
    ``*_index``), else ``{}``: the point-cloud backbone then builds it from ``pos``."""
    ei = getattr(data, "knn_index", None)
    return {"edge_index": ei} if ei is not None else {}


def call_model(model: nn.Module, level: str, data: Any, x: Tensor | None = None):
    """Run ``model`` following the gs-models contract; ``x`` overrides ``data.x``.

    Returns ``(embeddings, outputs)`` with one row per node (node level) or per graph
    (graph level). Graph level: a ``knn_index`` attribute of the data (the coordinate kNN
    graph, cached) is passed as ``edge_index`` (:func:`knn_kwargs`).
    """
    feats = data.x if x is None else x
    if level == "node":
        res = model(feats, data.edge_index)
    else:
        batch_vec = getattr(data, "batch", None)
        if batch_vec is None:
            batch_vec = torch.zeros(data.pos.size(0), dtype=torch.long, device=data.pos.device)
        res = model(feats, data.pos, batch_vec, **knn_kwargs(data))
    if not (isinstance(res, tuple) and len(res) == 2):
        raise TypeError(
            "model.forward must return a tuple (embeddings, outputs) as in the gs-models "
            f"contract, got {type(res).__name__}"
        )
    n_graphs = getattr(data, "num_graphs", None) if level != "node" else None
    if isinstance(n_graphs, int) and res[1].size(0) != n_graphs:
        # a point cloud without points has no entry in the batch vector; when it is the last
        # of a batch, the model returns one row too few and the labels would be misaligned
        raise ValueError(
            f"the model returned {res[1].size(0)} graph outputs for a batch of {n_graphs} graphs: "
            "a graph without points (e.g. an event without hits) cannot be batched; drop such "
            "graphs from the parts"
        )
    return res


def head_of(model: nn.Module) -> nn.Module:
    """The model's task head (maps embeddings to outputs), needed by representation Mixup.

    Looks for an attribute ``head`` (then ``classifier``, ``lin_out``).
    """
    if getattr(model, "_graph_head", False):
        raise TypeError(
            f"{type(model).__name__} has a message-passing output head (head='conv'); "
            "representation Mixup needs a head applied to embeddings alone (head='linear')"
        )
    for name in ("head", "classifier", "lin_out"):
        mod = getattr(model, name, None)
        if isinstance(mod, nn.Module):
            return mod
    raise TypeError(
        f"{type(model).__name__} has no task head attribute ('head', 'classifier' or "
        "'lin_out'): representation Mixup needs to apply the head to mixed embeddings"
    )


def item_losses(out: Tensor, y: Tensor, task: str) -> Tensor:
    """Per-item training loss (no reduction).

    multiclass: cross-entropy on logits; binary: BCE with logits (``out`` of width 1);
    regression: squared error (``out`` of width 1).
    """
    if task == "multiclass":
        return F.cross_entropy(out, y.long(), reduction="none")
    o = out.reshape(-1)
    if task == "binary":
        return F.binary_cross_entropy_with_logits(o, y.reshape(-1).float(), reduction="none")
    return (o - y.reshape(-1).float()) ** 2


@dataclass
class Batch:
    """One training step's data, the same shape at node and graph level.

    Attributes
    ----------
    level, task
        As in :class:`TaskSpec`.
    data
        The PyG ``Data`` (node level: the whole graph or a sampled subgraph) or ``Batch``
        (graph level) given to the model.
    labeled
        Long index of the labelled items among the forward pass's items.
    y
        Labels of the labelled items.
    domain
        Domain ids of the labelled items, or ``None``.
    target
        Node level: long index of unlabeled target items in the same forward pass, or
        ``None``.
    target_data
        Graph level: a separate batch of unlabeled target graphs, or ``None``.
    """

    level: str
    task: str
    data: Any
    labeled: Tensor
    y: Tensor
    domain: Tensor | None = None
    target: Tensor | None = None
    target_data: Any = None

    def forward(self, model: nn.Module, x: Tensor | None = None):
        """``(embeddings, outputs)`` of all items of the forward pass."""
        return call_model(model, self.level, self.data, x)

    def forward_target(self, model: nn.Module, emb: Tensor | None = None) -> Tensor | None:
        """Embeddings of the unlabeled target items (``None`` if there are none).

        Node level: rows of ``emb`` (the embeddings of the main forward pass); graph
        level: a second forward pass over ``target_data``.
        """
        if self.level == "node":
            if self.target is None or emb is None:
                return None
            return emb[self.target]
        if self.target_data is None:
            return None
        return call_model(model, "graph", self.target_data)[0]

    def losses(self, out_all: Tensor) -> Tensor:
        """Per-item losses of the labelled items given the outputs of all items."""
        return item_losses(out_all[self.labeled], self.y, self.task)

    @property
    def num_labeled(self) -> int:
        return int(self.labeled.numel())
