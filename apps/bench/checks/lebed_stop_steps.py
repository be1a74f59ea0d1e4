"""Diagnostic check (not part of the package): why our LeBed re-training of the MLP on the Cora
feature shift runs ~60 steps before the D_stru rule fires while the paper's Table A1 says ~9
(issue 30), and, with ``--model gin`` / ``sage`` / ..., the same comparison for the other four
encoders of the paper (their step counts and rho against Table A1 and Table 2). Runs the
authors' stopping logic, re-implemented line for line from
Amanda-Zheng/LEBED ``LEBED-cora-amz/evaluator_lebed_cora-amz.py`` (cited per line below), next
to ours (:func:`gs_algos.lebed.lebed_score`) on the same Cora feature-shift test graphs, and
prints the step counts of each variant:

``ours``
    the gs run: ``lebed-<model>`` preset (as configured in this checkout), our ``pretrain``, our
    ``lebed_score`` with ``authors_config("planetoid-cora", "mlp")``.
``authors-loop/our-model``
    the authors' ``train_norm`` loop applied to the very same pretrained model, initial state
    and non-edge sample as ``ours``: equal counts mean the two stopping rules are the same.
``authors-model``
    the authors' model: ``torch_geometric.nn.MLP(in, 256, 32, num_layers=2)`` with PyG's
    defaults (``norm="batch_norm"``: Linear, BatchNorm, ReLU, Linear), or PyG's ``GCN`` /
    ``GraphSAGE`` / ``GAT`` / ``GIN`` with the same widths and defaults
    (``evaluator_lebed_cora-amz.py:86-100``), plus ``nn.Linear(32, C)`` (xavier weight, zero
    bias: ``pretrain-lebed.py:89-90``), pre-trained as ``pretrain-lebed.py`` (Adam 1e-3 / 5e-4,
    200 epochs; for GIN the run script's ``--lr=0.0005 --wd=0.0005 --epochs=300``,
    ``LEBED-cora-amz-run.sh:5-6``; on environment 0 alone in train mode, checkpoint of the best
    environment-1 accuracy in eval mode), then their loop.
``ours/authors-pretrain``
    our model and ``lebed_score``, pre-trained as ``pretrain-lebed.py`` (environment 0 alone).
``ours/xavier-head``
    our model, pre-training and ``lebed_score``, with the classifier initialised as the authors'
    (``pretrain-lebed.py:89-90``: xavier-uniform weight, zero bias). Since 397b4e8 the
    ``lebed-*`` presets do this themselves (``head_init="xavier"``), so it equals ``ours``;
    the logs committed before then ran ``ours`` with torch's default head.
``authors-model/our-pretrain``
    the authors' model pre-trained by our ``pretrain`` (environments 0 and 1 as one disjoint
    union: with batch norm, environment 1 enters the training batch statistics).
``ours/authors-theta0`` (GNNs)
    our model started from the very parameters the ``authors-model`` variant starts from (copied
    one by one), pre-trained as the authors, our ``lebed_score``: the same steps and rho as
    ``authors-model`` put a gap between ours and theirs in the draw of ``theta_0``, not in the
    model or the loop.
``authors-model/no-BN`` (MLP only)
    the authors' model with ``MLP(..., norm=None)``: batch norm is the one change.
``authors-model/their-theta0`` (with ``--authors-init DIR``)
    the authors' model started from their published initial parameters
    (``init_cora_amazon/init_params/<MODEL>_256_32/init_{encoder,cls_model}.pt``; Cora's EERM
    features are 1443 wide in both pipelines). ``DIR`` is that ``<MODEL>_256_32`` folder, or
    ``init_params`` itself.

    OMP_NUM_THREADS=1 python apps/bench/checks/lebed_stop_steps.py --graphs 8 \
        [--authors-init DIR]
    OMP_NUM_THREADS=1 python apps/bench/checks/lebed_stop_steps.py --model sage --graphs 16 \
        --authors-init DIR [--variants ours,authors-model/their-theta0]

``--dataset acmv9`` runs the same variants on the domain shift of the ``ci`` run (ACMv9 ->
Citationv1 / DBLPv7, the runner's own 36 test graphs and masks): the authors' loop is then
``evaluator_lebed_domain.py``'s ``train_norm`` (:182-294: the same loop with a *relative*
margin, ``lp_margin_rate * g(Z*)``, :232) with their acm settings, and their pre-training is
``pretrain_gnn_domain.py``'s (:42-43, :110-149: the induced ``train_sub`` trains, ``val_sub``
selects the best-accuracy checkpoint; lr 3e-3 / wd 5e-4 / 200 epochs, its defaults) on the
subgraphs induced by the runner's train / validation masks. Their published acm ``theta_0``
encoder files are not in the repository snapshot (only ``init_cls_model.pt``), so there is no
``their-theta0`` variant here.

    OMP_NUM_THREADS=1 python apps/bench/checks/lebed_stop_steps.py --dataset acmv9 --model sage \
        [--seed S] [--variants ours,authors-model]

Besides the step counts it prints, per variant, the Spearman rho between the pre-trained
model's error and the LeBed score over the check's graphs (all, and per perturbation): a
handful of graphs gives a noisy rho, so it is a direction, not Table 2's cell.

Run from the repository root with GS_SHARED_DATA set (the Cora raw files); a few CPU minutes.
The output committed next to this file is ``lebed_stop_steps.log``. Steps are reported as
re-training updates (``best_epoch + 1``; the authors log ``best_epoch``, 0-based).
"""

from __future__ import annotations

import argparse
import copy
import itertools
import os
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

# the authors' cora settings per model (param_space.txt, the five "dataset='cora'" lines:
# lr_frominit, wd_frominit, epochs_frominit, lp_margin, atleastepoch)
AUTHORS_BY_MODEL = {
    "gcn": {"lr": 1e-3, "wd": 5e-4, "epochs": 500, "lp_margin": 0.03, "atleastepoch": 5},
    "gat": {"lr": 1e-3, "wd": 5e-4, "epochs": 500, "lp_margin": 0.03, "atleastepoch": 5},
    "gin": {"lr": 1e-4, "wd": 0.0, "epochs": 500, "lp_margin": 0.04, "atleastepoch": 5},
    "sage": {"lr": 1e-3, "wd": 5e-4, "epochs": 500, "lp_margin": 0.03, "atleastepoch": 5},
    "mlp": {"lr": 1e-3, "wd": 5e-4, "epochs": 500, "lp_margin": 0.03, "atleastepoch": 5},
}
# their pre-training: pretrain-lebed.py's defaults (:252-254: lr 1e-3, wd 5e-4, 200 epochs);
# the run script's one Cora line is GIN's (LEBED-cora-amz-run.sh:5-6)
PRETRAIN_BY_MODEL = {m: {"lr": 1e-3, "wd": 5e-4, "epochs": 200} for m in AUTHORS_BY_MODEL}
PRETRAIN_BY_MODEL["gin"] = {"lr": 5e-4, "wd": 5e-4, "epochs": 300}
# the authors' acm settings per model (param_space.txt, the five "source='acm'" lines of
# evaluator_lebed_domain.py: lr_frominit, wd_frominit, epochs_frominit, lp_margin_rate,
# atleastepoch); their margin is relative, lp_margin_rate * g(Z*) (evaluator_lebed_domain.py:232)
AUTHORS_ACM = {
    "gcn": {"lr": 2e-3, "wd": 1e-4, "epochs": 100, "lp_margin": 0.2, "atleastepoch": 10},
    "gat": {"lr": 1e-4, "wd": 1e-4, "epochs": 300, "lp_margin": 0.05, "atleastepoch": 30},
    "sage": {"lr": 1e-3, "wd": 1e-5, "epochs": 100, "lp_margin": 0.2, "atleastepoch": 5},
    "gin": {"lr": 5e-4, "wd": 1e-5, "epochs": 100, "lp_margin": 0.1, "atleastepoch": 10},
    "mlp": {"lr": 1e-4, "wd": 1e-4, "epochs": 100, "lp_margin": 0.03, "atleastepoch": 10},
}
# their domain pre-training: pretrain_gnn_domain.py's defaults (:211-213: lr 3e-3, wd 5e-4,
# 200 epochs); the run script's one acm line is GIN's (LEBED-run-acm-dblp-citation.sh:2-4)
PRETRAIN_ACM = {m: {"lr": 3e-3, "wd": 5e-4, "epochs": 200} for m in AUTHORS_ACM}
PRETRAIN_ACM["gin"] = {"lr": 5e-4, "wd": 5e-5, "epochs": 200}
PYG_NAMES = {"gcn": "GCN", "sage": "GraphSAGE", "gat": "GAT", "gin": "GIN", "mlp": "MLP"}


def authors_metric_lp(emb: torch.Tensor, pos: torch.Tensor, neg: torch.Tensor) -> torch.Tensor:
    """evaluator_lebed_cora-amz.py:126-136 (reference) and :361-365, :378-379 (per epoch):
    BCE-with-logits of the cosine similarity on edges (label 1) + sampled non-edges (label 0)."""
    idx = torch.cat([pos, neg], dim=-1)  # :130 / :364
    label = torch.cat([torch.ones(pos.shape[1]), torch.zeros(neg.shape[1])])  # :127, :131
    logits_lp = F.cosine_similarity(emb[idx[0]], emb[idx[1]], dim=-1)  # :133 / :378
    return F.binary_cross_entropy_with_logits(logits_lp, label)  # :136 / :379


def authors_train_norm(forward, models, x, pos, neg, pseudo, theta_star, metric_lp_ref, cfg):
    """evaluator_lebed_cora-amz.py:295-436 (``train_norm``) with :484-521
    (``train_frominit``). ``forward(x) -> (embedding, logits)``; ``models`` are the modules
    whose ``parameters()`` form theta (encoder, cls_model: :349-350). Returns
    (best_epoch, stopped_by_rule, diff_norm)."""
    params = itertools.chain(*[m.parameters() for m in models])  # :350
    opt = torch.optim.Adam(params, lr=cfg["lr"], weight_decay=cfg["wd"])  # :351
    loss_func = nn.NLLLoss()  # :352
    best_margin = cfg["lp_margin"]  # :359 (absolute for cora / amazon-photo)
    if cfg.get("relative"):  # evaluator_lebed_domain.py:232: lp_margin_rate * metric_lp_ref
        best_margin = cfg["lp_margin"] * float(metric_lp_ref)
    best_epoch, best_diff_norm, stopped = 0, 0.0, False
    for epoch in range(0, cfg["epochs"]):  # :366
        for m in models:  # :485-486
            m.train()
        embedding, logits = forward(x)  # :499-504
        max_logits, _ = logits.max(dim=1, keepdim=True)  # :507
        log_p = logits - max_logits  # :508
        log_p = log_p - torch.logsumexp(log_p, dim=1, keepdim=True)  # :509
        loss = loss_func(log_p, pseudo)  # :510
        opt.zero_grad()  # :517
        loss.backward()  # :518
        opt.step()  # :519
        flat = torch.cat([p.view(-1) for p in itertools.chain(*[m.parameters() for m in models])])
        diff_norm = float(torch.norm(theta_star - flat).detach())  # :372-374, :475-481
        metric_lp = authors_metric_lp(embedding, pos, neg)  # :378-379 (the train-forward Z)
        margin = torch.abs(metric_lp - metric_lp_ref).item()  # :381
        if epoch >= cfg["atleastepoch"]:  # :385
            best_epoch, best_diff_norm = epoch, diff_norm  # :387-389 / :394-396
            if margin < best_margin:  # :386
                stopped = True
                break  # :391
    return best_epoch, stopped, best_diff_norm


def authors_reference(forward, models, x, pos, neg):
    """evaluator_lebed_cora-amz.py:439-472 (``test``: eval mode, argmax pseudo-labels) and
    :126-136 (``metric_lp_ref``)."""
    for m in models:  # :440-441
        m.eval()
    with torch.no_grad():
        emb, logits = forward(x)  # :460-465
        pseudo = F.softmax(logits, dim=1).argmax(dim=1)  # :466-468
        ref = authors_metric_lp(emb, pos, neg)
    return pseudo, ref


class AuthorsModel(nn.Module):
    """evaluator_lebed_cora-amz.py:86-103: a PyG encoder with its defaults (``MLP``, ``GCN``,
    ``GraphSAGE``, ``GAT``, ``GIN``; 256 hidden, 32 out, 2 layers) + linear classifier."""

    def __init__(self, in_ch: int, num_classes: int, norm: str | None = "batch_norm",
                 model: str = "mlp") -> None:
        super().__init__()
        import torch_geometric.nn as pyg_nn

        self.is_mlp = model == "mlp"
        if self.is_mlp:
            kw = {} if norm == "batch_norm" else {"norm": norm}  # PyG's default is batch_norm
            self.encoder = pyg_nn.MLP(in_channels=in_ch, hidden_channels=256, out_channels=32,
                                      num_layers=2, **kw)
        else:
            self.encoder = getattr(pyg_nn, PYG_NAMES[model])(
                in_ch, hidden_channels=256, out_channels=32, num_layers=2)
        self.cls_model = nn.Sequential(nn.Linear(32, num_classes))
        nn.init.xavier_uniform_(self.cls_model[0].weight)  # pretrain-lebed.py:89
        nn.init.constant_(self.cls_model[0].bias, 0.0)  # pretrain-lebed.py:90

    def forward(self, x, edge_index=None):
        # evaluator_lebed_cora-amz.py:499-502: the MLP sees the features only
        emb = self.encoder(x) if self.is_mlp else self.encoder(x, edge_index)
        return emb, self.cls_model(emb)


def authors_pretrain(model: AuthorsModel, train_g, valid_g, lr: float = 1e-3, wd: float = 5e-4,
                     epochs: int = 200) -> float:
    """pretrain-lebed.py:108-145: Adam(lr, wd) for ``epochs`` on the training graph in train
    mode; keep the state of the best validation accuracy (strict ``>``) in eval mode."""
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=wd)  # :108, defaults :252-254
    best, best_state = 0.0, copy.deepcopy(model.state_dict())
    for _ in range(epochs):  # :115
        model.train()  # :199-200
        _, logits = model(train_g.x, train_g.edge_index)
        loss = F.nll_loss(torch.log_softmax(logits, 1), train_g.y)  # :215-220
        opt.zero_grad()
        loss.backward()
        opt.step()
        model.eval()  # :177-178
        with torch.no_grad():
            acc = float((model(valid_g.x, valid_g.edge_index)[1].argmax(1) == valid_g.y).float().mean())
        if acc > best:  # :139
            best, best_state = acc, copy.deepcopy(model.state_dict())  # :144-145
    model.load_state_dict(best_state)
    return best


def flat_params(models) -> torch.Tensor:
    # evaluator_lebed_cora-amz.py:107-109: parameters() of encoder and classifier, no buffers
    return torch.cat([p.detach().view(-1) for p in itertools.chain(*[m.parameters() for m in models])])


def error_of(model, g) -> float:
    """The pre-trained model's test error on graph ``g`` (eval mode, argmax, over its
    ``eval_mask`` where it has one): LeBed's target."""
    model.eval()
    with torch.no_grad():
        _, logits = model(g.x, g.edge_index)
    wrong = logits.argmax(1) != g.y
    mask = getattr(g, "eval_mask", None)
    return float(wrong[mask].float().mean() if mask is not None else wrong.float().mean())


def run_authors(name, model, init_state, graphs, indices, negs, rows, cfg):
    theta_star = flat_params([model])
    for i in indices:
        g = graphs[i]
        x, pos, neg = g.x, g.edge_index, torch.as_tensor(negs[i])
        pseudo, ref = authors_reference(lambda x, pos=pos: model(x, pos), [model], x, pos, neg)
        retrain = copy.deepcopy(model)
        retrain.load_state_dict(init_state)  # evaluator_lebed_cora-amz.py:331-344: theta_0
        torch.manual_seed(i)
        epoch, stopped, dn = authors_train_norm(
            lambda x, m=retrain, pos=pos: m(x, pos), [retrain], x, pos, neg, pseudo, theta_star, ref, cfg)
        rows.setdefault(name, {})[i] = (epoch + 1, stopped, dn, float(ref), error_of(model, g))


def load_authors_init(am: AuthorsModel, init_dir: Path, model: str) -> None:
    """``init_dir`` is ``<MODEL>_256_32`` itself or the ``init_params`` folder above it."""
    sub = init_dir / f"{model.upper()}_256_32"
    d = sub if sub.is_dir() else init_dir
    am.encoder.load_state_dict(torch.load(d / "init_encoder.pt", map_location="cpu"))
    am.cls_model.load_state_dict(torch.load(d / "init_cls_model.pt", map_location="cpu"))


def spearman(a, b) -> float:
    from scipy.stats import spearmanr

    return float(spearmanr(a, b).statistic) if len(a) > 2 else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", choices=sorted(AUTHORS_BY_MODEL), default="mlp",
                    help="the encoder of the lebed-<model> preset and of the authors' code")
    ap.add_argument("--dataset", choices=["planetoid-cora", "acmv9"], default="planetoid-cora",
                    help="planetoid-cora: the feature shift (320 test graphs); acmv9: the domain "
                         "shift of the ci run (ACMv9 -> Citationv1 / DBLPv7, 3 graphs per domain and "
                         "perturbation, 36 test graphs), the authors' acm settings")
    ap.add_argument("--graphs", type=int, default=None,
                    help="test graphs, evenly spread over the set (default: 8 on Cora, all 36 on acmv9)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--authors-init", type=Path, default=None,
                    help="the authors' <MODEL>_256_32 folder (init_encoder.pt / init_cls_model.pt) "
                         "or the init_params folder above it")
    ap.add_argument("--variants", default=None,
                    help="comma-separated variants to run (default: all that apply)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    model_name = args.model
    domain = args.dataset == "acmv9"
    authors = {**AUTHORS_ACM[model_name], "relative": True} if domain else AUTHORS_BY_MODEL[model_name]
    pre = (PRETRAIN_ACM if domain else PRETRAIN_BY_MODEL)[model_name]
    wanted = None if args.variants is None else set(args.variants.split(","))

    def want(name: str) -> bool:
        return wanted is None or name in wanted

    import gs_data
    from gs_algos.config import TrainConfig
    from gs_algos.engine import predict_node, seeded
    from gs_algos.lebed import authors_config, lebed_score, pretrain
    from gs_data.lebed import FeatureShiftConfig
    from gs_metrics.lebed import sample_non_edges
    from gs_models import build_model

    root = os.environ.get("GS_SHARED_DATA")
    if domain:
        # the runner's own set and pre-training parts (runners/lebed/job.py test_graph_set):
        # masks on the whole ACMv9 graph; the authors pre-train on the induced subgraphs
        # ("masks": the runner's protocol before domain_pretrain = "induced"; the check builds
        # the induced subgraphs itself for its authors' variants)
        from gs_bench.runners.lebed.job import induced_subgraph, test_graph_set

        graphs, train_g, tr, valid_g, va = test_graph_set(
            {"dataset": "acmv9", "shift": "domain", "model": model_name},
            {"domain_graphs": 3, "root": "shared", "domain_pretrain": "masks"})
        a_train, a_valid = induced_subgraph(train_g, tr), induced_subgraph(valid_g, va)
    else:
        graphs = gs_data.lebed_feature_shift(gs_data.load("planetoid-cora", root=root), FeatureShiftConfig(), seed=0)
        train_g, valid_g = graphs.train, graphs.valid
        tr, va = None, torch.ones(valid_g.num_nodes, dtype=torch.bool)
        a_train, a_valid = train_g, valid_g
    c = graphs.num_classes
    n = len(graphs)
    n_graphs = args.graphs or (n if domain else 8)
    indices = sorted({int(round(v)) for v in np.linspace(0, n - 1, n_graphs)})
    # our non-edge sample of each test graph (lebed_score draws it with seed = graph index)
    negs = {}
    for i in indices:
        ei = graphs[i].edge_index.numpy()
        negs[i] = sample_non_edges(ei, graphs[i].num_nodes, ei.shape[1], np.random.default_rng(i), strict=False)
    rows: dict[str, dict[int, tuple]] = {}
    preset = f"lebed-{model_name}"

    # --- ours: the runner's pre-training and lebed_score (runners/lebed.py run_job)
    model = seeded(lambda: build_model(preset, train_g.num_features, c), args.seed)
    init_state = copy.deepcopy(model.state_dict())
    pcfg = TrainConfig(lr=1e-3, weight_decay=5e-4, max_epochs=200, patience=None, train_part="train",
                       select_on=("valid",), metric="accuracy", seed=args.seed, device="cpu")
    lcfg = authors_config(args.dataset, model_name).with_changes(device="cpu")

    def run_ours(name, m, m_init):
        for i in indices:
            g = graphs[i]
            res = lebed_score(m, m_init, g.x, g.edge_index, config=lcfg, seed=i,
                              reference_output=predict_node(m, g))
            rows.setdefault(name, {})[i] = (res.stop_step, res.stopped_early, res.score, res.reference,
                                            error_of(m, g))

    if want("ours") or want("authors-loop/our-model"):
        pretrain(model, train_g, valid_g, train_mask=tr, valid_mask=va, num_classes=c, config=pcfg)
        norms = sorted({type(m).__name__ for m in model.modules() if "Norm" in type(m).__name__})
        print(f"ours: {preset} modules with a norm: {norms or 'none'}", flush=True)
    if want("ours"):
        run_ours("ours", model, init_state)

    # --- the authors' loop on our pretrained model (same theta_0, theta*, non-edges)
    if want("authors-loop/our-model"):
        run_authors("authors-loop/our-model", model, init_state, graphs, indices, negs, rows, authors)

    # --- our model pre-trained as the authors do (environment 0 alone), our lebed_score
    if want("ours/authors-pretrain"):
        torch.manual_seed(args.seed)
        m2 = seeded(lambda: build_model(preset, train_g.num_features, c), args.seed)
        m2_init = copy.deepcopy(m2.state_dict())
        val = authors_pretrain(m2, a_train, a_valid, pre["lr"], pre["wd"], pre["epochs"])
        print(f"ours/authors-pretrain: pre-trained, best validation accuracy {val:.3f}", flush=True)
        run_ours("ours/authors-pretrain", m2, m2_init)

    # --- our model with the authors' classifier initialisation (xavier-uniform weight, zero
    # bias: pretrain-lebed.py:89-90; ours is torch's default), our pre-training and lebed_score
    if want("ours/xavier-head"):
        m3 = seeded(lambda: build_model(preset, train_g.num_features, c), args.seed)
        nn.init.xavier_uniform_(m3.head.weight)
        nn.init.constant_(m3.head.bias, 0.0)
        m3_init = copy.deepcopy(m3.state_dict())
        pretrain(m3, train_g, valid_g, train_mask=tr, valid_mask=va, num_classes=c, config=pcfg)
        run_ours("ours/xavier-head", m3, m3_init)

    # --- the authors' model (PyG encoder with its defaults), their pre-training and loop;
    # "our-pretrain": the same model pre-trained by gs_algos.lebed.pretrain (one disjoint union
    # of environments 0 and 1, so the batch statistics of training include environment 1)
    variants = [("authors-model", "batch_norm", None, False),
                ("authors-model/our-pretrain", "batch_norm", None, True)]
    if model_name == "mlp":
        variants.append(("authors-model/no-BN", None, None, False))
    if args.authors_init is not None:
        variants.append(("authors-model/their-theta0", "batch_norm", args.authors_init, False))
    for name, norm, init_dir, ours_pre in variants:
        if not want(name):
            continue
        torch.manual_seed(args.seed)
        am = AuthorsModel(train_g.num_features, c, norm=norm, model=model_name)
        if init_dir is not None:
            load_authors_init(am, init_dir, model_name)
        a_init = copy.deepcopy(am.state_dict())
        if ours_pre:
            fit = pretrain(am, train_g, valid_g, train_mask=tr, valid_mask=va, num_classes=c, config=pcfg)
            val = fit.best.value
        else:
            val = authors_pretrain(am, a_train, a_valid, pre["lr"], pre["wd"], pre["epochs"])
        print(f"{name}: pre-trained, best validation accuracy {val:.3f}", flush=True)
        run_authors(name, am, a_init, graphs, indices, negs, rows, authors)

    # --- our model started from the authors' model's initial parameters (the same draw,
    # copied parameter by parameter: the two list the same shapes in the same order), pre-trained
    # as the authors do, our lebed_score: with the authors-model row, it tells whether a gap
    # between ours and theirs is in the model / loop (rows differ) or in theta_0's draw (equal)
    if want("ours/authors-theta0"):
        torch.manual_seed(args.seed)
        am = AuthorsModel(train_g.num_features, c, norm="batch_norm", model=model_name)
        m4 = build_model(preset, train_g.num_features, c)
        theirs, mine = list(am.parameters()), list(m4.parameters())
        if [p.shape for p in theirs] != [p.shape for p in mine] or list(m4.buffers()):
            raise SystemExit(f"ours/authors-theta0: lebed-{model_name}'s parameters do not line up "
                             "with the authors' model's; the variant applies to gcn / sage / gat / gin")
        with torch.no_grad():
            for p_mine, p_theirs in zip(mine, theirs, strict=True):
                p_mine.copy_(p_theirs)
        m4_init = copy.deepcopy(m4.state_dict())
        val = authors_pretrain(m4, a_train, a_valid, pre["lr"], pre["wd"], pre["epochs"])
        print(f"ours/authors-theta0: pre-trained, best validation accuracy {val:.3f}", flush=True)
        run_ours("ours/authors-theta0", m4, m4_init)

    # --- table
    print()
    print("test graph | perturbation | p | " + " | ".join(rows))
    for i in indices:
        g = graphs[i]
        cells = [f"{rows[k][i][0]}{'' if rows[k][i][1] else '*'}" for k in rows]
        where = getattr(g, "domain_name", None) or f"env{g.environment}"
        print(f"{i} | {g.perturbation} {where} | {float(g.p):.2f} | " + " | ".join(cells))
    print()
    for k, v in rows.items():
        steps = np.array([s[0] for s in v.values()], float)
        print(f"{k}: updates until the rule fired: median {np.median(steps):.0f}, mean {steps.mean():.1f}, "
              f"min {steps.min():.0f}, max {steps.max():.0f}; g(Z*) median {np.median([s[3] for s in v.values()]):.3f}")
    print("(* = the rule never fired within the step limit)")
    print()
    # the parts rho is reported on: perturbations; on the domain shift also the source domain
    # (its perturbed copies) and the two target domains
    kinds = ["feature_noise", "feature_mask"] + (["class_subgraph", "edge_dropout"] if domain else [])
    parts = [("all", lambda g: True)] + [(k, lambda g, k=k: g.perturbation == k) for k in kinds]
    if domain:
        parts += [("source", lambda g: g.domain_name == "acmv9"),
                  ("targets", lambda g: g.domain_name != "acmv9")]
    print("variant | " + " | ".join(f"rho {name}" for name, _ in parts) + " | error median")
    for k, v in rows.items():
        cells = []
        for _, keep in parts:
            ids = [i for i in v if keep(graphs[i])]
            cells.append(f"{spearman([v[i][4] for i in ids], [v[i][2] for i in ids]):+.2f} ({len(ids)})")
        print(f"{k} | " + " | ".join(cells) + f" | {np.median([s[4] for s in v.values()]):.3f}")


if __name__ == "__main__":
    main()
