#!/bin/bash
# issue 32 line 1: papers100M-size SYNTHETIC graph, edge file -> CSR -> three splits, each step under
# /usr/bin/time -v (one record per step: NAME.time, NAME.log, a line in summary.txt).
# usage: [M=/work/big/full] [RUN=3] run.sh STEP...   (convert degree_ordered popularity locality density)
# The recorded runs: run 1 `run.sh convert degree_ordered popularity locality density`;
# run 3 `RUN=3 run.sh popularity locality` (records r3-*.time, summary3.txt, out3/); run 4 (final
# code, the prefetching pull; the kept PageRank vector moved aside first) `RUN=4 run.sh popularity locality`.
here=$(cd "$(dirname "$0")" && pwd)
export PYTHONPATH=$here/../../src PYTHONDONTWRITEBYTECODE=1
PY=${PY:-python}
M=${M:-/work/big/full}
pre=${RUN:+r$RUN-}
sum=$M/summary$RUN.txt
cd "$M" || exit 2
T() { name=$1; shift; echo "$name start $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg) free $(free -g | awk '/Mem/{print $7}')G" >> "$sum"
  /usr/bin/time -v -o "$M/$pre$name.time" "$@" > "$M/$pre$name.log" 2>&1
  echo "$name rc=$? wall=$(grep 'Elapsed' "$M/$pre$name.time" | awk '{print $NF}') rss_kb=$(grep 'Maximum resident' "$M/$pre$name.time" | awk '{print $NF}') end $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$sum"; }
for step in "$@"; do
  case $step in
    convert) T convert $PY -m gs_splits.cli convert "$M/papers100m.bin" "$M/csr" --memory 8G --no-progress ;;
    degree_ordered) T degree_ordered $PY -c "import logging; logging.basicConfig(level=logging.INFO); from gs_splits.outofcore import degree_ordered_ondisk; degree_ordered_ondisk('$M/csr', '14G')" ;;
    popularity|locality|density) T $step $PY -m gs_splits.cli -v make "$M/csr" -s $step --seed 0 --memory 14G --out "$M/out$RUN/$step" ;;
    *) echo "run.sh: unknown step '$step' (accepted: convert degree_ordered popularity locality density)" >&2; exit 2 ;;
  esac
done
echo "DONE $* $(date +%T)" >> "$sum"
