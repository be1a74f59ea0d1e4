"""The interface of a suite runner, written down once (issue 31).

A runner has three required hooks and ten optional ones; before this module the optional
ones were found by ``getattr`` / ``hasattr`` at eleven call sites (report, preflight, run,
suites) and described only in prose. :class:`Runner` states the whole interface as a
``Protocol``; :class:`SuiteRunner` implements it with a default for every optional hook, so a
caller calls ``runner.figures(...)`` and never asks whether it exists.

A runner package (``gs_bench/runners/lebed/``) defines ``RUNNER = SuiteRunner(...)`` in its
``__init__``; :func:`gs_bench.runners.load_runner` returns it. A runner module without
``RUNNER`` (the older single-file runners, a test's toy runner) is wrapped once by
:meth:`SuiteRunner.from_module`, the one place that still looks its hooks up by name.

This module imports no other gs_bench module at run time (``gs_bench.runners`` imports it, and
``gs_bench.suites`` imports ``gs_bench.runners``), and neither torch nor numba.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol, runtime_checkable

__all__ = ["Runner", "SuiteRunner", "HOOKS", "OPTIONAL_HOOKS", "setting", "axis"]

Record = dict[str, Any]
#: :class:`gs_bench.suites.SuiteConfig` and :class:`~gs_bench.suites.Job`,
#: :class:`gs_bench.report.Table` and ``Figure``: not imported here, not even for type checking
#: (a circle: suites -> runners -> this module). ``Point`` is the runner's ``Grid`` instance (one
#: grid point), ``TypedSettings`` its ``Settings`` instance.
SuiteConfig = Job = Point = TypedSettings = Table = Figure = Any

#: the hooks every runner defines
HOOKS = ("validate", "run_job", "tables")
#: the hooks a runner may leave out (each has a default in :class:`SuiteRunner`)
OPTIONAL_HOOKS = ("figures", "paragraphs", "notes", "applicable", "runs", "max_runs",
                  "order_jobs", "problems", "axis_aliases")


@runtime_checkable
class Runner(Protocol):
    """What gs-bench asks of the runner of one suite.

    ``Grid`` and ``Settings`` are frozen dataclasses: the grid axes (a ``Grid`` instance is one
    grid point, :attr:`gs_bench.suites.Job.params`) and the ``[settings]`` keys the suite
    accepts, with their types and accepted values (``load_suite`` and
    :func:`gs_bench.suites.check_grid` check a suite file against them). The hooks take the
    typed objects: a :class:`~gs_bench.suites.Job`, a ``Grid`` point, the ``Settings``. The
    optional hooks' defaults are those of :class:`SuiteRunner`.
    """

    name: str
    Grid: type
    Settings: type

    # -- required
    def validate(self, config: SuiteConfig) -> dict[str, str]:
        """Check datasets, methods and data files before any job starts (raise
        :class:`gs_bench.suites.SuiteConfigError` saying what to fix); a fingerprint per dataset."""

    def run_job(self, job: Job) -> dict[str, Any]:
        """Run one job (its grid point ``job.params``, ``Settings.from_job(job)``, ``job.seed``,
        and from the executor ``job.device``, a resolved ``torch.device``, and ``job.workdir``)
        on a worker; its metrics."""

    def tables(self, records: Sequence[Record]) -> list[Table]:
        """The paper-layout tables, drawn from the records only."""

    # -- optional
    def figures(self, records: Sequence[Record], report_dir: Path) -> list[Figure]:
        """Figures written into ``report_dir`` (default: none). A hook that also takes a
        ``run_dir`` keyword is given the run folder, for files the jobs wrote there (the report
        folder need not be inside it: ``gs-bench report --out``)."""

    def paragraphs(self, records: Sequence[Record]) -> list[str]:
        """Text put before the suite's tables, e.g. the training protocol (default: none)."""

    def notes(self, records: Sequence[Record], run_dir: Path) -> list[str]:
        """Text put after the suite's figures, e.g. what could not be drawn (default: none)."""

    def applicable(self, point: Point, settings: TypedSettings) -> bool:
        """Whether a grid point makes sense (default: every point does)."""

    def runs(self, point: Point, settings: TypedSettings, seeds: int) -> int:
        """Runs of a grid point, e.g. one 5-member ensemble against 3 runs of a single model
        (default: ``seeds``)."""

    def max_runs(self, settings: TypedSettings, seeds: int) -> int:
        """The most runs any grid point has, so that many are planned (default: ``seeds``)."""

    def order_jobs(self, jobs: list[Job]) -> list[Job]:
        """The order the executor starts the jobs in (default: as planned)."""

    def problems(self, config: SuiteConfig, jobs: list[Job]) -> list[Any]:
        """Jobs that cannot succeed, as :class:`gs_bench.preflight.Problem` (default: none)."""

    @property
    def axis_aliases(self) -> Mapping[str, str]:
        """Command-line axis names that mean one of this suite's axes, e.g. gess's
        ``--methods`` for its ``algorithm`` axis (default: none)."""


def _no_figures(records: Sequence[Record], report_dir: Path) -> list[Any]:
    return []


def _no_text(records: Sequence[Record]) -> list[str]:
    return []


def _no_notes(records: Sequence[Record], run_dir: Path) -> list[str]:
    return []


def _every_point(point: Point, settings: TypedSettings | None = None) -> bool:
    return True


def _every_seed(point: Point, settings: TypedSettings, seeds: int) -> int:
    return seeds


def _seeds(settings: TypedSettings, seeds: int) -> int:
    return seeds


def _as_planned(jobs: list[Job]) -> list[Job]:
    return jobs


def _no_problems(config: Any, jobs: list[Job]) -> list[Any]:
    return []


@dataclass(frozen=True)
class SuiteRunner:
    """A :class:`Runner` made of functions: the required hooks, and the optional ones where
    the suite has them (every other one keeps its default). ``module`` is the import path the
    executors load ``run_job`` from on a worker (``"<module>:run_job"``)."""

    name: str
    module: str
    Grid: type
    Settings: type
    validate: Callable[..., dict[str, str]]
    run_job: Callable[[Job], dict[str, Any]]
    tables: Callable[..., list[Any]]
    figures: Callable[..., list[Any]] = _no_figures
    paragraphs: Callable[..., list[str]] = _no_text
    notes: Callable[..., list[str]] = _no_notes
    applicable: Callable[..., bool] = _every_point
    runs: Callable[..., int] = _every_seed
    max_runs: Callable[..., int] = _seeds
    order_jobs: Callable[..., list[Job]] = _as_planned
    problems: Callable[..., list[Any]] = _no_problems
    axis_aliases: Mapping[str, str] = field(default_factory=dict)
    #: settings whose values a report treats as a sweep, not as another run: records that differ
    #: only in them stay in one section, and :attr:`tables` sees them together (gess:
    #: ``train_events``, the points of its learning curve over training size). A module sets
    #: them as ``SWEEP_SETTINGS``.
    sweep_settings: tuple[str, ...] = ()
    #: ``{axis: {alias: name}}``: grid values that name the same jobs as another value (the
    #: structural-shifts suite's ``se`` is ``erm``'s uncertainty view, the same training). A
    #: grid listing both plans the name once (:func:`gs_bench.suites.dedupe_values`). A module
    #: sets them as ``VALUE_ALIASES``.
    value_aliases: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("Grid", "Settings"):
            if not dataclasses.is_dataclass(getattr(self, name)):
                raise TypeError(f"runner of suite {self.name!r}: {name} must be a dataclass")

    @classmethod
    def from_module(cls, name: str, module: ModuleType) -> SuiteRunner:
        """The runner of a module that defines the hooks as functions (and ``AXIS_ALIASES``):
        the one place their names are looked up. A missing required hook is a ``TypeError``."""
        ns = vars(module)
        missing = [h for h in ("Grid", "Settings", *HOOKS) if h not in ns]
        if missing:
            raise TypeError(f"runner module {module.__name__} of suite {name!r} lacks "
                            f"{', '.join(missing)} (a runner defines Grid, Settings, "
                            f"{', '.join(HOOKS)})")
        optional = {h: ns[h] for h in OPTIONAL_HOOKS if h in ns and h != "axis_aliases"}
        if "AXIS_ALIASES" in ns:
            optional["axis_aliases"] = dict(ns["AXIS_ALIASES"])
        if "SWEEP_SETTINGS" in ns:
            optional["sweep_settings"] = tuple(ns["SWEEP_SETTINGS"])
        if "VALUE_ALIASES" in ns:
            optional["value_aliases"] = {a: dict(m) for a, m in ns["VALUE_ALIASES"].items()}
        return cls(name=name, module=module.__name__, Grid=ns["Grid"], Settings=ns["Settings"],
                   **{h: ns[h] for h in HOOKS}, **optional)


def setting(default: Any = None, *, cite: str, allowed: Any = None, doc: str = "") -> Any:
    """A field of a suite's ``Settings`` with its paper citation and accepted values written
    beside its default (``dataclasses.fields(Settings)[i].metadata``): ``cite`` names the
    source of the default (paper section, the authors' script), ``allowed`` the accepted
    values (a tuple, or the dotted name of the table that holds them) and ``doc`` one line on
    what it does. A list default is copied per instance."""
    meta = {"cite": cite, "allowed": allowed, "doc": doc}
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=meta)
    return field(default=default, metadata=meta)


def axis(default: Any = dataclasses.MISSING, *, allowed: Any = None, check: Any = None,
         unknown: str = "", doc: str = "") -> Any:
    """A field of a suite's ``Grid``: one grid point's value of an axis, with the values it
    accepts written beside it, as :func:`setting` does for a setting.
    :func:`gs_bench.suites.check_grid` (a runner's ``validate``) checks every value the suite's
    grid lists: ``allowed`` is a collection (a dict: its keys) or a function returning one, read
    at call time (a registry such as gs-splits' strategies); ``check`` a function that raises
    :class:`~gs_bench.suites.SuiteConfigError` for a value it refuses, for what a list cannot
    say (gess's ``tl-<N>``); ``unknown`` the start of the message for a value not allowed
    (default ``"unknown {axis} {value!r}"``), to which the closest accepted value and the
    accepted values are added. A field without ``default`` is an axis the suite's grid must
    have; one with a default may be left out (its points then take the default, and the axis
    enters no job key)."""
    meta = {"allowed": allowed, "check": check, "unknown": unknown, "doc": doc}
    return field(default=default, metadata=meta)
