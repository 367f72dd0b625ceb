"""Fix runs driven from a pull request (the service's `/repopilot fix` and `/repopilot approve <sha256>`): the
same lifecycle as `repopilot fix` and `repopilot approve`, on a fresh checkout of the PR's head, with the approved
commit pushed to `repopilot/<run_id>` and offered as a draft pull request into the PR's branch (`hand_off`, the same
code as `repopilot approve --pr`).

Nothing is pushed without an approval naming the proposal's sha256 (`approve_run` checks it). Each step is
idempotent, so a job killed anywhere can run again: the checkout is fresh, an already-pushed branch is fetched
first (and recognised by its commit trailers), an approved commit that was never pushed is made again exactly
(`hand_off`), the push is never forced, the draft PR is found before created."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from ..ci import GitHubClient
from ..core import InputError, RunError, TraceRecorder, redact_text, run_lock
from ..repo import GitFailed, GitTimeout, checkout_pull_request, fetch_branch
from .fix_runs import ApprovalOutcome, FixOutcome, approve_run, start_fix
from .handoff import HandOffTarget, hand_off
from .settings import Settings

__all__ = ["ApprovedPullRequest", "CheckoutFailed", "PullRequestHead", "approve_for_pull_request",
           "fix_pull_request", "pull_request_head"]


class CheckoutFailed(RunError):
    """The pull request's head (or the branch an earlier attempt pushed) could not be fetched: nothing was applied
    or pushed. `why` is git's own message, redacted (it is shown to the user)."""

    def __init__(self, message: str, why: str) -> None:
        super().__init__(message)
        self.why = why


@dataclass(frozen=True)
class PullRequestHead:
    owner: str
    repo: str
    number: int
    branch: str  # the PR's head branch (the draft PR of an approved fix goes into it)
    sha: str
    clone_url: str  # the base repository: its refs/pull/N/head holds the head, forks' PRs included


def pull_request_head(settings: Settings, owner: str, repo: str, number: int) -> PullRequestHead:
    with GitHubClient(settings.github_token, settings.github_api_url) as client:
        pr = client.get_pull_request(owner, repo, number)
    head, base = pr.get("head") or {}, pr.get("base") or {}
    clone_url = (base.get("repo") or {}).get("clone_url")
    if not head.get("ref") or not head.get("sha") or not clone_url:
        raise InputError(f"pull request {owner}/{repo}#{number}: no head branch, commit or clone URL")
    return PullRequestHead(owner, repo, number, str(head["ref"]), str(head["sha"]), str(clone_url))


def _fresh(workdir: Path, name: str) -> Path:
    root = workdir / name
    shutil.rmtree(root, ignore_errors=True)
    return root


def fix_pull_request(settings: Settings, head: PullRequestHead, run_url: str, workdir: Path) -> FixOutcome:
    """Diagnose the failed run at `run_url`, then run the fix agent on the PR's head until it proposes."""
    root = _fresh(workdir, f"{head.owner}-{head.repo}-{head.number}-fix")
    try:
        _checkout(root, head, settings.github_token)
        return start_fix(run_url, settings, repo=root, no_llm_diagnosis=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _checkout(root: Path, head: PullRequestHead, token: str | None, *, also: str | None = None) -> None:
    """A fresh checkout of the PR's head in `root` (and branch `also` when the remote has it), or CheckoutFailed."""
    try:
        checkout_pull_request(root, head.clone_url, head.number, head.branch, token=token)
        if also is not None:
            fetch_branch(root, head.clone_url, also, token=token)
    except (GitFailed, GitTimeout, InputError) as exc:  # InputError: a clone URL git is not let use
        said = (exc.stderr.strip() if isinstance(exc, GitFailed) else "") or str(exc)
        why = redact_text(said[-400:])
        raise CheckoutFailed(f"fetching pull request #{head.number} of {head.owner}/{head.repo} failed: {why}; "
                             "nothing was applied or pushed", why) from None


def _record_checkout_failure(run_id: str, exc: CheckoutFailed) -> None:
    # The run's trace says why this approval did nothing (the service keeps the trace with the run).
    with run_lock(run_id):
        TraceRecorder.resume(run_id).step("decision", result="checkout failed", error=str(exc),
                                          detail={"decision": "checkout"})


@dataclass(frozen=True)
class ApprovedPullRequest:
    outcome: ApprovalOutcome
    branch: str
    number: int
    url: str
    existed: bool


def approve_for_pull_request(settings: Settings, head: PullRequestHead, run_id: str, sha256: str, who: str,
                             workdir: Path) -> ApprovedPullRequest:
    """Apply run `run_id`'s proposal (which must hash to `sha256`) as branch `repopilot/<run_id>` on the PR's
    head, then hand it off (the same `hand_off` as `repopilot approve --pr`): push it and open (or find) its
    draft pull request into the PR's branch."""
    branch = f"repopilot/{run_id}"
    root = _fresh(workdir, f"{head.owner}-{head.repo}-{head.number}-approve")
    token = settings.github_token
    target = HandOffTarget(root, head.clone_url, push_token=token, owner=head.owner, repo=head.repo, base=head.branch,
                           api_url=settings.github_api_url)
    try:
        try:
            _checkout(root, head, token, also=branch)  # a branch pushed by an earlier attempt: recognised
        except CheckoutFailed as exc:
            _record_checkout_failure(run_id, exc)
            raise
        outcome = approve_run(run_id, repo=root, sha256=sha256, who=who)
        note = (f"Approved by @{who} in #{head.number} (diff sha256 `{outcome.proposal.sha256}`, run `{run_id}`).")
        done = hand_off(settings, run_id, target, pull_request=True, note=note)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return ApprovedPullRequest(outcome, branch, done.pull_request or 0, done.pull_request_url or "", done.existed)
