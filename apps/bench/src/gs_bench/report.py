"""Paper-style reports: tables (Markdown, HTML, LaTeX) and figures from a results folder."""

from __future__ import annotations

import inspect
import json
import math
import shutil
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gs_bench.store import CorruptRecordError, ResultsStore, atomic_write_text

__all__ = ["Table", "Figure", "mean_std", "fmt_mean_std", "build_report", "archived_records", "data_kinds",
           "embed_image", "has_paper_values", "FORMATS", "ARCHIVE", "split_by_settings", "record_variant",
           "describe_variants"]

FORMATS = ("md", "html", "latex")


@dataclass
class Table:
    """A rendered-once table: a title, column names and rows of cells (strings)."""

    title: str
    columns: list[str]
    rows: list[list[str]]
    note: str = ""

    def to_markdown(self) -> str:
        out = [f"### {self.title}", ""]
        def cell(c: str) -> str:  # a literal | would end the cell
            return c.replace("|", "\\|")

        out.append("| " + " | ".join(map(cell, self.columns)) + " |")
        out.append("|" + "|".join("---" for _ in self.columns) + "|")
        out += ["| " + " | ".join(map(cell, r)) + " |" for r in self.rows]
        if self.note:
            out += ["", self.note]
        return "\n".join(out) + "\n"

    def to_html(self) -> str:
        """The HTML of :meth:`to_markdown` (the same renderer as the HTML report)."""
        from gs_bench.mdhtml import markdown_to_html

        return markdown_to_html(self.to_markdown())

    def to_latex(self) -> str:
        def esc(s: str) -> str:
            for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"), ("#", r"\#"), ("±", r"$\pm$"), ("Δ", r"$\Delta$")):
                s = s.replace(a, b)
            return s

        cols = "l" * len(self.columns)
        lines = [
            r"\begin{table}[t]",
            r"\centering",
            rf"\caption{{{esc(self.title)}}}",
            rf"\begin{{tabular}}{{{cols}}}",
            r"\toprule",
            " & ".join(esc(c) for c in self.columns) + r" \\",
            r"\midrule",
        ]
        lines += [" & ".join(esc(c) for c in r) + r" \\" for r in self.rows]
        lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
        return "\n".join(lines) + "\n"


@dataclass
class Figure:
    """A figure file written into the report folder, with a caption."""

    path: str
    caption: str
    extra: dict[str, Any] = field(default_factory=dict)


#: a cell of a paper's table further than this (in points) from the printed value is "off"
#: (the reports' off-cells lists and ``gs-bench compare``'s "beyond")
OFF_THRESHOLD = 5.0


def cells_off(cells: Iterable[dict[str, Any]], threshold: float = OFF_THRESHOLD) -> list[dict[str, Any]]:
    """The paper cells (dicts with a ``delta`` in points) further than ``threshold`` from the paper."""
    return [c for c in cells if abs(c["delta"]) > threshold]


def cell_against_paper(fields: dict[str, Any], values: Iterable[float], paper: float) -> dict[str, Any] | None:
    """One cell of a paper's table that our runs fill: ``fields`` plus ``n`` (runs with a
    value), ``ours`` (their mean, in percent), ``paper`` and ``delta = ours - paper``; None
    where no run gives a value. The structural-shifts and edgewise reports and ``compare``
    build their cells with it."""
    m, _, n = mean_std(values)
    if not n:
        return None
    return {**fields, "n": n, "ours": m * 100, "paper": paper, "delta": m * 100 - paper}


def mean_std(values: Iterable[float]) -> tuple[float, float, int]:
    arr = np.asarray([v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))], dtype=float)
    if arr.size == 0:
        return float("nan"), float("nan"), 0
    return float(arr.mean()), float(arr.std(ddof=0)), int(arr.size)


def fmt_mean_std(values: Iterable[float], scale: float = 100.0, digits: int = 2) -> str:
    """``mean ± std (n=k)`` (scaled): every cell says over how many values it is taken; a cell
    of one value prints ``value (n=1)``, not a spread of 0."""
    m, s, n = mean_std(values)
    if n == 0:
        return "—"
    if n == 1:
        return f"{m * scale:.{digits}f} (n=1)"
    return f"{m * scale:.{digits}f} ± {s * scale:.{digits}f} (n={n})"


def has_paper_values(rows: Sequence[Sequence[str]]) -> bool:
    """Whether any cell of ``rows`` carries a paper value (``"(paper 81.20, ..."``), so a
    table's note promises the paper's values only where they are printed."""
    import re

    return any(re.search(r"\(paper -?\d", c) for r in rows for c in r)


def group_records(records: Sequence[dict[str, Any]], keys: Sequence[str]) -> dict[tuple, list[dict[str, Any]]]:
    groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for rec in records:
        if rec.get("status") != "ok":
            continue
        params = rec["job"]["params"]
        groups[tuple(params.get(k) for k in keys)].append(rec)
    return groups


def _flatten(table: dict[str, Any], prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in table.items():
        if isinstance(v, dict) and v:
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = json.dumps(v, sort_keys=True, default=str)
    return out


def _settings_defaults(suite: str | None) -> dict[str, str]:
    """The flattened defaults of ``suite``'s ``Settings`` (empty when unknown), so that a
    setting left out and the same value written out are one variant."""
    import dataclasses

    if not suite:
        return {}
    try:
        from gs_bench.suites import runner_schema

        return _flatten(dataclasses.asdict(runner_schema(suite)[1]()))
    except Exception:  # noqa: BLE001 - an unknown suite or a Settings without defaults
        return {}


def record_variant(rec: dict[str, Any], sweep: Sequence[str] = ()) -> tuple[tuple[str, str], ...]:
    """The settings of a record, flattened (``train.lr``), with the suite's defaults filled
    in, as a hashable value: two records of one variant differ only by grid point and seed
    (and by the ``sweep`` settings, :attr:`gs_bench.runner.SuiteRunner.sweep_settings`, which
    are left out)."""
    job = rec.get("job") or {}
    flat = {**_settings_defaults(job.get("suite")), **_flatten(job.get("settings") or {})}
    return tuple(sorted((k, v) for k, v in flat.items() if k not in sweep))


def describe_variants(variants: Sequence[tuple[tuple[str, str], ...]]) -> list[str]:
    """For each variant, ``"key=value, ..."`` over the keys whose values differ between the
    variants (``""`` when they are all equal)."""
    dicts = [dict(v) for v in variants]
    keys = sorted({k for d in dicts for k in d if len({d2.get(k) for d2 in dicts}) > 1})
    return [", ".join(f"{k}={d[k] if k in d else 'unset'}" for k in keys) for d in dicts]


def split_by_settings(records: Sequence[dict[str, Any]],
                      sweep: Sequence[str] = ()) -> list[tuple[str, list[dict[str, Any]]]]:
    """The records of one suite in groups that never mix two runs: one group per settings
    variant (:func:`record_variant`), and inside one, apart again when a grid point and seed
    occur twice (records of other package versions, data or ``--device-in-key``). Each group
    comes with a label naming what sets it apart (``"lr=0.001"``; ``""`` for a single group),
    so a cell's mean is never taken over two settings and no seed is counted twice. The
    ``sweep`` settings (a runner's ``sweep_settings``) do not set records apart: the runner's
    tables receive every value of them together."""
    by_variant: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for rec in records:
        by_variant[record_variant(rec, sweep)].append(rec)
    variants = sorted(by_variant, key=lambda v: min(r["key"] for r in by_variant[v]))
    labels = describe_variants(variants)
    out: list[tuple[str, list[dict[str, Any]]]] = []
    for variant, label in zip(variants, labels, strict=True):
        for sub_label, recs in _split_duplicates(by_variant[variant], sweep):
            out.append((", ".join(x for x in (label, sub_label) if x), recs))
    return out


def _split_duplicates(records: list[dict[str, Any]],
                      sweep: Sequence[str] = ()) -> list[tuple[str, list[dict[str, Any]]]]:
    def point(r: dict[str, Any]) -> tuple[str, Any, str]:
        swept = {k: (r["job"].get("settings") or {}).get(k) for k in sweep}
        return (json.dumps(r["job"].get("params"), sort_keys=True, default=str), r["job"].get("seed"),
                json.dumps(swept, sort_keys=True, default=str))

    if len({point(r) for r in records}) == len(records):
        return [("", records)]
    by_versions: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        by_versions[tuple(sorted(((r.get("worker") or {}).get("versions") or {}).items()))].append(r)
    groups = sorted(by_versions.items(), key=lambda kv: min(r["key"] for r in kv[1]))
    labels = describe_variants([tuple((k, str(v)) for k, v in vs) for vs, _ in groups])
    out = []
    for (_, recs), label in zip(groups, labels, strict=True):
        layers: list[tuple[set, list[dict[str, Any]]]] = []  # no grid point twice in a layer
        for r in sorted(recs, key=lambda r: r["key"]):
            free = next((lay for lay in layers if point(r) not in lay[0]), None)
            if free is None:
                free = (set(), [])
                layers.append(free)
            free[0].add(point(r))
            free[1].append(r)
        for i, (_, lay) in enumerate(layers):
            extra = (f"records under other job keys (data files or --device-in-key), set {i + 1}"
                     if len(layers) > 1 else "")
            out.append((", ".join(x for x in ((f"versions {label}" if label else ""), extra) if x), lay))
    return out


#: the records of an archived run folder, one JSON record per line (``apps/bench/measured/*/``)
ARCHIVE = "results.jsonl"


def archived_records(path: Path) -> list[dict[str, Any]]:
    """The complete records of an archive ``results.jsonl`` (one record per line, as the
    measured runs in ``apps/bench/measured/`` are committed). A line that is not a complete
    record is skipped with a warning naming the file and the line."""
    import logging

    log = logging.getLogger(__name__)
    out = []
    with open(path, encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                if not isinstance(rec, dict):
                    raise CorruptRecordError(f"a JSON {type(rec).__name__}, not a record")
                ResultsStore.check_record(rec)
            except (ValueError, RecursionError, CorruptRecordError) as exc:
                log.warning("%s line %d skipped: not a complete job record (%s)", path, i,
                            exc if not isinstance(exc, RecursionError) else "nested too deep")
                continue
            out.append(rec)
    return out


def build_report(out: str | Path, fmt: str = "md", *, store: ResultsStore | None = None,
                 report_dir: str | Path | None = None) -> Path:
    """Write the report of the results folder ``out`` and return the report file.

    The records come from ``out/results/``, or, for an archived run folder without it, from
    ``out/results.jsonl`` (one record per line). Every table and figure is drawn from the
    records and the files the jobs wrote into ``out`` (e.g. ``split-pictures/``): no dataset
    is loaded and no split computed, so the data root may be gone.

    ``store``: the store to read (default: ``ResultsStore(out)``, which quarantines unreadable
    records only when ``out`` is a run folder, :meth:`ResultsStore.is_run_folder`).
    ``report_dir``: where the report and its figures go (default: ``out/report``); another
    folder leaves a results folder one may not write into (a committed run) as it is.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}")
    out = Path(out)
    records = _report_records(out, store)
    report_dir = out / "report" if report_dir is None else Path(report_dir)
    report_dir.mkdir(parents=True, exist_ok=True)
    by_suite: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for rec in records:
        by_suite[rec["job"]["suite"]].append(rec)
    run_info = _run_info(out)
    sections: list[tuple[str, list[Table], list[Figure]]] = []
    from gs_bench.runners import RUNNERS

    order = list(RUNNERS)  # the papers' order: structural shifts, edgewise, LeBed, GeSS
    for suite in sorted(by_suite, key=lambda s: (order.index(s) if s in order else len(order), s)):
        sections += _suite_sections(suite, by_suite[suite], out, report_dir)
    failed = [r for r in records if r.get("status") != "ok"]
    run_info = {**run_info, "workers": workers_summary(records), "data": data_kinds(records),
                "sources": sources_summary(records)}
    text = _render(sections, fmt, run_info, len(records), failed, report_dir)
    name = {"md": "report.md", "html": "report.html", "latex": "report.tex"}[fmt]
    path = report_dir / name
    atomic_write_text(path, text)
    return path


def _report_records(out: Path, store: ResultsStore | None) -> list[dict[str, Any]]:
    """The records of the run folder ``out`` (:func:`build_report`): the store's, else the
    archive's; a ``ValueError`` for a missing folder or one without records."""
    if not out.is_dir():
        raise ValueError(f"run folder {out} does not exist (or is not a folder); give the --out "
                         f"folder of a `gs-bench run` or a committed run in apps/bench/measured/")
    if store is None:
        store = ResultsStore(out)
        store.moves = store.is_run_folder()
    records = list(store.records())
    if not records and (out / ARCHIVE).is_file():
        records = archived_records(out / ARCHIVE)
    if not records:
        raise ValueError(f"no results in {out}: neither records in {out / 'results'} nor an archived "
                         f"{ARCHIVE}; run `gs-bench run ... --out {out}` first")
    return records


def _run_info(out: Path) -> dict[str, Any]:
    """The last readable ``run-*.json`` of ``out`` (the command line and environment of the
    report's header); a damaged one is left out with a warning, the records still report."""
    from gs_bench.store import read_run_file

    run_info = {}
    for f in sorted(out.glob("run-*.json")):
        info = read_run_file(f)
        if info is None:  # damaged, or another tool's file of that name: the records still report
            import logging

            logging.getLogger(__name__).warning(
                "%s is not a readable gs-bench run file; the report leaves out what it would add "
                "(the command line and environment)", f)
        else:
            run_info = info
    return run_info


def _suite_sections(suite: str, records: list[dict[str, Any]], out: Path,
                    report_dir: Path) -> list[tuple]:
    """The report's sections of one suite: ``(title, tables, figures, paragraphs, notes)`` per
    group of records that share their settings (:func:`split_by_settings`)."""
    from gs_bench.runners import load_runner

    runner = load_runner(suite)
    groups = split_by_settings(sorted(records, key=lambda r: r["key"]),
                               getattr(runner, "sweep_settings", ()))
    sections = []
    for i, (label, recs) in enumerate(groups):
        # records of other settings are never averaged together: a section (and so a row)
        # of their own, titled with the settings that set them apart (issue 34)
        tables = runner.tables(recs)
        # a hook that reads files the jobs wrote is told the run folder (the report may go
        # elsewhere: gs-bench report --out); older hooks take the two arguments only
        figures = (runner.figures(recs, report_dir, run_dir=out)
                   if "run_dir" in inspect.signature(runner.figures).parameters
                   else runner.figures(recs, report_dir))
        if len(groups) > 1:  # the next group draws files of the same names: move these
            sub = report_dir / f"settings-{i + 1}"
            sub.mkdir(exist_ok=True)
            for f in figures:
                if (report_dir / f.path).is_file():
                    # a move of a finished figure, not a write: no temporary file involved
                    shutil.move(report_dir / f.path, sub / Path(f.path).name)
                    f.path = f"{sub.name}/{Path(f.path).name}"
        texts = runner.paragraphs(recs)
        notes = runner.notes(recs, out)
        title = f"{suite} ({label})" if label else suite
        sections.append((title, tables, figures, texts, notes))
    return sections


def workers_summary(records: Sequence[dict[str, Any]]) -> str:
    """Where the records were computed: ``"host-a (cpu): 4 jobs; host-b (cuda:0, NVIDIA ...):
    2 jobs"`` from each record's ``worker`` (empty for records written before gs-bench stored
    it). On a cluster these are the worker nodes, not the machine that wrote the report."""
    counts: dict[str, int] = defaultdict(int)
    for r in records:
        w = r.get("worker") or {}
        if not w.get("host"):
            continue
        dev = str(w.get("device") or r.get("device") or "?")
        if w.get("gpu"):
            dev += f", {w['gpu']}"
        counts[f"{w['host']} ({dev})"] += 1
    return "; ".join(f"{k}: {n} job{'s' if n != 1 else ''}" for k, n in sorted(counts.items()))


def sources_summary(records: Sequence[dict[str, Any]]) -> str:
    """:func:`_versions_summary`, then a sentence on the records whose worker lived through an
    edit of our packages' files (``worker.sources_edited``,
    :func:`gs_bench.executors.sources_edited`), whose fingerprint may not be the code that ran."""
    edited: dict[str, int] = defaultdict(int)
    n = 0
    for r in records:
        dists = (r.get("worker") or {}).get("sources_edited") or []
        n += bool(dists)
        for d in dists:
            edited[d] += 1
    line = _versions_summary(records)
    if n:
        per = ", ".join(f"{d} ({k})" for d, k in sorted(edited.items()))
        line = ((line + " " if line else "Source: ")
                + f"{n} record(s) were computed by a worker process during which the files of "
                f"{per} changed on disk: their code may be older than their fingerprint says, or "
                "a mix.")
    return line


def _versions_summary(records: Sequence[dict[str, Any]]) -> str:
    """One line when the records were computed by more than one version of our packages'
    source (each record's ``worker.sources``, :func:`gs_bench.executors.source_fingerprints`):
    which packages differ and how many records each version wrote, so that a table mixing
    records from before and after a code change says so. Records written before gs-bench
    stored fingerprints are counted apart, and beside records of one version they are named
    too (their code is not recorded). Empty when all records share one version, or none has a
    fingerprint."""
    versions: dict[tuple, int] = defaultdict(int)
    unknown = 0
    for r in records:
        fps = (r.get("worker") or {}).get("sources")
        if fps:
            versions[tuple(sorted(fps.items()))] += 1
        else:
            unknown += 1
    if len(versions) == 1 and unknown:
        known = next(iter(versions.values()))
        return (f"Source: {known} record(s) carry a fingerprint of our packages' source, all the "
                f"same; {unknown} record(s) were written before records stored one, so whether "
                "their code was the same is not recorded.")
    if len(versions) < 2:
        return ""
    dists = sorted({d for v in versions for d, _ in v})
    differ = [d for d in dists if len({dict(v).get(d) for v in versions}) > 1]
    per = "; ".join(
        f"{n} record{'s' if n != 1 else ''} with " + ", ".join(f"{d} {dict(v).get(d, '?')}" for d in differ)
        for v, n in sorted(versions.items(), key=lambda kv: -kv[1]))
    extra = f"; {unknown} record(s) without a fingerprint" if unknown else ""
    return (f"Source: the records were computed by {len(versions)} versions of the source of "
            f"{', '.join(differ)} ({per}{extra}).")


def data_kinds(records: Sequence[dict[str, Any]]) -> list[tuple[str, str, str, list[str]]]:
    """``(dataset, kind, what, suites)`` for every dataset of the records, in order of first
    appearance: ``kind`` from gs-data's tables (:func:`gs_data.data_kind`: real, synthetic,
    simulated, stand-in; ``unknown`` for a name they do not hold), ``suites`` the suites that
    ran on it. Reads no data."""
    from gs_data import data_kind

    seen: dict[str, tuple[str, str, list[str]]] = {}
    for r in records:
        job = r.get("job", {})
        name = job.get("params", {}).get("dataset")
        if not isinstance(name, str):
            continue
        if name not in seen:
            try:
                kind, what = data_kind(name)
            except (TypeError, ValueError):
                kind, what = "unknown", "not in gs-data's dataset tables"
            seen[name] = (kind, what, [])
        if job.get("suite") not in seen[name][2]:
            seen[name][2].append(job.get("suite"))
    # sorted: the records come in job-key order, and the keys change with package versions
    # (on torch 2.11 the demo's header listed the suites in another order than on 2.13)
    return [(name, kind, what, sorted(suites, key=str)) for name, (kind, what, suites) in sorted(seen.items())]


def _data_lines(data: list[tuple[str, str, str, list[str]]]) -> list[str]:
    """The header's "Data" block (Markdown): every dataset with its kind, bold."""
    if not data:
        return []
    lines = ["", "Data (what each dataset of this run is):", ""]
    for name, kind, what, suites in data:
        lines.append(f"- `{name}`: **{kind}**, {what} (suite{'s' if len(suites) != 1 else ''} "
                     f"{', '.join(map(str, suites))})")
    kinds = {kind for _, kind, _, _ in data}
    if kinds & {"synthetic", "stand-in", "unknown"}:
        lines += ["", "Results on synthetic or stand-in data test the code, not the papers' findings: "
                      "compare methods within this report, not with the papers' numbers."]
    return lines


def _markdown(sections, run_info, n_records, failed) -> str:
    env = run_info.get("environment", {})
    versions = ", ".join(f"{k} {v}" for k, v in env.get("versions", {}).items())
    workers = run_info.get("workers", "")
    parts = ["# gs benchmark report", ""]
    parts.append(f"{n_records} job records ({len(failed)} failed). Git revision: {env.get('git_revision', 'unknown')}. CPU: {env.get('cpu', '?')} x{env.get('cpu_count', '?')}, GPU: {env.get('gpu', '?')}.")
    parts.append(f"Computed on: {workers}." if workers else "")
    parts.append(f"Versions: {versions}." if versions else "")
    if run_info.get("sources"):
        parts.append(run_info["sources"])
    parts += _data_lines(run_info.get("data", []))
    for suite, tables, figures, texts, notes in sections:
        parts += ["", f"## {suite}", ""]
        parts += [f"{t}\n" for t in texts]
        parts += [t.to_markdown() for t in tables]
        parts += [f"![{f.caption}]({f.path})\n\n*{f.caption}*\n" for f in figures]
        parts += [f"{t}\n" for t in notes]
    if failed:
        parts += ["", "## Failed jobs", ""]
        parts += [f"- `{r['key']}` {r['job']['suite']} {r['job']['params']}: {str(r.get('error', '')).splitlines()[0]}" for r in failed]
    return "\n".join(parts) + "\n"


_STYLE = ("body{font-family:sans-serif;max-width:1100px;margin:auto}table{border-collapse:collapse;margin:1em 0}"
          "td,th{border:1px solid #bbb;padding:3px 8px;text-align:right}th{background:#eee}img{max-width:100%}")


def embed_image(report_dir: Path) -> Any:
    """``src -> data:image/...;base64,...`` for an image file of the report folder, so the
    HTML report carries its figures and can be moved or mailed alone. A missing file (or a
    path outside the folder) keeps its ``src`` and is logged."""
    import base64
    import logging

    mime = {".png": "image/png", ".svg": "image/svg+xml", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}

    def image(src: str) -> str:
        path = (report_dir / src).resolve()
        if src.startswith("data:") or path.suffix.lower() not in mime or not path.is_file():
            if not src.startswith("data:"):
                logging.getLogger(__name__).warning("report image %s not embedded: not an image file of %s", src, report_dir)
            return src
        return f"data:{mime[path.suffix.lower()]};base64," + base64.b64encode(path.read_bytes()).decode("ascii")

    return image


def _render(sections, fmt, run_info, n_records, failed, report_dir: Path) -> str:
    if fmt == "md":
        return _markdown(sections, run_info, n_records, failed)
    if fmt == "html":
        from gs_bench.mdhtml import markdown_to_html

        body = markdown_to_html(_markdown(sections, run_info, n_records, failed), image=embed_image(report_dir))
        return ("<!doctype html><html><head><meta charset='utf-8'><title>gs benchmark report</title>"
                f"<style>{_STYLE}</style></head><body>\n{body}</body></html>\n")
    parts = [r"% gs benchmark report (tables need \usepackage{booktabs})"]
    parts += [f"% data: {name} ({kind})" for name, kind, _, _ in run_info.get("data", [])]
    for suite, tables, _, _texts, _notes in sections:
        parts.append(f"% --- {suite} ---")
        parts += [t.to_latex() for t in tables]
    return "\n".join(parts)
