"""Which webhook deliveries become work, as typed jobs: a failed workflow run to diagnose, a `/repopilot fix` or
`/repopilot approve <sha256>` comment on a pull request. Everything else is acknowledged and ignored."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel

__all__ = ["ApproveCommand", "DiagnoseRun", "FixCommand", "Work", "route"]

_FIX = re.compile(r"^/repopilot\s+fix\b", re.I)
_APPROVE = re.compile(r"^/repopilot\s+approve\s+([0-9a-fA-F]{64})\b")
_APPROVE_ANY = re.compile(r"^/repopilot\s+approve\b", re.I)


class _Target(BaseModel):
    installation_id: int
    owner: str
    repo: str

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.repo}"


class DiagnoseRun(_Target):
    kind: Literal["diagnose"] = "diagnose"
    run_id: int
    run_url: str
    head_sha: str
    pull_request: int | None = None

    def lock(self) -> str:
        return f"{self.full_name}#{self.pull_request}" if self.pull_request else f"{self.full_name}@{self.head_sha}"


class _Command(_Target):
    pull_request: int
    user: str
    comment_id: int

    def lock(self) -> str:
        return f"{self.full_name}#{self.pull_request}"


class FixCommand(_Command):
    kind: Literal["fix"] = "fix"


class ApproveCommand(_Command):
    kind: Literal["approve"] = "approve"
    sha256: str | None  # None: the comment named no (valid) sha256; the job says how to approve


Work = DiagnoseRun | FixCommand | ApproveCommand


def _target(payload: dict[str, Any]) -> dict[str, Any] | None:
    repo = payload.get("repository") or {}
    installation = payload.get("installation") or {}
    owner = (repo.get("owner") or {}).get("login")
    if not isinstance(installation.get("id"), int) or not owner or not repo.get("name"):
        return None
    return {"installation_id": installation["id"], "owner": owner, "repo": repo["name"]}


def _workflow_run(payload: dict[str, Any], target: dict[str, Any]) -> Work | None:
    run = payload.get("workflow_run") or {}
    if payload.get("action") != "completed" or run.get("conclusion") != "failure":
        return None
    prs = [p.get("number") for p in run.get("pull_requests") or [] if isinstance(p, dict)]
    return DiagnoseRun(**target, run_id=run["id"], run_url=run["html_url"], head_sha=run["head_sha"],
                       pull_request=next((n for n in prs if isinstance(n, int)), None))


def _comment(payload: dict[str, Any], target: dict[str, Any]) -> Work | None:
    issue, comment = payload.get("issue") or {}, payload.get("comment") or {}
    if payload.get("action") != "created" or "pull_request" not in issue:
        return None
    body = str(comment.get("body") or "").strip()
    who = {"pull_request": issue["number"], "user": (comment.get("user") or {}).get("login", ""),
           "comment_id": comment.get("id", 0)}
    if _FIX.match(body):
        return FixCommand(**target, **who)
    if _APPROVE_ANY.match(body):
        sha = _APPROVE.match(body)
        return ApproveCommand(**target, **who, sha256=sha.group(1).lower() if sha else None)
    return None


def route(event: str, payload: dict[str, Any]) -> Work | None:
    """The job a delivery asks for, or None (acknowledged, nothing to do). Malformed payloads are None too."""
    target = _target(payload)
    if target is None:
        return None
    try:
        if event == "workflow_run":
            return _workflow_run(payload, target)
        if event == "issue_comment":
            return _comment(payload, target)
    except (KeyError, TypeError, ValueError):
        return None
    return None
