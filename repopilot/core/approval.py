"""Approval as a deferred result: a tool that needs a person's yes raises `ApprovalRequired`; the loop records
the proposal, ends the run as `awaiting_approval`, and nothing is applied until `approve` checks the sha256
of exactly the diff that was shown."""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel

__all__ = ["ApprovalRequired", "Proposal", "diff_sha256"]


def diff_sha256(diff: str) -> str:
    return hashlib.sha256(diff.encode("utf-8")).hexdigest()


class Proposal(BaseModel):
    diff: str
    explanation: str
    sha256: str
    files: list[str] = []
    tool_call_id: str | None = None

    @classmethod
    def make(cls, diff: str, explanation: str, **fields: Any) -> Proposal:
        return cls(diff=diff, explanation=explanation, sha256=diff_sha256(diff), **fields)

    def intact(self) -> bool:
        """True when the diff still hashes to the recorded sha256 (the trace was not altered)."""
        return diff_sha256(self.diff) == self.sha256


class ApprovalRequired(Exception):
    """Raised by a tool to stop the run until a person approves `proposal`."""

    def __init__(self, proposal: Proposal, message: str = "proposal recorded; awaiting approval") -> None:
        super().__init__(message)
        self.proposal = proposal
        self.message = message
