"""The pull-request comment commands: `/repopilot fix` and `/repopilot approve <sha256>`. Only users with write
access to the repository may give them; anyone else is refused, and told so in a reply."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..app import WRITE_ROLES, Settings, permission_of, upsert_comment
from .events import ApproveCommand, FixCommand

if TYPE_CHECKING:
    from .jobs import Runtime

__all__ = ["approve_command", "fix_command"]

REPLY_MARKER = "<!-- repopilot-command -->"


def _reply(settings: Settings, work: FixCommand | ApproveCommand, text: str) -> None:
    """One reply per command comment (a job run twice edits it instead of replying again)."""
    marker = f"{REPLY_MARKER}<!-- {work.comment_id} -->"
    upsert_comment(settings, work.owner, work.repo, work.pull_request, text, marker)


def _allowed(settings: Settings, work: FixCommand | ApproveCommand, what: str) -> bool:
    role = permission_of(settings, work.owner, work.repo, work.user)
    if role in WRITE_ROLES:
        return True
    _reply(settings, work, f"@{work.user} RepoPilot only {what} for users with write access to {work.full_name} "
                           f"(you have `{role}`); nothing was done.")
    return False


def fix_command(rt: Runtime, work: FixCommand) -> None:
    settings = rt.as_installation(work.installation_id)
    if not _allowed(settings, work, "starts fix runs"):
        return
    _reply(settings, work, "RepoPilot: fix runs from comments are not enabled on this installation yet.")


def approve_command(rt: Runtime, work: ApproveCommand) -> None:
    settings = rt.as_installation(work.installation_id)
    if not _allowed(settings, work, "applies approvals"):
        return
    _reply(settings, work, "RepoPilot: approvals from comments are not enabled on this installation yet.")
