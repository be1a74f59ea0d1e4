"""Command-line interface of the gs benchmark (``gs-bench``).

Run ``gs-bench --help`` for the list of commands and ``gs-bench COMMAND --help`` for each.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from gs_algos.names import DEFAULT_ROBUSTNESS_VARIANT, ROBUSTNESS_VARIANTS
from gs_bench.__about__ import __version__
from gs_bench.executors import DEFAULT_RETRIES, EXECUTORS
from gs_bench.names import REPORT_FORMATS as FORMATS
from gs_bench.names import ROBUSTNESS_FRAMEWORKS, SPLIT_SOURCES
from gs_bench.suites import (  # MAX_SEEDS: the --seeds cap (1e9 planned a billion jobs)
    MAX_SEEDS,
    PROFILES,
)

#: The most parallel jobs of ``gs-bench run`` (``--workers``): with the local executor also at
#: most :data:`WORKERS_PER_CORE` per CPU core this process may use (each worker is a process
#: training one job; more only thrash).
MAX_WORKERS = 1000
WORKERS_PER_CORE = 4
#: The most torch threads per job (``--threads``), whatever the executor; with the local one also
#: at most the CPU cores this process may use.
MAX_THREADS = 1024
#: The most times a job whose worker died is started again (``--retries``).
MAX_RETRIES = 100

DESCRIPTION = """\
gs-bench: evaluate graph and geometric deep-learning models under distribution shift.

Commands:
  demo    the main job on the embedded SYNTHETIC default graph (no download): its
          structural splits (popularity, locality, density), then the demo profile of
          every suite (structural-shifts, edgewise, lebed, gess), and a report in
          Markdown and HTML.
  run     run a suite (structural-shifts, edgewise, lebed, gess) with a profile
          (demo, ci, paper, full); finished jobs are skipped, so re-running resumes.
          Every job that cannot succeed (inapplicable algorithm, unwired dataset,
          missing data) is listed and nothing starts; --dry-run only lists them.
  report  write tables and figures of a results folder (Markdown, HTML or LaTeX).
  compare every paper cell a run fills beside the paper's value, its spread and delta,
          with a summary per paper, per table and per method.
  list    list the suites, profiles and what each suite covers; `list SUITE` its
          settings (value, default, accepted values, source).

Examples:
  gs-bench demo --out demo-output
  gs-bench run structural-shifts --profile ci --datasets cora-ml --seeds 5 --out runs/ss
  gs-bench run edgewise --profile ci --device cuda --out runs/ew
  gs-bench run structural-shifts --profile ci --executor ray --address HEAD:6379 --workers 32 --out /shared/runs/ss
  gs-bench report runs/ss --format html
  gs-bench compare apps/bench/measured/ci-structural-shifts --off
"""


def _folder(text: str) -> Path:
    """An output folder argument: an empty string (e.g. an unset shell variable) is refused
    rather than read as the current folder."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path; name a folder, e.g. runs/out")
    return Path(text)


def _command_parser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser:
    """The sub-parser of ``command`` (``gs-bench run``), else ``parser``."""
    return getattr(parser, "commands", {}).get(command, parser)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit 2) instead of the usage block; the top-level parser
    keeps its sub-parsers by name in ``commands`` (so errors found after parsing name them)."""

    commands: dict[str, argparse.ArgumentParser]

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="gs-bench",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"gs-bench {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    # in this order: `gs-bench --help` and the "invalid choice" line list the commands so
    parser.commands = {"demo": _add_demo_parser(sub), "run": _add_run_parser(sub),
                       "report": _add_report_parser(sub), "compare": _add_compare_parser(sub),
                       "list": _add_list_parser(sub)}
    return parser


def _add_demo_parser(sub) -> argparse.ArgumentParser:
    """``gs-bench demo`` and its options."""
    demo = sub.add_parser(
        "demo",
        help="main job on the embedded synthetic default graph",
        description="Make the three structural splits of the embedded SYNTHETIC default graph "
        "(popularity, locality, density; their reports in OUT/splits), run the demo profile of "
        "every suite (structural-shifts, edgewise, lebed, gess) into OUT, skipping finished "
        "jobs on a re-run, and write OUT/report/report.md and report.html (tables and figures). "
        "A few minutes on 2 CPU cores; no download.",
    )
    demo.add_argument("--out", type=Path, default=Path("demo-output"), help="output folder (default: demo-output)")
    demo.add_argument("--seed", type=int, default=0, help="seed of the three demo splits written to OUT/splits, >= 0 (the suites use their own seeds; default: 0)")
    demo.add_argument("--no-train", action="store_true", help="only make and describe the splits")
    demo.add_argument("--workers", type=int, default=2, metavar="N", help="parallel jobs (default: 2)")
    return demo


def _add_run_parser(sub) -> argparse.ArgumentParser:
    """``gs-bench run`` and its options."""
    run = sub.add_parser(
        "run",
        help="run a suite",
        description="Expand SUITE (a shipped suite name or the path of your own suite .toml) "
        "for the chosen profile into jobs and run those not yet in --out. Each job is keyed by a "
        "hash of its complete configuration; results are written atomically, so an interrupted "
        "run resumes where it stopped when you re-run the same command.",
    )
    run.add_argument("suite", help="suite name (see `gs-bench list`) or path to a suite .toml")
    run.add_argument("--profile", default=None, choices=PROFILES, help="demo (the default: embedded data, minutes; where a suite file has no [profiles.demo], its [grid] and [settings] as written, and the plan line says so), ci (real data in ../shared/datasets), medium (gess only: the Track cases at ~3,000 training events, for days of background work on a small machine), paper (a suite's paper protocol where it defines one, e.g. gess on a GPU; else as full), full (the whole grid at paper scale)")
    run.add_argument("--datasets", nargs="+", metavar="NAME", help="only these datasets (overrides the profile)")
    run.add_argument("--methods", nargs="+", metavar="NAME", help="only these methods (overrides the profile; the gess suite's algorithms, e.g. erm dir tl-100)")
    run.add_argument("--backbones", nargs="+", metavar="NAME", help="only these backbones (suites with a backbone axis: gess)")
    run.add_argument("--seeds", type=int, metavar="N", help="number of seeds, 1 to 1000 (overrides the profile). structural-shifts: the runs of ERM / SE / +mod; GPN / NatPN, DANN / CORAL / Mixup / EERM and the ensembles keep their own counts where the profile sets them (settings posterior_runs, robustness_runs, ensemble_runs: change those with --set, e.g. --set robustness_runs=5)")
    run.add_argument("--split-source", choices=SPLIT_SOURCES, help="structural-shifts: 'authors' uses the authors' published 50:50 masks (<root>/structural-shifts/<name>/splits/<shift>.pth), 'seeded' gs-splits with split seed 0, 'authors-where-published' the authors' masks at 50:50 and gs-splits at the other ratios (default: the suite's setting)")
    run.add_argument("--robustness-framework", choices=ROBUSTNESS_FRAMEWORKS, help="structural-shifts: how DANN / CORAL / Mixup / EERM are trained, 'paper' (appendix F encoder, optimiser and checkpoint rule, as every other method; the default) or 'good' (GOOD's GCN 3 x 300 and GOODCora training: lr 1e-3, no weight decay, 100 epochs, best Valid-In accuracy)")
    run.add_argument("--robustness-variant", choices=ROBUSTNESS_VARIANTS, help=f"structural-shifts: formulation of DANN / CORAL / Mixup / EERM, 'good' (the GOOD benchmark's code the paper used) or 'ours-v1' (our earlier one, with domain bins over all nodes); default: the suite's setting, else {DEFAULT_ROBUSTNESS_VARIANT!r}")
    run.add_argument("--set", action="append", metavar="KEY=VALUE", dest="set_settings", help="override one of the suite's [settings] (repeatable); VALUE is read as a TOML value (3, 0.5, true, \"text\", [\"gcn\", \"mlp\"]), a bare word as text. Checked against the suite's settings like the file's: an unknown key or a wrong type stops the run before any job")
    run.add_argument("--unset", action="append", metavar="KEY", dest="unset_settings", help="take back a setting the profile gives, where the setting's default is 'unset' (e.g. gess's track_max_epochs, lebed's or edgewise's root; repeatable): the jobs run and are keyed as if the suite never set it")
    run.add_argument("--executor", default="local", choices=EXECUTORS, help="local worker processes (default) or a Ray cluster (docs/cluster.md)")
    run.add_argument("--address", help="Ray cluster address for --executor ray, e.g. HEAD:6379 or 'auto' (default: start a local Ray)")
    run.add_argument("--workers", type=int, default=1, metavar="N", help="parallel jobs, at most (default: 1; 1 to 1000, and with the local executor at most 4 per CPU core); with Ray also on a cluster given by --address")
    run.add_argument("--device", default="auto", metavar="DEVICE", help="where every job trains: auto (CUDA when available, else CPU; the default), cpu, cuda or cuda:N. Stored in each record; the job keys do not change with it")
    run.add_argument("--device-in-key", action="store_true", help="make --device part of the job keys, so records of another device are not reused")
    run.add_argument("--threads", type=int, metavar="N", help="torch threads per job, 1 to 1024 and at most the CPU cores this process may use with the local executor (default: CPU cores / --workers; with Ray: the job's num_cpus)")
    run.add_argument("--retries", type=int, default=DEFAULT_RETRIES, metavar="N", help=f"times a job whose worker process died (killed, out of memory, lost node) is started again before it is recorded as failed (default: {DEFAULT_RETRIES}; 0 to {MAX_RETRIES})")
    run.add_argument("--out", type=_folder, required=True, help="results folder (created; re-use it to resume)")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.add_argument("--report", choices=FORMATS, default="md", help="report written at the end (default: md)")
    run.add_argument("--dry-run", action="store_true", help="validate the suite and count its jobs; run nothing")
    run.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help="also print the traceback of each failed job (always in its log file, OUT/logs/<key>.log) and progress details")
    return run


def _add_report_parser(sub) -> argparse.ArgumentParser:
    """``gs-bench report`` and its options."""
    rep = sub.add_parser("report", help="write the report of a results folder", description="Write paper-layout tables and figures for the results in DIR into DIR/report/ (or --out FOLDER).")
    rep.add_argument("dir", type=Path, help="results folder written by `gs-bench run`")
    rep.add_argument("--format", choices=FORMATS, default="md", help="md (default), html or latex")
    rep.add_argument("--out", type=Path, metavar="FOLDER", help="write the report and its figures into FOLDER instead of DIR/report/ (e.g. for a committed run in apps/bench/measured/, or a folder you may not write into)")
    return rep


def _add_compare_parser(sub) -> argparse.ArgumentParser:
    """``gs-bench compare`` and its options."""
    cmp_ = sub.add_parser(
        "compare", help="every measured cell beside the paper's value",
        description="List every paper cell that the runs' records fill, beside the paper's value, "
        "with delta, the paper's spread (its +- s; 2 points, or 0.02 for Spearman rho, where it prints "
        "none) and whether |delta| exceeds it; one summary line per paper, which also says how many "
        "cells a faithful rerun would be expected to have within the spread at these run counts "
        "(0.65 per cell at 3 runs against the paper's 3), and above each paper's table the "
        "cells within per table and per method (with a faithful rerun's count beside each "
        "method's). RUN is a results folder of "
        "`gs-bench run` or a committed run in apps/bench/measured/.")
    cmp_.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="results folder(s)")
    cmp_.add_argument("--off", action="store_true", help="list only the cells outside the paper's spread (default: every cell)")
    cmp_.add_argument("--summary", action="store_true", help="print only the summary lines (default: summary and tables)")
    cmp_.add_argument("--readme", type=Path, metavar="FILE", help="also rewrite FILE's generated block (between the gs-bench compare markers) with one summary per run (default: no file written)")
    return cmp_


def _add_list_parser(sub) -> argparse.ArgumentParser:
    """``gs-bench list`` and its options."""
    lst = sub.add_parser(
        "list", help="list suites and profiles; with SUITE, its settings",
        description="Without SUITE: the shipped suites, their profiles (jobs, what they run) and "
                    "grid axes. With SUITE: every setting of that suite, the value the profile "
                    "gives it, its default, accepted values, the source of the default and what it "
                    "does.")
    lst.add_argument("suite", nargs="?", metavar="SUITE", help="structural-shifts, edgewise, lebed or gess")
    lst.add_argument("--profile", default="demo", choices=PROFILES,
                     help="whose values to show with SUITE (default: demo)")
    return lst


def _setting_value(text: str, key: str = "KEY"):
    """A ``--set`` value: a TOML value where it parses as one, else the text itself."""
    from gs_bench.suites import tomllib  # tomli before Python 3.11

    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text
    except RecursionError:  # a crafted value nested hundreds deep (issue 56): no setting is a list of lists
        raise ValueError(f"argument --set: {key}: the value {text[:20]!r}... is nested too deep to be a "
                         "setting") from None


def _setting_overrides(args: argparse.Namespace) -> dict | None:
    """Suite settings given on the command line (``--set KEY=VALUE``, ``--split-source``,
    ``--robustness-variant``, ``--robustness-framework``); ``load_suite``'s schema checks them
    (:meth:`gs_bench.suites.SuiteConfig.with_overrides`), ``--unset KEY`` as
    :data:`gs_bench.suites.UNSET`. A ``--set`` without ``=``, or a key given to both, is a
    ``ValueError``."""
    from gs_bench.suites import UNSET

    out = {}
    for item in getattr(args, "set_settings", None) or ():
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"argument --set: expected KEY=VALUE, got {item!r}")
        out[key.strip()] = _setting_value(value.strip(), key.strip())
    for key in getattr(args, "unset_settings", None) or ():
        if out.get(key) is UNSET:
            continue  # the same --unset twice
        if key in out:
            raise ValueError(f"argument --unset: {key} is also given to --set; give one of the two")
        out[key] = UNSET
    options = {"split_source": args.split_source,
               "robustness_variant": getattr(args, "robustness_variant", None),
               "robustness_framework": getattr(args, "robustness_framework", None)}
    for key, value in options.items():
        if not value:
            continue
        if out.get(key) is UNSET:
            raise ValueError(f"argument --unset: {key} is also given to --{key.replace('_', '-')}; "
                             "give one of the two")
        out[key] = value
    return out or None


def _overrides_line(config, overrides: dict) -> str:
    """``command line: track_max_epochs unset (the profile: 30); lr = 0.01 (the profile: 0.0003)``:
    what the command line changed, beside what the profile (or the default) gives."""
    from gs_bench.suites import UNSET
    from gs_bench.suites import setting_text as _toml

    typed = config.typed_settings
    parts = []
    for key, value in overrides.items():
        before = config.settings[key] if key in config.settings else getattr(typed, key, None)
        new = "unset" if value is UNSET else f"= {_toml(value)}"
        parts.append(f"{key} {new} (the profile: {_toml(before)})")
    return "command line: " + "; ".join(parts)


class _Stopped(KeyboardInterrupt):
    """Raised in the main thread by the SIGTERM handler (SIGINT raises KeyboardInterrupt)."""


def _on_sigterm(signum, frame) -> None:  # noqa: ARG001 - signal handler signature
    raise _Stopped


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``gs-bench``. Every failure ends in one line on stderr: exit 2 for a bad
    input (suite, folder, lock), 1 for failed jobs or an internal error, 130 / 143 when stopped
    by SIGINT / SIGTERM."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if getattr(args, "verbose", False) else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if args.command is None:  # a usage error: the help on stderr, exit 2
        parser.print_help(sys.stderr)
        return 2
    if not getattr(args, "verbose", False):  # third-party deprecation notices: only with -v
        from gs_bench.executors import QUIET_WARNINGS_ENV, quiet_third_party_warnings

        quiet_third_party_warnings()
        os.environ[QUIET_WARNINGS_ENV] = "1"
    # the command's own parser, so that the message names `gs-bench run` and its --help
    parser = _command_parser(parser, args.command)
    _check_counts(parser, args)
    _check_placement(parser, args)
    if args.command == "run" and _check_suite(parser, args) is not None:
        return 2
    previous = signal.getsignal(signal.SIGTERM)
    try:
        signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread (e.g. called from a test thread): keep the default
        previous = None
    try:
        return _dispatch(parser, args)
    except KeyboardInterrupt as exc:
        return _stopped(args, exc)
    except BrokenPipeError:
        # the reader went away (e.g. `gs-bench list lebed | head`): not an error of ours; keep
        # Python from complaining again when it flushes stdout at exit
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, AttributeError, ValueError):  # a stdout without a file descriptor
            pass
        return 0
    except Exception as exc:  # noqa: BLE001 - one line instead of a traceback; -v shows it
        return _failed(args, exc)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _check_counts(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Exit 2 (``parser.error``) for a count out of its range: ``--seed``, ``--workers``,
    ``--seeds``, ``--threads`` (against the CPU cores with the local executor)."""
    if args.command == "demo" and args.seed < 0:
        parser.error(f"argument --seed: must be >= 0, got {args.seed}")
    for name in ("workers", "seeds", "threads"):
        value = getattr(args, name, None)
        if value is not None and value < 1:
            parser.error(f"argument --{name}: must be >= 1, got {value}")
    if getattr(args, "seeds", None) is not None and args.seeds > MAX_SEEDS:
        parser.error(f"argument --seeds: at most {MAX_SEEDS}, got {args.seeds}")
    if args.command == "run" and args.workers > MAX_WORKERS:
        parser.error(f"argument --workers: at most {MAX_WORKERS}, got {args.workers}")
    if args.command == "run" and args.executor == "local":
        from gs_bench.executors import available_cores

        if args.workers > WORKERS_PER_CORE * available_cores():
            parser.error(f"argument --workers: at most {WORKERS_PER_CORE} per CPU core with the local executor "
                         f"({WORKERS_PER_CORE * available_cores()} here), got {args.workers}")
    if getattr(args, "threads", None) is not None and args.threads > MAX_THREADS:  # also on Ray
        parser.error(f"argument --threads: at most {MAX_THREADS}, got {args.threads}")
    if getattr(args, "threads", None) is not None and getattr(args, "executor", "local") == "local":
        from gs_bench.executors import available_cores

        if args.threads > available_cores():
            parser.error(f"argument --threads: at most the {available_cores()} CPU core(s) this process "
                         f"may use, got {args.threads}")


def _check_placement(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Exit 2 (``parser.error``) for ``--address`` without Ray, ``--retries`` out of range or a
    misspelt ``--device`` (spelling only: no torch is imported)."""
    if getattr(args, "address", None) is not None and getattr(args, "executor", "local") != "ray":
        parser.error("argument --address: needs --executor ray (the local executor has no cluster address)")
    if not 0 <= getattr(args, "retries", 0) <= MAX_RETRIES:
        parser.error(f"argument --retries: must be from 0 to {MAX_RETRIES}, got {args.retries}")
    if getattr(args, "device", None) is not None:
        from gs_algos.device_names import check_device_name  # spelling only: no torch

        try:
            check_device_name(args.device, "--device")
        except ValueError as exc:
            parser.error(f"argument {exc}")


def _check_suite(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int | None:
    """``gs-bench run``: the suite, the settings given on the command line and the optional
    packages, before anything heavy is imported (torch takes seconds), so that a wrong name is
    rejected at once and nothing is written to --out. 2 after the one line of a bad suite, else
    None (a bad ``--set`` is ``parser.error``)."""
    from gs_bench.optional import require
    from gs_bench.suites import SuiteConfigError, load_suite

    try:
        overrides = _setting_overrides(args)
    except ValueError as exc:
        parser.error(str(exc))
    try:
        # a profile named on the command line must be in the file; the default demo
        # falls back to the base settings, which the plan line states
        config = load_suite(args.suite, args.profile or "demo", explicit=args.profile is not None)
        # settings given here pass the same schema (a typo stops the run before any job)
        config.with_overrides(settings=overrides)
        if overrides:
            print(_overrides_line(config, overrides), file=sys.stderr)
        if args.executor == "ray" and not args.dry_run:
            require("ray", "--executor ray")
    except SuiteConfigError as exc:
        print(f"gs-bench: cannot start: {_one_line(exc)}", file=sys.stderr)
        return 2
    return None


def _stopped(args: argparse.Namespace, exc: KeyboardInterrupt) -> int:
    """The line of a command stopped by SIGINT (130) or SIGTERM (143): for a run, the finished
    records kept and how to resume."""
    name = "SIGTERM" if isinstance(exc, _Stopped) else "SIGINT"
    out = getattr(args, "out", None) if args.command == "run" else None
    where = ""
    if out is not None and getattr(args, "dry_run", False):  # nothing ran: nothing to resume
        where = "; dry run: nothing was started or written"
    elif out is not None:
        from gs_bench.store import ResultsStore

        where = (f"; {len(ResultsStore(out).keys())} finished record(s) kept in {Path(out) / 'results'}; "
                 "run the same command again to resume")
    print(f"gs-bench: stopped by {name}{where}", file=sys.stderr)
    return 143 if name == "SIGTERM" else 130


def _failed(args: argparse.Namespace, exc: Exception) -> int:
    """The one line of an unexpected exception: a missing optional package (2) or an internal
    error (1); the traceback with -v."""
    from gs_bench.optional import missing_dependency_line

    missing = missing_dependency_line(exc)
    if missing is not None:  # not a bug: the machine lacks an optional package
        if getattr(args, "verbose", False):
            logging.getLogger("gs_bench").exception("missing optional package")
        print(f"gs-bench: {missing}", file=sys.stderr)
        return 2
    if getattr(args, "verbose", False):
        logging.getLogger("gs_bench").exception("internal error")
    print(f"gs-bench: internal error (a bug, please report it): {type(exc).__name__}: "
          f"{str(exc).splitlines()[0] if str(exc) else ''} (run with -v for the traceback)",
          file=sys.stderr)
    return 1


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return " ".join(text.split()) if text else type(exc).__name__


def _os_error(exc: OSError, out: Path) -> str:
    """One line for a file-system error of ``gs-bench run``: the path, the reason and, for a
    full disk or quota, that nothing was lost (before issue 34: ``[Errno 28] No space left on
    device`` without a path)."""
    import errno

    where = exc.filename or out
    reason = exc.strerror or _one_line(exc)
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):  # not "free some space" (issue 56)
        return (f"cannot write {where}: {reason}: the run folder {out} is read-only or not writable by "
                "this user; choose another --out, or make it writable and run the same command again")
    if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
        return f"cannot write {where}: {reason}" if exc.filename else _one_line(exc)
    from gs_bench.store import ResultsStore

    try:
        kept = len(ResultsStore(out).keys())
    except OSError:
        kept = 0
    return (f"cannot write {where}: {reason}; nothing was lost: the {kept} finished record(s) in "
            f"{Path(out) / 'results'} are kept and no record was left half-written. Free some "
            "space (or choose another --out) and run the same command again to resume")


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    commands = {"demo": _demo_command, "run": _run_command, "report": _report_command,
                "compare": _compare_command, "list": _list_command}
    if args.command in commands:
        return commands[args.command](args)
    parser.error(f"unknown command {args.command!r}")
    return 2


def _demo_command(args: argparse.Namespace) -> int:
    from gs_bench.demo import run_demo

    return run_demo(out=args.out, seed=args.seed, train=not args.no_train, workers=args.workers)


def _run_command(args: argparse.Namespace) -> int:
    """``gs-bench run``: :func:`gs_bench.run.run_suite`; a suite, lock, file-system or value
    error is one line and exit 2."""
    from gs_bench.run import run_suite
    from gs_bench.store import LockedError
    from gs_bench.suites import SuiteConfigError

    axes = {}
    if args.datasets:
        axes["dataset"] = args.datasets
    if args.methods:
        axes["method"] = args.methods
    if args.backbones:
        axes["backbone"] = args.backbones
    try:
        return run_suite(
            args.suite,
            profile=args.profile or "demo",
            out=args.out,
            axes=axes,
            seeds=args.seeds,
            executor=args.executor,
            address=args.address,
            workers=args.workers,
            progress=not args.no_progress,
            report_format=args.report,
            dry_run=args.dry_run,
            settings=_setting_overrides(args),
            device=args.device,
            device_in_key=args.device_in_key,
            threads=args.threads,
            retries=args.retries,
            verbose=getattr(args, "verbose", False),
        )
    except (SuiteConfigError, LockedError) as exc:
        print(f"gs-bench: cannot start: {_one_line(exc)}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"gs-bench: {_os_error(exc, args.out)}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"gs-bench: {_one_line(exc)}", file=sys.stderr)
        return 2


def _report_command(args: argparse.Namespace) -> int:
    from gs_bench.report import build_report
    from gs_bench.run import print_quarantine, print_skipped
    from gs_bench.store import ResultsStore

    store = ResultsStore(args.dir)
    store.moves = store.is_run_folder()  # never move files of a folder gs did not write
    try:
        path = build_report(args.dir, args.format, store=store, report_dir=args.out)
    except (ValueError, OSError) as exc:
        print(f"gs-bench: {_one_line(exc)}", file=sys.stderr)
        print_quarantine(store)
        print_skipped(store)
        return 2
    print(f"report written to {path}")
    print_quarantine(store)
    print_skipped(store)
    return 0


def _compare_command(args: argparse.Namespace) -> int:
    from gs_bench import compare as C

    per_run, notes = [], {}
    try:
        for run in args.runs:
            records = C.run_records(run)
            notes[str(run)] = C.run_note(run, records)
            per_run.append((str(run), C.cells(records)))
    except (OSError, ValueError) as exc:
        print(f"gs-bench: {_one_line(exc)}", file=sys.stderr)
        return 2
    _print_comparison(args, per_run, notes)
    if args.readme is not None:
        try:
            changed = C.update_readme(args.readme, C.readme_block(per_run))
        except (OSError, ValueError) as exc:
            print(f"gs-bench: {_one_line(exc)}", file=sys.stderr)
            return 2
        print(f"{args.readme}: generated block {'rewritten' if changed else 'already current'}")
    return 0


def _print_comparison(args: argparse.Namespace, per_run: list, notes: dict[str, str]) -> None:
    """The summary lines (``--summary``) or the tables of ``gs-bench compare``. One run: as
    before; several: each its own summary and tables, never pooled (a cell measured by two runs
    would otherwise count twice, its rows without the run's name)."""
    from gs_bench import compare as C

    for i, (run, cs) in enumerate(per_run):
        if args.summary:
            lines = C.summary_lines(cs) or ["no record fills a paper cell"]
            if len(per_run) > 1 or notes[run]:
                label = f"{run} ({notes[run]})" if notes[run] else run
                lines = [f"{label}:", *(f"- {line}" for line in lines)]
            print("\n".join(lines))
        else:
            title = "# Paper comparison" + (f": `{run}`" if len(per_run) > 1 else "")
            print(("\n" if i else "") + C.render(cs, [(run, notes[run])], only_off=args.off, title=title), end="")


def _list_command(args: argparse.Namespace) -> int:
    from gs_bench.listing import print_listing, settings_text
    from gs_bench.suites import SuiteConfigError

    if args.suite is None:
        print_listing()
        return 0
    try:
        print(settings_text(args.suite, args.profile))
    except SuiteConfigError as exc:
        print(f"gs-bench: {_one_line(exc)}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
