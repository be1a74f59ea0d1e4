"""Fixtures shared by the gs-bench tests."""

from __future__ import annotations

import json

import pytest


def tiny_structural(seeds: int = 2, strategies=("popularity", "density"), methods=("erm",),
                    **settings: int) -> str:
    """The text of a tiny structural-shifts suite file on the embedded SYNTHETIC default graph
    (50:50 splits; ``settings`` are integer ``[settings]`` such as ``max_epochs``)."""
    lines = ['suite = "structural-shifts"', f"seeds = {seeds}", "[grid]",
             'dataset = ["synthetic-default"]', f"strategy = {json.dumps(list(strategies))}",
             'ratio = ["50:50"]', f"method = {json.dumps(list(methods))}", "[settings]"]
    lines += [f"{key} = {int(value)}" for key, value in settings.items()]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="session")
def tiny_suite():
    """:func:`tiny_structural`, for tests and fixtures of any scope."""
    return tiny_structural
