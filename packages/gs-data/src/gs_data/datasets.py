"""``gs_data.load``: the papers' node-classification datasets as PyG ``Data`` objects."""

from __future__ import annotations

import hashlib
import http.client
import json
import logging
import os
import urllib.error
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from gs_data._io import (
    CorruptRawFileError,
    MissingRawFileError,
    ProgressCallback,
    atomic_write,
    build_once,
    data_root,
    download_file,
    extract_zip,
    not_a_regular_file,
    processed_root,
    sha256_file,
)
from gs_data._readers import RawGraph
from gs_data._registry import SPECS, DatasetSpec, available_datasets, resolve_name

if TYPE_CHECKING:  # torch and PyG load in the functions that build or read tensors
    from torch_geometric.data import Data

__all__ = ["load", "available_datasets", "graph_stats", "dataset_info", "raw_paths", "to_data", "row_normalize"]

logger = logging.getLogger("gs_data")

#: bump when the processed format or any reader's output changes (invalidates caches)
_PROCESSED_VERSION = 1


def dataset_info(name: str) -> DatasetSpec:
    """The registry entry of ``name``: raw files, URLs, checksums, paper statistics."""
    return resolve_name(name)


def raw_paths(name: str, root: str | os.PathLike | None = None) -> list[Path]:
    """Where the raw files of ``name`` are (or must be placed) under ``root``."""
    spec = resolve_name(name)
    base = Path(root) if root is not None else data_root()
    return [base / f.relpath for f in spec.raw_files]


def _ensure_raw(
    spec: DatasetSpec, root: Path, *, download: bool, progress: ProgressCallback | None, verify: bool
) -> list[Path]:
    paths = []
    for f in spec.raw_files:
        p = root / f.relpath
        for cand in (p, *(root / a for a in f.alternatives)):
            why = not_a_regular_file(cand)
            if why is not None:
                raise CorruptRawFileError(f"raw file for dataset {spec.name!r}: {why}")
        if not p.exists():
            alt = next((root / a for a in f.alternatives if (root / a).exists()), None)
            if alt is not None:
                paths.append(alt)
                continue
            if f.url is None or not download:
                how = (
                    f"download it from {f.url}" if f.url else f"get it from {spec.where}"
                ) + (" (downloading is switched off: download=False)" if f.url and not download else "")
                raise MissingRawFileError(
                    f"raw file for dataset {spec.name!r} not found: {p}. Place the file at exactly "
                    f"this path ({how}), or pass root=<folder holding {f.relpath}> or set GS_DATA_ROOT."
                )
            try:
                if f.archive is not None:
                    arch = root / f.archive
                    if not arch.exists():
                        download_file(f.url, arch, sha256=None, progress=progress)
                    # only the dataset's own folder of the archive (issue 56: an entry for another
                    # dataset replaced that dataset's files)
                    own = Path(f.relpath).relative_to(f.extract_to or "").parts[0]
                    extract_zip(arch, root / (f.extract_to or ""), keep=own)
                    if not p.exists():
                        raise MissingRawFileError(f"{arch} was extracted but {p} is still missing")
                else:
                    download_file(f.url, p, sha256=f.sha256, progress=progress)
            except (urllib.error.URLError, TimeoutError, ConnectionError, http.client.HTTPException) as exc:
                reason = getattr(exc, "reason", None) or exc
                raise MissingRawFileError(
                    f"raw file for dataset {spec.name!r} not found: {p}, and downloading it from "
                    f"{f.url} failed ({type(exc).__name__}: {reason}); you may be offline. Download it "
                    f"on a machine with internet access and place it at exactly this path, or pass "
                    f"root=<folder holding {f.relpath}> or set GS_DATA_ROOT."
                ) from exc
        elif verify and f.sha256 is not None:
            digest = sha256_file(p)
            if digest != f.sha256:
                from gs_data._io import ChecksumError

                raise ChecksumError(
                    f"{p}: SHA-256 {digest} differs from the published file's {f.sha256}; the file is "
                    f"corrupted or a different version. Replace it with a copy from {f.url or spec.where}."
                )
        paths.append(p)
    return paths


def _cache_key(spec: DatasetSpec, paths: list[Path]) -> str:
    h = hashlib.sha256()
    h.update(f"{spec.name}|v{_PROCESSED_VERSION}".encode())
    for p in paths:
        st = p.stat()
        h.update(f"|{p.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode())
    return h.hexdigest()[:20]


def _save_processed(path: Path, g: RawGraph) -> None:
    arrays: dict[str, np.ndarray] = {"edge_index": g.edge_index, "y": g.y}
    if sp.issparse(g.x):
        x = sp.csr_matrix(g.x)
        arrays.update(x_data=x.data, x_indices=x.indices, x_indptr=x.indptr, x_shape=np.asarray(x.shape))
    else:
        arrays["x_dense"] = np.asarray(g.x)
    for k, v in g.extras.items():
        arrays[f"extra__{k}"] = np.asarray(v)
    arrays["meta_json"] = np.frombuffer(json.dumps(g.meta).encode(), dtype=np.uint8)
    with atomic_write(path) as fh:
        np.savez(fh, **arrays)


def _load_processed(path: Path) -> RawGraph:
    with np.load(path, allow_pickle=False) as z:
        if "x_dense" in z.files:
            x: Any = z["x_dense"]
        else:
            x = sp.csr_matrix((z["x_data"], z["x_indices"], z["x_indptr"]), shape=tuple(z["x_shape"]))
        extras = {k[len("extra__") :]: z[k] for k in z.files if k.startswith("extra__")}
        meta = json.loads(bytes(z["meta_json"]).decode())
        return RawGraph(z["edge_index"], x, z["y"], extras, meta)


def _read(spec: DatasetSpec, root: Path, paths: list[Path], cache_dir: Path | None, force_reload: bool) -> RawGraph:
    if cache_dir is None or not paths:  # no raw files: nothing to key a cache on
        return spec.reader(root)  # type: ignore[misc]
    cache = cache_dir / f"{spec.name}-{_cache_key(spec, paths)}.npz"
    # built once when several processes miss together (issue 34)
    return build_once(cache, _load_processed, lambda: spec.reader(root), _save_processed,  # type: ignore[misc]
                      what="processed cache", rebuild=force_reload)


def _check_finite_features(name: str, raw: RawGraph, paths: list[Path]) -> None:
    """Refuse NaN / inf node features, naming the file and the first bad entry (issue 56: every
    job of such a file failed with "training loss became nan at epoch 0", naming nothing)."""
    x = raw.x
    if x is None:
        return
    vals = x.data if sp.issparse(x) else np.asarray(x)
    if vals.dtype.kind not in "fc" or bool(np.isfinite(vals).all()):
        return
    if sp.issparse(x):
        csr = sp.csr_matrix(x)
        k = int(np.flatnonzero(~np.isfinite(csr.data))[0])
        row, col, val = int(np.searchsorted(csr.indptr, k, side="right") - 1), int(csr.indices[k]), csr.data[k]
        bad = int((~np.isfinite(csr.data)).sum())
    else:
        row, col = (int(v) for v in np.argwhere(~np.isfinite(vals))[0])
        val, bad = vals[row, col], int((~np.isfinite(vals)).sum())
    where = str(paths[0]) if len(paths) == 1 else f"dataset {name!r} ({', '.join(str(p) for p in paths)})"
    raise CorruptRawFileError(
        f"{where}: the node features hold {bad} NaN / inf value(s), the first at node {row}, feature "
        f"{col} ({val}); a model cannot train on them: fix or replace the file")


def to_data(
    edge_index: np.ndarray,
    x: Any,
    y: np.ndarray,
    *,
    name: str,
    extras: dict[str, np.ndarray] | None = None,
    provenance: dict[str, Any] | None = None,
    sparse_x: bool = False,
) -> Data:
    """Build a PyG ``Data`` from numpy/scipy arrays (dense float32 ``x`` unless ``sparse_x``)."""
    import torch
    from torch_geometric.data import Data

    ei = torch.from_numpy(np.ascontiguousarray(edge_index, dtype=np.int64))
    if sp.issparse(x):
        if sparse_x:
            coo = sp.coo_matrix(x)
            xt = torch.sparse_coo_tensor(
                torch.from_numpy(np.vstack([coo.row, coo.col]).astype(np.int64)),
                torch.from_numpy(coo.data.astype(np.float32)),
                size=coo.shape,
                check_invariants=True,
            ).coalesce()
        else:
            xt = torch.from_numpy(np.asarray(x.toarray(), dtype=np.float32))
    else:
        xt = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32))
    yt = torch.from_numpy(np.ascontiguousarray(y, dtype=np.int64))
    data = Data(x=xt, edge_index=ei, y=yt, num_nodes=int(yt.shape[0]))
    data.name = name
    data.label_mask = yt >= 0
    for k, v in (extras or {}).items():
        data[k] = torch.from_numpy(np.ascontiguousarray(v))
    data.provenance = dict(provenance or {})
    return data


def row_normalize(x: Any) -> Any:
    """Row-normalise non-negative features so that every non-zero row sums to one.

    The edgewise-calibration authors declare ``torch_geometric.transforms.NormalizeFeatures``
    for Planetoid (``src/data/data_utils.py``, ``load_data``). PyG divides by
    ``max(row sum, 1)``; for count / binary features (every non-zero row sums to at least one,
    as in Planetoid) both give the same matrix (tested against PyG); rows of zeros stay zero. ``x`` is a
    dense array or a scipy sparse matrix; the result has the same kind, in float32.
    """
    if sp.issparse(x):
        m = sp.csr_matrix(x, dtype=np.float64)
        if m.nnz and m.data.min() < 0:
            raise ValueError("row_normalize needs non-negative features; got a negative entry")
        s = np.asarray(m.sum(axis=1)).ravel()
        scale = 1.0 / np.where(s > 0, s, 1.0)
        return sp.csr_matrix(sp.diags(scale) @ m, dtype=np.float32)
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"row_normalize needs a 2-d feature matrix, got shape {a.shape}")
    if a.size and a.min() < 0:
        raise ValueError("row_normalize needs non-negative features; got a negative entry")
    s = a.sum(axis=1, keepdims=True)
    return (a / np.where(s > 0, s, 1.0)).astype(np.float32)


def load(
    name: str,
    root: str | os.PathLike | None = None,
    *,
    download: bool = True,
    progress: ProgressCallback | None = None,
    cache_dir: str | os.PathLike | None = None,
    use_cache: bool = True,
    force_reload: bool = False,
    verify_checksums: bool = False,
    missing_label: int = -1,
    self_loops: bool = False,
    sparse_x: bool = False,
    normalize_features: bool = False,
    seed: int | None = None,
    **geometric_options: Any,
) -> Data:
    """Load a node-classification dataset as a PyG ``Data``, or a geometric dataset.

    A name of :func:`gs_data.geometric.available_geometric` (GeSS's shift cases and their
    offline stand-ins, e.g. ``"track-pileup-pu50"``, ``"qmof-hse06"``,
    ``"drugood3d-scaffold"``, ``"molecular-fidelity"``) is passed to
    :func:`gs_data.geometric.load_geometric` with ``root`` and ``seed`` (default 0) and
    ``geometric_options`` (``info_level``, ``sizes``, ``cache_dir``, ...), and that dataset
    object is returned instead of a ``Data`` (it has ``split``, ``y`` and ``to_pyg``).

    Parameters
    ----------
    name : str
        Case-insensitive name or alias, see :func:`available_datasets` (e.g. ``"cora-ml"``,
        ``"citeseer"``, ``"planetoid-cora"``, ``"acmv9"``, ``"ogbn-arxiv"``,
        ``"synthetic-default"``).
    root : path, optional
        Folder holding the raw files in gs-data's layout (the layout of the project's shared
        data folder, e.g. ``<root>/structural-shifts/cora-ml/data.mat``). Default:
        ``$GS_DATA_ROOT`` or the user cache dir (``~/.cache/gs-data``). Never written to
        except when a missing file is downloaded into it.
    download : bool
        Download missing raw files that have a standard URL (logged, checksummed where the
        checksum is known). With ``False`` a missing file raises
        :class:`~gs_data.MissingRawFileError` naming the path to place it at.
    progress : callable, optional
        ``progress(bytes_done, bytes_total_or_None)`` during downloads (CLIs draw a bar).
    cache_dir : path, optional
        Where processed arrays are cached for fast reloads; default
        ``data_root()/processed``. ``use_cache=False`` parses the raw files every time.
    verify_checksums : bool
        Also check the SHA-256 of files already on disk (always done for downloads).
    missing_label : int
        Label given to nodes without one (default ``-1``; ``data.label_mask`` is ``y >= 0``).
        Planetoid CiteSeer has 15 such nodes (PyG gives them class 0: pass ``0`` to match).
    self_loops : bool
        Add one self-loop per node (graphs come without self-loops by default).
    sparse_x : bool
        Return ``x`` as a torch sparse COO tensor instead of dense float32.
    normalize_features : bool
        Row-normalise ``x`` (:func:`row_normalize`, the same as PyG's ``NormalizeFeatures``
        for non-negative features): the edgewise-calibration authors' declared setup.
        Recorded in ``provenance["normalize_features"]``.
    seed : int, optional
        Seed of the synthetic default graph (ignored for real datasets).

    Returns
    -------
    torch_geometric.data.Data
        ``x`` (N, F) float32, ``edge_index`` (2, E) int64 undirected (both directions),
        ``y`` (N,) int64, ``label_mask``, ``name``, ``provenance`` (dict: dataset, format,
        raw files, paper statistics) and dataset-specific tensors (``node_year`` for
        OGB-arxiv, ``y_multi`` for the multi-label ACDNE graphs, OGB's official
        ``train_mask``/``val_mask``/``test_mask``).
    """
    import torch

    from gs_data.geometric import is_geometric, load_geometric

    if is_geometric(name):
        if cache_dir is not None:
            geometric_options.setdefault("cache_dir", cache_dir)
        return load_geometric(name, root=root, seed=0 if seed is None else seed, **geometric_options)
    if geometric_options:
        raise TypeError(f"load() got options {sorted(geometric_options)} that only geometric datasets "
                        f"accept; {name!r} is a node-classification dataset")
    spec = resolve_name(name)
    if not isinstance(missing_label, (int, np.integer)):
        raise TypeError(f"missing_label must be an int, got {type(missing_label).__name__}")
    if spec.name == "synthetic-default":
        from gs_data.synthetic import default_graph

        g = default_graph(seed=0 if seed is None else seed)
        raw = RawGraph(g.edge_index, g.x, g.y, {}, {"format": "synthetic", "params": g.params})
        display_name = g.name
        paths: list[Path] = []
        base = None
    else:
        base = Path(root) if root is not None else data_root()
        paths = _ensure_raw(spec, base, download=download, progress=progress, verify=verify_checksums)
        cdir = processed_root(cache_dir) if use_cache else None
        raw = _read(spec, base, paths, cdir, force_reload)
        _check_finite_features(spec.name, raw, paths)
        display_name = spec.name
    y = raw.y.copy()
    if missing_label != -1:
        y[y < 0] = int(missing_label)
    extras = dict(raw.extras)
    n = y.shape[0]
    for part, mask_name in (("train", "train_mask"), ("valid", "val_mask"), ("test", "test_mask")):
        idx = extras.pop(f"split_{part}", None)
        if idx is not None:
            m = np.zeros(n, dtype=bool)
            m[idx] = True
            extras[mask_name] = m
    ei = raw.edge_index
    if self_loops:
        loops = np.arange(n, dtype=np.int64)
        ei = np.concatenate([ei, np.stack([loops, loops])], axis=1)
    provenance = {
        "dataset": spec.name,
        "title": spec.title,
        "format": raw.meta.get("format"),
        "raw_files": [str(p) for p in paths],
        "root": str(base) if base is not None else None,
        "paper_stats": [s.__dict__ for s in spec.paper_stats],
        "synthetic": spec.name == "synthetic-default",
        **{k: v for k, v in raw.meta.items() if k != "format"},
        "normalize_features": bool(normalize_features),
    }
    x = row_normalize(raw.x) if normalize_features else raw.x
    data = to_data(ei, x, y, name=display_name, extras=extras, provenance=provenance, sparse_x=sparse_x)
    if missing_label != -1:
        data.label_mask = torch.from_numpy(raw.y >= 0)
    return data


def graph_stats(data: Data) -> dict[str, int]:
    """Nodes, directed/undirected edge counts (self-loops excluded), features, classes."""
    import torch

    ei = data.edge_index
    no_loop = ei[0] != ei[1]
    directed = int(no_loop.sum())
    y = data.y
    labelled = y[y >= 0] if y is not None else torch.empty(0, dtype=torch.long)
    return {
        "nodes": int(data.num_nodes),
        "edges_directed": directed,
        "edges_undirected": directed // 2,
        "features": int(data.x.shape[1]) if data.x is not None else 0,
        "classes": int(labelled.unique().numel()),
    }


_ = SPECS  # re-exported for introspection
