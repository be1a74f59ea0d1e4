"""Do the batch-norm statistics of the source (PU10) cost the Track ERM models their Test-OOD?
(issue 53, candidate "batch-norm statistics taken at PU10 and applied at PU50")

    python apps/bench/checks/track_bn_at_target.py RUN_FOLDER [--dataset track-pileup-pu50]
        [--backbone egnn] [--seeds 0 1 2]

Every gess evaluation uses batch-norm statistics recomputed from 1,024 training events under
the current weights (``norm_stats_graphs``); at PU50 an event carries about 4.7 times the hits
of a PU10 event, and sum pooling feeds the head a sum over 4.7 times the points, so the head's
batch norm sees inputs far from the statistics it normalises with. This check rebuilds each
seed's stored ERM model (the best Val-ID epoch, ``_track_model.py``) and scores Test-ID and
Test-OOD three ways, changing nothing but the statistics:

* ``stored``: the statistics the record was scored with (source training events);
* ``source again``: recomputed here as the engine does (its fixed random subset of 1,024
  training events, in batches of the training batch size): must reproduce ``stored``, the
  control that the rebuild is faithful;
* ``target``: recomputed the same way from the Val-OOD events (features only, their labels
  unused; a test-time adaptation, not GeSS's protocol nor ours).

If ``target`` lifts Test-OOD toward GeSS's (87.65 Pileup, 65.98 Signal) while Test-ID holds,
the source statistics are a cause of the OOD loss; if it does not, they are not. The first
layers' statistics and the head's move together here; which layer matters is not separated.
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import numpy as np

GESS = {"track-pileup-pu50": 87.65, "track-signal-tau3mu": 65.98}


def _accuracy(model, graphs) -> float:
    from gs_algos.engine import predict_graph

    _, out = predict_graph(model, graphs, None, 256)
    pred = (out.reshape(-1) > 0).numpy().astype(int)
    y = np.array([int(g.y.reshape(-1)[0]) for g in graphs])
    return 100.0 * float((pred == y).mean())


def _stats_subset(graphs: list, n: int, seed: int) -> list:
    """The engine's fixed random subset of ``n`` graphs for its batch-norm statistics
    (gs-algos' ``TrainConfig.norm_stats_graphs`` rule, restated here: the ``source again`` row,
    which must reproduce the record, checks that the two agree)."""
    import torch

    if len(graphs) <= n:
        return graphs
    gen = torch.Generator().manual_seed(seed * 7_919 + 17)
    return [graphs[int(i)] for i in torch.randperm(len(graphs), generator=gen)[:n].sort().values]


def one_seed(run: Path, dataset: str, backbone: str, seed: int) -> dict | None:
    import torch

    from gs_algos.engine import recompute_norm_stats

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _track_model import load_erm

    m = load_erm(run, dataset, backbone, seed)
    if m is None:
        return None
    torch.set_num_threads(1)
    dev = torch.device("cpu")
    rows = {}
    n, seed_ = int(m.config.norm_stats_graphs), int(m.config.seed)
    for name, stats in (("stored", None), ("source again", _stats_subset(m.parts["train"], n, seed_)),
                        ("target (Val-OOD features)", _stats_subset(m.parts["ood_val"], n, seed_))):
        model = copy.deepcopy(m.model)
        if stats is not None:
            recompute_norm_stats(model, None, stats, m.batch_size, dev)
        rows[name] = (_accuracy(model, m.parts["iid_test"]), _accuracy(model, m.parts["ood_test"]))
    rec = m.record["metrics"]
    print(f"\n{dataset} / {backbone} / seed {seed}: ERM model of epoch {m.epoch} (best Val-ID), record "
          f"{m.record['job']['key']}: Test-ID {100 * rec['id_sel_test_id']:.2f}, Test-OOD at this epoch "
          f"{100 * rec['id_sel_test_ood']:.2f}; {len(m.parts['iid_test'])} Test-ID, {len(m.parts['ood_test'])} "
          f"Test-OOD events; statistics over batches of {m.batch_size}")
    print("  batch-norm statistics from | Test-ID % | Test-OOD %")
    for name, (i, o) in rows.items():
        print(f"  {name} | {i:.2f} | {o:.2f}")
    return {"seed": seed, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("--dataset", default="track-pileup-pu50", choices=sorted(GESS))
    ap.add_argument("--backbone", default="egnn")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    a = ap.parse_args(argv)
    done = [r for s in a.seeds if (r := one_seed(a.run, a.dataset, a.backbone, s)) is not None]
    if not done:
        return 2
    print(f"\nmean over seeds {[r['seed'] for r in done]} (sd across seeds where 2 or more); GeSS ERM "
          f"Test-OOD {GESS[a.dataset]}")
    for name in done[0]["rows"]:
        v = np.array([r["rows"][name] for r in done])
        sd = v.std(axis=0, ddof=1) if len(done) > 1 else np.zeros(2)
        print(f"  {name}: Test-ID {v[:, 0].mean():.2f} +- {sd[0]:.2f}, Test-OOD {v[:, 1].mean():.2f} +- {sd[1]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
