#!/bin/bash
# the Ray half of issue 34's worker line, on fresh empty caches (docs/qa/issue-34-workers.md)
cd /tmp
export GSB_PY=/work/venv-ray/bin/python
# Ray >= 2.59 turns token authentication on for clusters that `ray start` makes; the token is in
# ~/.ray/auth_token, and a client uses it only with RAY_AUTH_MODE=token in its environment
export RAY_AUTH_MODE=token
# the workers run in ray start's environment: the packages under test, as the driver sees them
export PYTHONPATH=$(ls -d /work/wt-w/packages/*/src | tr '\n' ':')/work/wt-w/apps/bench/src
/work/venv-ray/bin/ray start --head --num-cpus 4 --include-dashboard=false --disable-usage-stats --port 6399 > /work/runs/ray-start.log 2>&1 || { echo "ray start failed"; exit 1; }
ADDR=$(grep -o "[0-9.]*:6399" /work/runs/ray-start.log | head -1)
echo "address $ADDR"
for spec in "ray2-structural structural 2" "ray4-structural structural 4" "ray4-gess120 gess120 4" "ray2-gess120 gess120 2"; do
  set -- $spec
  echo "== $1 $(date +%T)"
  bash /work/main/docs/qa/issue-34-workers/runone.sh $1 $2 ray $3 $ADDR
  cat /work/w-scratch/runs/$1/result
done
/work/venv-ray/bin/ray stop --force
