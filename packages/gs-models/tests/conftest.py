"""Fixtures for gs-models tests (tiny synthetic graphs and point clouds)."""

from __future__ import annotations

import pytest
import torch


def _two_community_graph(seed: int = 0, n: int = 40, f: int = 6):
    """Synthetic 2-class graph: class-dependent features, mostly intra-class edges."""
    gen = torch.Generator().manual_seed(seed)
    y = torch.arange(n) % 2
    x = torch.randn(n, f, generator=gen) + 1.5 * y.view(-1, 1).float()
    src, dst = [], []
    for i in range(n):
        for j in range(i + 1, n):
            p = 0.25 if y[i] == y[j] else 0.03
            if torch.rand(1, generator=gen).item() < p:
                src += [i, j]
                dst += [j, i]
    edge_index = torch.tensor([src, dst], dtype=torch.long)
    train_mask = torch.zeros(n, dtype=torch.bool)
    train_mask[: n // 2] = True
    return x, edge_index, y, train_mask


@pytest.fixture(scope="session", autouse=True)
def _single_thread():
    """Tiny tensors: one intra-op thread is much faster than two on a shared 2-core machine."""
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture
def tiny_graph():
    """(x (40, 6), edge_index, y (40,), train_mask): a synthetic two-community graph."""
    return _two_community_graph()


@pytest.fixture
def tiny_clouds():
    """(x, pos, batch, y): 8 synthetic clouds of 12 points; label = cloud is stretched along an axis."""
    gen = torch.Generator().manual_seed(1)
    xs, poss, batches, ys = [], [], [], []
    for b in range(8):
        pos = torch.randn(12, 3, generator=gen)
        label = b % 2
        if label:
            pos = pos * torch.tensor([3.0, 0.5, 0.5])
        poss.append(pos)
        xs.append(torch.ones(12, 1))
        batches.append(torch.full((12,), b))
        ys.append(label)
    return torch.cat(xs), torch.cat(poss), torch.cat(batches), torch.tensor(ys)


@pytest.fixture
def float64():
    """Run the test body with float64 as torch's default dtype (restored afterwards)."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)


@pytest.fixture
def backward_ops():
    """``backward_ops(t)``: the names of the autograd nodes behind ``t``. ``IndexBackward0``
    among them means a gather ``h[index]`` whose backward (``index_put_`` with accumulation)
    sums repeated rows in a thread-dependent order on a multi-threaded CPU."""
    def names(t: torch.Tensor) -> set[str]:
        seen, out, todo = set(), set(), [t.grad_fn]
        while todo:
            fn = todo.pop()
            if fn is None or fn in seen:
                continue
            seen.add(fn)
            out.add(type(fn).__name__)
            todo.extend(nxt for nxt, _ in fn.next_functions)
        return out

    return names


def _eval_loss_before_and_after(model, opt, loss_fn, steps: int) -> tuple[float, float]:
    model.eval()
    with torch.no_grad():
        before = float(loss_fn())
    for _ in range(steps):
        model.train()
        opt.zero_grad()
        loss_fn().backward()
        opt.step()
    # the batch norms' running statistics recomputed with the final weights (precise BN, as the
    # gs-algos engine's norm_stats_graphs): with momentum 0.1 they trail weights that still move,
    # and on 8 clouds the eval-mode loss then jumps between 1e-3 and 6 from one step to the next
    # depending on the thread count (it failed CI with one thread)
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if norms:
        momenta = [m.momentum for m in norms]
        for m in norms:
            m.reset_running_stats()
            m.momentum = None  # a cumulative average over the passes below: one pass here
        model.train()
        with torch.no_grad():
            loss_fn()
        for m, mom in zip(norms, momenta, strict=True):
            m.momentum = mom
    model.eval()
    with torch.no_grad():
        after = float(loss_fn())
    return before, after


@pytest.fixture
def train_steps():
    """``train_steps(model, opt, loss_fn, steps) -> (before, after)``: the eval-mode loss before
    and after ``steps`` training steps, the latter with batch-norm statistics recomputed from the
    final weights (the model is left in eval mode)."""
    return _eval_loss_before_and_after
