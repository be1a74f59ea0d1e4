"""Regenerate the four-fidelity molecular band-gap file shipped with gs-data.

HOMO-LUMO gaps of small real molecules at QMOF's four levels of theory (GeSS section
3.2.2, table 5): PBE, HLE17, HSE06* (HSE06 with 10% short-range exact exchange, QMOF's
``hse06_10hf``) and HSE06, computed with PySCF (molecular, not periodic: periodic MOFs
are out of reach on a laptop-class machine). Geometries: RDKit ETKDG + MMFF94 with the
hydrogens kept (seed 0). One restricted Kohn-Sham calculation per molecule and
functional, density fitting, the PBE density as initial guess for the three others.

What exactly is computed (libxc 7 through PySCF):

* PBE     = ``GGA_X_PBE + GGA_C_PBE`` (PySCF name ``PBE``)
* HLE17   = ``MGGA_XC_HLE17`` (Verma & Truhlar 2017; meta-GGA, no exact exchange)
* HSE06*  = ``HYB_GGA_XC_HSE06`` with its external parameters set to
  beta = 0.10 (short-range exact-exchange fraction; 0.25 in HSE06), omega_HF =
  omega_PBE = 0.11 bohr^-1 (registered with ``pyscf.dft.libxc.register_custom_functional_``);
  the script checks that the same construction with beta = 0.25 reproduces HSE06's energy.
* HSE06   = ``HYB_GGA_XC_HSE06`` (beta = 0.25, omega = 0.11 bohr^-1)

The gap is the Kohn-Sham (generalised KS for the hybrids and the meta-GGA) LUMO minus
HOMO orbital energy, in eV (1 hartree = 27.211386245988 eV, CODATA 2018).

Usage (from the repository root; single thread, low priority, bounded CPU time)::

    OMP_NUM_THREADS=1 nice -n 10 python packages/gs-data/scripts/make_fidelity_gaps.py \
        --max-heavy-atoms 6 --basis 6-31g --max-cpu-seconds 1700

The output (``src/gs_data/materials/data/molecular_fidelity_gaps.json``) is written
atomically after every molecule, so an interrupted run resumes where it stopped
(``--resume``). It records the program versions, basis set, grid, per-calculation CPU
times and the total cost.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HARTREE_EV = 27.211386245988
DEFAULT_OUT = (
    Path(__file__).resolve().parents[1] / "src" / "gs_data" / "materials" / "data" / "molecular_fidelity_gaps.json"
)
#: QMOF column name -> PySCF xc code used here
FIDELITIES = {"pbe": "PBE", "hle17": "HLE17", "hse06_10hf": "hse06_10hf", "hse06": "HSE06"}
HSE06_LIBXC_ID = 428  # HYB_GGA_XC_HSE06; ext params: [beta, omega_HF, omega_PBE]

# Real, named small molecules (common solvents, building blocks, heterocycles, amino
# acids); closed-shell and neutral, elements H C N O F S Cl (all covered by MMFF94).
MOLECULES: tuple[tuple[str, str], ...] = (
    ("water", "O"),
    ("ammonia", "N"),
    ("methane", "C"),
    ("hydrogen fluoride", "F"),
    ("hydrogen sulfide", "S"),
    ("hydrogen chloride", "Cl"),
    ("methanol", "CO"),
    ("methylamine", "CN"),
    ("fluoromethane", "CF"),
    ("chloromethane", "CCl"),
    ("methanethiol", "CS"),
    ("ethane", "CC"),
    ("ethylene", "C=C"),
    ("acetylene", "C#C"),
    ("formaldehyde", "C=O"),
    ("hydrogen cyanide", "C#N"),
    ("carbon monoxide", "[C-]#[O+]"),
    ("carbon dioxide", "O=C=O"),
    ("formic acid", "OC=O"),
    ("ethanol", "CCO"),
    ("dimethyl ether", "COC"),
    ("ethylamine", "CCN"),
    ("dimethylamine", "CNC"),
    ("acetaldehyde", "CC=O"),
    ("acetonitrile", "CC#N"),
    ("acetic acid", "CC(=O)O"),
    ("methyl formate", "COC=O"),
    ("formamide", "NC=O"),
    ("acetamide", "CC(N)=O"),
    ("N-methylformamide", "CNC=O"),
    ("urea", "NC(N)=O"),
    ("propane", "CCC"),
    ("propene", "CC=C"),
    ("propyne", "CC#C"),
    ("allene", "C=C=C"),
    ("cyclopropane", "C1CC1"),
    ("1-propanol", "CCCO"),
    ("2-propanol", "CC(C)O"),
    ("acetone", "CC(C)=O"),
    ("propanal", "CCC=O"),
    ("propionic acid", "CCC(=O)O"),
    ("methyl acetate", "COC(C)=O"),
    ("ethyl formate", "CCOC=O"),
    ("propionitrile", "CCC#N"),
    ("acrylonitrile", "C=CC#N"),
    ("acrolein", "C=CC=O"),
    ("acrylic acid", "C=CC(=O)O"),
    ("trimethylamine", "CN(C)C"),
    ("propylamine", "CCCN"),
    ("isopropylamine", "CC(C)N"),
    ("N,N-dimethylformamide", "CN(C)C=O"),
    ("glycine", "NCC(=O)O"),
    ("ethylene glycol", "OCCO"),
    ("2-methoxyethanol", "COCCO"),
    ("dimethyl sulfide", "CSC"),
    ("ethanethiol", "CCS"),
    ("dimethyl sulfoxide", "CS(C)=O"),
    ("chloroethane", "CCCl"),
    ("fluoroethane", "CCF"),
    ("vinyl chloride", "C=CCl"),
    ("vinyl fluoride", "C=CF"),
    ("dichloromethane", "ClCCl"),
    ("chloroform", "ClC(Cl)Cl"),
    ("carbon tetrachloride", "ClC(Cl)(Cl)Cl"),
    ("difluoromethane", "FCF"),
    ("trifluoromethane", "FC(F)F"),
    ("tetrafluoromethane", "FC(F)(F)F"),
    ("1,1-difluoroethylene", "C=C(F)F"),
    ("tetrafluoroethylene", "FC(F)=C(F)F"),
    ("trichloroethylene", "ClC=C(Cl)Cl"),
    ("tetrachloroethylene", "ClC(Cl)=C(Cl)Cl"),
    ("phosgene", "O=C(Cl)Cl"),
    ("acetyl chloride", "CC(Cl)=O"),
    ("acetyl fluoride", "CC(F)=O"),
    ("trifluoroacetic acid", "OC(=O)C(F)(F)F"),
    ("2,2,2-trifluoroethanol", "OCC(F)(F)F"),
    ("oxirane", "C1CO1"),
    ("aziridine", "C1CN1"),
    ("thiirane", "C1CS1"),
    ("oxetane", "C1COC1"),
    ("azetidine", "C1CNC1"),
    ("cyclobutane", "C1CCC1"),
    ("cyclobutene", "C1=CCC1"),
    ("cyclobutanone", "O=C1CCC1"),
    ("butane", "CCCC"),
    ("isobutane", "CC(C)C"),
    ("1-butene", "C=CCC"),
    ("cis-2-butene", "C/C=C\\C"),
    ("trans-2-butene", "C/C=C/C"),
    ("isobutylene", "C=C(C)C"),
    ("1,3-butadiene", "C=CC=C"),
    ("1-butyne", "C#CCC"),
    ("2-butyne", "CC#CC"),
    ("vinylacetylene", "C=CC#C"),
    ("diacetylene", "C#CC#C"),
    ("1-butanol", "CCCCO"),
    ("2-butanol", "CCC(C)O"),
    ("isobutanol", "CC(C)CO"),
    ("tert-butanol", "CC(C)(C)O"),
    ("diethyl ether", "CCOCC"),
    ("methyl propyl ether", "CCCOC"),
    ("butanal", "CCCC=O"),
    ("isobutyraldehyde", "CC(C)C=O"),
    ("2-butanone", "CCC(C)=O"),
    ("butyric acid", "CCCC(=O)O"),
    ("isobutyric acid", "CC(C)C(=O)O"),
    ("ethyl acetate", "CCOC(C)=O"),
    ("methyl propionate", "CCC(=O)OC"),
    ("butyronitrile", "CCCC#N"),
    ("crotonaldehyde", "C/C=C/C=O"),
    ("methacrolein", "C=C(C)C=O"),
    ("methyl vinyl ketone", "C=CC(C)=O"),
    ("diacetyl", "CC(=O)C(C)=O"),
    ("succinonitrile", "N#CCCC#N"),
    ("butylamine", "CCCCN"),
    ("diethylamine", "CCNCC"),
    ("tert-butylamine", "CC(C)(C)N"),
    ("N,N-dimethylacetamide", "CC(=O)N(C)C"),
    ("N-methylacetamide", "CNC(C)=O"),
    ("propionamide", "CCC(N)=O"),
    ("alanine", "CC(N)C(=O)O"),
    ("sarcosine", "CNCC(=O)O"),
    ("beta-alanine", "NCCC(=O)O"),
    ("glycolic acid", "OCC(=O)O"),
    ("lactic acid", "CC(O)C(=O)O"),
    ("pyruvic acid", "CC(=O)C(=O)O"),
    ("oxalic acid", "OC(=O)C(=O)O"),
    ("malonic acid", "OC(=O)CC(=O)O"),
    ("glycerol", "OCC(O)CO"),
    ("1,2-propanediol", "CC(O)CO"),
    ("1,3-propanediol", "OCCCO"),
    ("dimethoxymethane", "COCOC"),
    ("1,2-dimethoxyethane", "COCCOC"),
    ("2-aminoethanol", "NCCO"),
    ("ethylenediamine", "NCCN"),
    ("methyl isocyanate", "CN=C=O"),
    ("nitromethane", "C[N+](=O)[O-]"),
    ("nitroethane", "CC[N+](=O)[O-]"),
    ("methyl nitrite", "CON=O"),
    ("hydroxylamine", "NO"),
    ("hydrazine", "NN"),
    ("methylhydrazine", "CNN"),
    ("hydrogen peroxide", "OO"),
    ("acetaldoxime", "C/C=N/O"),
    ("acetone oxime", "CC(C)=NO"),
    ("dimethyl disulfide", "CSSC"),
    ("thiophene", "c1ccsc1"),
    ("furan", "c1ccoc1"),
    ("pyrrole", "c1cc[nH]c1"),
    ("imidazole", "c1c[nH]cn1"),
    ("pyrazole", "c1cn[nH]c1"),
    ("oxazole", "c1cocn1"),
    ("isoxazole", "c1cnoc1"),
    ("thiazole", "c1cscn1"),
    ("1,2,4-triazole", "c1nc[nH]n1"),
    ("tetrahydrofuran", "C1CCOC1"),
    ("pyrrolidine", "C1CCNC1"),
    ("tetrahydrothiophene", "C1CCSC1"),
    ("cyclopentane", "C1CCCC1"),
    ("cyclopentene", "C1=CCCC1"),
    ("cyclopentadiene", "C1=CCC=C1"),
    ("cyclopentanone", "O=C1CCCC1"),
    ("gamma-butyrolactone", "O=C1CCCO1"),
    ("2-pyrrolidone", "O=C1CCCN1"),
    ("succinimide", "O=C1CCC(=O)N1"),
    ("maleic anhydride", "O=C1C=CC(=O)O1"),
    ("succinic anhydride", "O=C1CCC(=O)O1"),
    ("1,3-dioxolane", "C1COCO1"),
    ("ethylene carbonate", "O=C1OCCO1"),
    ("pentane", "CCCCC"),
    ("isopentane", "CCC(C)C"),
    ("neopentane", "CC(C)(C)C"),
    ("1-pentene", "C=CCCC"),
    ("isoprene", "C=CC(=C)C"),
    ("1-pentanol", "CCCCCO"),
    ("3-pentanone", "CCC(=O)CC"),
    ("2-pentanone", "CCCC(C)=O"),
    ("pentanal", "CCCCC=O"),
    ("valeric acid", "CCCCC(=O)O"),
    ("methyl butyrate", "CCCC(=O)OC"),
    ("propyl acetate", "CCCOC(C)=O"),
    ("isopropyl acetate", "CC(C)OC(C)=O"),
    ("acetylacetone", "CC(=O)CC(C)=O"),
    ("methyl methacrylate", "C=C(C)C(=O)OC"),
    ("ethyl acrylate", "C=CC(=O)OCC"),
    ("tert-butyl methyl ether", "COC(C)(C)C"),
    ("valeronitrile", "CCCCC#N"),
    ("pentylamine", "CCCCCN"),
    ("piperidine", "C1CCNCC1"),
    ("morpholine", "C1COCCN1"),
    ("piperazine", "C1CNCCN1"),
    ("tetrahydropyran", "C1CCOCC1"),
    ("1,4-dioxane", "C1COCCO1"),
    ("cyclohexane", "C1CCCCC1"),
    ("cyclohexene", "C1=CCCCC1"),
    ("1,3-cyclohexadiene", "C1=CCCC=C1"),
    ("1,4-cyclohexadiene", "C1=CCC=CC1"),
    ("cyclohexanone", "O=C1CCCCC1"),
    ("cyclohexanol", "OC1CCCCC1"),
    ("delta-valerolactone", "O=C1CCCCO1"),
    ("2-piperidone", "O=C1CCCCN1"),
    ("benzene", "c1ccccc1"),
    ("pyridine", "c1ccncc1"),
    ("pyrimidine", "c1cncnc1"),
    ("pyrazine", "c1cnccn1"),
    ("pyridazine", "c1ccnnc1"),
    ("1,3,5-triazine", "c1ncncn1"),
    ("fluorobenzene", "Fc1ccccc1"),
    ("chlorobenzene", "Clc1ccccc1"),
    ("phenol", "Oc1ccccc1"),
    ("aniline", "Nc1ccccc1"),
    ("toluene", "Cc1ccccc1"),
    ("benzonitrile", "N#Cc1ccccc1"),
    ("benzaldehyde", "O=Cc1ccccc1"),
    ("2-methylpyridine", "Cc1ccccn1"),
    ("3-methylpyridine", "Cc1cccnc1"),
    ("4-methylpyridine", "Cc1ccncc1"),
    ("2-pyridone", "O=c1cccc[nH]1"),
    ("uracil", "O=c1cc[nH]c(=O)[nH]1"),
    ("cytosine", "Nc1cc[nH]c(=O)n1"),
    ("thymine", "Cc1c[nH]c(=O)[nH]c1=O"),
    ("2-methylfuran", "Cc1ccco1"),
    ("furfural", "O=Cc1ccco1"),
    ("furfuryl alcohol", "OCc1ccco1"),
    ("2-methylthiophene", "Cc1cccs1"),
    ("N-methylpyrrole", "Cn1cccc1"),
    ("2-acetylpyrrole", "CC(=O)c1ccc[nH]1"),
    ("1-methylimidazole", "Cn1ccnc1"),
    ("4-methylimidazole", "Cc1c[nH]cn1"),
    ("hexane", "CCCCCC"),
    ("2-methylpentane", "CCCC(C)C"),
    ("2,3-dimethylbutane", "CC(C)C(C)C"),
    ("1-hexene", "C=CCCCC"),
    ("1-hexanol", "CCCCCCO"),
    ("hexanal", "CCCCCC=O"),
    ("2-hexanone", "CCCCC(C)=O"),
    ("triethylamine", "CCN(CC)CC"),
    ("diisopropyl ether", "CC(C)OC(C)C"),
    ("butyl acetate", "CCCCOC(C)=O"),
    ("ethyl propionate", "CCOC(=O)CC"),
    ("caprolactam", "O=C1CCCCCN1"),
    ("hydroquinone", "Oc1ccc(O)cc1"),
    ("catechol", "Oc1ccccc1O"),
    ("resorcinol", "Oc1cccc(O)c1"),
    ("p-benzoquinone", "O=C1C=CC(=O)C=C1"),
    ("4-fluorophenol", "Oc1ccc(F)cc1"),
    ("1,4-difluorobenzene", "Fc1ccc(F)cc1"),
    ("1,2-dichlorobenzene", "Clc1ccccc1Cl"),
    ("2-aminopyridine", "Nc1ccccn1"),
    ("4-aminopyridine", "Nc1ccncc1"),
    ("nicotinonitrile", "N#Cc1cccnc1"),
    ("maleimide", "O=C1C=CC(=O)N1"),
    ("histamine", "NCCc1c[nH]cn1"),
    ("serine", "NC(CO)C(=O)O"),
    ("cysteine", "NC(CS)C(=O)O"),
    ("threonine", "CC(O)C(N)C(=O)O"),
    ("proline", "OC(=O)C1CCCN1"),
    ("valine", "CC(C)C(N)C(=O)O"),
    ("aspartic acid", "NC(CC(=O)O)C(=O)O"),
    ("asparagine", "NC(=O)CC(N)C(=O)O"),
)


def _atomic_write_json(path: Path, payload: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(payload, fh, indent=1)
            fh.write("\n")
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; the file ships with the package
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _geometry(smiles: str, seed: int):
    from rdkit import Chem
    from rdkit.Chem import AllChem

    mol = Chem.AddHs(Chem.MolFromSmiles(smiles))
    if AllChem.EmbedMolecule(mol, randomSeed=seed) < 0:
        raise RuntimeError(f"embedding failed for {smiles}")
    status = AllChem.MMFFOptimizeMolecule(mol, maxIters=1000)
    if status < 0:
        raise RuntimeError(f"MMFF94 set-up failed for {smiles}")
    symbols = [a.GetSymbol() for a in mol.GetAtoms()]
    pos = mol.GetConformer().GetPositions()
    return symbols, [[round(float(v), 5) for v in row] for row in pos], int(Chem.GetFormalCharge(mol)), status == 0


def _register_hse06_star() -> None:
    from pyscf.dft import libxc

    # PySCF lower-cases xc names before the custom-functional lookup: register lower case.
    libxc.register_custom_functional_("hse06_10hf", "HSE06", ext_params={HSE06_LIBXC_ID: [0.10, 0.11, 0.11]})
    libxc.register_custom_functional_("hse06_check", "HSE06", ext_params={HSE06_LIBXC_ID: [0.25, 0.11, 0.11]})


def _check_functionals(basis: str, grid_level: int) -> dict:
    """Water: the custom beta=0.25 HSE must equal HSE06; report the RSH coefficients."""
    from pyscf import dft, gto
    from pyscf.dft import libxc

    mol = gto.M(atom="O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692", basis=basis, verbose=0)
    energies = {}
    for xc in ("HSE06", "hse06_check"):
        mf = dft.RKS(mol).density_fit()
        mf.xc = xc
        mf.grids.level = grid_level
        energies[xc] = float(mf.kernel())
    diff = abs(energies["HSE06"] - energies["hse06_check"])
    if diff > 1e-8:
        raise RuntimeError(f"custom HSE construction does not reproduce HSE06 (|dE| = {diff:.2e} Eh)")
    return {
        "hse06_rsh_coeff(omega,alpha,beta)": list(libxc.rsh_coeff("HSE06")),
        "hse06_10hf_rsh_coeff(omega,alpha,beta)": list(libxc.rsh_coeff("hse06_10hf")),
        "hle17_exact_exchange": float(libxc.hybrid_coeff("HLE17")),
        "check_water_energy_difference_hartree": diff,
    }


def _gaps(symbols, pos, charge, basis, grid_level):
    from pyscf import dft, gto

    mol = gto.M(atom=list(zip(symbols, [tuple(p) for p in pos], strict=True)), basis=basis, charge=charge, spin=0, verbose=0)
    out = {}
    dm = None
    for name, xc in FIDELITIES.items():
        t0 = time.process_time()
        mf = dft.RKS(mol).density_fit()
        mf.xc = xc
        mf.grids.level = grid_level
        mf.max_cycle = 100
        mf.kernel(dm0=dm)
        nocc = mol.nelectron // 2
        homo = float(mf.mo_energy[nocc - 1]) * HARTREE_EV
        lumo = float(mf.mo_energy[nocc]) * HARTREE_EV
        out[name] = {
            "gap_ev": round(lumo - homo, 6),
            "homo_ev": round(homo, 6),
            "lumo_ev": round(lumo, 6),
            "converged": bool(mf.converged),
            "cpu_s": round(time.process_time() - t0, 3),
        }
        if mf.converged:
            dm = mf.make_rdm1()
    return out, int(mol.nao)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--basis", default="6-31g")
    ap.add_argument("--grid-level", type=int, default=0)
    ap.add_argument("--max-heavy-atoms", type=int, default=6)
    ap.add_argument("--max-molecules", type=int, default=None)
    ap.add_argument("--max-cpu-seconds", type=float, default=1700.0,
                    help="stop taking new molecules once this much CPU time was spent")
    ap.add_argument("--max-wall-seconds", type=float, default=None,
                    help="also stop taking new molecules after this much wall-clock time")
    ap.add_argument("--seed", type=int, default=0, help="ETKDG random seed")
    ap.add_argument("--resume", action="store_true", help="keep molecules already in --out")
    args = ap.parse_args(argv)

    import numpy
    import pyscf
    import rdkit
    from pyscf.dft import libxc
    from rdkit import Chem

    _register_hse06_star()
    t_start = time.process_time()
    wall_start = time.perf_counter()
    checks = _check_functionals(args.basis, args.grid_level)

    todo = []
    for name, smi in MOLECULES:
        mol = Chem.MolFromSmiles(smi)
        if mol.GetNumHeavyAtoms() <= args.max_heavy_atoms:
            todo.append((name, smi, mol.GetNumHeavyAtoms()))
    # smallest first: a CPU budget cut keeps the cheapest molecules
    todo.sort(key=lambda t: (t[2], t[0]))
    if args.max_molecules is not None:
        todo = todo[: args.max_molecules]

    records, skipped = [], []
    if args.resume and args.out.exists():
        previous = json.loads(args.out.read_text())
        records, skipped = previous["molecules"], previous.get("skipped", [])
    done = {r["name"] for r in records} | {r["name"] for r in skipped}
    prior_cpu = sum(sum(f["cpu_s"] for f in r["fidelities"].values()) + r["geometry_cpu_s"] for r in records)
    stopped_by = None
    for name, smi, n_heavy in todo:
        if name in done:
            continue
        spent = prior_cpu + time.process_time() - t_start
        if spent > args.max_cpu_seconds:
            stopped_by = f"CPU budget ({args.max_cpu_seconds} s)"
            break
        if args.max_wall_seconds is not None and time.perf_counter() - wall_start > args.max_wall_seconds:
            stopped_by = f"wall-clock budget ({args.max_wall_seconds} s)"
            break
        t0 = time.process_time()
        try:
            symbols, pos, charge, mmff_ok = _geometry(smi, args.seed)
        except RuntimeError as exc:  # no MMFF94 parameters (e.g. HCl): recorded, not computed
            skipped.append({"name": name, "smiles": smi, "reason": str(exc)})
            print(f"skipped {name}: {exc}", flush=True)
            continue
        geo_cpu = time.process_time() - t0
        fids, nao = _gaps(symbols, pos, charge, args.basis, args.grid_level)
        records.append({
            "name": name, "smiles": smi, "num_heavy_atoms": n_heavy, "symbols": symbols,
            "pos_angstrom": pos, "mmff_converged": mmff_ok, "num_basis_functions": nao,
            "geometry_cpu_s": round(geo_cpu, 4), "fidelities": fids,
        })
        gaps = " ".join(f"{k}={v['gap_ev']:.3f}" for k, v in fids.items())
        print(f"[{len(records)}/{len(todo)}] {name}: {gaps} ({sum(v['cpu_s'] for v in fids.values()):.1f} s)", flush=True)
        total_cpu = prior_cpu + time.process_time() - t_start
        payload = {
            "description": (
                "HOMO-LUMO gaps (eV) of small real molecules at QMOF's four levels of theory, "
                "computed by the gs project with PySCF (molecular DFT; not periodic MOFs)."
            ),
            "generator": "packages/gs-data/scripts/make_fidelity_gaps.py",
            "command": " ".join(["python", "packages/gs-data/scripts/make_fidelity_gaps.py", *(argv or sys.argv[1:])]),
            "created_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "versions": {
                "pyscf": pyscf.__version__, "libxc": libxc.libxc_version() if hasattr(libxc, "libxc_version") else libxc.__version__,
                "rdkit": rdkit.__version__, "numpy": numpy.__version__, "python": platform.python_version(),
            },
            "machine": {"platform": platform.platform(), "processor": platform.processor(),
                        "omp_num_threads": os.environ.get("OMP_NUM_THREADS", "unset")},
            "method": {
                "basis": args.basis, "density_fitting": True, "auxbasis": "PySCF default for the basis",
                "grid_level": args.grid_level, "scf": "restricted Kohn-Sham, PBE density as initial guess for the others",
                "geometry": "RDKit ETKDG EmbedMolecule(randomSeed=seed) + MMFF94 (maxIters 1000), hydrogens kept",
                "seed": args.seed, "max_heavy_atoms": args.max_heavy_atoms,
                "functionals": {
                    "pbe": "PBE (GGA_X_PBE + GGA_C_PBE)",
                    "hle17": "MGGA_XC_HLE17",
                    "hse06_10hf": "HYB_GGA_XC_HSE06 with ext params beta=0.10, omega_HF=omega_PBE=0.11",
                    "hse06": "HYB_GGA_XC_HSE06 (beta=0.25, omega=0.11)",
                },
                "checks": checks,
                "gap": "LUMO - HOMO Kohn-Sham orbital energy, eV (1 Eh = 27.211386245988 eV)",
            },
            "cost": {
                "total_cpu_s": round(total_cpu, 1),
                "wall_s_this_run": round(time.perf_counter() - wall_start, 1),
                "max_cpu_seconds": args.max_cpu_seconds,
                "stopped_by": None,
            },
            "skipped": skipped,
            "molecules": records,
        }
        _atomic_write_json(args.out, payload)
    if stopped_by is not None and args.out.exists():
        payload = json.loads(args.out.read_text())
        payload["cost"].pop("stopped_by_cpu_budget", None)  # field of an earlier version
        payload["cost"]["stopped_by"] = stopped_by
        payload["cost"]["molecules_not_computed"] = len([t for t in todo if t[0] not in
                                                         {r["name"] for r in payload["molecules"]} | {r["name"] for r in payload["skipped"]}])
        _atomic_write_json(args.out, payload)
    print(f"{len(records)} molecules written to {args.out}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
