"""Diagnostic check (not part of the package): the signs of the LeBed baselines (issue 30).

On ACMv9 every baseline's rho has the opposite sign to the paper's; on Cora they agree. This
check runs the authors' score functions, re-implemented line for line from Amanda-Zheng/LEBED
``LEBED-cora-amz/ATC_helper.py`` (the only baseline code in their repository; no script of
theirs imports it), on OUR predictions: the GCN of the ``ci`` records, pre-trained exactly as
``gs_bench.runners.lebed.run_job`` does, on the ACMv9 -> ACMv9 / Citationv1 / DBLPv7 domain
shift and on the Cora feature shift. For every baseline it prints

* ``theirs``: Spearman rho of the authors' score against the true error, computed as their
  evaluators compute LeBed's (``scipy.stats.spearmanr(all_err_np, score)``,
  ``evaluator_lebed_domain.py:142``, ``evaluator_lebed_cora-amz.py:209``);
* ``ours``: our rho (``gs_metrics`` score functions, orientation-corrected with the runner's
  ``ORIENT``, as the report prints it);
* ``paper``: the value printed in Table 2 / 3, and converted to our convention with
  ``gs_bench.published.LEBED_SIGN`` (what the report shows beside ours);

then, for ACMv9, the same rho within each domain and perturbation, the per-domain means, and
rho on a set composed as the authors' (their ``load_data_path`` modes 1-4: 41 source graphs
and 328 target-domain graphs out of 369, ``evaluator_lebed_domain.py:23-62``).

    OMP_NUM_THREADS=1 python apps/bench/checks/lebed_baseline_signs.py [--domain-graphs 3 30]

Run from the repository root with GS_SHARED_DATA set. Inference only (no LeBed re-training):
two pre-trainings and a few hundred forward passes, a few CPU minutes. Its output is committed
next to it as ``lebed_baseline_signs.log``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch
from scipy.stats import spearmanr

MEASURED = Path(__file__).resolve().parents[1] / "measured" / "ci-lebed" / "results.jsonl"
#: the committed run's settings (its pre-training among them), which the predictions follow
RUN_FILE = MEASURED.with_name("run-lebed.json")
LABEL = {"conf": "ConfScore", "entropy": "Entropy", "atc_mc": "ATC-MC", "atc_ne": "ATC-NE",
         "thr_0.7": "Thres. 0.7", "thr_0.8": "Thres. 0.8", "thr_0.9": "Thres. 0.9"}


# ---- the authors' functions, LEBED-cora-amz/ATC_helper.py (line numbers of that file)
def get_entropy(probs):  # :3-4 -- sum p log p: the NEGATIVE entropy
    return np.sum(np.multiply(probs, np.log(probs + 1e-20)), axis=1)


def get_max_conf(probs):  # :6-7
    return np.max(probs, axis=-1)


def find_ATC_threshold(scores, labels):  # :9-29 (labels: 1 = correctly classified)
    sorted_idx = np.argsort(scores)
    sorted_scores = scores[sorted_idx]
    sorted_labels = labels[sorted_idx]
    fp = np.sum(labels == 0)
    fn = 0.0
    min_fp_fn = np.abs(fp - fn)
    thres = 0.0
    for i in range(len(labels)):
        if sorted_labels[i] == 0:
            fp -= 1
        else:
            fn += 1
        if np.abs(fp - fn) < min_fp_fn:
            min_fp_fn = np.abs(fp - fn)
            thres = sorted_scores[i]
    return min_fp_fn, thres


def get_ATC_acc(thres, scores):  # :32-33 -- an estimated ACCURACY
    return np.mean(scores >= thres)


def authors_scores(p, thr_mc, thr_ne):
    """Per test graph, the authors' functions as the paper's eq. 9-13 use them. ConfScore and
    Entropy: the node mean of get_max_conf / get_entropy (eq. 9-10); ATC: get_ATC_acc (their
    helper returns the estimated accuracy; eq. 11 prints the error, so both are listed);
    Threshold: not in their code, eq. 13 (estimated error) taken as written."""
    mc, ne = get_max_conf(p), get_entropy(p)
    out = {"conf": float(mc.mean()), "entropy": float(ne.mean()),
           "atc_mc": float(get_ATC_acc(thr_mc, mc)), "atc_ne": float(get_ATC_acc(thr_ne, ne))}
    for tau in (0.7, 0.8, 0.9):
        out[f"thr_{tau}"] = float(1.0 - np.mean(mc > tau))
    return out


def our_predictions(dataset: str, shift: str, settings: dict, indices=None):
    """Pre-training and per-graph outputs exactly as gs_bench.runners.lebed.run_job (its
    ``pretrained``, under the committed run's settings, seed 0), without the LeBed re-training."""
    from gs_algos.engine import predict_node
    from gs_bench.runners.lebed import Settings
    from gs_bench.runners.lebed.job import pretrained
    from gs_metrics import atc_score, conf_score, entropy_score, fit_atc_threshold, threshold_score

    params = {"dataset": dataset, "shift": shift, "model": "gcn"}
    pre = pretrained(params, Settings.from_mapping(settings), 0, "cpu")
    graphs, model, valid_g, va = pre.graphs, pre.model, pre.valid_g, pre.valid_mask

    def probs(g):
        _, logits = predict_node(model, g)
        return torch.softmax(logits.double(), -1).numpy()

    pv = probs(valid_g)[va.numpy()]
    yv = valid_g.y.numpy()[va.numpy()]
    ours_thr = {k: fit_atc_threshold(pv, yv, k) for k in ("mc", "ne")}
    correct_v = (pv.argmax(1) == yv).astype(int)
    their_thr = {"mc": find_ATC_threshold(get_max_conf(pv), correct_v)[1],
                 "ne": find_ATC_threshold(get_entropy(pv), correct_v)[1]}
    rows = []
    for i in (range(len(graphs)) if indices is None else indices):
        g = graphs[i]
        p = probs(g)
        m = g.eval_mask.numpy() if getattr(g, "eval_mask", None) is not None else np.ones(len(p), bool)
        p, y = p[m], g.y.numpy()[m]
        ours = {"conf": conf_score(p), "entropy": entropy_score(p),
                "atc_mc": atc_score(p, ours_thr["mc"], "mc"), "atc_ne": atc_score(p, ours_thr["ne"], "ne")}
        for tau in (0.7, 0.8, 0.9):
            ours[f"thr_{tau}"] = threshold_score(p, tau)
        rows.append({"index": i, "error": float((p.argmax(1) != y).mean()), "ours": ours,
                     "theirs": authors_scores(p, their_thr["mc"], their_thr["ne"]),
                     "perturbation": str(g.perturbation),
                     "group": str(getattr(g, "domain_name", getattr(g, "environment", "")))})
    return rows, ours_thr, their_thr


def rho(x, y) -> float:
    return float(spearmanr(x, y).statistic) if len(x) >= 3 else float("nan")


def table(rows, fam, title):
    from gs_bench.published import LEBED_SIGN, lebed_published
    from gs_bench.runners.lebed import ORIENT

    err = [r["error"] for r in rows]
    print(f"\n{title} ({len(rows)} test graphs)")
    print("estimator | theirs: rho(err, their score) | ours: rho(ORIENT*our score, err) | "
          "paper as printed | paper x LEBED_SIGN (the report) | sign(ours) == sign(paper converted)")
    for k, lab in LABEL.items():
        t = rho(err, [r["theirs"][k] for r in rows])
        o = rho([ORIENT[k] * r["ours"][k] for r in rows], err)
        pub = lebed_published(fam, "gcn", k)
        printed = pub[0] * LEBED_SIGN[k] if pub else float("nan")
        conv = pub[0] if pub else float("nan")
        extra = " (their helper: estimated accuracy; as eq. 11's error: %+.2f)" % -t if k.startswith("atc") else ""
        print(f"{lab} | {t:+.2f}{extra} | {o:+.2f} | {printed:+.2f} | {conv:+.2f} | {np.sign(o) == np.sign(conv)}")


def paper_sign_pattern() -> None:
    """Which way the paper's columns point, from the printed values alone (Tables 2-4, all 30
    (dataset, model) cells, as read from gs_bench.published's table file): a column computed from a
    confidence (ConfScore, negative entropy, ATC's estimated accuracy) and one computed from an
    uncertainty or an estimated error (entropy, ATC's or the threshold method's error) have
    opposite signs in every cell where the baselines correlate at all."""
    from gs_bench.published import lebed_rho_table

    rho = lebed_rho_table()  # (family, method) -> rho as printed, for these models:
    models = ("gcn", "gat", "sage", "gin", "mlp")
    cells = [(f, j) for f in dict.fromkeys(f for f, _ in rho) for j in range(len(models))]

    def agree(a, b, sign):
        return sum(np.sign(rho[(f, a)][j]) == sign * np.sign(rho[(f, b)][j]) for f, j in cells)

    big = [(f, j) for f, j in cells if abs(rho[(f, "conf")][j]) > 0.1]
    print(f"Paper, {len(cells)} cells of Tables 2-4: sign(Entropy) == sign(ConfScore) in "
          f"{agree('entropy', 'conf', 1)}; sign(ATC-MC) == -sign(ConfScore) in {agree('atc_mc', 'conf', -1)}; "
          f"sign(ATC-NE) == -sign(ConfScore) in {agree('atc_ne', 'conf', -1)}; sign(Thres. 0.9) == "
          f"-sign(ConfScore) in {agree('thr_0.9', 'conf', -1)}; the exceptions: "
          + "; ".join(f"{f} {models[j]} ConfScore {rho[(f, 'conf')][j]:+.2f} Entropy "
                      f"{rho[(f, 'entropy')][j]:+.2f} ATC-MC {rho[(f, 'atc_mc')][j]:+.2f}"
                      for f, j in cells if (f, j) not in big and (
                          np.sign(rho[(f, 'entropy')][j]) != np.sign(rho[(f, 'conf')][j])
                          or np.sign(rho[(f, 'atc_mc')][j]) != -np.sign(rho[(f, 'conf')][j])))
          + f" (all with |ConfScore rho| <= 0.1; {len(cells) - len(big)} such cells)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--domain-graphs", type=int, nargs="+", default=[3, 30],
                    help="graphs per domain and perturbation (3: the ci records; 30: the paper profile)")
    ap.add_argument("--cora-graphs", type=int, default=320)
    args = ap.parse_args()
    torch.set_num_threads(1)
    recs = [json.loads(line) for line in MEASURED.read_text().splitlines()]
    settings = json.loads(RUN_FILE.read_text())["settings"]
    paper_sign_pattern()

    # ---- Cora feature shift, GCN (the control: there the paper's signs and ours agree)
    idx = sorted({int(round(v)) for v in np.linspace(0, 319, args.cora_graphs)})
    rows, ot, tt = our_predictions("planetoid-cora", "feature", settings, idx)
    check_records(rows, recs, "planetoid-cora", "gcn")
    print(f"Cora thresholds (mc, ne): ours {ot['mc']:.4f}, {ot['ne']:.4f}; theirs {tt['mc']:.4f}, {tt['ne']:.4f}")
    same_functions(rows)
    table(rows, "cora", "Cora feature shift, GCN")

    for n in args.domain_graphs:
        rows, ot, tt = our_predictions("acmv9", "domain", {**settings, "domain_graphs": n})
        if n == 3:
            check_records(rows, recs, "acmv9", "gcn")
        print(f"\nACMv9 thresholds (mc, ne): ours {ot['mc']:.4f}, {ot['ne']:.4f}; theirs {tt['mc']:.4f}, {tt['ne']:.4f}")
        same_functions(rows)
        table(rows, "acm", f"ACMv9 -> ACMv9 / Citationv1 / DBLPv7, GCN, {n} graphs per domain and perturbation")
        breakdown(rows)
        if n >= 10:
            authors_mix(rows)


def check_records(rows, recs, dataset, model):
    """Our recomputed errors and scores against the committed ci records of the same graphs."""
    rec = {}
    for r in recs:
        p = r["job"]["params"]
        if p["dataset"] == dataset and p["model"] == model:
            m = r["metrics"]
            for j, i in enumerate(m["test_graph_indices"]):
                rec[i] = (m["errors"][j], m["scores"]["conf"][j], m["scores"]["atc_mc"][j])
    hit = [r for r in rows if r["index"] in rec]
    d = max((abs(r["error"] - rec[r["index"]][0]) + abs(r["ours"]["conf"] - rec[r["index"]][1])
             + abs(r["ours"]["atc_mc"] - rec[r["index"]][2]) for r in hit), default=float("nan"))
    print(f"{dataset}: {len(hit)} test graphs also in measured/ci-lebed; largest |difference| in "
          f"(error, ConfScore, ATC-MC) summed: {d:.2e}")


def same_functions(rows):
    """How the authors' functions relate to ours on the same predictions."""
    d_conf = max(abs(r["theirs"]["conf"] - r["ours"]["conf"]) for r in rows)
    d_ent = max(abs(r["theirs"]["entropy"] + r["ours"]["entropy"]) for r in rows)
    d_mc = max(abs(r["theirs"]["atc_mc"] - (1 - r["ours"]["atc_mc"])) for r in rows)
    d_ne = max(abs(r["theirs"]["atc_ne"] - (1 - r["ours"]["atc_ne"])) for r in rows)
    print(f"max |their ConfScore - ours| = {d_conf:.1e}; max |their Entropy + our entropy| = {d_ent:.1e} "
          f"(theirs is the negative entropy); max |their ATC accuracy - (1 - our ATC error)|: "
          f"MC {d_mc:.1e}, NE {d_ne:.1e}")


def breakdown(rows):
    err = np.array([r["error"] for r in rows])
    conf = np.array([r["ours"]["conf"] for r in rows])
    print("ACMv9 breakdown: rho(err, their ConfScore) [raw, as the paper prints] within each group")
    for key in ("group", "perturbation"):
        for v in dict.fromkeys(r[key] for r in rows):
            sel = np.array([r[key] == v for r in rows])
            print(f"  {key} {v}: n {sel.sum()}, mean error {err[sel].mean():.3f}, mean ConfScore "
                  f"{conf[sel].mean():.3f}, rho(err, ConfScore) {rho(err[sel], conf[sel]):+.2f}, "
                  f"rho(err, their Entropy) {rho(err[sel], [-r['ours']['entropy'] for r, s in zip(rows, sel, strict=True) if s]):+.2f}")


def authors_mix(rows):
    """Re-weight to the authors' composition: 41 of 369 test graphs from the source domain,
    328 from the two targets (modes 1-2 vs 3-4 of evaluator_lebed_domain.py:23-62)."""
    src = [r for r in rows if r["group"] == "acmv9"]
    tgt = [r for r in rows if r["group"] != "acmv9"]
    k = max(3, int(round(len(tgt) * 41 / 328)))
    keep = [src[int(round(v))] for v in np.linspace(0, len(src) - 1, k)]
    sub = keep + tgt

    def printed(r, k2):  # the paper's columns: ATC as eq. 11's error (their helper: accuracy)
        return 1.0 - r["theirs"][k2] if k2.startswith("atc") else r["theirs"][k2]

    err = [r["error"] for r in sub]
    print(f"ACMv9 with the authors' composition ({len(keep)} source + {len(tgt)} target graphs): "
          + ", ".join(f"{LABEL[k2]} {rho(err, [printed(r, k2) for r in sub]):+.2f}" for k2 in LABEL)
          + "  [rho(err, their score) oriented as the paper prints: ATC as eq. 11's error]")
    err_t = [r["error"] for r in tgt]
    print("ACMv9 target domains only (same orientation): "
          + ", ".join(f"{LABEL[k2]} {rho(err_t, [printed(r, k2) for r in tgt]):+.2f}" for k2 in LABEL))


if __name__ == "__main__":
    main()
