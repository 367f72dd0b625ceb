"""`repopilot ask GOAL`: answer a question about a local repository through the read-only tools."""

from __future__ import annotations

import json
import re
from pathlib import Path

import typer

from ..app import ask as run_ask
from ..core import DEFAULT_MAX_STEPS, RunTrace, Step, redact_text
from ..core.sanitize import json_visible, visible
from .console import out, stdout_is_terminal
from .context import settings_from
from .session import reporting, summaries

__all__ = ["register"]


def ask(
    goal: str = typer.Argument(..., help="The question or goal, in plain words."),
    repo: Path = typer.Option(Path("."), "--repo", help="The git repository to inspect."),
    max_steps: int | None = typer.Option(None, "--max-steps", min=1, show_default=False,
                                         help=f"Model calls before a final answer is forced (default "
                                              f"{DEFAULT_MAX_STEPS})."),
    max_tokens: int | None = typer.Option(None, "--max-tokens", min=1, help="Total token budget."),
    max_seconds: float | None = typer.Option(None, "--max-seconds", min=0.1, help="Wall-clock budget."),
    max_cost: float | None = typer.Option(None, "--max-cost", min=0.0, help="Cost budget in USD."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of text."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No run summary after the answer."),
) -> None:
    """Answer a question about a local git repository; every step is traced."""
    with summaries(quiet=quiet):
        _ask(goal, repo, max_steps, max_tokens, max_seconds, max_cost, as_json)


def _ask(goal: str, repo: Path, max_steps: int | None, max_tokens: int | None, max_seconds: float | None,
         max_cost: float | None, as_json: bool) -> None:
    settings = settings_from(max_steps=max_steps)
    # On a terminal the answer is shown as it arrives; a pipe or --json gets it whole, once, at the end.
    printer = _StreamPrinter() if stdout_is_terminal() and not as_json else None
    try:
        result = run_ask(goal, settings, repo=repo, max_tokens=max_tokens, max_seconds=max_seconds,
                         max_cost=max_cost, observer=reporting, listener=printer,
                         on_text=printer.write if printer is not None else None)
    finally:
        if printer is not None:
            printer.end_line()
    if as_json:
        typer.echo(json_visible(json.dumps({"run_id": result.run_id, "status": result.status,
                                            "answer": _shown(result.answer), "trace": str(result.trace_path)})))
    elif printer is None or not printer.answer_shown or not result.answer:
        out.print(_shown(result.answer) or f"(no answer; status {result.status})", markup=False)


def _shown(answer: str | None) -> str | None:
    # The model may repeat a key it read; the trace file is redacted when written, the printed answer here.
    return None if answer is None else redact_text(answer)


_PEM_END = re.compile(r"-----END[ A-Z0-9_-]{0,100}-----")


class _StreamPrinter:
    """Writes streamed text to stdout and ends each model turn on its own line (a trace listener).

    A key can arrive split across fragments, where no fragment alone looks like one: text is held back until
    whitespace at least `HOLD` characters before the end of what arrived, and each piece is redacted whole
    before it is shown. A token without whitespace up to `HOLD` characters long is therefore never split, nor
    is a PEM block (held from its BEGIN line to its END line, up to `HOLD_BLOCK` characters)."""

    HOLD = 512
    HOLD_BLOCK = 65_536

    def __init__(self) -> None:
        self.open_line = False
        self.turn_text = False
        self.answer_shown = False
        self.pending = ""

    def write(self, fragment: str) -> None:
        self.pending += fragment
        self.turn_text = True
        if len(self.pending) <= self.HOLD:
            return
        limit = len(self.pending) - self.HOLD
        block = self.pending.rfind("-----BEGIN", 0, limit)
        if block >= 0 and len(self.pending) < self.HOLD_BLOCK:
            end = _PEM_END.search(self.pending, block)
            if end is None or end.end() > limit:
                limit = block  # the block is shown whole, once it ended, so it is redacted whole
        cut = max(self.pending.rfind(c, 0, limit) for c in " \t\n")
        if cut >= 0:
            self._emit(self.pending[: cut + 1])
            self.pending = self.pending[cut + 1:]

    def _emit(self, text: str) -> None:
        if not text:
            return
        out.file.write(visible(redact_text(text)))  # a raw write: rich's printer (and its sanitiser) is bypassed
        out.file.flush()
        self.open_line = not text.endswith("\n")

    def end_line(self) -> None:
        self._emit(self.pending)
        self.pending = ""
        if self.open_line:
            out.file.write("\n")
            out.file.flush()
            self.open_line = False

    def on_step(self, trace: RunTrace, step: Step) -> None:
        if step.type == "llm_call":
            self.end_line()
            # The last streamed turn without tool calls is the answer: no need to print it again.
            self.answer_shown = self.turn_text and not (step.result or {}).get("tool_calls")
            self.turn_text = False

    def on_finish(self, trace: RunTrace) -> None:
        self.end_line()


def register(app: typer.Typer) -> None:
    app.command("ask")(ask)
