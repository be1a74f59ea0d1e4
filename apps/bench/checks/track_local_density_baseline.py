"""Is the Track-Pileup signal a local clump on the unit sphere? (issue 29, learnability)

GeSS's backbones see each hit's direction only (``CoorsNorm``: unit coordinates) and a kNN
graph (k = 5). If the Z -> mu mu muons' hits, nearly straight, stood out as tight clumps of
directions, a count of hits with close neighbours would separate the classes, and a backbone
stuck at the hit-count accuracy would be failing at something local and easy. This check
measures, on an exported ci dataset (``checks/track_gpu_job.py export``):

1. single-threshold classifiers (fitted on ``train``, scored on ``iid_test`` / ``ood_test``)
   on the hit count and on counts of hits with at least m of their 8 nearest neighbours within
   a distance t on the unit sphere;
2. on the event cache's Z -> mu mu sample (its per-hit labels): the nearest-neighbour distance
   of signal hits against the others, and how many of a signal hit's 5 nearest neighbours
   belong to the same particle (does the kNN graph hold the muon chains?).

    python apps/bench/checks/track_local_density_baseline.py .gpu/pileup-ci.npz \\
        ~/.cache/gs/track/zmumu-pu10-seed0-11f123c21403/pack-300.npz

Committed output: ``measured/ci-gess/checks-local-density.log``.
"""
import sys

import numpy as np
from scipy.spatial import cKDTree

PARTS = ("train", "iid_test", "ood_test")
DISTANCES = (1e-3, 3e-3, 1e-2, 3e-2)
COUNTS = (1, 2, 4, 6, 8)


def _unit(p):
    return p / np.linalg.norm(p, axis=1, keepdims=True)


def features(z, part):
    pos, ptr, y = z[f"{part}_pos"], z[f"{part}_ptr"], z[f"{part}_y"]
    rows = []
    for e in range(len(y)):
        d, _ = cKDTree(_unit(pos[ptr[e]:ptr[e + 1]].astype(np.float64))).query(
            _unit(pos[ptr[e]:ptr[e + 1]].astype(np.float64)), k=9)
        close = [(d[:, 1:] < t).sum(1) for t in DISTANCES]
        rows.append([len(d)] + [(c >= m).sum() for c in close for m in COUNTS])
    return np.array(rows, float), y.astype(int)


def best_threshold(x, y):
    best = (0.0, 0.0, 1)
    for t in np.unique(x):
        for sign in (1, -1):
            acc = float(((sign * x >= sign * t) == y).mean())
            if acc > best[0]:
                best = (acc, t, sign)
    return best


def main() -> None:
    z = np.load(sys.argv[1])
    feats = {p: features(z, p) for p in PARTS}
    names = ["hit count"] + [f"hits with >= {m} of 8 NN within {t}" for t in DISTANCES for m in COUNTS]
    print("1. one threshold, fitted on train: accuracy train / iid_test / ood_test")
    for j, name in enumerate(names):
        acc, t, s = best_threshold(feats["train"][0][:, j], feats["train"][1])
        scores = [float(((s * feats[p][0][:, j] >= s * t) == feats[p][1]).mean()) for p in PARTS[1:]]
        print(f"   {name:36s} {acc:.3f} {scores[0]:.3f} {scores[1]:.3f}")
    if len(sys.argv) > 2:
        c = np.load(sys.argv[2])
        ptr, lab, pid = c["hit_ptr"], c["hit_node_label"], c["hit_particle_id"]
        pos = np.stack([c["hit_tx"], c["hit_ty"], c["hit_tz"]], 1).astype(np.float64)
        sig, other, same = [], [], []
        for e in range(min(100, len(ptr) - 1)):
            a, b = ptr[e], ptr[e + 1]
            d, i = cKDTree(_unit(pos[a:b])).query(_unit(pos[a:b]), k=6)
            is_sig = lab[a:b] == 1
            sig.append(d[is_sig, 1])
            other.append(d[~is_sig, 1])
            p = pid[a:b]
            same.append((p[i[is_sig, 1:]] == p[is_sig, None]).mean())
        q = (10, 25, 50, 75, 90)
        print(f"2. {sys.argv[2]}: {min(100, len(ptr) - 1)} events")
        print(f"   nearest-neighbour distance, signal hits, quantiles {q}: "
              f"{np.percentile(np.concatenate(sig), q).round(4).tolist()}")
        print(f"   nearest-neighbour distance, other hits:  {np.percentile(np.concatenate(other), q).round(4).tolist()}")
        print(f"   share of a signal hit's 5 nearest neighbours on the same particle: {np.mean(same):.3f}")


if __name__ == "__main__":
    main()
