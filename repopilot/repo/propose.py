"""The `propose_fix` tool: the only way the fix agent can suggest a change. It validates the diff, then ends the
run awaiting approval. Keyed by (run_id, tool_call_id): a call re-run after a crash returns the proposal it
already recorded instead of recording a second one."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..core import ApprovalRequired, EndRun, Proposal, Receipt, Tool, ToolContext, redact_text
from .apply import head_branch
from .diff import InvalidDiff, ValidatedDiff, validate_diff
from .edit import edit_diff

__all__ = ["MAX_EXPLANATION_CHARS", "MAX_INVALID_PROPOSALS", "Verifier", "mark_applied", "propose_fix_tool",
           "refusal"]

# Checks a valid diff before it is recorded (the application layer's verification); its receipt says how it went.
Verifier = Callable[[ValidatedDiff, ToolContext], Receipt]

MAX_INVALID_PROPOSALS = 3
MAX_EXPLANATION_CHARS = 4000
# Keys in the run's tool state (the trace's `extra`), so they survive a crash with the trace.
_PROPOSALS = "proposals"
_INVALID = "invalid_proposals"
APPLIED_BRANCH = "applied_branch"


def mark_applied(state: dict[str, Any], branch: str) -> None:
    """Record in a run's tool state that its fix was applied on `branch`: `propose_fix` then refuses to propose
    again, whatever call id a model (or a replayed script) sends."""
    state[APPLIED_BRANCH] = branch


def refusal(receipt: Receipt) -> str:
    """What the model is told when verification refuses its diff: the guard's hits, or the command's output."""
    if receipt.outcome == "blocked":
        hits = "; ".join(f"{h.rule} in {h.file}: {h.line.strip()[:120]}" for h in receipt.guard.hits[:8])
        return (f"refused: this diff weakens the checks instead of fixing the cause ({hits}). Fix the code the "
                "failure points at; do not skip, delete or loosen tests or silence the check")
    command = receipt.command.command if receipt.command else "the failing command"
    after = receipt.after
    lines = "\n".join(after.causal) if after and after.causal else "(no causal lines found in its output)"
    return (f"verification: `{command}` still fails with this diff applied "
            f"({receipt.reason.rsplit('(', 1)[-1].rstrip(')')}). The causal lines of its output:\n{lines}\n"
            "Read the code again and propose a corrected diff")


def _the_diff(root: Path, diff: str | None, path: str | None, old_text: str | None, new_text: str | None) -> str:
    """The proposal's diff: as the model wrote it, or written here from its one edit."""
    edit = (path, old_text, new_text)
    if diff and any(v is not None for v in edit):
        raise InvalidDiff("give either diff, or path with old_text and new_text, not both")
    if diff:
        return diff
    if path is None or old_text is None or new_text is None:
        missing = [n for n, v in zip(("path", "old_text", "new_text"), edit, strict=True) if v is None]
        raise InvalidDiff("no change given: send a unified diff as diff, or one edit as path, old_text and "
                          f"new_text (missing: {', '.join(missing)})")
    return edit_diff(root, path, old_text, new_text)


def propose_fix_tool(root: Path, *, max_invalid: int = MAX_INVALID_PROPOSALS, verify: Verifier | None = None) -> Tool:
    """`propose_fix` bound to the repository at `root`; after `max_invalid` invalid diffs the run stops (a diff
    verification refuses counts as one). `verify` checks each valid diff before it is recorded."""

    def propose_fix(explanation: str, diff: str | None = None, path: str | None = None,
                    old_text: str | None = None, new_text: str | None = None,
                    ctx: ToolContext | None = None) -> str:
        """Propose a fix for a person to review. Give the change EITHER as `diff`, OR as one edit: `path`,
        `old_text` and `new_text`. Nothing is applied until a person approves it; after this call the run pauses,
        so make it your last call.

        Args:
            explanation: Why this change fixes the failure, in a few sentences; the first line is the summary.
            diff: A unified diff against HEAD: `--- a/PATH` and `+++ b/PATH` lines, then `@@ -A,B +C,D @@` hunks
                with about 3 unchanged context lines copied exactly from the current file (read it first).
            path: For one edit instead of a diff: the file to change, relative to the repository root.
            old_text: For one edit: the exact text to replace, copied from the file (without read_file's line
                numbers); it must occur once in the file.
            new_text: For one edit: the text that replaces old_text.
        """
        assert ctx is not None  # the loop always passes the run's context to a tool that takes one
        # Checked first: once a fix is applied the run never goes back to awaiting approval, whatever call id
        # a model (or a replayed script) sends.
        if ctx.state.get(APPLIED_BRANCH):
            raise InvalidDiff(f"a fix for this run was already approved and applied on branch "
                              f"{ctx.state[APPLIED_BRANCH]}; do not propose again, give your final answer")
        recorded = ctx.state.setdefault(_PROPOSALS, {})
        if ctx.tool_call_id in recorded:
            raise ApprovalRequired(Proposal.model_validate(recorded[ctx.tool_call_id]))
        try:
            if not explanation.strip():
                raise InvalidDiff("the explanation is empty: say why this change fixes the failure")
            if len(explanation) > MAX_EXPLANATION_CHARS:
                raise InvalidDiff(f"the explanation has {len(explanation)} characters; keep it under "
                                  f"{MAX_EXPLANATION_CHARS}")
            text = _the_diff(root, diff, path, old_text, new_text)
            if redact_text(text) != text:
                # The trace never holds secrets, so a diff with one could not be recorded as it is shown.
                raise InvalidDiff("the diff contains text that looks like a credential; leave secrets out")
            checked = validate_diff(root, text)
            receipt = verify(checked, ctx) if verify is not None else None
            if receipt is not None and receipt.outcome in ("blocked", "still_failing"):
                raise InvalidDiff(refusal(receipt))
        except InvalidDiff as exc:
            invalid: list[str] = ctx.state.setdefault(_INVALID, [])
            if ctx.tool_call_id not in invalid:
                invalid.append(ctx.tool_call_id)
            left = max_invalid - len(invalid)
            if left <= 0:
                raise EndRun("failed:invalid_proposals",
                             f"invalid proposal: {exc}. That was invalid proposal {len(invalid)} of "
                             f"{max_invalid} allowed; the run stops without a fix.") from None
            raise InvalidDiff(f"{exc} ({left} {'attempt' if left == 1 else 'attempts'} left)") from None
        proposal = Proposal.make(checked.diff, explanation.strip(), files=checked.files,
                                 tool_call_id=ctx.tool_call_id, run_id=ctx.run_id, base=checked.base,
                                 base_branch=head_branch(root), receipt=receipt)
        recorded[ctx.tool_call_id] = proposal.model_dump(mode="json")
        files = ", ".join(checked.files)
        checked_how = f"; verification: {receipt.outcome.replace('_', ' ')}: {receipt.reason}" if receipt else ""
        raise ApprovalRequired(proposal, f"proposal recorded ({files}; +{checked.added}/-{checked.removed})"
                                         f"{checked_how}; awaiting a person's approval")

    return Tool(propose_fix, name="propose_fix", side_effects=True)
