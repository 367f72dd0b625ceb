"""The pull-request comment commands: `/repopilot fix` starts a fix run on the PR's head and posts its proposal;
`/repopilot approve <sha256>` pushes exactly that proposal to `repopilot/<run_id>` and opens a draft PR. Only users
with write access to the repository may give them; anyone else is refused, and told so in a reply.

Each command gets one reply (found by a marker naming the command's comment), so a job run twice edits its reply
instead of adding another, and a fix command already answered is answered again from the database, not re-run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..app import (
    WRITE_ROLES,
    CheckoutFailed,
    Settings,
    StaleApproval,
    approve_for_pull_request,
    diagnosed_run_url,
    fix_pull_request,
    load_proposal,
    permission_of,
    pull_request_head,
    upsert_comment,
)
from ..core import ApprovalError, GitHubAPIError, Proposal, RunError, RunTrace, load_trace, redact_text, restore_trace
from ..core.sanitize import visible
from .events import ApproveCommand, FixCommand
from .model_gate import record_usage

if TYPE_CHECKING:
    from .jobs import Runtime

__all__ = ["approve_command", "fix_command"]

REPLY_MARKER = "<!-- repopilot-command -->"


def _reply(settings: Settings, work: FixCommand | ApproveCommand, text: str) -> None:
    upsert_comment(settings, work.owner, work.repo, work.pull_request, text,
                   f"{REPLY_MARKER}<!-- {work.comment_id} -->")


def _allowed(settings: Settings, work: FixCommand | ApproveCommand, what: str) -> bool:
    role = permission_of(settings, work.owner, work.repo, work.user)
    if role in WRITE_ROLES:
        return True
    _reply(settings, work, f"@{work.user} RepoPilot only {what} for users with write access to {work.full_name} "
                           f"(you have `{role}`); nothing was done.")
    return False


def _fenced(text: str, lang: str = "") -> str:
    """A code block no backtick run inside `text` can close (the diff is model output)."""
    fence = "`" * max(3, _longest_backticks(text) + 1)
    return f"{fence}{lang}\n{text.rstrip()}\n{fence}"


def _longest_backticks(text: str) -> int:
    best = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        best = max(best, run)
    return best


def _proposal_text(trace: RunTrace, proposal: Proposal) -> str:
    return (f"RepoPilot proposes this fix (run `{trace.run_id}`):\n\n{redact_text(proposal.explanation.strip())}\n\n"
            f"{_fenced(redact_text(proposal.diff), 'diff')}\n\nsha256 `{proposal.sha256}`. Nothing is pushed until "
            f"someone with write access reviews it and comments:\n\n    /repopilot approve {proposal.sha256}")


def _answer_with(settings: Settings, work: FixCommand, trace: RunTrace) -> None:
    if trace.status == "awaiting_approval" and trace.proposal is not None:
        _reply(settings, work, _proposal_text(trace, load_proposal(trace)))
    else:
        answer = redact_text((trace.answer or "").strip()) or f"the run ended with status {trace.status}"
        _reply(settings, work, f"RepoPilot found no fix to propose (run `{trace.run_id}`): {answer}")


def fix_command(rt: Runtime, work: FixCommand) -> None:
    settings = rt.as_installation(work.installation_id)
    if not _allowed(settings, work, "starts fix runs"):
        return
    earlier = rt.store.proposal_for_command(work.full_name, work.comment_id)
    kept = rt.store.load_trace(earlier) if earlier else None
    if kept is not None:  # this command already ran to its proposal: answer again, do not ask the model again
        _answer_with(settings, work, kept)
        return
    if rt.store.spent_today(work.installation_id) >= rt.settings.installation_budget_usd:
        _reply(settings, work, f"RepoPilot: this installation has used its model budget for today "
                               f"(${rt.settings.installation_budget_usd:.2f}); try again tomorrow.")
        return
    head = pull_request_head(settings, work.owner, work.repo, work.pull_request)
    run_url = diagnosed_run_url(settings, work.owner, work.repo, head.sha, rt.settings.check_name)
    if run_url is None:
        _reply(settings, work, f"RepoPilot has not diagnosed a failed run on this PR's head ({head.sha[:12]}) "
                               "yet; nothing to fix.")
        return
    try:
        outcome = fix_pull_request(settings, head, run_url, rt.settings.workdir)  # each model call through the gate
    except CheckoutFailed as exc:
        _reply(settings, work, _checkout_failed("start a fix run", "/repopilot fix", exc))
        return
    trace = outcome.trace
    rt.store.save_trace(trace)
    record_usage(rt.store, work.installation_id, [trace])
    proposal = outcome.proposal
    if proposal is not None:
        rt.store.add_proposal(work.full_name, work.pull_request, proposal.sha256, trace.run_id, work.comment_id)
    _answer_with(settings, work, trace)


def approve_command(rt: Runtime, work: ApproveCommand) -> None:
    settings = rt.as_installation(work.installation_id)
    if not _allowed(settings, work, "applies approvals"):
        return
    if work.sha256 is None:
        _reply(settings, work, "To approve, comment `/repopilot approve <sha256>` with the sha256 of the proposal "
                               "you reviewed; nothing was pushed.")
        return
    run_id = rt.store.proposal_run(work.full_name, work.pull_request, work.sha256)
    trace = rt.store.load_trace(run_id) if run_id else None
    if run_id is None or trace is None:
        _reply(settings, work, f"No RepoPilot proposal on this pull request has sha256 `{work.sha256}`; nothing was "
                               "pushed.")
        return
    restore_trace(trace)  # this worker may not be the one that ran the fix
    head = pull_request_head(settings, work.owner, work.repo, work.pull_request)
    try:
        done = approve_for_pull_request(settings, head, run_id, work.sha256, work.user, rt.settings.workdir)
    except CheckoutFailed as exc:  # recorded in the run's trace; the run is as it was before this command
        _reply(settings, work, _checkout_failed("apply the approval", f"/repopilot approve {work.sha256}", exc))
        return
    except StaleApproval:  # withdrawn (recorded in the run's trace): the run awaits approval again
        _reply(settings, work, "RepoPilot could not push this approval: it was recorded by an earlier version, "
                               "which did not keep what is needed to make the approved commit again, and that commit "
                               "is gone; nothing was pushed. The old approval is withdrawn: comment "
                               f"`/repopilot approve {work.sha256}` again to re-approve, and the reviewed diff is "
                               "applied afresh on this pull request's head and pushed.")
        return
    except ApprovalError as exc:
        _reply(settings, work, f"RepoPilot could not apply the approval: {redact_text(str(exc))}")
        return
    except RunError as exc:
        if isinstance(exc, GitHubAPIError):
            raise  # the queue retries GitHub's faults (service/jobs.py)
        # A failed push: the approval is recorded with its commit, which a new checkout makes again exactly.
        _reply(settings, work, f"RepoPilot could not hand off the approved fix: {redact_text(str(exc))}. Comment "
                               f"`/repopilot approve {work.sha256}` again to retry: exactly the approved commit is "
                               "pushed.")
        return
    finally:
        _keep(rt, run_id)
    _reply(settings, work, f"Approved by @{work.user}: the fix is on branch `{done.branch}`, in draft pull request "
                           f"#{done.number} ({done.url}).")


def _checkout_failed(what: str, again: str, exc: CheckoutFailed) -> str:
    # git's message may name a URL or path: shown redacted and sanitised, in a block nothing inside can close.
    return (f"RepoPilot could not fetch this pull request to {what}; nothing was pushed. Comment `{again}` again "
            f"to retry. What git said:\n\n{_fenced(visible(exc.why))}")


def _keep(rt: Runtime, run_id: str) -> None:
    rt.store.save_trace(load_trace(run_id))
