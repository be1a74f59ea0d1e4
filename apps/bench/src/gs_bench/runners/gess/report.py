"""The report of the ``gess`` suite: one GeSS table-3 layout table per dataset (the trivial
baselines first, then each algorithm's Test-ID / Test-OOD as GeSS reports them, then the
crossed selections) and the
findings table, drawn from the records only (no dataset is loaded); the learning-curve
figures are :func:`gs_bench.runners.gess.curves.figures`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gs_bench.report import Table, fmt_mean_std, group_records
from gs_bench.runners.gess.baselines import POSITION_ROWS, baseline_values
from gs_bench.runners.gess.findings import orderings
from gs_bench.runners.gess.spec import DATASETS, Settings, algorithm_rank

__all__ = ["SELECTION_COLUMNS", "SELECTION_HEADERS", "tables", "ours_not_gess", "same_selection_comment", "part_sizes",
           "noise_sentence", "position_comparison", "GESS_TRAIN_EVENTS", "full_size", "train_size",
           "size_points", "size_curve"]

#: GeSS table 4: training events of its Track cases (PU10 events; Signal: background plus the
#: Z / Z' source signals), the size its table-3 values were trained on.
GESS_TRAIN_EVENTS = {"track-pileup-pu50": 30448, "track-pileup-pu90": 30448,
                     "track-signal-tau3mu": 26851, "track-signal-zp20": 26851,
                     "track-signal-zp10": 26851}


def full_size(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records trained on the whole training part: those of a learning-curve point
    (``train_events`` set) belong to :func:`size_curve` only, never to a table, figure or
    finding of the grid (they would enter its means)."""
    return [r for r in records if Settings.from_record(r).train_events is None]


def train_size(record: dict[str, Any]) -> int:
    """The training events a record was trained on (``train_events`` or its train part)."""
    n = Settings.from_record(record).train_events
    return int(n) if n is not None else int(record["metrics"].get("sizes", {}).get("train", 0))

#: The table columns after backbone / algorithm / info level, as (selection, test part): GeSS's
#: two columns first, then the crossed ones. GeSS's code keeps two checkpoints per run
#: (``GESS/utils/metrics.py``, ``update_id_metrics`` / ``update_ood_metrics``, called every epoch
#: by ``core/pipelines/basic_pipeline.py``): the best Val-ID epoch gives Test-ID
#: (``result.txt``), the best Val-OOD epoch gives Test-OOD (``result_ood.txt``); no file holds
#: Test-ID at the Val-OOD epoch. The paper's "select the model with the best metric score of
#: Val-OOD" (section 4.1, appendix F) is said of the hyperparameter search.
SELECTION_COLUMNS = (("id", "id"), ("ood", "ood"), ("ood", "id"), ("id", "ood"))
#: Their headers, in the same order.
SELECTION_HEADERS = ("Test-ID (ID-sel)", "Test-OOD (OOD-sel)", "OOD-sel Test-ID", "ID-sel Test-OOD")


def tables(records: Sequence[dict[str, Any]]) -> list[Table]:
    sized = size_curve(records)
    records = full_size(records)
    groups = group_records(records, ("dataset", "backbone", "algorithm"))
    out = []
    for ds in sorted({k[0] for k in groups}):
        rows = []
        metric = ""
        keys = sorted((k for k in groups if k[0] == ds), key=lambda k: (k[1], algorithm_rank(k[2])))
        for key in keys:
            recs = groups[key]
            metric = recs[0]["metrics"]["metric"]
            scale = 1.0 if metric == "mae" else 100.0
            row = [key[1], key[2], recs[0]["metrics"]["level"]]
            for sel, test in SELECTION_COLUMNS:
                row.append(fmt_mean_std([r["metrics"][f"{sel}_sel_test_{test}"] for r in recs], scale=scale, digits=3 if metric == "mae" else 2))
            rows.append(row)
        erm = [r for k in keys if k[2] == "erm" for r in groups[k]]
        base_rows = []
        for name, vals in baseline_values(erm).items():
            cells = [fmt_mean_std(vals[t], scale=scale, digits=3 if metric == "mae" else 2) for t in ("test_id", "test_ood")]
            base_rows.append(["—", name, "trivial", *cells, *cells])  # (id, ood) twice: SELECTION_COLUMNS
        pos_rows = []
        for name, vals in baseline_values(erm, "position_baselines").items():
            cells = [fmt_mean_std(vals[t], scale=scale) for t in ("test_id", "test_ood")]
            pos_rows.append(["—", name, "position-only", *cells, *cells])
        model_rows = rows
        rows = base_rows + pos_rows + rows
        from gs_data.geometric import GEOMETRIC_METRICS

        label = GEOMETRIC_METRICS.get(metric, metric)
        unit = "MAE (eV), lower is better" if metric == "mae" else f"{label} (%)"
        spec = DATASETS.get(ds)
        stand = f" (offline stand-in for {spec.stand_in_for}, ours)" if spec is not None and spec.stand_in else ""
        sizes = part_sizes(groups, keys)
        out.append(Table(
            f"GeSS {ds}{stand}: Test-ID / Test-OOD {unit}, mean ± std over seeds, each selected as "
            f"GeSS's code selects it (table 3 layout)",
            ["backbone", "algorithm", "info level", *SELECTION_HEADERS],
            rows,
            note="GeSS's columns first, as its code reports them: Test-ID at the epoch with the best "
                 "Val-ID metric (ID-sel) and Test-OOD at the epoch with the best Val-OOD metric "
                 "(OOD-sel; GESS/utils/metrics.py keeps one checkpoint for each); the findings below "
                 "use these two. Then the crossed pair: Test-ID at the Val-OOD epoch and Test-OOD at "
                 "the Val-ID epoch. tl-<N>: Par-Label fine-tuning on N labelled OOD samples "
                 "(GeSS TL-100/500/1000). "
                 + ("Info level \"trivial\": a predictor that learns nothing from the inputs, fitted "
                    "on train (majority class, train mean; AUC 50 by definition; Track: the best "
                    "threshold on the hit count), the same in every selection column; values from "
                    "the ERM records." if base_rows else
                    "No trivial baseline row: the ERM records carry none (written before gs-bench "
                    "stored them), so the findings on this dataset are not decided.")
                 + (" Info level \"position-only\" (Track, issue 53): physics rules that read the "
                    "hits' positions with no learning beyond one fit on train (the same in every "
                    "selection column; values from the ERM records): "
                    + "; ".join(f"{r[1]}: {POSITION_ROWS.get(r[1], r[1])}" for r in pos_rows) + "."
                    if pos_rows else "")
                 + (f" Samples per part: {sizes}." if sizes else "")
                 + noise_sentence(groups, keys, metric)
                 + position_comparison(pos_rows, model_rows, erm)
                 + ours_not_gess([r for k in keys for r in groups[k]])
                 + same_selection_comment(model_rows, [r for k in keys for r in groups[k]]),
        ))
    order = orderings(records)
    if order.rows:
        out.append(order)
    if sized is not None:
        out.append(sized)
    return out


def size_points(records: Sequence[dict[str, Any]]) -> dict[tuple[str, str, str], dict[int, list]]:
    """``{(dataset, backbone, algorithm): {training events: records}}`` for each grid point of
    which some record was trained on a subset (``train_events``), its whole-part records
    included: the points of :func:`size_curve` and of its figure; ``{}`` without such records."""
    def point(r: dict[str, Any]) -> tuple[str, str, str]:
        p = r["job"]["params"]
        return p["dataset"], p["backbone"], p["algorithm"]

    sub = {point(r) for r in records if Settings.from_record(r).train_events is not None}
    out: dict[tuple[str, str, str], dict[int, list]] = {k: {} for k in sorted(sub)}
    for r in records:
        if point(r) in out:
            out[point(r)].setdefault(train_size(r), []).append(r)
    return {k: dict(sorted(v.items())) for k, v in out.items()}


def size_curve(records: Sequence[dict[str, Any]]) -> Table | None:
    """The learning curve over training size (issue 53): for each (dataset, backbone,
    algorithm) of which some record was trained on a subset (``train_events``), one row per
    training size, the whole training part included, with Test-ID (ID-sel) and Test-OOD
    (OOD-sel), mean ± std over seeds, then GeSS's table-3 value at its size (Track, EGNN and
    DGCNN). ``None`` when no record has ``train_events``."""
    from gs_bench.published import gess_track_published

    points = size_points(records)
    if not points:
        return None
    rows = []
    for (ds, bb, algo), by_n in points.items():
        for n, rs in by_n.items():
            rows.append([ds, bb, algo, f"{n:,}", str(len(rs)),
                         *(fmt_mean_std([r["metrics"][f"{sel}_sel_test_{test}"] for r in rs], scale=100.0)
                           for sel, test in (("id", "id"), ("ood", "ood")))])
        pub = gess_track_published(bb, ds, algo)
        if pub is not None and ds in GESS_TRAIN_EVENTS:
            rows.append([ds, bb, f"{algo} (GeSS, table 3)", f"{GESS_TRAIN_EVENTS[ds]:,}", "3",
                         f"{pub[0]:.2f} ± {pub[1]:.2f}", f"{pub[2]:.2f} ± {pub[3]:.2f}"])
    return Table(
        "GeSS learning curve over training size (issue 53): Test-ID (ID-sel) and Test-OOD (OOD-sel) "
        "in %, mean ± std over seeds, against the number of training events",
        ["dataset", "backbone", "algorithm", "training events", "seeds", "Test-ID (ID-sel)", "Test-OOD (OOD-sel)"],
        rows,
        note="Points below the whole training part are trained on a fixed random subset of it "
             "(train_events; the same subset for every seed), with the same validation and test "
             "events, epochs and steps per epoch; they are left out of every other table, figure "
             "and finding. GeSS's row is its published value at its own training size (GeSS "
             "table 4), trained with its protocol and 100-200 epochs; the figure "
             "gess_size_curve.png draws the same numbers.",
    )


def ours_not_gess(records: Sequence[dict[str, Any]]) -> str:
    """A sentence naming the Track settings of ours (issue 29) that the records ran with, so a
    table trained with them never reads as GeSS's protocol: the edge features, the epochs and
    the signal muons' pT threshold; ``""`` when none is set or no record is a Track case."""
    parts = []
    track = [r for r in records if getattr(DATASETS.get(r["job"]["params"]["dataset"]), "family", None) == "track"]
    for st in (Settings.from_record(r) for r in track):
        if st.track_edge_features:
            parts.append(f"Track edges {st.track_edge_features} (GeSS: the direction in the coordinates' frame)")
        if st.track_pt_norm:
            parts.append(f"Point Transformer blocks with {st.track_pt_norm} norm (GeSS: none)")
        if st.track_pt_delta and st.track_pt_delta != "position":
            parts.append(f"Point Transformer's positional term {st.track_pt_delta} "
                         "(GeSS: linear in p_i - p_j)")
        if st.track_max_epochs:
            parts.append(f"{st.track_max_epochs} Track epochs")
        if st.train_events is not None:
            parts.append(f"trained on {st.train_events} of the training events")
        if st.track_signal_min_pt_gev is not None:
            parts.append(f"signal muons with pT >= {st.track_signal_min_pt_gev} GeV")
        if st.track_signal_event == "decay":
            parts.append("signal events: the signal muons only, no other particle of their hard event")
    return f" Not GeSS's protocol (ours): {'; '.join(sorted(set(parts)))}." if parts else ""


def same_selection_comment(rows: Sequence[Sequence[str]], records: Sequence[dict[str, Any]]) -> str:
    """A paragraph for a dataset table whose OOD-sel and ID-sel columns are equal in every
    algorithm row (``rows``: backbone, algorithm, level, then the 4 :data:`SELECTION_COLUMNS`
    cells), saying so and why from the records' selected epochs; ``""`` otherwise (or without
    rows). The trivial rows are equal by construction and are not passed."""
    # cells 3-6 follow SELECTION_COLUMNS: id/id, ood/ood, ood/id, id/ood
    if not rows or any(r[3] != r[5] or r[4] != r[6] for r in rows):
        return ""
    pairs = [(r["metrics"].get("ood_sel_epoch"), r["metrics"].get("id_sel_epoch")) for r in records]
    pairs = [p for p in pairs if None not in p]
    text = "\n\n**OOD-sel and ID-sel are identical in every row.** "
    if pairs and all(a == b for a, b in pairs):
        epochs = sorted({int(a) for a, _ in pairs})
        # epochs count from 0: the last of max_epochs is max_epochs - 1 (unset: none is known)
        last = {int(Settings.from_record(r).max_epochs or 0) - 1 for r in records}
        at_end = f" (the last epoch, {epochs[0]})" if len(epochs) == 1 and last == {epochs[0]} else ""
        return (text + f"In each of the {len(pairs)} runs the best Val-OOD epoch is also the best Val-ID "
                f"epoch{at_end}: epochs {', '.join(map(str, epochs))}. The two selections pick the same "
                "model here, so the columns say nothing about model selection; with longer training the "
                "validation curves can peak apart.")
    return text + ("The two selections picked different epochs in some runs, with the same test values."
                   if pairs else "The records do not say which epochs were selected.")


def noise_sentence(groups: dict, keys: list, metric: str) -> str:
    """The test-part sizes of a dataset table and the margin they allow (ACC / AUC): 2 standard
    errors of one accuracy at 50 % (the widest, ``2 sqrt(0.25 / n)``) and of the difference of
    two independent ones (``sqrt(2)`` times that), in points; ``""`` for MAE or without sizes."""
    if metric not in ("accuracy", "auroc"):
        return ""
    sizes: dict[str, int] = {}
    for key in keys:
        for r in groups[key]:
            for part, n in (r["metrics"].get("sizes") or {}).items():
                sizes.setdefault(part, int(n))
    bits = []
    for part, label in (("iid_test", "Test-ID"), ("ood_test", "Test-OOD")):
        n = sizes.get(part)
        if n:
            one = 100.0 * 2.0 * (0.25 / n) ** 0.5
            bits.append(f"{label} {n} events: 2 SE at most {one:.1f} points for one value, "
                        f"{one * 2 ** 0.5:.1f} for a difference of two")
    return (" Noise: " + "; ".join(bits) + " (binomial, at 50 %; the seeds' spread comes on top)."
            if bits else "")


def position_comparison(pos_rows: Sequence[Sequence[str]], model_rows: Sequence[Sequence[str]],
                        erm: Sequence[dict[str, Any]]) -> str:
    """A sentence per column (GeSS's Test-ID, ID-selected, and Test-OOD, OOD-selected) saying
    whether the strongest position-only row beats every model row of the table, from the
    records' means (``pos_rows`` / ``model_rows``: the table's rows, cells as
    :data:`SELECTION_COLUMNS`); ``""`` without position rows. The negative control
    (``erm-shuffled``) does not count as a model."""
    if not pos_rows or not model_rows:
        return ""

    def mean(cell: str) -> float | None:
        try:
            return float(cell.split(" ")[0])
        except (ValueError, IndexError):
            return None

    out = []
    for i, label in ((3, "Test-ID"), (4, "Test-OOD")):
        pos = [(mean(r[i]), r[1]) for r in pos_rows if mean(r[i]) is not None]
        mod = [(mean(r[i]), f"{r[1]} ({r[0]})") for r in model_rows
               if mean(r[i]) is not None and r[1] != "erm-shuffled"]
        if not pos or not mod:
            continue
        (pv, pn), (mv, mn) = max(pos), max(mod)
        if pv > mv:
            out.append(f"on {label} the position-only {pn} ({pv:.2f}) beats every model (best: {mn}, {mv:.2f})")
        else:
            out.append(f"on {label} the best model, {mn} ({mv:.2f}), is at or above the strongest "
                       f"position-only row ({pn}, {pv:.2f})")
    return (" **Position-only rows against the models:** " + "; ".join(out) + ".") if out else ""


def part_sizes(groups: dict, keys: list) -> str:
    """``train 450, iid_val 74, ...`` of the first record of a dataset that has them (the
    parts every algorithm trains and is evaluated on; the unlabeled target pool of the
    O-Feature level and the labelled pool of the Par-Label level are added when run)."""
    sizes: dict[str, int] = {}
    for key in keys:
        for r in groups[key]:
            for part, n in (r["metrics"].get("sizes") or {}).items():
                sizes.setdefault(part, int(n))
    order = ["train", "iid_val", "iid_test", "ood_val", "ood_test", "train_target", "ood_labeled"]
    names = {"train_target": "O-Feature pool", "ood_labeled": "Par-Label pool"}
    return ", ".join(f"{names.get(k, k)} {sizes[k]}" for k in order if k in sizes)
