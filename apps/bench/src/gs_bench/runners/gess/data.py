"""The data of a ``gess`` job: the gs-data dataset of a shift case at an information level,
its PyG graphs per split part and the backbone's inputs (runs on a worker; torch is imported
inside the functions)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from gs_bench.runners.gess.checks import data_problem
from gs_bench.runners.gess.spec import DATASETS, Settings, track_sim_config, track_sizes

__all__ = ["load_dataset", "unit_coordinates", "graph_parts", "model_inputs", "SUMMARY_PARTS", "cached_graph_parts"]


def load_dataset(name: str, settings: Settings | Mapping[str, Any], level: str):
    """The gs-data dataset of ``name`` at ``level`` (:func:`gs_data.load_geometric`, never
    its MoleculeACE fallback: a job's dataset is the one it names): an object with
    ``split`` (masks, groups) and ``to_pyg(indices)``."""
    import gs_data
    from gs_data.molecules.moleculeace import MoleculeACEConfig

    st = Settings.from_mapping(settings)
    case = DATASETS[name]
    info = level.replace("-", "_")
    why = data_problem(name, st)
    if why:
        raise FileNotFoundError(f"dataset {name!r}: {why}")
    pool = st.par_label_pool
    kw: dict[str, Any] = {}
    root = None
    conformer_cache = st.cache_dir or str(gs_data.data_root() / "conformers")
    workers = int(st.conformer_workers)
    if case.family == "qmof":
        root = st.qmof_root
    elif case.family == "drugood3d":
        root = st.drugood_root
        kw = dict(par_label_per_part=int(pool) // 2 if pool else 1000, cache_dir=conformer_cache,
                  n_workers=workers)
    elif case.family == "moleculeace":
        kw = dict(config=MoleculeACEConfig(par_label_pool=int(pool)) if pool else None,
                  data_dir=st.moleculeace_dir, targets=st.targets,
                  cache_dir=conformer_cache, n_workers=workers)
    elif case.family == "track":
        pu = int(case.case[2:]) if case.shift == "pileup" else 50
        kw = dict(sizes=track_sizes(st.track_sizes, case.shift, pu),
                  cache_dir=st.track_cache_dir,
                  n_workers=int(st.track_workers or os.cpu_count() or 1),
                  config=track_sim_config(st))
    seed = int(st.track_seed) if case.family == "track" else 0
    return gs_data.load_geometric(name, info_level=info, root=root, seed=seed, stand_in=False, **kw)


def unit_coordinates(pos):
    """GeSS's ``CoorsNorm`` for Track (``GESS/models/models/tools.py``, applied by
    ``BaseModel.calc_geo_feat`` before the kNN graph when the dataset is Track): every hit's
    coordinates divided by their own norm (its direction from the interaction point; the
    learnable ``scale`` is not applied). Without it the raw millimetre coordinates make EGNN
    diverge."""
    return pos / pos.norm(dim=-1, keepdim=True).clamp(min=1e-6)


_unit = unit_coordinates  # graph_parts' keyword of the same name shadows the function there


#: The parts whose events carry ``position_summary`` (:func:`graph_parts`): the baselines are
#: fitted on train and scored on the two test parts.
SUMMARY_PARTS = ("train", "iid_test", "ood_test")


def graph_parts(ds, level: str, unit_coordinates: bool = False, knn_k: int | None = None,
                position_summary: bool = False) -> dict[str, list]:
    """PyG graphs per split part, each with ``y`` (1,) float and ``domain``: the source
    subgroup of GeSS (table 6; ``split.groups``). Items without a subgroup (Track-Signal
    background events, target items) get one extra id after the subgroups.
    ``unit_coordinates``: :func:`unit_coordinates` (Track). ``knn_k``: each graph carries
    its coordinate kNN graph with self loops as ``knn_index`` (int32), built once here
    instead of once per batch and epoch (the backbones take it through gs-algos'
    ``knn_kwargs``; GeSS builds it in every forward pass). Graphs without points (a
    simulated Track event in which no particle reached the detector: 2 of the 1200 ci-size
    Track-Signal events) are left out; the record's ``sizes`` count what was used.
    ``position_summary`` (Track): the graphs of :data:`SUMMARY_PARTS` carry
    ``position_summary``, a (1, F) float tensor of :func:`gs_data.track.position_features` of
    their raw hit positions (mm, before ``unit_coordinates``), for the position-only baselines;
    the backbones never read it."""
    import torch

    from gs_models.knn import knn_graph

    groups = np.asarray(ds.split.groups) if ds.split.groups is not None else np.zeros(len(ds), int)
    codes = groups.astype(np.int64).copy()
    codes[codes < 0] = int(groups.max()) + 1 if groups.size else 0
    wanted = ["train", "iid_val", "iid_test", "ood_val", "ood_test"]
    if level == "o-feature":
        wanted.append("train_target")
    if level == "par-label":
        wanted.append("ood_labeled")
    parts = {}
    for part in wanted:
        mask = ds.split.masks.get(part)
        if mask is None or not mask.any():
            continue
        idx = np.flatnonzero(mask)
        graphs = []
        for i, g in zip(idx, ds.to_pyg(idx), strict=True):
            if g.pos.size(0) == 0:  # an event without hits (simulated Track): nothing to learn
                continue
            g.domain = torch.tensor(int(codes[i]))
            if position_summary and part in SUMMARY_PARTS:
                from gs_data.track import position_features

                g.position_summary = torch.as_tensor(
                    position_features(g.pos.double().numpy()), dtype=torch.float32).reshape(1, -1)
            g.y = g.y.reshape(-1).float()
            if unit_coordinates:
                g.pos = _unit(g.pos)
            if knn_k is not None:
                g.knn_index = knn_graph(g.pos, int(knn_k), loop=True).to(torch.int32)
            graphs.append(g)
        parts[part] = graphs
    return parts


def model_inputs(ds, case) -> tuple[int, bool]:
    """``(in_channels, categorical)``: Track's all-ones float feature, else atom types."""
    if case.family == "track":
        return 1, False
    return int(ds.num_atom_types), True


#: Source files whose code decides what :func:`graph_parts` builds; their bytes enter the key of
#: :func:`cached_graph_parts` (the packages' versions do not change with every edit).
_BUILDERS = ("gs_bench.runners.gess.data", "gs_data.track.analysis", "gs_data.track.datasets", "gs_models.knn")


def _graph_cache_key(name: str, level: str, settings, flags: dict) -> str:
    import importlib
    import json

    from gs_bench.runners.gess.checks import fingerprint
    from gs_data import fingerprint as content_fingerprint

    st = Settings.from_mapping(settings)
    head = json.dumps({"dataset": name, "level": level, "data": fingerprint(name, st),
                       "cache": st.track_cache_dir, **flags}, sort_keys=True, default=str)
    sources = [(mod, open(importlib.import_module(mod).__file__, "rb").read().decode())
               for mod in _BUILDERS]
    return content_fingerprint([("job", head), *sources], length=24)


def cached_graph_parts(workdir, name: str, level: str, settings, build, **flags) -> dict[str, list]:
    """:func:`graph_parts` of dataset ``name`` at ``level`` (``build()`` makes them), stored once
    per run folder in ``<workdir>/graphs/<key>.pt`` and read back by the run's later jobs (a
    Track case at medium size takes minutes to turn into kNN graphs and position summaries, the
    same for every algorithm, backbone and seed). The key holds the dataset, level, the data's
    fingerprint (sizes, seed, simulation settings), the event cache folder, the builder flags
    (``flags``: unit coordinates, k, position summaries) and the bytes of the source files that
    build them (:data:`_BUILDERS`). Plain tensors only: read with ``weights_only=True``. Without
    ``workdir``, or with an unreadable file, it builds."""
    import torch
    from torch_geometric.data import Data

    if not workdir:
        return build()
    path = Path(workdir) / "graphs" / f"{_graph_cache_key(name, level, settings, flags)}.pt"
    if path.is_file():
        try:
            stored = torch.load(path, weights_only=True)
            return {part: [Data(**g) for g in graphs] for part, graphs in stored.items()}
        except Exception:  # noqa: BLE001 - a damaged cache file is rebuilt, never trusted
            pass
    parts = build()
    from gs_algos.checkpoint import atomic_save

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_save({part: [{k: v for k, v in g.to_dict().items() if torch.is_tensor(v)} for g in graphs]
                 for part, graphs in parts.items()}, path)
    return parts
