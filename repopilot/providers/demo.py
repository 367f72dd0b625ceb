"""`scripted:demo`: a scripted model that explores a repository with the read-only tools, for the README demo
and for trying RepoPilot without any model. It is labelled as a demo everywhere it answers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core import Message, ToolResultMessage, ToolSpec
from .scripted import Reply, ScriptedModel

__all__ = ["demo_model"]


def _demo_reply(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Reply:
    names = {t.name for t in tools}
    results = [m for m in messages if isinstance(m, ToolResultMessage)]
    plan: list[dict[str, Any]] = []
    if "list_files" in names:
        plan.append({"name": "list_files", "arguments": {"path": ".", "glob": "*"}})
    if "git_log" in names:
        plan.append({"name": "git_log", "arguments": {"max_count": 5}})
    if "read_file" in names:
        plan.append({"name": "read_file", "arguments": {"path": "README.md", "start_line": 1, "end_line": 20}})
    if tools and len(results) < len(plan):
        step = plan[len(results)]
        return {"content": f"(demo) Looking with {step['name']}.", "tool_calls": [step]}
    seen = "\n\n".join(f"## {r.name}\n{r.content[:600]}" for r in results)
    return ("(demo answer from the scripted model, not a real LLM) Here is what the read-only tools "
            f"showed:\n\n{seen or 'no tools were available.'}")


def demo_model(model: str, environ: Mapping[str, str]) -> ScriptedModel:
    return ScriptedModel(_demo_reply, model=model or "demo", price_per_mtok=(0.0, 0.0))
