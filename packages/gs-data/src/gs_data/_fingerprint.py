"""The one content fingerprint of gs (docs/architecture.md, "One of each"; numpy only).

:func:`fingerprint` hashes named fields, each an array (its dtype, shape and bytes), a
``scipy.sparse`` matrix (canonical CSR), ``None`` or a scalar / string. Everything above
gs-data that fingerprints content calls it: :func:`gs_data.data_fingerprint` (a PyG
``Data``), :func:`gs_data.synthetic.fingerprint`, gs-bench's dataset and split-picture keys.
gs-splits, the bottom layer, cannot import it and keeps ``CSRGraph.fingerprint`` for the
graph identity it writes into split files.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

__all__ = ["fingerprint"]


def _as_array(value: Any) -> np.ndarray:
    if type(value).__module__.split(".")[0] == "torch":  # duck typing: no torch import here
        value = value.detach().cpu().contiguous().numpy()
    return np.ascontiguousarray(np.asarray(value))


def fingerprint(
    fields: Mapping[str, Any] | Iterable[tuple[str, Any]], *, length: int | None = None
) -> str:
    """Hex SHA-256 of named fields, in the given order.

    Parameters
    ----------
    fields : mapping or iterable of (name, value)
        ``value`` is an array-like (numpy array, torch tensor, list): ``name``, dtype, shape
        and bytes are hashed; a ``scipy.sparse`` matrix: its canonical CSR arrays and shape;
        ``None``: only ``name`` and that it is absent; a ``str``, ``int``, ``float`` or
        ``bool``: ``name=value``. A name may repeat (e.g. the parts of a sparse tensor).
    length : int, optional
        Keep the first ``length`` hex digits (the full 64 by default).

    Notes
    -----
    Two inputs with equal fields give equal fingerprints on any machine; changing a value,
    a dtype, a shape, a name or the order changes it.

    Examples
    --------
    >>> fingerprint({"y": np.arange(3)}, length=12) == fingerprint([("y", [0, 1, 2])], length=12)
    True
    """
    items = fields.items() if isinstance(fields, Mapping) else fields
    h = hashlib.sha256()
    for name, value in items:
        if not isinstance(name, str):
            raise TypeError(f"fingerprint field names must be str, got {type(name).__name__}")
        if value is None:
            h.update(f"{name}:none|".encode())
        elif isinstance(value, (str, bool, int, float, np.integer, np.floating)):
            h.update(f"{name}={value}|".encode())
        elif type(value).__module__.startswith("scipy.sparse"):
            m = value.tocsr()
            m.sort_indices()
            h.update(f"{name}:csr{tuple(m.shape)}|".encode())
            for part in (m.indptr.astype(np.int64), m.indices.astype(np.int64), m.data):
                arr = _as_array(part)
                h.update(f"{arr.dtype}:{arr.shape}|".encode())
                h.update(arr.tobytes())
        else:
            arr = _as_array(value)
            if arr.dtype == object:
                raise TypeError(f"fingerprint field {name!r}: cannot hash an object array")
            h.update(f"{name}:{arr.dtype}:{arr.shape}|".encode())
            h.update(arr.tobytes())
    digest = h.hexdigest()
    return digest if length is None else digest[: int(length)]
