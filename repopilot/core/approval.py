"""Approval as a deferred result: a tool that needs a person's yes raises `ApprovalRequired`; the loop records
the proposal, ends the run as `awaiting_approval`, and nothing is applied until `approve` checks the sha256
of exactly the diff that was shown. The decision is written into the proposal, so a resumed run tells the
model what the person decided instead of asking again."""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import BaseModel

from .messages import UserMessage
from .receipt import Receipt

__all__ = ["ApprovalRequired", "Decision", "EndRun", "Proposal", "decision_message", "diff_sha256"]

Decision = Literal["approved", "rejected"]


def diff_sha256(diff: str) -> str:
    return hashlib.sha256(diff.encode("utf-8")).hexdigest()


class Proposal(BaseModel):
    diff: str
    explanation: str
    sha256: str
    files: list[str] = []
    tool_call_id: str | None = None
    run_id: str | None = None
    # The commit the diff was validated against; the apply starts from HEAD at approval time.
    base: str | None = None
    base_branch: str | None = None  # the branch HEAD was on then (None: detached, or an older trace)
    decision: Decision | None = None
    decided_by: str | None = None
    decided_at: str | None = None
    reason: str | None = None
    branch: str | None = None
    commit: str | None = None
    # The approved commit as git stores it (`git cat-file commit`): a checkout without the commit (the service
    # retrying a push from a fresh clone) makes exactly it again from this and the diff (repo/apply.py).
    commit_object: str | None = None
    # What verification ran and showed (None: the proposal was not verified, or an older trace).
    receipt: Receipt | None = None

    @classmethod
    def make(cls, diff: str, explanation: str, **fields: Any) -> Proposal:
        return cls(diff=diff, explanation=explanation, sha256=diff_sha256(diff), **fields)

    def intact(self) -> bool:
        """True when the diff still hashes to the recorded sha256 (the trace was not altered)."""
        return diff_sha256(self.diff) == self.sha256


class EndRun(Exception):
    """Raised by a tool to end the run with `status` after its result (`message`) is recorded."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class ApprovalRequired(EndRun):
    """Raised by a tool to stop the run until a person approves `proposal`."""

    def __init__(self, proposal: Proposal, message: str = "proposal recorded; awaiting approval") -> None:
        super().__init__("awaiting_approval", message)
        self.proposal = proposal


def decision_message(proposal: Proposal) -> UserMessage:
    """What the model is told when a run continues after the person decided on its proposal."""
    if proposal.decision == "approved":
        where = f" as commit {proposal.commit} on branch {proposal.branch}" if proposal.branch else ""
        text = (f"The person approved your proposal (sha256 {proposal.sha256}); it was applied{where}. "
                "Do not propose it again. Finish with a short summary of the fix and how to verify it.")
    else:
        why = f" Reason given: {proposal.reason}" if proposal.reason else " No reason was given."
        text = (f"The person rejected your proposal (sha256 {proposal.sha256}); nothing was applied.{why} "
                "Propose a different fix with propose_fix if you can, or explain why you cannot.")
    return UserMessage(content=text)
