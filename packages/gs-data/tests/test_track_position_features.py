"""``gs_data.track.position_features``: the position-only physics summaries of issue 53's
baselines, on SYNTHETIC hit sets, checked against a brute-force reading of their definition."""

from __future__ import annotations

import numpy as np
import pytest

from gs_data.track import POSITION_FEATURES, position_features


def _brute_chain(p, dphi=5e-3, deta=0.05, gap=20.0):
    r = np.linalg.norm(p, axis=1)
    phi = np.arctan2(p[:, 1], p[:, 0])
    theta = np.arccos(np.clip(p[:, 2] / r, -1, 1))
    eta = -np.log(np.tan(theta / 2))
    out = []
    for i in range(len(p)):
        dp = np.abs((phi - phi[i] + np.pi) % (2 * np.pi) - np.pi)
        near = (dp < dphi) & (np.abs(eta - eta[i]) < deta)
        radii = np.sort(r[near])
        out.append(1 + int((np.diff(radii) > gap).sum()))
    return np.array(out)


def _line(phi, eta, radii, rng, jitter=1e-4):
    theta = 2 * np.arctan(np.exp(-eta))
    d = np.array([np.sin(theta) * np.cos(phi), np.sin(theta) * np.sin(phi), np.cos(theta)])
    return np.array([rr * (d + rng.normal(0, jitter, 3)) for rr in radii])


def test_a_straight_line_is_the_straightest_chain_and_matches_brute_force():
    rng = np.random.default_rng(0)
    radii = [33.0, 72.0, 116.0, 172.0, 260.0, 360.0, 500.0, 660.0]
    noise = rng.normal(size=(300, 3)) * np.array([400.0, 400.0, 900.0])
    for phi in (0.7, np.pi - 1e-3):  # the second straddles the azimuth seam at +-pi
        p = np.vstack([noise, _line(phi, 0.4, radii, rng)])
        f = dict(zip(POSITION_FEATURES, position_features(p), strict=True))
        brute = _brute_chain(p)
        assert f["hit_count"] == len(p)
        assert f["straightest_chain"] == brute.max() == len(radii)
        assert f["hits_on_chains"] == (brute >= 5).sum() >= len(radii)
        # the line's hits keep their azimuth while their polar angle changes little: the
        # aligned-edge count is computed like the check script (k = 5 on unit directions)
        assert 0 <= f["aligned_fraction"] <= 1
        assert f["aligned_fraction"] == pytest.approx(f["aligned_edges"] / (5 * len(p)))


def test_hits_within_the_gap_count_as_one_radius_and_empty_events_give_zeros():
    rng = np.random.default_rng(1)
    p = _line(0.2, -1.0, [100.0, 110.0, 119.0, 200.0], rng)  # 100/110/119 within 20 mm: one layer
    assert position_features(p)[POSITION_FEATURES.index("straightest_chain")] == 2
    assert np.array_equal(position_features(np.zeros((0, 3))), np.zeros(len(POSITION_FEATURES)))
    with pytest.raises(ValueError, match="pos_mm"):
        position_features(np.zeros((4, 2)))


def test_background_samples_do_not_depend_on_the_signal_muon_threshold(tmp_path):
    """``signal_min_pt_gev`` selects signal decays: a background sample (no decay) is keyed
    without it, so one background cache serves every threshold; signal samples are keyed with it."""
    from gs_data.track import TrackSimConfig
    from gs_data.track.generate import sample_dir

    plain, cut = TrackSimConfig(), TrackSimConfig(signal_min_pt_gev=1.0)
    assert sample_dir("bkg", 10, 0, tmp_path, cut) == sample_dir("bkg", 10, 0, tmp_path, plain)
    assert sample_dir("tau3mu", 10, 0, tmp_path, cut) != sample_dir("tau3mu", 10, 0, tmp_path, plain)
    assert sample_dir("zmumu", 50, 0, tmp_path, cut) != sample_dir("zmumu", 50, 0, tmp_path, plain)
    assert cut.for_process("bkg") == plain and cut.for_process("tau3mu") is cut
