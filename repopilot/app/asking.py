"""The ask use case: answer a question about a local repository through the read-only tools, traced."""

from __future__ import annotations

from pathlib import Path

from ..core import (
    Agent,
    Budgets,
    InputError,
    RunResult,
    SystemMessage,
    TextCallback,
    ToolRegistry,
    TraceListener,
    TraceRecorder,
    UserMessage,
    redact_text,
    run_lock,
)
from ..repo import open_repo, repo_tools
from .runtime import Observer, model_for, observed, tool_bounds
from .settings import Settings

__all__ = ["ASK_SYSTEM_PROMPT", "ask"]

ASK_SYSTEM_PROMPT = """You are RepoPilot, answering questions about a git repository.
You can only read: use the tools to look at files, search code and inspect git history before answering.
Cite the files (and lines) your answer rests on. If the tools do not show something, say so; never guess.
Answer concisely once you have enough evidence."""


def ask(goal: str, settings: Settings, *, repo: Path = Path("."), max_tokens: int | None = None,
        max_seconds: float | None = None, max_cost: float | None = None, observer: Observer | None = None,
        on_text: TextCallback | None = None, listener: TraceListener | None = None) -> RunResult:
    """Run the read-only agent on `goal` within the budgets (max steps from the settings)."""
    if not goal.strip():
        raise InputError("the goal is empty: say what you want to know")
    model = model_for(settings)
    assert model is not None  # required: model_for raised ConfigError otherwise
    root = open_repo(repo)
    rec = TraceRecorder.start("ask", goal, repo=str(root))
    budgets = Budgets(max_steps=settings.max_steps, max_tokens=max_tokens, max_seconds=max_seconds,
                      max_cost=max_cost)
    if listener is not None:
        rec.listeners.append(listener)
    agent = Agent(model, ToolRegistry(repo_tools(root, **tool_bounds(settings))), rec, budgets, on_text=on_text,
                  max_tool_calls_per_turn=settings.max_tool_calls_per_turn)
    # Held while the run is live, so a `resume` of it from another terminal is refused instead of asking the
    # model the same turns a second time.
    with run_lock(rec.trace.run_id), observed(rec, model, settings, observer):
        return agent.run([SystemMessage(content=ASK_SYSTEM_PROMPT), UserMessage(content=redact_text(goal))])
