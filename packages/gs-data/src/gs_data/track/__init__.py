"""Track: particle-tracking events simulated with PYTHIA 8 and ACTS Fatras (GeSS section 3.2.1).

Importing this package needs neither PYTHIA nor ACTS; only the functions that simulate
events import them (the ``track`` extra; ``deps.INSTALL_HINT`` is the command).
"""

from gs_data.track.analysis import (
    GESS_MEAN_SIGNAL_RADIUS_MM,
    GESS_MEAN_TRACKS,
    POSITION_FEATURES,
    fit_circle,
    helix_radius_mm,
    mean_tracks_per_event,
    position_features,
    signal_track_radii_mm,
)
from gs_data.track.config import PILEUP_LEVELS, PROCESSES, ZPRIME_MASSES, TrackSimConfig
from gs_data.track.datasets import (
    TrackPileupSizes,
    TrackShiftDataset,
    TrackSignalSizes,
    build_track_pileup,
    build_track_signal,
    hit_count_subgroups,
    pileup_requests,
    signal_requests,
    split_counts,
)
from gs_data.track.generate import (
    cached_event_count,
    default_cache_dir,
    generate_events,
    generate_samples,
    make_simulator,
)
from gs_data.track.raw import gess_raw_path, load_gess_raw, save_gess_raw
from gs_data.track.store import TrackEvents, decode_barcode, encode_barcode, load_track_events

__all__ = [
    "GESS_MEAN_SIGNAL_RADIUS_MM",
    "GESS_MEAN_TRACKS",
    "PILEUP_LEVELS",
    "POSITION_FEATURES",
    "PROCESSES",
    "ZPRIME_MASSES",
    "TrackEvents",
    "TrackPileupSizes",
    "TrackShiftDataset",
    "TrackSignalSizes",
    "TrackSimConfig",
    "build_track_pileup",
    "build_track_signal",
    "cached_event_count",
    "decode_barcode",
    "default_cache_dir",
    "encode_barcode",
    "fit_circle",
    "generate_events",
    "generate_samples",
    "gess_raw_path",
    "helix_radius_mm",
    "hit_count_subgroups",
    "load_gess_raw",
    "load_track_events",
    "make_simulator",
    "mean_tracks_per_event",
    "pileup_requests",
    "position_features",
    "save_gess_raw",
    "signal_track_radii_mm",
    "signal_requests",
    "split_counts",
]
