"""Mini-batch training with PyG's ``NeighborLoader`` semantics, with or without pyg-lib.

PyG's :class:`~torch_geometric.loader.NeighborLoader` needs ``pyg-lib`` or ``torch-sparse``
for its sampling kernels. :func:`neighbor_loader` returns that loader when one of them is
installed and otherwise a :class:`~torch_geometric.loader.NodeLoader` driven by
:class:`TorchNeighborSampler`, a pure-torch uniform neighbour sampler with the same output:
each mini-batch is a :class:`~torch_geometric.data.Data` whose first ``batch_size`` nodes are
the seed nodes, with ``n_id``, ``e_id``, ``input_id`` and ``batch_size`` attributes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import Tensor, nn
from torch_geometric.data import Data
from torch_geometric.loader import NeighborLoader, NodeLoader
from torch_geometric.sampler import BaseSampler, NodeSamplerInput, SamplerOutput

__all__ = ["TorchNeighborSampler", "has_native_sampler", "neighbor_loader", "predict_in_batches"]


def has_native_sampler() -> bool:
    """Whether PyG's native neighbour sampling (pyg-lib or torch-sparse) is available."""
    import torch_geometric.typing as t

    return bool(t.WITH_PYG_LIB or t.WITH_TORCH_SPARSE)


class TorchNeighborSampler(BaseSampler):
    """Uniform multi-hop neighbour sampling without replacement, in pure torch.

    Messages flow ``source -> target`` (``edge_index[0] -> edge_index[1]``): for every node
    of the current frontier, up to ``num_neighbors[hop]`` of its *incoming* edges are sampled
    (all of them for ``-1``). Nodes are relabelled in order of discovery (seeds first).

    Parameters
    ----------
    data : Data
        Homogeneous graph with ``edge_index`` and ``num_nodes``.
    num_neighbors : sequence of int
        Fan-out per hop, e.g. ``[15, 10]``.
    seed : int
        Seed of the sampler's own ``torch.Generator`` (the global RNG is not touched).
    """

    def __init__(self, data: Data, num_neighbors: Sequence[int], *, seed: int = 0) -> None:
        if not isinstance(data, Data) or data.edge_index is None:
            raise TypeError("data must be a torch_geometric.data.Data with an edge_index")
        if not num_neighbors or any(
            (not isinstance(k, int)) or k == 0 or k < -1 for k in num_neighbors
        ):
            raise ValueError(
                f"num_neighbors must be a non-empty list of ints >= 1 or -1 (all), got {num_neighbors!r}"
            )
        self.num_neighbors = list(num_neighbors)
        self.num_nodes = int(data.num_nodes)
        src, dst = data.edge_index[0].long().cpu(), data.edge_index[1].long().cpu()
        order = torch.argsort(dst, stable=True)
        self.col_src = src[order]  # sources of incoming edges, grouped by target
        self.col_eid = order  # original edge ids
        self.colptr = torch.zeros(self.num_nodes + 1, dtype=torch.long)
        self.colptr[1:] = torch.bincount(dst, minlength=self.num_nodes).cumsum(0)
        self.generator = torch.Generator().manual_seed(seed)

    def sample_from_nodes(self, index: NodeSamplerInput, **kwargs) -> SamplerOutput:
        seeds = index.node.long().cpu()
        if torch.unique(seeds).numel() != seeds.numel():
            raise ValueError("seed nodes of a mini-batch must be unique")
        g2l = torch.full((self.num_nodes,), -1, dtype=torch.long)
        g2l[seeds] = torch.arange(seeds.numel())
        node_chunks = [seeds]
        count = seeds.numel()
        frontier = seeds
        rows, cols, eids = [], [], []
        num_sampled_nodes, num_sampled_edges = [count], []
        for fanout in self.num_neighbors:
            start, end = self.colptr[frontier], self.colptr[frontier + 1]
            deg = end - start
            group_start = deg.cumsum(0) - deg
            owner = torch.repeat_interleave(torch.arange(frontier.numel()), deg)
            pos = (
                torch.arange(int(deg.sum()))
                - torch.repeat_interleave(group_start, deg)
                + start[owner]
            )
            if fanout >= 0:
                keys = torch.rand(pos.numel(), generator=self.generator)
                order = torch.argsort(keys)
                order = order[torch.argsort(owner[order], stable=True)]
                rank = torch.arange(order.numel()) - torch.repeat_interleave(group_start, deg)
                keep = order[rank < fanout]
                keep = keep[torch.argsort(owner[keep], stable=True)]
                owner, pos = owner[keep], pos[keep]
            sources = self.col_src[pos]
            cand = sources[g2l[sources] < 0]
            if cand.numel():
                uniq, inv = torch.unique(cand, return_inverse=True)
                first = torch.full((uniq.numel(),), cand.numel(), dtype=torch.long)
                first = first.scatter_reduce(0, inv, torch.arange(cand.numel()), reduce="amin")
                new = uniq[torch.argsort(first)]
            else:
                new = cand
            g2l[new] = torch.arange(count, count + new.numel())
            count += new.numel()
            node_chunks.append(new)
            rows.append(g2l[sources])
            cols.append(g2l[frontier[owner]])
            eids.append(self.col_eid[pos])
            num_sampled_nodes.append(new.numel())
            num_sampled_edges.append(sources.numel())
            frontier = new
            if frontier.numel() == 0:
                break
        return SamplerOutput(
            node=torch.cat(node_chunks),
            row=torch.cat(rows),
            col=torch.cat(cols),
            edge=torch.cat(eids),
            batch=None,
            num_sampled_nodes=num_sampled_nodes,
            num_sampled_edges=num_sampled_edges,
            metadata=(index.input_id, None),
        )

    def sample_from_edges(self, index, neg_sampling=None):  # pragma: no cover - not needed
        raise NotImplementedError("TorchNeighborSampler samples from nodes only (node-level tasks)")

    @property
    def edge_permutation(self) -> None:
        return None


def neighbor_loader(
    data: Data,
    num_neighbors: Sequence[int],
    *,
    batch_size: int,
    input_nodes: Tensor | None = None,
    shuffle: bool = False,
    seed: int = 0,
    force_torch: bool = False,
    **kwargs,
) -> NodeLoader:
    """A neighbour-sampling mini-batch loader (PyG's ``NeighborLoader`` when available).

    Parameters
    ----------
    data : Data
        The full graph (features ``x``, ``edge_index``, labels, masks, ...).
    num_neighbors : sequence of int
        Fan-out per hop (as many hops as message-passing layers), ``-1`` = all neighbours.
    batch_size : int
        Seed nodes per mini-batch.
    input_nodes : Tensor, optional
        Seed nodes (bool mask or indices); all nodes by default.
    shuffle : bool
        Shuffle seed nodes every epoch (with a generator seeded by ``seed``).
    seed : int
        Seeds the shuffling and the pure-torch sampler.
    force_torch : bool
        Use :class:`TorchNeighborSampler` even when pyg-lib / torch-sparse is installed.
    **kwargs
        Passed to the loader (e.g. ``num_workers``).

    Returns
    -------
    NodeLoader
        Iterating yields ``Data`` mini-batches; ``batch.x[:batch.batch_size]`` are the seeds,
        ``batch.n_id`` the global ids of the batch's nodes.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")
    gen = torch.Generator().manual_seed(seed)
    if has_native_sampler() and not force_torch:
        return NeighborLoader(
            data,
            list(num_neighbors),
            batch_size=batch_size,
            input_nodes=input_nodes,
            shuffle=shuffle,
            generator=gen,
            **kwargs,
        )
    sampler = TorchNeighborSampler(data, num_neighbors, seed=seed)
    return NodeLoader(
        data,
        node_sampler=sampler,
        input_nodes=input_nodes,
        batch_size=batch_size,
        shuffle=shuffle,
        generator=gen,
        **kwargs,
    )


@torch.no_grad()
def predict_in_batches(
    model: nn.Module, loader: NodeLoader, *, callback: Callable[[int, int], None] | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    """Run a node-level model over a loader and gather the seed nodes' outputs.

    Returns ``(node_ids, embeddings, logits)`` of the seed nodes in loader order.
    ``callback(batch_index, num_batches)`` is called after every batch.
    """
    model.eval()
    ids, embs, outs = [], [], []
    num = len(loader)
    for i, batch in enumerate(loader):
        emb, out = model(batch.x, batch.edge_index)
        bs = batch.batch_size
        ids.append(batch.n_id[:bs])
        embs.append(emb[:bs])
        outs.append(out[:bs])
        if callback is not None:
            callback(i, num)
    return torch.cat(ids), torch.cat(embs), torch.cat(outs)
