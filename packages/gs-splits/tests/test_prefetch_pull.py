"""The PageRank pull's software prefetch: a hint that never changes a bit.

``benchmarks/prefetch_pull.py`` times the package's pull against the same loop without the
prefetch; here it runs small (no timing asserted) and every variant must give the same sums.
The package's PageRank is checked against an independent float64 power iteration.
"""

from __future__ import annotations

import numpy as np
import pytest

import gs_splits as gs
from gs_splits import _kernels


@pytest.fixture(scope="module")
def bench(load_benchmark):
    return load_benchmark("prefetch_pull")


def test_every_prefetch_distance_gives_the_sums_of_the_plain_pull(bench, capsys):
    assert bench.main(["--synthetic", "20k:100k", "--entries", "60k", "--at", "0.2",
                       "--distances", "1,4,16,300", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    lines = [x for x in out.splitlines() if "same bits" in x]
    assert len(lines) == 5 and all(x.endswith("same bits: True") for x in lines), out


def test_bad_arguments_fail_in_one_line_with_exit_2(bench, capsys, tmp_path):
    for args, says in [(["--synthetic", "20k:x"], "'x' is not a count"),
                       (["--synthetic", "2k:10k", "--at", "1.5"], "--at 1.5"),
                       (["--synthetic", "2k:10k", "--distances", "0"], "positive whole numbers"),
                       (["--folder", str(tmp_path)], "no nptr.npy")]:
        assert bench.main(args) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("prefetch_pull: error:") and says in err, err


def test_the_prefetching_kernel_gives_pagerank_of_an_independent_power_iteration():
    rng = np.random.default_rng(3)
    n = 3000
    e = rng.zipf(1.9, size=(2, 40000)) % n  # hubs, repeated pairs and self-loops (dropped)
    g = gs.as_csr_graph(e, num_nodes=n)
    import scipy.sparse as sp

    a = sp.csr_matrix((np.ones(g.indices.size), g.indices, g.indptr), shape=(n, n))
    deg = np.asarray(a.sum(axis=1)).ravel()
    inv = np.divide(1.0, deg, out=np.zeros(n), where=deg > 0)
    x = np.full(n, 1.0 / n)
    for _ in range(500):  # eq. (1), damping 0.85, dangling mass spread uniformly
        x_new = 0.85 * (a @ (x * inv)) + (0.85 * x[deg == 0].sum() + 0.15) / n
        if np.abs(x_new - x).sum() < 1e-14:
            break
        x = x_new
    assert _kernels.PREFETCH_AHEAD >= 1
    np.testing.assert_allclose(gs.pagerank(g), x_new, rtol=1e-9, atol=1e-15)
