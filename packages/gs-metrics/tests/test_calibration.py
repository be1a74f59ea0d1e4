"""Nodewise calibration: paper worked examples, netcal / torchmetrics / scikit-learn references."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gs_metrics as gm
from gs_metrics.calibration import bin_indices


def _binary(pb):
    pb = np.asarray(pb, dtype=float)
    return np.stack([1 - pb, pb], axis=1)


Y = np.array([0, 1, 1])  # appendix A: (w, b, b), w = class 0, b = class 1


@pytest.mark.parametrize(
    ("pb", "ece"),
    [
        ((0.0, 1.0, 1.0), 0.0),
        ((2 / 3, 2 / 3, 2 / 3), 0.0),
        ((0.55, 0.8, 0.7), abs(2 / 3 - 2.05 / 3)),
    ],
)
def test_appendix_a_nodewise(pb, ece):
    # eq. (10) and (13): single bin, ECE^n = |acc - conf|
    got = gm.expected_calibration_error(_binary(pb), Y, n_bins=1)
    assert got == pytest.approx(ece, abs=1e-12)
    if pb == (0.55, 0.8, 0.7):
        assert round(got, 3) == 0.017


def _random_case(rng, n=2000, c=5):
    logits = rng.normal(size=(n, c)) * rng.uniform(0.1, 4)
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    y = rng.integers(0, c, n)
    return p, y


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("n_bins", [1, 10, 15])
def test_nodewise_ece_matches_torchmetrics(seed, n_bins):
    torch = pytest.importorskip("torch")
    tmf = pytest.importorskip("torchmetrics.functional.classification")
    rng = np.random.default_rng(seed)
    p, y = _random_case(rng)
    for norm, fn in (
        ("l1", gm.expected_calibration_error),
        ("l2", gm.l2_calibration_error),
        ("max", gm.maximum_calibration_error),
    ):
        ref = tmf.multiclass_calibration_error(
            torch.from_numpy(p),
            torch.from_numpy(y),
            num_classes=p.shape[1],
            n_bins=n_bins,
            norm=norm,
        )
        assert fn(p, y, n_bins=n_bins) == pytest.approx(
            float(ref), abs=1e-6
        )  # torchmetrics: float32


@pytest.mark.parametrize("seed", [0, 1])
def test_confidence_ece_with_exact_zero_and_one_matches_netcal_and_torchmetrics(seed):
    """Confidences exactly 0 and 1: 0 goes to the first bin, 1 to the last (paper convention)."""
    netcal = pytest.importorskip("netcal.metrics")
    torch = pytest.importorskip("torch")
    pytest.importorskip("torchmetrics")
    rng = np.random.default_rng(seed)
    conf = rng.random(3000)
    conf[:40] = 0.0
    conf[40:90] = 1.0
    correct = rng.random(3000) < conf
    ours = gm.expected_calibration_error(confidences=conf, correct=correct, n_bins=15)
    ref_netcal = netcal.ECE(bins=15, detection=True).measure(conf, correct.astype(int))
    assert ours == pytest.approx(ref_netcal, abs=1e-9)
    # torchmetrics puts 1.0 into an extra (m+1)-th bin of its own (bucketize over m+1 edges);
    # its bins agree with ours once the last edge is nudged above 1.
    edges = torch.linspace(0, 1, 16, dtype=torch.float64)
    edges[-1] = 1.0 + 1e-9
    from torchmetrics.functional.classification.calibration_error import _ce_compute

    ref_tm = _ce_compute(
        torch.from_numpy(conf), torch.from_numpy(correct.astype(float)), edges, norm="l1"
    )
    assert ours == pytest.approx(float(ref_tm), abs=1e-9)


def test_bin_indices_equal_searchsorted_on_boundaries():
    for m in (1, 3, 7, 10, 15, 20, 100):
        edges = np.linspace(0, 1, m + 1)
        c = np.concatenate(
            [
                edges,
                np.nextafter(edges, -1),
                np.nextafter(edges, 2),
                np.random.default_rng(m).random(500),
            ]
        )
        c = np.clip(c, 0, 1)
        ref = np.searchsorted(edges[1:-1], c, side="left")
        assert np.array_equal(bin_indices(c, m), ref)
        # paper convention: k/m belongs to bin k (1-based), i.e. index k-1
        assert np.array_equal(bin_indices(edges[1:], m), np.arange(m))
        assert bin_indices(np.array([0.0]), m)[0] == 0


def test_equal_mass_binning():
    rng = np.random.default_rng(3)
    conf = rng.random(1003)
    correct = rng.random(1003) < conf
    bins = gm.reliability_bins(confidences=conf, correct=correct, n_bins=10, binning="mass")
    assert bins.counts.sum() == 1003
    assert bins.counts.max() - bins.counts.min() <= 1
    # brute force: sort, split into 10 consecutive groups of the same sizes
    order = np.argsort(conf, kind="stable")
    groups = np.split(order, np.cumsum(bins.counts)[:-1])
    ref = sum(len(g) / 1003 * abs(correct[g].mean() - conf[g].mean()) for g in groups)
    assert gm.expected_calibration_error(
        confidences=conf, correct=correct, n_bins=10, binning="mass"
    ) == pytest.approx(ref)
    # every bin's confidences lie above the previous bin's
    for a, b in zip(groups[:-1], groups[1:], strict=True):
        assert conf[a].max() <= conf[b].min()


def test_nll_brier_accuracy_against_sklearn():
    from sklearn.metrics import accuracy_score, log_loss

    rng = np.random.default_rng(4)
    p, y = _random_case(rng, n=500, c=4)
    assert gm.negative_log_likelihood(p, y) == pytest.approx(log_loss(y, p, labels=range(4)))
    onehot = np.eye(4)[y]
    assert gm.brier_score(p, y) == pytest.approx(np.mean(np.sum((p - onehot) ** 2, axis=1)))
    assert gm.accuracy_from_probs(p, y) == pytest.approx(accuracy_score(y, p.argmax(1)))
    mask = rng.random(500) < 0.3
    assert gm.negative_log_likelihood(p, y, mask) == pytest.approx(
        log_loss(y[mask], p[mask], labels=range(4))
    )


def test_torch_tensors_accepted():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    p, y = _random_case(rng, n=200)
    a = gm.expected_calibration_error(p, y)
    b = gm.expected_calibration_error(
        torch.from_numpy(p).float(), torch.from_numpy(y), mask=torch.ones(200, dtype=torch.bool)
    )
    assert a == pytest.approx(b, abs=1e-6)


def test_reliability_bins_data():
    p = _binary([0.05, 0.95, 0.95, 0.55])  # confidences 0.95, 0.95, 0.95, 0.55
    bins = gm.reliability_bins(p, [0, 1, 0, 1], n_bins=10)
    assert bins.counts.tolist() == [0, 0, 0, 0, 0, 1, 0, 0, 0, 3]
    assert bins.accuracy[9] == pytest.approx(2 / 3)
    assert bins.confidence[9] == pytest.approx(0.95)
    assert np.isnan(bins.accuracy[0])
    assert bins.error("max") == pytest.approx(max(abs(2 / 3 - 0.95), abs(1 - 0.55)))


@settings(max_examples=50, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(1, 200),
    st.integers(1, 30),
    st.sampled_from(["width", "mass"]),
)
def test_nodewise_properties(seed, n, n_bins, binning):
    rng = np.random.default_rng(seed)
    p, y = _random_case(rng, n=n, c=3)
    ece = gm.expected_calibration_error(p, y, n_bins=n_bins, binning=binning)
    assert 0.0 <= ece <= 1.0
    assert gm.maximum_calibration_error(p, y, n_bins=n_bins, binning=binning) >= ece - 1e-12
    perm = rng.permutation(n)
    if binning == "width":  # equal-mass ties are split by position, so only width is order-free
        assert gm.expected_calibration_error(p[perm], y[perm], n_bins=n_bins) == pytest.approx(
            ece, abs=1e-12
        )


def test_bin_rule_paper_versus_authors_floor_at_a_boundary():
    """A confidence of exactly k/m: the paper's eq. 1 puts it in bin k (1-based, right-closed),
    the authors' released calibloss.py (bin floor(c m)) in bin k + 1."""
    from gs_metrics import bin_indices, expected_calibration_error, reliability_bins

    m = 4
    c = np.array([0.25, 0.5, 0.75, 0.4, 1.0, 0.0])  # three exact interior boundaries
    assert bin_indices(c, m).tolist() == [0, 1, 2, 1, 3, 0]
    assert bin_indices(c, m, "floor").tolist() == [1, 2, 3, 1, 3, 0]
    ref = np.minimum(np.floor(c * m).astype(int), m - 1)  # the released code's formula
    assert bin_indices(c, m, "floor").tolist() == ref.tolist()
    # an ECE that differs: confidences 0.4 (wrong) and 0.5 (right) share bin 2 under eq. 1,
    # floor(c m) separates them
    probs = np.array([[0.4, 0.3, 0.3], [0.5, 0.25, 0.25]])
    y = np.array([1, 0])
    paper = expected_calibration_error(probs, y, n_bins=m)
    floor = expected_calibration_error(probs, y, n_bins=m, bin_rule="floor")
    assert paper == pytest.approx(abs(0.5 - 0.45))  # one bin: acc 1/2, conf 0.45
    assert floor == pytest.approx(0.5 * 0.4 + 0.5 * 0.5)  # two bins: |0 - 0.4|, |1 - 0.5|
    assert reliability_bins(probs, y, n_bins=m, bin_rule="floor").counts.tolist() == [0, 1, 1, 0]
    with pytest.raises(ValueError, match="bin_rule"):
        bin_indices(c, m, "ceil")


def test_edgewise_bin_rule_option():
    from gs_metrics import edgewise_metrics

    # mean-field edge confidences 0.5 * 1.0 = 0.5 exactly (a boundary for m = 4)
    probs = np.array([[0.5, 0.5], [1.0, 0.0], [0.0, 1.0]])
    y = np.array([0, 0, 1])  # edge (0, 1) agrees, edge (1, 2) disagrees
    ei = np.array([[0, 1], [1, 2]])
    paper = edgewise_metrics(probs, y, ei, n_bins=4)
    floor = edgewise_metrics(probs, y, ei, n_bins=4, bin_rule="floor")
    assert paper.all.bins.counts.tolist() == [0, 1, 0, 1]
    assert floor.all.bins.counts.tolist() == [0, 0, 1, 1]
    assert paper.all.ece == pytest.approx(floor.all.ece)  # each edge alone in its bin


def test_calibration_error_passes_every_bin_option_to_reliability_bins():
    """calibration_error has no binning options of its own: each one (and its default) is
    reliability_bins', so the two cannot disagree; an unknown option is refused by name."""
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(3), size=200)
    y = rng.integers(0, 3, size=200)
    for opts in ({}, {"n_bins": 7}, {"binning": "mass", "n_bins": 9}, {"bin_rule": "floor"}):
        for norm in ("l1", "l2", "max"):
            assert gm.calibration_error(p, y, norm=norm, **opts) == gm.reliability_bins(p, y, **opts).error(norm)
    conf, corr = p.max(axis=1), p.argmax(axis=1) == y
    assert gm.calibration_error(confidences=conf, correct=corr) == gm.calibration_error(p, y)
    with pytest.raises(TypeError, match="n_binz"):
        gm.calibration_error(p, y, n_binz=3)


# ECE edge cases that break other implementations (torchmetrics issue #3510: a confidence of
# exactly 1.0 lands in an extra, phantom (m+1)-th bin there). Worked by hand, no reference
# library needed (netcal imports torch, so it cannot serve without it).


@pytest.mark.parametrize("bin_rule", ["paper", "floor"])
def test_ece_confidence_one_falls_in_the_last_bin_not_a_phantom_one(bin_rule):
    conf = np.array([1.0, 1.0, 0.95, 0.5])
    correct = np.array([1, 0, 1, 1])
    bins = gm.reliability_bins(confidences=conf, correct=correct, n_bins=10, bin_rule=bin_rule)
    assert bins.counts.shape == (10,) and bins.edges.shape == (11,)  # m bins, no extra one
    # 0.5 -> bin 5 of 10 ((0.4, 0.5], index 4; "floor": [0.5, 0.6), index 5); 0.95 and both
    # 1.0 -> the last bin (0.9, 1]
    expected = [0, 0, 0, 0, 1, 0, 0, 0, 0, 3] if bin_rule == "paper" else [0] * 5 + [1, 0, 0, 0, 3]
    assert bins.counts.tolist() == expected
    assert bins.accuracy[9] == pytest.approx(2 / 3)
    assert bins.confidence[9] == pytest.approx(2.95 / 3)
    # ECE = 3/4 |2/3 - 2.95/3| + 1/4 |1 - 0.5| = 3/4 * 0.95/3 + 0.125 = 0.2375 + 0.125
    ece = gm.expected_calibration_error(
        confidences=conf, correct=correct, n_bins=10, bin_rule=bin_rule
    )
    assert ece == pytest.approx(0.3625, abs=1e-12)


def test_ece_confidence_zero_falls_in_the_first_bin():
    conf = np.array([0.0, 0.05, 0.3])
    correct = np.array([0, 0, 1])
    bins = gm.reliability_bins(confidences=conf, correct=correct, n_bins=10)
    # 0 and 0.05 -> bin 1 ([0, 0.1]); 0.3 -> bin 3 ((0.2, 0.3])
    assert bins.counts.tolist() == [2, 0, 1, 0, 0, 0, 0, 0, 0, 0]
    assert bins.confidence[0] == pytest.approx(0.025)
    # ECE = 2/3 |0 - 0.025| + 1/3 |1 - 0.3| = 0.05/3 + 0.7/3 = 0.25
    ece = gm.expected_calibration_error(confidences=conf, correct=correct, n_bins=10)
    assert ece == pytest.approx(0.25, abs=1e-12)
    assert gm.bin_indices(np.array([0.0]), 10, "floor")[0] == 0


def test_ece_empty_bins_are_nan_and_left_out():
    conf = np.array([1.0, 1.0, 0.95, 0.5])
    correct = np.array([1, 0, 1, 1])
    for binning, n_bins in (("width", 10), ("mass", 6)):
        bins = gm.reliability_bins(confidences=conf, correct=correct, n_bins=n_bins, binning=binning)
        empty = bins.counts == 0
        assert empty.any(), binning
        assert np.isnan(bins.accuracy[empty]).all() and np.isnan(bins.confidence[empty]).all()
        assert not np.isnan(bins.accuracy[~empty]).any()
        assert np.isfinite(bins.error("l1")) and np.isfinite(bins.error("max"))
    # width: MCE over the two non-empty bins only: max(0.95/3, 0.5) = 0.5
    mce = gm.maximum_calibration_error(confidences=conf, correct=correct, n_bins=10)
    assert mce == pytest.approx(0.5)
    # mass, 6 bins for 4 samples: ranks 0..3 go to bins floor(r * 6 / 4) = 0, 1, 3, 4: every
    # sample alone, ECE = 1/4 (|1 - 0.5| + |1 - 0.95| + |1 - 1| + |0 - 1|) (sorted 0.5, 0.95,
    # then the two 1.0 in position order: correct 1, then 0)
    bins = gm.reliability_bins(confidences=conf, correct=correct, n_bins=6, binning="mass")
    assert bins.counts.tolist() == [1, 1, 0, 1, 1, 0]
    assert bins.error() == pytest.approx((0.5 + 0.05 + 0.0 + 1.0) / 4)
    # nothing evaluated: NaN with a warning, as every empty evaluated set
    with pytest.warns(gm.EmptyEvaluationWarning):
        assert np.isnan(gm.expected_calibration_error(confidences=[], correct=[]))


def test_equal_mass_ece_worked_example():
    conf = np.array([0.9, 0.2, 0.6, 0.8, 0.4, 1.0])
    correct = np.array([1, 0, 1, 0, 0, 1])
    # sorted: 0.2 (0), 0.4 (0) | 0.6 (1), 0.8 (0) | 0.9 (1), 1.0 (1): three bins of two
    # gaps: |0 - 0.3| = 0.3, |0.5 - 0.7| = 0.2, |1 - 0.95| = 0.05 -> ECE = 0.55 / 3
    bins = gm.reliability_bins(confidences=conf, correct=correct, n_bins=3, binning="mass")
    assert bins.counts.tolist() == [2, 2, 2]
    assert bins.edges.tolist() == [0.2, 0.6, 0.9, 1.0]  # 1.0 is the last edge and in the last bin
    ece = gm.expected_calibration_error(confidences=conf, correct=correct, n_bins=3, binning="mass")
    assert ece == pytest.approx(0.55 / 3, abs=1e-12)
    # equal width on the same data: (0, 1/3] {0.2}, (1/3, 2/3] {0.4, 0.6}, (2/3, 1] {0.8, 0.9, 1}
    # ECE = 1/6 |0 - 0.2| + 2/6 |0.5 - 0.5| + 3/6 |2/3 - 0.9| = 0.2/6 + 0.7/6 = 0.15
    width = gm.expected_calibration_error(confidences=conf, correct=correct, n_bins=3)
    assert width == pytest.approx(0.15, abs=1e-12)
