"""Diagnostic check (not part of the package): how far a classifier that sees only the number of
hits of an event gets on the Track cases of the gess ``ci`` profile.

Why: in the measured ``ci`` run (apps/bench/measured/ci-gess) the EGNN, trained 8 epochs on a
few hundred simulated events, reaches Test-ID accuracies close to this baseline. A signal event
of our simulation carries more hits than a background event at the same pileup, so the hit
count alone separates the classes in distribution. Under the pileup shift it fails by
construction: every PU50 event has more hits than any PU10 event, so a hit-count rule calls
every target event a signal (accuracy 50 % on balanced parts). What GeSS's findings rest on
(track curvature for the signal shift, conclusion 1) is beyond this baseline.

The classifier is a threshold on the hit count, fitted on ``train`` (the threshold and the side
with the best training accuracy: ``gs_metrics.fit_threshold_classifier``, the rule of the
"hit-count threshold" row of the gess report); the AUROC of the raw hit count
(``gs_metrics.auroc``) is printed beside it (no fitting). Same data and splits as the runner
(gs_bench.runners.gess, ``track_sizes``; events from the Track cache, simulated only where
PYTHIA 8 + ACTS are installed).

    python apps/bench/checks/track_hit_count_baseline.py [--sizes ci] [--records DIR]

``--records`` (default: the committed measured run) prints the run's ERM / DANN ID-selected
Test-ID / Test-OOD next to the baseline.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

CASES = ("track-pileup-pu50", "track-signal-tau3mu")
PARTS = ("train", "iid_val", "iid_test", "ood_val", "ood_test")
HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="ci", help="track_sizes of the runner (demo, ci, paper)")
    ap.add_argument("--records", type=Path, default=HERE.parent / "measured" / "ci-gess",
                    help="a run folder with results.jsonl or results/*.json to print beside")
    args = ap.parse_args(argv)
    import gs_metrics as gm
    from gs_bench.runners import gess

    recs = []
    if (args.records / "results.jsonl").exists():
        recs = [json.loads(line) for line in (args.records / "results.jsonl").read_text().splitlines() if line]
    elif (args.records / "results").is_dir():
        recs = [json.loads(p.read_text()) for p in sorted((args.records / "results").glob("*.json"))]
    for name in CASES:
        ds = gess._dataset(name, {"track_sizes": args.sizes}, "no-info")
        hits = ds.num_hits().astype(np.float64)
        masks, y = ds.split.masks, np.asarray(ds.y)
        rule = gm.fit_threshold_classifier(hits[masks["train"]], y[masks["train"]])
        print(f"{name} (sizes {args.sizes}): threshold {rule.threshold:.0f} hits, "
              f"signal {'above' if rule.side else 'below'}")
        for part in PARTS:
            m = masks[part]
            print(f"  {part:9s} n={int(m.sum()):4d}  hit-count accuracy {100 * rule.accuracy(hits[m], y[m]):6.2f}  "
                  f"AUROC {100 * gm.auroc(hits[m], y[m]):6.2f}  mean hits signal / background "
                  f"{hits[m & (y == 1)].mean():7.1f} / {hits[m & (y == 0)].mean():7.1f}")
        for r in recs:
            p = r["job"]["params"]
            if p["dataset"] == name and r.get("status") == "ok":
                m = r["metrics"]
                print(f"  run: {p['algorithm']:7s} ID-sel Test-ID {100 * m['id_sel_test_id']:6.2f}  "
                      f"Test-OOD {100 * m['id_sel_test_ood']:6.2f}  (OOD-sel Test-OOD {100 * m['ood_sel_test_ood']:6.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
