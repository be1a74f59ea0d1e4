"""Mini-batch training with PyG's ``NeighborLoader`` semantics, with or without pyg-lib.

PyG's :class:`~torch_geometric.loader.NeighborLoader` needs ``pyg-lib`` or ``torch-sparse``
for its sampling kernels. :func:`neighbor_loader` returns that loader when one of them is
installed and otherwise a :class:`~torch_geometric.loader.NodeLoader` driven by
:class:`TorchNeighborSampler`, a pure-torch uniform neighbour sampler with the same output:
each mini-batch is a :class:`~torch_geometric.data.Data` whose first ``batch_size`` nodes are
the seed nodes, with ``n_id``, ``e_id``, ``input_id`` and ``batch_size`` attributes.

:func:`sample_neighbors` is the one neighbour sampler of gs (issue 20): the loader's
:class:`TorchNeighborSampler` and gs-algos' mini-batch training (``gs_algos.sample_neighbors``
is this function) both draw with it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import torch
from torch import Tensor, nn
from torch_geometric.data import Data
from torch_geometric.loader import NeighborLoader, NodeLoader
from torch_geometric.sampler import BaseSampler, NodeSamplerInput, SamplerOutput

__all__ = [
    "TorchNeighborSampler",
    "has_native_sampler",
    "neighbor_loader",
    "predict_in_batches",
    "sample_neighbors",
]


def has_native_sampler() -> bool:
    """Whether PyG's native neighbour sampling (pyg-lib or torch-sparse) is available."""
    import torch_geometric.typing as t

    return bool(t.WITH_PYG_LIB or t.WITH_TORCH_SPARSE)


class _CSC(NamedTuple):
    """Incoming edges grouped by target: ``src[ptr[v]:ptr[v + 1]]`` are the sources of the
    edges into ``v``; ``eid`` their positions in the original ``edge_index``."""

    src: Tensor
    dst: Tensor
    eid: Tensor
    ptr: Tensor
    num_nodes: int


def _csc(edge_index: Tensor, num_nodes: int) -> _CSC:
    dev = edge_index.device
    src, dst = edge_index[0].long(), edge_index[1].long()
    order = torch.argsort(dst, stable=True)
    ptr = torch.zeros(num_nodes + 1, dtype=torch.long, device=dev)
    ptr[1:] = torch.cumsum(torch.bincount(dst, minlength=num_nodes), 0)
    return _CSC(src[order], dst[order], order, ptr, int(num_nodes))


class _Sample(NamedTuple):
    node: Tensor  # global ids, seeds first, then hop by hop (by id within a hop)
    row: Tensor  # sampled edges' sources, as positions in ``node``
    col: Tensor  # sampled edges' targets, as positions in ``node``
    edge: Tensor  # sampled edges' ids in the original ``edge_index``
    num_sampled_nodes: list[int]
    num_sampled_edges: list[int]


def _sample(g: _CSC, seeds: Tensor, num_neighbors: Sequence[int], generator: torch.Generator) -> _Sample:
    dev = g.ptr.device
    if generator.device.type != dev.type:
        raise ValueError(
            f"generator is on {generator.device} but edge_index on {dev}; create it with "
            f"torch.Generator(device=edge_index.device)"
        )
    seeds = seeds.to(dev)
    node_ids = [seeds]
    seen = torch.zeros(g.num_nodes, dtype=torch.bool, device=dev)
    seen[seeds] = True
    frontier = seeds
    kept: list[Tensor] = []
    num_nodes, num_edges = [int(seeds.numel())], []
    for k in num_neighbors:
        starts, ends = g.ptr[frontier], g.ptr[frontier + 1]
        deg = ends - starts
        if deg.sum() == 0:
            break
        rep = torch.repeat_interleave(torch.arange(frontier.numel(), device=dev), deg)
        offs = torch.arange(int(deg.sum()), device=dev) - torch.repeat_interleave(
            torch.cumsum(deg, 0) - deg, deg
        )
        eids = starts[rep] + offs
        if k >= 0:
            prio = torch.rand(eids.numel(), generator=generator, device=dev)
            # rank of each edge within its frontier node by random priority
            o = torch.argsort(prio)
            o = o[torch.argsort(rep[o], stable=True)]
            rank = torch.empty_like(o)
            rank[o] = torch.arange(o.numel(), device=dev) - torch.repeat_interleave(
                torch.cumsum(deg, 0) - deg, deg
            )
            eids = eids[rank < k]
        kept.append(eids)
        new = torch.unique(g.src[eids])
        new = new[~seen[new]]
        seen[new] = True
        node_ids.append(new)
        num_nodes.append(int(new.numel()))
        num_edges.append(int(eids.numel()))
        frontier = new
        if new.numel() == 0:
            break
    nodes = torch.cat(node_ids)
    pos = torch.full((g.num_nodes,), -1, dtype=torch.long, device=dev)
    pos[nodes] = torch.arange(nodes.numel(), device=dev)
    e = torch.cat(kept) if kept else torch.zeros(0, dtype=torch.long, device=dev)
    return _Sample(nodes, pos[g.src[e]], pos[g.dst[e]], g.eid[e], num_nodes, num_edges)


def sample_neighbors(
    edge_index: Tensor,
    num_nodes: int,
    seeds: Tensor,
    num_neighbors: Sequence[int],
    generator: torch.Generator,
) -> tuple[Tensor, Tensor, int]:
    """Uniform neighbour sampling (GraphSAGE style), pure torch: the one sampler of gs.

    Starting from ``seeds``, at each hop every frontier node keeps at most
    ``num_neighbors[hop]`` of its incoming edges (``-1`` keeps all), chosen uniformly
    with ``generator``. Returns ``(node_ids, sub_edge_index, n_seeds)``: the global ids of
    the sampled nodes (seeds first, then hop by hop), the sampled edges relabelled to
    positions in ``node_ids`` (hop by hop), and the number of seeds.

    Runs on the device of ``edge_index`` (``seeds`` and ``generator`` must be on it too), and
    every tensor it creates lives there.
    """
    s = _sample(_csc(edge_index, num_nodes), seeds, num_neighbors, generator)
    return s.node, torch.stack([s.row, s.col]), int(seeds.numel())


class TorchNeighborSampler(BaseSampler):
    """Uniform multi-hop neighbour sampling without replacement, in pure torch.

    Messages flow ``source -> target`` (``edge_index[0] -> edge_index[1]``): for every node
    of the current frontier, up to ``num_neighbors[hop]`` of its *incoming* edges are sampled
    (all of them for ``-1``) by :func:`sample_neighbors`' draw. Nodes are relabelled seeds
    first, then hop by hop (by node id within a hop).

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
        self._csc = _csc(data.edge_index.cpu(), self.num_nodes)
        self.generator = torch.Generator().manual_seed(seed)

    def sample_from_nodes(self, index: NodeSamplerInput, **kwargs) -> SamplerOutput:
        seeds = index.node.long().cpu()
        if torch.unique(seeds).numel() != seeds.numel():
            raise ValueError("seed nodes of a mini-batch must be unique")
        out = _sample(self._csc, seeds, self.num_neighbors, self.generator)
        return SamplerOutput(
            node=out.node,
            row=out.row,
            col=out.col,
            edge=out.edge,
            batch=None,
            num_sampled_nodes=out.num_sampled_nodes,
            num_sampled_edges=out.num_sampled_edges,
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
