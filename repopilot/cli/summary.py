"""The summary printed at the end of every run: what happened, what it cost, where the trace is."""

from __future__ import annotations

import sys
from pathlib import Path

from ..core import RunTrace, redact_text
from ..core.sanitize import visible
from .console import err, plain_stderr, shown

__all__ = ["format_cost", "print_summary", "print_summary_line", "summary_line", "summary_lines"]


def format_cost(cost: float | None) -> str:
    return "unknown" if cost is None else f"${cost:.4f}"


def _short(text: str) -> str:
    return text if len(text) <= 100 else text[:97] + "..."


def summary_lines(trace: RunTrace, path: Path) -> list[tuple[str, str]]:
    t = trace.totals
    return [
        ("run", f"{trace.run_id} ({trace.command})"),
        # Redacted before it is cut: a key typed into the question must not show, not even its first half.
        ("goal", _short(redact_text(trace.goal))),
        ("status", trace.status),
        ("model", trace.model or "none"),
        ("steps", str(t.steps)),
        ("model calls", str(t.model_calls)),
        ("tool calls", str(t.tool_calls)),
        ("errors", str(t.errors)),
        ("tokens", f"{t.input_tokens} in / {t.output_tokens} out"),
        ("cost", format_cost(t.cost) if t.model_calls else "$0 (no model calls)"),
        ("duration", f"{t.duration_ms / 1000:.2f}s"),
        ("trace", str(path)),
    ]


def summary_line(trace: RunTrace) -> str:
    """The run in one line (runs without a model): its id, how it ended, how long it took."""
    return (f"run {trace.run_id} · {trace.status} · {trace.totals.duration_ms / 1000:.2f}s · no model calls")


def print_summary(trace: RunTrace, path: Path) -> None:
    lines = summary_lines(trace, path)
    width = max(len(k) for k, _ in lines)
    if plain_stderr():  # what rich would print without styles, without importing it (start-up of a piped run)
        text = "".join(f"{key.rjust(width)}  {visible(value, newlines=False)}".expandtabs() + "\n"
                       for key, value in lines)
        sys.stderr.write("──── run summary ────\n" + text)
        sys.stderr.flush()
        return
    err.print("[dim]──── run summary ────[/dim]")
    for key, value in lines:
        err.print(f"[dim]{key.rjust(width)}[/dim]  {shown(value)}")


def print_summary_line(trace: RunTrace) -> None:
    line = summary_line(trace)
    if plain_stderr():  # as rich prints it on a pipe (its style is dim), without importing rich
        sys.stderr.write(visible(line).expandtabs() + "\n")
        sys.stderr.flush()
    else:
        err.print(line, markup=False, style="dim")
