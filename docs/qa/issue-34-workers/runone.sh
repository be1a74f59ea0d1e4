#!/bin/bash
# runone.sh LABEL SUITE EXECUTOR WORKERS [ADDRESS]: one measured run on fresh, empty caches
label=$1 suite=$2 ex=$3 w=$4 addr=$5
d=/work/w-scratch/runs/$label; rm -rf $d; mkdir -p $d
export GS_CACHE_DIR=$d/cache GS_DATA_ROOT=$d/data-root GS_SHARED_DATA=/work/shared/datasets
extra=(); [ -n "$addr" ] && extra=(--address $addr)
cmd=(/work/w-scratch/gsb run /work/wt-w/docs/qa/issue-34-workers/$suite-caches.toml --profile ci --executor $ex --workers $w "${extra[@]}" --out $d/out --no-progress)
echo "${cmd[*]}" > $d/cmd
start=$(date +%s.%N)
nice -n 19 "${cmd[@]}" > $d/console.txt 2>&1; rc=$?
end=$(date +%s.%N)
echo "rc=$rc wall=$(python3 -c "print(round($end-$start,1))")" > $d/result
/work/w-scratch/count.sh $d >> $d/result
