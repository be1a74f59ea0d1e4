"""Repository-wide pytest fixtures, shared by every package's tests and by tests/.

* ``shared_datasets``: the folder of real raw datasets that sits beside the repository
  (``../shared/datasets``; override with the ``GS_SHARED_DATA`` environment variable).
  Tests that need it are skipped with a clear reason when it is absent or empty. The folder is
  read-only for us: a session-wide guard fails the run if any test changed a file in it.
* No network: every test runs with outbound connections to anything but the loopback
  interface refused (tests never download; see gs-data's "no network" test).
* No writes into the user's caches: before any test module is imported, ``GS_DATA_ROOT``
  (gs-data's raw files and processed / split caches), ``GS_CACHE_DIR`` (the Track event
  cache) and ``XDG_CACHE_HOME`` (what platformdirs, and so gs-data's fallback, matplotlib's
  font cache, ... use) point into one temporary folder per test session, removed at its end;
  subprocesses that tests start inherit them. uv's package cache stays where it was
  (``UV_CACHE_DIR`` is pinned to it): the wheel tests install from it offline. Real data is
  read from ``shared_datasets`` (``GS_SHARED_DATA``), which this does not touch. Every
  package's tests get this, since nox runs each package's tests from the repository root
  (this file is the rootdir's conftest). ``isolated_cache_root()`` says where it is.
* ``modules_after``: the modules a fresh Python process has loaded after running some code
  (the lazy-import and light-module tests of every package ask it what an import pulled in).
* ``module_getattrs``: the module-level PEP 562 ``__getattr__`` / ``__dir__`` of a package's
  modules (issue 57: the packages' namespace tests assert there are none).
* ``mutual_information_reference``: the Dirichlet's mutual information (total minus expected
  entropy) computed with mpmath at 60 digits, the independent reference of gs-metrics'
  ``dirichlet_uncertainty`` and gs-algos' tensor version (skips where mpmath is absent).
* One core per pytest-xdist worker: with at least as many workers as cores, each worker and
  every process it starts (CLI runs, gs-bench job workers, Ray nodes) keeps to a core of its
  own (``_one_core_per_xdist_worker``).
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import socket
import sys
import tempfile
from pathlib import Path

import pytest

_REPO_ROOT = Path(__file__).resolve().parent

#: environment variables pointed into the session's temporary folder (sub-folder names)
ISOLATED_ENV = {"GS_DATA_ROOT": "gs-data-root", "GS_CACHE_DIR": "gs-cache", "XDG_CACHE_HOME": "xdg-cache"}
_isolation: dict[str, object] = {}


def isolated_cache_root() -> Path | None:
    """The temporary folder holding this session's data root and caches (None outside tests)."""
    return _isolation.get("root")  # type: ignore[return-value]


def _one_core_per_xdist_worker() -> None:
    """Under pytest-xdist with at least as many workers as cores, pin this worker to one core.

    Otherwise every worker, and every process it starts, sizes its OpenMP / torch thread
    pool to the whole machine, and the workers' threads busy-wait on each other's cores: on
    the 2-core CI machine the gs-bench session took 531 s unpinned and 342 s pinned. Child
    processes inherit the mask; gs-bench sizes a job's threads from it (``available_cores``)
    as it would on a user's taskset- or cgroup-limited node. Serial runs are left alone."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0") or 0)
    if not worker.startswith("gw") or not hasattr(os, "sched_setaffinity"):
        return
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2 or count < len(cores):
        return
    os.sched_setaffinity(0, {cores[int(worker[2:]) % len(cores)]})
    if "torch" in sys.modules:  # a pool sized before the pinning; torch imported later sees 1 core
        sys.modules["torch"].set_num_threads(1)


def pytest_configure(config):
    """Point the gs data root and every cache into a fresh temporary folder (see above), and
    pin an xdist worker to a core of its own (``_one_core_per_xdist_worker``)."""
    _one_core_per_xdist_worker()
    root = Path(tempfile.mkdtemp(prefix="gs-test-caches-")).resolve()
    saved = {k: os.environ.get(k) for k in (*ISOLATED_ENV, "UV_CACHE_DIR")}
    if "UV_CACHE_DIR" not in os.environ:  # keep uv's own cache (tests/test_wheels.py is offline)
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        os.environ["UV_CACHE_DIR"] = str(Path(base) / "uv")
    for var, sub in ISOLATED_ENV.items():
        (root / sub).mkdir()
        os.environ[var] = str(root / sub)
    _isolation.update(root=root, saved=saved)


def pytest_unconfigure(config):
    saved = _isolation.pop("saved", None)
    root = _isolation.pop("root", None)
    if saved is None:
        return
    for var, value in saved.items():  # type: ignore[union-attr]
        if value is None:
            os.environ.pop(var, None)
        else:
            os.environ[var] = value
    shutil.rmtree(root, ignore_errors=True)  # type: ignore[arg-type]


def shared_datasets_dir() -> Path | None:
    """Where the shared real datasets are, or None if they are not on this machine: the folder
    is absent or empty. An empty folder counts as absent, so that ``GS_SHARED_DATA=<empty
    folder>`` runs the suite as a plain clone would (``.ci/run`` does, to prove that every test
    that needs the data skips without it)."""
    env = os.environ.get("GS_SHARED_DATA")
    path = Path(env) if env else _REPO_ROOT.parent / "shared" / "datasets"
    if not path.is_dir() or next(path.iterdir(), None) is None:
        return None
    return path


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="session")
def shared_datasets() -> Path:
    """Path to ``../shared/datasets`` (or ``$GS_SHARED_DATA``); skips when absent."""
    path = shared_datasets_dir()
    if path is None:
        pytest.skip(
            "real datasets not on this machine (no files in $GS_SHARED_DATA or ../shared/datasets): "
            "place them at ../shared/datasets beside the repository or set GS_SHARED_DATA to "
            "their folder"
        )
    return path


@pytest.fixture(scope="session", autouse=True)
def _shared_datasets_stay_untouched():
    path = shared_datasets_dir()
    before = _snapshot(path) if path is not None else None
    yield
    if path is not None:
        after = _snapshot(path)
        assert after == before, f"a test wrote into the read-only shared data folder {path}"


def _options_without_shown_default(parser) -> list[str]:
    """The options of ``parser`` and its sub-commands whose default is a value (not None,
    False or suppressed) but whose help text does not say "default" (issue 33)."""
    import argparse

    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    missing = []
    for p in [parser, *(c for sub in subs for c in sub.choices.values())]:
        for action in p._actions:
            if action.required or action.default in (None, False, argparse.SUPPRESS):
                continue
            if isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
                continue
            if "default" not in (action.help or ""):
                missing.append(f"{p.prog} {'/'.join(action.option_strings) or action.dest}")
    return missing


@pytest.fixture(scope="session")
def options_without_shown_default():
    """:func:`_options_without_shown_default`: a CLI test asserts it returns ``[]``."""
    return _options_without_shown_default


_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _is_local(address) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX path
        return True
    host = address[0]
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guarded_connect(self, address):
    if not _is_local(address):
        raise RuntimeError(f"network access is not allowed in tests (tried to connect to {address!r})")
    return _real_connect(self, address)


def _guarded_connect_ex(self, address):
    if not _is_local(address):
        raise RuntimeError(f"network access is not allowed in tests (tried to connect to {address!r})")
    return _real_connect_ex(self, address)


@pytest.fixture(scope="session", autouse=True)
def _no_network():
    socket.socket.connect = _guarded_connect
    socket.socket.connect_ex = _guarded_connect_ex
    yield
    socket.socket.connect = _real_connect
    socket.socket.connect_ex = _real_connect_ex


def _modules_after(code: str) -> set[str]:
    import subprocess

    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint(' '.join(sorted(sys.modules)))"],
        capture_output=True, text=True, check=True, timeout=300,
    ).stdout
    return set(out.split())


@pytest.fixture(scope="session")
def modules_after():
    """``modules_after(code) -> set of module names`` loaded by a fresh interpreter that ran ``code``."""
    return _modules_after


def _module_getattrs(package: Path) -> list[str]:
    import ast

    found = []
    for path in sorted(Path(package).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [f"{path.relative_to(package)}: {node.name}" for node in tree.body
                  if isinstance(node, ast.FunctionDef) and node.name in ("__getattr__", "__dir__")]
    return found


@pytest.fixture(scope="session")
def module_getattrs():
    """``module_getattrs(package_dir) -> ["path: __getattr__", ...]``: the module-level PEP 562
    hooks under ``package_dir``, which would hide what an import costs."""
    return _module_getattrs


def _mutual_information_mpmath(alpha) -> float:
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(60):
        a = [mpmath.mpf(float(x)) for x in alpha]
        a0 = mpmath.fsum(a)
        total = -mpmath.fsum(x / a0 * mpmath.log(x / a0) for x in a)
        data = mpmath.fsum(x / a0 * (mpmath.digamma(a0 + 1) - mpmath.digamma(x + 1)) for x in a)
        return float(total - data)


@pytest.fixture(scope="session")
def mutual_information_reference():
    """``f(alpha) -> float``: total minus expected entropy of Dirichlet(``alpha``), 60 digits (mpmath)."""
    return _mutual_information_mpmath
