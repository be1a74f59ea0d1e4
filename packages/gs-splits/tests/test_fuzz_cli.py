"""Fuzz ``gs-splits make`` (issue 19): random bytes and random small edge lists give either a
split (exit 0) or exactly one error line naming the file (exit 2), never a traceback."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gs_splits.cli import main

FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _run(path: Path, *extra: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["make", str(path), "--out", str(path.with_name("split")), *extra])
    return code, err.getvalue()


def _check(code: int, err: str, path: Path) -> None:
    assert "Traceback" not in err, err
    assert code in (0, 2), (code, err)
    if code == 2:
        lines = [ln for ln in err.strip().splitlines() if ln]
        assert len(lines) == 1, err
        assert lines[0].startswith("gs-splits make: error: ") and str(path) in lines[0], lines[0]
    else:
        assert path.with_name("split.npz").is_file()


@FUZZ
@given(data=st.binary(max_size=600), suffix=st.sampled_from([".txt", ".csv", ".npz", ".npy", ".mat", ""]))
def test_random_bytes(tmp_path_factory, data, suffix):
    path = tmp_path_factory.mktemp("fuzz") / f"graph{suffix}"
    path.write_bytes(data)
    _check(*_run(path), path)


@st.composite
def _edge_list_text(draw) -> str:
    n_edges = draw(st.integers(0, 25))
    ids = st.one_of(st.integers(0, 30), st.integers(-3, 2**40), st.sampled_from(["x", "1.5", "", "+3", "1e3"]))
    sep = draw(st.sampled_from([" ", "\t", ",", ", ", ";"]))
    extra = draw(st.sampled_from([[], ["1"], ["0.5"], ["w", "7"]]))
    lines = []
    for _ in range(n_edges):
        cols = [str(draw(ids)), str(draw(ids)), *extra]
        if draw(st.integers(0, 9)) == 0:
            cols = cols[: draw(st.integers(0, len(cols)))]
        line = sep.join(cols)
        if draw(st.booleans()):
            line += draw(st.sampled_from(["  # a, b", "#", " # 1 2 3"]))
        lines.append(line)
    if draw(st.booleans()):
        lines.insert(0, draw(st.sampled_from(["# source, target", "% header", "u v"])))
    return "\n".join(lines)


@FUZZ
@given(text=_edge_list_text(), strategy=st.sampled_from(["popularity", "locality", "density", "random"]),
       fail_on_ties=st.booleans())
def test_random_small_edge_lists(tmp_path_factory, text, strategy, fail_on_ties):
    path = tmp_path_factory.mktemp("fuzz") / "edges.txt"
    path.write_text(text)
    extra = ["-s", strategy] + (["--fail-on-ties"] if fail_on_ties else [])
    _check(*_run(path, *extra), path)


@FUZZ
@given(edges=st.lists(st.tuples(st.integers(-2, 40), st.integers(-2, 40)), max_size=30),
       kind=st.sampled_from(["npz", "npy"]), transpose=st.booleans())
def test_random_small_edge_arrays(tmp_path_factory, edges, kind, transpose):
    folder = tmp_path_factory.mktemp("fuzz")
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    e = e if transpose else e.T
    path = folder / f"g.{kind}"
    if kind == "npz":
        np.savez(path, edge_index=e)
    else:
        np.save(path, e)
    _check(*_run(path), path)
