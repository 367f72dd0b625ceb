"""The span plan of a recorded run follows the GenAI conventions: names, kinds, parents, attributes, times,
content only when opted in, and no secrets. Pure: needs no OpenTelemetry package."""

from __future__ import annotations

import json
from pathlib import Path

from repopilot.core import RunTrace, load_trace
from repopilot.telemetry import plan_spans, timeline
from repopilot.telemetry.spans import capture_content_from_env
from repopilot.telemetry.timeline import parse_time

from .sample import LEAKED_TOKEN, record_fix_run

DEPRECATED = {"gen_ai.system", "gen_ai.usage.prompt_tokens", "gen_ai.usage.completion_tokens"}


def _ns(iso: str) -> int:
    moment = parse_time(iso)
    assert moment is not None
    return int(moment.timestamp() * 1_000_000) * 1000


def test_one_root_chat_and_tool_spans_with_parents(fix_run: RunTrace) -> None:
    plans = plan_spans(fix_run)
    root, children = plans[0], plans[1:]
    assert root.name == "invoke_agent repopilot-fix" and root.kind == "internal" and root.parent is None
    assert [p.name for p in children] == [
        "chat gpt-4o-mini", "execute_tool read_file", "chat gpt-4o-mini", "execute_tool git_log",
        "execute_tool read_file", "chat gpt-4o-mini", "execute_tool propose_fix"]
    assert all(p.parent == "run" for p in children)
    assert {p.kind for p in children if p.name.startswith("chat")} == {"client"}
    assert {p.kind for p in children if p.name.startswith("execute_tool")} == {"internal"}


def test_chat_attributes_match_the_recorded_call(fix_run: RunTrace) -> None:
    calls = [s for s in fix_run.steps if s.type == "llm_call"]
    chats = [p for p in plan_spans(fix_run) if p.name.startswith("chat")]
    for step, plan in zip(calls, chats, strict=True):
        a = plan.attributes
        assert a["gen_ai.operation.name"] == "chat"
        assert a["gen_ai.provider.name"] == "openai"
        assert a["gen_ai.request.model"] == "gpt-4o-mini"
        assert a["gen_ai.response.model"] == "gpt-4o-mini"
        assert a["gen_ai.response.finish_reasons"] == ["tool_calls"]
        assert a["gen_ai.usage.input_tokens"] == step.input_tokens
        assert a["gen_ai.usage.output_tokens"] == step.output_tokens
        assert a["gen_ai.conversation.id"] == fix_run.run_id
        assert a["server.address"] == "127.0.0.1" and a["server.port"] == 9
        assert not DEPRECATED & set(a)
        assert "gen_ai.input.messages" not in a and "gen_ai.output.messages" not in a
        # The recorded clock: the span ends when the step was recorded and lasts as long as the call did.
        assert plan.end_ns == _ns(step.timestamp)
        assert abs((plan.end_ns - plan.start_ns) / 1e6 - (step.duration_ms or 0)) < 0.01
        assert (step.duration_ms or 0) >= 20


def test_tool_spans_carry_name_call_id_and_errors(fix_run: RunTrace) -> None:
    tools = [p for p in plan_spans(fix_run) if p.name.startswith("execute_tool")]
    ids = [p.attributes["gen_ai.tool.call.id"] for p in tools]
    assert ids == ["call_read", "call_log", "call_escape", "call_fix"]
    for p in tools:
        assert p.attributes["gen_ai.operation.name"] == "execute_tool"
        assert p.attributes["gen_ai.tool.type"] == "function"
        assert "gen_ai.tool.call.arguments" not in p.attributes
    escaped = tools[2]
    assert escaped.error_type == "tool_error" and escaped.attributes["error.type"] == "tool_error"
    assert "inside the repository" in (escaped.error_message or "")
    assert all(p.error_type is None for p in tools if p is not escaped)


def test_root_carries_totals_diagnosis_proposal_and_decision_events(fix_run: RunTrace) -> None:
    root = plan_spans(fix_run)[0]
    a = root.attributes
    assert a["gen_ai.agent.name"] == "repopilot-fix"
    assert a["gen_ai.conversation.id"] == fix_run.run_id
    assert a["gen_ai.usage.input_tokens"] == fix_run.totals.input_tokens
    assert a["repopilot.run.status"] == "awaiting_approval"
    assert a["repopilot.diagnosis.category"] == "test"
    assert a["repopilot.proposal.files"] == ["src/calc.py"]
    assert root.start_ns == _ns(fix_run.started_at)
    assert root.end_ns == _ns(fix_run.finished_at or "")
    events = [(e.name, e.attributes.get("repopilot.rule")) for e in root.events]
    assert events == [("repopilot.decision", "python.pytest.assertion"),
                      ("repopilot.decision", "python.generic.traceback")]
    assert root.error_type is None
    for child in plan_spans(fix_run)[1:]:
        assert root.start_ns <= child.start_ns <= child.end_ns <= root.end_ns


def test_content_only_when_opted_in_and_redacted(git_repo: Path) -> None:
    # The in-memory trace of a live run is not redacted yet: the span plan must redact on its own.
    trace = record_fix_run(git_repo).trace
    assert any(LEAKED_TOKEN in json.dumps(s.arguments) for s in trace.steps)
    plans = plan_spans(trace, capture_content=True)
    chat = next(p for p in plans if p.name.startswith("chat"))
    sent = json.loads(str(chat.attributes["gen_ai.input.messages"]))
    assert sent == [{"role": "user", "parts": [{"type": "text", "content": trace.goal}]}]
    assert "You fix CI failures." in str(chat.attributes["gen_ai.system_instructions"])
    output = json.loads(str(chat.attributes["gen_ai.output.messages"]))
    assert output[0]["parts"][1] == {"type": "tool_call", "id": "call_read", "name": "read_file",
                                     "arguments": {"path": "src/calc.py"}}
    fix = next(p for p in plans if p.name == "execute_tool propose_fix")
    assert "[REDACTED]" in str(fix.attributes["gen_ai.tool.call.arguments"])
    everything = json.dumps([p.attributes for p in plans] + [[e.attributes for e in p.events] for p in plans])
    assert LEAKED_TOKEN not in everything


def test_capture_switch_reads_the_standard_variable() -> None:
    assert capture_content_from_env({"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"})
    assert not capture_content_from_env({"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "false"})
    assert not capture_content_from_env({})


def test_failed_model_call_is_an_error_chat_span(git_repo: Path) -> None:
    rec = record_fix_run(git_repo, fail_model=True)
    trace = load_trace(rec.trace.run_id)
    assert trace.status == "failed"
    plans = plan_spans(trace)
    failed = [p for p in plans if p.error_type and p.name.startswith("chat")]
    assert len(failed) == 1 and failed[0].attributes["error.type"] == "ProviderError"
    assert "529" in (failed[0].error_message or "")
    assert plans[0].error_type == "ProviderError" and plans[0].attributes["error.type"] == "ProviderError"


def test_a_run_without_model_has_only_its_root() -> None:
    trace = RunTrace(run_id="r1", command="diagnose", goal="log", status="completed",
                     started_at="2026-01-01T00:00:00.000Z", finished_at="2026-01-01T00:00:00.250Z")
    plans = plan_spans(trace)
    assert len(plans) == 1
    assert "gen_ai.provider.name" not in plans[0].attributes
    assert plans[0].end_ns - plans[0].start_ns == 250_000_000


def test_timeline_places_steps_on_the_run_clock(fix_run: RunTrace) -> None:
    placed = timeline(fix_run)
    assert [p.step.step_number for p in placed] == list(range(1, 14))
    starts = [p.start_ms for p in placed]
    assert starts == sorted(starts)
    chat = placed[2]
    assert chat.step.type == "llm_call" and chat.duration_ms >= 20
    assert chat.start_ms + chat.duration_ms <= placed[3].start_ms + 1


def test_the_sdk_is_imported_only_when_spans_are_sent() -> None:
    import subprocess
    import sys

    code = ("import sys, repopilot.cli.main, repopilot.telemetry; "
            "print(sorted({m.split('.')[0] for m in sys.modules if m.startswith('opentelemetry')}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
