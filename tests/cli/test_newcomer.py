"""Issue 13, what a newcomer trips on, seen as a person sees it: through a pseudo-terminal at 80 columns
(tests/cli/terminal.py) or a pipe. Piped stdin is read; the bundled example is behind `--example`; the answer
comes first and the run summary after it, in one line unless a model was used or -v; Ctrl-C ends quietly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.terminal import ROOT, run_in_terminal

EXAMPLE = ROOT / "examples" / "go-build-error.log"
PYTEST_LOG = ("##[group]Run python -m pytest -q\n##[endgroup]\n"
              "FAILED tests/test_calc.py::test_add - assert -1 == 5\n1 failed in 0.03s\n"
              "##[error]Process completed with exit code 1.\n")
FIX = ("--- a/src/calc.py\n+++ b/src/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n"
       "+    return a + b\n")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"REPOPILOT_RUNS_DIR": str(tmp_path / "runs"), "REPOPILOT_CACHE_DIR": str(tmp_path / "cache"),
            "XDG_CONFIG_HOME": str(tmp_path / "config")}


def _piped(args: list[str], env: dict[str, str], stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "repopilot.cli.main", *args], input=stdin, capture_output=True,
                          env={**os.environ, **env}, cwd=ROOT, timeout=60, check=False)


def test_piped_stdin_without_source_is_the_log_diagnosed(env: dict[str, str]) -> None:
    done = _piped(["diagnose", "--format", "json"], env, PYTEST_LOG.encode())
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["source"] == "-" and report["category"] == "test"
    assert "credentials_test.go" not in done.stdout.decode()  # not the bundled Go example
    assert b"example" not in done.stderr


def test_a_terminal_stdin_without_source_is_a_usage_message(env: dict[str, str]) -> None:
    screen = run_in_terminal(["diagnose"], env=env)
    assert screen.code == 2
    assert "Traceback" not in screen.raw
    assert screen.lines[0].startswith("repopilot: no SOURCE given")
    assert "--example" in screen.text and "--log-failed | repopilot diagnose" in screen.text.replace("\n", "")


def test_the_example_is_behind_a_flag(env: dict[str, str]) -> None:
    screen = run_in_terminal(["diagnose", "--example"], env=env)
    assert screen.code == 0
    assert screen.lines[0].startswith("example: go-build-error.log: build")
    both = run_in_terminal(["diagnose", "--example", str(EXAMPLE)], env=env)
    assert both.code == 2 and both.lines[0].startswith("repopilot: --example diagnoses the bundled log")


def test_the_answer_comes_first_and_the_summary_is_one_line(env: dict[str, str]) -> None:
    screen = run_in_terminal(["diagnose", str(EXAMPLE)], env=env)
    assert screen.code == 0
    assert "build (decided by rules" in screen.lines[0]
    assert all(len(line) <= 80 for line in screen.lines)
    assert screen.lines[-1].startswith("run ") and screen.lines[-1].endswith("· completed · " +
                                                                             screen.lines[-1].split(" · ")[2]
                                                                             + " · no model calls")
    assert "model calls" not in "\n".join(screen.lines[:-1])  # no 13-line block anywhere
    verbose = run_in_terminal(["diagnose", str(EXAMPLE), "-v"], env=env)
    summary = verbose.index("run summary")
    assert summary > verbose.index("(decided by rules") and "model calls" in "\n".join(verbose.lines[summary:])
    quiet = run_in_terminal(["diagnose", str(EXAMPLE), "--quiet"], env=env)
    assert quiet.code == 0 and not any(line.startswith("run ") for line in quiet.lines)
    assert "causal lines; excerpt" in quiet.lines[-1]


@pytest.fixture
def repo_and_script(git_repo: Path, tmp_path: Path) -> tuple[Path, Path, Path]:
    log = tmp_path / "ci.log"
    log.write_text(PYTEST_LOG)
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"content": "", "tool_calls": [{"name": "propose_fix", "arguments": {
        "diff": FIX, "explanation": "add() subtracts; make it add.\n\nThe test expects add(2, 3) == 5."}}]},
        "Done."]))
    return git_repo, log, script


def test_fix_asks_right_after_the_diff_and_summarises_after_the_answer(
        repo_and_script: tuple[Path, Path, Path], env: dict[str, str]) -> None:
    repo, log, script = repo_and_script
    screen = run_in_terminal(["fix", str(log), "--repo", str(repo), "--no-llm-diagnosis"],
                             env={**env, "REPOPILOT_MODEL": f"scripted:{script}"},
                             answers=(("[y/N]", b"n\n"),))
    assert screen.code == 0, screen.text
    diagnosis, sha, prompt = (screen.index("failing step: python -m pytest"), screen.index("sha256: "),
                              screen.index("Apply this diff"))
    summary = screen.index("run summary")  # a model was used: the whole summary
    assert diagnosis < sha < prompt < screen.index("Rejected by") < summary
    assert prompt == sha + 1  # nothing between the diff's sha256 and the question
    assert "rejected" in screen.lines[screen.index("status", summary)]  # the summary says how it ended


def test_the_interrupt_message_names_the_real_run(repo_and_script: tuple[Path, Path, Path],
                                                 env: dict[str, str]) -> None:
    repo, log, _ = repo_and_script
    child = ("import sys\nfrom repopilot.providers import PROVIDERS, ProviderInfo, ScriptedModel\n"
             "def reply(messages, tools):\n    raise KeyboardInterrupt\n"
             "PROVIDERS['kb'] = ProviderInfo(name='kb', factory=lambda m, env: ScriptedModel(reply))\n"
             "from repopilot.cli.main import main\nsys.exit(main(sys.argv[1:]))\n")
    done = subprocess.run([sys.executable, "-c", child, "fix", str(log), "--repo", str(repo),
                           "--no-llm-diagnosis"], capture_output=True, text=True, cwd=ROOT, timeout=60,
                          env={**os.environ, **env, "REPOPILOT_MODEL": "kb:x"}, check=False)
    assert done.returncode == 5 and "Traceback" not in done.stderr
    (trace,) = Path(env["REPOPILOT_RUNS_DIR"]).glob("*.json")
    assert f"`repopilot resume {trace.stem}`" in done.stderr.splitlines()[-1]
    assert "RUN_ID" not in done.stderr


def test_ctrl_c_while_starting_up_ends_quietly_with_130(env: dict[str, str]) -> None:
    # Deterministic stand-in for a Ctrl-C while the modules load: the first import of json (the secret rules'
    # reader) is interrupted (typer, pydantic and tomllib are no longer among them: they load inside `main`,
    # only for commands the quick path does not run, data read back, or a config file).
    child = ("import builtins, sys\nreal = builtins.__import__\n"
             "def slow(name, *a, **k):\n    if name == 'json':\n        raise KeyboardInterrupt\n"
             "    return real(name, *a, **k)\n"
             "builtins.__import__ = slow\nsys.argv = ['repopilot', 'diagnose', '--example']\n"
             "from repopilot.cli import run\nrun()\n")
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, cwd=ROOT, timeout=60,
                          env={**os.environ, **env}, check=False)
    assert done.returncode == 130
    assert done.stderr == "" and done.stdout == ""
