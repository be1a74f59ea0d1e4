"""Declarative benchmark suites: one TOML file per suite, expanded into jobs.

A suite file (see ``gs_bench/suites/*.toml`` for the shipped ones) has::

    suite = "structural-shifts"          # which runner executes its jobs
    description = "..."
    seeds = 5                             # seeds 0..seeds-1 become an axis of the grid

    [grid]                                # axes: the cartesian product becomes the jobs
    dataset = ["cora-ml", "citeseer"]
    strategy = ["popularity", "locality", "density"]
    method = ["erm", "se", "de"]

    [settings]                            # fixed values passed to every job (paper defaults)
    model = "structural-shifts-base"

    [resources]                           # what one job asks of a Ray worker (not in the key)
    num_cpus = 1
    num_gpus = 0
    [resources.method.eerm]               # per value of a grid axis: here every EERM job
    num_cpus = 2

    [[exclude]]                           # grid points dropped from every profile (as a
    dataset = "cora-ml"                   # CI matrix `exclude`): each table names axes and
    method = ["se", "de"]                 # the value(s) that together make a point excluded

    [profiles.demo]                       # a profile overrides seeds, grid axes, settings,
    seeds = 1                             # resources and exclude rules
    [profiles.demo.grid]
    dataset = ["synthetic-default"]
    [[profiles.demo.exclude]]             # and may drop more grid points, for itself only
    method = "de"

Every job is keyed by a hash of its complete resolved configuration (suite, grid point,
settings, seed, data fingerprint and package versions), so re-running skips finished jobs
and any change of setting or package version makes a new job. ``[resources]`` (and the
device a run uses) stay out of the key: where a job runs does not change what it computes.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import functools
import hashlib
import importlib.resources
import itertools
import json
import math
import sys
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = [
    "SuiteConfig",
    "Job",
    "TypedGrid",
    "grid_point",
    "check_grid",
    "did_you_mean",
    "SuiteConfigError",
    "DataMissingError",
    "available_suites",
    "load_suite",
    "expand_jobs",
    "job_key",
    "PROFILES",
    "OPTIONAL_PROFILES",
    "suite_profiles",
    "ProfileTable",
    "SuiteFile",
    "runner_schema",
    "check_table",
    "check_positive",
    "check_nonnegative",
    "TypedSettings",
    "job_resources",
    "RESOURCE_KEYS",
    "setting_text",
    "UNSET",
]

PROFILES = ("demo", "ci", "medium", "paper", "full")
#: Profiles that a suite has only where its file defines them (listed only there).
OPTIONAL_PROFILES = ("medium",)


class SuiteConfigError(ValueError):
    """A suite file or a command-line override that cannot be run; the message says what to fix."""


class DataMissingError(SuiteConfigError):
    """The suite is well formed but this machine lacks a dataset's files (or the optional
    package that makes them); the message names the path to place them at."""


@dataclass(frozen=True)
class SuiteConfig:
    """A suite resolved for one profile."""

    suite: str
    profile: str
    description: str
    seeds: int
    grid: dict[str, list[Any]]
    settings: dict[str, Any]
    source: str
    paper: str = ""
    #: ``[resources]`` merged with the profile's (see :func:`job_resources`)
    resources: dict[str, Any] = field(default_factory=dict)
    exclude: tuple[dict[str, tuple[Any, ...]], ...] = ()
    #: the file has no table of ``profile`` and its base settings run instead (the default
    #: profile, demo, on a file without ``[profiles.demo]``); :attr:`profile_label` says so
    profile_missing: bool = False
    #: :attr:`settings` built into the runner's ``Settings`` dataclass (every default filled
    #: in, its value checks passed), once by :func:`load_suite` and again by
    #: :meth:`with_overrides` through the same schema; ``None`` for a config built by hand.
    #: :attr:`settings` stays the dict of the keys the suite file and the command line set:
    #: it is what enters the job keys and the records, and a worker re-creates the typed
    #: object from it (e.g. ``gs_bench.runners.lebed.Settings.from_job``).
    typed_settings: Any = field(default=None, compare=False, repr=False)
    #: one line per value a grid axis (in the file or on the command line) listed more than
    #: once: the plan keeps the first and ``gs-bench run`` prints these lines (issue 56)
    notes: tuple[str, ...] = field(default=(), compare=False, repr=False)

    @property
    def profile_label(self) -> str:
        """The profile as the plan line shows it: ``demo``, or ``demo: my.toml has no
        [profiles.demo], so its [grid] and [settings] as written`` where the file lacks it."""
        if not self.profile_missing:
            return self.profile
        return (f"{self.profile}: {self.source} has no [profiles.{self.profile}], so its [grid] "
                "and [settings] as written")

    def excluded(self, params: dict[str, Any]) -> bool:
        """Whether the grid point ``params`` matches one of the ``[[exclude]]`` rules."""
        return any(all(params.get(axis) in values for axis, values in rule.items())
                   for rule in self.exclude)

    def with_overrides(
        self,
        *,
        seeds: int | None = None,
        axes: dict[str, list[Any]] | None = None,
        settings: dict[str, Any] | None = None,
    ) -> SuiteConfig:
        grid = copy.deepcopy(self.grid)
        notes = list(self.notes)
        for axis, values in (axes or {}).items():
            if axis not in grid:
                raise SuiteConfigError(
                    f"suite {self.suite!r} has no axis {axis!r}; its axes are {sorted(grid)}"
                )
            if not values:
                raise SuiteConfigError(f"--{axis}s needs at least one value")
            grid[axis], more = dedupe_values(list(values), f"command line: {axis}",
                                             _value_aliases(self.suite).get(axis))
            notes += more
        if seeds is not None and seeds < 1:
            raise SuiteConfigError(f"--seeds must be >= 1, got {seeds}")
        typed = self.typed_settings
        settings = dict(settings or {})
        unset = [k for k, v in settings.items() if v is UNSET]
        for key in unset:
            del settings[key]
        # an unset setting goes back to None, its schema default: only where the default is None
        # (a setting with a real default keeps it; --set gives it another value) and only what
        # the suite sets (there is nothing else to take back)
        fields = {f.name: f for f in dataclasses.fields(type(typed))} if unset and typed is not None else {}
        for key in unset:
            if typed is not None and key not in fields:
                raise SuiteConfigError(
                    f"command line: --unset {key}: unknown setting{did_you_mean(key, fields)} "
                    f"(accepted here: {', '.join(sorted(fields))})")
            if key in fields and fields[key].default is not None:
                raise SuiteConfigError(
                    f"command line: --unset {key}: this setting cannot be unset (its default "
                    f"is {fields[key].default!r}); give it a value with --set {key}=VALUE")
            if key not in self.settings:
                whose = "the suite file" if self.profile_missing or typed is None else f"the {self.profile} profile"
                raise SuiteConfigError(
                    f"command line: --unset {key}: {whose} does not set it, so it is unset "
                    f"already (settings it sets: {', '.join(sorted(self.settings)) or 'none'})")
        if unset and typed is not None:
            typed = dataclasses.replace(typed, **{k: None for k in unset})
        if settings and typed is not None:
            # the command line's settings pass the schema the suite file passed: an unknown
            # key or a wrong type stops here, naming the key and the accepted ones
            where = "command line: settings"
            try:
                check_table(dict(settings), type(typed), where, partial=True)
            except SuiteConfigError as exc:
                # on the command line a key is taken out with --unset, not by leaving it out
                raise SuiteConfigError(str(exc).replace(
                    "nothing (leave the key out)", "unset (--unset KEY)")) from None
            try:
                typed = dataclasses.replace(typed, **settings)
            except (TypeError, ValueError) as exc:
                raise SuiteConfigError(f"{where}: {exc}") from None
        return SuiteConfig(
            suite=self.suite,
            profile=self.profile,
            description=self.description,
            seeds=self.seeds if seeds is None else seeds,
            grid=grid,
            settings={**{k: v for k, v in self.settings.items() if k not in unset}, **settings},
            source=self.source,
            paper=self.paper,
            resources=copy.deepcopy(self.resources),
            exclude=self.exclude,
            profile_missing=self.profile_missing,
            typed_settings=typed,
            notes=tuple(dict.fromkeys(notes)),
        )


def dedupe_values(values: list[Any], where: str,
                  aliases: Mapping[str, Any] | None = None) -> tuple[list[Any], list[str]]:
    """A grid axis' values with repeats left out (the first kept, in order), and one line per
    repeated value saying so: a value listed twice would plan the same job keys twice. An alias
    (``aliases``: the runner's ``value_aliases`` of this axis) listed beside the value it names
    is left out too, with its own line (the same training under two names)."""
    out: list[Any] = []
    seen: dict[str, int] = {}
    notes: list[str] = []
    listed = {json.dumps(v, sort_keys=True, default=str) for v in values}
    for v in values:
        name = aliases.get(v) if aliases and isinstance(v, str) else None
        if name is not None and name != v and json.dumps(name, sort_keys=True, default=str) in listed:
            notes.append(f"{where}: {v!r} is {name!r} (the same jobs); planned once, as {name!r}")
            continue
        k = json.dumps(v, sort_keys=True, default=str)
        if k in seen:
            seen[k] += 1
            continue
        seen[k] = 1
        out.append(v)
    notes = [f"{where}: {json.loads(k)!r} is listed {n} times; planned once" for k, n in seen.items() if n > 1] + notes
    return out, notes


def _value_aliases(suite: str) -> Mapping[str, Mapping[str, Any]]:
    """The runner's :attr:`~gs_bench.runner.SuiteRunner.value_aliases` (none for a suite
    without a runner here)."""
    from gs_bench.runners import load_runner

    try:
        return load_runner(suite).value_aliases
    except (KeyError, ValueError, TypeError, SuiteConfigError, ImportError):
        return {}


class _Unset:
    """The value of a setting given to ``--unset`` (:data:`UNSET`)."""

    def __repr__(self) -> str:
        return "UNSET"


#: in :meth:`SuiteConfig.with_overrides`' ``settings``: drop the key from the settings dict (so
#: it enters no job key, as if the suite file never set it) and set the typed setting to None,
#: its default; only settings whose default is None can be unset (``gs-bench run --unset KEY``)
UNSET: Any = _Unset()


class TypedGrid:
    """Base of a suite's frozen ``Grid`` dataclass: one grid point, each axis a field with its
    type, its accepted values and a line on what it does (:func:`gs_bench.runner.axis`).

    A suite file lists several values per axis (``[grid] model = ["gcn", "gat"]``); a field
    holds one of them, and :func:`load_suite` checks every listed value against the field's
    type. :func:`check_grid` checks them against the field's accepted values. A job carries its
    point as this object (:attr:`Job.params`)."""

    @classmethod
    def from_mapping(cls, point: Any) -> Any:
        """The grid point of a ``{axis: value}`` mapping (an instance passes through); see
        :func:`grid_point`."""
        return grid_point(cls, point)


def grid_point(grid: type, point: Any) -> Any:
    """The ``grid`` dataclass instance of the ``{axis: value}`` mapping ``point`` (an instance
    passes through). An axis the mapping lacks takes its field's default, or ``None`` where the
    field has none (a point written by hand, e.g. ``{"method": "erm", "dataset": "cora-ml"}``
    for a plan hook); an axis the grid does not have is a ``TypeError``."""
    if isinstance(point, grid):
        return point
    point = dict(point or {})
    fields = dataclasses.fields(grid)
    unknown = sorted(set(point) - {f.name for f in fields})
    if unknown:
        raise TypeError(f"grid point {point}: {grid.__qualname__} has no axis {', '.join(unknown)} "
                        f"(axes: {', '.join(f.name for f in fields)})")
    values = {f.name: point[f.name] if f.name in point else _field_default(f) for f in fields}
    return grid(**values)


def _field_default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None


@dataclass(frozen=True)
class Job:
    """One unit of work: a grid point, a seed and the suite settings, and where it runs.

    ``params`` is the suite's ``Grid`` instance (:class:`TypedGrid`); ``axes`` names the axes of
    the suite's grid in its order, the keys of :attr:`point`, the ``{axis: value}`` dict that
    enters the job key and the record (an axis with a default, such as lebed's ``shard``, is
    there only where the grid lists it). ``settings`` is the dict of the keys the suite file and
    the command line set, as it enters the key; ``Settings.from_job(job)`` is its typed object.
    ``device`` and ``workdir`` come from the executor (:func:`gs_bench.executors.run_one`) and
    enter neither the key nor the record: ``device`` is the :class:`torch.device` resolved once
    on the worker (``"auto"`` for a job run by hand), ``workdir`` the results folder, for files
    jobs share (``None``: no shared folder)."""

    suite: str
    params: Any
    settings: dict[str, Any]
    seed: int
    key: str = field(default="")
    axes: tuple[str, ...] | None = None
    device: torch.device | str = "auto"
    workdir: Path | None = None

    @property
    def point(self) -> dict[str, Any]:
        """The grid point as ``{axis: value}``, in the grid's order (what enters the key)."""
        if isinstance(self.params, Mapping):
            return dict(self.params)
        names = self.axes if self.axes is not None else [f.name for f in dataclasses.fields(self.params)]
        return {a: getattr(self.params, a) for a in names}

    def describe(self) -> str:
        parts = [f"{k}={v}" for k, v in self.point.items()]
        return f"{self.suite}[{', '.join(parts)}, seed={self.seed}]"

    def as_dict(self) -> dict[str, Any]:
        """The job as the plan, the executors and the record hold it (JSON; no device, no
        work folder)."""
        return {
            "suite": self.suite,
            "params": self.point,
            "settings": self.settings,
            "seed": self.seed,
            "key": self.key,
        }

    @classmethod
    def of(cls, job: Any, grid: type | None = None, **where: Any) -> Job:
        """The typed job of ``job``: a :class:`Job` (``where`` replaces its ``device`` /
        ``workdir``), or a job dict (:meth:`as_dict`'s keys, and ``device`` / ``workdir`` where
        a caller gives them), its ``params`` built into ``grid`` (the suite's ``Grid``; without
        one they stay a dict)."""
        if isinstance(job, Job):
            if grid is not None and isinstance(job.params, Mapping):  # a job planned without it
                where = {"params": grid_point(grid, job.params), "axes": tuple(job.params), **where}
            return dataclasses.replace(job, **where) if where else job
        job = dict(job)
        params = job.get("params") or {}
        workdir = where.get("workdir", job.get("workdir"))
        return cls(
            suite=job.get("suite", ""),
            params=grid_point(grid, params) if grid is not None else params,
            settings=dict(job.get("settings") or {}),
            seed=int(job.get("seed", 0)),
            key=job.get("key", ""),
            axes=tuple(params) if isinstance(params, Mapping) else None,
            device=where.get("device", job.get("device", "auto")),
            workdir=Path(workdir) if workdir else None,
        )


def available_suites() -> list[str]:
    folder = importlib.resources.files("gs_bench") / "suites"
    return sorted(p.name.removesuffix(".toml") for p in folder.iterdir() if p.name.endswith(".toml"))


def suite_profiles(name_or_path: str) -> list[str]:
    """The ``[profiles.<name>]`` tables a suite file defines (unchecked)."""
    profiles = _read_toml(name_or_path)[0].get("profiles", {})
    return sorted(profiles) if isinstance(profiles, dict) else []


def _read_toml(name_or_path: str) -> tuple[dict[str, Any], str]:
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.exists():
        if path.is_dir():
            raise SuiteConfigError(f"suite path {path} is a directory, not a suite .toml file "
                                   "(give the file inside it, or a shipped suite name)")
        if not path.is_file():
            raise SuiteConfigError(f"suite file {path} does not exist")
        source = str(path)
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise SuiteConfigError(f"suite file {source} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        except OSError as exc:
            raise SuiteConfigError(f"cannot read suite file {source}: {exc.strerror or exc}") from None
    else:
        names = available_suites()
        if name_or_path not in names:
            hint = did_you_mean(name_or_path, names)
            raise SuiteConfigError(
                f"unknown suite {name_or_path!r}{hint + ' The' if hint else ';'} available suites: {', '.join(names)} "
                "(or pass the path of a suite .toml file)"
            )
        res = importlib.resources.files("gs_bench") / "suites" / f"{name_or_path}.toml"
        text, source = res.read_text(encoding="utf-8"), f"gs_bench/suites/{name_or_path}.toml"
    try:
        return tomllib.loads(text), source
    except tomllib.TOMLDecodeError as exc:
        raise SuiteConfigError(f"suite file {source} is not valid TOML: {' '.join(str(exc).split())}") from None
    except RecursionError:  # a crafted file (issue 56)
        raise SuiteConfigError(f"suite file {source}: a value nested too deep to be a suite setting") from None


# ----------------------------------------------------------------------------- schema
@dataclass(frozen=True)
class ProfileTable:
    """Keys of a ``[profiles.<name>]`` table. ``grid`` and ``settings`` are checked against the
    runner's :class:`Grid` / :class:`Settings` schema (any subset of their keys)."""

    description: str = ""
    seeds: int = 1
    grid: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    resources: dict = field(default_factory=dict)
    #: ``[[profiles.<name>.exclude]]``: grid points dropped from this profile only, added to
    #: the suite's ``[[exclude]]`` rules (e.g. a CI profile that runs the costly datasets with
    #: fewer algorithms)
    exclude: list = field(default_factory=list)


@dataclass(frozen=True)
class SuiteFile:
    """Top-level keys of a suite file. ``grid`` / ``settings`` follow the runner's schema,
    ``profiles`` maps a profile name (:data:`PROFILES`) to a :class:`ProfileTable`."""

    suite: str
    description: str = ""
    paper: str = ""
    seeds: int = 1
    grid: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    resources: dict = field(default_factory=dict)
    profiles: dict = field(default_factory=dict)
    exclude: list = field(default_factory=list)


def runner_schema(suite: str) -> tuple[type, type]:
    """The ``(Grid, Settings)`` dataclasses of ``suite``'s runner module.

    They are the one place that says which grid axes and which settings a suite accepts and of
    which type: ``load_suite`` derives its strict checks from them, so adding a setting to a
    suite means adding one field (with its paper default) to ``Settings`` in
    ``gs_bench/runners/<suite>.py``.
    """
    from gs_bench.runners import load_runner

    runner = load_runner(suite)  # a TypeError unless both are dataclasses
    return runner.Grid, runner.Settings


#: The largest integer a count setting takes (epochs, batch size, bins, ...; issue 56:
#: ``max_epochs = 10**20`` passed the suite check and overflowed int64 in the job).
MAX_COUNT = 10**6
#: The most seeds of a run (``gs-bench run --seeds``), and of any setting that counts runs.
MAX_SEEDS = 1000


def check_positive(settings: Any, *names: str) -> None:
    """Raise ``ValueError`` naming the first of ``names`` whose value is set and not a finite
    number > 0 (for the ``__post_init__`` of a runner's ``Settings``; ``lr = inf`` passed
    before issue 34 and the job died at epoch 1), or an integer above :data:`MAX_COUNT`."""
    for name in names:
        value = getattr(settings, name)
        if value is not None and not (value > 0 and math.isfinite(value)):
            raise ValueError(f"{name} must be > 0 and finite, got {value!r}")
        if isinstance(value, int) and not isinstance(value, bool) and value > MAX_COUNT:
            raise ValueError(f"{name} must be at most {MAX_COUNT:,}, got {value}")


def check_at_most(settings: Any, **limits: int) -> None:
    """Raise ``ValueError`` naming the first setting of ``limits`` whose value is set and above
    its limit (a runner's own ranges, e.g. run counts at most :data:`MAX_SEEDS`)."""
    for name, most in limits.items():
        value = getattr(settings, name)
        if value is not None and value > most:
            raise ValueError(f"{name} must be at most {most:,}, got {value}")


def check_choice(settings: Any, name: str, choices: Sequence[Any]) -> None:
    """Raise ``ValueError`` when setting ``name`` is set and not one of ``choices`` (``None``
    among them is left out of the message: unset is always accepted)."""
    value = getattr(settings, name)
    if value is not None and value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(str(c) for c in choices if c is not None)} "
                         f"or unset, got {value!r}")


def check_nonnegative(settings: Any, *names: str) -> None:
    """Raise ``ValueError`` naming the first of ``names`` whose value is set and not a finite
    number >= 0 (e.g. ``weight_decay``, which only failed inside the job before issue 34)."""
    for name in names:
        value = getattr(settings, name)
        if value is not None and not (value >= 0 and math.isfinite(value)):
            raise ValueError(f"{name} must be >= 0 and finite, got {value!r}")


class TypedSettings:
    """Base of a suite's frozen ``Settings`` dataclass: the typed object re-created from a
    settings dict (a job's on the worker, a record's in a report) through the schema the suite
    file passed. The dict stays what enters the job keys; the object is what the code reads."""

    @classmethod
    def from_mapping(cls, settings: Any) -> Any:
        """The typed settings of a ``[settings]`` dict (an instance passes through): an unknown
        key or a wrong type is a :class:`SuiteConfigError` naming it and the accepted keys, a
        bad value one naming the setting."""
        if isinstance(settings, cls):
            return settings
        table = dict(settings or {})
        check_table(table, cls, "settings", partial=True)
        try:
            return cls(**table)
        except (TypeError, ValueError) as exc:
            raise SuiteConfigError(f"settings: {exc}") from None

    @classmethod
    def from_config(cls, config: Any) -> Any:
        """The typed settings of a :class:`SuiteConfig`: the object :func:`load_suite` built
        (:attr:`SuiteConfig.typed_settings`), or, for a config built by hand, one made from its
        settings dict."""
        typed = config.typed_settings
        return typed if isinstance(typed, cls) else cls.from_mapping(config.settings)

    @classmethod
    def from_job(cls, job: Any) -> Any:
        """The typed settings of a job (:attr:`Job.settings`, the dict of its key; a job dict's
        ``"settings"``)."""
        return cls.from_mapping(job.settings if isinstance(job, Job) else job.get("settings"))

    @classmethod
    def from_record(cls, record: Any) -> Any:
        """The typed settings a record's job ran with, for a report: keys this version no longer
        knows (a record of an older gs-bench) are left out instead of refused."""
        settings = (record.get("job") or {}).get("settings") or {}
        names = {f.name for f in dataclasses.fields(cls)}
        return cls.from_mapping({k: v for k, v in settings.items() if k in names})


def _non_finite(value: Any, path: str) -> tuple[str, float] | None:
    """``(key path, value)`` of the first float in ``value`` (a TOML value, tables and lists
    included) that is ``inf`` or ``nan``; ``None`` when every number is finite."""
    if isinstance(value, float) and not math.isfinite(value):
        return path, value
    items = value.items() if isinstance(value, dict) else (
        ((f"[{i}]", v) for i, v in enumerate(value)) if isinstance(value, list) else ())
    for k, v in items:
        found = _non_finite(v, f"{path}{k}" if str(k).startswith("[") else f"{path}.{k}")
        if found is not None:
            return found
    return None


def setting_text(value: Any) -> str:
    """A setting's value as a suite file and ``--set`` write it (TOML: ``true``, ``"binary"``,
    ``[1, 2]``, ``{erm = {lr = 0.1}}``), and ``unset`` for None, which TOML cannot write
    (``--unset KEY``)."""
    if value is None:
        return "unset"
    if isinstance(value, dict):
        keys = (k if k.replace("_", "").replace("-", "").isalnum() else json.dumps(k) for k in map(str, value))
        return "{" + ", ".join(f"{k} = {setting_text(v)}" for k, v in zip(keys, value.values(), strict=True)) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(setting_text(v) for v in value) + "]"
    return json.dumps(value)


def did_you_mean(key: str, choices: Any) -> str:
    """``"; did you mean 'x'?"`` for the choice closest to ``key`` (case ignored), else ``""``:
    for a runner's own "unknown name" messages (a method, backbone, dataset...)."""
    lower = {str(c).lower(): str(c) for c in choices}
    close = difflib.get_close_matches(str(key).lower(), list(lower), n=1, cutoff=0.6)
    return f"; did you mean {lower[close[0]]!r}?" if close else ""


def _type_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_name(a) for a in typing.get_args(tp))
    if origin is list:
        (inner,) = typing.get_args(tp) or (Any,)
        return f"a list of {_type_name(inner)}"
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(a) for a in typing.get_args(tp))
    if tp is type(None):
        return "nothing (leave the key out)"
    if tp is Any:
        return "any value"
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false",
            dict: "a table"}.get(tp, getattr(tp, "__name__", str(tp)))


def _value_repr(value: Any) -> str:
    text = repr(value)
    kind = {str: "a string", int: "an integer", float: "a number", bool: "a boolean",
            list: "a list", dict: "a table"}.get(type(value), type(value).__name__)
    return f"{text[:60]}{'...' if len(text) > 60 else ''} ({kind})"


def _matches(value: Any, tp: Any) -> bool:
    if tp is Any:
        return True
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return any(_matches(value, a) for a in typing.get_args(tp))
    if origin is typing.Literal:
        return value in typing.get_args(tp)
    if origin is list:
        (inner,) = typing.get_args(tp) or (Any,)
        return isinstance(value, list) and all(_matches(v, inner) for v in value)
    if tp is type(None):
        return value is None
    if tp is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if dataclasses.is_dataclass(tp):
        return isinstance(value, dict)
    return isinstance(value, typing.get_origin(tp) or tp)


@functools.cache
def _type_hints(schema: type) -> dict[str, Any]:
    """``typing.get_type_hints(schema)``, evaluated once per schema: the typed settings are
    re-created from a settings dict per job (a runner's ``runs`` / ``applicable`` at planning),
    and evaluating the string annotations each time made a plan of 3,500 jobs 8 times slower."""
    return typing.get_type_hints(schema)


def check_table(table: Any, schema: type, path: str, *, partial: bool = False) -> None:
    """Check ``table`` (a parsed TOML table) against the dataclass ``schema``.

    Unknown keys raise :class:`SuiteConfigError` with a "did you mean" suggestion, values of the
    wrong type name the key's path (``profiles.ci.settings.lr``) and the accepted type; nested
    dataclass fields are checked recursively. ``partial`` allows leaving out required keys (a
    profile overrides any subset).
    """
    where = path or "the suite file"
    if not isinstance(table, dict):
        raise SuiteConfigError(f"{where}: expected a table, got {_value_repr(table)}")
    hints = _type_hints(schema)
    fields = {f.name: f for f in dataclasses.fields(schema)}
    for key, value in table.items():
        kpath = f"{path}.{key}" if path else str(key)
        if key not in fields:
            raise SuiteConfigError(
                f"{kpath}: unknown key{did_you_mean(key, fields)} "
                f"(accepted here: {', '.join(sorted(fields))})"
            )
        tp = hints[key]
        bad = _non_finite(value, kpath)
        if bad is not None:  # TOML has inf and nan; no setting of gs accepts them
            raise SuiteConfigError(f"{bad[0]}: expected a finite number, got {_value_repr(bad[1])}")
        if dataclasses.is_dataclass(tp) and isinstance(value, dict):
            check_table(value, tp, kpath, partial=partial)
        elif not _matches(value, tp):
            raise SuiteConfigError(f"{kpath}: expected {_type_name(tp)}, got {_value_repr(value)}")
    if not partial:
        missing = [
            n for n, f in fields.items()
            if n not in table and f.default is dataclasses.MISSING
            and f.default_factory is dataclasses.MISSING
        ]
        if missing:
            raise SuiteConfigError(f"{where}: missing required key(s) {', '.join(missing)}")


def _check_grid(grid: Any, schema: type, path: str, *, profile: bool) -> dict[str, list[Any]]:
    if not isinstance(grid, dict):
        raise SuiteConfigError(f"{path}: [grid] must be a table of axis = [values]")
    axes = {f.name for f in dataclasses.fields(schema)}
    for axis, values in grid.items():
        if axis not in axes:
            hint = " (the [grid] does not have it)" if profile else ""
            raise SuiteConfigError(
                f"{path}.{axis}: unknown grid axis{hint}{did_you_mean(axis, axes)} "
                f"(axes of this suite: {', '.join(sorted(axes))})"
            )
        if not isinstance(values, list) or not values:
            raise SuiteConfigError(
                f"{path}.{axis}: a grid axis must be a non-empty list, got {_value_repr(values)}"
            )
        bad = _non_finite(values, f"{path}.{axis}")
        if bad is not None:
            raise SuiteConfigError(f"{bad[0]}: expected a finite number, got {_value_repr(bad[1])}")
        tp = _axis_type(schema, axis)
        if not _matches(values, tp):
            raise SuiteConfigError(f"{path}.{axis}: expected {_type_name(tp)}, got {_value_repr(values)}")
    return dict(grid)


def _axis_type(schema: type, axis: str) -> Any:
    """The type of a grid axis' list of values: ``list[T]`` for a ``Grid`` field of type ``T``
    (one grid point's value); a field written as a list already (``n: list[int]``, a runner of
    before issue 57) is taken as it is."""
    tp = _type_hints(schema)[axis]
    return tp if typing.get_origin(tp) is list else list[tp]


def check_grid(config: SuiteConfig, grid: type) -> None:
    """Raise :class:`SuiteConfigError` unless ``config``'s grid has every axis ``grid`` (the
    runner's ``Grid``) requires and every value it lists is one its field accepts: the field's
    ``check`` (a function that raises), else its ``allowed`` values (a collection, or a function
    that returns one, read at call time: a registry), with the closest one named (see
    :func:`gs_bench.runner.axis`). A runner's ``validate`` calls it first."""
    for f in dataclasses.fields(grid):
        if f.name not in config.grid:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise SuiteConfigError(f"{config.source}: the {config.suite} suite needs a grid axis {f.name!r}")
            continue
        check, allowed = f.metadata.get("check"), f.metadata.get("allowed")
        if check is None and (allowed is None or isinstance(allowed, str)):
            continue  # no accepted values to check against (a string only describes them)
        names = allowed() if callable(allowed) else allowed
        for value in config.grid[f.name]:
            if check is not None:
                check(value)
            elif value not in names:
                head = f.metadata.get("unknown") or "unknown {axis} {value!r}"
                raise SuiteConfigError(
                    f"{head.format(axis=f.name, value=value)}{did_you_mean(value, names)}; "
                    f"accepted: {', '.join(map(str, names))}")


#: what a ``[resources]`` table (or one of its per-value tables) may set
RESOURCE_KEYS = ("num_cpus", "num_gpus")


def _check_resource_values(table: dict, path: str) -> None:
    for key, value in table.items():
        if key not in RESOURCE_KEYS:  # the caller routes axis names elsewhere
            continue
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        if not ok or value < 0 or (key == "num_cpus" and value == 0):
            need = "a number > 0" if key == "num_cpus" else "a number >= 0 (fractions share a GPU)"
            raise SuiteConfigError(f"{path}.{key}: expected {need}, got {_value_repr(value)}")


def _check_resources(table: Any, path: str, axes: dict[str, set]) -> None:
    """Check a ``[resources]`` table: ``num_cpus`` (> 0), ``num_gpus`` (>= 0) and per grid axis
    a table ``{value: {num_cpus, num_gpus}}`` whose values are values of that axis somewhere in
    the file (``axes``: axis -> every value the grid and the profiles give it)."""
    if not isinstance(table, dict):
        raise SuiteConfigError(f"{path}: expected a table, got {_value_repr(table)}")
    for key, value in table.items():
        kpath = f"{path}.{key}"
        if key in RESOURCE_KEYS:
            continue
        if key not in axes:
            raise SuiteConfigError(
                f"{kpath}: unknown key{did_you_mean(key, [*RESOURCE_KEYS, *axes])} (accepted: "
                f"{', '.join(RESOURCE_KEYS)}, or a grid axis ({', '.join(sorted(axes))}) with "
                "one table per value)"
            )
        if not isinstance(value, dict):
            raise SuiteConfigError(f"{kpath}: expected a table of axis values, got {_value_repr(value)}")
        for val, sub in value.items():
            vpath = f"{kpath}.{val}"
            if val not in {str(v) for v in axes[key]}:
                known = sorted(str(v) for v in axes[key])
                raise SuiteConfigError(
                    f"{vpath}: {val!r} is not a value of grid axis {key!r}"
                    f"{did_you_mean(val, known)} (values: {', '.join(known)})"
                )
            if not isinstance(sub, dict):
                raise SuiteConfigError(f"{vpath}: expected a table with {' / '.join(RESOURCE_KEYS)}, "
                                       f"got {_value_repr(sub)}")
            for k in sub:
                if k not in RESOURCE_KEYS:
                    raise SuiteConfigError(f"{vpath}.{k}: unknown key{did_you_mean(k, RESOURCE_KEYS)} "
                                           f"(accepted: {', '.join(RESOURCE_KEYS)})")
            _check_resource_values(sub, vpath)
    _check_resource_values(table, path)


def _merge_resources(base: dict, over: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict):
            merged = dict(out.get(key, {}))
            for val, sub in value.items():
                merged[val] = {**merged.get(val, {}), **sub}
            out[key] = merged
        else:
            out[key] = value
    return out


def job_resources(resources: dict[str, Any], params: dict[str, Any]) -> dict[str, float]:
    """``{"num_cpus", "num_gpus"}`` one job asks of a Ray worker: the suite's ``[resources]``
    (default 1 CPU, no GPU), raised by the per-axis tables that match the job's grid point
    (``[resources.method.eerm]``); where two of them set a key, the larger value wins."""
    out = {"num_cpus": float(resources.get("num_cpus", 1)),
           "num_gpus": float(resources.get("num_gpus", 0))}
    overridden: dict[str, float] = {}
    for axis, value in params.items():
        sub = resources.get(axis, {}).get(str(value)) if isinstance(resources.get(axis), dict) else None
        for k, v in (sub or {}).items():
            overridden[k] = max(float(v), overridden.get(k, float(v)))
    out.update(overridden)
    return out


def _check_exclude(rules: Any, axes: set[str], path: str) -> tuple[dict[str, tuple[Any, ...]], ...]:
    """``[[exclude]]`` tables: each maps grid axes to a value or a list of values."""
    if not isinstance(rules, list) or not all(isinstance(r, dict) for r in rules):
        raise SuiteConfigError(f"{path}: exclude must be tables [[exclude]] of axis = value(s), "
                               f"got {_value_repr(rules)}")
    out = []
    for k, rule in enumerate(rules):
        if not rule:
            raise SuiteConfigError(f"{path}[{k}]: an exclude table needs at least one axis")
        norm = {}
        for axis, values in rule.items():
            if axis not in axes:
                raise SuiteConfigError(
                    f"{path}[{k}].{axis}: unknown grid axis{did_you_mean(axis, axes)} "
                    f"(axes of this suite: {', '.join(sorted(axes))})"
                )
            vals = values if isinstance(values, list) else [values]
            if not vals or any(isinstance(v, (list, dict)) for v in vals):
                raise SuiteConfigError(f"{path}[{k}].{axis}: expected a value or a non-empty list "
                                       f"of values, got {_value_repr(values)}")
            norm[axis] = tuple(vals)
        out.append(norm)
    return tuple(out)


def _seeds(value: Any, path: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise SuiteConfigError(f"{path}: seeds must be a positive integer, got {_value_repr(value)}")
    return value


def load_suite(name_or_path: str, profile: str = "demo", *, explicit: bool = False) -> SuiteConfig:
    """Load a suite by name (shipped) or path (your own TOML) and resolve ``profile``.

    A profile the file has no table of is an error, except ``full`` (the base settings),
    ``paper`` (as full where absent) and the default ``demo``, which runs the base settings
    with :attr:`SuiteConfig.profile_missing` set (the plan line says so) unless ``explicit``
    (the user named it: ``gs-bench run ... --profile demo``), where it is an error too.

    Every key is checked against the schema before anything runs: the top level and profile
    tables against :class:`SuiteFile` / :class:`ProfileTable`, ``[grid]`` and ``[settings]``
    (and those of every profile) against the runner's ``Grid`` / ``Settings`` dataclasses
    (:func:`runner_schema`). The merged settings are built into ``Settings`` so its own
    value checks (``__post_init__``) run too, and that object is kept
    (:attr:`SuiteConfig.typed_settings`).
    """
    raw, source = _read_toml(name_or_path)
    suite = _check_top_level(raw, source)
    if profile not in PROFILES:
        raise SuiteConfigError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
    grid_schema, settings_schema = runner_schema(suite)
    seeds = _seeds(raw.get("seeds", 1), f"{source}: seeds")
    profiles = raw.get("profiles", {})
    if not isinstance(profiles, dict):  # before the grid axes read the profiles' grids
        raise SuiteConfigError(f"{source}: profiles must be tables [profiles.<name>], got {_value_repr(profiles)}")
    grid = _check_grid(raw.get("grid", {}), grid_schema, f"{source}: grid", profile=False)
    axis_values = _axis_values(grid, profiles)
    _check_resources(raw.get("resources", {}), f"{source}: resources", axis_values)
    settings = raw.get("settings", {})
    check_table(settings, settings_schema, f"{source}: settings", partial=True)
    settings = dict(settings)
    for name, prof in profiles.items():
        _check_profile(name, prof, f"{source}: profiles.{name}", grid, (grid_schema, settings_schema),
                       axis_values)
    missing = [f.name for f in dataclasses.fields(grid_schema)
               if f.name not in grid and f.default is dataclasses.MISSING
               and f.default_factory is dataclasses.MISSING]
    if missing:
        raise SuiteConfigError(
            f"{source}: the {suite} suite needs grid axis/axes {', '.join(missing)} in [grid]"
        )
    axes = {f.name for f in dataclasses.fields(grid_schema)}
    exclude = _check_exclude(raw.get("exclude", []), axes, f"{source}: exclude")
    seeds_value, description = seeds, raw.get("description", "")
    resources = dict(raw.get("resources", {}))
    if profile in profiles:
        prof = profiles[profile]
        exclude = exclude + _check_exclude(prof.get("exclude", []), axes, f"{source}: profiles.{profile}.exclude")
        grid.update(prof.get("grid", {}))
        settings.update(prof.get("settings", {}))
        resources = _merge_resources(resources, prof.get("resources", {}))
        seeds_value = prof.get("seeds", seeds)
        description = prof.get("description", description)
    notes = _dedupe_grid(grid, suite, source, profiles.get(profile, {}).get("grid", {}), profile)
    try:
        typed = settings_schema(**settings)
    except (TypeError, ValueError) as exc:
        where = f"profiles.{profile}.settings / settings" if profile in profiles else "settings"
        raise SuiteConfigError(f"{source}: {where}: {exc}") from None
    if profile not in profiles and profile not in ("full", "paper") and (profile != "demo" or explicit):
        raise _no_profile(source, profile, profiles)
    return SuiteConfig(
        suite=suite,
        profile=profile,
        description=description,
        seeds=seeds_value,
        grid=grid,
        settings=settings,
        source=source,
        paper=raw.get("paper", ""),
        resources=resources,
        exclude=exclude,
        profile_missing=profile == "demo" and profile not in profiles,
        typed_settings=typed,
        notes=tuple(notes),
    )


def _check_top_level(raw: dict[str, Any], source: str) -> str:
    """The top-level keys of a suite file against :class:`SuiteFile` (``[grid]``, ``[settings]``,
    the profiles and the exclude rules are checked elsewhere); its runner's name."""
    names = [f.name for f in dataclasses.fields(SuiteFile)]
    for key in raw:
        if key not in names:
            raise SuiteConfigError(
                f"{source}: unknown top-level keys [{key!r}]{did_you_mean(key, names)} "
                f"(accepted: {', '.join(names)})"
            )
    if "suite" not in raw or not isinstance(raw["suite"], str):
        raise SuiteConfigError(f"{source}: missing `suite = \"<runner name>\"`")
    from gs_bench.runners import RUNNERS

    if raw["suite"] not in RUNNERS:
        raise SuiteConfigError(
            f"{source}: suite = {raw['suite']!r} has no runner{did_you_mean(raw['suite'], RUNNERS)} "
            f"(known: {', '.join(sorted(RUNNERS))})"
        )
    top = {k: v for k, v in raw.items() if k not in ("grid", "settings", "profiles", "exclude")}
    try:
        check_table(top, SuiteFile, "", partial=True)
    except SuiteConfigError as exc:
        raise SuiteConfigError(f"{source}: {exc}") from None
    return raw["suite"]


def _axis_values(grid: dict[str, list[Any]], profiles: dict[str, Any]) -> dict[str, set]:
    """Every value (as text) each axis of ``grid`` takes in the file: its ``[grid]`` and the
    profiles' grids (what a ``[resources.<axis>.<value>]`` table may name)."""
    values: dict[str, set] = {a: set(map(str, v)) for a, v in grid.items()}
    for prof in profiles.values():
        if isinstance(prof, dict) and isinstance(prof.get("grid"), dict):
            for a, v in prof["grid"].items():
                if a in values and isinstance(v, list):
                    values[a] |= set(map(str, v))
    return values


def _check_profile(name: str, prof: Any, ppath: str, grid: dict[str, list[Any]],
                   schemas: tuple[type, type], axis_values: dict[str, set]) -> None:
    """One ``[profiles.<name>]`` table: its keys, seeds, grid (only axes of the ``[grid]``),
    settings and resources (``schemas``: the runner's ``Grid`` and ``Settings``)."""
    if name not in PROFILES:
        raise SuiteConfigError(
            f"{ppath}: unknown profile{did_you_mean(name, PROFILES)} (profiles: {', '.join(PROFILES)})"
        )
    grid_schema, settings_schema = schemas
    check_table(prof, ProfileTable, ppath, partial=True)
    if "seeds" in prof:
        _seeds(prof["seeds"], f"{ppath}.seeds")
    _check_grid(prof.get("grid", {}), grid_schema, f"{ppath}.grid", profile=True)
    for axis in prof.get("grid", {}):
        if axis not in grid:
            raise SuiteConfigError(
                f"{ppath}.grid.{axis}: profile {name!r} sets axis {axis!r} that the [grid] does not have"
            )
    check_table(prof.get("settings", {}), settings_schema, f"{ppath}.settings", partial=True)
    _check_resources(prof.get("resources", {}), f"{ppath}.resources", axis_values)


def _dedupe_grid(grid: dict[str, list[Any]], suite: str, source: str, profile_grid: dict[str, Any],
                 profile: str) -> list[str]:
    """Leave repeated values (and aliases listed beside their name) out of every axis of
    ``grid``, in place; one note per value left out, naming where it was written."""
    notes: list[str] = []
    for axis in list(grid):
        where = f"{source}: " + (f"profiles.{profile}.grid.{axis}" if axis in profile_grid else f"grid.{axis}")
        grid[axis], more = dedupe_values(list(grid[axis]), where, _value_aliases(suite).get(axis))
        notes += more
    return notes


def _no_profile(source: str, profile: str, profiles: dict[str, Any]) -> SuiteConfigError:
    """The error for a profile the file has no table of. Before issue 34 such a profile ran the
    base settings without a word; full and paper (as full where absent) still run them, and so
    does the default profile (demo) where the user did not name it, saying so in the plan line
    (:attr:`SuiteConfig.profile_missing`)."""
    return SuiteConfigError(
        f"{source}: no [profiles.{profile}] in this suite file; "
        + (f"the profiles it has: {', '.join(sorted(profiles))}, and full (its [grid] and "
           "[settings] as written)" if profiles else
           "it has no profiles: run it without --profile, or with --profile full, for its "
           "[grid] and [settings] as written")
    )


def job_key(payload: dict[str, Any]) -> str:
    """Stable hash of a job's complete resolved configuration (canonical JSON, SHA-256)."""
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:20]


def expand_jobs(
    config: SuiteConfig,
    *,
    versions: dict[str, str] | None = None,
    fingerprints: dict[str, str] | None = None,
    key_extra: dict[str, Any] | None = None,
) -> list[Job]:
    """The cartesian product of the grid axes times the seeds, each job with its key; grid
    points matching an ``[[exclude]]`` rule are left out (their keys are not affected), and a
    key already planned is not planned again.

    ``fingerprints`` maps a dataset name to a fingerprint of its content; ``versions`` maps
    distribution names to versions. Both enter the key. ``key_extra`` (e.g. ``{"device":
    "cuda"}`` for ``gs-bench run --device-in-key``) enters it too when given; without it the
    keys are those of earlier versions.
    """
    axes = list(config.grid)
    grid = _grid_schema(config.suite)
    jobs: list[Job] = []
    keys: set[str] = set()
    for values in itertools.product(*(config.grid[a] for a in axes)):
        params = dict(zip(axes, values, strict=False))
        if config.excluded(params):
            continue
        for seed in range(config.seeds):
            payload = {
                "suite": config.suite,
                "params": params,
                "settings": config.settings,
                "seed": seed,
                "versions": versions or {},
                "data": (fingerprints or {}).get(str(params.get("dataset", "")), ""),
                **({"extra": key_extra} if key_extra else {}),
            }
            key = job_key(payload)
            if key in keys:  # one job per key, whatever spelt it twice (the plan counts keys)
                continue
            keys.add(key)
            point = grid_point(grid, params) if grid is not None else params
            jobs.append(Job(config.suite, point, dict(config.settings), seed, key, axes=tuple(axes)))
    return jobs


def _grid_schema(suite: str) -> type | None:
    """The runner's ``Grid`` of ``suite`` (``None`` for a suite without a runner here: its jobs
    keep their grid points as dicts)."""
    try:
        return runner_schema(suite)[0]
    except (KeyError, ValueError, TypeError, ImportError):
        return None
