#!/bin/bash
# issue 32 line 1: papers100M-size SYNTHETIC graph, edge file -> CSR -> three splits, each under /usr/bin/time -v
# usage: run.sh STEP...   (convert popularity locality density)
export PYTHONPATH=/work/main/packages/gs-splits/src PYTHONDONTWRITEBYTECODE=1
PY=/work/venv/bin/python
M=/work/big/full
cd $M
T() { name=$1; shift; echo "$name start $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg) free $(free -g | awk '/Mem/{print $7}')G" >> $M/summary3.txt
  /usr/bin/time -v -o $M/r3-$name.time "$@" > $M/r3-$name.log 2>&1
  echo "$name rc=$? wall=$(grep 'Elapsed' $M/r3-$name.time | awk '{print $NF}') rss_kb=$(grep "Maximum resident" $M/r3-$name.time | awk '{print $NF}') end $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $M/summary3.txt; }
for step in "$@"; do
  case $step in
    convert) T convert $PY -m gs_splits.cli convert $M/papers100m.bin $M/csr --memory 8G --no-progress ;;
    degree_ordered) T degree_ordered $PY -c "import logging; logging.basicConfig(level=logging.INFO); from gs_splits.outofcore import degree_ordered_ondisk; degree_ordered_ondisk('$M/csr', '14G')" ;;
    popularity|locality|density) T $step $PY -m gs_splits.cli -v make $M/csr -s $step --seed 0 --memory 14G --out $M/out3/$step ;;
  esac
done
echo "DONE $* $(date +%T)" >> $M/summary3.txt
