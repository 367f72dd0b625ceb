"""The optional hand-off after an approval: `approve --push` pushes the approved commit (to a bare repository on
disk here) and `approve --pr` also opens a DRAFT pull request through the GitHub API (the loopback fake) whose
body carries the explanation, the diagnosis and the receipt. Refusals come before anything is applied or pushed,
with a clear message and a non-zero exit; a failed push loses nothing recorded."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from repopilot.app import HandOffTarget, hand_off, load_settings
from repopilot.cli.main import main
from repopilot.core import ApprovalError, load_trace, restore_trace
from repopilot.repo import remote as remote_module
from tests.app.test_verify import PYTEST, _propose, _run
from tests.cli.test_fix import FIX
from tests.fixtures.github.fake_github import OWNER, REPO, TOKEN, FakeGitHub, github

__all__ = ["github"]  # the fixture, imported for pytest


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def _bare(tmp_path: Path) -> Path:
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    return bare


def _heads(bare: Path) -> list[str]:
    return _git(bare, "for-each-ref", "--format=%(refname)").split()


def _proposed(git_repo: Path, tmp_path: Path) -> tuple[str, str]:
    """A verified proposal awaiting approval: (run id, sha256)."""
    done = _run(git_repo, tmp_path, [_propose("p1", FIX)], verify_cmd=PYTEST)
    assert done.proposal is not None and done.proposal.receipt is not None
    assert done.proposal.receipt.outcome == "verified"
    return done.trace.run_id, done.proposal.sha256


def _hand_offs(run_id: str) -> list[dict[str, Any]]:
    return [s.detail | {"result": s.result, "error": s.error} for s in load_trace(run_id).steps
            if s.type == "decision" and s.detail.get("decision") == "hand_off"]


def test_push_sends_exactly_the_approved_commit(git_repo: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    bare = _bare(tmp_path)
    _git(git_repo, "remote", "add", "origin", str(bare))
    run_id, sha256 = _proposed(git_repo, tmp_path)
    assert main(["approve", run_id, "--sha256", sha256, "--push"]) == 0
    branch = f"repopilot/{run_id}"
    commit = _git(git_repo, "rev-parse", branch).strip()
    assert _heads(bare) == [f"refs/heads/{branch}"]
    assert _git(bare, "rev-parse", branch).strip() == commit
    assert f"Pushed commit {commit[:12]} to branch {branch}" in capsys.readouterr().out
    (step,) = _hand_offs(run_id)
    assert step["commit"] == commit and step["remote"] == str(bare) and step["pull_request"] is None


def test_the_cli_push_never_carries_the_token(git_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              github: FakeGitHub) -> None:
    seen: list[dict[str, str]] = []
    real = remote_module.run_git

    def spy(root: Path, args: list[str], **kwargs: Any) -> Any:
        seen.append(dict(kwargs.get("config") or {}))
        return real(root, args, **kwargs)

    monkeypatch.setattr(remote_module, "run_git", spy)
    _git(git_repo, "remote", "add", "origin", str(_bare(tmp_path)))
    run_id, sha256 = _proposed(git_repo, tmp_path)
    assert main(["approve", run_id, "--sha256", sha256, "--push"]) == 0
    assert seen and not any("http.extraHeader" in c for c in seen)
    assert TOKEN not in json.dumps([s.model_dump() for s in load_trace(run_id).steps])


def test_pr_opens_a_draft_with_the_receipt(git_repo: Path, tmp_path: Path, github: FakeGitHub,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    bare = _bare(tmp_path)
    # Named a GitHub repository by its URL, pushed (here) to a bare repository on disk.
    _git(git_repo, "remote", "add", "origin", f"https://github.com/{OWNER}/{REPO}.git")
    _git(git_repo, "remote", "set-url", "--push", "origin", str(bare))
    run_id, sha256 = _proposed(git_repo, tmp_path)
    assert main(["approve", run_id, "--sha256", sha256, "--pr"]) == 0
    assert f"Draft pull request #1: https://github.com/{OWNER}/{REPO}/pull/1" in capsys.readouterr().out
    (pull,) = github.pulls
    assert pull["draft"] is True and pull["head"] == f"repopilot/{run_id}" and pull["base"] == "main"
    body = pull["body"]
    assert sha256 in body and "Verification: VERIFIED" in body and "make add add" in body
    assert f"command: {PYTEST}" in body and "exit 1 in" in body and "exit 0 in" in body
    assert "guard: no weakening found" in body and "### Diagnosis" in body
    assert pull["title"] == "RepoPilot: make add add"
    # The token went to the API host only, with every request.
    assert github.requests and all(r.headers.get("authorization") == f"Bearer {TOKEN}" for r in github.requests)
    assert _heads(bare) == [f"refs/heads/repopilot/{run_id}"]

    # Run again (a retry): the same commit pushed is a no-op, the draft is found, not opened twice.
    assert main(["approve", run_id, "--pr"]) == 0
    assert "already open" in capsys.readouterr().out and len(github.pulls) == 1
    assert [s["pull_request"] for s in _hand_offs(run_id)] == [1, 1]


def _untouched(git_repo: Path, run_id: str) -> None:
    assert _git(git_repo, "branch", "--list", f"repopilot/{run_id}") == ""
    assert load_trace(run_id).status == "awaiting_approval"


def test_no_remote_refuses_before_applying(git_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_id, sha256 = _proposed(git_repo, tmp_path)
    assert main(["approve", run_id, "--sha256", sha256, "--push"]) == 2
    err = capsys.readouterr().err
    assert "no remote 'origin'" in err and "nothing was applied or pushed" in err and "Traceback" not in err
    _untouched(git_repo, run_id)


def test_pr_without_a_token_refuses_before_applying(git_repo: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    bare = _bare(tmp_path)
    _git(git_repo, "remote", "add", "origin", f"https://github.com/{OWNER}/{REPO}.git")
    _git(git_repo, "remote", "set-url", "--push", "origin", str(bare))
    run_id, sha256 = _proposed(git_repo, tmp_path)
    assert main(["approve", run_id, "--sha256", sha256, "--pr"]) == 2
    err = capsys.readouterr().err
    assert "needs GITHUB_TOKEN" in err and "Traceback" not in err
    _untouched(git_repo, run_id)
    assert _heads(bare) == []


def test_the_token_never_goes_to_a_host_a_remote_named(git_repo: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    _git(git_repo, "remote", "add", "origin", "https://git.example.com/octo/demo.git")
    run_id, sha256 = _proposed(git_repo, tmp_path)
    assert main(["approve", run_id, "--sha256", sha256, "--pr"]) == 2
    err = capsys.readouterr().err
    assert "only to api.github.com or to GITHUB_API_URL" in err and TOKEN not in err
    _untouched(git_repo, run_id)


def test_a_failed_push_keeps_the_approval_and_can_run_again(git_repo: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nowhere.git"
    _git(git_repo, "remote", "add", "origin", str(missing))
    run_id, sha256 = _proposed(git_repo, tmp_path)
    assert main(["approve", run_id, "--sha256", sha256, "--push"]) == 4
    err = capsys.readouterr().err
    assert "the approval is recorded" in err and "Traceback" not in err
    assert load_trace(run_id).status == "approved" and _git(git_repo, "branch", "--list", f"repopilot/{run_id}")
    assert [s["result"] for s in _hand_offs(run_id)] == ["push failed"]
    subprocess.run(["git", "init", "-q", "--bare", str(missing)], check=True)
    assert main(["approve", run_id, "--push"]) == 0
    assert _heads(missing) == [f"refs/heads/repopilot/{run_id}"]


def test_an_approval_from_before_commit_objects_is_withdrawn_and_can_be_given_again(
        git_repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Approved by a RepoPilot that did not record the commit's object, handed off from a clone that lacks the
    commit: refused (exit 2, no traceback) saying what to do, the approval withdrawn; approving again applies the
    reviewed diff afresh there and pushes it."""
    run_id, sha256 = _proposed(git_repo, tmp_path)
    assert main(["approve", run_id, "--sha256", sha256]) == 0
    trace = load_trace(run_id)
    assert trace.proposal is not None
    base = trace.proposal["base_branch"]
    trace.proposal = {**trace.proposal, "commit_object": None}  # as an earlier RepoPilot recorded it
    restore_trace(trace)
    clone, bare = tmp_path / "clone", _bare(tmp_path)
    subprocess.run(["git", "clone", "-q", "--no-local", "--single-branch", "--branch", base, str(git_repo),
                    str(clone)], check=True)
    _git(clone, "remote", "set-url", "origin", str(bare))
    capsys.readouterr()

    assert main(["approve", run_id, "--repo", str(clone), "--push"]) == 2
    err = capsys.readouterr().err
    assert "approved by an earlier RepoPilot" in err and "nothing was pushed" in err and "Traceback" not in err
    assert f"repopilot approve {run_id} --push" in err and _heads(bare) == []
    after = load_trace(run_id)
    assert after.status == "awaiting_approval" and after.proposal is not None and after.proposal["decision"] is None
    assert [s.result for s in after.steps if s.type == "approval"] == ["approved", "approval withdrawn"]

    assert main(["approve", run_id, "--repo", str(clone), "--sha256", sha256, "--push"]) == 0
    pushed = _git(bare, "rev-parse", f"repopilot/{run_id}").strip()
    # the diff applied afresh: the recorded commit (equal to the first one only when both fell in one second),
    # now with its object, so a later fresh checkout can rebuild it
    again = load_trace(run_id).proposal
    assert again is not None and pushed == again["commit"] and again["commit_object"]
    assert _git(bare, "rev-parse", f"repopilot/{run_id}^").strip() == _git(clone, "rev-parse", base).strip()


def test_a_run_not_approved_is_not_handed_off(git_repo: Path, tmp_path: Path) -> None:
    run_id, _ = _proposed(git_repo, tmp_path)
    bare = _bare(tmp_path)
    with pytest.raises(ApprovalError, match="not approved"):
        hand_off(load_settings({}, tmp_path), run_id, HandOffTarget(git_repo, str(bare)), pull_request=False)
    assert _heads(bare) == []


def test_a_remote_git_does_not_speak_is_refused_before_applying(git_repo: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    _git(git_repo, "remote", "add", "origin", "git://example.com/octo/demo.git")
    run_id, sha256 = _proposed(git_repo, tmp_path)
    assert main(["approve", run_id, "--sha256", sha256, "--push"]) == 2
    err = capsys.readouterr().err
    assert "refusing to use a git remote" in err and "nothing was applied or pushed" in err
    _untouched(git_repo, run_id)


def test_the_body_keeps_the_receipt_and_cuts_a_long_diagnosis(git_repo: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from repopilot.app import handoff
    from repopilot.app.fix_runs import load_proposal

    run_id, sha256 = _proposed(git_repo, tmp_path)
    trace = load_trace(run_id)
    proposal = load_proposal(trace)
    full = handoff.pull_request_body(trace, proposal)
    assert full.index("### Verification receipt") < full.index("### Diagnosis") and sha256 in full
    monkeypatch.setattr(handoff, "_BODY_CHARS", full.index("### Diagnosis") + 300)
    cut = handoff.pull_request_body(trace, proposal)
    assert len(cut) < len(full) and "Verification: VERIFIED" in cut and f"runs show {run_id}" in cut
    assert cut.count("```") % 2 == 0
