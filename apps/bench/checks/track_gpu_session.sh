#!/usr/bin/env bash
# The prepared device check of issue 29's last line (a Track ERM job of >= 2,000 training events
# trained on a GPU to the learnability bar: Test-ID >= 85 and 15 points above the hit count).
#
# Here, on the CPU, first (about 10 CPU minutes: 3,000 PU10 + 400 PU50 events simulated into
# the cache, then exported as coordinates; .gpu/ is git-ignored and sent with carry):
#   python apps/bench/checks/track_gpu_job.py export --dataset track-pileup-pu50 \
#       --sizes 1500,1500,200,100,100,200 --out .gpu/pileup-2250.npz
#   bash apps/bench/checks/track_gpu_session.sh cpu-smoke       # 1 epoch of 32 events, here
# (PYTHON: the interpreter, default python3.) There (the device tool, carry [".gpu/pileup-2250.npz"] (38.5 MB; the whole .gpu/ can pass the 64 MiB carry limit), timeout ~480 s; H100 run H took 97 s for 80 epochs):
#   bash apps/bench/checks/track_gpu_session.sh cuda
# Writes $OUT/<run>.json and .log per run (4 runs, 8 files): EGNN ERM on the 2,243 training
# events at GeSS's batch of 256, with GeSS's edge direction (the paper profile) and with the
# ci profile's beam frame in absolute value, 120 epochs each; then DGCNN and Point Transformer
# with the beam frame, 60 epochs (Point Transformer with the ci profile's batch norm in its
# blocks and edge-feature positional term, track_pt_norm / track_pt_delta; what the ci profile
# could not show for them).
set -euo pipefail
mode=${1:?usage: track_gpu_session.sh cuda|cpu-smoke}
out=${OUT:-/tmp/track-gpu-session}
mkdir -p "$out"
export PYTHONPATH=$(ls -d packages/*/src | paste -sd:):apps/bench/src
job=apps/bench/checks/track_gpu_job.py
data=${TRACK_EXPORT:-.gpu/pileup-2250.npz}  # TRACK_EXPORT: another export (a smoke test on the ci one)
if [ "$mode" = cuda ]; then
    dev=cuda; extra=(); long=120; short=60
elif [ "$mode" = cpu-smoke ]; then
    dev=cpu; extra=(--max-train 32); long=1; short=1
else
    echo "track_gpu_session.sh: mode must be cuda or cpu-smoke, got '$mode'" >&2; exit 2
fi
[ -f "$data" ] || { echo "track_gpu_session.sh: $data is missing: export it first (see the header)" >&2; exit 2; }
run() {  # name backbone epochs edge_features [more train flags]
    "${PYTHON:-python3}" "$job" train "$data" --device "$dev" --backbone "$2" --epochs "$3" --batch-size 256 \
        --edge-features "$4" "${@:5}" "${extra[@]}" --out "$out/$1.json" > "$out/$1.log" 2>&1 \
        || echo "run $1 failed (exit $?): see $1.log"
    tail -n 1 "$out/$1.log" | cut -c1-400
}
run K-pileup2250-egnn-gess egnn "$long" distance_direction
run L-pileup2250-egnn-beamabs egnn "$long" distance_direction_beam_abs
run M-pileup2250-dgcnn-beamabs dgcnn "$short" distance_direction_beam_abs
run N-pileup2250-pt-beamabs-bn-edgemlp pointtransformer "$short" distance_direction_beam_abs --pt-norm batch --pt-delta edge_mlp
