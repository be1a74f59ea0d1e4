"""Fuzz the suite-config loader through ``gs-bench run SUITE --dry-run`` (issue 19): random
TOML (random keys near the real ones, random values and types) and random bytes give either a
valid plan (exit 0) or exactly one error line (exit 2), never a traceback."""

from __future__ import annotations

import contextlib
import io
import json

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gs_bench.cli import main

FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

KEYS = ["suite", "seeds", "seed", "description", "paper", "grid", "settings", "profiles", "demo", "ci",
        "full", "dmeo", "dataset", "strategy", "ratio", "method", "model", "split", "fold", "shift",
        "backbone", "algorithm", "lr", "max_epochs", "max_epoch", "patience", "root", "domains", "bins",
        "targets", "ensemble_size", "noise_levels", "batch_size"]
SCALARS = st.one_of(
    st.integers(-3, 5), st.floats(allow_nan=True, allow_infinity=True, width=32), st.booleans(),
    st.sampled_from(["structural-shifts", "edgewise", "lebed", "gess", "synthetic-default", "erm",
                     "density", "50:50", "gcn", "feature", "egnn", "fast", "shared", "cora-ml", ""]),
)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3), max_leaves=4)


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(repr(v), repr(v))
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, str):
        return json.dumps(v)
    return str(v)


@st.composite
def _suite_text(draw) -> str:
    lines = []
    if draw(st.integers(0, 5)):
        lines.append(f"suite = {_toml_value(draw(SCALARS))}")
    for key in draw(st.lists(st.sampled_from(KEYS), max_size=3, unique=True)):
        if key != "suite":
            lines.append(f"{key} = {_toml_value(draw(VALUES))}")
    tables = st.sampled_from(["grid", "settings", "profiles.demo", "profiles.ci.grid", "profiles.ci.settings",
                              "profiles.demo.settings", "profiles.dmeo", "gird", "settings.train"])
    for table in draw(st.lists(tables, max_size=4, unique=True)):
        lines.append(f"[{table}]")
        for key in draw(st.lists(st.sampled_from(KEYS), max_size=4, unique=True)):
            lines.append(f"{key} = {_toml_value(draw(VALUES))}")
    return "\n".join(lines) + "\n"


def _run(path, profile: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["run", str(path), "--profile", profile, "--out", str(path.with_name("out")),
                     "--dry-run", "--no-progress"])
    return code, err.getvalue()


def _check(code: int, err: str) -> None:
    assert "Traceback" not in err, err
    assert code in (0, 2), (code, err)
    lines = [ln for ln in err.strip().splitlines() if ln]
    assert len(lines) == 1, err
    if code == 2:
        assert lines[0].startswith("gs-bench: cannot start: "), lines[0]


VALID = ('suite = "structural-shifts"\n[grid]\ndataset = ["synthetic-default"]\nstrategy = ["density"]\n'
         'ratio = ["50:50"]\nmethod = ["erm"]\n[settings]\nlr = 0.001\n')


@FUZZ
@example(text=VALID, profile="demo")
@given(text=_suite_text(), profile=st.sampled_from(["demo", "ci", "full"]))
def test_random_suite_toml(tmp_path_factory, monkeypatch, text, profile):
    monkeypatch.setenv("GS_DATA_ROOT", str(tmp_path_factory.getbasetemp() / "empty-data-root"))
    path = tmp_path_factory.mktemp("fuzz") / "suite.toml"
    path.write_text(text)
    _check(*_run(path, profile))


@FUZZ
@given(data=st.binary(max_size=300))
def test_random_bytes_as_suite_file(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "suite.toml"
    path.write_bytes(data)
    code, err = _run(path, "demo")
    _check(code, err)
    assert code == 2 or data.strip() == b""
