"""The receiver's two pure parts: the signature check and which deliveries become which jobs."""

from __future__ import annotations

import pytest

pytest.importorskip("procrastinate")

from repopilot.service import ApproveCommand, DiagnoseRun, FixCommand, route, sign, verify

BODY = b'{"zen": "Keep it logically awesome."}'


def test_a_signature_made_with_the_secret_verifies() -> None:
    assert verify("s3cret", BODY, sign("s3cret", BODY))


@pytest.mark.parametrize("header", [None, "", "sha1=abc", "sha256=", "sha256=" + "0" * 64,
                                    "sha256=not-hex", sign("other secret", BODY)])
def test_anything_else_is_refused(header: str | None) -> None:
    assert not verify("s3cret", BODY, header)


def test_a_changed_body_is_refused() -> None:
    assert not verify("s3cret", BODY + b" ", sign("s3cret", BODY))


def test_no_secret_configured_refuses_everything() -> None:
    assert not verify("", BODY, sign("", BODY))


def _repo() -> dict[str, object]:
    return {"installation": {"id": 7}, "repository": {"name": "demo", "owner": {"login": "octo"}}}


def _run(conclusion: str, prs: list[int]) -> dict[str, object]:
    return {"action": "completed", **_repo(), "workflow_run": {
        "id": 99, "html_url": "https://github.com/octo/demo/actions/runs/99", "head_sha": "ab" * 20,
        "conclusion": conclusion, "pull_requests": [{"number": n} for n in prs]}}


def test_a_failed_workflow_run_is_a_diagnosis_locked_per_pull_request() -> None:
    work = route("workflow_run", _run("failure", [12]))
    assert isinstance(work, DiagnoseRun)
    assert (work.run_id, work.pull_request, work.installation_id) == (99, 12, 7)
    assert work.lock() == "octo/demo#12"
    other = route("workflow_run", {**_run("failure", [12]), "workflow_run": {
        **_run("failure", [12])["workflow_run"], "id": 100}})  # type: ignore[dict-item]
    assert other is not None and other.lock() == work.lock()  # one job at a time for that pull request


def test_successful_runs_and_other_events_are_ignored() -> None:
    assert route("workflow_run", _run("success", [12])) is None
    assert route("push", _repo()) is None
    assert route("workflow_run", {"action": "completed"}) is None  # no installation: nothing to act as


def _comment(body: str, on_pr: bool = True) -> dict[str, object]:
    issue: dict[str, object] = {"number": 5, **({"pull_request": {"url": "x"}} if on_pr else {})}
    return {"action": "created", **_repo(), "issue": issue,
            "comment": {"id": 31, "body": body, "user": {"login": "mona"}}}


def test_comment_commands() -> None:
    fix = route("issue_comment", _comment("/repopilot fix"))
    assert isinstance(fix, FixCommand) and (fix.user, fix.pull_request) == ("mona", 5)
    sha = "a" * 64
    approve = route("issue_comment", _comment(f"/repopilot approve {sha}"))
    assert isinstance(approve, ApproveCommand) and approve.sha256 == sha
    bare = route("issue_comment", _comment("/repopilot approve please"))
    assert isinstance(bare, ApproveCommand) and bare.sha256 is None  # told how to approve, never applied
    assert route("issue_comment", _comment("looks good")) is None
    assert route("issue_comment", _comment("/repopilot fix", on_pr=False)) is None  # issues are not PRs
