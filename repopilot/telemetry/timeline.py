"""A trace read as a timeline: when each step started and ended relative to the run, what it concerned and
a one-line account of its outcome. Shared by `runs show`, the HTML page and the OpenTelemetry spans, so all
three tell the same story about the same run."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..core import RunTrace, Step

__all__ = [
    "TimedStep",
    "budget_usage",
    "format_duration",
    "parse_time",
    "run_span_ms",
    "shorten",
    "step_outcome",
    "step_subject",
    "timeline",
    "to_text",
]


def parse_time(value: str | None) -> datetime | None:
    """An ISO-8601 timestamp from a trace, or None when it is absent or unreadable."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def shorten(text: str, width: int = 100) -> str:
    """One line of at most `width` characters: newlines folded, an ellipsis where it was cut."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: max(width - 1, 0)] + "…"


def to_text(value: Any) -> str:
    """Any step field as text: strings as they are, everything else as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def format_duration(ms: float | None) -> str:
    if ms is None:
        return "-"
    if ms < 1000:
        return f"{ms:.0f}ms"
    if ms < 60_000:
        return f"{ms / 1000:.2f}s"
    minutes, seconds = divmod(ms / 1000, 60)
    return f"{int(minutes)}m{seconds:04.1f}s"


def step_subject(step: Step) -> str:
    """What the step was about: the tool, the model, the decision or the approval."""
    if step.tool_name:
        return step.tool_name
    if step.type == "decision":
        return str(step.detail.get("decision") or "decision")
    if step.type == "approval":
        return str(step.detail.get("decision") or step.detail.get("approved") or "approval")
    if step.type == "verification":
        return "verification"
    return step.model or ""


def step_outcome(step: Step, width: int = 100) -> str:
    """A one-line account of what the step produced (or how it failed)."""
    if step.error:
        return shorten("error: " + step.error, width)
    if step.type == "llm_call" and isinstance(step.result, dict):
        calls = step.result.get("tool_calls") or []
        text = str(step.result.get("text") or "")
        if calls:
            names = ", ".join(str(c.get("name")) for c in calls if isinstance(c, dict))
            lead = f"calls {names}"
            return shorten(f"{lead}: {text}" if text else lead, width)
        return shorten(text or "(empty reply)", width)
    if step.type == "tool_call":
        return shorten(to_text(step.arguments), width)
    if step.type == "tool_result":
        text = to_text(step.result)
        if step.detail.get("truncated"):
            text = f"[{step.detail.get('chars')} chars, truncated for the model] {text}"
        return shorten(text, width)
    if step.type == "verification":
        return shorten(f"{step.result}: {step.detail.get('reason') or ''}", width)
    if step.type == "decision":
        reasons = step.detail.get("reason") or step.detail.get("reasons") or step.detail.get("why")
        base = to_text(step.result)
        if reasons:
            base = f"{base} ({to_text(reasons)})" if base else to_text(reasons)
        return shorten(base, width)
    return shorten(to_text(step.result) or to_text(step.detail), width)


@dataclass(frozen=True)
class TimedStep:
    """A step placed on the run's clock: `start_ms` after the run started, lasting `duration_ms`."""

    step: Step
    start_ms: float
    duration_ms: float
    end: datetime | None


def timeline(trace: RunTrace) -> list[TimedStep]:
    """Every step with its start and duration. A step's timestamp is taken when it is recorded, which is when
    the work it records has ended; its start is that minus its duration. Steps without a usable timestamp
    are placed right after the previous one."""
    origin = parse_time(trace.started_at)
    placed: list[TimedStep] = []
    previous_end = previous_start = 0.0
    for step in trace.steps:
        duration = max(step.duration_ms or 0.0, 0.0)
        end = parse_time(step.timestamp)
        if origin is not None and end is not None:
            end_ms = (end - origin).total_seconds() * 1000
            # Timestamps are cut to the millisecond: a step that began right after the previous one was recorded
            # could otherwise seem to start up to 1 ms before it.
            start_ms = max(end_ms - duration, 0.0, previous_start)
        else:
            start_ms = previous_end
        placed.append(TimedStep(step, start_ms, duration, end))
        previous_end, previous_start = start_ms + duration, start_ms
    return placed


def run_span_ms(trace: RunTrace) -> float:
    """How long the run lasted by its own clock (at least to the end of its last step)."""
    start = parse_time(trace.started_at)
    finish = parse_time(trace.finished_at)
    recorded = (finish - start).total_seconds() * 1000 if start and finish else trace.totals.duration_ms
    last = max((t.start_ms + t.duration_ms for t in timeline(trace)), default=0.0)
    return max(recorded, last, trace.totals.duration_ms)


def budget_usage(trace: RunTrace) -> str:
    """Each budget as `used / limit` (e.g. `steps 3 / 20 · cost 0.0012 / no limit`), or "" when unrecorded."""
    limits = trace.budgets.get("limits") or {}
    used = trace.budgets.get("used") or {}
    if not isinstance(limits, dict) or not isinstance(used, dict):
        return ""
    parts = []
    for name, value in used.items():
        limit = limits.get(f"max_{name}")
        parts.append(f"{name} {'unknown' if value is None else value} / {'no limit' if limit is None else limit}")
    return " · ".join(parts)
