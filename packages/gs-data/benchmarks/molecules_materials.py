"""Benchmark: GeSS conformer throughput and the cost of building the offline defaults.

Measures, on this machine, in one run:

1. conformers per second (wall clock, and per CPU second, which does not depend on the
   load of a shared machine) for ``--n-molecules`` real ChEMBL molecules from MoleculeACE
   (no cache): the plain RDKit loop of the GeSS recipe (reference: AddHs, ETKDG
   EmbedMolecule(randomSeed=0), MMFF94 maxIters 1000, RemoveHs) side by side with
   :func:`gs_data.molecules.generate_conformers` with 1 and 2 worker processes;
2. the time to build each offline default:

   * MoleculeACE (30 ChEMBL sets): reading + curation (scaffolds, sizes) and the split of
     each shift (assay, scaffold, size), measured on all rows; the 3D conformers of all
     distinct molecules are measured with ``--full`` and otherwise extrapolated from
     the 2-worker rate above (marked "extrapolated");
   * the molecular four-fidelity default (shipped file -> dataset);
   * the QMOF test fixture (CSV + CIFs with ase -> dataset), for the per-structure cost.

Writes ``molecules_materials.json`` and ``molecules_materials.png`` next to this file
(or under ``--out``). Usage (repository root)::

    python packages/gs-data/benchmarks/molecules_materials.py --n-molecules 200
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def _reference_loop(smiles: list[str]) -> int:
    from rdkit import Chem, RDLogger
    from rdkit.Chem import AllChem

    RDLogger.DisableLog("rdApp.*")
    ok = 0
    for s in smiles:
        m = Chem.MolFromSmiles(s)
        if m is None:
            continue
        m = Chem.AddHs(m)
        if AllChem.EmbedMolecule(m, randomSeed=0) < 0:
            continue
        if AllChem.MMFFOptimizeMolecule(m, maxIters=1000) < 0:
            continue
        Chem.RemoveHs(m)
        ok += 1
    return ok


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n-molecules", type=int, default=200)
    ap.add_argument("--full", action="store_true", help="also build all MoleculeACE conformers")
    ap.add_argument("--out", type=Path, default=HERE)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    from gs_data.materials import load_molecular_fidelity, load_qmof
    from gs_data.molecules import generate_conformers, moleculeace_split, read_moleculeace

    results: dict = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                                 "load_avg_at_start": os.getloadavg()}}

    t0 = time.perf_counter()
    records = read_moleculeace()
    t_read = time.perf_counter() - t0
    split_times = {}
    for shift in ("assay", "scaffold", "size"):
        t0 = time.perf_counter()
        split = moleculeace_split(records, shift, info_level="par_label", seed=args.seed)
        split_times[shift] = {"seconds": time.perf_counter() - t0, "sizes": split.sizes()}
    unique = np.unique(records.smiles)
    rng = np.random.default_rng(args.seed)
    sample = rng.choice(unique, size=min(args.n_molecules, unique.size), replace=False).tolist()

    def cpu() -> float:  # this process + finished worker processes
        own = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

    rates, per_cpu = {}, {}
    t0, c0 = time.perf_counter(), cpu()
    n_ok = _reference_loop(sample)
    rates["reference RDKit loop"] = n_ok / (time.perf_counter() - t0)
    per_cpu["reference RDKit loop"] = n_ok / (cpu() - c0)
    for workers in (1, 2):
        name = f"gs_data, {workers} worker{'s' if workers > 1 else ''}"
        t0, c0 = time.perf_counter(), cpu()
        confs, _ = generate_conformers(sample, n_workers=workers, chunk_size=8)
        n_ok = sum(c is not None for c in confs)
        rates[name] = n_ok / (time.perf_counter() - t0)
        per_cpu[name] = n_ok / (cpu() - c0)  # includes the workers' start-up imports
    results["conformers_per_second"] = {"n_molecules": len(sample), **rates}
    results["conformers_per_cpu_second"] = per_cpu

    best = rates["gs_data, 2 workers"]
    conf_all = {"n_distinct_molecules": int(unique.size)}
    if args.full:
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            generate_conformers(unique.tolist(), n_workers=2, cache_dir=tmp)
            conf_all["seconds"] = time.perf_counter() - t0
            conf_all["measured"] = True
    else:
        conf_all["seconds"] = unique.size / best
        conf_all["measured"] = False
        conf_all["note"] = "extrapolated from the 2-worker rate; run with --full to measure"
    results["moleculeace_default"] = {
        "rows_read": len(records), "read_and_curate_seconds": t_read,
        "split_seconds": split_times, "conformers_all": conf_all,
        "skipped": records.report.counts(),
    }

    t0 = time.perf_counter()
    mol = load_molecular_fidelity(info_level="par_label")
    results["molecular_fidelity_default"] = {"seconds": time.perf_counter() - t0, "n": len(mol),
                                             "sizes": mol.split.sizes()}
    fixture = HERE.parent / "tests" / "fixtures" / "qmof"
    t0 = time.perf_counter()
    q = load_qmof(fixture, info_level="par_label")
    dt = time.perf_counter() - t0
    results["qmof_fixture"] = {"seconds": dt, "n_rows": q.report.n_input,
                               "seconds_per_structure": dt / max(q.report.n_input, 1)}

    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "molecules_materials.json").write_text(json.dumps(results, indent=2, default=float) + "\n")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
        names = list(rates)
        xs = np.arange(len(names))
        ax[0].bar(xs - 0.2, [rates[n] for n in names], 0.4, label="per wall-clock second")
        ax[0].bar(xs + 0.2, [per_cpu[n] for n in names], 0.4, label="per CPU second")
        ax[0].set_xticks(xs, names)
        ax[0].legend(fontsize=8)
        ax[0].set_ylabel("conformers / s")
        ax[0].set_title(f"GeSS conformers, {len(sample)} MoleculeACE molecules")
        ax[0].tick_params(axis="x", labelsize=8)
        parts = {"read+curate": t_read, **{f"split {k}": v["seconds"] for k, v in split_times.items()},
                 "molecular fidelity": results["molecular_fidelity_default"]["seconds"]}
        ax[1].barh(list(parts), list(parts.values()))
        ax[1].set_xscale("log")
        ax[1].set_xlabel("seconds (log scale)")
        ax[1].set_title("building the offline defaults (no 3D)")
        fig.suptitle(f"{platform.node() or 'this machine'}: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}",
                     fontsize=9)
        fig.tight_layout()
        fig.savefig(args.out / "molecules_materials.png", dpi=110)
    except ImportError:
        pass
    print(json.dumps(results, indent=2, default=float))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
