"""Gemini generateContent on the wire: systemInstruction, functionDeclarations, ids we synthesise, signatures."""

from __future__ import annotations

import pytest

from repopilot.core import AssistantMessage, ConfigError, ProviderError, ToolCall, ToolResultMessage
from repopilot.providers.gemini import GeminiModel, gemini_model, gemini_schema
from repopilot.providers.wire import is_synthetic_id

from .helpers import FAST, KEY, QUESTION, SYSTEM, TOOLS, first_turn, second_turn
from .wire_server import Reply, WireServer


def model(server: WireServer, name: str = "gemini-2.5-flash") -> GeminiModel:
    m = gemini_model(name, {"GEMINI_BASE_URL": server.url, "GEMINI_API_KEY": KEY})
    m.http.retry = FAST
    return m


def test_request_shape_and_parallel_calls_without_ids(server: WireServer) -> None:
    server.queue(Reply.fixture("gemini/function_calls.json"))
    resp = model(server).chat(first_turn(), TOOLS)

    req = server.requests[0]
    assert req.path == "/v1beta/models/gemini-2.5-flash:generateContent"
    assert req.headers["x-goog-api-key"] == KEY and "authorization" not in req.headers
    assert req.body["systemInstruction"] == {"parts": [{"text": SYSTEM}]}
    assert req.body["contents"] == [{"role": "user", "parts": [{"text": QUESTION}]}]
    decl = req.body["tools"][0]["functionDeclarations"][0]
    assert decl["name"] == "read_file"
    assert decl["parameters"]["properties"]["start_line"] == {
        "type": "integer", "description": "First line to show.", "nullable": True}
    assert "additionalProperties" not in decl["parameters"]

    # Two calls of the same tool with no ids: each gets its own.
    a, b = resp.tool_calls
    assert a.id != b.id and is_synthetic_id(a.id) and is_synthetic_id(b.id)
    assert (a.arguments, b.arguments) == ({"path": "src/calc.py"}, {"path": "README.md"})
    assert a.provider_data == {"gemini": {"thoughtSignature": "CiQBVKhc7uZ2Z0Sx1xD3cQxO5Zt0X9W8a3F6s2bRk4YlHn8="}}
    # Gemini says STOP while asking for tools: the calls decide, not the finish reason.
    assert resp.finish_reason == "STOP"
    assert (resp.usage.input_tokens, resp.usage.output_tokens) == (301, 90)  # 40 + 50 thinking tokens
    assert resp.model == "gemini-2.5-flash" and resp.cost == pytest.approx((301 * 0.30 + 90 * 2.50) / 1e6)


def test_second_turn_echoes_signature_and_pairs_function_responses(server: WireServer) -> None:
    server.queue(Reply.fixture("gemini/function_calls.json"), Reply.fixture("gemini/final_answer.json"))
    m = model(server)
    first = m.chat(first_turn(), TOOLS)
    final = m.chat(second_turn(first, error_on=1), TOOLS)

    contents = server.requests[1].body["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    assert contents[1]["parts"] == [
        {"functionCall": {"name": "read_file", "args": {"path": "src/calc.py"}},
         "thoughtSignature": "CiQBVKhc7uZ2Z0Sx1xD3cQxO5Zt0X9W8a3F6s2bRk4YlHn8="},
        {"functionCall": {"name": "read_file", "args": {"path": "README.md"}}}]
    # Synthesised ids are ours: they are not sent as if Gemini had issued them.
    assert contents[2]["parts"] == [
        {"functionResponse": {"name": "read_file", "response": {"result": "result 0 of read_file"}}},
        {"functionResponse": {"name": "read_file", "response": {"error": "result 1 of read_file"}}}]
    assert "README.md says nothing" in final.text and final.tool_calls == []


def test_provider_issued_ids_are_sent_back() -> None:
    from repopilot.providers.gemini import _contents

    msgs = [AssistantMessage(tool_calls=[ToolCall(id="fc-123", name="read_file", arguments={"path": "a"})]),
            ToolResultMessage(tool_call_id="fc-123", name="read_file", content="x")]
    out = _contents(msgs)
    assert out[0]["parts"] == [{"functionCall": {"name": "read_file", "args": {"path": "a"}, "id": "fc-123"}}]
    assert out[1]["parts"][0]["functionResponse"]["id"] == "fc-123"


def test_streaming_over_sse(server: WireServer) -> None:
    server.queue(Reply.fixture("gemini/stream.sse"))
    seen: list[str] = []
    resp = model(server, "gemini-2.0-flash").chat(first_turn(), TOOLS, on_text=seen.append)
    req = server.requests[0]
    assert req.path == "/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse"
    assert seen == ["`add` returns ", "`a - b`."] and resp.text == "`add` returns `a - b`."
    assert [(c.name, c.arguments) for c in resp.tool_calls] == [("git_log", {"max_count": 3})]
    assert (resp.usage.input_tokens, resp.usage.output_tokens) == (420, 15)


def test_truncated_stream_is_an_error(server: WireServer) -> None:
    server.queue(Reply.fixture("gemini/stream_truncated.sse"))
    with pytest.raises(ProviderError, match="stream ended before the reply was complete"):
        model(server).chat(first_turn(), TOOLS, on_text=lambda _: None)


def test_blocked_prompt_is_a_provider_error(server: WireServer) -> None:
    server.queue(Reply.json({"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {}}))
    with pytest.raises(ProviderError, match="blocked"):
        model(server).chat(first_turn(), TOOLS)


def test_error_body_is_short_and_readable(server: WireServer) -> None:
    server.queue(Reply.json({"error": {"code": 400, "message": "Invalid JSON payload received.",
                                       "status": "INVALID_ARGUMENT"}}, 400))
    with pytest.raises(ProviderError) as info:
        model(server).chat(first_turn(), TOOLS)
    assert str(info.value) == "gemini: the request failed (HTTP 400): INVALID_ARGUMENT: Invalid JSON payload received."


def test_schema_narrowing() -> None:
    schema = {"type": "object", "additionalProperties": False, "$defs": {}, "required": ["p"],
              "properties": {"p": {"type": "string"},
                             "n": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
                             "k": {"type": "array", "items": {"type": "string", "additionalProperties": True}},
                             "u": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}}
    assert gemini_schema(schema) == {
        "type": "object", "required": ["p"],
        "properties": {"p": {"type": "string"}, "n": {"type": "integer", "nullable": True},
                       "k": {"type": "array", "items": {"type": "string"}},
                       "u": {"anyOf": [{"type": "integer"}, {"type": "string"}]}}}


def test_missing_key_names_the_variable() -> None:
    with pytest.raises(ConfigError, match="GEMINI_API_KEY"):
        gemini_model("gemini-2.0-flash", {})
