"""A conversation begun with one provider and continued with another (a resumed run with a new
REPOPILOT_MODEL): each adapter sends only its own provider fields, and the pairing still holds."""

from __future__ import annotations

import json

import pytest

from repopilot.providers.anthropic import anthropic_model
from repopilot.providers.gemini import gemini_model
from repopilot.providers.ollama import ollama_model
from repopilot.providers.openai import openai_model

from .helpers import KEY, TOOLS, first_turn, second_turn
from .wire_server import Reply, WireServer


@pytest.mark.parametrize("target", ["openai", "anthropic", "ollama"])
def test_gemini_turn_continued_elsewhere(target: str, server: WireServer) -> None:
    server.queue(Reply.fixture("gemini/function_calls.json"))
    gemini = gemini_model("gemini-2.5-flash", {"GEMINI_BASE_URL": server.url, "GEMINI_API_KEY": KEY})
    msgs = second_turn(gemini.chat(first_turn(), TOOLS))
    ids = [c.id for c in msgs[2].tool_calls]  # type: ignore[union-attr]

    other = {
        "openai": lambda: openai_model("gpt-4o-mini", {"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": KEY}),
        "anthropic": lambda: anthropic_model("claude-3-5-haiku-latest",
                                             {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY}),
        "ollama": lambda: ollama_model("llama3.2", {"OLLAMA_HOST": server.url}),
    }[target]()
    final = {"openai": "openai/final_answer.json", "anthropic": "anthropic/final_answer.json",
             "ollama": "ollama/final_answer.json"}[target]
    server.queue(Reply.fixture(final))
    other.chat(msgs, TOOLS)

    sent = json.dumps(server.requests[-1].body)
    assert "thoughtSignature" not in sent and '"parts"' not in sent
    if target == "openai":
        tool_msgs = [m for m in server.requests[-1].body["messages"] if m["role"] == "tool"]
        assert [m["tool_call_id"] for m in tool_msgs] == ids
    if target == "anthropic":
        results = server.requests[-1].body["messages"][-1]["content"]
        assert [b["tool_use_id"] for b in results] == ids
