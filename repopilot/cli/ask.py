"""`repopilot ask GOAL`: answer a question about a local repository through the read-only tools."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ..core import Agent, Budgets, InputError, SystemMessage, ToolRegistry, TraceRecorder, UserMessage
from ..providers import resolve_model
from ..repo import open_repo, repo_tools
from ..telemetry import attach_live_exporters
from .console import err, out
from .summary import print_summary

__all__ = ["ASK_SYSTEM_PROMPT", "register"]

ASK_SYSTEM_PROMPT = """You are RepoPilot, answering questions about a git repository.
You can only read: use the tools to look at files, search code and inspect git history before answering.
Cite the files (and lines) your answer rests on. If the tools do not show something, say so; never guess.
Answer concisely once you have enough evidence."""


def ask(
    goal: str = typer.Argument(..., help="The question or goal, in plain words."),
    repo: Path = typer.Option(Path("."), "--repo", help="The git repository to inspect."),
    max_steps: int = typer.Option(20, "--max-steps", min=1, help="Model calls before a final answer is forced."),
    max_tokens: int | None = typer.Option(None, "--max-tokens", min=1, help="Total token budget."),
    max_seconds: float | None = typer.Option(None, "--max-seconds", min=0.1, help="Wall-clock budget."),
    max_cost: float | None = typer.Option(None, "--max-cost", min=0.0, help="Cost budget in USD."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of text."),
) -> None:
    """Answer a question about a local git repository; every step is traced."""
    if not goal.strip():
        raise InputError("the goal is empty: say what you want to know")
    model = resolve_model()
    root = open_repo(repo)
    rec = TraceRecorder.start("ask", goal, repo=str(root))
    budgets = Budgets(max_steps=max_steps, max_tokens=max_tokens, max_seconds=max_seconds, max_cost=max_cost)
    agent = Agent(model, ToolRegistry(repo_tools(root)), rec, budgets)
    attach_live_exporters(rec, model)
    try:
        result = agent.run([SystemMessage(content=ASK_SYSTEM_PROMPT), UserMessage(content=goal)])
    finally:
        print_summary(rec.trace, rec.path)
        for problem in rec.listener_errors:
            err.print(f"repopilot: warning: {problem}", markup=False)
    if as_json:
        typer.echo(json.dumps({"run_id": result.run_id, "status": result.status, "answer": result.answer,
                                   "trace": str(result.trace_path)}))
    else:
        out.print(result.answer or f"(no answer; status {result.status})", markup=False)


def register(app: typer.Typer) -> None:
    app.command("ask")(ask)
