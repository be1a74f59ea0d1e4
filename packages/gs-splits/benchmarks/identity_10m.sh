#!/bin/bash
# issue 32 line 2 at the final code: 10M-edge SYNTHETIC graph, 3 strategies x 2 seeds, in memory vs out of core (held, streamed)
# usage (in an empty folder): EDGES=/path/p10m.bin [PY=python] bash identity_10m.sh   (p10m.bin: synthetic_papers100m.py --nodes 690000 --edges 10000000)
set -e
export PYTHONPATH=${PYTHONPATH:-$(cd "$(dirname "$0")/../src" && pwd)}
G="${PY:-python} -m gs_splits.cli"
$G convert ${EDGES:-p10m.bin} csr --no-progress
for s in popularity locality density; do for seed in 0 1; do
  $G make csr -s $s --seed $seed --path memory --out mem-$s-$seed > /dev/null 2>&1
  $G make csr -s $s --seed $seed --path ondisk --memory 16G --out ooc16g-$s-$seed > /dev/null 2>&1
  $G make csr -s $s --seed $seed --memory 100M --out ooc100m-$s-$seed > ooc100m-$s-$seed.log 2>&1
  for o in ooc16g ooc100m; do for ext in npz json; do cmp mem-$s-$seed.$ext $o-$s-$seed.$ext && echo "identical $o-$s-$seed.$ext"; done; done
done; done
grep -h "path:" ooc100m-*.log | sort | uniq -c
