"""The GeSS fidelity shift (section 3.2.2, table 4, table 6).

QMOF gives every material a band gap at up to four levels of theory, from low to high
fidelity: PBE, HLE17, HSE06* (HSE06 with 10% exact exchange, ``hse06_10hf``) and HSE06.
GeSS turns this into a concept shift: each material is used once, at one fidelity.

* target domain: ``target`` (HSE06 or HSE06*), ``n_target`` materials (6,000), cut into
  ``ood_val`` / ``ood_test`` / Par-Label pool, a third each (2,000 / 2,000 / 2,000);
* source domain: the other two high fidelities with ``n_other_high`` materials each
  (2,000), and PBE for all remaining materials (GeSS table 6: "Mixed Fidelity");
  the source is cut 0.75 / 0.125 / 0.125 into ``train / iid_val / iid_test`` (table 4:
  10,781 / 1,796 / 1,798); the subgroups are the three source fidelities.

Sizes on smaller data: GeSS's counts refer to 20,375 materials (table 4 total). When a
dataset has fewer materials and ``scale_to_data`` is True (default), ``n_target`` and
``n_other_high`` are scaled by ``n_materials / 20375`` (rounded; ``n_target`` rounded
down to a multiple of 3), keeping GeSS's proportions (29.4% target, 9.8% per other
high fidelity). With ``scale_to_data=False`` the counts are used as given (and must fit).

Materials are drawn for the fidelities in the order target, then the other high
fidelities (HSE06, HSE06*, HLE17 order minus the target), each only among materials that
have a label at that fidelity and were not drawn before; every other material with a
PBE label is a PBE sample. A material that ends up with no label at its fidelity is
skipped (``missing_label``) and counted.

The ``ood_val`` / ``ood_test`` parts are the same at every information level (GeSS
appendix E); the third target share is the Par-Label pool ``ood_labeled`` at the
``par_label`` level and unused at ``no_info``; ``o_feature`` adds ``train_target``, the
unlabeled features of the whole target domain.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gs_data.molecules.report import ProcessingReport
from gs_splits import INFO_LEVELS, Split, scientific_split

__all__ = [
    "FIDELITIES",
    "FIDELITY_LABELS",
    "GESS_QMOF_TOTAL",
    "GESS_MEAN_GAPS",
    "FidelityShiftConfig",
    "fidelity_sizes",
    "assign_fidelities",
    "fidelity_split",
]

#: QMOF's levels of theory, low to high fidelity (QMOF column names ``outputs.<f>.bandgap``).
FIDELITIES: tuple[str, ...] = ("pbe", "hle17", "hse06_10hf", "hse06")
#: Display names used by GeSS.
FIDELITY_LABELS = {"pbe": "PBE", "hle17": "HLE17", "hse06_10hf": "HSE06*", "hse06": "HSE06"}
#: Number of QMOF materials in GeSS's fidelity shift (table 4: 10781+1796+1798+6000).
GESS_QMOF_TOTAL = 20375
#: GeSS table 5: average QMOF band gap (eV) per fidelity.
GESS_MEAN_GAPS = {"pbe": 2.09, "hle17": 2.68, "hse06_10hf": 2.95, "hse06": 3.86}


@dataclass(frozen=True)
class FidelityShiftConfig:
    """GeSS fidelity-shift settings (section 3.2.2, tables 4 and 6).

    Attributes
    ----------
    target : {"hse06", "hse06_10hf"}
        Target fidelity (GeSS's two shift cases).
    n_target : int
        Target samples (6000 = 2000 ood_val + 2000 ood_test + 2000 Par-Label pool).
    n_other_high : int
        Samples of each of the two other high fidelities in the source (2000).
    source_sizes : (train, iid_val, iid_test) fractions of the source (0.75/0.125/0.125).
    scale_to_data : bool
        Scale ``n_target`` and ``n_other_high`` by ``n / 20375`` on smaller datasets.
    """

    target: str = "hse06"
    n_target: int = 6000
    n_other_high: int = 2000
    source_sizes: tuple[float, float, float] = (0.75, 0.125, 0.125)
    scale_to_data: bool = True

    def __post_init__(self) -> None:
        if self.target not in ("hse06", "hse06_10hf"):
            raise ValueError(f"target must be 'hse06' or 'hse06_10hf' (GeSS), got {self.target!r}")
        if self.n_target < 3 or self.n_other_high < 0:
            raise ValueError(
                f"n_target must be >= 3 and n_other_high >= 0, got {self.n_target}, {self.n_other_high}"
            )


def fidelity_sizes(n_materials: int, config: FidelityShiftConfig) -> tuple[int, int]:
    """``(n_target, n_other_high)`` for a dataset of ``n_materials`` (scaled if smaller)."""
    n_t, n_o = config.n_target, config.n_other_high
    if config.scale_to_data and n_materials < GESS_QMOF_TOTAL:
        f = n_materials / GESS_QMOF_TOTAL
        n_t = max(3, 3 * int(round(n_t * f) // 3))
        n_o = int(round(n_o * f))
    return n_t, n_o


def assign_fidelities(
    gaps: np.ndarray,
    config: FidelityShiftConfig,
    *,
    ids: np.ndarray | None = None,
    seed: int | np.random.Generator = 0,
) -> tuple[np.ndarray, ProcessingReport]:
    """The fidelity each material is used at (``""`` = skipped, no usable label).

    Parameters
    ----------
    gaps : array (N, 4)
        Band gap per material and fidelity (columns in :data:`FIDELITIES` order); NaN
        where a value is missing.
    config : FidelityShiftConfig
    ids : array (N,), optional
        Material ids for the report.
    seed : int or numpy.random.Generator

    Returns
    -------
    fidelity : numpy.ndarray of str (N,)
    report : ProcessingReport
        ``missing_label`` for each material left without a label at its fidelity.

    Raises
    ------
    ValueError
        Fewer materials have a target / other high-fidelity label than requested.
    """
    g = np.asarray(gaps, dtype=np.float64)
    if g.ndim != 2 or g.shape[1] != len(FIDELITIES):
        raise ValueError(f"gaps must have shape (N, {len(FIDELITIES)}) in order {FIDELITIES}, got {g.shape}")
    n = g.shape[0]
    has = np.isfinite(g)
    n_t, n_o = fidelity_sizes(n, config)
    rng = np.random.default_rng(seed)
    out = np.full(n, "", dtype=object)
    free = np.ones(n, dtype=bool)
    others = [f for f in ("hse06", "hse06_10hf", "hle17") if f != config.target]
    for fid, count in [(config.target, n_t)] + [(f, n_o) for f in others]:
        col = FIDELITIES.index(fid)
        cand = np.flatnonzero(free & has[:, col])
        if cand.size < count:
            raise ValueError(
                f"only {cand.size} materials have a {fid} band gap, {count} are needed "
                f"(set FidelityShiftConfig(n_target=..., n_other_high=...) smaller)"
            )
        take = np.sort(rng.choice(cand, size=count, replace=False))
        out[take] = fid
        free[take] = False
    pbe = free & has[:, FIDELITIES.index("pbe")]
    out[pbe] = "pbe"
    report = ProcessingReport(source="fidelity assignment", n_input=n)
    for i in np.flatnonzero(out == ""):
        report.skip(ids[i] if ids is not None else int(i), "missing_label",
                    "no PBE band gap and not drawn for a high fidelity")
    report.n_kept = int((out != "").sum())
    report.check()
    return out.astype(str), report


def fidelity_split(
    fidelity: np.ndarray,
    config: FidelityShiftConfig,
    *,
    info_level: str = "no_info",
    seed: int | np.random.Generator = 0,
) -> Split:
    """GeSS split of the assigned samples (``fidelity`` without skipped entries).

    Uses :func:`gs_splits.scientific_split` (source = the three other fidelities, target =
    ``config.target``) with the target cut in thirds; see the module docstring for the
    information levels.
    """
    if info_level not in INFO_LEVELS:
        raise ValueError(f"info_level must be one of {INFO_LEVELS}, got {info_level!r}")
    f = np.asarray(fidelity).astype(str)
    if (f == "").any():
        raise ValueError("fidelity contains skipped samples (''); drop them before splitting")
    n_target = int((f == config.target).sum())
    source = [x for x in FIDELITIES if x != config.target and (f == x).any()]
    split = scientific_split(
        f, source, [config.target], info_level="par_label",
        source_sizes=config.source_sizes, target_sizes=(0.5, 0.5),
        par_label_pool=n_target // 3, seed=seed,
    )
    masks = dict(split.masks)
    pool = masks.pop("ood_labeled")
    if info_level == "par_label":
        masks["ood_labeled"] = pool
    elif info_level == "o_feature":
        masks["train_target"] = f == config.target
    meta = dict(split.metadata)
    # the pool is its own third of the target here (GeSS table 4), not samples removed from
    # Val-OOD and Test-OOD: Par-Label sets are drawn from it uniformly, not half from each
    meta.pop("ood_labeled_origin", None)
    meta.update({
        "info_level": info_level,
        "par_label_pool": int(pool.sum()) if info_level == "par_label" else 0,
        "target_rule": "target cut in thirds: ood_val / ood_test / Par-Label pool (GeSS table 4)",
        "fidelity_target": config.target,
    })
    return Split(masks=masks, sigma=split.sigma, domains=split.domains, groups=split.groups, metadata=meta)
