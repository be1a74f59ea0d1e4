"""Reading pickled data files without running code from them (numpy/stdlib only, no torch).

Unpickling calls whatever callable the file names, so a crafted data file runs its payload
the moment it is loaded. The formats gs reads that are pickles (Planetoid's ``ind.*`` files,
GeSS's raw Track files, the object arrays of the edgewise-calibration split files) hold only a
few numpy / scipy.sparse / pandas / builtin types. :func:`restricted_load` admits exactly the
names a format lists and refuses any other with :class:`UnsafePickleError`, one line naming
the file and the name it asked for. :func:`read_npz` reads an ``.npz`` archive, parsing object
arrays through the same restricted unpickler instead of ``np.load(allow_pickle=True)``.
"""

from __future__ import annotations

import importlib
import os
import pickle
import warnings
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

import numpy as np

from gs_data._io import CorruptRawFileError

__all__ = ["UnsafePickleError", "restricted_load", "read_npz", "NUMPY_ARRAY_GLOBALS"]

#: what numpy writes to pickle an ``ndarray`` (``numpy.core`` before numpy 2, ``numpy._core``
#: after; protocol 5 uses ``_frombuffer``)
NUMPY_ARRAY_GLOBALS = frozenset({
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.numeric", "_frombuffer"),
    ("numpy._core.numeric", "_frombuffer"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"),
    ("_codecs", "encode"),  # protocol-2 pickles write bytes as _codecs.encode(str, 'latin1')
})

# Python 2 module names in pickles written by Python 2 (the Planetoid files)
_PY2_MODULES = {"__builtin__": "builtins", "copy_reg": "copyreg"}


class UnsafePickleError(CorruptRawFileError):
    """A pickled data file names a callable its format never holds; it was not loaded."""


def _resolve(module: str, name: str) -> Any:
    """Import ``module.name``; numpy's ``core`` / ``_core`` and scipy's old sparse module
    paths are tried under both spellings (files written by other versions use either)."""
    candidates = [module]
    if module.startswith("numpy.core."):
        candidates.insert(0, "numpy._core." + module[len("numpy.core."):])
    elif module.startswith("numpy._core."):
        candidates.append("numpy.core." + module[len("numpy._core."):])
    elif module.startswith("scipy.sparse."):  # scipy.sparse.csr (old) / scipy.sparse._csr (new)
        candidates.insert(0, "scipy.sparse")
    last: Exception | None = None
    for mod in candidates:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                return getattr(importlib.import_module(mod), name)
        except (ImportError, AttributeError) as exc:
            last = exc
    raise ImportError(f"cannot import {module}.{name} ({last})")


class _Restricted(pickle.Unpickler):
    def __init__(self, fh: IO[bytes], allowed: frozenset[tuple[str, str]], path: str, what: str,
                 encoding: str) -> None:
        super().__init__(fh, encoding=encoding)
        self._allowed = allowed
        self._path = path
        self._what = what

    def find_class(self, module: str, name: str) -> Any:
        module = _PY2_MODULES.get(module, module)
        if (module, name) not in self._allowed:
            raise UnsafePickleError(
                f"{self._path}: refused to load this {self._what} file: it asks for "
                f"{module}.{name}, which the format never holds (a file crafted to run code when "
                "unpickled, or another format); nothing from it was run. Replace it with a good copy."
            )
        return _resolve(module, name)


def restricted_load(
    fh: IO[bytes],
    allowed: Iterable[tuple[str, str]],
    *,
    path: str | os.PathLike,
    what: str,
    encoding: str = "ASCII",
) -> Any:
    """Unpickle ``fh`` admitting only the globals ``allowed`` (``(module, name)`` pairs).

    Builtin containers and scalars (list, dict, tuple, str, bytes, int, float, bool, None)
    need no global and are always admitted. Python 2 module names (``__builtin__``,
    ``copy_reg``) count as their Python 3 names. Any other global raises
    :class:`UnsafePickleError` naming ``path``, before anything it names is called.
    """
    return _Restricted(fh, frozenset(allowed), str(path), what, encoding).load()


def _read_npy(fh: IO[bytes], path: str, member: str) -> np.ndarray:
    fmt = np.lib.format
    version = fmt.read_magic(fh)
    if version == (1, 0):
        shape, fortran, dtype = fmt.read_array_header_1_0(fh)
    elif version == (2, 0):
        shape, fortran, dtype = fmt.read_array_header_2_0(fh)
    else:
        raise ValueError(f"{member}: .npy format version {version} is not supported")
    if not dtype.hasobject:
        count = int(np.prod(shape, dtype=np.int64))
        data = fh.read(count * dtype.itemsize)
        if len(data) != count * dtype.itemsize:
            raise ValueError(f"{member}: truncated ({len(data)} of {count * dtype.itemsize} bytes)")
        arr = np.frombuffer(data, dtype=dtype, count=count)
        return arr.reshape(shape, order="F" if fortran else "C").copy()
    # object arrays are a pickle of the whole array (numpy.lib.format.write_array)
    arr = restricted_load(fh, NUMPY_ARRAY_GLOBALS, path=f"{path} ({member})", what="array",
                          encoding="latin1")
    if not isinstance(arr, np.ndarray):
        raise ValueError(f"{member}: holds a {type(arr).__name__}, not an array")
    return arr


def read_npz(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Every array of the ``.npz`` archive ``path``, without ``allow_pickle``.

    Arrays of plain dtypes are read from their raw bytes; object arrays (how ``np.savez``
    stores a list of unequal arrays) go through :func:`restricted_load` with only numpy's
    array-reconstruction globals, so their elements can be arrays, numbers, strings or
    containers of those, never anything that runs code. Raises :class:`UnsafePickleError`
    for a file that asks for anything else; other failures propagate for the caller to name
    the file.
    """
    path = Path(path)
    out: dict[str, np.ndarray] = {}
    with zipfile.ZipFile(path) as zf:
        for member in zf.namelist():
            key = member[:-4] if member.endswith(".npy") else member
            with zf.open(member) as fh:
                out[key] = _read_npy(fh, str(path), member)
    return out
