"""What the ``gess`` suite checks before any job starts: the names and settings
(:func:`validate`, with a fingerprint per dataset) and every planned job that cannot succeed
(:func:`problems`: an algorithm that does not apply to the task, a Par-Label size larger than
the pool, missing data). Imports neither torch nor numba at module level."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gs_bench.preflight import Problem
from gs_bench.runners.gess.spec import (
    DATASETS,
    INAPPLICABLE,
    Grid,
    Settings,
    check_hparams,
    tl_size,
    track_sim_config,
    track_sizes,
)
from gs_bench.suites import Job, SuiteConfig, check_grid

__all__ = ["validate", "fingerprint", "data_file", "data_problem", "par_label_pool_size",
           "problems", "stand_in_of"]

log = logging.getLogger("gs_bench.runners.gess")


def validate(config: SuiteConfig) -> dict[str, str]:
    """Names and settings (construction errors raise); returns a fingerprint per dataset.

    Data availability and per-job applicability are reported by :func:`problems`.
    """
    check_grid(config, Grid)
    st = Settings.from_config(config)
    check_hparams(st.hparams)
    return {d: fingerprint(d, st) for d in config.grid["dataset"]}


def fingerprint(name: str, settings: Settings | Mapping[str, Any]) -> str:
    """What identifies the data of dataset ``name`` under ``settings``: gs-data's version,
    the Track sizes and seed, the MoleculeACE targets, the data file's name and size."""
    from gs_data.__about__ import __version__

    st = Settings.from_mapping(settings)
    case = DATASETS[name]
    extra = ""
    if case.family == "track":
        extra = f" track {st.track_sizes} seed {st.track_seed}"
        if st.track_signal_min_pt_gev is not None:
            extra += f" signal pT >= {st.track_signal_min_pt_gev} GeV"
        if st.track_signal_event is not None:
            extra += f" signal event {st.track_signal_event!r}"
    elif case.family == "moleculeace" and st.targets:
        extra = " targets " + ",".join(st.targets)
    path = data_file(name, st)
    if path is not None and path.is_file():
        extra += f" {path.name}:{path.stat().st_size}"
    return f"gs-data {__version__}{extra}"


def data_file(name: str, settings: Settings | Mapping[str, Any]) -> Path | None:
    """The one file QMOF or DrugOOD-3D case ``name`` is read from (``None`` for the others)."""
    from gs_data.geometric import data_file as geometric_data_file

    st = Settings.from_mapping(settings)
    case = DATASETS[name]
    root = st.qmof_root if case.family == "qmof" else st.drugood_root
    return geometric_data_file(case, root)


def _track_requests(name: str, st: Settings) -> list[tuple[str, int, int]]:
    from gs_data.track import pileup_requests, signal_requests

    case = DATASETS[name]
    if case.shift == "pileup":
        pu = int(case.case[2:])
        return pileup_requests(pu, track_sizes(st.track_sizes, "pileup", pu))
    return signal_requests(case.case, track_sizes(st.track_sizes, "signal"))


def data_problem(name: str, settings: Settings | Mapping[str, Any]) -> str | None:
    """Why dataset ``name`` cannot be loaded on this machine (``None``: it can)."""
    st = Settings.from_mapping(settings)
    case = DATASETS[name]
    if case.family == "molecular-fidelity":
        return None  # shipped with gs-data
    if case.family in ("qmof", "drugood3d", "moleculeace"):
        from gs_data.geometric import missing_geometric_data

        key = {"qmof": "qmof_root", "drugood3d": "drugood_root", "moleculeace": "moleculeace_dir"}[case.family]
        why = missing_geometric_data(name, root=getattr(st, key) if case.family != "moleculeace" else None,
                                     data_dir=st.moleculeace_dir)
        if why is None and case.family == "moleculeace" and st.moleculeace_dir:
            folder = Path(st.moleculeace_dir)
            missing = [t for t in (st.targets or []) if not (folder / f"{t}.csv").is_file()]
            why = f"MoleculeACE targets {missing} have no CSV in {folder}" if missing else None
        if why is None:
            return None
        # gs-data names its function argument; here the user sets the suite setting
        why = why.replace("or data_dir= a folder", "or --set moleculeace_dir=PATH, a folder")
        if why.startswith("data_dir "):
            why = "moleculeace_dir " + why[len("data_dir "):]
        if case.stand_in_for is None:
            why += f" or set the suite setting {key} (offline stand-in: {stand_in_of(name)})"
        return why
    # track: every sample in the event cache, or the simulator to make the missing ones
    from gs_data.track import cached_event_count
    from gs_data.track.deps import INSTALL_HINT, simulation_available

    seed, cfg = int(st.track_seed), track_sim_config(st)
    counts = [(p, pu, n, cached_event_count(p, pu, seed, st.track_cache_dir, cfg))
              for p, pu, n in _track_requests(name, st)]
    missing = [f"{p}@PU{pu} ({c}/{n} cached)" for p, pu, n, c in counts if c < n]
    if missing and not simulation_available():
        from gs_data.track import default_cache_dir

        where = st.track_cache_dir or default_cache_dir()
        return (f"Track events not in the cache {where} ({', '.join(missing)}) and PYTHIA 8 + ACTS "
                f"are not installed to simulate them: {INSTALL_HINT}")
    return None


def stand_in_of(name: str) -> str:
    """The offline stand-in entry of GeSS case ``name`` (its family's, for the message)."""
    for other, spec in DATASETS.items():
        if spec.stand_in_for == name:
            return other
    return "none"


def par_label_pool_size(name: str, settings: Settings | Mapping[str, Any]) -> int | None:
    """Size of the labelled OOD pool of dataset ``name`` by construction (GeSS table 4 /
    appendix C.1), or ``None`` when it depends on data this machine lacks."""
    st = Settings.from_mapping(settings)
    case = DATASETS[name]
    if case.family in ("drugood3d", "moleculeace"):
        pool = st.par_label_pool
        if pool is not None:
            return 2 * (int(pool) // 2) if case.family == "drugood3d" else int(pool)
        return 2000
    if case.family == "molecular-fidelity":
        import gs_data

        ds = gs_data.load_geometric(name, info_level="par_label")
        return int(ds.split.masks["ood_labeled"].sum())
    if case.family == "qmof":
        path = data_file(name, st)
        if path is None or not path.is_file():
            return None
        from gs_data.materials import FidelityShiftConfig, fidelity_sizes

        with open(path) as fh:
            n = max(sum(1 for _ in fh) - 1, 0)
        return fidelity_sizes(n, FidelityShiftConfig(target=case.case))[0] // 3
    from gs_splits import split_sizes

    sizes = track_sizes(st.track_sizes, case.shift, int(case.case[2:]) if case.shift == "pileup" else 50)
    if case.shift == "pileup":
        return 2 * (sizes.n_target_pairs - sizes.n_ood_val_pairs - sizes.n_ood_test_pairs)
    return sizes.n_bkg_pool + split_sizes(sizes.n_target, sizes.id_fractions)[0]


def problems(config: SuiteConfig, jobs: Sequence[Job]) -> list[Problem]:
    """Every planned job that cannot succeed, grouped by cause (see :mod:`gs_bench.preflight`)."""
    out: list[Problem] = []
    count: dict[tuple, int] = {}
    for j in jobs:
        point = Job.of(j, Grid).params  # a job dict written by hand too
        key = (point.dataset, point.algorithm)
        count[key] = count.get(key, 0) + 1
    datasets = list(dict.fromkeys(k[0] for k in count))
    st = Settings.from_config(config)
    for (d, a), n in count.items():
        case = DATASETS[d]
        reason = INAPPLICABLE.get((a, case.task))
        if reason:
            out.append(Problem("construction", f"dataset={d}, algorithm={a}", reason, n))
    pools: dict[str, int | None] = {}
    for (d, a), n in count.items():
        size = tl_size(a)
        if size is None:
            continue
        if d not in pools:
            try:
                pools[d] = par_label_pool_size(d, st)
            except Exception as exc:  # noqa: BLE001 - a pool we cannot size is checked at run time
                log.info("pool size of %s unknown before running: %s", d, exc)
                pools[d] = None
        pool = pools[d]
        if pool is not None and size > pool:
            out.append(Problem(
                "construction", f"dataset={d}, algorithm={a}",
                f"Par-Label needs {size} labelled OOD samples but the pool of {d} holds {pool} "
                f"(GeSS draws N from a pool of 2 x 1000); use a smaller tl-<N>"
                + (" or larger track_sizes" if DATASETS[d].family == "track" else ""), n))
    for d in datasets:
        why = data_problem(d, st)
        if why:
            n = sum(v for (dd, _), v in count.items() if dd == d)
            out.append(Problem("data", f"dataset={d}", why, n))
    return out
