"""3D conformers of molecules from SMILES, exactly as GeSS builds DrugOOD-3D.

GeSS appendix C.4: parse the SMILES with RDKit, add hydrogens, embed one conformer with
ETKDG (``EmbedMolecule`` with a fixed random seed), refine it with the MMFF94 force field
(at most 1000 iterations), remove the hydrogens again; a molecule whose embedding or
force-field set-up fails is dropped. The reference implementation of GeSS uses seed 0 and
keeps molecules whose MMFF optimisation did not converge within the iteration budget
(only a set-up failure, return code -1, drops the molecule); we do the same and record the
convergence flag.

Point features are GeSS's atom-type categories: 13 element types (:data:`ATOM_TYPES`)
plus one "other" category (index 13, :data:`OTHER_ATOM_TYPE`).

Conformers are cached on disk, one small ``.npz`` file per (SMILES, configuration,
RDKit version); files are written atomically (temporary file + rename) and their name
is the SHA-256 of everything that determines their content, so a changed seed, force
field setting or RDKit version never reuses a stale file. Failures are cached too.

:func:`generate_conformers` reads the cached molecules in the calling process and embeds
the others in a ``spawn`` process pool, one worker per CPU core by default; coordinates do
not depend on the number of workers (same seed per molecule). Measured throughput on a
real MoleculeACE target: ``benchmarks/conformers.py`` and the gs-data README.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gs_data._io import atomic_write, entry_lock
from gs_data.molecules.report import ProcessingReport

__all__ = [
    "ATOM_TYPES",
    "OTHER_ATOM_TYPE",
    "NUM_ATOM_TYPES",
    "ConformerConfig",
    "Conformer",
    "ConformerError",
    "atom_type_index",
    "embed_conformer",
    "generate_conformers",
    "conformer_cache_key",
    "default_n_workers",
    "report_conformer_failures",
]

logger = logging.getLogger(__name__)

#: GeSS's 13 element categories for DrugOOD-3D (index = position); anything else is "other".
ATOM_TYPES: tuple[str, ...] = ("C", "N", "O", "S", "F", "P", "Cl", "Br", "Na", "I", "B", "H", "Si")
#: Category index of every element not in :data:`ATOM_TYPES`.
OTHER_ATOM_TYPE: int = len(ATOM_TYPES)
#: Number of atom-type categories (13 elements + "other").
NUM_ATOM_TYPES: int = len(ATOM_TYPES) + 1

_TYPE_INDEX = {s: i for i, s in enumerate(ATOM_TYPES)}
# bump when the way a cached conformer is computed or stored changes
_CACHE_FORMAT = "gs-conformer-v1"
# n_workers=None: below this many molecules to compute, the worker start-up (a spawned
# process imports numpy, RDKit, gs_splits/numba: 1.5-3 s) costs more than it saves
_AUTO_MIN_PARALLEL = 64
# progress=None: draw a bar on a terminal when at least this many molecules are computed
_AUTO_MIN_PROGRESS = 256


def default_n_workers() -> int:
    """CPU cores this process may run on (``os.sched_getaffinity``, else ``os.cpu_count``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)


def atom_type_index(symbol: str) -> int:
    """GeSS atom-type category of an element symbol (13 elements, else 13 = "other").

    Examples
    --------
    >>> atom_type_index("Cl"), atom_type_index("Se")
    (6, 13)
    """
    if not isinstance(symbol, str):
        raise TypeError(f"symbol must be an element symbol string, got {type(symbol).__name__}")
    return _TYPE_INDEX.get(symbol, OTHER_ATOM_TYPE)


@dataclass(frozen=True)
class ConformerConfig:
    """How a conformer is made (GeSS appendix C.4; reference implementation values).

    Attributes
    ----------
    seed : int
        ``randomSeed`` of RDKit's ETKDG ``EmbedMolecule`` (GeSS: 0).
    max_iters : int
        Maximum MMFF94 optimisation iterations (GeSS: 1000).
    mmff_variant : str
        ``"MMFF94"`` (GeSS) or ``"MMFF94s"``.
    remove_hs : bool
        Remove hydrogens after optimisation (GeSS: True); positions of heavy atoms are
        kept from the all-atom optimisation.
    """

    seed: int = 0
    max_iters: int = 1000
    mmff_variant: str = "MMFF94"
    remove_hs: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.seed, (int, np.integer)) or isinstance(self.seed, bool):
            raise TypeError(f"seed must be an int, got {type(self.seed).__name__}")
        if not 0 <= int(self.seed) < 2**31:
            raise ValueError(f"seed must be in [0, 2**31), got {self.seed}")
        if not isinstance(self.max_iters, (int, np.integer)) or self.max_iters < 1:
            raise ValueError(f"max_iters must be a positive int, got {self.max_iters!r}")
        if self.mmff_variant not in ("MMFF94", "MMFF94s"):
            raise ValueError(f"mmff_variant must be 'MMFF94' or 'MMFF94s', got {self.mmff_variant!r}")


@dataclass(frozen=True)
class Conformer:
    """One 3D conformer.

    Attributes
    ----------
    smiles : str
        The input SMILES.
    symbols : tuple of str
        Element symbol per atom (heavy atoms only when hydrogens were removed).
    atom_type : numpy.ndarray of int64, shape (n,)
        GeSS atom-type category per atom (:func:`atom_type_index`).
    pos : numpy.ndarray of float64, shape (n, 3)
        Cartesian coordinates in angstrom, in RDKit atom order.
    mmff_converged : bool
        Whether MMFF94 converged within ``max_iters``.
    """

    smiles: str
    symbols: tuple[str, ...]
    atom_type: np.ndarray
    pos: np.ndarray
    mmff_converged: bool

    @property
    def num_atoms(self) -> int:
        """Number of atoms (points)."""
        return len(self.symbols)


class ConformerError(Exception):
    """A molecule for which no conformer could be made; ``reason`` is a skip reason."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


def _rdkit_version() -> str:
    import rdkit

    return str(rdkit.__version__)


def conformer_cache_key(smiles: str, config: ConformerConfig) -> str:
    """SHA-256 (hex) of everything that determines a cached conformer.

    The SMILES, every field of ``config``, the RDKit version and the cache format.
    """
    payload = json.dumps(
        {"smiles": smiles, "config": asdict(config), "rdkit": _rdkit_version(), "format": _CACHE_FORMAT},
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()


def embed_conformer(smiles: str, config: ConformerConfig | None = None) -> Conformer:
    """Make one conformer of ``smiles`` the GeSS way (appendix C.4).

    AddHs, ETKDG ``EmbedMolecule(randomSeed=config.seed)``, MMFF94 optimisation with at
    most ``config.max_iters`` iterations, RemoveHs.

    Parameters
    ----------
    smiles : str
    config : ConformerConfig, optional

    Returns
    -------
    Conformer

    Raises
    ------
    ConformerError
        ``reason`` is ``"invalid_smiles"``, ``"embedding_failed"`` or ``"mmff_setup_failed"``.
    TypeError
        ``smiles`` is not a string.
    """
    from rdkit import Chem
    from rdkit.Chem import AllChem
    from rdkit.rdBase import BlockLogs

    if not isinstance(smiles, str):
        raise TypeError(f"smiles must be a str, got {type(smiles).__name__}")
    config = config or ConformerConfig()
    block = BlockLogs()  # RDKit parse errors are reported, not printed
    try:
        mol = Chem.MolFromSmiles(smiles) if smiles.strip() else None
        if mol is None or mol.GetNumAtoms() == 0:
            raise ConformerError("invalid_smiles", f"RDKit cannot parse {smiles!r}")
        molh = Chem.AddHs(mol)
        if AllChem.EmbedMolecule(molh, randomSeed=int(config.seed)) < 0:
            raise ConformerError("embedding_failed", f"ETKDG found no embedding for {smiles!r}")
        if config.mmff_variant == "MMFF94":
            status = AllChem.MMFFOptimizeMolecule(molh, maxIters=int(config.max_iters))
        else:
            status = AllChem.MMFFOptimizeMolecule(
                molh, mmffVariant="MMFF94s", maxIters=int(config.max_iters)
            )
        if status < 0:
            raise ConformerError("mmff_setup_failed", f"no {config.mmff_variant} parameters for {smiles!r}")
        out = Chem.RemoveHs(molh) if config.remove_hs else molh
    finally:
        del block  # restores the previous RDKit log state
    symbols = tuple(a.GetSymbol() for a in out.GetAtoms())
    pos = np.asarray(out.GetConformer().GetPositions(), dtype=np.float64)
    atom_type = np.fromiter((atom_type_index(s) for s in symbols), dtype=np.int64, count=len(symbols))
    return Conformer(smiles, symbols, atom_type, pos, bool(status == 0))


# ---------------------------------------------------------------------------- disk cache


def _cache_path(cache_dir: Path, key: str) -> Path:
    return cache_dir / key[:2] / f"{key}.npz"


def _cache_read(path: Path, smiles: str) -> Conformer | ConformerError | None:
    try:
        with np.load(path, allow_pickle=False) as f:
            status = str(f["status"])
            if status != "ok":
                return ConformerError(status, str(f["detail"]))
            symbols = tuple(str(s) for s in f["symbols"])
            return Conformer(
                smiles,
                symbols,
                np.asarray(f["atom_type"], dtype=np.int64),
                np.asarray(f["pos"], dtype=np.float64),
                bool(f["converged"]),
            )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError) as exc:  # corrupt file: recompute
        logger.warning("ignoring unreadable conformer cache file %s (%s)", path, exc)
        return None


def _cache_write(path: Path, result: Conformer | ConformerError) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(result, Conformer):
        arrays = {
            "status": np.array("ok"),
            "detail": np.array(""),
            "symbols": np.array(result.symbols, dtype=str),
            "atom_type": result.atom_type,
            "pos": result.pos,
            "converged": np.array(result.mmff_converged),
        }
    else:
        arrays = {"status": np.array(result.reason), "detail": np.array(result.detail)}
    with atomic_write(path) as fh:
        np.savez(fh, **arrays)


def _read_cached(root: Path, jobs: list[tuple[int, str]], config: ConformerConfig,
                 hits: list[tuple[int, Conformer | ConformerError]]) -> list[tuple[int, str]]:
    """Append the cached results of ``jobs`` to ``hits``; return the jobs not cached."""
    missing = []
    for pos, smi in jobs:
        cached = _cache_read(_cache_path(root, conformer_cache_key(smi, config)), smi)
        if cached is None:
            missing.append((pos, smi))
        else:
            hits.append((pos, cached))
    return missing


def _embed_many(
    jobs: Sequence[tuple[int, str]],
    config: ConformerConfig,
    cache_dir: str | None,
    read_cache: bool = True,
) -> list[tuple[int, Conformer | ConformerError]]:
    """Worker: embed (or read from cache) a batch of (position, smiles); results are
    written to the cache. ``read_cache=False``: the caller has already looked them up."""
    out: list[tuple[int, Conformer | ConformerError]] = []
    cdir = Path(cache_dir) if cache_dir is not None else None
    for pos, smi in jobs:
        path = _cache_path(cdir, conformer_cache_key(smi, config)) if cdir is not None else None
        result = _cache_read(path, smi) if path is not None and read_cache else None
        if result is None:
            try:
                result = embed_conformer(smi, config)
            except ConformerError as err:
                result = err
            if path is not None:
                _cache_write(path, result)
        out.append((pos, result))
    return out


class _Progress:
    """A dependency-free progress bar on stderr: ``\r``-redrawn on a terminal, else a line
    at most every 30 s; rate (molecules/s) and estimated time left."""

    def __init__(self, total: int, label: str = "conformers", stream: Any = None) -> None:
        self.total = total
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.start = self.last = time.monotonic()
        self.done = 0

    def update(self, done: int) -> None:
        self.done = done
        now = time.monotonic()
        if done < self.total and now - self.last < (0.5 if self.tty else 30.0):
            return
        self.last = now
        elapsed = max(now - self.start, 1e-9)
        rate = done / elapsed
        left = (self.total - done) / rate if rate > 0 else float("inf")
        width = 30
        filled = int(width * done / max(self.total, 1))
        line = (
            f"{self.label}: [{'#' * filled}{'.' * (width - filled)}] {done}/{self.total} "
            f"{rate:.1f}/s, {elapsed:.0f} s elapsed"
            + (f", ~{left:.0f} s left" if done < self.total and rate > 0 else "")
        )
        if self.tty:
            self.stream.write("\r" + line + ("\n" if done >= self.total else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def generate_conformers(
    smiles: Sequence[str],
    config: ConformerConfig | None = None,
    *,
    ids: Sequence[Any] | None = None,
    cache_dir: str | os.PathLike | None = None,
    n_workers: int | None = None,
    chunk_size: int = 16,
    callback: Callable[[int, int], None] | None = None,
    progress: bool | None = None,
    source: str = "smiles",
) -> tuple[list[Conformer | None], ProcessingReport]:
    """Conformers for many molecules, in parallel, cached, with failures reported.

    Cached molecules are read in this process first; only the others are embedded, in a
    process pool when there are enough of them. The result does not depend on
    ``n_workers`` or on the cache (each molecule is embedded with the same seed; cached
    files hold the float64 coordinates bit for bit).

    Parameters
    ----------
    smiles : sequence of str
    config : ConformerConfig, optional
        GeSS defaults (seed 0, MMFF94, 1000 iterations, hydrogens removed).
    ids : sequence, optional
        Identifier per molecule used in the processing report (default: position).
    cache_dir : path, optional
        Folder of the on-disk conformer cache (created if needed). None: no cache.
    n_workers : int, optional
        None (default): one worker per available CPU core (:func:`default_n_workers`),
        and no pool at all when fewer than 64 molecules are not cached (starting a
        worker costs more than it saves). 1: in this process. More: a process pool of
        that many workers whenever the molecules to embed fill more than one chunk.
        The pool uses the ``spawn`` start method (safe with torch loaded); as with any
        spawn pool, a calling script must guard its entry point with
        ``if __name__ == "__main__":``. A pool whose workers die (e.g. an unguarded
        script) is reported with a warning and the remaining molecules are embedded in
        this process.
    chunk_size : int
        Most molecules per task sent to a worker (smaller when there are few molecules,
        so that every worker gets several tasks).
    callback : callable(done, total), optional
        Called after each molecule is finished (cached ones first); use it for a progress
        bar in a CLI.
    progress : bool, optional
        Draw a simple progress bar on stderr. None (default): only on a terminal and when
        at least 256 molecules are not cached.
    source : str
        Name used in the report.

    Returns
    -------
    conformers : list of Conformer or None
        Same length and order as ``smiles``; None where the molecule was dropped.
    report : ProcessingReport
        Counts and reasons of the dropped molecules (``invalid_smiles``,
        ``embedding_failed``, ``mmff_setup_failed``).
    """
    config = config or ConformerConfig()
    smiles = list(smiles)
    if any(not isinstance(s, str) for s in smiles):
        bad = next(type(s).__name__ for s in smiles if not isinstance(s, str))
        raise TypeError(f"smiles must be a sequence of str, found a {bad}")
    if ids is not None and len(ids) != len(smiles):
        raise ValueError(f"ids has {len(ids)} entries but smiles has {len(smiles)}")
    auto = n_workers is None
    if auto:
        n_workers = default_n_workers()
    if isinstance(n_workers, bool) or not isinstance(n_workers, (int, np.integer)) or n_workers < 1:
        raise ValueError(f"n_workers must be a positive int or None, got {n_workers!r}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
        raise ValueError(f"chunk_size must be a positive int, got {chunk_size!r}")
    cdir = None
    if cache_dir is not None:
        cdir = str(Path(cache_dir).expanduser())
        Path(cdir).mkdir(parents=True, exist_ok=True)

    n = len(smiles)
    results: list[Conformer | ConformerError | None] = [None] * n
    done = 0

    def _collect(batch: list[tuple[int, Conformer | ConformerError]]) -> None:
        nonlocal done
        for pos, res in batch:
            results[pos] = res
            done += 1
            if callback is not None:
                callback(done, n)
            if bar is not None:
                bar.update(done)

    # cached molecules are read here: a warm cache needs no worker process at all
    bar = None
    jobs: list[tuple[int, str]] = []
    hits: list[tuple[int, Conformer | ConformerError]] = []
    if cdir is not None:
        jobs = _read_cached(Path(cdir), list(enumerate(smiles)), config, hits)
    else:
        jobs = list(enumerate(smiles))
    _collect(hits)
    with ExitStack() as held:
        if cdir is not None and jobs:
            # one process embeds into a cache at a time (issue 34); the molecules another
            # process embedded while this one waited are read, not embedded again
            held.enter_context(entry_lock(Path(cdir) / "embedding", "conformer cache"))
            hits = []
            jobs = _read_cached(Path(cdir), jobs, config, hits)
            _collect(hits)
            if jobs:  # one line per build, so that builds can be counted in the job logs
                logger.info("building the conformer cache %s: embedding %d of %d molecule(s)",
                            cdir, len(jobs), n)
        if progress is None:
            progress = len(jobs) >= _AUTO_MIN_PROGRESS and bool(getattr(sys.stderr, "isatty", lambda: False)())
        if progress and jobs:
            bar = _Progress(n, label=f"{source} conformers")
            bar.update(done)

        workers = int(n_workers)
        if auto and len(jobs) < _AUTO_MIN_PARALLEL:
            workers = 1
        if workers > 1:  # smaller chunks for few molecules: every worker gets several tasks
            chunk_size = max(1, min(int(chunk_size), -(-len(jobs) // (4 * workers))))
        chunks = [jobs[i : i + chunk_size] for i in range(0, len(jobs), chunk_size)]
        if workers > 1 and len(chunks) > 1:
            import multiprocessing as mp

            ctx = mp.get_context("spawn")
            try:
                with ProcessPoolExecutor(max_workers=min(workers, len(chunks)), mp_context=ctx) as pool:
                    futures = [pool.submit(_embed_many, chunk, config, cdir, False) for chunk in chunks]
                    for fut in as_completed(futures):
                        _collect(fut.result())
            except BrokenProcessPool as exc:
                logger.warning(
                    "conformer worker processes died (%s); embedding the remaining molecules in this "
                    "process. A script calling this at top level must guard its entry point with "
                    "`if __name__ == \"__main__\":` (spawned workers import it), or pass n_workers=1.",
                    exc,
                )
                chunks = [[job for job in chunk if results[job[0]] is None] for chunk in chunks]
                workers = 1
        if workers == 1 or len(chunks) <= 1:
            for chunk in chunks:
                if chunk:
                    _collect(_embed_many(chunk, config, cdir, False))

    report = ProcessingReport(source=source, n_input=n)
    out: list[Conformer | None] = []
    for i, res in enumerate(results):
        if isinstance(res, Conformer):
            out.append(res)
            report.n_kept += 1
        else:
            assert isinstance(res, ConformerError)
            report.skip(ids[i] if ids is not None else i, res.reason, res.detail)
            out.append(None)
    report.check()
    report.log()
    return out, report


def report_conformer_failures(
    read: ProcessingReport,
    source: str,
    keep: np.ndarray,
    inverse: np.ndarray,
    conformers: ProcessingReport,
    item_id: Callable[[int], str],
) -> ProcessingReport:
    """The report of a dataset whose items share one conformer per unique SMILES (DrugOOD-3D,
    MoleculeACE): what reading skipped (``read``), plus one skip per item ``i`` whose SMILES
    (``inverse[i]``, an index into the unique SMILES that :func:`generate_conformers` got)
    had no conformer, with that failure's reason. ``keep``: per item, whether it has one;
    ``item_id(i)``: the id the skip is recorded under. Checked (nothing lost) and logged."""
    report = ProcessingReport(source=source, n_input=read.n_input)
    report.skipped = list(read.skipped)
    failed = {s["id"]: s for s in conformers.skipped}
    for i in np.flatnonzero(~keep):
        s = failed[int(inverse[i])]
        report.skip(item_id(int(i)), s["reason"], s["detail"])
    report.n_kept = int(keep.sum())
    report.check()
    report.log()
    return report
