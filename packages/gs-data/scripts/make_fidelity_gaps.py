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

    OMP_NUM_THREADS=1 nice -n 5 python packages/gs-data/scripts/make_fidelity_gaps.py \
        --resume --max-heavy-atoms 13 --basis 6-31g --grid-level 0 \
        --max-cpu-seconds 100000 --max-wall-seconds 5849

Molecules are computed cheapest first (fewest basis functions, then fewest heavy atoms,
then name), so a budget cut keeps the cheapest ones. The output (``src/gs_data/materials/data/molecular_fidelity_gaps.json.gz``, the molecules
as compact gzipped JSON, and ``molecular_fidelity_gaps.provenance.json`` beside it)
is written atomically after every molecule, so an interrupted run resumes where it
stopped (``--resume``). It records the program versions, basis set, grid, per-calculation
CPU times and the total cost (CPU and wall, summed over the resumed runs). Every molecule
carries a class tag ``conjugated`` (RDKit: any aromatic atom or conjugated bond) and the
``summary`` block gives the mean gap per fidelity over all molecules, the conjugated
ones and the rest. ``--finalise`` only re-tags and re-summarises an existing file.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

HARTREE_EV = 27.211386245988
DEFAULT_OUT = (
    Path(__file__).resolve().parents[1] / "src" / "gs_data" / "materials" / "data" / "molecular_fidelity_gaps.json.gz"
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

# Extension (issue 9): conjugated, MOF-linker-like molecules (heteroaromatics, substituted
# benzenes and pyridines, aromatic and unsaturated (di)carboxylic acids, polyenes, nitriles) and
# further small ones. QMOF band gaps are largely set by the conjugated organic linkers, so the
# conjugated subset is the closer molecular analogue of MOFs. Same rules as above.
MOLECULES_EXTENSION: tuple[tuple[str, str], ...] = (
    ("ketene", "C=C=O"),
    ("isocyanic acid", "N=C=O"),
    ("cyanamide", "NC#N"),
    ("formyl fluoride", "O=CF"),
    ("carbonyl fluoride", "O=C(F)F"),
    ("cyclopropene", "C1=CC1"),
    ("ethyl methyl ether", "CCOC"),
    ("cyanogen", "N#CC#N"),
    ("cyanoacetylene", "C#CC#N"),
    ("glyoxal", "O=CC=O"),
    ("propiolaldehyde", "C#CC=O"),
    ("guanidine", "NC(N)=N"),
    ("methyl isothiocyanate", "CN=C=S"),
    ("methyl thiocyanate", "CSC#N"),
    ("thioacetamide", "CC(N)=S"),
    ("thiophosgene", "S=C(Cl)Cl"),
    ("1,1-dichloroethylene", "C=C(Cl)Cl"),
    ("cis-1,2-dichloroethylene", "Cl/C=C\\Cl"),
    ("trans-1,2-dichloroethylene", "Cl/C=C/Cl"),
    ("trifluoroethylene", "FC=C(F)F"),
    ("chloroacetonitrile", "ClCC#N"),
    ("2-chloroethanol", "OCCCl"),
    ("2-fluoroethanol", "OCCF"),
    ("1,2-dichloroethane", "ClCCCl"),
    ("1,1-dichloroethane", "CC(Cl)Cl"),
    ("1,1-difluoroethane", "CC(F)F"),
    ("N-methylethylamine", "CCNC"),
    ("1,1-dimethylhydrazine", "CN(C)N"),
    ("2-mercaptoethanol", "OCCS"),
    ("methyl ethyl sulfide", "CCSC"),
    ("thietane", "C1CSC1"),
    ("methylcyclopropane", "CC1CC1"),
    ("cyclopropylamine", "NC1CC1"),
    ("propylene oxide", "CC1CO1"),
    ("allyl alcohol", "C=CCO"),
    ("allylamine", "C=CCN"),
    ("allyl chloride", "C=CCCl"),
    ("propargyl alcohol", "C#CCO"),
    ("1-propanethiol", "CCCS"),
    ("2-propanethiol", "CC(C)S"),
    ("1-chloropropane", "CCCCl"),
    ("2-chloropropane", "CC(C)Cl"),
    ("1-fluoropropane", "CCCF"),
    ("chlorotrifluoroethylene", "FC(F)=C(F)Cl"),
    ("1,1,1-trichloroethane", "CC(Cl)(Cl)Cl"),
    ("1,1,1-trifluoroethane", "CC(F)(F)F"),
    ("chloroacetic acid", "OC(=O)CCl"),
    ("dimethyl sulfone", "CS(C)(=O)=O"),
    ("methanesulfonic acid", "CS(=O)(=O)O"),
    ("glycidol", "OCC1CO1"),
    ("isobutylamine", "CC(C)CN"),
    ("sec-butylamine", "CCC(C)N"),
    ("cyclobutanol", "OC1CCC1"),
    ("diethyl sulfide", "CCSCC"),
    ("ethyl vinyl ether", "C=COCC"),
    ("acetyl cyanide", "CC(=O)C#N"),
    ("dimethylcyanamide", "CN(C)C#N"),
    ("nitroethylene", "C=C[N+](=O)[O-]"),
    ("methyl nitrate", "CO[N+](=O)[O-]"),
    ("acrylamide", "C=CC(N)=O"),
    ("propiolic acid", "C#CC(=O)O"),
    ("glyoxylic acid", "O=CC(=O)O"),
    ("methylglyoxal", "CC(=O)C=O"),
    ("malononitrile", "N#CCC#N"),
    ("methacrylonitrile", "C=C(C)C#N"),
    ("crotononitrile", "C/C=C/C#N"),
    ("trans-1,3-pentadiene", "C/C=C/C=C"),
    ("2-methyl-2-butene", "CC=C(C)C"),
    ("N-vinylformamide", "C=CNC=O"),
    ("vinyl formate", "C=COC=O"),
    ("methyl carbamate", "COC(N)=O"),
    ("1,2,3-triazole", "c1c[nH]nn1"),
    ("tetrazole", "c1nnn[nH]1"),
    ("isothiazole", "c1ccsn1"),
    ("1,3,4-oxadiazole", "c1nnco1"),
    ("furazan", "c1cnon1"),
    ("1,3,4-thiadiazole", "c1nncs1"),
    ("1,2,5-thiadiazole", "c1cnsn1"),
    ("1,2,4-oxadiazole", "c1ncon1"),
    ("3-pyrroline", "C1=CCNC1"),
    ("2,3-dihydrofuran", "C1=COCC1"),
    ("2-imidazolidinone", "O=C1NCCN1"),
    ("2-oxazolidinone", "O=C1NCCO1"),
    ("thiazolidine", "C1CSCN1"),
    ("methyl acrylate", "C=CC(=O)OC"),
    ("crotonic acid", "C/C=C/C(=O)O"),
    ("methacrylic acid", "C=C(C)C(=O)O"),
    ("vinyl acetate", "C=COC(C)=O"),
    ("trans-1,3,5-hexatriene", "C=C/C=C/C=C"),
    ("fumaronitrile", "N#C/C=C/C#N"),
    ("2,4-hexadiyne", "CC#CC#CC"),
    ("oxamide", "NC(=O)C(N)=O"),
    ("oxamic acid", "NC(=O)C(=O)O"),
    ("dimethyl carbonate", "COC(=O)OC"),
    ("N,N'-dimethylurea", "CNC(=O)NC"),
    ("cyanoacetic acid", "N#CCC(=O)O"),
    ("cyanoacetamide", "N#CCC(N)=O"),
    ("2-methylpyrrole", "Cc1ccc[nH]1"),
    ("3-methylfuran", "Cc1ccoc1"),
    ("3-methylthiophene", "Cc1ccsc1"),
    ("2-methylimidazole", "Cc1ncc[nH]1"),
    ("1-methylpyrazole", "Cn1cccn1"),
    ("3-methylpyrazole", "Cc1cc[nH]n1"),
    ("4-methylpyrazole", "Cc1cn[nH]c1"),
    ("2-methylthiazole", "Cc1nccs1"),
    ("4-methylthiazole", "Cc1cscn1"),
    ("2-methyloxazole", "Cc1ncco1"),
    ("3-methylisoxazole", "Cc1ccon1"),
    ("5-methylisoxazole", "Cc1ccno1"),
    ("2-aminothiazole", "Nc1nccs1"),
    ("3-amino-1,2,4-triazole", "Nc1nc[nH]n1"),
    ("5-aminotetrazole", "Nc1nn[nH]n1"),
    ("5-methyltetrazole", "Cc1nn[nH]n1"),
    ("1-methyl-1,2,4-triazole", "Cn1cncn1"),
    ("2-aminoimidazole", "Nc1ncc[nH]1"),
    ("1,2,4-triazine", "c1cnncn1"),
    ("1,2,4,5-tetrazine", "c1nncnn1"),
    ("1,1,1,2-tetrafluoroethane", "FCC(F)(F)F"),
    ("dichloroacetic acid", "OC(=O)C(Cl)Cl"),
    ("cyclopentanol", "OC1CCCC1"),
    ("cyclopentylamine", "NC1CCCC1"),
    ("2-methyl-2-butanol", "CCC(C)(C)O"),
    ("3-methyl-1-butanol", "CC(C)CCO"),
    ("2-fluoropyridine", "Fc1ccccn1"),
    ("3-fluoropyridine", "Fc1cccnc1"),
    ("2-chloropyridine", "Clc1ccccn1"),
    ("3-chloropyridine", "Clc1cccnc1"),
    ("3-hydroxypyridine", "Oc1cccnc1"),
    ("3-aminopyridine", "Nc1cccnc1"),
    ("2-aminopyrimidine", "Nc1ncccn1"),
    ("aminopyrazine", "Nc1cnccn1"),
    ("2-methylpyrazine", "Cc1cnccn1"),
    ("2-methylpyrimidine", "Cc1ncccn1"),
    ("4-methylpyrimidine", "Cc1ccncn1"),
    ("thiophenol", "Sc1ccccc1"),
    ("2,5-dimethylfuran", "Cc1ccc(C)o1"),
    ("2,5-dimethylthiophene", "Cc1ccc(C)s1"),
    ("2,5-dimethylpyrrole", "Cc1ccc(C)[nH]1"),
    ("thiophene-2-carbaldehyde", "O=Cc1cccs1"),
    ("pyrrole-2-carbaldehyde", "O=Cc1ccc[nH]1"),
    ("imidazole-2-carbaldehyde", "O=Cc1ncc[nH]1"),
    ("2-furonitrile", "N#Cc1ccco1"),
    ("biuret", "NC(=O)NC(N)=O"),
    ("hydantoin", "O=C1CNC(=O)N1"),
    ("acetic anhydride", "CC(=O)OC(C)=O"),
    ("sulfolane", "O=S1(=O)CCCC1"),
    ("fumaric acid", "OC(=O)/C=C/C(=O)O"),
    ("maleic acid", "OC(=O)/C=C\\C(=O)O"),
    ("acetylenedicarboxylic acid", "OC(=O)C#CC(=O)O"),
    ("squaric acid", "OC1=C(O)C(=O)C1=O"),
    ("dimethyl oxalate", "COC(=O)C(=O)OC"),
    ("sorbic acid", "C/C=C/C=C/C(=O)O"),
    ("2-acetylfuran", "CC(=O)c1ccco1"),
    ("2-acetylthiophene", "CC(=O)c1cccs1"),
    ("2-furoic acid", "OC(=O)c1ccco1"),
    ("thiophene-2-carboxylic acid", "OC(=O)c1cccs1"),
    ("pyrrole-2-carboxylic acid", "OC(=O)c1ccc[nH]1"),
    ("imidazole-4-carboxylic acid", "OC(=O)c1c[nH]cn1"),
    ("pyrazole-3-carboxylic acid", "OC(=O)c1cc[nH]n1"),
    ("1,2,4-triazole-3-carboxylic acid", "OC(=O)c1nc[nH]n1"),
    ("2-vinylpyridine", "C=Cc1ccccn1"),
    ("4-vinylpyridine", "C=Cc1ccncc1"),
    ("styrene", "C=Cc1ccccc1"),
    ("phenylacetylene", "C#Cc1ccccc1"),
    ("anisole", "COc1ccccc1"),
    ("benzyl alcohol", "OCc1ccccc1"),
    ("p-phenylenediamine", "Nc1ccc(N)cc1"),
    ("4-aminophenol", "Nc1ccc(O)cc1"),
    ("p-xylene", "Cc1ccc(C)cc1"),
    ("p-cresol", "Cc1ccc(O)cc1"),
    ("4-fluoroaniline", "Nc1ccc(F)cc1"),
    ("4-chloroaniline", "Nc1ccc(Cl)cc1"),
    ("4-cyanopyridine", "N#Cc1ccncc1"),
    ("2-cyanopyridine", "N#Cc1ccccn1"),
    ("4-nitroimidazole", "O=[N+]([O-])c1c[nH]cn1"),
    ("benzoic acid", "OC(=O)c1ccccc1"),
    ("nicotinic acid", "OC(=O)c1cccnc1"),
    ("isonicotinic acid", "OC(=O)c1ccncc1"),
    ("picolinic acid", "OC(=O)c1ccccn1"),
    ("pyrazine-2-carboxylic acid", "OC(=O)c1cnccn1"),
    ("acetophenone", "CC(=O)c1ccccc1"),
    ("benzamide", "NC(=O)c1ccccc1"),
    ("nitrobenzene", "O=[N+]([O-])c1ccccc1"),
    ("4-hydroxybenzaldehyde", "O=Cc1ccc(O)cc1"),
    ("melamine", "Nc1nc(N)nc(N)n1"),
    ("cyanuric acid", "O=c1[nH]c(=O)[nH]c(=O)[nH]1"),
    ("barbituric acid", "O=C1CC(=O)NC(=O)N1"),
    ("indole", "c1ccc2[nH]ccc2c1"),
    ("benzimidazole", "c1ccc2[nH]cnc2c1"),
    ("benzofuran", "c1ccc2occc2c1"),
    ("benzothiophene", "c1ccc2sccc2c1"),
    ("benzotriazole", "c1ccc2[nH]nnc2c1"),
    ("purine", "c1ncc2[nH]cnc2n1"),
    ("4-hydroxybenzoic acid", "OC(=O)c1ccc(O)cc1"),
    ("4-aminobenzoic acid", "Nc1ccc(C(=O)O)cc1"),
    ("4-fluorobenzoic acid", "OC(=O)c1ccc(F)cc1"),
    ("4-nitrophenol", "O=[N+]([O-])c1ccc(O)cc1"),
    ("4-nitroaniline", "Nc1ccc([N+](=O)[O-])cc1"),
    ("terephthalonitrile", "N#Cc1ccc(C#N)cc1"),
    ("methyl benzoate", "COC(=O)c1ccccc1"),
    ("naphthalene", "c1ccc2ccccc2c1"),
    ("quinoline", "c1ccc2ncccc2c1"),
    ("adenine", "Nc1ncnc2[nH]cnc12"),
    ("tetracyanoethylene", "N#CC(C#N)=C(C#N)C#N"),
    ("2,5-furandicarboxylic acid", "OC(=O)c1ccc(C(=O)O)o1"),
    ("2,5-thiophenedicarboxylic acid", "OC(=O)c1ccc(C(=O)O)s1"),
    ("3,5-pyrazoledicarboxylic acid", "OC(=O)c1cc(C(=O)O)[nH]n1"),
    ("terephthalic acid", "OC(=O)c1ccc(C(=O)O)cc1"),
    ("isophthalic acid", "OC(=O)c1cccc(C(=O)O)c1"),
    ("phthalic acid", "OC(=O)c1ccccc1C(=O)O"),
    ("dipicolinic acid", "OC(=O)c1cccc(C(=O)O)n1"),
    ("3,5-pyridinedicarboxylic acid", "OC(=O)c1cncc(C(=O)O)c1"),
    ("4,4'-bipyridine", "c1cc(-c2ccncc2)ccn1"),
    ("2-aminoterephthalic acid", "Nc1cc(C(=O)O)ccc1C(=O)O"),
)
MOLECULES = MOLECULES + MOLECULES_EXTENSION


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    try:  # the one atomic-write helper of gs-data
        from gs_data._io import atomic_write
    except ImportError:  # run from a checkout without gs-data installed
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
        from gs_data._io import atomic_write
    with atomic_write(path, "wb") as fh:
        fh.write(data)


def provenance_path(data_path: Path) -> Path:
    """``<stem>.provenance.json`` beside ``<stem>.json.gz`` (as gs_data.materials.molecular)."""
    return data_path.with_name(data_path.name.removesuffix(".gz").removesuffix(".json") + ".provenance.json")


def _atomic_write_json(path: Path, payload: dict) -> None:
    """``*.json.gz``: the molecules as compact gzipped JSON and, apart, the provenance
    (every other key, indented, with the data's SHA-256 and count); any other name: one
    indented JSON file holding both."""
    if not path.name.endswith(".json.gz"):
        _atomic_write_bytes(path, (json.dumps(payload, indent=1) + "\n").encode())
        return
    data = json.dumps({"molecules": payload["molecules"]}, separators=(",", ":")).encode()
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
        gz.write(data)  # mtime 0, no name: the same molecules give the same bytes
    provenance = {k: v for k, v in payload.items() if k != "molecules"}
    provenance["data_file"] = path.name
    provenance["data_sha256"] = hashlib.sha256(data).hexdigest()
    provenance["data_num_molecules"] = len(payload["molecules"])
    _atomic_write_bytes(path, buf.getvalue())
    _atomic_write_bytes(provenance_path(path), (json.dumps(provenance, indent=1) + "\n").encode())


def _read_payload(path: Path) -> dict:
    """What :func:`_atomic_write_json` wrote, joined into one document."""
    if not path.name.endswith(".json.gz"):
        return json.loads(path.read_text())
    doc = json.loads(gzip.decompress(path.read_bytes()))
    prov = json.loads(provenance_path(path).read_text())
    for key in ("data_file", "data_sha256", "data_num_molecules"):
        prov.pop(key, None)
    return {**prov, **doc}


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


def is_conjugated(smiles: str) -> bool:
    """Class tag: True if RDKit perceives any aromatic atom or any conjugated bond.

    RDKit's conjugation covers C=C-C=C, C=C-C=O, aromatic rings and also the C-O / C-N
    bonds of carboxylic acids, esters and amides (lone pair next to a pi bond).
    """
    from rdkit import Chem

    mol = Chem.MolFromSmiles(smiles)
    return any(a.GetIsAromatic() for a in mol.GetAtoms()) or any(b.GetIsConjugated() for b in mol.GetBonds())


def summarise(records: list[dict]) -> dict:
    """Mean gap (eV) per fidelity over all molecules, the conjugated subset and the rest."""
    order = list(FIDELITIES)
    out = {"fidelity_order_checked": order}
    subsets = {
        "all": records,
        "conjugated": [r for r in records if r["conjugated"]],
        "rest": [r for r in records if not r["conjugated"]],
    }
    for key, rs in subsets.items():
        means = {f: (round(sum(r["fidelities"][f]["gap_ev"] for r in rs) / len(rs), 4) if rs else None) for f in order}
        vals = [means[f] for f in order]
        in_order = [all(r["fidelities"][a]["gap_ev"] < r["fidelities"][b]["gap_ev"] for a, b in zip(order[:-1], order[1:], strict=True))
                    for r in rs]
        out[key] = {
            "num_molecules": len(rs),
            "mean_gap_ev": means,
            "increasing_in_fidelity_order": bool(rs) and all(a < b for a, b in zip(vals[:-1], vals[1:], strict=True)),
            "fraction_of_molecules_in_fidelity_order": round(sum(in_order) / len(rs), 4) if rs else None,
        }
    return out


def _num_basis_functions(symbols: list[str], basis: str) -> int:
    """Number of basis functions of a molecule (the cost driver), without a geometry."""
    from pyscf import gto

    per_element = {}
    for el in set(symbols):  # a homonuclear dimer always has an even electron count
        per_element[el] = gto.M(atom=f"{el} 0 0 0; {el} 0 0 1.5", basis=basis, verbose=0).nao // 2
    return sum(per_element[el] for el in symbols)


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
    ap.add_argument("--finalise", action="store_true",
                    help="compute nothing: re-tag and re-summarise the molecules already in --out")
    ap.add_argument("--stop-note", default=None,
                    help="with --finalise: record why the last run was stopped (cost.stopped_by)")
    args = ap.parse_args(argv)
    if args.finalise:
        from rdkit import Chem

        payload = _read_payload(args.out)
        for r in payload["molecules"]:
            r["conjugated"] = is_conjugated(r["smiles"])
        payload["summary"] = summarise(payload["molecules"])
        if args.stop_note is not None:
            seen = {r["name"] for r in payload["molecules"]} | {r["name"] for r in payload.get("skipped", [])}
            payload["cost"]["stopped_by"] = args.stop_note
            payload["cost"]["molecules_not_computed"] = sum(
                1 for name, smi in MOLECULES
                if name not in seen and Chem.MolFromSmiles(smi).GetNumHeavyAtoms() <= args.max_heavy_atoms
            )
        _atomic_write_json(args.out, payload)
        print(json.dumps(payload["summary"], indent=1), flush=True)
        return 0

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
            symbols = [a.GetSymbol() for a in Chem.AddHs(mol).GetAtoms()]
            todo.append((name, smi, mol.GetNumHeavyAtoms(), _num_basis_functions(symbols, args.basis)))
    # cheapest first (fewest basis functions, then fewest heavy atoms, then name): a budget
    # cut keeps the cheapest molecules
    todo.sort(key=lambda t: (t[3], t[2], t[0]))
    if args.max_molecules is not None:
        todo = todo[: args.max_molecules]

    records, skipped = [], []
    if args.resume and args.out.exists():
        previous = _read_payload(args.out)
        records, skipped = previous["molecules"], previous.get("skipped", [])
    prior_wall = 0.0
    if args.resume and args.out.exists():
        cost = previous.get("cost", {})
        prior_wall = float(cost.get("total_wall_s", cost.get("wall_s_this_run", 0.0)))
    for r in records:  # class tag, also for molecules computed by an earlier version of this script
        r["conjugated"] = is_conjugated(r["smiles"])
    done = {r["name"] for r in records} | {r["name"] for r in skipped}
    prior_cpu = sum(sum(f["cpu_s"] for f in r["fidelities"].values()) + r["geometry_cpu_s"] for r in records)
    stopped_by = None
    for name, smi, n_heavy, _ in todo:
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
            "geometry_cpu_s": round(geo_cpu, 4), "conjugated": is_conjugated(smi), "fidelities": fids,
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
                "total_wall_s": round(prior_wall + time.perf_counter() - wall_start, 1),
                "max_cpu_seconds": args.max_cpu_seconds,
                "stopped_by": None,
            },
            "summary": summarise(records),
            "skipped": skipped,
            "molecules": records,
        }
        _atomic_write_json(args.out, payload)
    if stopped_by is not None and args.out.exists():
        payload = _read_payload(args.out)
        payload["cost"].pop("stopped_by_cpu_budget", None)  # field of an earlier version
        payload["cost"]["stopped_by"] = stopped_by
        payload["cost"]["molecules_not_computed"] = len([t for t in todo if t[0] not in
                                                         {r["name"] for r in payload["molecules"]} | {r["name"] for r in payload["skipped"]}])
        _atomic_write_json(args.out, payload)
    print(f"{len(records)} molecules written to {args.out}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
