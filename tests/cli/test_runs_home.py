"""Issue 13 item 3: runs live in the user's state directory, not in the directory one stands in. RepoPilot's
files never show in the repository's `git status`, and the exact `approve` command `fix` printed works from any
other directory, as do `runs list/show`, `reject`, `resume` and `trace export`."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from repopilot.app import load_settings

ROOT = Path(__file__).resolve().parents[2]
LOG = ("##[group]Run python -m pytest -q\n##[endgroup]\n"
       "FAILED tests/test_calc.py::test_add - assert -1 == 5\n1 failed in 0.03s\n"
       "##[error]Process completed with exit code 1.\n")
FIX = ("--- a/src/calc.py\n+++ b/src/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n"
       "+    return a + b\n")


def test_the_default_runs_directory_is_the_users_state_directory(tmp_path: Path) -> None:
    assert load_settings({"XDG_STATE_HOME": str(tmp_path)}, cwd=tmp_path).runs_dir == tmp_path / "repopilot" / "runs"
    home = load_settings({}, cwd=tmp_path)
    assert home.runs_dir == Path("~/.local/state/repopilot/runs").expanduser()
    assert home.origins.get("runs_dir") is None  # shown as the default by `repopilot config`


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REPOPILOT_", "XDG_"))}
    env.update({"HOME": str(tmp_path / "home"), "XDG_STATE_HOME": str(tmp_path / "state"),
                "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_CACHE_HOME": str(tmp_path / "cache")})
    return env


def _cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "repopilot.cli.main", *args], capture_output=True, text=True,
                          env={**env, "PYTHONPATH": str(ROOT)}, cwd=cwd, stdin=subprocess.DEVNULL, timeout=60,
                          check=False)


def _status(repo: Path) -> str:
    return subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=repo, capture_output=True, text=True,
                          check=True).stdout


def test_fix_in_a_repository_and_approve_from_anywhere(git_repo: Path, tmp_path: Path,
                                                       home: dict[str, str]) -> None:
    (git_repo / "ci.log").write_text(LOG)
    subprocess.run(["git", "add", "ci.log"], cwd=git_repo, check=True)
    subprocess.run(["git", "commit", "-qm", "log"], cwd=git_repo, check=True)
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"content": "", "tool_calls": [{"name": "propose_fix", "arguments": {
        "diff": FIX, "explanation": "Make add() add."}}]}, "Done."]))
    env = {**home, "REPOPILOT_MODEL": f"scripted:{script}"}
    assert _cli(["diagnose", "ci.log"], env, git_repo).returncode == 0
    fixed = _cli(["fix", "ci.log", "--no-llm-diagnosis"], env, git_repo)
    assert fixed.returncode == 3, fixed.stderr
    assert _status(git_repo) == ""  # nothing of RepoPilot's in the work tree, not even ignored files
    runs = tmp_path / "state" / "repopilot" / "runs"
    assert len(list(runs.glob("*.json"))) == 2
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    command = next(line for line in fixed.stderr.splitlines() if "repopilot approve" in line)
    args = shlex.split(command.split("To apply it:", 1)[1])[1:]
    run_id = args[1]
    listed = _cli(["runs", "list", "--json"], env, elsewhere)
    # Both runs are found from anywhere; their order is by start time, which two runs begun in one second share.
    assert sorted(r["command"] for r in json.loads(listed.stdout)) == ["diagnose", "fix"]
    assert run_id in _cli(["runs", "show", run_id], env, elsewhere).stdout
    assert "<html" in _cli(["trace", "export", run_id, "--html", "-"], env, elsewhere).stdout
    approved = _cli(args, env, elsewhere)
    assert approved.returncode == 0, approved.stderr
    assert f"repopilot/{run_id}" in approved.stdout
    assert _status(git_repo) == ""
    assert list(elsewhere.iterdir()) == []


def test_runs_recorded_by_earlier_versions_are_pointed_to(tmp_path: Path, home: dict[str, str]) -> None:
    (tmp_path / "old" / ".runs").mkdir(parents=True)
    listed = _cli(["runs", "list"], home, tmp_path / "old")
    assert listed.returncode == 0
    assert "no runs recorded in" in listed.stderr and "REPOPILOT_RUNS_DIR=.runs repopilot runs list" in listed.stderr
