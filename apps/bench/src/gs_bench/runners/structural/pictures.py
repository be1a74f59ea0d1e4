"""The split a ``structural-shifts`` job used, as the report shows it: the job stores its
statistics in its record and the appendix-H layout once per split in the run folder
(:func:`split_record`); the report draws both from there (:func:`split_figures`) and says what
it leaves out (:func:`split_figure_notes`), never reloading the data or recomputing a split."""

from __future__ import annotations

import json
import logging
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gs_bench.report import Figure
from gs_bench.runners.structural.spec import Grid, Settings

__all__ = ["PICTURE_DIR", "PICTURE_MAX_NODES", "SPLIT_RECORD_VERSION", "MASKS_READ", "split_record",
           "split_blocks", "split_figures", "read_picture", "notes", "split_figure_notes"]

log = logging.getLogger("gs_bench.runners.structural")

#: folder of the run directory holding one appendix-H layout per split (:func:`split_record`)
PICTURE_DIR = "split-pictures"
#: the appendix-H layout covers the whole largest connected component up to this many nodes
#: (a BFS sample above it: coauthor-physics has 34,493 nodes)
PICTURE_MAX_NODES = 20_000
#: version of the ``split`` block of a record
SPLIT_RECORD_VERSION = 1
#: the record's field naming the masks a job read, "authors" or "seeded" (under
#: ``split_source = "authors-where-published"`` it differs by ratio; the setting is in the job)
MASKS_READ = "split_source"


def split_record(data, point: Grid | Mapping[str, Any], settings: Settings | Mapping[str, Any],
                 workdir: str | Path | None) -> dict[str, Any]:
    """The ``split`` block of a job's record: what ``gs-bench report`` shows of the job's split,
    so that the report never reloads the data or recomputes the split (issue 20).

    * ``statistics``: the appendix-A numbers of the split's ID and OOD nodes
      (:func:`gs_splits.split_statistics`, ``SplitStatistics.to_dict(groups=("ID", "OOD"))``:
      class balance, degree histogram, property histogram, graph distances) and every part's
      size; a few kB.
    * ``picture``: the appendix-H layout of the graph (:func:`gs_splits.plot.graph_picture`,
      the whole largest connected component) is tens of kB, the same for every job of the
      split, so it is written once per split to ``<run folder>/split-pictures/<name>.json``
      (atomically; a job finding it there skips the layout) and the record names that file.
      ``None`` when the executor gave no run folder or it cannot be written (logged; the job
      still succeeds).
    """
    from gs_bench.store import atomic_write_text
    from gs_splits import Split, split_statistics
    from gs_splits.plot import graph_picture

    point = Grid.from_mapping(point)
    parts = ("in_train", "in_valid", "in_test", "out_valid", "out_test")
    masks = {k: getattr(data, f"{k}_mask").numpy() for k in parts}
    sigma = data.split_sigma.numpy() if "split_sigma" in data else None
    split = Split(masks=masks, sigma=sigma, metadata={"strategy": point.strategy})
    ei = data.edge_index.numpy()
    labels = data.y.numpy()
    source = Settings.from_mapping(settings).split_source
    stats = split_statistics(split, ei, labels, seed=0)
    picture = None
    if workdir:
        from gs_data import fingerprint

        fp = fingerprint({"edge_index": ei, "ood": masks["out_valid"] | masks["out_test"],
                          "max_nodes": PICTURE_MAX_NODES}, length=16)
        name = f"{point.dataset}_{point.strategy}_{source}_{fp}.json".replace("/", "_")
        path = Path(workdir) / PICTURE_DIR / name
        picture = f"{PICTURE_DIR}/{name}"
        if not path.is_file():
            n = int(data.num_nodes)
            pic = graph_picture(split, ei, max_nodes=min(max(3000, n), PICTURE_MAX_NODES), iterations=30)
            try:
                atomic_write_text(path, json.dumps(pic.to_dict()))
            except OSError as exc:  # e.g. a remote worker without the run folder: keep the job
                log.warning("could not write the split picture %s (%s); the report will leave it out", path, exc)
                picture = None
    return {
        "version": SPLIT_RECORD_VERSION,
        "dataset": point.dataset,
        "strategy": point.strategy,
        "ratio": point.ratio,
        "source": source,
        "num_nodes": int(data.num_nodes),
        "statistics": stats.to_dict(groups=("ID", "OOD")),
        "picture": picture,
    }


def split_blocks(records: Sequence[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any] | None]:
    """Per (dataset, shift) of the records, in report order: the ``split`` block of the first
    record that has one (:func:`split_record`), else ``None`` (records written before jobs
    stored their split statistics)."""
    seen: dict[tuple[str, str], dict[str, Any] | None] = {}
    for r in records:
        p = r["job"]["params"]
        key = (p["dataset"], p["strategy"])
        block = r.get("metrics", {}).get("split")
        if seen.get(key) is None:
            seen[key] = block if isinstance(block, dict) and "statistics" in block else None
    return dict(sorted(seen.items()))


def split_figures(records: Sequence[dict[str, Any]], report_dir: Path,
                  run_dir: Path | None = None) -> list[Figure]:
    """Per (dataset, shift) of the records: the split as the jobs made it, as the appendix-A
    distributions (class balance, degree, property, graph distance; ID vs OOD) and the
    appendix-H picture of the largest connected component (ID blue, OOD red).

    Drawn from what the jobs stored (:func:`split_record`): the statistics in the records and
    the layout in ``<run folder>/split-pictures/`` (``report_dir.parent``); nothing is loaded or
    split here, so the report works without the data. What the records do not have is left
    out and named by :func:`split_figure_notes`.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from gs_splits import SplitStatistics
    from gs_splits.plot import draw_graph_picture, plot_statistics

    figs: list[Figure] = []
    for (dataset, strategy), block in split_blocks(records).items():
        if block is None:
            continue
        try:
            stats = SplitStatistics.from_dict(block["statistics"])
        except ValueError as exc:
            log.warning("split figures of %s / %s skipped: %s", dataset, strategy, exc)
            continue
        ratio, source = block.get("ratio", "?"), block.get("source", "seeded")
        synth = " (synthetic)" if "synthetic" in dataset else ""
        base = f"split_{dataset}_{strategy}".replace("/", "_")
        fig = plot_statistics(None, stats=stats)
        fig.suptitle(f"{dataset}{synth}, {strategy} split ({ratio}): ID vs OOD")
        fig.savefig(report_dir / f"{base}_distributions.png", dpi=90)
        plt.close(fig)
        figs.append(Figure(f"{base}_distributions.png",
                           f"{dataset}{synth}, {strategy} split: ID vs OOD class balance, degree, "
                           "property and graph-distance distributions (appendix A)."))
        # the stored layouts live in the run folder (``run_dir``; by default the report's parent,
        # which ``gs-bench report --out`` elsewhere is not)
        picture = read_picture(run_dir if run_dir is not None else report_dir.parent, block.get("picture"))
        if picture is None:
            continue
        fig = draw_graph_picture(picture)
        fig.savefig(report_dir / f"{base}_graph.png", dpi=90)
        plt.close(fig)
        sizes = stats.sizes
        figs.append(Figure(f"{base}_graph.png",
                           f"{dataset}{synth}, {strategy} split ({source} masks) "
                           f"on its whole largest connected component: ID nodes blue, OOD red (appendix H); "
                           f"the graph has {sizes.get('ID', '?')} ID and {sizes.get('OOD', '?')} OOD nodes."))
    return figs


def read_picture(run_dir: Path, name: Any):
    """The stored appendix-H layout ``run_dir/name`` (a path under ``split-pictures/``), or
    ``None`` when the record names none or the file is missing or unreadable (logged)."""
    from gs_splits.plot import GraphPicture

    if not isinstance(name, str) or not name.startswith(f"{PICTURE_DIR}/") or ".." in Path(name).parts:
        return None
    from gs_bench.store import CorruptRecordError, read_json

    path = run_dir / name
    try:
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode):  # a FIFO would block the report, /dev/zero never ends (issue 56)
            log.warning("split picture %s is not a regular file; the appendix-H figure is left out", path)
            return None
        return GraphPicture.from_dict(read_json(path))
    except FileNotFoundError:
        log.info("split picture %s is not in the run folder; the appendix-H figure is left out", path)
    except (OSError, ValueError, KeyError, TypeError, CorruptRecordError) as exc:
        log.warning("split picture %s unreadable (%s); the appendix-H figure is left out", path, exc)
    return None


def notes(records: Sequence[dict[str, Any]], run_dir: Path) -> list[str]:
    """Report notes after the suite's figures: :func:`split_figure_notes`."""
    return split_figure_notes(records, run_dir)


def split_figure_notes(records: Sequence[dict[str, Any]], run_dir: Path) -> list[str]:
    """Say which split figures the report leaves out and why (records written before the jobs
    stored their split statistics, or a run folder without its ``split-pictures/``)."""
    blocks = split_blocks(records)
    old = [f"{d} / {s}" for (d, s), b in blocks.items() if b is None]
    no_pic = [f"{d} / {s}" for (d, s), b in blocks.items()
              if b is not None and read_picture(run_dir, b.get("picture")) is None]
    notes = []
    if old:
        notes.append(
            f"Split figures not drawn for {', '.join(old)}: these records were written before the jobs "
            "stored their split statistics, and the report does not reload data or recompute splits. "
            "The split sizes table comes from the records; re-run the jobs (into a new folder) to "
            "get the figures, or draw the split with `gs-splits report`."
        )
    if no_pic:
        notes.append(
            f"Split on the graph (appendix H) not drawn for {', '.join(no_pic)}: its layout is not in "
            f"{PICTURE_DIR}/ of this run folder (copy that folder with the records to keep the pictures)."
        )
    return notes
