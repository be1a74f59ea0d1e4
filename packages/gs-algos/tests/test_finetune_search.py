"""Par-Label fine-tuning (SYNTHETIC toy concept shift) and the GeSS search."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from gs_algos.config import TrainConfig
from gs_algos.engine import FitResult, Track, fit_node
from gs_algos.finetune import PAR_LABEL_SIZES, choose_labeled, finetune_node
from gs_algos.search import GESS_SEARCH_SPACES, grid_search


def _shifted(factory):
    """Domain 2 is OOD with a concept shift: its class signal is rotated by one class."""
    data = factory(n=300, num_domains=3, domain_shift=0.0, seed=5)
    ood = data.domain == 2
    data.y = torch.where(ood, (data.y + 1) % 3, data.y)
    masks = {k: getattr(data, f"{k}_mask") for k in ("in_train", "in_valid", "in_test")}
    ood_idx = torch.nonzero(ood).flatten()
    half = ood_idx.numel() // 2
    masks["ood_pool"] = torch.zeros_like(ood)
    masks["ood_pool"][ood_idx[:half]] = True
    masks["out_test"] = torch.zeros_like(ood)
    masks["out_test"][ood_idx[half:]] = True
    return data, masks


def test_more_ood_labels_lower_the_ood_error(synthetic_graph_factory, tiny_mlp):
    data, masks = _shifted(synthetic_graph_factory)
    cfg = TrainConfig(lr=0.01, max_epochs=80, patience=None, select_on=("in_valid",),
                      eval_parts=("in_valid", "out_test"))
    pre = tiny_mlp(8, 3)
    res = fit_node(pre, data, None, cfg, masks=masks)
    pre_err = 1 - res.best.metrics["out_test"]["accuracy"]
    before = {k: v.clone() for k, v in pre.state_dict().items()}
    ft_cfg = cfg.replace(select_on=("out_test",), max_epochs=60)
    errs = {}
    for n in (3, 40):
        _, r = finetune_node(pre, data, masks, n, ft_cfg, pool_part="ood_pool", seed=0)
        errs[n] = 1 - r.history[-1]["metrics"]["out_test"]["accuracy"]
    assert pre_err > 0.5  # the ID model fails under the concept shift
    assert errs[40] < errs[3] < pre_err
    assert all(torch.equal(before[k], pre.state_dict()[k]) for k in before)  # copy tuned


def test_choose_labeled_is_seeded_and_checked():
    a = choose_labeled(50, 10, 3)
    assert a.tolist() == choose_labeled(50, 10, 3).tolist() and len(set(a.tolist())) == 10
    assert PAR_LABEL_SIZES == (100, 500, 1000)
    with pytest.raises(ValueError, match="exceeds"):
        choose_labeled(50, 100, 0)


def test_grid_search_selects_on_ood_validation():
    assert set(GESS_SEARCH_SPACES) == {"vrex", "groupdro", "mixup", "dir", "lri", "dann", "coral"}
    seen = []

    def run(method):
        w = method.penalty_weight
        seen.append(w)
        # ID validation prefers small weights, OOD validation prefers 10
        iid = Track("iid_val", 0, 1 / (1 + w), {"iid_val": {"accuracy": 1 / (1 + w)}})
        ood_score = 1 - abs(math.log10(w) - 1) / 10
        ood = Track("ood_val", 0, ood_score, {"ood_val": {"accuracy": ood_score}})
        return FitResult({"iid_val": iid, "ood_val": ood}, [], 1, False)

    res = grid_search("vrex", run)
    assert seen == list(GESS_SEARCH_SPACES["vrex"].values)
    assert res.best_value == 10.0 and res.space.param == "penalty_weight"
    with pytest.raises(ValueError, match="no GeSS search space"):
        grid_search("erm", run)


def test_gess_par_label_draw_takes_half_from_each_ood_part():
    """GeSS appendix C.1: the Train-OOD pool is 1000 samples removed from each of Val-OOD and
    Test-OOD, and a fine-tuning set of N takes N/2 from each (odd N: the extra one from
    Test-OOD)."""
    from gs_algos.finetune import choose_labeled_per_half

    halves = np.array([0] * 30 + [1] * 10 + [0] * 5)
    idx = choose_labeled_per_half(halves, 13, seed=2)
    assert idx.tolist() == sorted(set(idx.tolist())) and idx.size == 13
    assert (halves[idx] == 0).sum() == 6 and (halves[idx] == 1).sum() == 7
    np.testing.assert_array_equal(idx, choose_labeled_per_half(halves, 13, seed=2))
    assert not np.array_equal(idx, choose_labeled_per_half(halves, 13, seed=3))
    with pytest.raises(ValueError, match="needs 11 pool items from the Test-OOD half, which holds 10"):
        choose_labeled_per_half(halves, 22, seed=0)
    with pytest.raises(ValueError, match="halves must be"):
        choose_labeled_per_half([0, 2], 1, seed=0)
