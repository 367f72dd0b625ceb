"""The `scripted` provider, for demos and replays without any model or network.

`scripted:demo` explores a repository with the read-only tools (the README's first command); it is labelled as
a demo everywhere it answers. `scripted:PATH.json` replays the replies listed in a JSON file, in order: each a
string (a final answer) or `{"content": ..., "tool_calls": [{"name": ..., "arguments": {...}}]}`."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..core import AssistantMessage, ConfigError, Message, ToolResultMessage, ToolSpec
from .scripted import Reply, ScriptedModel, ScriptExhausted

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


def _replay(path: Path) -> list[Reply]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"REPOPILOT_MODEL names a script that does not exist: {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read the model script {path}: {exc}") from None
    replies = data.get("replies") if isinstance(data, dict) else data
    if not isinstance(replies, list) or not all(_is_reply(r) for r in replies):
        raise ConfigError(f"{path}: a model script is a JSON list of replies: strings, or objects with "
                          "\"content\" and/or \"tool_calls\" [{\"name\", \"arguments\"}]")
    return list(replies)


def _is_reply(reply: object) -> bool:
    if isinstance(reply, str):
        return True
    if not isinstance(reply, dict) or not set(reply) <= {"content", "tool_calls"}:
        return False
    calls = reply.get("tool_calls", [])
    return isinstance(calls, list) and all(
        isinstance(c, dict) and isinstance(c.get("name"), str) and isinstance(c.get("arguments", {}), dict)
        for c in calls)


def demo_model(model: str, environ: Mapping[str, str]) -> ScriptedModel:
    if model.endswith(".json"):
        replies = _replay(Path(model))

        def next_reply(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> Reply:
            # The script position is the number of model turns so far, so a resumed run continues the script
            # where the conversation stands instead of starting it again.
            turn = sum(isinstance(m, AssistantMessage) for m in messages)
            if turn >= len(replies):
                raise ScriptExhausted()
            return replies[turn]

        return ScriptedModel(next_reply, model=Path(model).name, price_per_mtok=(0.0, 0.0))
    if model != "demo":
        raise ConfigError(f"unknown scripted model {model!r}: use scripted:demo or scripted:PATH.json")
    return ScriptedModel(_demo_reply, model="demo", price_per_mtok=(0.0, 0.0))
