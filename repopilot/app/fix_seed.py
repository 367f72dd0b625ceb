"""The first message of a fix run: the diagnosis as text for the model. Built from the reports only (the
category, the causal lines, files and lines, hints and the excerpt), never the whole log."""

from __future__ import annotations

from collections.abc import Sequence

from ..ci import DiagnosisReport, ReportFailure
from ..core import Message, SystemMessage, UserMessage, redact_text
from ..repo import FIX_SYSTEM_PROMPT

__all__ = ["MAX_SEED_EXCERPT_CHARS", "describe_diagnosis", "seed_messages"]

MAX_SEED_EXCERPT_CHARS = 12_000
_MAX_LINES_PER_FAILURE = 40
_MAX_FAILURES = 8


def _failure_text(number: int, failure: ReportFailure) -> list[str]:
    head = f"Failure {number}: [{failure.category}] {failure.message.strip()}"
    out = [head.rstrip()]
    facts = [("rule", failure.rule), ("confidence", failure.confidence), ("location", failure.where()),
             ("test", failure.test), ("hint", failure.hint)]
    out += [f"  {name}: {value}" for name, value in facts if value not in (None, "")]
    lines = failure.lines
    if lines:
        out.append("  causal log lines:")
        out += [f"  {entry.line:>6} | {entry.text}" for entry in lines[:_MAX_LINES_PER_FAILURE]]
        if len(lines) > _MAX_LINES_PER_FAILURE:
            out.append(f"  … {len(lines) - _MAX_LINES_PER_FAILURE} more causal lines not shown")
    return out


def describe_diagnosis(reports: Sequence[DiagnosisReport], *,
                       max_excerpt_chars: int = MAX_SEED_EXCERPT_CHARS) -> str:
    """The diagnosis as text for the model: one section per diagnosed job log."""
    sections: list[str] = []
    for report in reports:
        out = [f"Log: {report.log or report.source or '?'}",
               f"Category: {report.category} (decided by {report.decided_by})"]
        failures = report.failures
        for number, failure in enumerate(failures[:_MAX_FAILURES], 1):
            out += _failure_text(number, failure)
        if len(failures) > _MAX_FAILURES:
            out.append(f"… {len(failures) - _MAX_FAILURES} less likely failures not shown")
        if not failures:
            out.append("No rule recognised the failure; rely on the excerpt.")
        text = report.excerpt.text
        if text:
            ranges = ", ".join(f"{a}-{b}" for a, b in report.excerpt.ranges)
            if len(text) > max_excerpt_chars:
                text = text[-max_excerpt_chars:] + "\n[excerpt cut to its last part]"
            out += [f"Log excerpt (lines {ranges or '?'}):", text]
        sections.append("\n".join(out))
    return "\n\n".join(sections) if sections else "No diagnosis is available."


def seed_messages(reports: Sequence[DiagnosisReport]) -> list[Message]:
    """The system prompt and the first user message of a fix run."""
    goal = ("A CI run failed. Here is the diagnosis.\n\n" + describe_diagnosis(reports)
            + "\n\nFind the cause in the repository and propose a fix with propose_fix.")
    # Logs leak tokens that the runner did not mask; the model never needs them.
    return [SystemMessage(content=FIX_SYSTEM_PROMPT), UserMessage(content=redact_text(goal))]
