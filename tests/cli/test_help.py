"""`--help` of every command and subcommand works and reads cleanly (issue 13 item 6: `github logs --help`
crashed with a rich MarkupError because `[/job/JOB_ID]` in its help was read as markup)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import typer

from repopilot.cli.main import app, main


def _command_paths() -> Iterator[list[str]]:
    def walk(command: object, path: list[str]) -> Iterator[list[str]]:
        yield path
        for name, sub in sorted((getattr(command, "commands", None) or {}).items()):
            yield from walk(sub, [*path, name])

    yield from walk(typer.main.get_command(app), [])


PATHS = list(_command_paths())


def test_the_walk_finds_every_command() -> None:
    names = {" ".join(p) for p in PATHS}
    assert {"", "diagnose", "fix", "approve", "ask", "runs show", "trace export", "github logs",
            "github report", "models"} <= names


@pytest.mark.parametrize("path", PATHS, ids=[" ".join(p) or "repopilot" for p in PATHS])
def test_help_exits_0_without_placeholders(path: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*path, "--help"]) == 0
    out, err = capsys.readouterr()
    assert "Usage:" in out and err == ""
    assert "<bool>" not in out and "internal error" not in out
    # No typer placeholders: `SOURCE` and `--repo PATH`, not `{source}`, `<str>` or `<int range>`.
    assert not re.search(r"<\w[\w ]*>|\{\w+\}", out), out
