"""`/repopilot fix` and `/repopilot approve <sha256>` end to end: a real git remote (a bare repository on disk,
with GitHub's refs/pull/N/head), a scripted model, the fake GitHub. Nothing is pushed without the approval of a
user with write access naming the proposal's sha256; every step is safe to run twice."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from tests.service.conftest import Service

REPO = "octo/demo"
FIX = """--- a/src/calc.py
+++ b/src/calc.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
"""


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture
def pr(service: Service, git_repo: Path, tmp_path: Path) -> str:
    """PR #5 (branch `feature`) on a bare remote, its failed run diagnosed; returns the head commit."""
    _git(git_repo, "checkout", "-q", "-b", "feature")
    sha = _git(git_repo, "rev-parse", "HEAD").strip()
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    _git(git_repo, "push", "-q", str(bare), "feature:refs/heads/feature", "feature:refs/pull/5/head")
    gh = service.github
    gh.add_repo(REPO, 7)
    gh.clone_urls[REPO] = str(bare)
    gh.pull_heads[(REPO, 5)] = ("feature", sha)
    gh.permissions[(REPO, "mona")] = "write"
    gh.permissions[(REPO, "visitor")] = "read"
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"content": "", "tool_calls": [{"id": "r1", "name": "read_file", "arguments": {"path": "src/calc.py"}}]},
        {"content": "", "tool_calls": [{"id": "p1", "name": "propose_fix",
                                        "arguments": {"diff": FIX, "explanation": "add must add"}}]}]))
    service.settings = replace(service.settings, base=replace(service.settings.base, model=f"scripted:{script}"))
    assert service.deliver("workflow_run", gh.add_run(REPO, 1, head_sha=sha, pull_request=5)).status_code == 202
    service.work()
    return sha


def _comment(body: str, user: str, comment_id: int) -> dict[str, object]:
    return {"action": "created", "installation": {"id": 7},
            "repository": {"name": "demo", "owner": {"login": "octo"}},
            "issue": {"number": 5, "pull_request": {"url": "x"}},
            "comment": {"id": comment_id, "body": body, "user": {"login": user}}}


def _command(service: Service, body: str, user: str, comment_id: int) -> str:
    assert service.deliver("issue_comment", _comment(body, user, comment_id)).status_code == 202
    service.work()
    replies = [c for c in service.github.comments_on(REPO, 5) if f"<!-- {comment_id} -->" in c["body"]]
    assert len(replies) == 1
    return str(replies[0]["body"])


def _branches(bare: Path) -> list[str]:
    return _git(bare, "for-each-ref", "--format=%(refname)", "refs/heads/").split()


def test_fix_then_approve_pushes_the_reviewed_diff_as_a_draft_pull_request(service: Service, pr: str,
                                                                             tmp_path: Path) -> None:
    bare = tmp_path / "remote.git"
    proposal = _command(service, "/repopilot fix", "mona", 31)
    assert "return a + b" in proposal and "add must add" in proposal
    sha256 = proposal.split("/repopilot approve ")[1].split()[0]
    assert len(sha256) == 64
    assert _branches(bare) == ["refs/heads/feature"]  # proposed, nothing pushed
    # The fix ran on the `model` queue, its two model calls through the gate and counted for the installation.
    assert service.sql("SELECT DISTINCT queue_name FROM procrastinate_jobs WHERE task_name = 'repopilot:fix'") == \
        [("model",)]
    assert service.sql("SELECT calls FROM repopilot_model_usage WHERE installation_id = 7") == [(2,)]
    refused = _command(service, f"/repopilot approve {sha256}", "visitor", 40)
    assert "write access" in refused and _branches(bare) == ["refs/heads/feature"]
    wrong = _command(service, "/repopilot approve " + "0" * 64, "mona", 41)
    assert "nothing was pushed" in wrong and _branches(bare) == ["refs/heads/feature"]

    approved = _command(service, f"/repopilot approve {sha256}", "mona", 42)
    branch = next(b for b in _branches(bare) if b.startswith("refs/heads/repopilot/"))
    assert "return a + b" in _git(bare, "show", f"{branch}:src/calc.py")
    assert _git(bare, "rev-parse", f"{branch}^").strip() == pr  # on the PR's head, nothing else
    assert [(p["head"], p["base"], p["draft"]) for p in service.github.pulls] == [
        (branch.removeprefix("refs/heads/"), "feature", True)]
    assert "draft pull request #1000" in approved and "@mona" in approved
    body = service.github.pulls[0]["body"]  # the same hand-off as `approve --pr`: the receipt rides along
    assert sha256 in body and "add must add" in body and "### Verification receipt" in body
    commit = _git(bare, "rev-parse", branch)

    # The approval delivered again (a retried job, a second worker): same branch and commit, no second PR.
    assert service.deliver("issue_comment", _comment(f"/repopilot approve {sha256}", "mona", 42)).status_code == 202
    service.work()
    assert _git(bare, "rev-parse", branch) == commit and len(service.github.pulls) == 1
    assert len([c for c in service.github.comments_on(REPO, 5) if "<!-- 42 -->" in c["body"]]) == 1

    # The fix command delivered again answers from the database: the model is not asked again.
    calls = service.sql("SELECT count(*) FROM repopilot_traces WHERE command = 'fix'")
    assert service.deliver("issue_comment", _comment("/repopilot fix", "mona", 31)).status_code == 202
    service.work()
    assert service.sql("SELECT count(*) FROM repopilot_traces WHERE command = 'fix'") == calls == [(1,)]
    assert service.sql("SELECT status FROM repopilot_traces WHERE command = 'fix'") == [("approved",)]


def test_fix_without_a_diagnosed_run_says_so(service: Service, pr: str) -> None:
    service.github.pull_heads[(REPO, 5)] = ("feature", "f" * 40)  # the PR moved on; nothing diagnosed there
    assert "not diagnosed a failed run" in _command(service, "/repopilot fix", "mona", 50)


def test_an_installation_over_its_budget_gets_no_model_call(service: Service, pr: str) -> None:
    service.sql("INSERT INTO repopilot_model_usage (installation_id, calls, cost_usd) VALUES (7, 1, 99)")
    assert "model budget" in _command(service, "/repopilot fix", "mona", 60)
    assert service.sql("SELECT count(*) FROM repopilot_traces WHERE command = 'fix'") == [(0,)]


def test_approve_without_a_sha256_explains_how(service: Service, pr: str) -> None:
    assert "/repopilot approve <sha256>" in _command(service, "/repopilot approve it please", "mona", 70)


def test_a_push_that_failed_is_retried_with_exactly_the_approved_commit(service: Service, pr: str,
                                                                         tmp_path: Path) -> None:
    """The first approval's push is refused by the remote: the approval and its commit are recorded, the user is
    told how to retry; the retry runs in a fresh checkout that lacks the commit and pushes that very commit."""
    bare = tmp_path / "remote.git"
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'remote: pushes are closed for maintenance' >&2\nexit 1\n")
    hook.chmod(0o755)
    proposal = _command(service, "/repopilot fix", "mona", 31)
    sha256 = proposal.split("/repopilot approve ")[1].split()[0]

    failed = _command(service, f"/repopilot approve {sha256}", "mona", 42)
    assert "could not hand off" in failed and f"/repopilot approve {sha256}` again to retry" in failed
    assert _branches(bare) == ["refs/heads/feature"]
    (trace,) = service.sql("SELECT trace FROM repopilot_traces WHERE command = 'fix'")[0]
    approved = trace["proposal"]["commit"]
    assert trace["proposal"]["decision"] == "approved" and trace["proposal"]["commit_object"]

    hook.unlink()
    done = _command(service, f"/repopilot approve {sha256}", "mona", 43)
    assert "draft pull request #1000" in done
    branch = next(b for b in _branches(bare) if b.startswith("refs/heads/repopilot/"))
    assert _git(bare, "rev-parse", branch).strip() == approved  # the recorded commit itself, not a look-alike
    assert _git(bare, "rev-parse", f"{branch}^").strip() == pr


def _steps(service: Service, decision: str) -> list[str]:
    (trace,) = service.sql("SELECT trace FROM repopilot_traces WHERE command = 'fix'")[0]
    return [s["result"] for s in trace["steps"] if (s.get("detail") or {}).get("decision") == decision]


def test_a_clone_that_fails_is_answered_and_leaves_the_run_as_it_was(service: Service, pr: str,
                                                                     tmp_path: Path) -> None:
    """The PR's repository cannot be fetched: the user is told so (git's message sanitised), and how to retry; the
    approve job ends done, its failure in the run's trace, nothing applied or pushed. The retry then works."""
    bare = tmp_path / "remote.git"
    service.github.clone_urls[REPO] = "http://git.example.invalid/octo/demo.git"  # a remote git may not use
    no_fix = _command(service, "/repopilot fix", "mona", 30)
    assert "could not fetch this pull request to start a fix run" in no_fix and "`/repopilot fix` again" in no_fix
    assert "refusing to use a http remote" in no_fix
    service.github.clone_urls[REPO] = str(bare)
    sha256 = _command(service, "/repopilot fix", "mona", 31).split("/repopilot approve ")[1].split()[0]

    gone = str(tmp_path / "gone\u202etxt.git")  # git echoes the path; a bidi override must not reach the reply
    service.github.clone_urls[REPO] = gone
    failed = _command(service, f"/repopilot approve {sha256}", "mona", 42)
    assert "could not fetch this pull request to apply the approval; nothing was pushed" in failed
    assert f"`/repopilot approve {sha256}` again to retry" in failed
    assert "does not appear to be a git repository" in failed and "⟨U+202E⟩" in failed and "\u202e" not in failed
    assert service.sql("SELECT status FROM procrastinate_jobs WHERE task_name = 'repopilot:approve'") == \
        [("succeeded",)]  # answered: the job is done, not failed and not retried
    assert _steps(service, "checkout") == ["checkout failed"]
    assert service.sql("SELECT status FROM repopilot_traces WHERE command = 'fix'") == [("awaiting_approval",)]
    assert _branches(bare) == ["refs/heads/feature"]

    service.github.clone_urls[REPO] = str(bare)
    assert "draft pull request #1000" in _command(service, f"/repopilot approve {sha256}", "mona", 43)


def test_an_approval_from_before_commit_objects_is_refused_then_re_approved(service: Service, pr: str,
                                                                             tmp_path: Path) -> None:
    """An approval recorded without the commit's object (an earlier RepoPilot) whose push failed cannot be pushed
    from a fresh checkout: the retry says so and what to do, and withdraws it; approving again applies the reviewed
    diff afresh and pushes that."""
    bare = tmp_path / "remote.git"
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\nexit 1\n")
    hook.chmod(0o755)
    sha256 = _command(service, "/repopilot fix", "mona", 31).split("/repopilot approve ")[1].split()[0]
    assert "could not hand off" in _command(service, f"/repopilot approve {sha256}", "mona", 42)
    service.sql("UPDATE repopilot_traces SET trace = trace #- '{proposal,commit_object}' WHERE command = 'fix'")
    hook.unlink()

    refused = _command(service, f"/repopilot approve {sha256}", "mona", 43)
    assert "recorded by an earlier version" in refused and "nothing was pushed" in refused
    assert f"comment `/repopilot approve {sha256}` again to re-approve" in refused and "Traceback" not in refused
    assert _branches(bare) == ["refs/heads/feature"]
    assert _steps(service, "withdrawn") == ["approval withdrawn"]
    assert service.sql("SELECT status, trace->'proposal'->>'decision' FROM repopilot_traces WHERE command = 'fix'") \
        == [("awaiting_approval", None)]

    assert "draft pull request #1000" in _command(service, f"/repopilot approve {sha256}", "mona", 44)
    branch = next(b for b in _branches(bare) if b.startswith("refs/heads/repopilot/"))
    # the reviewed diff applied afresh; its commit may equal the old one (same parent, tree, author and second)
    (commit, recorded) = service.sql("SELECT trace->'proposal'->>'commit', trace->'proposal'->>'commit_object' "
                                     "FROM repopilot_traces WHERE command = 'fix'")[0]
    assert _git(bare, "rev-parse", branch).strip() == commit and recorded  # and now rebuildable from a fresh clone
    assert "return a + b" in _git(bare, "show", f"{branch}:src/calc.py")
    assert _git(bare, "rev-parse", f"{branch}^").strip() == pr
