"""Physics summaries of Track events (numpy only): helix radii and GeSS table 5 statistics."""

from __future__ import annotations

import numpy as np

from gs_data.track.store import TrackEvents

#: Mean number of tracks per event, GeSS table 5 (Pileup Shift).
GESS_MEAN_TRACKS = {10: 55.76, 50: 232.58, 90: 408.38}
#: Mean signal-track radius in mm, GeSS table 5 (Signal Shift); background tracks: 2724.96 mm.
GESS_MEAN_SIGNAL_RADIUS_MM = {
    "tau3mu": 3979.66,
    "zp10": 8754.34,
    "zp20": 16014.98,
    "zmumu": 58092.27,
}
GESS_MEAN_BACKGROUND_RADIUS_MM = 2724.96


def helix_radius_mm(pt_gev, bfield_tesla: float):
    """Transverse radius of curvature of a charged track, R = pT / (0.3 B).

    The textbook relation (GeSS section 3.2.1 and table 5 use the radius of signal tracks):
    ``R [m] = pT [GeV] / (0.3 * |q| * B [T])`` for unit charge; returned in mm.

    Parameters
    ----------
    pt_gev
        Transverse momentum in GeV (scalar or array).
    bfield_tesla
        Field strength in tesla (> 0).
    """
    if not bfield_tesla > 0:
        raise ValueError(f"bfield_tesla must be > 0, got {bfield_tesla!r}")
    return np.asarray(pt_gev, dtype=np.float64) / (0.3 * bfield_tesla) * 1000.0


def fit_circle(x, y) -> tuple[float, float, float]:
    """Algebraic least-squares circle fit (Kasa fit) to points in the transverse plane.

    Solves ``x^2 + y^2 + D x + E y + F = 0`` in the least-squares sense; the centre is
    ``(-D/2, -E/2)`` and the radius ``sqrt(D^2/4 + E^2/4 - F)``. Exact for points on a circle.

    Parameters
    ----------
    x, y
        Coordinates, at least three points not on a line.

    Returns
    -------
    (xc, yc, radius)
    """
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if x.shape != y.shape or x.size < 3:
        raise ValueError(f"x and y must have the same length >= 3, got {x.size} and {y.size}")
    # centre the points for numerical stability
    mx, my = x.mean(), y.mean()
    u, v = x - mx, y - my
    a = np.column_stack([u, v, np.ones_like(u)])
    b = -(u * u + v * v)
    (d, e, f), _, rank, _ = np.linalg.lstsq(a, b, rcond=None)
    r2 = d * d / 4 + e * e / 4 - f
    if rank < 3 or not np.isfinite(r2) or r2 <= 0:
        raise ValueError("the points do not determine a circle (collinear or degenerate)")
    return float(mx - d / 2), float(my - e / 2), float(np.sqrt(r2))


def mean_tracks_per_event(events: TrackEvents) -> float:
    """Mean number of distinct particles with hits per event (GeSS table 5, "#Tracks")."""
    if len(events) == 0:
        raise ValueError("events is empty")
    return float(events.num_tracks().mean())


def signal_track_radii_mm(events: TrackEvents, bfield_tesla: float | None = None) -> np.ndarray:
    """Radius R = pT / (0.3 B) of every signal track (one value per signal particle with hits).

    pT is the transverse momentum of the particle at its first hit (``tpx``, ``tpy`` of the
    earliest hit), the quantity GeSS table 5 averages.
    """
    if bfield_tesla is None:
        bfield_tesla = float(events.meta.get("config", {}).get("bfield_tesla", 2.0))
    out = []
    h = events.hits
    for i in range(len(events)):
        a, b = events.hit_ptr[i], events.hit_ptr[i + 1]
        lab = h["node_label"][a:b] == 1
        if not lab.any():
            continue
        pid = h["particle_id"][a:b][lab]
        tt = h["tt"][a:b][lab]
        pt = np.hypot(h["tpx"][a:b][lab], h["tpy"][a:b][lab])
        for p in np.unique(pid):
            sel = pid == p
            out.append(pt[sel][np.argmin(tt[sel])])
    return helix_radius_mm(np.asarray(out, dtype=np.float64), bfield_tesla)


def background_track_radii_mm(events: TrackEvents, bfield_tesla: float | None = None) -> np.ndarray:
    """Radius R = pT / (0.3 B) of every non-signal track, pT at its first hit."""
    if bfield_tesla is None:
        bfield_tesla = float(events.meta.get("config", {}).get("bfield_tesla", 2.0))
    h = events.hits
    pid, tt = h["particle_id"], h["tt"]
    pt = np.hypot(h["tpx"], h["tpy"])
    out = []
    for i in range(len(events)):
        a, b = events.hit_ptr[i], events.hit_ptr[i + 1]
        keep = h["node_label"][a:b] == 0
        p, t, q = pid[a:b][keep], tt[a:b][keep], pt[a:b][keep]
        order = np.lexsort((t, p))
        first = np.ones(order.size, dtype=bool)
        first[1:] = p[order][1:] != p[order][:-1]
        out.append(q[order][first])
    vals = np.concatenate(out) if out else np.zeros(0)
    return helix_radius_mm(vals, bfield_tesla)


#: :func:`position_features`' columns, in order.
POSITION_FEATURES = ("hit_count", "aligned_edges", "straightest_chain", "hits_on_chains", "aligned_fraction")


def _azimuth_gap(a, b):
    """|a - b| for angles, wrapped into [0, pi]."""
    return np.abs((a - b + np.pi) % (2 * np.pi) - np.pi)


def position_features(pos_mm, *, k: int = 5, edge_dphi: float = 2e-3, edge_dtheta: float = 5e-3,
                      chain_dphi: float = 5e-3, chain_deta: float = 0.05, chain_gap_mm: float = 20.0,
                      chain_min: int = 5) -> np.ndarray:
    """Position-only physics summaries of one Track event (issue 53's honest baselines: what a
    few lines of physics read off the hit positions, with no learning beyond a threshold).

    ``pos_mm``: the (n_hits, 3) hit positions in mm (the raw ACTS ``tx, ty, tz``). Returns the
    :data:`POSITION_FEATURES`, as floats:

    * ``hit_count``: n_hits (the hit-count shortcut);
    * ``aligned_edges``: kNN edges (``k`` neighbours on the unit directions, as the backbones'
      graph; self loops left out) whose two hits keep their azimuth, ``|dphi| < edge_dphi``,
      while their polar angle changes, ``|dtheta| > edge_dtheta``: a stiff track from the
      interaction region keeps its azimuth along its hits, a soft one bends
      (``apps/bench/checks/track_phi_alignment_baseline.py``, whose best rule on the ci
      Track-Pileup train part these defaults are);
    * ``straightest_chain``: over every hit, the number of distinct radii (``|p|``, distinct
      when more than ``chain_gap_mm`` apart: one per detector layer crossed) among the hits
      within ``|dphi| < chain_dphi`` and ``|deta| < chain_deta`` of it, the hit included: the
      length of the longest straight line of hits from the beam line (a muon of tens of GeV);
    * ``hits_on_chains``: how many hits have such a chain of at least ``chain_min`` radii;
    * ``aligned_fraction``: ``aligned_edges / (k * n_hits)`` (0 without hits).

    An event without hits gives zeros.
    """
    from scipy.spatial import cKDTree

    p = np.asarray(pos_mm, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] != 3:
        raise ValueError(f"pos_mm must be an (n_hits, 3) array, got shape {p.shape}")
    n = p.shape[0]
    if n == 0:
        return np.zeros(len(POSITION_FEATURES))
    r = np.linalg.norm(p, axis=1)
    u = p / np.maximum(r, 1e-9)[:, None]
    phi = np.arctan2(u[:, 1], u[:, 0])
    theta = np.arccos(np.clip(u[:, 2], -1.0, 1.0))
    aligned = 0
    kk = min(k, n - 1)
    if kk >= 1:
        nn = cKDTree(u).query(u, k=kk + 1)[1][:, 1:]
        aligned = int(((_azimuth_gap(phi[nn], phi[:, None]) < edge_dphi)
                       & (np.abs(theta[nn] - theta[:, None]) > edge_dtheta)).sum())
    eta = -np.log(np.tan(np.clip(theta, 1e-9, np.pi - 1e-9) / 2.0))
    # windows in (phi, eta) scaled to a unit Chebyshev ball; hits near phi = +-pi are copied
    # across the seam so that a window that straddles it sees them
    pts = np.column_stack([phi / chain_dphi, eta / chain_deta])
    seam = np.abs(phi) > np.pi - chain_dphi
    extra = np.flatnonzero(seam)
    shifted = pts[extra].copy()
    shifted[:, 0] -= np.sign(phi[extra]) * (2 * np.pi / chain_dphi)
    owner = np.concatenate([np.arange(n), extra])
    pairs = cKDTree(np.vstack([pts, shifted])).query_pairs(1.0 - 1e-12, p=np.inf, output_type="ndarray")
    a, b = owner[pairs[:, 0]], owner[pairs[:, 1]]
    # every hit's window: itself and its neighbours (both directions of each pair); a hit seen
    # twice (through its copy across the seam) repeats a radius, which opens no gap
    i = np.concatenate([np.arange(n), a, b])
    j = np.concatenate([np.arange(n), b, a])
    order = np.lexsort((r[j], i))
    i_s, r_s = i[order], r[j][order]
    gap = (np.diff(r_s) > chain_gap_mm) & (i_s[1:] == i_s[:-1])
    chains = 1 + np.bincount(i_s[1:][gap], minlength=n)
    return np.array([n, aligned, chains.max(), (chains >= chain_min).sum(), aligned / (k * n)],
                    dtype=np.float64)
