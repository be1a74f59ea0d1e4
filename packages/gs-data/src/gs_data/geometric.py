"""The registry of GeSS's geometric datasets: one entry per shift case, one table.

GeSS (Zou et al., "GeSS: benchmarking geometric deep learning under scientific
applications with distribution shifts") defines ten shift cases on three scientific
datasets (section 3.2, tables 2 and 4): Track (particle physics; pileup shift PU50 / PU90
with a PU10 source, signal shift tau->3mu / Z'20 / Z'10), QMOF (materials; fidelity shift
to HSE06 and HSE06*) and DrugOOD-3D (molecules; assay, scaffold and size shifts). gs-data
adds two offline stand-ins: the molecular fidelity shift (HOMO-LUMO gaps shipped with
gs-data, for QMOF) and MoleculeACE's ChEMBL sets curated the DrugOOD way (for DrugOOD-3D).

Like OGB's ``master.csv`` this module is plain data: every :class:`GeometricSpec` states
its task, metric, information levels and supported shift, and both the loader
(:func:`load_geometric`, also reached through :func:`gs_data.load`) and the benchmark
runner (``gs-bench``'s gess suite) read them from here. The table is built explicitly in
:data:`GEOMETRIC_DATASETS` (no registration by import side effect); importing this module
imports neither torch nor RDKit.

>>> from gs_data.geometric import geometric_spec
>>> s = geometric_spec("track-pileup-pu50")
>>> (s.task, s.metric, s.metric_label, s.shift, s.point_labels)
('binary', 'accuracy', 'ACC', 'pileup', True)
>>> geometric_spec("qmof-hse06").metric_label
'MAE'
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "GeometricSpec",
    "data_file",
    "GEOMETRIC_DATASETS",
    "GEOMETRIC_TASKS",
    "GEOMETRIC_METRICS",
    "INFO_LEVELS",
    "available_geometric",
    "geometric_spec",
    "is_geometric",
    "missing_geometric_data",
    "load_geometric",
]

log = logging.getLogger(__name__)

#: Tasks of the GeSS cases (section 3.2): a binary label per point cloud (Track: a signal
#: decay is present; DrugOOD-3D: the ligand is active) or a real value (band gap, eV).
GEOMETRIC_TASKS = ("binary", "regression")
#: Metric keys (gs-algos' names) and the labels GeSS's tables use (section 4.1).
GEOMETRIC_METRICS = {"accuracy": "ACC", "auroc": "AUC", "mae": "MAE"}
#: GeSS's three levels of OOD information (section 4.1), gs-splits' spelling.
INFO_LEVELS = ("no_info", "o_feature", "par_label")
_FAMILIES = ("track", "qmof", "molecular-fidelity", "drugood3d", "moleculeace")
_SHIFTS = {
    "track": ("pileup", "signal"),
    "qmof": ("fidelity",),
    "molecular-fidelity": ("fidelity",),
    "drugood3d": ("assay", "scaffold", "size"),
    "moleculeace": ("assay", "scaffold", "size"),
}


@dataclass(frozen=True)
class GeometricSpec:
    """One GeSS shift case (or an offline stand-in for one).

    Attributes
    ----------
    name : str
        Canonical name (``track-pileup-pu50``, ``qmof-hse06_10hf``, ``drugood3d-size``, ...).
    family : str
        ``track``, ``qmof``, ``molecular-fidelity``, ``drugood3d`` or ``moleculeace``.
    shift : str
        The shift it realises (GeSS table 2): ``pileup``, ``signal``, ``fidelity``,
        ``assay``, ``scaffold`` or ``size``.
    case : str
        The target of the shift: ``pu50``/``pu90``, ``tau3mu``/``zp20``/``zp10``,
        ``hse06``/``hse06_10hf``, or the DrugOOD shift name.
    task : str
        ``binary`` or ``regression`` (one label per point cloud, GeSS section 3.2).
    metric : str
        ``accuracy`` (Track), ``auroc`` (DrugOOD-3D, as DrugOOD) or ``mae`` (fidelity).
    point_labels : bool
        Each point also carries a label (Track: ``node_label`` 1 on hits left by the signal
        particles, GeSS appendix C.2; the node-level tracking labels LRI is interpreted by).
    info_levels : tuple of str
        Information levels the dataset provides (:data:`INFO_LEVELS`).
    knn_k : int
        Neighbours of the kNN graph in the GeSS configs (``backbone.kr``: Track 5, QMOF 10,
        DrugOOD-3D 3); stand-ins use the value of the case they stand in for.
    gess_config : str
        Folder of the GeSS authors' configs for this case (``configs/core_config/<...>``);
        stand-ins name the case they stand in for.
    stand_in_for : str or None
        For an offline stand-in, the GeSS case it replaces (``None`` for GeSS's own).
    data : str
        What must be on disk (or installed) to load it.
    paper : str
        Where GeSS defines the case.
    """

    name: str
    family: str
    shift: str
    case: str
    task: str
    metric: str
    knn_k: int
    gess_config: str
    data: str
    paper: str
    point_labels: bool = False
    info_levels: tuple[str, ...] = INFO_LEVELS
    stand_in_for: str | None = None

    def __post_init__(self) -> None:
        if self.family not in _FAMILIES:
            raise ValueError(f"{self.name}: family must be one of {_FAMILIES}, got {self.family!r}")
        if self.shift not in _SHIFTS[self.family]:
            raise ValueError(f"{self.name}: shift of a {self.family} case must be one of "
                             f"{_SHIFTS[self.family]}, got {self.shift!r}")
        if self.task not in GEOMETRIC_TASKS:
            raise ValueError(f"{self.name}: task must be one of {GEOMETRIC_TASKS}, got {self.task!r}")
        if self.metric not in GEOMETRIC_METRICS:
            raise ValueError(f"{self.name}: metric must be one of {tuple(GEOMETRIC_METRICS)}, got {self.metric!r}")
        if (self.task == "regression") != (self.metric == "mae"):
            raise ValueError(f"{self.name}: metric {self.metric!r} does not fit task {self.task!r}")
        bad = [lv for lv in self.info_levels if lv not in INFO_LEVELS]
        if bad:
            raise ValueError(f"{self.name}: info levels {bad} unknown; accepted: {INFO_LEVELS}")

    @property
    def metric_label(self) -> str:
        """The metric as GeSS's tables name it: ``ACC``, ``AUC`` or ``MAE``."""
        return GEOMETRIC_METRICS[self.metric]

    @property
    def higher_is_better(self) -> bool:
        return self.metric != "mae"

    @property
    def stand_in(self) -> bool:
        return self.stand_in_for is not None

    @property
    def kind(self) -> str:
        """What the data is (:data:`gs_data.DATA_KINDS`): ``"stand-in"`` for an offline
        stand-in, ``"simulated"`` for Track (events simulated with PYTHIA 8 + ACTS as GeSS
        did, not GeSS's files), else ``"real"``."""
        return "stand-in" if self.stand_in else "simulated" if self.family == "track" else "real"


_TRACK_DATA = ("simulated with PYTHIA 8 + ACTS (the track extra: pip install 'pythia8mc>=8.317.2,<8.318' 'pyacts>=48,<49') or read from the "
               "Track event cache ($GS_CACHE_DIR/track)")
_QMOF_DATA = "QMOF's qmof.csv and relaxed_structures/ under <root> (default data_root()/qmof)"
_DRUGOOD_DATA = "DrugOOD's lbap_core_ic50_<shift>.json under <root> (default data_root()/drugood)"
_ACE_DATA = ("the MoleculeACE package's CSVs (pip install --no-deps MoleculeACE) or data_dir= a "
             "folder of CHEMBL*_{Ki,EC50}.csv files")


def _track(shift: str, case: str, config: str) -> GeometricSpec:
    return GeometricSpec(
        f"track-{shift}-{case}", "track", shift, case, "binary", "accuracy", 5,
        f"Track/{shift}/{config}", _TRACK_DATA, "GeSS 3.2.1, tables 4-5, appendix C.2",
        point_labels=True,
    )


def _build() -> dict[str, GeometricSpec]:
    specs = [
        _track("pileup", "pu50", "PU50"),
        _track("pileup", "pu90", "PU90"),
        _track("signal", "tau3mu", "tau"),
        _track("signal", "zp20", "zp_20"),
        _track("signal", "zp10", "zp_10"),
    ]
    for t in ("hse06", "hse06_10hf"):
        specs.append(GeometricSpec(f"qmof-{t}", "qmof", "fidelity", t, "regression", "mae", 10,
                                   f"QMOF/fidelity/{t}", _QMOF_DATA, "GeSS 3.2.2, appendix C.3"))
    for t, name in (("hse06", "molecular-fidelity"), ("hse06_10hf", "molecular-fidelity-hse06_10hf")):
        specs.append(GeometricSpec(
            name, "molecular-fidelity", "fidelity", t, "regression", "mae", 10,
            f"QMOF/fidelity/{t}", "shipped with gs-data", "GeSS 3.2.2 mechanism (ours)",
            stand_in_for=f"qmof-{t}",
        ))
    for s in ("assay", "scaffold", "size"):
        specs.append(GeometricSpec(f"drugood3d-{s}", "drugood3d", s, s, "binary", "auroc", 3,
                                   f"DrugOOD_3D/{s}", _DRUGOOD_DATA, "GeSS 3.2.3, appendix C.4"))
        specs.append(GeometricSpec(
            f"moleculeace-{s}", "moleculeace", s, s, "binary", "auroc", 3, f"DrugOOD_3D/{s}",
            _ACE_DATA, "GeSS 3.2.3 with DrugOOD-style curation of MoleculeACE (ours)",
            stand_in_for=f"drugood3d-{s}",
        ))
    return {s.name: s for s in specs}


#: Every geometric dataset by canonical name.
GEOMETRIC_DATASETS: dict[str, GeometricSpec] = _build()


def available_geometric() -> list[str]:
    """Canonical names of the geometric datasets (Track, QMOF, its stand-in, DrugOOD-3D and its stand-in)."""
    return list(GEOMETRIC_DATASETS)


def _key(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(" ", "-")


_BY_KEY = {_key(n): n for n in GEOMETRIC_DATASETS}


def is_geometric(name: Any) -> bool:
    """True if ``name`` (case-insensitive, ``_`` = ``-``) names a geometric dataset."""
    return isinstance(name, str) and _key(name) in _BY_KEY


def geometric_spec(name: str) -> GeometricSpec:
    """The :class:`GeometricSpec` of ``name`` (case-insensitive; ``_`` and ``-`` alike).

    Raises
    ------
    TypeError, ValueError
        ``name`` is not a string, or names no geometric dataset (the message lists them).
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {type(name).__name__}; accepted: "
                        f"{', '.join(GEOMETRIC_DATASETS)}")
    key = _key(name)
    if key not in _BY_KEY:
        raise ValueError(f"unknown geometric dataset {name!r}; accepted: {', '.join(GEOMETRIC_DATASETS)}")
    return GEOMETRIC_DATASETS[_BY_KEY[key]]


def _root(spec: GeometricSpec, root: str | os.PathLike | None) -> Path:
    if root is not None:
        return Path(root).expanduser()
    from gs_data._io import data_root

    return data_root() / ("qmof" if spec.family == "qmof" else "drugood")


def data_file(spec: GeometricSpec, root: str | os.PathLike | None) -> Path | None:
    """The one file a QMOF or DrugOOD-3D case is read from under ``root`` (``None`` for the
    families that are not one file: Track, MoleculeACE, the molecular stand-in); gs-bench
    fingerprints it. Whether it exists is not checked (:func:`missing_geometric_data` does)."""
    if spec.family == "qmof":
        from gs_data.materials.qmof import QMOF_CSV

        return _root(spec, root) / QMOF_CSV
    if spec.family == "drugood3d":
        from gs_data.molecules.drugood import drugood_file_name

        return _root(spec, root) / drugood_file_name(spec.shift)
    return None


def missing_geometric_data(name: str, *, root: str | os.PathLike | None = None,
                           data_dir: str | os.PathLike | None = None) -> str | None:
    """Why the files of ``name`` are not on this machine, or ``None`` when they are.

    Covers the families read from files (QMOF, DrugOOD-3D, MoleculeACE); Track is made by
    its simulator or read from the event cache, which ``gs_data.track.cached_event_count``
    checks per sample, and the molecular stand-in is shipped. Nothing is read or imported
    beyond a file-system check (MoleculeACE is located with ``importlib.util.find_spec``).
    """
    spec = geometric_spec(name)
    path = data_file(spec, root)
    if path is not None:
        from gs_data._io import not_a_regular_file

        why = not_a_regular_file(path)
        if why is not None:
            return why
        return None if path.is_file() else f"{path} is missing: place {spec.data.split(' under ')[0]} there"
    if spec.family == "moleculeace":
        if data_dir is not None:
            folder = Path(data_dir)
            return None if folder.is_dir() else f"data_dir {folder} is not a folder of CHEMBL*_{{Ki,EC50}}.csv files"
        import importlib.util

        if importlib.util.find_spec("MoleculeACE") is None:
            return f"MoleculeACE is not installed: {_ACE_DATA}"
    return None


def load_geometric(
    name: str,
    *,
    info_level: str = "no_info",
    root: str | os.PathLike | None = None,
    seed: int = 0,
    stand_in: bool = True,
    **options: Any,
):
    """Load one geometric dataset of :data:`GEOMETRIC_DATASETS` (also: ``gs_data.load(name)``).

    Parameters
    ----------
    name : str
        A name of :func:`available_geometric`.
    info_level : {"no_info", "o_feature", "par_label"}
        GeSS's level of OOD information (section 4.1): which extra parts the split holds
        (``train_target`` at O-Feature, ``ood_labeled`` at Par-Label). Track datasets hold
        every part at every level.
    root : path, optional
        QMOF / DrugOOD-3D folder (default ``data_root()/qmof`` or ``data_root()/drugood``).
    seed : int
        Seed of the split (Track: of the simulation).
    stand_in : bool
        For ``drugood3d-*`` when DrugOOD's file is missing: load the MoleculeACE stand-in of
        the same shift instead (logged; the returned dataset's ``name`` says
        ``moleculeace-<shift>``). ``False`` raises ``FileNotFoundError`` instead.
    **options
        Passed to the family's loader. Track: ``sizes`` (``"demo"``, ``"ci"``, ``"medium"``, ``"paper"`` or a
        sizes object), ``cache_dir``, ``n_workers``, ``config``, ``callback``; QMOF / molecular
        fidelity: ``config``; DrugOOD-3D: ``par_label_per_part``, ``cache_dir``,
        ``n_workers``, ``conformer``, ``callback``, ``progress``; MoleculeACE: ``config``,
        ``data_dir``, ``targets``, ``cache_dir``, ``n_workers``, ``callback``, ``progress``.

    Returns
    -------
    gs_data.molecules.GeometricDataset or gs_data.track.TrackShiftDataset
        Both have ``split`` (a :class:`gs_splits.Split` with the scientific parts), ``y``
        and ``to_pyg(indices)``.

    Raises
    ------
    ValueError
        Unknown name or info level, or an option the family's loader does not accept.
    FileNotFoundError
        The dataset's files are missing (the message names the path to place them at).
    """
    spec = geometric_spec(name)
    if info_level not in spec.info_levels:
        raise ValueError(f"info_level must be one of {spec.info_levels}, got {info_level!r}")
    loader = _LOADERS[spec.family]
    if spec.family == "drugood3d":
        why = missing_geometric_data(spec.name, root=root)
        if why is not None:
            if not stand_in:
                raise FileNotFoundError(f"{spec.name}: {why} (or load moleculeace-{spec.shift}, "
                                        f"its offline stand-in)")
            log.warning("%s: %s; loading the MoleculeACE stand-in moleculeace-%s instead",
                        spec.name, why, spec.shift)
            spec = GEOMETRIC_DATASETS[f"moleculeace-{spec.shift}"]
            loader = _LOADERS["moleculeace"]
            options = {k: v for k, v in options.items() if k not in ("par_label_per_part", "conformer")}
    elif spec.family == "qmof":
        why = missing_geometric_data(spec.name, root=root)
        if why is not None:
            raise FileNotFoundError(f"{spec.name}: {why} (offline stand-in: {spec.name.replace('qmof', 'molecular-fidelity')})")
    return loader(spec, info_level=info_level, root=root, seed=seed, **options)


def _accepts(fn: Callable, options: dict[str, Any], spec: GeometricSpec, accepted: tuple[str, ...]) -> dict:
    bad = [k for k in options if k not in accepted]
    if bad:
        raise ValueError(f"{spec.name}: options {bad} are not accepted by {fn.__module__}.{fn.__name__}; "
                         f"accepted: {', '.join(accepted) or 'none'}")
    return options


def _load_track(spec, *, info_level, root, seed, **options):
    from gs_data.track import build_track_pileup, build_track_signal

    fn = build_track_pileup if spec.shift == "pileup" else build_track_signal
    kw = _accepts(fn, options, spec, ("sizes", "cache_dir", "n_workers", "config", "callback"))
    if spec.shift == "pileup":
        return build_track_pileup(int(spec.case[2:]), seed=seed, **kw)
    return build_track_signal(spec.case, seed=seed, **kw)


def _load_qmof(spec, *, info_level, root, seed, **options):
    from gs_data.materials import load_qmof

    kw = _accepts(load_qmof, options, spec, ("config",))
    return load_qmof(_root(spec, root), target=spec.case, info_level=info_level, seed=seed, **kw)


def _load_molecular(spec, *, info_level, root, seed, **options):
    from gs_data.materials.molecular import load_molecular_fidelity

    kw = _accepts(load_molecular_fidelity, options, spec, ("config", "path", "subset"))
    return load_molecular_fidelity(target=spec.case, info_level=info_level, seed=seed, **kw)


def _load_drugood(spec, *, info_level, root, seed, **options):
    from gs_data.molecules.drugood import load_drugood3d

    kw = _accepts(load_drugood3d, options, spec,
                  ("par_label_per_part", "cache_dir", "n_workers", "conformer", "callback",
                   "progress"))
    return load_drugood3d(_root(spec, root), spec.shift, info_level=info_level, seed=seed, **kw)


def _load_moleculeace(spec, *, info_level, root, seed, **options):
    from gs_data.molecules.moleculeace import load_moleculeace_ood

    kw = _accepts(load_moleculeace_ood, options, spec,
                  ("config", "data_dir", "targets", "cache_dir", "n_workers", "callback", "progress",
                   "records"))
    return load_moleculeace_ood(spec.shift, info_level=info_level, seed=seed, **kw)


_LOADERS: dict[str, Callable[..., Any]] = {
    "track": _load_track,
    "qmof": _load_qmof,
    "molecular-fidelity": _load_molecular,
    "drugood3d": _load_drugood,
    "moleculeace": _load_moleculeace,
}
