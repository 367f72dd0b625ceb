"""`repopilot ask` through each provider against a loopback server speaking its real format: the tool call
comes back, runs on the repository, its result goes back paired as the API demands, and the trace says so."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from repopilot.cli.main import main
from repopilot.core import load_trace

from .helpers import KEY
from .wire_server import Reply, WireServer

CASES = {
    "openai": ("gpt-4o-mini", "openai/tool_calls.json", "openai/final_answer.json",
               {"OPENAI_API_KEY": KEY}, "/v1", "OPENAI_BASE_URL"),
    "anthropic": ("claude-3-5-haiku-latest", "anthropic/tool_use.json", "anthropic/final_answer.json",
                  {"ANTHROPIC_API_KEY": KEY}, "", "ANTHROPIC_BASE_URL"),
    "gemini": ("gemini-2.5-flash", "gemini/function_calls.json", "gemini/final_answer.json",
               {"GEMINI_API_KEY": KEY}, "", "GEMINI_BASE_URL"),
    "ollama": ("llama3.2", "ollama/tool_calls.json", "ollama/final_answer.json", {}, "", "OLLAMA_HOST"),
}


def configure(monkeypatch: pytest.MonkeyPatch, server: WireServer, provider: str) -> str:
    model, _, _, keys, suffix, url_var = CASES[provider]
    monkeypatch.setenv("REPOPILOT_MODEL", f"{provider}:{model}")
    monkeypatch.setenv(url_var, server.url + suffix)
    for name, value in keys.items():
        monkeypatch.setenv(name, value)
    return model


def results_sent(provider: str, body: dict[str, Any]) -> list[tuple[str, str]]:
    """(id or name, content) of each tool result in a request, read the provider's way."""
    if provider in ("openai", "ollama"):
        return [(m.get("tool_call_id") or m["tool_name"], m["content"]) for m in body["messages"]
                if m["role"] == "tool"]
    if provider == "anthropic":
        user_turns = [m for m in body["messages"] if m["role"] == "user"]
        return [(b["tool_use_id"], b["content"]) for b in user_turns[-1]["content"] if b["type"] == "tool_result"]
    parts = body["contents"][-1]["parts"]
    return [(p["functionResponse"]["name"], p["functionResponse"]["response"]["result"]) for p in parts]


@pytest.mark.parametrize("provider", sorted(CASES))
def test_ask_round_trips_a_tool_call(provider: str, server: WireServer, git_repo: Path,
                                     monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    model = configure(monkeypatch, server, provider)
    _, tool_reply, final_reply, *_ = CASES[provider]
    server.queue(Reply.fixture(tool_reply), Reply.fixture(final_reply))

    code = main(["ask", "What does add do?", "--repo", str(git_repo), "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    result = json.loads(captured.out)
    assert result["status"] == "completed" and "a - b" in result["answer"]

    # The file the model asked for was read and its content went back in the second request, paired.
    assert len(server.requests) == 2
    sent = results_sent(provider, server.requests[1].body)
    assert len(sent) == 2
    assert any("return a - b" in content for _, content in sent)

    trace = load_trace(result["run_id"])
    assert trace.model == f"{provider}:{model}" and trace.provider == provider
    types = [s.type for s in trace.steps]
    assert types == ["llm_call", "tool_call", "tool_call", "tool_result", "tool_result", "llm_call"] or \
        types == ["llm_call", "tool_call", "tool_result", "tool_call", "tool_result", "llm_call"]
    calls = [s for s in trace.steps if s.type == "tool_call"]
    results = [s for s in trace.steps if s.type == "tool_result"]
    assert [c.tool_call_id for c in calls] == [r.tool_call_id for r in results]
    assert calls[0].tool_name == "read_file" and calls[0].arguments == {"path": "src/calc.py"}
    assert "return a - b" in results[0].result and results[0].error is None
    assert trace.totals.model_calls == 2 and trace.totals.input_tokens > 0
    if provider in ("openai", "anthropic"):
        assert {c.tool_call_id for c in calls} == {i for i, _ in sent}
    # The key never reaches the trace file.
    assert KEY not in Path(result["trace"]).read_text()


def test_streamed_answer_on_a_terminal(server: WireServer, git_repo: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    configure(monkeypatch, server, "openai")
    monkeypatch.setattr("repopilot.cli.ask.stdout_is_terminal", lambda: True)
    server.queue(Reply.fixture("openai/stream_tool_calls.sse"), Reply.fixture("openai/stream_text.sse"))
    code = main(["ask", "What does add do?", "--repo", str(git_repo)])
    out = capsys.readouterr().out
    assert code == 0
    assert all(r.body["stream"] is True for r in server.requests)
    # Each turn's text on its own line, and the streamed answer is not printed a second time.
    assert out == "Reading the code.\n`add` returns `a - b`.\n"


def test_retry_is_recorded_in_the_trace(server: WireServer, git_repo: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    configure(monkeypatch, server, "anthropic")
    server.queue(Reply.json({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}, 429,
                            {"retry-after": "0.01"}),
                 Reply.fixture("anthropic/final_answer.json"))
    code = main(["ask", "What does add do?", "--repo", str(git_repo), "--json"])
    assert code == 0
    trace = load_trace(json.loads(capsys.readouterr().out)["run_id"])
    llm = next(s for s in trace.steps if s.type == "llm_call")
    assert llm.detail["retries"] == [{"attempt": 1, "status": 429, "wait_s": 0.01, "error": "HTTP 429"}]


def test_provider_failure_exits_4_with_one_line(server: WireServer, git_repo: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    configure(monkeypatch, server, "gemini")
    monkeypatch.setenv("REPOPILOT_MAX_RETRIES", "1")
    server.queue(*[Reply.json({"error": {"code": 500, "message": "Internal error", "status": "INTERNAL"}}, 500,
                              {"retry-after": "0"})] * 2)
    code = main(["ask", "What does add do?", "--repo", str(git_repo)])
    err = capsys.readouterr().err
    assert code == 4
    assert "repopilot: gemini: the request failed after 1 retry (HTTP 500): INTERNAL: Internal error" in err
    assert "Traceback" not in err and KEY not in err
    assert len(server.requests) == 2


@pytest.mark.parametrize(("provider", "var"), [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY"),
                                               ("gemini", "GEMINI_API_KEY")])
def test_missing_key_exits_2_before_any_request(provider: str, var: str, git_repo: Path,
                                                monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("REPOPILOT_MODEL", f"{provider}:some-model")
    # No base URL set: the default public endpoint, which the network guard would refuse loudly.
    code = main(["ask", "What does add do?", "--repo", str(git_repo)])
    err = capsys.readouterr().err
    assert code == 2 and var in err and "Traceback" not in err


def test_a_retry_wait_never_outlasts_the_seconds_budget(server: WireServer, git_repo: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    configure(monkeypatch, server, "openai")
    server.queue(Reply.json({"error": {"message": "Rate limit reached"}}, 429, {"retry-after": "30"}))
    started = time.monotonic()
    code = main(["ask", "What does add do?", "--repo", str(git_repo), "--max-seconds", "5"])
    err = capsys.readouterr().err
    assert code == 4 and time.monotonic() - started < 3
    assert "time budget ends before a retry could start" in err
    assert len(server.requests) == 1
