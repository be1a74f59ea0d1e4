"""Data root, downloads with checksums, atomic writes (numpy/stdlib only, no torch).

Where files live
----------------
* ``data_root()``: ``$GS_DATA_ROOT`` if set, else ``<user cache dir>/gs-data`` (``platformdirs``,
  i.e. ``$XDG_CACHE_HOME/gs-data`` or ``~/.cache/gs-data`` on Linux).
* Raw files of a dataset sit under ``<root>/<relative path>`` with the same layout as the
  project's shared folder of real datasets (``planetoid/Cora/raw/ind.cora.x``,
  ``structural-shifts/cora-ml/data.mat``, ``acdne/acmv9.mat``, ...), so a folder prepared for one
  machine works on any other.
* Processed caches (fast reload, split caches) go to ``data_root()/processed``, never into a
  ``root`` given explicitly (that folder may be read-only shared data).

Nothing here downloads silently: every download is logged at INFO level with its URL and
destination, and can be switched off with ``download=False`` (then a missing file raises
:class:`MissingRawFileError` naming the file and where to put it).
"""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import shutil
import tempfile
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

__all__ = [
    "MissingRawFileError",
    "CorruptRawFileError",
    "ChecksumError",
    "ProgressCallback",
    "data_root",
    "processed_root",
    "download_file",
    "sha256_file",
    "atomic_path",
    "atomic_write",
    "unique_temp_name",
    "entry_lock",
    "build_once",
]

logger = logging.getLogger("gs_data")
T = TypeVar("T")

#: ``callback(bytes_done, bytes_total_or_None)``; called while a download progresses.
ProgressCallback = Callable[[int, "int | None"], None]


class MissingRawFileError(FileNotFoundError):
    """A raw file of a dataset is not on disk and may not (or could not) be downloaded."""


class CorruptRawFileError(ValueError):
    """A raw file exists but cannot be parsed (truncated, corrupted, wrong format)."""


class ChecksumError(CorruptRawFileError):
    """A raw file's SHA-256 differs from the published one."""


def not_a_regular_file(path: str | os.PathLike) -> str | None:
    """Why ``path`` exists but cannot be read as a raw file, or ``None`` (a regular file, a
    symbolic link to one, or nothing there: a missing file is its caller's own message).

    A FIFO blocks the reader forever, ``/dev/zero`` never ends and a folder is no file, so raw
    files are read only from regular files (issue 56: a FIFO or a link to ``/dev/zero`` was
    called "missing" by the suite check and hung or failed the job). A link whose target is
    missing is named with its target.
    """
    import stat

    p = Path(path)
    link = f" (a symbolic link to {os.readlink(p)})" if p.is_symlink() else ""
    try:
        mode = p.stat().st_mode
    except FileNotFoundError:
        return f"{p} is a symbolic link to {os.readlink(p)}, which does not exist" if link else None
    except OSError as exc:
        return f"{p}{link} cannot be read ({exc.strerror or exc})"
    if stat.S_ISREG(mode):
        return None
    kind = ("a folder" if stat.S_ISDIR(mode) else "a FIFO (named pipe)" if stat.S_ISFIFO(mode)
            else "a character device" if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
    return f"{p}{link} is {kind}, not a regular file; put the data file itself there"


def data_root() -> Path:
    """The default data root: ``$GS_DATA_ROOT`` or ``<user cache dir>/gs-data``."""
    env = os.environ.get("GS_DATA_ROOT")
    if env:
        return Path(env).expanduser()
    try:
        import platformdirs

        return Path(platformdirs.user_cache_dir("gs-data", appauthor=False))
    except ImportError:  # pragma: no cover - platformdirs is a declared dependency
        xdg = os.environ.get("XDG_CACHE_HOME")
        base = Path(xdg) if xdg else Path.home() / ".cache"
        return base / "gs-data"


def processed_root(cache_dir: str | os.PathLike | None = None) -> Path:
    """Folder for processed caches: ``cache_dir`` or ``data_root()/processed``."""
    return Path(cache_dir) if cache_dir is not None else data_root() / "processed"


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    """Hex SHA-256 of a file."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def unique_temp_name(name: str) -> str:
    """``.<name>.<pid>.<random>.tmp``: a temporary name beside ``name`` (not created)."""
    return f".{name}.{os.getpid()}.{secrets.token_hex(6)}.tmp"


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary path beside ``path`` (not created), renamed onto ``path`` on success.

    For writers that must be given a file *name* (e.g. PYTHIA's ``initFile``); whatever they
    create there replaces ``path`` in one rename when the block ends without an error, and is
    removed otherwise. :func:`atomic_write` is built on it.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(unique_temp_name(path.name))
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "wb", encoding: str | None = None) -> Iterator:
    """Open a temporary file beside ``path``; rename it onto ``path`` only on success.

    The one atomic-write helper of gs-data, also used by gs-bench (docs/architecture.md,
    "One of each"). The file gets the permissions of a plain ``open(path, "w")``
    (``0o666`` minus the umask), not the ``0o600`` of :func:`tempfile.mkstemp`.
    ``encoding`` applies to text modes (``"w"``).
    """
    with atomic_path(path) as tmp:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # umask applies (mkstemp: 0600)
        with os.fdopen(fd, mode, encoding=encoding) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())


@contextmanager
def entry_lock(path: str | os.PathLike, what: str = "cache entry") -> Iterator[bool]:
    """Hold an exclusive lock on the cache entry ``path`` while building it (issue 34).

    Several processes (``gs-bench --workers N``, Ray workers on one host) share the caches;
    each builds an entry inside this block after checking again whether it exists, so an
    entry is built once and nobody deletes or rewrites what another is reading. The lock is
    ``fcntl.flock`` on the sidecar file ``<path>.lock`` (created once, never deleted, so every
    process locks the same file; the kernel releases it when its holder dies). Waiting for
    another process is logged once at INFO. Yields ``True`` when locked; ``False`` where no lock
    can be taken (no ``fcntl``, a folder that cannot be written): the caller goes on unlocked,
    its writes stay atomic, and at worst the entry is built twice.
    """
    path = Path(path)
    lock = path.with_name(path.name + ".lock")
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield False
        return
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        logger.debug("no lock for %s %s (%s); going on without one", what, path, exc)
        yield False
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            logger.info("waiting for another process that is building the %s %s", what, path)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield True
    finally:
        os.close(fd)  # releases the lock


def build_once(
    path: str | os.PathLike,
    load: Callable[[Path], T],
    build: Callable[[], T],
    save: Callable[[Path, T], object],
    *,
    what: str = "cache entry",
    rebuild: bool = False,
) -> T:
    """The cache entry ``path``: ``load(path)`` when it exists and reads, else built once.

    A miss takes :func:`entry_lock` on the entry and looks again (another process may have
    built it meanwhile) before calling ``build()`` and ``save(path, value)``, so processes that
    miss together build the entry once. An entry that cannot be read is rebuilt with a warning;
    ``save`` failing with ``OSError`` (read-only folder, full disk) is only a warning, since the
    cache is optional. ``rebuild=True`` skips reading (``force_reload``).
    """
    path = Path(path)

    def cached(warn: bool) -> tuple[bool, T | None]:
        if rebuild or not path.exists():
            return False, None
        try:
            return True, load(path)
        except Exception as exc:  # noqa: BLE001 - a broken entry is rebuilt, not fatal
            if warn:
                logger.warning("%s %s unreadable (%s); rebuilding it", what, path, exc)
            return False, None

    hit, value = cached(warn=False)
    if hit:
        return value  # type: ignore[return-value]
    with entry_lock(path, what):
        hit, value = cached(warn=True)
        if hit:
            return value  # type: ignore[return-value]
        logger.info("building the %s %s", what, path)  # one line per build: builds can be counted
        value = build()
        try:
            save(path, value)
        except OSError as exc:
            logger.warning("could not write %s %s: %s", what, path, exc)
        return value


def download_file(
    url: str,
    dest: str | os.PathLike,
    *,
    sha256: str | None = None,
    progress: ProgressCallback | None = None,
    timeout: float = 60.0,
) -> Path:
    """Download ``url`` to ``dest`` atomically, verifying ``sha256`` when it is known.

    Parameters
    ----------
    url : str
        Standard public URL of the raw file.
    dest : path
        Final location; the download goes to a temporary file beside it first.
    sha256 : str, optional
        Expected hex digest; a mismatch raises :class:`ChecksumError` and nothing is kept.
    progress : callable, optional
        ``progress(bytes_done, bytes_total_or_None)`` after every chunk (CLIs draw a bar).
    """
    dest = Path(dest)
    logger.info("downloading %s -> %s", url, dest)
    req = urllib.request.Request(url, headers={"User-Agent": "gs-data"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - https URLs from the registry
        total = resp.headers.get("Content-Length")
        total_i = int(total) if total and total.isdigit() else None
        h = hashlib.sha256()
        done = 0
        with atomic_write(dest) as out:
            while True:
                block = resp.read(1 << 16)
                if not block:
                    break
                out.write(block)
                h.update(block)
                done += len(block)
                if progress is not None:
                    progress(done, total_i)
            if sha256 is not None and h.hexdigest() != sha256:
                raise ChecksumError(
                    f"downloaded file from {url} has SHA-256 {h.hexdigest()}, expected {sha256}; "
                    f"nothing was written to {dest}"
                )
    return dest


def extract_zip(archive: str | os.PathLike, dest_dir: str | os.PathLike, keep: str | None = None) -> None:
    """Extract the part of a zip archive under ``keep`` (a folder name, the dataset's own
    folder inside ``dest_dir``; the whole archive when ``None``) into ``dest_dir / keep``.

    The archive is unpacked into a private temporary folder inside that dataset folder; only
    regular files under ``keep/`` are then moved into place, one ``os.replace`` each, so that
    nothing outside the dataset's own folder is created, replaced or removed (an entry for
    another dataset, ``../x`` or ``/abs`` is left in the temporary folder, which is removed) and
    files of the dataset folder that the archive does not hold stay. A failed extraction (a
    corrupt archive, a full disk) leaves nothing behind: the temporary folder goes, and so does
    the dataset folder when this call created it. A folder inside the dataset's that is a
    symbolic link leading outside it is not written through (``ValueError`` naming it; the
    dataset folder itself may be a link). Raises :class:`CorruptRawFileError` for a file that
    is not a zip archive."""
    import zipfile
    import zlib

    dest_dir = Path(dest_dir)
    if keep is not None and (not keep or Path(keep).name != keep or keep in (".", "..")):
        raise ValueError(f"keep must be one folder name, got {keep!r}")
    home = dest_dir / keep if keep is not None else dest_dir
    created = not home.exists()
    home.mkdir(parents=True, exist_ok=True)
    moved = False
    try:
        with tempfile.TemporaryDirectory(dir=home, prefix=".extract-") as tmp:
            try:
                with zipfile.ZipFile(archive) as zf:
                    zf.extractall(tmp)  # zipfile drops '..' and leading '/' from member names
            except zipfile.BadZipFile as exc:
                raise CorruptRawFileError(f"{archive}: not a valid zip archive ({exc})") from exc
            except (NotImplementedError, RuntimeError, EOFError, zlib.error) as exc:
                # an unknown compression method, an encrypted member, a truncated stream
                raise CorruptRawFileError(f"{archive}: cannot extract this zip archive "
                                          f"({type(exc).__name__}: {exc})") from exc
            src = Path(tmp) / keep if keep is not None else Path(tmp)
            real_home = home.resolve()
            if src.is_dir() and not src.is_symlink():
                for item in sorted(src.rglob("*")):
                    if item.is_symlink() or not item.is_file():
                        continue
                    rel = item.relative_to(src)
                    for k in range(1, len(rel.parts)):  # no write through a link that leaves home
                        step = home.joinpath(*rel.parts[:k])
                        if step.is_symlink() and not step.resolve().is_relative_to(real_home):
                            raise ValueError(
                                f"{step} is a symbolic link to {step.resolve()}, outside the dataset's "
                                f"folder {home}: refusing to extract {archive} through it")
                    target = home / rel
                    target.parent.mkdir(parents=True, exist_ok=True)
                    os.replace(item, target)
                    moved = True
        if created and not moved:  # the archive held nothing of this dataset: leave no empty folder
            shutil.rmtree(home, ignore_errors=True)
    except BaseException:
        if created and not moved:
            shutil.rmtree(home, ignore_errors=True)
        raise
