"""Spans reach a real OTLP/HTTP receiver on 127.0.0.1 (protobuf decoded with opentelemetry-proto): after the
fact from a trace file, and live while a run goes on. Skipped when the otel extra is not installed."""

from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path

import pytest

from repopilot.cli.main import main
from repopilot.core import ConfigError, RunError, RunTrace, TraceRecorder, UsageError, load_trace
from repopilot.telemetry import export_trace, traces_url
from repopilot.telemetry.timeline import parse_time

from .receiver import ReceivedSpan, Receiver
from .sample import LEAKED_TOKEN, record_fix_run

pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed: pip install -e '.[otel]'")

CLIENT, INTERNAL = 3, 1  # SpanKind values in the OTLP protobuf
STATUS_ERROR = 2


def _ns(iso: str | None) -> int:
    moment = parse_time(iso)
    assert moment is not None
    return int(moment.timestamp() * 1_000_000) * 1000


def _check_structure(spans: list[ReceivedSpan], trace: RunTrace) -> ReceivedSpan:
    roots = [s for s in spans if not s.parent_span_id]
    assert len(roots) == 1
    root = roots[0]
    assert root.name == "invoke_agent repopilot-fix" and root.kind == INTERNAL
    children = [s for s in spans if s is not root]
    assert all(s.parent_span_id == root.span_id for s in children)
    assert {s.trace_id for s in spans} == {hashlib.sha256(trace.run_id.encode()).digest()[:16].hex()}
    assert sorted(s.name for s in children) == sorted(
        ["chat gpt-4o-mini"] * 3 + ["execute_tool read_file"] * 2 + ["execute_tool git_log",
                                                                     "execute_tool propose_fix"])
    for s in children:
        if s.name.startswith("chat"):
            assert s.kind == CLIENT
            assert s.attributes["gen_ai.operation.name"] == "chat"
            assert s.attributes["gen_ai.provider.name"] == "openai"
            assert s.attributes["gen_ai.request.model"] == "gpt-4o-mini"
            assert s.attributes["gen_ai.response.finish_reasons"] == ["tool_calls"]
            assert s.attributes["gen_ai.usage.input_tokens"] > 0
            assert s.attributes["gen_ai.usage.output_tokens"] > 0
            assert s.attributes["server.address"] == "127.0.0.1" and s.attributes["server.port"] == 9
        else:
            assert s.kind == INTERNAL
            assert s.attributes["gen_ai.operation.name"] == "execute_tool"
            assert s.attributes["gen_ai.tool.type"] == "function"
            assert s.name == f"execute_tool {s.attributes['gen_ai.tool.name']}"
        assert s.attributes["gen_ai.conversation.id"] == trace.run_id
        assert root.start_ns <= s.start_ns <= s.end_ns <= root.end_ns
    escaped = next(s for s in children if s.attributes.get("gen_ai.tool.call.id") == "call_escape")
    assert escaped.status_code == STATUS_ERROR and escaped.attributes["error.type"] == "tool_error"
    assert root.attributes["gen_ai.conversation.id"] == trace.run_id
    assert root.attributes["gen_ai.usage.input_tokens"] == trace.totals.input_tokens
    assert root.attributes["repopilot.run.status"] == "awaiting_approval"
    assert [e[0] for e in root.events] == ["repopilot.decision", "repopilot.decision"]
    assert root.service_name == "repopilot"
    return root


def test_export_after_the_fact_uses_recorded_times(fix_run: RunTrace, otlp_receiver: Receiver) -> None:
    sent = export_trace(fix_run, otlp_receiver.url)
    assert sent == 8 and len(otlp_receiver.spans) == 8
    assert otlp_receiver.paths == ["/v1/traces"] and otlp_receiver.requests == 1
    assert otlp_receiver.content_types == ["application/x-protobuf"]
    root = _check_structure(otlp_receiver.spans, fix_run)
    assert root.start_ns == _ns(fix_run.started_at) and root.end_ns == _ns(fix_run.finished_at)
    first_chat = min((s for s in otlp_receiver.spans if s.name.startswith("chat")), key=lambda s: s.start_ns)
    step = next(s for s in fix_run.steps if s.type == "llm_call")
    assert first_chat.end_ns == _ns(step.timestamp)
    assert abs((first_chat.end_ns - first_chat.start_ns) / 1e6 - (step.duration_ms or 0)) < 0.01
    assert "gen_ai.input.messages" not in first_chat.attributes


def test_export_with_content_opt_in(fix_run: RunTrace, otlp_receiver: Receiver) -> None:
    export_trace(fix_run, otlp_receiver.url + "/v1/traces", capture_content=True)
    chat = min((s for s in otlp_receiver.spans if s.name.startswith("chat")), key=lambda s: s.start_ns)
    assert fix_run.goal in chat.attributes["gen_ai.input.messages"]
    read = next(s for s in otlp_receiver.spans if s.attributes.get("gen_ai.tool.call.id") == "call_read")
    assert "def add" in read.attributes["gen_ai.tool.call.result"]
    assert read.attributes["gen_ai.tool.call.arguments"] == '{"path": "src/calc.py"}'


def test_live_export_during_a_run(git_repo: Path, otlp_receiver: Receiver, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp_receiver.url)
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    rec = record_fix_run(git_repo, slow_ms=20)
    assert rec.listener_errors == []
    assert otlp_receiver.paths and set(otlp_receiver.paths) == {"/v1/traces"}
    trace = load_trace(rec.trace.run_id)
    _check_structure(otlp_receiver.spans, trace)
    chat = min((s for s in otlp_receiver.spans if s.name.startswith("chat")), key=lambda s: s.start_ns)
    step = next(s for s in trace.steps if s.type == "llm_call")
    assert abs((chat.end_ns - chat.start_ns) / 1e6 - (step.duration_ms or 0)) < 0.01
    assert "gen_ai.input.messages" in chat.attributes
    everything = repr([s.attributes for s in otlp_receiver.spans])
    assert LEAKED_TOKEN not in everything and "[REDACTED]" in everything


def test_live_export_problems_never_stop_the_run(git_repo: Path, otlp_receiver: Receiver,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    otlp_receiver.status = 500
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp_receiver.url)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "2")
    rec = record_fix_run(git_repo)
    assert rec.trace.status == "awaiting_approval"
    assert len(rec.listener_errors) == 1 and "OTLP live export failed" in rec.listener_errors[0]


def test_ask_exports_live_through_the_cli(git_repo: Path, otlp_receiver: Receiver,
                                          monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("REPOPILOT_MODEL", "scripted:demo")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp_receiver.url)
    assert main(["ask", "What is this project?", "--repo", str(git_repo)]) == 0
    assert "warning" not in capsys.readouterr().err
    names = sorted(s.name for s in otlp_receiver.spans)
    assert names == sorted(["invoke_agent repopilot-ask", *["chat demo"] * 4, "execute_tool list_files",
                            "execute_tool git_log", "execute_tool read_file"])
    root = next(s for s in otlp_receiver.spans if not s.parent_span_id)
    assert root.attributes["gen_ai.provider.name"] == "scripted"
    assert root.attributes["repopilot.run.status"] == "completed"


def test_cli_export_and_its_errors(fix_run: RunTrace, otlp_receiver: Receiver,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "export", fix_run.run_id, "--otlp", otlp_receiver.url]) == 0
    assert f"sent 8 spans of run {fix_run.run_id}" in capsys.readouterr().err
    otlp_receiver.status = 500
    started = time.monotonic()
    assert main(["trace", "export", fix_run.run_id, "--otlp", otlp_receiver.url]) == 4
    assert time.monotonic() - started < 15
    error = capsys.readouterr().err.strip()
    assert error.startswith("repopilot: OTLP export to") and "\n" not in error
    assert main(["trace", "export", fix_run.run_id, "--otlp", "localhost:4318"]) == 2
    assert "not an OTLP/HTTP endpoint" in capsys.readouterr().err


def test_endpoint_forms() -> None:
    assert traces_url("http://127.0.0.1:4318") == "http://127.0.0.1:4318/v1/traces"
    assert traces_url("http://127.0.0.1:4318/") == "http://127.0.0.1:4318/v1/traces"
    assert traces_url("https://otel.example/v1/traces") == "https://otel.example/v1/traces"
    with pytest.raises(UsageError):
        traces_url("127.0.0.1:4318")


def test_missing_extra_is_a_clear_config_error(fix_run: RunTrace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)
    with pytest.raises(ConfigError, match=r"pip install 'repopilot\[otel\]'"):
        export_trace(fix_run, "http://127.0.0.1:4318")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    from repopilot.telemetry import attach_live_exporters

    rec = TraceRecorder.start("ask", "g")
    attach_live_exporters(rec, None, os.environ)
    assert rec.listeners == []
    assert rec.listener_errors == [
        "OTEL_EXPORTER_OTLP_ENDPOINT is set but the otel extra is missing: pip install 'repopilot[otel]'"]


def test_unreachable_endpoint_is_a_run_error(fix_run: RunTrace) -> None:
    with pytest.raises(RunError, match=r"OTLP export to http://127\.0\.0\.1:9/v1/traces failed"):
        export_trace(fix_run, "http://127.0.0.1:9", timeout=2)


def test_live_export_refuses_grpc_with_a_clear_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    from repopilot.telemetry import attach_live_exporters

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    rec = TraceRecorder.start("ask", "g")
    attach_live_exporters(rec, None, os.environ)
    assert rec.listeners == [] and "http/protobuf only, not 'grpc'" in rec.listener_errors[0]


def test_no_endpoint_no_listener_but_the_model_endpoint_is_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    from repopilot.providers import ScriptedModel
    from repopilot.telemetry import attach_live_exporters

    model = ScriptedModel(["hi"])
    model.endpoint = "https://api.example.test/v1"
    rec = TraceRecorder.start("ask", "g")
    attach_live_exporters(rec, model, os.environ)
    assert rec.listeners == [] and rec.listener_errors == []
    assert rec.trace.extra["model_endpoint"] == "https://api.example.test/v1"


def test_live_spans_leave_while_the_run_is_still_going(git_repo: Path, otlp_receiver: Receiver,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from repopilot.core import Agent, ToolRegistry, UserMessage
    from repopilot.providers import ScriptedModel
    from repopilot.repo import repo_tools
    from repopilot.telemetry import attach_live_exporters

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp_receiver.url)
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
    seen_mid_run: list[str] = []

    def second_reply(messages: object, tools: object) -> str:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and len(otlp_receiver.spans) < 2:
            time.sleep(0.02)
        seen_mid_run.extend(s.name for s in otlp_receiver.spans)
        return "done"

    replies = iter([lambda m, t: {"tool_calls": [{"name": "git_status", "arguments": {}}]}, second_reply])
    model = ScriptedModel(lambda m, t: next(replies)(m, t), model="m1")
    rec = TraceRecorder.start("ask", "status?")
    attach_live_exporters(rec, model, os.environ)
    Agent(model, ToolRegistry(repo_tools(git_repo)), rec).run([UserMessage(content="status?")])
    assert rec.listener_errors == []
    # The first model call and the tool had reached the backend before the run's last model call returned.
    assert sorted(seen_mid_run) == ["chat m1", "execute_tool git_status"]
    assert sorted(s.name for s in otlp_receiver.spans) == [
        "chat m1", "chat m1", "execute_tool git_status", "invoke_agent repopilot-ask"]
