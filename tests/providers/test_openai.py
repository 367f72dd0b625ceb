"""OpenAI Chat Completions on the wire: the request we send, the replies we read, streaming and faults."""

from __future__ import annotations

import json

import pytest

from repopilot.core import ConfigError, ProviderError, ToolRegistry
from repopilot.providers.openai import OpenAIModel, openai_model
from repopilot.providers.wire import is_synthetic_id

from .helpers import FAST, KEY, QUESTION, SYSTEM, TOOLS, first_turn, list_files, read_file, second_turn
from .wire_server import Reply, WireServer


def model(server: WireServer, name: str = "gpt-4o-mini") -> OpenAIModel:
    m = openai_model(name, {"OPENAI_BASE_URL": server.url + "/v1", "OPENAI_API_KEY": KEY})
    m.http.retry = FAST
    return m


def test_request_shape_and_parallel_tool_calls(server: WireServer) -> None:
    server.queue(Reply.fixture("openai/tool_calls.json"))
    resp = model(server).chat(first_turn(), TOOLS)

    req = server.requests[0]
    assert req.path == "/v1/chat/completions"
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert req.body["model"] == "gpt-4o-mini"
    assert req.body["messages"] == [{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}]
    assert req.body["tools"][0] == {"type": "function", "function": {
        "name": "read_file", "description": read_file.description, "parameters": read_file.parameters}}
    assert req.body["tool_choice"] == "auto" and "stream" not in req.body

    assert [(c.id, c.name, c.arguments) for c in resp.tool_calls] == [
        ("call_qW3rT5yU7iO9pA1sD3fG5hJ7", "read_file", {"path": "src/calc.py"}),
        ("call_zX2cV4bN6mQ8wE0rT2yU4iO6", "list_files", {"path": "src"})]
    assert resp.finish_reason == "tool_calls" and resp.text == ""
    assert resp.message.provider_data == {}  # refusal: null and annotations: [] are reply-only
    assert (resp.usage.input_tokens, resp.usage.output_tokens) == (412, 51)
    assert resp.model == "gpt-4o-mini-2024-07-18" and resp.response_id == "chatcmpl-BoQ3rLw0tT9xV2kqPz8Yd1c4Hn7aE"
    assert resp.cost == pytest.approx((412 * 0.15 + 51 * 0.60) / 1e6)


def test_second_turn_echoes_calls_and_sends_one_tool_message_per_id(server: WireServer) -> None:
    server.queue(Reply.fixture("openai/tool_calls.json"), Reply.fixture("openai/final_answer.json"))
    m = model(server)
    first = m.chat(first_turn(), TOOLS)
    final = m.chat(second_turn(first, error_on=1), TOOLS)

    sent = server.requests[1].body["messages"]
    assert sent[2] == {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_qW3rT5yU7iO9pA1sD3fG5hJ7", "type": "function",
         "function": {"name": "read_file", "arguments": json.dumps({"path": "src/calc.py"})}},
        {"id": "call_zX2cV4bN6mQ8wE0rT2yU4iO6", "type": "function",
         "function": {"name": "list_files", "arguments": json.dumps({"path": "src"})}}]}
    assert sent[3:] == [
        {"role": "tool", "tool_call_id": "call_qW3rT5yU7iO9pA1sD3fG5hJ7", "content": "result 0 of read_file"},
        {"role": "tool", "tool_call_id": "call_zX2cV4bN6mQ8wE0rT2yU4iO6", "content": "result 1 of list_files"}]
    assert final.tool_calls == [] and "a - b" in final.text
    # 512 of the 655 prompt tokens came from the cache, billed at half price.
    assert final.usage.cache_read_tokens == 512
    assert final.cost == pytest.approx((143 * 0.15 + 512 * 0.075 + 24 * 0.60) / 1e6)


def test_compatible_server_quirks(server: WireServer) -> None:
    """Missing ids, empty and malformed argument strings, and provider fields that must go back unchanged."""
    server.queue(Reply.fixture("openai/compat_quirks.json"), Reply.fixture("openai/final_answer.json"))
    m = model(server, "local-model")
    resp = m.chat(first_turn(), TOOLS)
    calls = resp.tool_calls
    assert len({c.id for c in calls}) == 3 and all(is_synthetic_id(c.id) for c in calls)
    assert calls[0].arguments == {"path": "src/calc.py"} and calls[0].arguments_error is None
    assert calls[0].provider_data == {
        "openai": {"extra_content": {"google": {"thought_signature": "CiQBVKhc7sig=="}}}}
    assert calls[1].name == "git_status" and calls[1].arguments == {} and calls[1].arguments_error is None
    assert calls[2].arguments == {} and calls[2].arguments_error
    assert resp.message.provider_data == {"openai": {"reasoning_content": "I should read the file."}}
    assert resp.cost is None  # unknown model: cost unknown, not a crash

    # The registry turns the malformed arguments into an error result the model can read.
    outcome = ToolRegistry([read_file, list_files]).execute(calls[2])
    assert outcome.is_error and "not valid JSON" in outcome.content

    m.chat(second_turn(resp), TOOLS)
    echoed = server.requests[1].body["messages"][2]
    assert echoed["reasoning_content"] == "I should read the file."
    assert echoed["tool_calls"][0]["extra_content"] == {"google": {"thought_signature": "CiQBVKhc7sig=="}}
    assert [t["tool_call_id"] for t in server.requests[1].body["messages"][3:]] == [c.id for c in calls]


def test_streaming_assembles_parallel_tool_call_fragments(server: WireServer) -> None:
    server.queue(Reply.fixture("openai/stream_tool_calls.sse"))
    seen: list[str] = []
    resp = model(server).chat(first_turn(), TOOLS, on_text=seen.append)

    body = server.requests[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert server.requests[0].headers["accept"] == "text/event-stream"
    assert seen == ["Reading ", "the code."] and resp.text == "Reading the code."
    assert [(c.id, c.name, c.arguments) for c in resp.tool_calls] == [
        ("call_S1aB2cD3eF4gH5iJ6kL7mN8", "read_file", {"path": "src/calc.py"}),
        ("call_T9oP8iU7yT6rE5wQ4aS3dF2g", "list_files", {"path": "src"})]
    assert resp.finish_reason == "tool_calls"
    assert (resp.usage.input_tokens, resp.usage.output_tokens) == (412, 51) and resp.cost is not None


def test_streamed_text_answer(server: WireServer) -> None:
    server.queue(Reply.fixture("openai/stream_text.sse"))
    seen: list[str] = []
    resp = model(server).chat(first_turn(), TOOLS, on_text=seen.append)
    assert "".join(seen) == resp.text == "`add` returns `a - b`."
    assert resp.tool_calls == [] and resp.usage.output_tokens == 9


def test_truncated_stream_is_an_error_not_half_an_answer(server: WireServer) -> None:
    server.queue(Reply.fixture("openai/stream_truncated.sse"))
    with pytest.raises(ProviderError, match="stream ended before the reply was complete"):
        model(server).chat(first_turn(), TOOLS, on_text=lambda _: None)


def test_error_event_inside_a_stream(server: WireServer) -> None:
    server.queue(Reply(200, b'data: {"error": {"message": "context length exceeded", "type": "invalid"}}\n\n',
                       "text/event-stream", stream=True))
    with pytest.raises(ProviderError, match="context length exceeded"):
        model(server).chat(first_turn(), TOOLS, on_text=lambda _: None)


def test_429_then_success_records_the_retry(server: WireServer) -> None:
    server.queue(Reply.json({"error": {"message": "Rate limit reached for gpt-4o-mini", "type": "requests"}}, 429,
                            {"retry-after-ms": "5"}),
                 Reply.fixture("openai/final_answer.json"))
    resp = model(server).chat(first_turn(), TOOLS)
    assert resp.retries == [{"attempt": 1, "status": 429, "wait_s": 0.005, "error": "HTTP 429"}]
    assert len(server.requests) == 2 and server.requests[0].body == server.requests[1].body


def test_500_exhausts_retries(server: WireServer) -> None:
    server.queue(*[Reply.json({"error": {"message": "The server had an error", "type": "server_error"}}, 500)] * 3)
    with pytest.raises(ProviderError) as info:
        model(server).chat(first_turn(), TOOLS)
    assert info.value.status == 500 and info.value.provider == "openai" and len(server.requests) == 3


def test_reply_without_choices_is_a_provider_error(server: WireServer) -> None:
    server.queue(Reply.json({"id": "x", "object": "chat.completion", "choices": []}))
    with pytest.raises(ProviderError, match="no choices"):
        model(server).chat(first_turn(), TOOLS)


def test_missing_key_for_the_public_api_names_the_variable() -> None:
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        openai_model("gpt-4o-mini", {})


def test_compatible_server_needs_no_key(server: WireServer) -> None:
    server.queue(Reply.fixture("openai/final_answer.json"))
    m = openai_model("local", {"OPENAI_BASE_URL": server.url + "/v1/"})
    m.chat(first_turn(), [])
    assert "authorization" not in server.requests[0].headers
    assert "tools" not in server.requests[0].body and "tool_choice" not in server.requests[0].body


def test_an_empty_stream_falls_back_to_one_plain_request(server: WireServer) -> None:
    """llama.cpp's server cannot stream with tools and ends the stream at once: ask again without streaming."""
    server.queue(Reply(200, b"", "text/event-stream", stream=True), Reply.fixture("openai/final_answer.json"))
    seen: list[str] = []
    resp = model(server).chat(first_turn(), TOOLS, on_text=seen.append)
    assert [r.body.get("stream") for r in server.requests] == [True, None]
    assert seen == [resp.text] and "a - b" in resp.text
    assert resp.retries[-1]["error"].startswith("empty stream")
