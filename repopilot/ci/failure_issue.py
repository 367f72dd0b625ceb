"""One GitHub issue per failure fingerprint on the default branch (the optional `failure_issues` mode): the
issue's text, and the state it carries in hidden markers so that a later run finds it and updates it.

The issue body is the only state: `<!-- repopilot:fingerprint=FP -->` finds the issue among the repository's
issues labelled `ISSUE_LABEL`, and `<!-- repopilot:state={...} -->` holds the occurrence count and the run ids
already counted (so a replayed run changes nothing). A person may edit the body; unreadable state starts the
count again rather than failing the report."""

from __future__ import annotations

import json
import re

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..core import redact_text
from ..core.sanitize import visible
from .fingerprint import short_fingerprint
from .render import _code, _md, _url, clip, cut_line
from .report import ReportFailure

__all__ = [
    "ISSUE_LABEL",
    "IssueState",
    "Occurrence",
    "issue_marker",
    "marked_fingerprint",
    "next_issue_state",
    "read_issue_state",
    "render_failure_issue",
]

ISSUE_LABEL = "repopilot-failure"
_MAX_RUNS_KEPT = 50  # run ids remembered against replays; older runs are long past replaying
_MARKER = re.compile(r"<!-- repopilot:fingerprint=([0-9a-f]{8,64}) -->")
_STATE = re.compile(r"<!-- repopilot:state=(\{[^<>]*\}) -->")


def issue_marker(fingerprint: str) -> str:
    return f"<!-- repopilot:fingerprint={fingerprint} -->"


def marked_fingerprint(body: str) -> str | None:
    """The fingerprint an issue body is kept for, or None when it is no failure issue of ours."""
    found = _MARKER.search(body or "")
    return found.group(1) if found else None


class IssueState(BaseModel):
    """What the issue remembers: how often the failure was seen, when first, and which runs were counted."""

    model_config = ConfigDict(extra="ignore")
    count: int = 0
    runs: list[str] = Field(default_factory=list)
    first_run: str | None = None  # the first run's URL
    first_commit: str | None = None
    first_seen: str | None = None  # ISO 8601, UTC

    def counted(self, run_id: str) -> bool:
        return run_id in self.runs


class Occurrence(BaseModel):
    """One run of the default branch failing with the fingerprint (one or more of its jobs)."""

    run_id: str
    run_url: str
    commit: str | None = None
    branch: str
    at: str  # ISO 8601, UTC
    jobs: list[str]
    failure: ReportFailure


def read_issue_state(body: str) -> IssueState | None:
    """The state an issue body carries, or None when it carries none that can be read."""
    found = _STATE.search(body or "")
    if found is None:
        return None
    try:
        return IssueState.model_validate(json.loads(found.group(1)))
    except (ValueError, ValidationError):
        return None


def next_issue_state(state: IssueState | None, occ: Occurrence) -> IssueState:
    """The state after counting `occ` (callers skip runs already counted)."""
    if state is None or state.count < 1:
        return IssueState(count=1, runs=[occ.run_id], first_run=occ.run_url, first_commit=occ.commit,
                          first_seen=occ.at)
    return state.model_copy(update={"count": state.count + 1, "runs": [*state.runs, occ.run_id][-_MAX_RUNS_KEPT:]})


def render_failure_issue(occ: Occurrence, state: IssueState) -> tuple[str, str]:
    """The issue's title and body. Log-derived text passes the sanitiser and the whole text the redaction."""
    f = occ.failure
    title = clip(f"CI failure on {occ.branch}: {f.category}: {f.message or f.rule}", 200)
    # `<` and `>` as JSON escapes: nothing in the state (a URL the API gave) can end the HTML comment early.
    hidden = json.dumps(state.model_dump(mode="json"), separators=(",", ":")).replace("<", "\\u003c") \
        .replace(">", "\\u003e")
    first = f"[run]({_url(state.first_run)})" if state.first_run else "?"
    out = [issue_marker(f.fingerprint), f"<!-- repopilot:state={hidden} -->", "",
           f"### `{_md(f.rule)}` ({f.category}) fails on `{_md(occ.branch)}`", "",
           "| | |", "|---|---|",
           f"| seen | {state.count} time{'s' if state.count != 1 else ''} |",
           f"| first | {first} at `{_md((state.first_commit or '?')[:7])}`, {_md(state.first_seen or '?')} |",
           f"| last | [run]({_url(occ.run_url)}) at `{_md((occ.commit or '?')[:7])}`, {_md(occ.at)} |",
           f"| jobs | {', '.join(f'`{_md(clip(job, 60))}`' for job in occ.jobs[:5])} |",
           f"| where | {_md(f.where()) or '-'} |",
           f"| fingerprint | `{short_fingerprint(f.fingerprint)}` |", "",
           f"> {_md(clip(f.message, 300))}", "", "```text"]
    out += [f"{item.line:>6} | {_code(cut_line(item.text))}" for item in f.lines[:30]]
    out.append("```")
    if f.hint:
        out += ["", f"**Hint:** {_md(f.hint)}"]
    out += ["", "_Kept by RepoPilot (`failure_issues`): one issue per failure on the default branch, updated when "
                "it fails again. Close it when fixed: it is reopened if the failure comes back. Close it as not "
                "planned to stop tracking it._"]
    return redact_text(visible(title, newlines=False)), redact_text("\n".join(out) + "\n")
