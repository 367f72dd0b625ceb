"""The optional hand-off of an approved fix, one implementation for `repopilot approve --push/--pr` and the
service's `/repopilot approve`: push exactly the commit the approval recorded to branch `repopilot/<run_id>`, then
(with a pull request asked for) open a DRAFT pull request whose body is the explanation, the diagnosis and the
verification receipt. Nothing happens without a recorded approval, and the approval is bound to the diff (its
sha256) and to the base commit (`approve_run` refuses otherwise), so what is pushed is what a person reviewed.

Token rules, the diagnosis's: GITHUB_TOKEN goes only to api.github.com (for a github.com remote) or to the
GITHUB_API_URL the person configured, never to a host a remote URL named. The CLI pushes with the person's own
git credentials; the service pushes with its installation token to the clone URL GitHub's API gave it.

Every check that can refuse runs before the push, so a refusal pushes nothing; the approval stays recorded, and
running the hand-off again is safe (the same commit pushed again is a no-op; the draft is found before created).
A hand-off run again in a checkout that lacks the approved commit (the service retries in a fresh clone after a
failed push) makes that commit again from the object recorded with the approval and checks it hashes the same:
exactly the approved commit is pushed, or nothing."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from ..ci import DEFAULT_API_URL, read_report, render_markdown
from ..core import (
    ApprovalError,
    ConfigError,
    InputError,
    Proposal,
    RunError,
    RunTrace,
    TraceRecorder,
    UsageError,
    load_trace,
    redact_text,
    run_lock,
)
from ..core.sanitize import visible
from ..repo import (
    GitFailed,
    GitTimeout,
    check_push_url,
    open_repo,
    parse_remote,
    push_branch,
    rebuild_commit,
    remote_url,
    run_git,
)
from .fix_runs import load_proposal
from .github_app import open_draft_pull_request
from .receipts import receipt_markdown
from .settings import Settings

__all__ = ["HandOff", "HandOffTarget", "StaleApproval", "hand_off", "pull_request_body", "remote_target"]

_GITHUB_HOSTS = ("github.com", "www.github.com")
_BODY_CHARS = 60_000  # under GitHub's 65,536-character limit on a pull request's body
_EXPLANATION_CHARS = 20_000


@dataclass(frozen=True)
class HandOffTarget:
    """Where an approved branch goes. `owner`/`repo`/`base`/`api_url` are needed only for a pull request."""

    root: Path  # the repository holding the approved commit
    push_url: str
    push_token: str | None = None  # sent with the push as a header (the service's); None: the person's own git
    owner: str | None = None
    repo: str | None = None
    base: str | None = None  # the branch the draft pull request goes into
    api_url: str | None = None  # where the token may go, by the rule above


@dataclass(frozen=True)
class HandOff:
    branch: str
    commit: str
    pushed_to: str  # redacted (a URL may carry credentials)
    pull_request: int | None = None
    pull_request_url: str | None = None
    existed: bool = False  # the draft pull request was already there (a hand-off run again)


def remote_target(settings: Settings, run_id: str, *, repo: Path | None, remote: str,
                  pull_request: bool) -> HandOffTarget:
    """The CLI's hand-off target: the repository's remote `remote`; for a pull request, the GitHub repository its
    URL names, the API the token may go to and the branch the proposal was made on. Asked before the approval is
    applied, so each refusal here leaves everything as it was."""
    trace = load_trace(run_id)
    root = open_repo(repo or trace.repo or ".")
    push_url = remote_url(root, remote, push=True)
    if push_url is None:
        raise UsageError(f"the repository has no remote {remote!r}; nothing was applied or pushed (name another "
                         "with --remote)")
    try:
        check_push_url(push_url)
    except InputError as exc:
        raise InputError(f"remote {remote!r}: {exc}; nothing was applied or pushed") from None
    if not pull_request:
        return HandOffTarget(root, push_url)
    found = parse_remote(remote_url(root, remote) or "")
    if found is None:
        raise UsageError(f"the remote {remote!r} does not name a GitHub repository (OWNER/REPO), so no pull request "
                         "can be opened; nothing was applied or pushed (--push alone pushes the branch)")
    host, owner, name = found
    if not settings.github_token:
        raise ConfigError("opening a pull request needs GITHUB_TOKEN (a token that may create pull requests); "
                          "nothing was applied or pushed (--push alone pushes the branch)")
    base = load_proposal(trace).base_branch
    if base is None:
        raise UsageError("the proposal was made on a detached HEAD: there is no branch to open the pull request "
                         "into; nothing was applied or pushed (--push alone pushes the branch)")
    return HandOffTarget(root, push_url, owner=owner, repo=name, base=base, api_url=_api_url(settings, host))


def _api_url(settings: Settings, host: str) -> str:
    if settings.github_api_url:
        return settings.github_api_url
    if host in _GITHUB_HOSTS:
        return DEFAULT_API_URL
    raise ConfigError(f"the remote is on {host}, not github.com: RepoPilot sends GITHUB_TOKEN only to api.github.com "
                      f"or to GITHUB_API_URL (for a GitHub Enterprise Server you trust, set "
                      f"GITHUB_API_URL=https://{host}/api/v3); nothing was applied or pushed")


def _approved(run_id: str, trace: RunTrace) -> Proposal:
    proposal = load_proposal(trace)
    if proposal.decision != "approved" or not proposal.branch or not proposal.commit:
        raise ApprovalError(f"run {run_id} is not approved; nothing was pushed")
    receipt = proposal.receipt
    if receipt is not None and receipt.diff_sha256 and receipt.diff_sha256 != proposal.sha256:
        raise ApprovalError(f"run {run_id}: the receipt is bound to diff {receipt.diff_sha256[:16]}, the approval to "
                            f"{proposal.sha256[:16]}; nothing was pushed")
    return proposal


class StaleApproval(ApprovalError):
    """An approval recorded without its commit's object (by a RepoPilot from before `commit_object`), handed off
    from a checkout that lacks the commit: exactly that commit cannot be pushed, so the approval is withdrawn and
    the person is asked to approve again (which applies the reviewed diff afresh and records the object)."""


def _check_tip(run_id: str, root: Path, proposal: Proposal) -> None:
    """The commit to push exists here: the approved one, or (in a checkout that lacks it, as a retried hand-off's
    fresh clone) made again, byte for byte, from its recorded object and the diff; else nothing is pushed."""
    commit = str(proposal.commit)
    found = run_git(root, ["rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"], check=False).strip()
    if found == commit:
        return
    if proposal.commit_object is None:
        _withdraw(run_id, proposal)
        raise StaleApproval(f"run {run_id} was approved by an earlier RepoPilot, which did not record how to make "
                            f"the approved commit {commit[:12]} again, and this checkout does not have it; nothing "
                            f"was pushed. The approval is withdrawn: approve the run again (`repopilot approve "
                            f"{run_id} --push`) to apply the reviewed diff afresh and push that")
    rebuild_commit(root, proposal.diff, commit, proposal.commit_object)


def _withdraw(run_id: str, proposal: Proposal) -> None:
    """The run awaits approval again, its old approval kept in the trace's steps (the caller holds the lock)."""
    rec = TraceRecorder.resume(run_id)
    pending = proposal.model_copy(update={"decision": None, "decided_by": None, "decided_at": None, "branch": None,
                                          "commit": None})
    rec.trace.proposal = pending.model_dump(mode="json")
    rec.step("approval", result="approval withdrawn", detail={
        "decision": "withdrawn", "sha256": proposal.sha256, "commit": proposal.commit,
        "why": "approved without the commit's object, and the commit is not in the checkout handed off from"})
    rec.finish("awaiting_approval")


def hand_off(settings: Settings, run_id: str, target: HandOffTarget, *, pull_request: bool,
             note: str | None = None) -> HandOff:
    """Push run `run_id`'s approved commit to `target`, then (with `pull_request`) open or find its draft pull
    request. The hand-off is recorded in the run's trace (redacted), a failed push too."""
    with run_lock(run_id):
        trace = load_trace(run_id)
        proposal = _approved(run_id, trace)
        if pull_request and not (target.owner and target.repo and target.base and settings.github_token):
            raise ConfigError("a pull request needs a GitHub repository, a base branch and GITHUB_TOKEN; nothing "
                              "was pushed")
        _check_tip(run_id, target.root, proposal)
        branch, commit = str(proposal.branch), str(proposal.commit)
        shown = redact_text(target.push_url)
        rec = TraceRecorder.resume(run_id)
        try:
            push_branch(target.root, target.push_url, branch, token=target.push_token, commit=commit)
        except (GitFailed, GitTimeout) as exc:
            rec.step("decision", result="push failed", error=str(exc),
                     detail={"decision": "hand_off", "branch": branch, "commit": commit, "remote": shown})
            why = (exc.stderr.strip()[-400:] if isinstance(exc, GitFailed) else "") or str(exc)
            raise RunError(f"pushing {branch} to {shown} failed: {why}; the approval "
                           "is recorded and the branch is still there locally; the hand-off can be run again") from None
        done = HandOff(branch, commit, shown)
        if pull_request:
            done = _open(settings, target, trace, proposal, note, done)
        rec.step("decision", result=f"pushed {branch}" + (f"; draft pull request #{done.pull_request}"
                                                         if done.pull_request else ""),
                 detail={"decision": "hand_off", "branch": branch, "commit": commit, "remote": shown,
                         "pull_request": done.pull_request, "pull_request_url": done.pull_request_url,
                         "existed": done.existed})
        return done


def _open(settings: Settings, target: HandOffTarget, trace: RunTrace, proposal: Proposal, note: str | None,
          done: HandOff) -> HandOff:
    first = (proposal.explanation.strip() or "RepoPilot's proposed fix").splitlines()[0]
    number, url, existed = open_draft_pull_request(
        replace(settings, github_api_url=target.api_url), str(target.owner), str(target.repo), branch=done.branch,
        base=str(target.base), title=redact_text(visible(f"RepoPilot: {first[:80]}", newlines=False)),
        body=pull_request_body(trace, proposal, note))
    return replace(done, pull_request=number, pull_request_url=url, existed=existed)


def pull_request_body(trace: RunTrace, proposal: Proposal, note: str | None = None) -> str:
    """The draft pull request's body (Markdown): who approved what, the explanation, the receipt (command, exit
    codes before and after, output digests, the guard, the diff's sha256) and the diagnosis. Everything untrusted
    in it (model output, log lines) is made visible and redacted. GitHub takes 65,536 characters: the diagnosis,
    last, is what gets cut."""
    reports = [r for r in (read_report(d) for d in trace.reports()) if r is not None]
    head = note or (f"Proposed by RepoPilot (run `{trace.run_id}`) and approved by {proposal.decided_by or 'a person'}"
                    f"; diff sha256 `{proposal.sha256}`.")
    parts = [head, "### Explanation", visible(proposal.explanation.strip() or "(none)")[:_EXPLANATION_CHARS],
             "### Verification receipt", visible(receipt_markdown(trace))]
    body = redact_text("\n\n".join(parts) + "\n")
    if reports:
        room = _BODY_CHARS - len(body) - 200
        diagnosis = redact_text(render_markdown(reports))
        body += f"\n### Diagnosis\n\n{_cut(diagnosis, room, trace.run_id)}\n"
    return body


def _cut(text: str, room: int, run_id: str) -> str:
    """`text` within `room` characters, cut at a line, a code fence left open closed again."""
    if len(text) <= room:
        return text
    kept = text[:max(room, 0)].rsplit("\n", 1)[0]
    if sum(line.startswith("```") for line in kept.splitlines()) % 2:
        kept += "\n```"
    return kept + f"\n\n_(cut here: `repopilot runs show {run_id}` has the whole diagnosis)_"
