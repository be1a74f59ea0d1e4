"""The run lock under contention (issue 34): 2 processes x 2000 rounds, 0 double acquisitions.

Each round both processes are released by one write to a shared pipe and try
``RunLock.acquire`` on the same folder at the same moment; every other round starts with a stale
lock (a dead pid of this host) that both try to take over. A round where both report holding
the lock is a double acquisition. The lock before issue 34 created ``.lock`` empty and wrote
its content in a second step, and took a stale lock over by reading then deleting it: both
processes held it in several rounds of 2000.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

ROUNDS = 2000

CHILD = r"""
import logging, os, sys
logging.disable(logging.CRITICAL)
from gs_bench.store import LockedError, RunLock
go, out = int(sys.argv[1]), sys.argv[2]
lock = RunLock(out)
while True:
    b = os.read(go, 1)
    if b != b"g":
        break
    try:
        lock.acquire()
        ok = 1
    except LockedError:
        ok = 0
    sys.stdout.write(f"{ok}\n")
    sys.stdout.flush()
    sys.stdin.readline()  # the parent has read both answers
    if ok:
        lock.release()
    sys.stdout.write("r\n")
    sys.stdout.flush()
"""


@pytest.mark.slow
def test_two_processes_never_hold_the_lock_at_once(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    lock = out / ".lock"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = json.dumps({"host": socket.gethostname(), "pid": dead.pid, "started": "x"})
    go_r, go_w = os.pipe()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(go_r), str(out)], pass_fds=(go_r,),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for _ in range(2)
    ]
    os.close(go_r)
    doubles = nobody = 0
    try:
        for r in range(ROUNDS):
            if r % 2:
                lock.write_text(stale)  # both children race to take this stale lock over
            os.write(go_w, b"gg")  # one byte for each child, released together
            answers = [p.stdout.readline().strip() for p in procs]
            assert all(a in ("0", "1") for a in answers), (answers, [p.poll() for p in procs])
            held = sum(int(a) for a in answers)
            doubles += held == 2
            nobody += held == 0
            for p in procs:
                p.stdin.write("\n")
                p.stdin.flush()
            assert [p.stdout.readline().strip() for p in procs] == ["r", "r"]
            lock.unlink(missing_ok=True)  # a lock the old code left behind after a double hold
    finally:
        os.write(go_w, b"qq")
        os.close(go_w)
        for p in procs:
            p.stdin.close()
            p.wait(timeout=30)
    assert doubles == 0, f"both processes held the lock in {doubles} of {ROUNDS} rounds"
    assert nobody == 0, f"neither process got the lock in {nobody} of {ROUNDS} rounds"
    assert not lock.exists()
    leftovers = sorted(p.name for p in out.iterdir() if p.name != ".lock.takeover")
    assert leftovers == [], f"temporary lock files left behind: {leftovers}"
