"""What several runners share: the data root of a suite, the node-classification datasets'
fingerprints (the structural-shifts, edgewise and LeBed runners read
the same gs-data datasets the same way)."""

from __future__ import annotations

import os
from pathlib import Path

from gs_bench.suites import DataMissingError, SuiteConfig, SuiteConfigError, did_you_mean

__all__ = ["check_contents", "data_root", "dataset_fingerprint", "dataset_fingerprints"]


def dataset_fingerprints(config: SuiteConfig) -> dict[str, str]:
    """Check the grid's node-classification datasets exist and fingerprint their raw files, then
    read each one (:func:`check_contents`)."""
    import gs_data

    known = set(gs_data.available_datasets())
    fingerprints: dict[str, str] = {}
    for name in config.grid["dataset"]:
        if name.lower() not in known:
            raise SuiteConfigError(f"unknown dataset {name!r}{did_you_mean(name, known)}; "
                                   f"accepted: {', '.join(sorted(known))}")
        fingerprints[name] = dataset_fingerprint(name, config.settings.get("root"))
    for name in fingerprints:
        check_contents(name, config.settings.get("root"))
    return fingerprints


def check_contents(name: str, root: str | None = None) -> None:
    """Read dataset ``name`` once before any job, so that a damaged file, or NaN / inf in its
    features, stops the plan with the file and the first bad entry named (issue 56: the dry run
    called such a suite valid and every job failed "training loss became nan at epoch 0").
    gs-data keeps what it reads in its processed cache, which the jobs then read."""
    import gs_data

    if name.lower().startswith("synthetic"):
        return
    try:
        gs_data.load(name, root=data_root(root), download=False)
    except gs_data.CorruptRawFileError as exc:
        raise SuiteConfigError(f"dataset {name!r}: {exc}") from None


def dataset_fingerprint(name: str, root: str | None = None) -> str:
    """Hash of the raw files of ``name`` (or of the embedded generator's checksum).

    Raises :class:`DataMissingError` naming a missing file and where to put it, and
    :class:`SuiteConfigError` for a raw path that is not a regular file (a FIFO, a device).
    """
    import gs_data

    if name.lower().startswith("synthetic"):
        from gs_data import synthetic

        return "synthetic:" + str(getattr(synthetic, "DEFAULT_CHECKSUM", gs_data.__version__))
    try:
        paths = gs_data.raw_paths(name, root=data_root(root))
    except DataMissingError as exc:  # no shared data folder: a problem of the machine, not the suite
        raise DataMissingError(f"dataset {name!r}: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - turned into a config error with the reason
        raise SuiteConfigError(f"dataset {name!r}: {exc}") from exc
    from gs_data import fingerprint, not_a_regular_file

    fields = []
    for p in paths:
        p = Path(p)
        why = not_a_regular_file(p)  # a FIFO, a device, a folder: not "missing" (issue 56)
        if why is not None:
            raise SuiteConfigError(f"dataset {name!r}: raw file {why}")
        if not p.is_file():
            raise DataMissingError(
                f"dataset {name!r}: raw file {p} is missing; download it or place it there "
                f"(or set GS_DATA_ROOT / the suite setting `root`)"
            )
        fields.append((p.name, p.stat().st_size))
    return fingerprint(fields, length=16)


def data_root(root: str | None) -> str | None:
    """The data root of a suite: ``root = "shared"`` means the project's shared real-data
    folder (``$GS_SHARED_DATA``, else ``../shared/datasets`` beside the current folder or one of
    its parents); any other value is a path; unset means gs-data's cache (``GS_DATA_ROOT``)."""
    if not root:
        return None
    if root != "shared":
        return root
    env = os.environ.get("GS_SHARED_DATA")
    if env:
        return env
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        cand = folder.parent / "shared" / "datasets"
        if cand.is_dir():
            return str(cand)
    raise DataMissingError(
        "the suite reads the shared real datasets (root = \"shared\") but none were found: "
        "set GS_SHARED_DATA to the folder holding structural-shifts/, planetoid/, ..."
    )
