"""Issue 13: long output on a terminal goes through a pager (REPOPILOT_PAGER / PAGER, default `less -FRX`);
output that fits and pipes are printed as they are. Shell completion: `--show-completion` and
`--install-completion` work, and the completion itself answers."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.terminal import ROOT, run_in_terminal

EXAMPLE = str(ROOT / "examples" / "go-build-error.log")
FAKE_PAGER = "sh -c 'echo PAGED-BY-TEST; cat'"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"REPOPILOT_RUNS_DIR": str(tmp_path / "runs"), "REPOPILOT_PAGER": FAKE_PAGER}


def test_long_output_on_a_terminal_is_paged(env: dict[str, str]) -> None:
    short_screen = run_in_terminal(["diagnose", EXAMPLE, "-v", "-q"], env=env, rows=20)
    # The pager got the whole text: its own first line, then the diagnosis (the screen has scrolled past both).
    raw = short_screen.raw
    assert short_screen.code == 0 and "PAGED-BY-TEST" in raw
    assert raw.index("PAGED-BY-TEST") < raw.index("credentials_test.go:88")
    assert "8 causal lines" in short_screen.lines[-1]
    shown = run_in_terminal(["runs", "show", "latest"], env=env, rows=20)
    assert "PAGED-BY-TEST" in shown.raw and shown.raw.index("PAGED-BY-TEST") < shown.raw.index("timeline")


def test_output_that_fits_or_is_piped_is_not_paged(env: dict[str, str]) -> None:
    tall = run_in_terminal(["diagnose", EXAMPLE, "-q"], env=env, rows=300)
    assert tall.code == 0 and "PAGED-BY-TEST" not in tall.text
    piped = subprocess.run([sys.executable, "-m", "repopilot.cli.main", "diagnose", EXAMPLE, "-v", "-q"],
                           capture_output=True, text=True, env={**os.environ, **env}, cwd=ROOT, timeout=60,
                           check=True)
    assert "PAGED-BY-TEST" not in piped.stdout and "credentials_test.go:88" in piped.stdout


def _cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    # Typer otherwise finds the shell by walking up the process tree and ignores the SHELL argument: run from
    # `sh -c` (as some CI runners do) the test would ask for sh's completion. Typer's own switch makes the
    # completion options take the shell they are given.
    pinned = {"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    return subprocess.run([sys.executable, "-m", "repopilot.cli.main", *args], capture_output=True, text=True,
                          env={**os.environ, **pinned, **env}, cwd=ROOT, timeout=60, check=False)


def test_completion_is_shown_installed_and_answers(tmp_path: Path) -> None:
    shown = _cli(["--show-completion", "bash"], {})
    assert shown.returncode == 0 and "_REPOPILOT_COMPLETE=complete_bash" in shown.stdout
    home = tmp_path / "home"
    home.mkdir()
    installed = _cli(["--install-completion", "bash"], {"HOME": str(home), "SHELL": "/bin/bash"})
    assert installed.returncode == 0, installed.stderr
    script = home / ".bash_completions" / "repopilot.sh"
    assert script.is_file() and str(script) in (home / ".bashrc").read_text()
    # What bash asks when the person presses Tab after `repopilot runs `.
    asked = _cli([], {"_REPOPILOT_COMPLETE": "complete_bash", "COMP_WORDS": "repopilot runs ", "COMP_CWORD": "2"})
    assert asked.stdout.split() == ["list", "show", "prune"]
    asked = _cli([], {"_REPOPILOT_COMPLETE": "complete_bash", "COMP_WORDS": "repopilot diagnose --fu",
                      "COMP_CWORD": "2"})
    assert asked.stdout.split() == ["--full-lines"]
