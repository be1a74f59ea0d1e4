"""Published values kept beside our results, with their provenance.

Each entry: (paper, table, dataset, setting..., metric) -> value in percent, as printed in the
paper (mean over the paper's seeds). Sources are the papers in ``../shared/papers`` of the
development checkout:

* SS = Bazhenov et al., "Evaluating robustness and uncertainty of graph models under structural
  distributional shifts" (structural-shifts.md): Table 1 (ERM drop / SE AUROC), Tables 9-10
  (OOD robustness on CoraML / CiteSeer, ID and OOD accuracy), Tables 16-17 (OOD detection AUROC),
  Tables 4 and 6 (Table 1 at the 70:30 and 90:10 ratios).
* EW = Hsu, Shen, Cremers, "What makes graph neural networks miscalibrated?" / edgewise
  calibration (edgewise-calibration.md), Table 1 (nodewise / edgewise / agree / disagree ECE),
  Table 3 (the same four accuracies) and Table 4 (EPFGNN with naive mean-field test-time
  inference: accuracies and ECEs). Means over 75 runs, in percent.
"""

from __future__ import annotations

__all__ = ["PUBLISHED", "published", "PROVENANCE"]

PROVENANCE = {
    "SS": "structural-shifts paper (Bazhenov et al.), ../shared/papers/structural-shifts.md",
    "EW": "edgewise-calibration paper (Hsu, Shen, Cremers), ../shared/papers/edgewise-calibration.md",
}

_SHIFTS = ("popularity", "locality", "density")

# Tables 9 (CoraML) and 10 (CiteSeer): method -> (pop ID, pop OOD, loc ID, loc OOD, den ID, den OOD)
_SS_ACC = {
    ("cora-ml", "Table 9"): {
        "erm": (85.80, 82.42, 84.47, 72.13, 93.27, 77.33),
        "mixup": (89.27, 83.65, 86.27, 78.42, 88.20, 78.98),
        "eerm": (88.40, 83.07, 88.80, 69.96, 86.87, 79.07),
        "dann": (86.00, 79.01, 81.45, 65.03, 91.33, 78.37),
        "coral": (85.00, 77.65, 82.33, 66.83, 89.55, 73.34),
        "de": (87.00, 82.74, 84.67, 75.40, 93.00, 78.90),
        "erm+mod": (85.33, 82.55, 84.87, 72.59, 94.13, 79.33),
    },
    ("citeseer", "Table 10"): {
        "erm": (72.43, 72.42, 77.60, 57.03, 73.75, 67.57),
        "mixup": (72.79, 72.13, 76.82, 56.45, 76.88, 68.59),
        "eerm": (71.47, 70.48, 75.31, 61.95, 76.46, 68.18),
        "dann": (67.57, 67.84, 71.17, 54.90, 75.07, 61.13),
        "coral": (67.87, 67.77, 71.87, 57.16, 73.47, 58.53),
        "de": (73.27, 72.37, 78.38, 64.71, 74.17, 70.35),
        "erm+mod": (73.75, 71.73, 76.70, 59.86, 75.80, 68.32),
    },
}
# Tables 16 (CoraML) and 17 (CiteSeer): method -> OOD-detection AUROC (pop, loc, den)
_SS_AUROC = {
    ("cora-ml", "Table 16"): {
        "se": (75.67, 87.13, 81.55),
        "natpn": (47.31, 81.66, 69.05),
        "gpn": (66.95, 73.09, 70.95),
        "de": (70.55, 93.32, 84.46),
        "natpe": (37.59, 78.48, 65.83),
        "gpe": (65.67, 74.23, 71.07),
        "se+mod": (55.66, 72.97, 68.27),
    },
    ("citeseer", "Table 17"): {
        "se": (68.01, 89.89, 66.90),
        "natpn": (31.18, 91.96, 59.77),
        "gpn": (61.99, 69.53, 57.41),
        "de": (56.22, 98.18, 70.48),
        "natpe": (28.07, 89.02, 58.10),
        "gpe": (63.01, 73.89, 57.94),
        "se+mod": (54.36, 78.74, 61.03),
    },
}
# Tables 1 (50:50), 4 (70:30) and 6 (90:10): ERM relative accuracy drop (%) and SE AUROC per
# shift (popularity, locality, density). The right halves of Tables 4 and 6 list the datasets
# in another order than the left halves; the values below are matched by dataset name.
_SS_TABLE1 = {
    ("50:50", "Table 1"): {
        "amazon-computer": ((-10.01, -21.95, -7.91), (88.52, 86.48, 44.24)),
        "amazon-photo": ((-8.54, -30.93, -3.58), (92.05, 93.29, 41.08)),
        "coauthor-cs": ((-3.13, -1.22, -4.86), (83.25, 85.74, 50.91)),
        "coauthor-physics": ((-3.42, -4.75, -1.41), (86.60, 87.73, 37.50)),
        "cora-ml": ((-3.94, -14.61, -17.09), (75.67, 87.13, 81.55)),
        "citeseer": ((-0.02, -26.51, -8.39), (68.01, 89.89, 66.90)),
        "pubmed": ((-3.23, -5.71, -0.78), (68.60, 66.34, 58.60)),
    },
    ("70:30", "Table 4"): {
        "amazon-computer": ((-3.80, -12.66, -14.04), (87.83, 85.77, 50.46)),
        "amazon-photo": ((-7.19, -3.03, -6.79), (91.80, 85.78, 47.27)),
        "coauthor-cs": ((-6.51, -1.89, -6.64), (83.68, 81.13, 63.24)),
        "coauthor-physics": ((-2.58, -5.50, -2.47), (86.70, 82.06, 39.68)),
        "cora-ml": ((-7.56, -13.63, -9.49), (82.06, 84.63, 76.82)),
        "citeseer": ((3.24, 2.50, -4.13), (70.56, 64.55, 58.04)),
        "pubmed": ((0.46, -0.67, -1.76), (66.64, 63.34, 55.79)),
    },
    ("90:10", "Table 6"): {
        "amazon-computer": ((-8.45, -7.79, -30.98), (83.42, 76.53, 68.97)),
        "amazon-photo": ((-8.00, 0.12, -16.35), (89.01, 82.57, 64.41)),
        "coauthor-cs": ((-9.79, -4.42, -7.76), (83.22, 76.02, 70.63)),
        "coauthor-physics": ((-3.77, -4.91, -5.32), (84.68, 78.60, 52.97)),
        "cora-ml": ((-16.10, 5.52, -8.03), (79.36, 69.64, 69.78)),
        "citeseer": ((-5.14, 1.35, 1.86), (75.90, 65.11, 55.48)),
        "pubmed": ((3.33, 4.70, -2.63), (61.05, 57.14, 55.11)),
    },
}
# Edgewise paper, Table 1: (dataset, model) -> (nodewise, edgewise, agree, disagree) ECE in %
_EW_ECE = {
    ("planetoid-cora", "gcn"): (12.47, 16.64, 24.18, 17.87),
    ("planetoid-cora", "gat"): (15.27, 25.37, 33.11, 13.60),
    ("planetoid-cora", "gmnn"): (4.05, 4.07, 9.96, 30.78),
    ("planetoid-cora", "epfgnn"): (7.24, 8.66, 15.21, 25.55),
    ("planetoid-citeseer", "gcn"): (11.34, 16.96, 34.45, 29.80),
    ("planetoid-citeseer", "gat"): (16.40, 27.63, 46.70, 23.14),
    ("planetoid-citeseer", "gmnn"): (7.97, 9.21, 11.16, 54.95),
    ("planetoid-citeseer", "epfgnn"): (8.05, 11.07, 18.91, 43.95),
    ("planetoid-pubmed", "gcn"): (7.16, 3.34, 12.64, 38.28),
    ("planetoid-pubmed", "gat"): (10.58, 18.60, 29.66, 28.18),
    ("planetoid-pubmed", "gmnn"): (4.24, 10.78, 2.62, 62.34),
    ("planetoid-pubmed", "epfgnn"): (4.84, 3.12, 10.23, 44.75),
}

# Edgewise paper, Table 3: (dataset, model) -> (nodewise, edgewise, agree, disagree) accuracy in %
_EW_ACC = {
    ("planetoid-cora", "gcn"): (82.86, 75.01, 87.28, 23.93),
    ("planetoid-cora", "gat"): (83.71, 75.80, 88.40, 23.33),
    ("planetoid-cora", "gmnn"): (82.73, 75.46, 88.33, 21.92),
    ("planetoid-cora", "epfgnn"): (76.48, 65.07, 76.32, 18.25),
    ("planetoid-citeseer", "gcn"): (72.06, 65.10, 87.15, 6.59),
    ("planetoid-citeseer", "gat"): (72.04, 64.96, 87.59, 4.92),
    ("planetoid-citeseer", "gmnn"): (70.81, 64.49, 87.19, 4.27),
    ("planetoid-citeseer", "epfgnn"): (69.13, 61.20, 82.45, 4.81),
    ("planetoid-pubmed", "gcn"): (86.43, 79.07, 92.98, 22.08),
    ("planetoid-pubmed", "gat"): (85.12, 78.38, 93.01, 18.47),
    ("planetoid-pubmed", "gmnn"): (84.23, 77.70, 92.82, 15.75),
    ("planetoid-pubmed", "epfgnn"): (82.51, 74.35, 88.40, 16.81),
}
# Edgewise paper, Table 4 (EPFGNN, naive mean field at test time): dataset -> (acc x4, ECE x4)
_EW_EPF_MF = {
    "planetoid-cora": ((79.74, 70.02, 82.21, 19.30), (9.16, 12.53, 20.03, 24.07)),
    "planetoid-citeseer": ((71.77, 64.85, 87.56, 4.58), (8.42, 12.32, 22.53, 44.61)),
    "planetoid-pubmed": ((84.74, 76.76, 91.27, 17.31), (6.13, 3.66, 11.26, 44.97)),
}
EW_ECE_METRICS = ("nodewise_ece", "edgewise_ece", "agree_ece", "disagree_ece")
EW_ACC_METRICS = ("node_acc", "edge_acc", "agree_acc", "disagree_acc")


def _build() -> dict[tuple, tuple[float, str]]:
    table: dict[tuple, tuple[float, str]] = {}
    for (dataset, where), methods in _SS_ACC.items():
        for method, vals in methods.items():
            for i, shift in enumerate(_SHIFTS):
                table[("structural-shifts", dataset, shift, method, "id_acc")] = (vals[2 * i], f"SS {where}")
                table[("structural-shifts", dataset, shift, method, "ood_acc")] = (vals[2 * i + 1], f"SS {where}")
    for (dataset, where), methods in _SS_AUROC.items():
        for method, vals in methods.items():
            for i, shift in enumerate(_SHIFTS):
                table[("structural-shifts", dataset, shift, method, "ood_auroc")] = (vals[i], f"SS {where}")
    for (ratio, where), datasets in _SS_TABLE1.items():
        for dataset, (drops, aurocs) in datasets.items():
            for i, shift in enumerate(_SHIFTS):
                table[("structural-shifts", dataset, ratio, shift, "erm", "drop")] = (drops[i], f"SS {where}")
                table[("structural-shifts", dataset, ratio, shift, "se", "ood_auroc")] = (aurocs[i], f"SS {where}")
    for (dataset, model), vals in _EW_ECE.items():
        for metric, v in zip(EW_ECE_METRICS, vals, strict=True):
            table[("edgewise", dataset, model, metric)] = (v, "EW Table 1")
    for (dataset, model), vals in _EW_ACC.items():
        for metric, v in zip(EW_ACC_METRICS, vals, strict=True):
            table[("edgewise", dataset, model, metric)] = (v, "EW Table 3")
    for dataset, (accs, eces) in _EW_EPF_MF.items():
        for metric, v in zip(EW_ACC_METRICS + EW_ECE_METRICS, accs + eces, strict=True):
            table[("edgewise", dataset, "epfgnn-mean-field", metric)] = (v, "EW Table 4")
    return table


PUBLISHED = _build()


def published(*key: str) -> tuple[float, str] | None:
    """The published value (percent) and its source for ``key``, or None if there is none."""
    return PUBLISHED.get(tuple(key))
