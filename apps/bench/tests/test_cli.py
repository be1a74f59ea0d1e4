"""The CLI explains itself."""

from __future__ import annotations

import pytest

from gs_bench.cli import main


def test_help_lists_commands_and_examples(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for word in ("demo", "run", "report", "list", "Examples"):
        assert word in text


@pytest.mark.parametrize("command", ["run", "report", "demo"])
def test_each_command_has_help(capsys, command):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert "usage: gs-bench" in capsys.readouterr().out


def test_list_shows_suites_profiles_and_job_counts(capsys):
    assert main(["list"]) == 0
    text = capsys.readouterr().out
    assert "structural-shifts" in text and "edgewise" in text
    assert "--profile demo" in text and "jobs" in text


def test_report_of_an_empty_folder_says_what_to_do(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    assert "gs-bench run" in capsys.readouterr().err
