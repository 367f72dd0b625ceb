"""Anthropic Messages on the wire: headers, top-level system, one user message of tool results, SSE, faults."""

from __future__ import annotations

import json

import pytest

from repopilot.core import ConfigError, ProviderError, UserMessage
from repopilot.providers.anthropic import AnthropicModel, anthropic_model

from .helpers import FAST, KEY, QUESTION, SYSTEM, TOOLS, first_turn, read_file, second_turn
from .wire_server import Reply, WireServer


def model(server: WireServer, name: str = "claude-3-5-haiku-latest") -> AnthropicModel:
    m = anthropic_model(name, {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": KEY})
    m.http.retry = FAST
    return m


def test_request_shape_and_parallel_tool_use(server: WireServer) -> None:
    server.queue(Reply.fixture("anthropic/tool_use.json"))
    resp = model(server).chat(first_turn(), TOOLS)

    req = server.requests[0]
    assert req.path == "/v1/messages"
    assert req.headers["x-api-key"] == KEY and req.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in req.headers
    assert req.body["system"] == SYSTEM
    assert req.body["messages"] == [{"role": "user", "content": [{"type": "text", "text": QUESTION}]}]
    assert req.body["max_tokens"] > 0
    assert req.body["tools"][0] == {"name": "read_file", "description": read_file.description,
                                    "input_schema": read_file.parameters}

    assert resp.text == "I'll read the implementation and list the folder."
    assert [(c.id, c.name, c.arguments) for c in resp.tool_calls] == [
        ("toolu_01A09q90qw90lq917835lq9", "read_file", {"path": "src/calc.py"}),
        ("toolu_01Bq8wE7rT6yU5iO4pA3sD2f", "list_files", {"path": "src"})]
    assert resp.finish_reason == "tool_use" and resp.message.provider_data == {}
    assert (resp.usage.input_tokens, resp.usage.output_tokens) == (512, 88)
    assert resp.cost == pytest.approx((512 * 0.8 + 88 * 4.0) / 1e6)


def test_all_results_go_back_in_one_user_message(server: WireServer) -> None:
    server.queue(Reply.fixture("anthropic/tool_use.json"), Reply.fixture("anthropic/final_answer.json"))
    m = model(server)
    first = m.chat(first_turn(), TOOLS)
    final = m.chat(second_turn(first, error_on=1), TOOLS)

    sent = server.requests[1].body["messages"]
    assert [s["role"] for s in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"] == [
        {"type": "text", "text": "I'll read the implementation and list the folder."},
        {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "read_file",
         "input": {"path": "src/calc.py"}},
        {"type": "tool_use", "id": "toolu_01Bq8wE7rT6yU5iO4pA3sD2f", "name": "list_files", "input": {"path": "src"}}]
    assert sent[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_01A09q90qw90lq917835lq9", "content": "result 0 of read_file"},
        {"type": "tool_result", "tool_use_id": "toolu_01Bq8wE7rT6yU5iO4pA3sD2f", "content": "result 1 of list_files",
         "is_error": True}]
    # input_tokens excludes cache reads on this API; our Usage counts the whole prompt.
    assert final.usage.input_tokens == 720 and final.usage.cache_read_tokens == 600
    assert final.cost == pytest.approx((120 * 0.8 + 600 * 0.08 + 21 * 4.0) / 1e6)


def test_a_user_message_after_results_joins_the_same_user_turn(server: WireServer) -> None:
    server.queue(Reply.fixture("anthropic/tool_use.json"), Reply.fixture("anthropic/final_answer.json"))
    m = model(server)
    first = m.chat(first_turn(), TOOLS)
    m.chat([*second_turn(first), UserMessage(content="Answer now.")], TOOLS)
    sent = server.requests[1].body["messages"]
    assert [s["role"] for s in sent] == ["user", "assistant", "user"]
    assert sent[2]["content"][-1] == {"type": "text", "text": "Answer now."}


def test_without_tools_past_calls_are_told_as_text(server: WireServer) -> None:
    """The API refuses tool_use/tool_result blocks in a request without tools (the loop's forced answer)."""
    server.queue(Reply.fixture("anthropic/tool_use.json"), Reply.fixture("anthropic/final_answer.json"))
    m = model(server)
    first = m.chat(first_turn(), TOOLS)
    m.chat(second_turn(first), [])
    body = server.requests[1].body
    assert "tools" not in body
    blocks = [b for msg in body["messages"] for b in msg["content"]]
    assert {b["type"] for b in blocks} == {"text"}
    assert any("[called read_file with" in b["text"] for b in blocks)
    assert any(b["text"].startswith("[result of list_files]") for b in blocks)


def test_thinking_blocks_are_echoed_exactly(server: WireServer) -> None:
    server.queue(Reply.fixture("anthropic/thinking_tool_use.json"), Reply.fixture("anthropic/final_answer.json"))
    m = model(server, "claude-sonnet-4-20250514")
    first = m.chat(first_turn(), TOOLS)
    assert first.text == "" and first.tool_calls[0].id == "toolu_01Th1nk"
    m.chat(second_turn(first), TOOLS)
    echoed = server.requests[1].body["messages"][1]["content"]
    assert echoed[0] == {"type": "thinking", "thinking": "The user wants to know what add does; read it.",
                         "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}
    assert echoed[1]["type"] == "tool_use" and echoed[1]["id"] == "toolu_01Th1nk"


def test_streaming_with_ping_and_input_json_deltas(server: WireServer) -> None:
    server.queue(Reply.fixture("anthropic/stream_tool_use.sse"))
    seen: list[str] = []
    resp = model(server).chat(first_turn(), TOOLS, on_text=seen.append)
    assert server.requests[0].body["stream"] is True
    assert seen == ["Let me ", "look."] and resp.text == "Let me look."
    assert [(c.id, c.name, c.arguments) for c in resp.tool_calls] == [
        ("toolu_01T1xStreamRead", "read_file", {"path": "src/calc.py"}),
        ("toolu_01T2xStreamList", "list_files", {"path": "src"})]
    assert resp.finish_reason == "tool_use"
    # output_tokens in message_delta is cumulative: 89, not 1 + 89.
    assert (resp.usage.input_tokens, resp.usage.output_tokens) == (512, 89)


def test_truncated_stream_is_an_error(server: WireServer) -> None:
    server.queue(Reply.fixture("anthropic/stream_truncated.sse"))
    with pytest.raises(ProviderError, match="stream ended before the reply was complete"):
        model(server).chat(first_turn(), TOOLS, on_text=lambda _: None)


def test_overloaded_error_event_mid_stream(server: WireServer) -> None:
    server.queue(Reply.fixture("anthropic/stream_overloaded.sse"))
    with pytest.raises(ProviderError) as info:
        model(server).chat(first_turn(), TOOLS, on_text=lambda _: None)
    assert info.value.status == 529 and "Overloaded" in str(info.value)


def test_529_overloaded_then_success(server: WireServer) -> None:
    server.queue(Reply.json({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}, 529,
                            {"retry-after": "0"}),
                 Reply.fixture("anthropic/final_answer.json"))
    resp = model(server).chat(first_turn(), TOOLS)
    assert resp.retries[0]["status"] == 529 and "subtracts" in resp.text


def test_missing_key_names_the_variable() -> None:
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        anthropic_model("claude-3-5-haiku-latest", {"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})


def test_streamed_thinking_block_with_signature_is_kept_for_the_echo(server: WireServer) -> None:
    events = [
        {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                                              "model": "claude-sonnet-4-20250514", "content": [],
                                              "usage": {"input_tokens": 10, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Read it."}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "EqQBsig"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {
            "type": "tool_use", "id": "toolu_9", "name": "list_files", "input": {}}},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 30}},
        {"type": "message_stop"},
    ]
    body = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()
    server.queue(Reply(200, body, "text/event-stream", stream=True), Reply.fixture("anthropic/final_answer.json"))
    m = model(server, "claude-sonnet-4-20250514")
    seen: list[str] = []
    first = m.chat(first_turn(), TOOLS, on_text=seen.append)
    assert seen == [] and first.tool_calls[0].arguments == {}  # a tool without arguments: no deltas at all
    m.chat(second_turn(first), TOOLS)
    echoed = server.requests[1].body["messages"][1]["content"]
    assert echoed == [{"type": "thinking", "thinking": "Read it.", "signature": "EqQBsig"},
                      {"type": "tool_use", "id": "toolu_9", "name": "list_files", "input": {}}]
