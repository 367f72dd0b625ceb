"""The fix agent: its system prompt, its tools (read-only repository tools plus `propose_fix`) and the first
message, seeded with the diagnosis. The seed is built from the diagnosis JSON contract (issue #4) only: the
category, the causal lines, files and lines, hints and the excerpt, never the whole log."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..core import Message, SystemMessage, Tool, UserMessage, redact_text
from .propose import propose_fix_tool
from .tools import repo_tools

__all__ = ["FIX_SYSTEM_PROMPT", "MAX_SEED_EXCERPT_CHARS", "describe_diagnosis", "fix_tools", "seed_messages"]

FIX_SYSTEM_PROMPT = """You are RepoPilot, fixing a failing CI run in a git repository.
You are given a diagnosis of the failure: its category, the causal log lines and an excerpt of the log.
1. Read the files the diagnosis points at (read_file, search_code) before changing anything.
2. Propose the smallest change that fixes the cause with propose_fix: a unified diff against HEAD whose context
   lines are copied exactly from the files as they are now. Never edit tests to make them pass unless the
   test itself is wrong, and say so if it is.
3. If a proposal is refused as invalid, read the error, re-read the file and send a corrected diff.
4. If the failure cannot be fixed in the repository (infrastructure, network, secrets), do not propose a diff:
   explain what a person should do instead.
You cannot run code or tests. A person reviews your diff; nothing is applied without their approval."""

MAX_SEED_EXCERPT_CHARS = 12_000
_MAX_LINES_PER_FAILURE = 40
_MAX_FAILURES = 8


def fix_tools(root: Path) -> list[Tool]:
    """The tools of the fix agent, bound to the repository at `root`."""
    return [*repo_tools(root), propose_fix_tool(root)]


def _where(failure: Mapping[str, Any]) -> str:
    file = failure.get("file")
    if not file:
        return ""
    line = failure.get("line")
    return f"{file}:{line}" if line else str(file)


def _failure_text(number: int, failure: Mapping[str, Any]) -> list[str]:
    head = f"Failure {number}: [{failure.get('category', 'unknown')}] {failure.get('message', '').strip()}"
    out = [head.rstrip()]
    facts = [("rule", failure.get("rule")), ("confidence", failure.get("confidence")),
             ("location", _where(failure)), ("test", failure.get("test")), ("hint", failure.get("hint"))]
    out += [f"  {name}: {value}" for name, value in facts if value not in (None, "")]
    lines = list(failure.get("lines") or [])
    if lines:
        out.append("  causal log lines:")
        out += [f"  {entry.get('line', '?'):>6} | {entry.get('text', '')}" for entry in lines[:_MAX_LINES_PER_FAILURE]]
        if len(lines) > _MAX_LINES_PER_FAILURE:
            out.append(f"  … {len(lines) - _MAX_LINES_PER_FAILURE} more causal lines not shown")
    return out


def describe_diagnosis(reports: Sequence[Mapping[str, Any]], *, max_excerpt_chars: int = MAX_SEED_EXCERPT_CHARS) -> str:
    """The diagnosis as text for the model: one section per diagnosed job log."""
    sections: list[str] = []
    for report in reports:
        out = [f"Log: {report.get('log') or report.get('source', '?')}",
               f"Category: {report.get('category', 'unknown')} (decided by {report.get('decided_by', 'none')})"]
        failures = list(report.get("failures") or [])
        for number, failure in enumerate(failures[:_MAX_FAILURES], 1):
            out += _failure_text(number, failure)
        if len(failures) > _MAX_FAILURES:
            out.append(f"… {len(failures) - _MAX_FAILURES} less likely failures not shown")
        if not failures:
            out.append("No rule recognised the failure; rely on the excerpt.")
        excerpt = report.get("excerpt") or {}
        text = str(excerpt.get("text") or "")
        if text:
            ranges = ", ".join(f"{a}-{b}" for a, b in excerpt.get("ranges") or [])
            if len(text) > max_excerpt_chars:
                text = text[-max_excerpt_chars:] + "\n[excerpt cut to its last part]"
            out += [f"Log excerpt (lines {ranges or '?'}):", text]
        sections.append("\n".join(out))
    return "\n\n".join(sections) if sections else "No diagnosis is available."


def seed_messages(reports: Sequence[Mapping[str, Any]]) -> list[Message]:
    """The system prompt and the first user message of a fix run."""
    goal = ("A CI run failed. Here is the diagnosis.\n\n" + describe_diagnosis(reports)
            + "\n\nFind the cause in the repository and propose a fix with propose_fix.")
    # Logs leak tokens that the runner did not mask; the model never needs them.
    return [SystemMessage(content=FIX_SYSTEM_PROMPT), UserMessage(content=redact_text(goal))]
