"""Out-of-core graphs: an on-disk CSR and the paper's properties computed over it.

A sub-package of its own so that ``import gs_splits`` (the in-memory API) loads none of it,
nor numba; ``import gs_splits.ondisk`` loads both modules and the compiled kernels:

* :mod:`gs_splits.ondisk.csr`: :func:`convert_edges` (an edge stream -> a CSR folder, by an
  external sort within a memory budget, resumable), :func:`open_ondisk` / :class:`OnDiskCSR`
  (the folder memory-mapped; :func:`gs_splits.as_csr_graph` accepts it), and the memory
  budget helpers :func:`parse_memory` / :func:`default_memory`;
* :mod:`gs_splits.ondisk.properties`: :func:`pagerank_ondisk`,
  :func:`personalized_pagerank_ondisk`, :func:`triangles_ondisk`,
  :func:`clustering_coefficient_ondisk` (bit for bit equal to the in-memory ones), the
  degree-ordered copy they stream (:func:`degree_ordered_ondisk`), and :func:`choose_path`,
  which :func:`gs_splits.structural_split` asks whether a graph is split in memory or on disk.

Up to gs-splits 0.1.0, ``OnDiskCSR``, ``convert_edges``, ``open_ondisk`` and the four
``*_ondisk`` properties were top-level names: ``gs_splits.X`` is now ``gs_splits.ondisk.X``;
the module ``gs_splits.ondisk`` (a file then) is ``gs_splits.ondisk.csr`` and
``gs_splits.outofcore`` is ``gs_splits.ondisk.properties``.
"""

from __future__ import annotations

from gs_splits.ondisk import csr, properties
from gs_splits.ondisk.csr import *  # noqa: F403  (its __all__: OnDiskCSR, convert_edges, ...)
from gs_splits.ondisk.properties import *  # noqa: F403  (its __all__: pagerank_ondisk, ...)

# the two modules' public names, each listed once, in its module (forms type checkers follow)
__all__: list[str] = []
__all__ += csr.__all__
__all__ += properties.__all__
