"""Fix runs driven from a pull request (the service's `/repopilot fix` and `/repopilot approve <sha256>`): the
same lifecycle as `repopilot fix` and `repopilot approve`, on a fresh checkout of the PR's head, with the approved
commit pushed to `repopilot/<run_id>` and offered as a draft pull request into the PR's branch.

Nothing is pushed without an approval naming the proposal's sha256 (`approve_run` checks it). Each step is
idempotent, so a job killed anywhere can run again: the checkout is fresh, an already-pushed branch is fetched
first (and recognised by its commit trailers), the push is never forced, the draft PR is found before created."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from ..ci import GitHubClient
from ..core import InputError
from ..repo import checkout_pull_request, fetch_branch, push_branch
from .fix_runs import ApprovalOutcome, FixOutcome, approve_run, start_fix
from .github_app import open_draft_pull_request
from .settings import Settings

__all__ = ["ApprovedPullRequest", "PullRequestHead", "approve_for_pull_request", "fix_pull_request",
           "pull_request_head"]


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
    checkout_pull_request(root, head.clone_url, head.number, head.branch, token=settings.github_token)
    try:
        return start_fix(run_url, settings, repo=root, no_llm_diagnosis=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


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
    head, push it, and open (or find) its draft pull request into the PR's branch."""
    branch = f"repopilot/{run_id}"
    root = _fresh(workdir, f"{head.owner}-{head.repo}-{head.number}-approve")
    token = settings.github_token
    try:
        checkout_pull_request(root, head.clone_url, head.number, head.branch, token=token)
        fetch_branch(root, head.clone_url, branch, token=token)  # pushed by an earlier attempt: recognised
        outcome = approve_run(run_id, repo=root, sha256=sha256, who=who)
        push_branch(root, head.clone_url, branch, token=token)  # never forced; the same commit is a no-op
    finally:
        shutil.rmtree(root, ignore_errors=True)
    explanation = outcome.proposal.explanation.strip() or "RepoPilot's proposed fix"
    number, url, existed = open_draft_pull_request(
        settings, head.owner, head.repo, branch=branch, base=head.branch,
        title=f"RepoPilot: {explanation.splitlines()[0][:80]}",
        body=f"{explanation}\n\nApproved by @{who} in #{head.number} (diff sha256 `{outcome.proposal.sha256}`, run "
             f"`{run_id}`).")
    return ApprovedPullRequest(outcome, branch, number, url, existed)
