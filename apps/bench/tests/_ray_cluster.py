"""A local multi-node Ray cluster for the cluster tests, run as its own process.

``python _ray_cluster.py NODES`` starts a head node without CPUs (so no job runs beside the
driver's Ray services) and ``NODES`` worker nodes with one CPU each
(:class:`ray.cluster_utils.Cluster`, Ray's own multi-node test harness), prints one JSON line
``{"address": ..., "nodes": [...]}`` and keeps the cluster up until its stdin closes (the
test's fixture ends, or the test process dies), then shuts every node down.

Started in a folder of its own: the nodes' worker processes run there, never in the
driver's working directory (issue 18: a driver-relative path must not reach a worker).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time


def main() -> None:
    from ray.cluster_utils import Cluster

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    parent = os.getppid()
    cluster = Cluster(initialize_head=True,
                      head_node_args={"num_cpus": 0, "include_dashboard": False})
    nodes = [cluster.add_node(num_cpus=1) for _ in range(n)]
    cluster.wait_for_nodes()
    print(json.dumps({"address": cluster.address, "nodes": [x.node_id for x in nodes]}), flush=True)

    def watch() -> None:  # the test process died without closing our stdin: go too
        while os.getppid() == parent:
            time.sleep(1)
        cluster.shutdown()
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()
    try:
        sys.stdin.read()  # until EOF
    finally:
        cluster.shutdown()


if __name__ == "__main__":
    main()
