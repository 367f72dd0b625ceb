"""Ollama's native /api/chat on the wire: stream false, tool_name pairing, NDJSON streaming."""

from __future__ import annotations

import pytest

from repopilot.core import ProviderError
from repopilot.providers.ollama import OllamaModel, ollama_model
from repopilot.providers.wire import is_synthetic_id

from .helpers import FAST, QUESTION, SYSTEM, TOOLS, first_turn, read_file, second_turn
from .wire_server import Reply, WireServer


def model(server: WireServer, name: str = "llama3.2") -> OllamaModel:
    m = ollama_model(name, {"OLLAMA_HOST": server.url})
    m.http.retry = FAST
    return m


def test_request_shape_and_calls_without_ids(server: WireServer) -> None:
    server.queue(Reply.fixture("ollama/tool_calls.json"))
    resp = model(server).chat(first_turn(), TOOLS)

    req = server.requests[0]
    assert req.path == "/api/chat" and "authorization" not in req.headers
    assert req.body["stream"] is False and req.body["model"] == "llama3.2"
    assert req.body["messages"] == [{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}]
    assert req.body["tools"][0] == {"type": "function", "function": {
        "name": "read_file", "description": read_file.description, "parameters": read_file.parameters}}

    a, b = resp.tool_calls
    assert a.id != b.id and is_synthetic_id(a.id)
    # An object from current servers, a JSON string from old ones: both become dicts.
    assert (a.arguments, b.arguments) == ({"path": "src/calc.py"}, {"path": "README.md"})
    assert resp.finish_reason == "stop"
    assert (resp.usage.input_tokens, resp.usage.output_tokens) == (220, 31)
    assert resp.cost is None


def test_results_are_paired_by_tool_name(server: WireServer) -> None:
    server.queue(Reply.fixture("ollama/tool_calls.json"), Reply.fixture("ollama/final_answer.json"))
    m = model(server)
    first = m.chat(first_turn(), TOOLS)
    final = m.chat(second_turn(first), TOOLS)
    sent = server.requests[1].body["messages"]
    assert sent[2] == {"role": "assistant", "content": "", "tool_calls": [
        {"function": {"name": "read_file", "arguments": {"path": "src/calc.py"}}},
        {"function": {"name": "read_file", "arguments": {"path": "README.md"}}}]}
    assert sent[3:] == [{"role": "tool", "content": "result 0 of read_file", "tool_name": "read_file"},
                        {"role": "tool", "content": "result 1 of read_file", "tool_name": "read_file"}]
    assert "subtracts" in final.text


def test_streaming_ndjson(server: WireServer) -> None:
    server.queue(Reply.fixture("ollama/stream.ndjson"))
    seen: list[str] = []
    resp = model(server).chat(first_turn(), TOOLS, on_text=seen.append)
    assert server.requests[0].body["stream"] is True
    assert seen == ["Checking", " the log."] and resp.text == "Checking the log."
    assert [(c.name, c.arguments) for c in resp.tool_calls] == [("git_log", {"max_count": 2})]
    assert (resp.usage.input_tokens, resp.usage.output_tokens) == (200, 18)


def test_truncated_stream_is_an_error(server: WireServer) -> None:
    server.queue(Reply.fixture("ollama/stream_truncated.ndjson"))
    with pytest.raises(ProviderError, match="stream ended before the reply was complete"):
        model(server).chat(first_turn(), TOOLS, on_text=lambda _: None)


def test_model_not_found(server: WireServer) -> None:
    server.queue(Reply.json({"error": "model 'llama9' not found, try pulling it first"}, 404))
    with pytest.raises(ProviderError) as info:
        model(server, "llama9").chat(first_turn(), TOOLS)
    assert info.value.status == 404 and "try pulling it first" in str(info.value)


@pytest.mark.parametrize(("host", "url"), [("127.0.0.1:11500", "http://127.0.0.1:11500"),
                                           ("myhost", "http://myhost:11434"),
                                           ("https://ollama.example/", "https://ollama.example")])
def test_ollama_host_forms(host: str, url: str) -> None:
    assert ollama_model("x", {"OLLAMA_HOST": host}).endpoint == url
