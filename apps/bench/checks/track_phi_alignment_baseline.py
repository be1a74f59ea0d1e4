"""Where is the Track label? In kNN edges that keep their azimuth (issue 29, learnability).

``track_local_density_baseline.py`` showed that the Track-Pileup signal is no clump on the
unit sphere but that the kNN graph holds the muon chains. A Z -> mu mu muon (pT ~ 45 GeV) is
nearly straight in the transverse plane: its hits keep their azimuth ``phi`` while their
polar angle ``theta`` changes (the vertex sits up to tens of mm from the origin along the
beam, so the unit directions of its hits spread in ``theta``); a pileup track (pT ~ 1 GeV)
bends, so its hits' ``phi`` drifts. This check counts, per event, the kNN edges (k = 5 on the
unit coordinates, as the backbones' graph; self loops left out) with ``|dphi| < a`` and
``|dtheta| > b``, and thresholds that one number on ``train`` (scored on ``iid_test`` /
``ood_test``; the count grows with pileup, so a PU10 threshold says nothing at PU50).

The point for the backbones: GeSS's edge features give the direction ``(p_j - p_i) / |p_j -
p_i|`` in the frame of the coordinates. Whether that direction is along ``theta`` or ``phi``
depends on where on the sphere the edge sits, which a backbone with constant point features
and translation-invariant messages is never told; ``edge_features="distance_direction_beam"``
(gs-models) writes the direction in the centre's ``(r, theta, phi)`` frame instead.

    python apps/bench/checks/track_gpu_job.py export --dataset track-pileup-pu50 \\
        --sizes 300,300,160,40,40,160 --out .gpu/pileup-ci.npz
    python apps/bench/checks/track_phi_alignment_baseline.py .gpu/pileup-ci.npz .gpu/signal-ci.npz

Committed output: ``measured/ci-gess/checks-phi-alignment.log``.
"""
import sys
from pathlib import Path

import numpy as np
from scipy.spatial import cKDTree

sys.path.insert(0, str(Path(__file__).resolve().parent))
from track_local_density_baseline import _unit, best_threshold  # noqa: E402

PARTS = ("train", "iid_test", "ood_test")
DPHI = (5e-4, 1e-3, 2e-3, 5e-3)
DTHETA = (0.0, 1e-3, 5e-3)


def features(z, part, k=5):
    pos, ptr, y = z[f"{part}_pos"], z[f"{part}_ptr"], z[f"{part}_y"]
    rows = []
    for e in range(len(y)):
        u = _unit(pos[ptr[e]:ptr[e + 1]].astype(np.float64))
        phi, theta = np.arctan2(u[:, 1], u[:, 0]), np.arccos(np.clip(u[:, 2], -1.0, 1.0))
        nn = cKDTree(u).query(u, k=k + 1)[1][:, 1:]
        dphi = np.abs((phi[nn] - phi[:, None] + np.pi) % (2 * np.pi) - np.pi)
        dtheta = np.abs(theta[nn] - theta[:, None])
        rows.append([len(u)] + [((dphi < a) & (dtheta > b)).sum() for a in DPHI for b in DTHETA])
    return np.array(rows, float), y.astype(int)


def main() -> None:
    for path in sys.argv[1:]:
        z = np.load(path)
        feats = {p: features(z, p) for p in PARTS}
        names = ["hit count"] + [f"edges |dphi| < {a}, |dtheta| > {b}" for a in DPHI for b in DTHETA]
        print(f"{path}: one threshold, fitted on train: accuracy train / iid_test / ood_test "
              f"(events {', '.join(f'{p} {len(feats[p][1])}' for p in PARTS)})")
        for j, name in enumerate(names):
            acc, t, s = best_threshold(feats["train"][0][:, j], feats["train"][1])
            scores = [float(((s * feats[p][0][:, j] >= s * t) == feats[p][1]).mean()) for p in PARTS[1:]]
            print(f"   {name:36s} {acc:.3f} {scores[0]:.3f} {scores[1]:.3f}")


if __name__ == "__main__":
    main()
