"""gs-algos' one atomic-write helper (:mod:`gs_algos.checkpoint`): checkpoints and other files."""

from __future__ import annotations

import os
import stat

import pytest
import torch

from gs_algos.checkpoint import atomic_save, atomic_write, load_checkpoint


@pytest.mark.parametrize("mask", [0o022, 0o077])
def test_atomic_save_follows_the_umask_and_round_trips(tmp_path, mask):
    old = os.umask(mask)
    try:
        path = atomic_save({"model": {"w": torch.ones(2)}, "epoch": 3}, tmp_path / "ck" / "last.pt")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask
    ck = load_checkpoint(path)
    assert ck["epoch"] == 3 and torch.equal(ck["model"]["w"], torch.ones(2))


def test_atomic_write_keeps_the_old_file_when_writing_fails(tmp_path):
    target = tmp_path / "README.md"
    with atomic_write(target, "w", encoding="utf-8") as fh:
        fh.write("old")
    with pytest.raises(ValueError), atomic_write(target, "w", encoding="utf-8") as fh:
        fh.write("half of the new")
        raise ValueError("serialisation failed")
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["README.md"]


class _Payload:
    """Unpickling this runs ``os.system('touch <marker>')`` (issue 34)."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def test_a_crafted_checkpoint_is_refused_naming_the_file_and_runs_nothing(tmp_path):
    marker = tmp_path / "PWNED"
    path = tmp_path / "last.pt"
    torch.save({"model": {}, "epoch": 1, "tracks": _Payload(marker)}, path)
    with pytest.raises(ValueError) as err:
        load_checkpoint(path)
    msg = str(err.value)
    assert str(path) in msg and "posix.system" in msg and "\n" not in msg
    assert "weights_only=False" not in msg  # torch's advice to run the file's code is not passed on
    assert not marker.exists()


def test_a_damaged_checkpoint_is_one_line_naming_the_file(tmp_path):
    path = tmp_path / "last.pt"
    path.write_bytes(b"not a torch file")
    with pytest.raises(ValueError, match=f"{path}: cannot load this checkpoint safely"):
        load_checkpoint(path)


MEMBER_CHILD = r"""
import os, sys, time
import torch
from gs_algos.node_methods import MemberCache
go, root, log = int(sys.argv[1]), sys.argv[2], sys.argv[3]
cache = MemberCache(root, tag="race")
model = torch.nn.Linear(3, 2)
key = "k" * 32


def train(m):
    with open(log, "a") as fh:
        fh.write(f"{os.getpid()}\n")
    time.sleep(0.5)  # training takes a while: the other process asks meanwhile
    torch.manual_seed(7)
    m.reset_parameters()
    return 4


print("ready", flush=True)
os.read(go, 1)
epoch, loaded = cache.load_or_train(key, model, train)
print(epoch, int(loaded), float(model.weight.sum()), flush=True)
"""


def test_two_processes_needing_one_member_train_it_once(tmp_path):
    """Issue 34: ensemble members shared by gs-bench workers (MemberCache) are trained once;
    the second process waits and loads what the first stored."""
    import subprocess
    import sys

    log = tmp_path / "trained.txt"
    go_r, go_w = os.pipe()
    procs = [subprocess.Popen([sys.executable, "-c", MEMBER_CHILD, str(go_r), str(tmp_path / "m"), str(log)],
                              pass_fds=(go_r,), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    os.close(go_r)
    try:
        for p in procs:
            assert p.stdout.readline().strip() == "ready", p.communicate()[1][-3000:]
        os.write(go_w, b"gg")
    finally:
        os.close(go_w)
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e[-2000:] for _, e in outs]
    assert len(log.read_text().split()) == 1, "the member was trained by both processes"
    results = sorted(o.split() for o, _ in outs)
    assert [r[1] for r in results] == ["0", "1"]  # one trained, one loaded
    assert results[0][0] == results[1][0] == "4" and results[0][2] == results[1][2]


def test_a_checkpoint_path_that_is_a_folder_is_named_as_a_folder(tmp_path):
    """Issue 34 QA (S9): a folder was reported as "no checkpoint at PATH"."""
    (tmp_path / "d.pt").mkdir()
    with pytest.raises(IsADirectoryError, match=r"d\.pt is a folder, not a checkpoint file"):
        load_checkpoint(tmp_path / "d.pt")
