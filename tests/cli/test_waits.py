"""Issue 13 item 10: a wait of a second or more shows a spinner on a terminal saying what it waits for (a GitHub
API retry, the model, an OTLP endpoint); pipes get nothing; a wait under a second draws nothing."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest

from repopilot.cli import progress
from repopilot.cli.rich_console import SanitisingConsole as _Console
from repopilot.core import Retry, RetryPolicy, retry_call, waiting
from tests.cli.terminal import run_in_terminal


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    buffer = io.StringIO()
    monkeypatch.setattr(progress, "err", _Console(file=buffer, force_terminal=True, width=80))
    monkeypatch.setattr(progress, "stderr_is_terminal", lambda: True)
    monkeypatch.setattr(progress._WaitSpinner, "DELAY", 0.1)
    return buffer


def test_a_retry_pause_says_what_it_waits_for(terminal: io.StringIO) -> None:
    calls: list[int] = []

    def attempt() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise Retry("server error", status=502)
        return "ok"

    with progress.wait_spinner():
        assert retry_call(attempt, RetryPolicy(initial_wait=0.6, jitter=0), label="GitHub API") == "ok"
    assert "GitHub API: server error (HTTP 502); retry 1 of 2 in 1s" in terminal.getvalue()


def test_a_short_wait_draws_nothing_and_nobody_listening_is_fine(terminal: io.StringIO) -> None:
    with progress.wait_spinner(), waiting("quick"):
        pass
    assert terminal.getvalue() == ""
    with waiting("nobody listens"):  # outside a command: no listener, nothing happens
        pass


SLOW_MODEL = """
import sys, time
from repopilot.providers import PROVIDERS, ProviderInfo, ScriptedModel
def reply(messages, tools):
    time.sleep(1.6)
    return "The build fails because add() subtracts."
PROVIDERS['slow'] = ProviderInfo(name='slow', factory=lambda m, env: ScriptedModel(reply))
from repopilot.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_the_model_wait_shows_on_an_80_column_terminal(git_repo: Path, tmp_path: Path) -> None:
    screen = run_in_terminal(["ask", "why does the build fail?", "--repo", str(git_repo), "--json"],
                             env={"REPOPILOT_RUNS_DIR": str(tmp_path / "runs"), "REPOPILOT_MODEL": "slow:x"},
                             python_args=("-c", SLOW_MODEL))
    assert screen.code == 0, screen.text
    assert "waiting for the model script" in screen.raw  # drawn while it waited
    assert "waiting for the model" not in screen.text  # and cleared once the reply came
    assert json.loads(screen.text[screen.text.index("{"):screen.text.rindex("}") + 1].replace("\n", ""))


def test_a_pipe_gets_no_spinner(capsys: pytest.CaptureFixture[str]) -> None:
    with progress.wait_spinner(), waiting("slow thing"):
        time.sleep(0.05)
    assert capsys.readouterr().err == ""
