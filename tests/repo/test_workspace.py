"""Disposable workspaces: the person's working tree, index, branches and stashes are never touched; the command
runs with a time limit, the environment it is given, its output in a log file and, where possible, no network."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from repopilot.core import SandboxError
from repopilot.repo.workspace import apply_in, network_isolation, run_command, worktree

FIX = "--- a/src/calc.py\n+++ b/src/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def _state(root: Path) -> tuple[str, ...]:
    """Everything of the person's that a verification must leave as it is."""
    return (_git(root, "status", "--porcelain=v2", "--branch", "--untracked-files=all"),
            _git(root, "stash", "list"), _git(root, "for-each-ref"), _git(root, "worktree", "list", "--porcelain"),
            (root / ".git" / "index").read_bytes().hex(), (root / "src" / "calc.py").read_text(),
            (root / "scratch.txt").read_text())


def test_the_workspace_leaves_the_persons_repository_as_it_was(git_repo: Path, tmp_path: Path) -> None:
    # A dirty tree, a staged change, a stash and a second branch: all of it must survive.
    (git_repo / "scratch.txt").write_text("mine, not committed\n")
    (git_repo / "README.md").write_text("# changed\n")
    _git(git_repo, "stash")
    (git_repo / "README.md").write_text("# staged\n")
    _git(git_repo, "add", "README.md")
    _git(git_repo, "branch", "other")
    before = _state(git_repo)
    with worktree(git_repo) as ws:
        assert not ws.is_relative_to(git_repo)
        assert (ws / "src" / "calc.py").read_text().endswith("a - b\n")
        assert not (ws / "scratch.txt").exists()  # HEAD only: nothing uncommitted leaks in
        apply_in(ws, FIX, 1)
        assert (ws / "src" / "calc.py").read_text().endswith("a + b\n")
        done = run_command(ws, "grep -c 'a + b' src/calc.py", env={"PATH": "/usr/bin:/bin"}, timeout=30,
                           log=tmp_path / "logs" / "after.log")
        assert done.exit_code == 0 and done.log.read_text().strip() == "1"
    assert not ws.exists()
    assert _state(git_repo) == before


def test_a_diff_that_does_not_apply_is_a_sandbox_error(git_repo: Path) -> None:
    with worktree(git_repo) as ws, pytest.raises(SandboxError, match="does not apply"):
        apply_in(ws, FIX.replace("a - b", "a * b"), 1)


def test_the_time_limit_kills_the_command_and_its_children(tmp_path: Path) -> None:
    started = time.monotonic()
    done = run_command(tmp_path, "sleep 30 & sleep 30; echo never", env={"PATH": "/usr/bin:/bin"}, timeout=1,
                       log=tmp_path / "slow.log")
    assert done.timed_out and done.exit_code is None
    assert time.monotonic() - started < 10
    assert "never" not in done.log.read_text()


def test_the_environment_is_only_what_was_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-never-be-seen")
    done = run_command(tmp_path, "env", env={"PATH": "/usr/bin:/bin", "CI": "true"}, timeout=30,
                       log=tmp_path / "env.log")
    text = done.log.read_text()
    assert "CI=true" in text and "OPENAI_API_KEY" not in text and "sk-should" not in text


def test_output_is_capped_and_digested(tmp_path: Path) -> None:
    done = run_command(tmp_path, "head -c 100000 /dev/zero | tr '\\0' x", env={"PATH": "/usr/bin:/bin"}, timeout=30,
                       log=tmp_path / "big.log", max_bytes=1000)
    assert done.exit_code == 0 and done.output_bytes == 1000 and len(done.log.read_bytes()) == 1000
    assert len(done.output_sha256) == 64


@pytest.mark.skipif(not network_isolation(), reason="this machine does not allow unshare -rn")
def test_no_network_by_default(tmp_path: Path) -> None:
    # In a new network namespace only a down loopback exists.
    script = "cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '"
    isolated = run_command(tmp_path, script, env={"PATH": "/usr/bin:/bin"}, timeout=30, log=tmp_path / "n.log")
    assert isolated.log.read_text().split() == ["lo"]
    allowed = run_command(tmp_path, script, env={"PATH": "/usr/bin:/bin"}, timeout=30, log=tmp_path / "y.log",
                          network=True)
    assert allowed.log.read_text().split() != ["lo"]
