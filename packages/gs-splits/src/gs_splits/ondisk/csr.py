"""On-disk symmetric CSR for graphs larger than memory (issue 32, first slice).

:func:`convert_edges` turns an edge stream into the CSR of the undirected simple graph that
:func:`gs_splits.as_csr_graph` would build in memory, bit for bit (``indptr``, ``indices`` and
every entry of ``stats``), written to a folder::

    OUT/indptr.npy    int64, num_nodes + 1 entries   (numpy .npy: np.load(mmap_mode="r") works)
    OUT/indices.npy   int32 (int64 from 2**31 nodes), 2 * num_edges entries, rows sorted
    OUT/meta.json     num_nodes, stats, dtypes, checksum, format version, the input's identity

:func:`open_ondisk` memory-maps it as an :class:`OnDiskCSR`; ``as_csr_graph`` accepts that (a
:class:`~gs_splits.CSRGraph` over the mapped arrays), so the in-memory kernels run on it.

Inputs (the edge stream; nothing is read whole into memory):

* ``.npy``: an array ``(2, E)`` or ``(E, 2)`` of integer ids (any integer dtype, or floats
  holding integers), C or Fortran order;
* ``.npz``: array ``edge_index`` or ``edges`` as above, optional ``num_nodes`` (as
  :func:`gs_splits.io.load_graph`); compressed members are streamed;
* a raw binary file of int32 or int64 ids, layout ``(2, E)`` (all sources, then all
  destinations) unless said otherwise: recognised by a sidecar ``<file>.json``
  (``{"format": "gs-splits raw edges", "dtype": "int32", "layout": "2xE", "num_edges": E,
  "num_nodes": n}``, written by ``benchmarks/synthetic_papers100m.py``) or by giving
  ``dtype``; a ``.bin`` file with neither is refused;
* anything else: a text edge list with the rules of :func:`gs_splits.io.read_edge_list`
  (``#`` comments, comma or whitespace separated, extra columns ignored, same columns on
  every line; ids are ASCII digits, optionally with a ``+``).

Node ids must be below ``2**31`` (and below ``num_nodes`` when it is given); ``num_nodes``
defaults to the largest id + 1, and is at most ``2**31``.

How (an external sort): each chunk of edges, sized by the memory budget, becomes sorted *run*
files of packed keys (``row << 32 | col << 1 | tag``, both directions of every non-loop edge,
the tag saying which direction was given; see :mod:`gs_splits._kernels`); a numba k-way merge
(with intermediate passes when there are more runs than a merge can hold buffers for) keeps
the first key of each (row, col) pair and streams ``indices`` and ``indptr`` to disk. Self-loops,
duplicates and pairs given in one direction are counted exactly as ``as_csr_graph`` counts
them. Memory: about ``memory`` bytes of arrays (the process itself adds about 0.2 GB); files
are written and read with buffered I/O, never memory-mapped, so page cache is not resident
memory. Disk: the run files take 16 bytes per input edge (less with duplicates), deleted at
the end.

Resuming: every finished run and every merge checkpoint is recorded atomically in
``OUT/.partial/state.json``; calling :func:`convert_edges` again after an interruption (Ctrl-C,
``kill -9``) picks up after the last record and gives the same files and checksum. The state
records the input's path, size and modification time and the options: a changed input or
other options with an existing folder is refused (``restart=True`` starts over), never mixed.
A finished folder for the same input is returned as it is. Work survives a killed process;
after a power loss, restart (data are not fsync'ed at each checkpoint).

The checksum in ``meta.json`` is :meth:`gs_splits.CSRGraph.fingerprint` of the graph (SHA-256 of
the node count and the arrays as int64), so an on-disk graph and the same graph built in
memory give the same ``graph_fingerprint``.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import shutil
import threading
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gs_splits import _kernels
from gs_splits.__about__ import __version__
from gs_splits._atomic import atomic_write
from gs_splits.graph import CSRGraph, fingerprint_arrays

__all__ = ["OnDiskCSR", "convert_edges", "open_ondisk", "parse_memory", "default_memory"]

log = logging.getLogger(__name__)

FORMAT = "gs-splits on-disk CSR"
FORMAT_VERSION = 1
RAW_FORMAT = "gs-splits raw edges"
#: node ids (and num_nodes - 1) must be below this: a key packs row and column in 31 bits each
MAX_NODES = 2**31
#: the smallest memory budget accepted (below it the conversion would only thrash)
MIN_MEMORY = 64 * 1024
_PARTIAL = ".partial"
_STATE = "state.json"
_META = "meta.json"
_OUTPUTS = ("indptr.npy", "indices.npy")
#: What gs_splits.ondisk.properties derives next to the CSR (its degree-ordered copy): part of the
#: folder, removed with the CSR it was derived from.
_DERIVED = "degree_ordered"  # and its partial folders, degree_ordered.partial-<pid>
#: fewest keys per merge buffer (sets the fan-in of a merge for a budget); tests lower it
_MIN_MERGE_BUF = 1 << 16
#: fewest keys of a chunk sorted in parallel parts (one run per part); tests lower it
_PARALLEL_SORT_MIN = 1 << 21
#: most runs merged at once
_MAX_FANIN = 64
#: largest merge buffer / output block, in keys
_MAX_MERGE_BUF = 1 << 25
#: environment variable of the test hook: stop (sleep) at a named point, see _pause_point
PAUSE_ENV = "GS_SPLITS_CONVERT_PAUSE"

Progress = Callable[[str, int, int], None]


# --------------------------------------------------------------------------- memory budget
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def parse_memory(value: int | float | str) -> int:
    """Bytes from a memory budget: an integer number of bytes or a string such as ``"16G"``,
    ``"512M"``, ``"1.5GiB"`` (K / M / G / T are powers of 1024; ``B`` / ``iB`` optional)."""
    if isinstance(value, bool):
        raise ValueError(f"memory: expected bytes or a size such as '16G', got {value!r}")
    if isinstance(value, (int, np.integer, float)):
        nbytes = int(value)
    else:
        m = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([kKmMgGtT]?)(?:i?[bB])?\s*", str(value))
        if not m:
            raise ValueError(
                f"memory: expected bytes or a size such as '16G', '512M', '1.5GiB', got {value!r}"
            )
        nbytes = int(float(m.group(1)) * _UNITS[m.group(2).upper()])
    if nbytes < MIN_MEMORY:
        raise ValueError(f"memory: {value!r} is below the smallest budget, {MIN_MEMORY // 1024}K")
    return nbytes


def default_memory() -> int:
    """The default budget: 60 % of the machine's RAM (``/proc/meminfo`` MemTotal, else
    ``os.sysconf``; 4 GiB when neither says), or of this process's address-space limit
    (``ulimit -v``, ``RLIMIT_AS``) where that is lower (issue 56: under ``ulimit -v 3000000``
    the conversion of a 40-node graph asked for a 14 GiB buffer and died in a traceback)."""
    total = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    total = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        total = None
    if total is None:
        try:
            total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            total = 4 * 2**30 / 0.6
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY and soft > 0:
            total = min(total, soft)
    except (ImportError, OSError, ValueError):
        pass
    return max(MIN_MEMORY, int(total * 0.6))


def _cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


# --------------------------------------------------------------------------- inputs
def _read_exact(f, view: np.ndarray) -> None:
    """Fill ``view`` (a uint8 array) from ``f``; a short file is an error."""
    mv = memoryview(view)
    got = 0
    while got < mv.nbytes:
        k = f.readinto(mv[got:])
        if not k:
            raise ValueError("the file ended early (truncated?)")
        got += k


@dataclass
class _Block:
    """Edges read from a source: ids ``u``, ``v`` (the edges from the cursor it was read at);
    ``after``: the cursor after them; ``done``: the progress position after them.

    A cursor is a dict: ``input_edges`` (edges read before it) and, for text, ``text`` (byte
    position, lines consumed, comma mode, column count); the state records the cursor after
    each finished chunk.
    """

    u: np.ndarray
    v: np.ndarray
    after: dict
    done: int


class _ArraySource:
    """Edges stored as an array: ``.npy``, a ``.npz`` member, or a raw binary file.

    ``layout`` is ``"planes"`` (all sources, then all destinations) or ``"pairs"`` (u, v
    interleaved); ``open_stream(offset)`` gives a binary file positioned at ``offset`` bytes of
    the array data.
    """

    def __init__(self, path: Path, kind: str, dtype: np.dtype, layout: str, num_edges: int,
                 open_stream: Callable[[int], Any], num_nodes: int | None, describe: dict):
        self.path = path
        self.kind = kind
        self.dtype = np.dtype(dtype)
        self.layout = layout
        self.num_edges = int(num_edges)
        self._open = open_stream
        self.num_nodes = num_nodes
        self.describe = describe
        self._streams: list[Any] = []
        self._pos: list[int] = []

    def total(self) -> int:
        return self.num_edges

    def close(self) -> None:
        for s in self._streams:
            if s is not None:
                s.close()
        self._streams = []
        self._pos = []

    def start(self, state: dict, partial: Path, budget: int) -> int:
        """Allocate the read buffer (at most 1/8 of the budget, 4M edges); returns its bytes."""
        native = self.dtype in (np.dtype(np.int32), np.dtype(np.int64))
        per_edge = 2 * self.dtype.itemsize + (0 if native else 16)  # raw ids, their int64 copy
        self._sub = int(max(256, min(1 << 22, budget // 8 // per_edge)))
        self._buf = np.empty(2 * self._sub, self.dtype)
        return self._sub * per_edge

    def next_block(self, cursor: dict, capacity: int) -> _Block | None:
        """At most ``capacity`` edges from ``cursor`` on, or None at the end."""
        first = cursor["input_edges"]
        if first >= self.num_edges:
            return None
        count = min(self._sub, capacity, self.num_edges - first)
        u, v = _as_ids(*self.read(first, count, self._buf), self, first)
        return _Block(u, v, {"input_edges": first + count}, first + count)

    def line_of(self, cursor: dict, k: int) -> None:
        return None

    def _stream(self, i: int, offset: int):
        """Stream ``i`` positioned at ``offset`` bytes of the data (reopened to move it: reads
        are sequential, so that happens only when a conversion resumes)."""
        while len(self._streams) <= i:
            self._streams.append(None)
            self._pos.append(-1)
        if self._streams[i] is not None and self._pos[i] != offset:
            self._streams[i].close()
            self._streams[i] = None
        if self._streams[i] is None:
            self._streams[i] = self._open(offset)
            self._pos[i] = offset
        return self._streams[i]

    def read(self, start: int, count: int, buf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Edges ``start .. start + count`` as two arrays (views into ``buf``, ``2 * count``
        elements of ``self.dtype``)."""
        isz = self.dtype.itemsize
        raw = buf[: 2 * count]
        if self.layout == "planes":
            for plane in (0, 1):
                off = (plane * self.num_edges + start) * isz
                s = self._stream(plane, off)
                _read_exact(s, raw[plane * count:(plane + 1) * count].view(np.uint8))
                self._pos[plane] = off + count * isz
            return raw[:count], raw[count:]
        off = 2 * start * isz
        s = self._stream(0, off)
        _read_exact(s, raw.view(np.uint8))
        self._pos[0] = off + 2 * count * isz
        return raw[0::2], raw[1::2]


def _plain_opener(path: Path, data_offset: int):
    def open_stream(offset: int):
        f = open(path, "rb", buffering=0)  # noqa: SIM115 - closed by _ArraySource.close
        f.seek(data_offset + offset)
        return f

    return open_stream


def _npy_layout(p: Path, shape: tuple, fortran: bool, dtype: np.dtype, what: str) -> tuple[str, int]:
    """``(layout, E)`` of a ``.npy`` edge array, or a ValueError saying what is accepted."""
    if len(shape) != 2 or 2 not in shape:
        raise ValueError(f"{p}: {what} must be an edge array of shape (2, E) or (E, 2), got shape {shape}")
    if dtype.kind not in "iuf":  # bool is kind "b"
        raise ValueError(f"{p}: node ids must be integers, got an array of dtype {dtype}")
    two_by_e = shape[0] == 2
    num_edges = shape[1] if two_by_e else shape[0]
    # (2, E) in C order and (E, 2) in Fortran order store all sources first
    layout = "planes" if two_by_e != fortran else "pairs"
    return layout, int(num_edges)


def _read_npy_header(f) -> tuple[tuple, bool, np.dtype]:
    fmt = np.lib.format
    version = fmt.read_magic(f)
    if version == (1, 0):
        return fmt.read_array_header_1_0(f)
    return fmt.read_array_header_2_0(f)


def _npy_source(p: Path) -> _ArraySource:
    with open(p, "rb") as f:
        try:
            shape, fortran, dtype = _read_npy_header(f)
        except Exception as exc:  # noqa: BLE001 - any header failure names the file
            raise ValueError(f"{p}: not a readable .npy array ({' '.join(str(exc).split())[:160]})") from None
        offset = f.tell()
    layout, num_edges = _npy_layout(p, shape, fortran, dtype, "the array")
    need = offset + 2 * num_edges * dtype.itemsize
    if p.stat().st_size < need:
        raise ValueError(f"{p}: truncated .npy file ({p.stat().st_size} bytes, its header says {need})")
    return _ArraySource(p, "npy", dtype, layout, num_edges, _plain_opener(p, offset), None,
                        {"shape": list(shape), "dtype": dtype.str, "fortran_order": bool(fortran)})


def _npz_source(p: Path) -> _ArraySource:
    try:
        z = zipfile.ZipFile(p)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ValueError(f"{p}: not a readable .npz file ({exc})") from None
    with z:
        names = {n[:-4]: n for n in z.namelist() if n.endswith(".npy")}
        if {"indptr", "indices", "shape"} <= set(names) or {"row", "col", "shape"} <= set(names):
            raise ValueError(
                f"{p}: holds a scipy.sparse adjacency; the on-disk conversion reads edge streams "
                "(arrays 'edge_index' or 'edges' (2, E), .npy, raw binary or text): save its "
                "edges, or use gs-splits make, which reads adjacencies in memory"
            )
        key = next((k for k in ("edge_index", "edges") if k in names), None)
        if key is None:
            raise ValueError(f"{p}: expected arrays 'edge_index' or 'edges' (2, E); found {sorted(names)}")
        num_nodes = None
        if "num_nodes" in names:
            with z.open(names["num_nodes"]) as f:
                nn = np.lib.format.read_array(f, allow_pickle=False)
            if nn.size != 1 or nn.dtype.kind not in "iu" or int(nn.ravel()[0]) < 1:
                raise ValueError(f"{p}: 'num_nodes' must be one positive integer, got {nn.ravel()[:3]}")
            num_nodes = int(nn.ravel()[0])
        info = z.getinfo(names[key])
        with z.open(info) as f:
            shape, fortran, dtype = _read_npy_header(f)
            header_len = f.tell()
    layout, num_edges = _npy_layout(p, shape, fortran, dtype, f"'{key}'")
    describe = {"member": key, "shape": list(shape), "dtype": dtype.str, "fortran_order": bool(fortran),
                "compressed": info.compress_type != zipfile.ZIP_STORED}
    if info.compress_type == zipfile.ZIP_STORED:
        # a stored member is a plain byte range of the file: read it directly
        with open(p, "rb") as f:
            f.seek(info.header_offset)
            local = f.read(30)
            name_len, extra_len = int.from_bytes(local[26:28], "little"), int.from_bytes(local[28:30], "little")
        offset = info.header_offset + 30 + name_len + extra_len + header_len
        return _ArraySource(p, "npz", dtype, layout, num_edges, _plain_opener(p, offset), num_nodes, describe)

    def open_member(offset: int):
        zf = zipfile.ZipFile(p)
        s = zf.open(names[key])
        s.seek(header_len + offset)  # forward: decompresses and drops what comes before
        return _ZipStream(zf, s)

    return _ArraySource(p, "npz", dtype, layout, num_edges, open_member, num_nodes, describe)


class _ZipStream:
    """A compressed ``.npz`` member opened for sequential reading (seek forward decompresses)."""

    def __init__(self, zf: zipfile.ZipFile, stream):
        self._zf = zf
        self._s = stream

    def readinto(self, b) -> int:
        return self._s.readinto(b)

    def close(self) -> None:
        self._s.close()
        self._zf.close()


def _raw_source(p: Path, dtype: str | None) -> _ArraySource:
    side = p.with_name(p.name + ".json")
    layout = "planes"
    num_nodes = None
    num_edges = None
    sidecar = None
    if side.is_file():
        try:
            sidecar = json.loads(side.read_text())
            if not isinstance(sidecar, dict):
                raise ValueError("not a JSON object")
        except (ValueError, RecursionError) as exc:  # RecursionError: crafted deep nesting (issue 56)
            raise ValueError(f"{side}: not a readable sidecar of a raw edge file ({exc})") from None
        if sidecar.get("format") != RAW_FORMAT:
            raise ValueError(f"{side}: 'format' must be {RAW_FORMAT!r}, got {sidecar.get('format')!r}")
        side_dtype = sidecar.get("dtype")
        if side_dtype not in ("int32", "int64"):
            raise ValueError(f"{side}: 'dtype' must be 'int32' or 'int64', got {side_dtype!r}")
        if dtype is not None and str(np.dtype(dtype)) != side_dtype:
            raise ValueError(f"{p}: dtype {dtype} disagrees with its sidecar {side.name} ({side_dtype})")
        dtype = side_dtype
        lay = sidecar.get("layout", "2xE")
        if lay not in ("2xE", "Ex2"):
            raise ValueError(f"{side}: 'layout' must be '2xE' (all sources, then all destinations) or 'Ex2' (pairs), got {lay!r}")
        layout = "planes" if lay == "2xE" else "pairs"
        num_edges = sidecar.get("num_edges")
        num_nodes = sidecar.get("num_nodes")
        if num_nodes is not None and (not isinstance(num_nodes, int) or num_nodes < 1):
            raise ValueError(f"{side}: 'num_nodes' must be a positive integer, got {num_nodes!r}")
    if dtype is None:
        raise ValueError(
            f"{p}: a raw binary edge file needs its id type: give dtype 'int32' or 'int64' "
            f"(gs-splits convert --dtype), or a sidecar {side.name} (written by the generator)"
        )
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt is None or dt not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise ValueError(f"{p}: dtype must be 'int32' or 'int64' for a raw binary edge file, got {dtype!r}")
    size = p.stat().st_size
    if size % (2 * dt.itemsize):
        raise ValueError(
            f"{p}: {size} bytes is not a whole number of {dt} (u, v) pairs; a raw edge file holds "
            f"2 * E {dt} values"
        )
    if num_edges is not None and (not isinstance(num_edges, int) or 2 * num_edges * dt.itemsize != size):
        raise ValueError(f"{p}: its sidecar says {num_edges} edges but the file holds {size // (2 * dt.itemsize)} {dt} pairs")
    num_edges = size // (2 * dt.itemsize)
    return _ArraySource(p, "raw", dt.newbyteorder("<"), layout, num_edges, _plain_opener(p, 0), num_nodes,
                        {"dtype": str(dt), "layout": "2xE" if layout == "planes" else "Ex2", "sidecar": sidecar})


class _TextSource:
    """A text edge list read block by block (rules of :func:`gs_splits.io.read_edge_list`)."""

    kind = "text"
    num_nodes = None

    def __init__(self, path: Path):
        self.path = path
        self.size = path.stat().st_size
        self.describe: dict = {}
        self._f = None
        self._warned = False

    def total(self) -> int:
        return self.size

    def close(self) -> None:
        if self._f is not None:
            self._f.close()
            self._f = None

    def scan_commas(self, block: int) -> bool:
        """Whether the file is comma separated (a comma outside comments anywhere)."""
        in_comment = False
        with open(self.path, "rb") as f:
            while True:
                data = f.read(block)
                if not data:
                    return False
                found, in_comment = _kernels.text_has_comma(np.frombuffer(data, np.uint8), in_comment)
                if found:
                    return True

    def start(self, state: dict, partial: Path, budget: int) -> int:
        """Allocate the id arrays (at most 4M edges) and the text block (each at most 1/16 of
        the budget); finds (once) whether the file is comma separated. Returns their bytes."""
        sub = int(max(256, min(1 << 22, budget // 16 // 16)))
        self._block = int(max(4096, min(64 << 20, budget // 16)))
        self._src = np.empty(sub, np.int64)
        self._dst = np.empty(sub, np.int64)
        tx = state.setdefault("text", {"pos": 0, "line": 0, "comma": None, "ncols": 0})
        if tx["comma"] is None:
            tx["comma"] = self.scan_commas(self._block)
            _save_state(partial, state)
        return 16 * sub + 2 * self._block  # a block and its cut copy

    def next_block(self, cursor: dict, capacity: int) -> _Block | None:
        """The edges of the lines from ``cursor`` on (at most ``capacity``), or None at the end."""
        tx = cursor["text"]
        if tx["pos"] >= self.size:
            if cursor["input_edges"] == 0 and tx["ncols"] == 0:
                raise ValueError(f"{self.path}: the edge list is empty (no lines with 'u v')")
            return None
        cap = min(capacity, self._src.size)
        got, used, lines, ncols = self._parse(tx, self._src[:cap], self._dst[:cap])
        if ncols > 2 and not self._warned:
            log.warning("%s: ignored %d extra column(s) after 'u v' on every line (weights / "
                        "timestamps are not used by the splits)", self.path, ncols - 2)
            self._warned = True
        after = {"input_edges": cursor["input_edges"] + got,
                 "text": {**tx, "pos": tx["pos"] + used, "line": tx["line"] + lines, "ncols": ncols}}
        return _Block(self._src[:got], self._dst[:got], after, tx["pos"] + used)

    def line_of(self, cursor: dict, k: int) -> int:
        """Line number of edge ``k`` of the block read at ``cursor``."""
        _, _, lines, _ = self._parse(cursor["text"], np.empty(k + 1, np.int64), np.empty(k + 1, np.int64))
        return cursor["text"]["line"] + lines

    def _parse(self, tx: dict, src: np.ndarray, dst: np.ndarray) -> tuple[int, int, int, int]:
        """Parse edges from ``tx``'s byte position until ``src`` is full or the file ends;
        returns ``(edges, bytes consumed, lines consumed, ncols)``."""
        if self._f is None:
            self._f = open(self.path, "rb")  # noqa: SIM115 - closed by close()
        f = self._f
        pos = tx["pos"]
        ncols = tx["ncols"]
        block = self._block
        e = 0
        lines = 0
        while e < src.size and pos < self.size:
            f.seek(pos)
            data = f.read(block)
            at_end = pos + len(data) >= self.size
            cut = data.rfind(b"\n")
            if not at_end:
                if cut < 0:  # a line longer than the block: read more at once
                    block *= 2
                    continue
                data = data[: cut + 1]
            elif not data.endswith(b"\n"):
                data += b"\n"
            buf = np.frombuffer(data, np.uint8)
            used, got, nlines, ncols, err, a, b, nf = _kernels.parse_edge_text(buf, tx["comma"], ncols, src[e:], dst[e:])
            e += got
            if err:
                line = tx["line"] + lines + nlines
                text = bytes(buf[a:b]).decode("utf-8", "replace")
                if err == 1:
                    raise ValueError(f"{self.path}: line {line}: each line needs two node ids 'u v', got {text!r}")
                if err == 2:
                    raise ValueError(f"{self.path}: line {line} has {nf} column(s), the first data line has {ncols}; "
                                     "every line needs the same columns (u v [extra ...])")
                if err == 4:
                    raise ValueError(f"{self.path}: line {line}: node id {text!r} is too large (at most 18 digits: "
                                     "ids below 10**18, within int64)")
                raise ValueError(f"{self.path}: line {line}: node id {text!r} is not a non-negative integer "
                                 "(ASCII digits 0-9 only)")
            lines += nlines
            pos = min(pos + used, self.size)
            if used < buf.size:  # src is full
                break
        return e, pos - tx["pos"], lines, ncols


def _open_source(p: Path, dtype: str | None):
    if not p.exists():
        raise FileNotFoundError(f"edge file not found: {p}")
    if p.is_dir():
        raise ValueError(f"{p}: is a folder, not an edge file")
    from gs_splits.io import check_regular_file

    check_regular_file(p, "an edge file")
    suffix = p.suffix.lower()
    if suffix in (".npy", ".npz"):
        if dtype is not None:
            raise ValueError(f"{p}: dtype applies to raw binary edge files only; a {suffix} file records its dtype")
        return _npy_source(p) if suffix == ".npy" else _npz_source(p)
    if dtype is not None or p.with_name(p.name + ".json").is_file() or suffix == ".bin":
        return _raw_source(p, dtype)
    return _TextSource(p)


# --------------------------------------------------------------------------- result
@dataclass(frozen=True, eq=False)
class OnDiskCSR:
    """A finished on-disk CSR folder (see the module docstring), memory-mapped on demand.

    ``indptr`` / ``indices`` are read-only ``numpy.memmap`` views; :meth:`to_csr_graph` gives a
    :class:`~gs_splits.CSRGraph` over them (``as_csr_graph`` does the same), so everything that
    takes a graph runs on it, paging the arrays in as it reads them.
    """

    path: Path
    num_nodes: int
    stats: dict
    checksum: str
    meta: dict = field(repr=False)

    @property
    def num_edges(self) -> int:
        """Number of undirected edges."""
        return int(self.stats["num_edges"])

    @property
    def indptr(self) -> np.ndarray:
        """Row pointers (int64, ``num_nodes + 1``), memory-mapped read-only."""
        return np.load(self.path / "indptr.npy", mmap_mode="r")

    @property
    def indices(self) -> np.ndarray:
        """Column indices (int32 below 2**31 nodes), memory-mapped read-only."""
        return np.load(self.path / "indices.npy", mmap_mode="r")

    def to_csr_graph(self) -> CSRGraph:
        """A :class:`~gs_splits.CSRGraph` over the memory-mapped arrays (same stats)."""
        return CSRGraph(self.indptr, self.indices, self.num_nodes, dict(self.stats))

    def verify(self, block: int = 1 << 24) -> bool:
        """Recompute the checksum from the files (streamed) and compare it with ``meta.json``."""
        return _fingerprint(self.path / "indptr.npy", self.path / "indices.npy", self.num_nodes, block) == self.checksum


def open_ondisk(path: str | os.PathLike) -> OnDiskCSR:
    """Open a folder written by :func:`convert_edges` (checks its format and array sizes)."""
    p = Path(path)
    meta_path = p / _META
    if not meta_path.is_file():
        hint = " (a partial conversion: run the conversion again to finish it)" if (p / _PARTIAL).exists() else ""
        raise ValueError(f"{p}: not a finished on-disk CSR folder, no {_META}{hint}")
    try:
        meta = json.loads(meta_path.read_text())
    except (ValueError, RecursionError) as exc:  # RecursionError: crafted deep nesting (issue 56)
        raise ValueError(f"{meta_path}: not readable JSON ({exc})") from None
    if meta.get("format") != FORMAT or meta.get("format_version") != FORMAT_VERSION:
        raise ValueError(f"{meta_path}: not a {FORMAT} version {FORMAT_VERSION} folder "
                         f"(format {meta.get('format')!r}, version {meta.get('format_version')!r})")
    n = int(meta["num_nodes"])
    for name, want in (("indptr.npy", n + 1), ("indices.npy", 2 * int(meta["stats"]["num_edges"]))):
        try:
            arr = np.load(p / name, mmap_mode="r")
        except (OSError, ValueError) as exc:
            raise ValueError(f"{p / name}: missing or unreadable ({exc})") from None
        if arr.ndim != 1 or arr.shape[0] != want:
            raise ValueError(f"{p / name}: holds {arr.shape} entries, {_META} says {want} (damaged folder)")
    return OnDiskCSR(p, n, dict(meta["stats"]), meta["checksum"], meta)


# --------------------------------------------------------------------------- helpers
def _save_state(partial: Path, state: dict) -> None:
    data = json.dumps(state, indent=1, sort_keys=True).encode()
    atomic_write(partial / _STATE, lambda f: f.write(data))


def _pause_point(partial: Path, point: str) -> None:
    """Test hook: when ``$GS_SPLITS_CONVERT_PAUSE`` names ``point`` (``run:N``: the run files of
    chunk N are written, not yet recorded; ``merge:N``: the output of merge checkpoint N is
    written, not yet recorded), write ``.partial/paused`` and sleep until the process is
    stopped, so a test can interrupt the conversion at a known point."""
    if os.environ.get(PAUSE_ENV) != point:
        return
    # atomically: the test polls for the file and reads it as soon as it exists (a plain
    # write_text let it read the empty file between creation and write on a loaded machine)
    atomic_write(partial / "paused", lambda f: f.write(point.encode()))
    while True:  # pragma: no cover - ended by the test's signal
        time.sleep(0.05)


def _npy_header(dtype: str, length: int) -> bytes:
    """The ``.npy`` header of a 1-D array (numpy pads it so that a longer length fits in place)."""
    b = io.BytesIO()
    np.lib.format.write_array_header_1_0(b, {"descr": dtype, "fortran_order": False, "shape": (int(length),)})
    return b.getvalue()


def _fingerprint(indptr_path: Path, indices_path: Path, n: int, block: int, progress: Progress | None = None) -> str:
    """:meth:`CSRGraph.fingerprint` of the arrays in two ``.npy`` files, streamed in blocks."""
    heads = []
    for path in (indptr_path, indices_path):
        with open(path, "rb") as f:
            shape, _, dtype = _read_npy_header(f)
            heads.append((path, f.tell(), int(shape[0]), dtype))
    total = sum(length * dtype.itemsize for _, _, length, dtype in heads)

    def blocks():
        done = 0
        for path, offset, left, dtype in heads:
            with open(path, "rb") as f:
                f.seek(offset)
                while left:
                    k = min(left, block)
                    a = np.empty(k, dtype)
                    _read_exact(f, a.view(np.uint8))
                    yield a
                    left -= k
                    done += k * dtype.itemsize
                    if progress is not None:
                        progress("checksum", done, total)

    return fingerprint_arrays(n, blocks())


def _identity(p: Path, source, num_nodes: int | None, dtype: str | None) -> dict:
    st = p.stat()
    return {"path": str(p.resolve()), "size": st.st_size, "mtime_ns": st.st_mtime_ns,
            "format": source.kind, "describe": source.describe,
            "num_nodes_option": num_nodes, "dtype_option": None if dtype is None else str(np.dtype(dtype))}


def _prepare(out: Path, identity: dict, restart: bool) -> dict | None:
    """Check ``out`` and return the state to resume (None: start afresh; ``{"done": True}``:
    a finished conversion of this input)."""
    partial = out / _PARTIAL
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out}: exists and is not a folder; the conversion writes a folder")
    if out.is_dir():
        ours = {_PARTIAL, _META, *_OUTPUTS}
        foreign = sorted(x.name for x in out.iterdir() if x.name not in ours and not x.name.startswith(_DERIVED))
        if foreign:
            raise ValueError(
                f"{out}: is not empty and not an on-disk CSR folder (holds {', '.join(foreign[:3])}"
                f"{' ...' if len(foreign) > 3 else ''}); choose a new or empty folder"
            )
        state = None
        what = None
        if (partial / _STATE).is_file():
            try:
                state = json.loads((partial / _STATE).read_text())
                what = "a partial conversion"
            except (ValueError, RecursionError):
                state = None
        if state is None and (out / _META).is_file():
            try:
                state = {"input": json.loads((out / _META).read_text())["input"], "done": True}
                what = "a finished conversion"
            except (ValueError, KeyError, TypeError, RecursionError):
                state = None
        if restart:
            _clear(out)
            return None
        if state is None:
            if any((out / x).exists() for x in (_META, *_OUTPUTS)):
                raise ValueError(f"{out}: holds CSR files without a readable record of their input; "
                                 "pass restart=True (gs-splits convert --restart) to convert again")
            _clear(out)
            return None
        if state.get("version", FORMAT_VERSION) != FORMAT_VERSION or state.get("input") != identity:
            old = state.get("input") or {}
            changed = [k for k in ("path", "size", "mtime_ns", "format", "describe", "num_nodes_option", "dtype_option")
                       if old.get(k) != identity.get(k)]
            raise ValueError(
                f"{out}: holds {what} of another input or with other options ({', '.join(changed) or 'format version'} "
                f"differ); pass restart=True (gs-splits convert --restart) to start over, or choose another folder"
            )
        return state
    return None


def _clear(out: Path) -> None:
    shutil.rmtree(out / _PARTIAL, ignore_errors=True)
    for derived in out.glob(_DERIVED + "*"):
        shutil.rmtree(derived, ignore_errors=True)
    for name in (_META, *_OUTPUTS):
        (out / name).unlink(missing_ok=True)


def _tidy_partial(partial: Path, state: dict) -> None:
    """Delete files in ``.partial`` that the state does not record (a run written but not
    recorded, temporary files, the pause marker)."""
    keep = {_STATE, *(r["file"] for r in state.get("runs", []))}
    if state.get("phase") in ("merge", "finalize"):
        keep.update(_OUTPUTS)
    for x in partial.iterdir():
        if x.name not in keep:
            if x.is_dir():
                shutil.rmtree(x, ignore_errors=True)
            else:
                x.unlink(missing_ok=True)


# --------------------------------------------------------------------------- run phase
def _sort_dedup(part: np.ndarray) -> int:
    part.sort()
    return int(_kernels.dedup_sorted_keys(part))


def _write_run(path: Path, keys: np.ndarray) -> None:
    atomic_write(path, lambda f: keys.astype("<i8", copy=False).tofile(f))


def _make_runs(keys: np.ndarray, partial: Path, first_id: int) -> list[dict]:
    """Sort ``keys`` in parts (one thread each, up to the CPUs), keep the first key of each pair
    in every part, and write each part as a run file; returns their records."""
    parts = _cpus() if keys.size >= _PARALLEL_SORT_MIN else 1
    parts = min(parts, 8)
    bounds = np.linspace(0, keys.size, parts + 1).astype(np.int64)
    views = [keys[bounds[i]:bounds[i + 1]] for i in range(parts)]
    sizes = [0] * parts
    if parts == 1:
        sizes[0] = _sort_dedup(views[0])
    else:
        errors: list[BaseException] = []

        def work(i: int) -> None:
            try:
                sizes[i] = _sort_dedup(views[i])
            except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(parts)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
    runs = []
    for i, (v, m) in enumerate(zip(views, sizes, strict=True)):
        if m == 0:
            continue
        name = f"run-{first_id + i:06d}.keys"
        _write_run(partial / name, v[:m])
        runs.append({"file": name, "keys": int(m)})
    return runs


def _bad_edge_message(source, k: int, u: int, v: int, given: int | None, line: int | None) -> str:
    where = f"{source.path}: edge {k} ({u}, {v})" + (f" on line {line}" if line is not None else "")
    if min(u, v) < 0:
        return f"{where} has a negative node id; node ids must be 0..num_nodes-1"
    if given is not None and max(u, v) >= given and given <= MAX_NODES:
        return f"{where} has a node id outside [0, {given}); node ids must be 0..num_nodes-1"
    return (f"{where} has node id {max(u, v)} >= 2**31; the on-disk conversion takes node ids below "
            f"2**31 (number the ids that occur 0..k-1 first)")


def _as_ids(u: np.ndarray, v: np.ndarray, source, first: int) -> tuple[np.ndarray, np.ndarray]:
    """``u``, ``v`` as int32 / int64 ids for the key kernel (other dtypes converted; floats must
    hold integers, unsigned 64-bit ids fit in int64); an error names the first bad edge."""
    if u.dtype in (np.dtype(np.int32), np.dtype(np.int64)):
        return u, v
    if u.dtype.kind == "f":
        bad = ~(np.isfinite(u) & (u == np.round(u))) | ~(np.isfinite(v) & (v == np.round(v)))
        what = "is not an integer"
    elif u.dtype.itemsize == 8 and u.dtype.kind == "u":
        bad = (u >= 2**63) | (v >= 2**63)
        what = "is too large"
    else:
        bad = None
    if bad is not None and bad.any():
        k = int(np.argmax(bad))
        raise ValueError(f"{source.path}: edge {first + k} ({u[k]}, {v[k]}): a node id {what}; node ids must be "
                         "non-negative integers below 2**31")
    return u.astype(np.int64), v.astype(np.int64)


def _run_phase(source, partial: Path, state: dict, budget: int, progress: Progress | None) -> None:
    """Read the input into chunks of packed keys (the budget, less the source's read buffers,
    holds one chunk: 16 bytes per edge), sort each chunk into run files, and record each
    chunk's runs, counts and the cursor after it atomically (where a resumed conversion
    continues)."""
    given = state["num_nodes_option"]
    limit = min(given, MAX_NODES) if given is not None else MAX_NODES
    st = state["stats"]
    keys = np.empty(2 * max(256, (budget - source.start(state, partial, budget)) // 16), np.int64)
    cursor = {"input_edges": st["input_edges"], **({"text": dict(state["text"])} if "text" in state else {})}
    while True:
        nk = loops = 0
        mx = -1
        done = None
        while nk + 2 <= keys.size and (block := source.next_block(cursor, (keys.size - nk) // 2)) is not None:
            k, lp, x, bad = _kernels.edge_keys(block.u, block.v, limit, keys[nk:])
            if bad >= 0:
                raise ValueError(_bad_edge_message(source, cursor["input_edges"] + bad, int(block.u[bad]),
                                                   int(block.v[bad]), given, source.line_of(cursor, bad)))
            nk += k
            loops += lp
            mx = max(mx, x)
            cursor = block.after
            done = block.done
        if done is None:  # nothing left to read
            return
        runs = _make_runs(keys[:nk], partial, state["next_run"])
        state["chunks"] = state.get("chunks", 0) + 1
        _pause_point(partial, f"run:{state['chunks']}")
        state["runs"].extend(runs)
        state["next_run"] += max(len(runs), 1)
        st["input_edges"] = cursor["input_edges"]
        st["self_loops"] += int(loops)
        st["max_id"] = max(st["max_id"], int(mx))
        if "text" in cursor:
            state["text"] = cursor["text"]
        _save_state(partial, state)
        if progress is not None:
            progress("read", done, source.total())


# --------------------------------------------------------------------------- merge phase
def _merge_sizes(budget: int, k: int) -> int:
    """Keys per merge buffer (and per output block) for ``k`` runs within ``budget``."""
    per = budget // (8 * k + 56)  # k buffers, the output block and its emit temporaries
    return int(max(256, min(per, _MAX_MERGE_BUF)))


def _fanin(budget: int) -> int:
    return int(max(2, min(_MAX_FANIN, budget // (8 * _MIN_MERGE_BUF) - 1)))


class _RunReader:
    """Buffers of k run files for :func:`_kernels.merge_sorted_keys` (positions in keys)."""

    def __init__(self, partial: Path, runs: list[dict], consumed: list[int], size: int):
        k = len(runs)
        self.files = [open(partial / r["file"], "rb", buffering=0) for r in runs]  # noqa: SIM115
        self.total = np.array([r["keys"] for r in runs], np.int64)
        self.base = np.array(consumed, np.int64)
        self.bufs = np.empty((k, size), np.int64)
        self.bpos = np.zeros(k, np.int64)
        self.blen = np.zeros(k, np.int64)
        self.more = np.zeros(k, np.bool_)
        for j in range(k):
            self.files[j].seek(int(self.base[j]) * 8)
            self._fill(j)

    def _fill(self, j: int) -> None:
        n = int(min(self.bufs.shape[1], self.total[j] - self.base[j]))
        if n:
            _read_exact(self.files[j], self.bufs[j, :n].view(np.uint8))
        self.blen[j] = n
        self.bpos[j] = 0
        self.more[j] = self.base[j] + n < self.total[j]

    def refill(self, j: int) -> None:
        self.base[j] += self.blen[j]
        self._fill(j)

    def consumed(self) -> list[int]:
        return [int(x) for x in self.base + self.bpos]

    def close(self) -> None:
        for f in self.files:
            f.close()


def _premerge(partial: Path, state: dict, budget: int, progress: Progress | None) -> None:
    """Merge groups of runs into longer runs until one merge can take them all."""
    fanin = _fanin(budget)
    while len(state["runs"]) > fanin:
        group = state["runs"][:fanin]
        size = _merge_sizes(budget, len(group))
        name = f"run-{state['next_run']:06d}.keys"
        reader = _RunReader(partial, group, [0] * len(group), size)
        out = np.empty(size, np.int64)
        last = np.array([-1], np.int64)
        written = [0]
        total = int(sum(r["keys"] for r in group))

        # the loop's objects bound as defaults: the closure runs within its own iteration
        def merge_into(f: Any, reader: _RunReader = reader, out: np.ndarray = out,
                       last: np.ndarray = last, written: list[int] = written,
                       total: int = total) -> None:
            while True:
                n, status = _kernels.merge_sorted_keys(reader.bufs, reader.bpos, reader.blen, reader.more, out, last)
                if n:
                    out[:n].astype("<i8", copy=False).tofile(f)
                    written[0] += int(n)
                if status >= 0:
                    reader.refill(int(status))
                elif status == -2:
                    break
                if progress is not None:
                    progress("premerge", int(sum(reader.consumed())), total)

        try:
            atomic_write(partial / name, merge_into)
        finally:
            reader.close()
        state["runs"] = [{"file": name, "keys": written[0]}, *state["runs"][fanin:]]
        state["next_run"] += 1
        state["premerges"] = state.get("premerges", 0) + 1
        _save_state(partial, state)
        for r in group:
            (partial / r["file"]).unlink(missing_ok=True)


class _Emitter:
    """Turns merged keys into ``indices`` and ``indptr`` appended to their ``.npy`` files
    (:func:`_kernels.csr_from_keys`); its counters live in the merge state ``ms``."""

    FIELDS = ("row_next", "entries", "forward", "rows_nonempty", "last_row")

    def __init__(self, n: int, idtype: np.dtype, ms: dict, indptr_f, indices_f, size: int):
        self.n = n
        self.ms = ms
        self.indptr_f = indptr_f
        self.indices_f = indices_f
        self.cols = np.empty(size, idtype.newbyteorder("<"))
        self.ptr = np.empty(max(1 << 16, size), np.dtype("<i8"))

    def emit(self, keys: np.ndarray) -> None:
        st = np.array([self.ms[k] for k in self.FIELDS], np.int64)
        cols = self.cols[: keys.size]
        i = 0
        while i < keys.size:
            i, nptr = _kernels.csr_from_keys(keys, i, st, cols, self.ptr)
            self.ptr[:nptr].tofile(self.indptr_f)
        cols.tofile(self.indices_f)
        self.ms.update(zip(self.FIELDS, (int(x) for x in st), strict=True))

    def finish(self) -> None:
        """The starts of the rows after the last entry, and the end (``indptr[n]``)."""
        ms = self.ms
        while ms["row_next"] <= self.n:
            k = min(self.ptr.size, self.n + 1 - ms["row_next"])
            self.ptr[:k] = ms["entries"]
            self.ptr[:k].tofile(self.indptr_f)
            ms["row_next"] += k


def _merge_phase(partial: Path, state: dict, budget: int, progress: Progress | None) -> None:
    n = state["num_nodes"]
    idtype = np.dtype(np.int32 if n < 2**31 else np.int64)
    runs = state["runs"]
    ms = state.get("merge")
    indptr_p = partial / "indptr.npy"
    indices_p = partial / "indices.npy"
    if ms is None:  # a fresh merge: both files get their header, indices' one rewritten at the end
        with open(indptr_p, "wb") as f:
            f.write(_npy_header("<i8", n + 1))
        with open(indices_p, "wb") as f:
            f.write(_npy_header(idtype.newbyteorder("<").str, 0))
        ms = {"consumed": [0] * len(runs), "last": -1, "row_next": 0, "entries": 0, "forward": 0,
              "rows_nonempty": 0, "last_row": -1, "checkpoints": 0,
              "indptr_bytes": indptr_p.stat().st_size, "indices_bytes": indices_p.stat().st_size}
        state["merge"] = ms
        _save_state(partial, state)
    size = _merge_sizes(budget, max(len(runs), 1))
    reader = _RunReader(partial, runs, ms["consumed"], size)
    total = int(sum(r["keys"] for r in runs))
    out = np.empty(size, np.int64)
    last = np.array([ms["last"]], np.int64)
    try:
        with open(indptr_p, "r+b") as fp, open(indices_p, "r+b") as fi:
            # drop what was written after the last checkpoint
            fp.truncate(ms["indptr_bytes"])
            fi.truncate(ms["indices_bytes"])
            fp.seek(ms["indptr_bytes"])
            fi.seek(ms["indices_bytes"])
            emitter = _Emitter(n, idtype, ms, fp, fi, size)
            since = 0
            while True:
                k, status = _kernels.merge_sorted_keys(reader.bufs, reader.bpos, reader.blen, reader.more, out, last)
                if k:
                    emitter.emit(out[:k])
                    since += int(k)
                if status >= 0:
                    reader.refill(int(status))
                if status == -2:
                    emitter.finish()
                if since >= size or status == -2:
                    fp.flush()
                    fi.flush()
                    ms["checkpoints"] += 1
                    _pause_point(partial, f"merge:{ms['checkpoints']}")
                    ms.update(consumed=reader.consumed(), last=int(last[0]),
                              indptr_bytes=fp.tell(), indices_bytes=fi.tell())
                    if status == -2:
                        state["phase"] = "finalize"
                    _save_state(partial, state)
                    since = 0
                    if progress is not None:
                        progress("merge", int(sum(ms["consumed"])), total)
                if status == -2:
                    break
    finally:
        reader.close()


# --------------------------------------------------------------------------- finalize
def _finalize(out: Path, partial: Path, state: dict, budget: int, progress: Progress | None) -> OnDiskCSR:
    n = state["num_nodes"]
    ms = state["merge"]
    idtype = np.dtype(np.int32 if n < 2**31 else np.int64).newbyteorder("<")
    for r in state["runs"]:
        (partial / r["file"]).unlink(missing_ok=True)
    if (partial / "indices.npy").exists():
        header = _npy_header(idtype.str, ms["entries"])
        with open(partial / "indices.npy", "r+b") as f:
            shape, _, _ = _read_npy_header(f)
            old = f.tell()
            if len(header) != old:  # cannot happen with numpy's growth padding; refuse to guess
                raise RuntimeError(f"{partial / 'indices.npy'}: header of {old} bytes cannot take {len(header)}")
            f.seek(0)
            f.write(header)
    for name in _OUTPUTS:
        if (partial / name).exists():
            os.replace(partial / name, out / name)
    st = state["stats"]
    nonloop = st["input_edges"] - st["self_loops"]
    stats = {
        "input_edges": int(st["input_edges"]),
        "self_loops": int(st["self_loops"]),
        "duplicate_edges": int(nonloop - ms["forward"]),
        "one_directional_pairs": int(ms["entries"] - ms["forward"]),
        "num_edges": int(ms["entries"] // 2),
        "isolated_nodes": int(n - ms["rows_nonempty"]),
    }
    block = int(max(1 << 16, min(1 << 24, budget // 16)))  # entries read and widened to int64 at once
    checksum = _fingerprint(out / "indptr.npy", out / "indices.npy", n, block, progress)
    meta = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "num_nodes": n,
        "stats": stats,
        "indptr": {"file": "indptr.npy", "dtype": "int64", "length": n + 1},
        "indices": {"file": "indices.npy", "dtype": str(np.dtype(idtype.name)), "length": int(ms["entries"])},
        "checksum": checksum,
        "checksum_rule": "CSRGraph.fingerprint(): sha256 of int64(num_nodes), indptr and indices as little-endian int64",
        "input": state["input"],
        "conversion": {"chunks": state.get("chunks", 0), "premerges": state.get("premerges", 0),
                       "final_merge_runs": len(state["runs"])},
        "gs_splits_version": __version__,
    }
    data = json.dumps(meta, indent=1).encode()
    atomic_write(out / _META, lambda f: f.write(data))
    shutil.rmtree(partial, ignore_errors=True)
    _log_stats(out, stats)
    return OnDiskCSR(out, n, stats, checksum, meta)


def _log_stats(out: Path, stats: dict) -> None:
    if stats["self_loops"]:
        log.warning("%s: removed %d self-loop(s)", out, stats["self_loops"])
    if stats["duplicate_edges"]:
        log.warning("%s: removed %d duplicate edge(s)", out, stats["duplicate_edges"])
    if stats["one_directional_pairs"]:
        log.info("%s: symmetrised %d edge(s) given in one direction only", out, stats["one_directional_pairs"])


# --------------------------------------------------------------------------- entry point
def convert_edges(source: str | os.PathLike, out_dir: str | os.PathLike, *, num_nodes: int | None = None,
                  dtype: str | None = None, memory: int | str | None = None,
                  progress: Progress | None = None, restart: bool = False) -> OnDiskCSR:
    """Convert an edge stream into an on-disk symmetric CSR folder (external sort; resumable).

    Parameters
    ----------
    source : path of the edge file (``.npy``, ``.npz``, raw binary, or text; module docstring)
    out_dir : folder to write (created; a partial conversion of the same input there resumes)
    num_nodes : int, optional
        Number of nodes (default: the largest id + 1; or the ``.npz`` / sidecar value).
    dtype : ``"int32"`` or ``"int64"``, optional
        Id type of a raw binary file without a sidecar.
    memory : int or str, optional
        Budget of the conversion's arrays, bytes or ``"16G"`` (default 60 % of the RAM).
    progress : callable, optional
        ``progress(phase, done, total)``, phases ``"read"`` (bytes of text / edges),
        ``"premerge"`` and ``"merge"`` (keys), ``"checksum"`` (bytes).
    restart : bool, default False
        Discard an existing conversion in ``out_dir`` (of any input) and start over.

    Returns
    -------
    OnDiskCSR
        Its arrays and ``stats`` equal those of ``as_csr_graph(edges, num_nodes)``.

    Raises
    ------
    ValueError
        Unreadable input, ids out of range (the message names the edge, and the line of a
        text file), ``out_dir`` holding another input's conversion or other files.
    FileNotFoundError
        No such input file.
    """
    p = Path(source)
    out = Path(out_dir)
    budget = default_memory() if memory is None else parse_memory(memory)
    if num_nodes is not None and (
        isinstance(num_nodes, bool) or not isinstance(num_nodes, (int, np.integer)) or not 1 <= num_nodes <= MAX_NODES
    ):
        raise ValueError(f"num_nodes must be an integer in [1, 2**31] for the on-disk conversion, got {num_nodes!r}")
    src = _open_source(p, dtype)
    created = not out.exists()
    try:
        identity = _identity(p, src, None if num_nodes is None else int(num_nodes), dtype)
        state = _prepare(out, identity, restart)
        if state is not None and state.get("done"):
            log.info("%s: already converted from %s", out, p)
            return open_ondisk(out)
        partial = out / _PARTIAL
        if state is None:
            partial.mkdir(parents=True, exist_ok=True)
            given = num_nodes if num_nodes is not None else src.num_nodes
            if given is not None and not 1 <= given <= MAX_NODES:
                raise ValueError(f"{p}: num_nodes {given} is outside [1, 2**31], the on-disk conversion's range")
            state = {"version": FORMAT_VERSION, "input": identity, "phase": "runs", "runs": [], "next_run": 0,
                     "num_nodes_option": None if given is None else int(given),
                     "stats": {"input_edges": 0, "self_loops": 0, "max_id": -1}}
            _save_state(partial, state)
        else:
            log.info("%s: resuming the conversion of %s (phase %s)", out, p, state["phase"])
        _tidy_partial(partial, state)
        try:
            return _convert(p, src, out, partial, state, budget, progress)
        except ValueError:
            # bad input: these options can never finish, so their partial folder would only
            # block a corrected call; the input is read in order, so nothing of value is lost
            if state["phase"] == "runs":
                _clear(out)
                if created and not any(out.iterdir()):
                    out.rmdir()
            raise
    finally:
        src.close()


def _convert(p: Path, src, out: Path, partial: Path, state: dict, budget: int, progress: Progress | None) -> OnDiskCSR:
    """The phases of :func:`convert_edges` from where ``state`` stands."""
    if state["phase"] == "runs":
        _run_phase(src, partial, state, budget, progress)
        given = state["num_nodes_option"]
        n = given if given is not None else state["stats"]["max_id"] + 1
        if n <= 0:
            raise ValueError(f"{p}: the graph is empty: it has no edges (give num_nodes for a graph without edges)")
        state["num_nodes"] = int(n)
        state["phase"] = "premerge"
        _save_state(partial, state)
    if state["phase"] == "premerge":
        _premerge(partial, state, budget, progress)
        state["phase"] = "merge"
        _save_state(partial, state)
    if state["phase"] == "merge":
        _merge_phase(partial, state, budget, progress)
    return _finalize(out, partial, state, budget, progress)
