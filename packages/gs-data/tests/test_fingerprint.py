"""gs_data.fingerprint: the one content fingerprint of gs (issue 20)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from gs_data import fingerprint


def test_fingerprint_sees_values_dtypes_shapes_names_and_order():
    a = np.arange(6, dtype=np.int64)
    base = fingerprint({"a": a, "n": 6})
    assert base == fingerprint([("a", a.copy()), ("n", 6)])
    assert len(base) == 64 and fingerprint({"a": a, "n": 6}, length=16) == base[:16]
    changed = [
        {"a": a + 1, "n": 6},  # a value
        {"a": a.astype(np.int32), "n": 6},  # a dtype
        {"a": a.reshape(2, 3), "n": 6},  # a shape
        {"b": a, "n": 6},  # a name
        {"n": 6, "a": a},  # the order
        {"a": a, "n": 7},  # a scalar
        {"a": None, "n": 6},  # absent
    ]
    assert len({base, *(fingerprint(f) for f in changed)}) == len(changed) + 1


def test_sparse_is_hashed_canonically_and_torch_by_duck_typing():
    m = sp.random(20, 30, density=0.1, random_state=0, format="coo")
    assert fingerprint({"x": m}) == fingerprint({"x": m.tocsr()}) == fingerprint({"x": m.tocsc()})
    assert fingerprint({"x": m}) != fingerprint({"x": m.toarray()})
    torch = pytest.importorskip("torch")
    t = torch.arange(5)
    assert fingerprint({"y": t}) == fingerprint({"y": np.arange(5)})
    with pytest.raises(TypeError, match="object array"):
        fingerprint({"z": np.array([object()])})
