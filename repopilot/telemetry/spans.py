"""A run as OpenTelemetry spans, following the GenAI semantic conventions (development status): one
`invoke_agent` root per run, a CLIENT `chat {model}` span per model call and an INTERNAL `execute_tool {tool}`
span per tool execution. This module only plans the spans (names, kinds, times, attributes, events) from a
trace, with no dependency on the OpenTelemetry SDK; `otlp` turns the plan into real spans.

Message and tool contents go into spans only when asked for (`capture_content`), as the conventions require,
and they are redacted first: a live run hands over its in-memory trace, which has not been redacted yet."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal
from urllib.parse import urlsplit

from ..core import RunTrace, Step, redact_text
from .timeline import parse_time

__all__ = [
    "CAPTURE_CONTENT_ENV",
    "AttributeValue",
    "EventPlan",
    "SpanPlan",
    "agent_attributes",
    "agent_name",
    "capture_content_from_env",
    "chat_span",
    "plan_spans",
    "root_events",
    "tool_span",
]

CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

AttributeValue = str | bool | int | float | Sequence[str]

# Our provider names to the conventions' `gen_ai.provider.name` values; others pass through as custom values.
_PROVIDER_NAMES = {"openai": "openai", "anthropic": "anthropic", "gemini": "gcp.gemini", "ollama": "ollama"}
# Attribute values longer than this are cut: backends drop or choke on huge attributes.
_MAX_CONTENT_CHARS = 32_000


@dataclass
class EventPlan:
    name: str
    time_ns: int
    attributes: dict[str, AttributeValue] = field(default_factory=dict)


@dataclass
class SpanPlan:
    """One span to emit. `parent` is the `key` of another plan (None for the root)."""

    key: str
    name: str
    kind: Literal["internal", "client"]
    start_ns: int
    end_ns: int
    attributes: dict[str, AttributeValue]
    parent: str | None = None
    error_type: str | None = None
    error_message: str | None = None
    events: list[EventPlan] = field(default_factory=list)


def capture_content_from_env(environ: Mapping[str, str]) -> bool:
    """Whether OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT (in the variables the caller read) asks for
    message content in spans."""
    return environ.get(CAPTURE_CONTENT_ENV, "").strip().lower() in ("true", "1", "yes")


def agent_name(trace: RunTrace) -> str:
    return f"repopilot-{trace.command}"


def _ns(moment: datetime | None, fallback: int) -> int:
    return fallback if moment is None else int(moment.timestamp() * 1_000_000) * 1000


def _provider(trace: RunTrace) -> str | None:
    if not trace.provider:
        return None
    return _PROVIDER_NAMES.get(trace.provider, trace.provider)


def _request_model(trace: RunTrace) -> str | None:
    if not trace.model:
        return None
    _, sep, model = trace.model.partition(":")
    return model if sep else trace.model


def _server(trace: RunTrace, step: Step | None = None) -> dict[str, AttributeValue]:
    endpoint = (step.detail.get("endpoint") if step else None) or trace.extra.get("model_endpoint")
    if not isinstance(endpoint, str) or not endpoint:
        return {}
    parts = urlsplit(endpoint)
    if not parts.hostname:
        return {}
    attrs: dict[str, AttributeValue] = {"server.address": parts.hostname}
    port = parts.port or {"https": 443, "http": 80}.get(parts.scheme)
    if port:
        attrs["server.port"] = port
    return attrs


def _content(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = redact_text(text)
    return text if len(text) <= _MAX_CONTENT_CHARS else text[:_MAX_CONTENT_CHARS] + "…[truncated]"


def _parts(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A trace message as the conventions' parts: text, tool calls and tool call responses."""
    parts: list[dict[str, Any]] = []
    if message.get("role") == "tool":
        return [{"type": "tool_call_response", "id": message.get("tool_call_id"),
                 "response": message.get("content", "")}]
    if message.get("content"):
        parts.append({"type": "text", "content": message["content"]})
    for call in message.get("tool_calls") or []:
        parts.append({"type": "tool_call", "id": call.get("id"), "name": call.get("name"),
                      "arguments": call.get("arguments")})
    return parts


def _conversation_for(trace: RunTrace, ordinal: int) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The messages the `ordinal`-th (1-based) successful model call was sent, and its reply, from the
    conversation stored in the trace."""
    seen = 0
    for i, message in enumerate(trace.messages):
        if message.get("role") == "assistant":
            seen += 1
            if seen == ordinal:
                return trace.messages[:i], message
    return trace.messages, None


def _content_attributes(trace: RunTrace, ordinal: int, step: Step) -> dict[str, AttributeValue]:
    sent, reply = _conversation_for(trace, ordinal)
    system = [m for m in sent if m.get("role") == "system"]
    chat = [{"role": m.get("role"), "parts": _parts(m)} for m in sent if m.get("role") != "system"]
    attrs: dict[str, AttributeValue] = {"gen_ai.input.messages": _content(chat)}
    if system:
        attrs["gen_ai.system_instructions"] = _content(
            [{"type": "text", "content": m.get("content", "")} for m in system])
    if reply is None and isinstance(step.result, dict):
        reply = {"role": "assistant", "content": step.result.get("text") or "",
                 "tool_calls": step.result.get("tool_calls") or []}
    if reply is not None:
        finish = step.detail.get("finish_reason")
        attrs["gen_ai.output.messages"] = _content(
            [{"role": "assistant", "parts": _parts(reply), "finish_reason": finish or "stop"}])
    return attrs


def chat_span(trace: RunTrace, step: Step, ordinal: int, *, capture_content: bool = False,
              now_ns: int = 0) -> SpanPlan:
    """The span of one model call: an `llm_call` step, or an `error` step recorded while calling the model.
    `ordinal` counts successful model calls up to this one (it locates the call in the stored conversation)."""
    end = _ns(parse_time(step.timestamp), now_ns)
    start = end - int((step.duration_ms or 0.0) * 1_000_000)
    request_model = _request_model(trace) or step.model or "unknown"
    attrs: dict[str, AttributeValue] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": request_model}
    provider = _provider(trace)
    if provider:
        attrs["gen_ai.provider.name"] = provider
    attrs["gen_ai.conversation.id"] = trace.run_id
    attrs.update(_server(trace, step))
    plan = SpanPlan(key=f"step-{step.step_number}", name=f"chat {request_model}", kind="client",
                    start_ns=start, end_ns=end, attributes=attrs, parent="run")
    if step.type == "error":
        plan.error_type = str(step.detail.get("kind") or "error")
        plan.error_message = redact_text(step.error or "")
        attrs["error.type"] = plan.error_type
        return plan
    if step.model:
        attrs["gen_ai.response.model"] = step.model
    if step.detail.get("response_id"):
        attrs["gen_ai.response.id"] = str(step.detail["response_id"])
    if step.detail.get("finish_reason"):
        attrs["gen_ai.response.finish_reasons"] = [str(step.detail["finish_reason"])]
    if step.input_tokens is not None:
        attrs["gen_ai.usage.input_tokens"] = step.input_tokens
    if step.output_tokens is not None:
        attrs["gen_ai.usage.output_tokens"] = step.output_tokens
    if step.cost is not None:
        attrs["repopilot.cost_usd"] = step.cost
    retries = step.detail.get("retries") or []
    if retries:
        attrs["repopilot.retries"] = len(retries)
    if capture_content:
        attrs.update(_content_attributes(trace, ordinal, step))
    return plan


def tool_span(trace: RunTrace, call: Step | None, result: Step | None, *, capture_content: bool = False,
              now_ns: int = 0) -> SpanPlan:
    """The span of one tool execution, from its `tool_call` step (the request, recorded before it ran) and its
    `tool_result` step (recorded when it ended, with the duration). Either may be missing: a run that stopped
    mid-tool has a call without a result."""
    anchor = result or call
    assert anchor is not None, "a tool span needs its call or its result"
    end = _ns(parse_time(anchor.timestamp), now_ns)
    start = end - int(((result.duration_ms if result else None) or 0.0) * 1_000_000)
    name = anchor.tool_name or "unknown"
    attrs: dict[str, AttributeValue] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.type": "function",
        "gen_ai.conversation.id": trace.run_id,
    }
    if anchor.tool_call_id:
        attrs["gen_ai.tool.call.id"] = anchor.tool_call_id
    plan = SpanPlan(key=f"step-{anchor.step_number}", name=f"execute_tool {name}", kind="internal",
                    start_ns=start, end_ns=end, attributes=attrs, parent="run")
    failed = (result.error if result else None) or (call.error if call else None)
    if failed:
        plan.error_type = "tool_error"
        plan.error_message = redact_text(failed)[:500]
        attrs["error.type"] = "tool_error"
    elif result is None:
        attrs["repopilot.tool.completed"] = False
    if result is not None and result.detail.get("truncated"):
        attrs["repopilot.tool.result_truncated"] = True
    if capture_content:
        if call is not None:
            attrs["gen_ai.tool.call.arguments"] = _content(call.arguments)
        if result is not None:
            attrs["gen_ai.tool.call.result"] = _content(result.result)
    return plan


def agent_attributes(trace: RunTrace) -> dict[str, AttributeValue]:
    """The root span's attributes; the totals and outcome are only final once the run has finished."""
    attrs: dict[str, AttributeValue] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agent_name(trace),
        "gen_ai.conversation.id": trace.run_id,
        "repopilot.run.command": trace.command,
        "repopilot.run.status": trace.status,
        "repopilot.run.steps": trace.totals.steps,
        "repopilot.run.model_calls": trace.totals.model_calls,
        "repopilot.run.tool_calls": trace.totals.tool_calls,
        "repopilot.run.errors": trace.totals.errors,
    }
    provider = _provider(trace)
    if provider:
        attrs["gen_ai.provider.name"] = provider
    model = _request_model(trace)
    if model:
        attrs["gen_ai.request.model"] = model
    if trace.totals.model_calls:
        attrs["gen_ai.usage.input_tokens"] = trace.totals.input_tokens
        attrs["gen_ai.usage.output_tokens"] = trace.totals.output_tokens
        if trace.totals.cost is not None:
            attrs["repopilot.cost_usd"] = trace.totals.cost
    reports = trace.reports()
    if reports:
        # The first log's verdict; a run over several logs says how many there were.
        first = reports[0]
        for key in ("category", "decided_by"):
            if first.get(key) is not None:
                attrs[f"repopilot.diagnosis.{key}"] = str(first[key])
        lines = first.get("error_lines")
        if isinstance(lines, list):
            attrs["repopilot.diagnosis.error_lines"] = len(lines)
        if len(reports) > 1:
            attrs["repopilot.diagnosis.logs"] = len(reports)
    if trace.proposal:
        if trace.proposal.get("sha256"):
            attrs["repopilot.proposal.sha256"] = str(trace.proposal["sha256"])
        files = trace.proposal.get("files")
        if isinstance(files, list):
            attrs["repopilot.proposal.files"] = [str(f) for f in files]
    return attrs


def _event_attributes(step: Step) -> dict[str, AttributeValue]:
    attrs: dict[str, AttributeValue] = {"repopilot.step": step.step_number}
    for key, value in step.detail.items():
        if isinstance(value, str | bool | int | float):
            attrs[f"repopilot.{key}"] = redact_text(value) if isinstance(value, str) else value
        elif value is not None:
            attrs[f"repopilot.{key}"] = _content(value)[:2000]
    if step.result is not None:
        attrs["repopilot.result"] = _content(step.result)[:2000]
    if step.error:
        attrs["repopilot.error"] = redact_text(step.error)[:500]
    return attrs


def root_events(step: Step, now_ns: int = 0) -> EventPlan | None:
    """Decisions, approvals and errors outside a model call become events on the run's root span."""
    if step.type == "decision":
        name = "repopilot.decision"
    elif step.type == "approval":
        name = "repopilot.approval"
    elif step.type == "error" and step.detail.get("during") != "llm_call":
        name = "exception"
    else:
        return None
    attrs = _event_attributes(step)
    if name == "exception":
        attrs["exception.type"] = str(step.detail.get("kind") or "error")
        attrs["exception.message"] = redact_text(step.error or "")[:500]
    return EventPlan(name, _ns(parse_time(step.timestamp), now_ns), attrs)


def _is_model_error(step: Step) -> bool:
    return step.type == "error" and step.detail.get("during") == "llm_call"


def plan_spans(trace: RunTrace, *, capture_content: bool = False) -> list[SpanPlan]:
    """All spans of a recorded run, root first, on the run's own recorded clock."""
    start = _ns(parse_time(trace.started_at), 0)
    last_step_end = max((_ns(parse_time(s.timestamp), start) for s in trace.steps), default=start)
    end = max(_ns(parse_time(trace.finished_at), last_step_end), last_step_end, start)
    root = SpanPlan(key="run", name=f"invoke_agent {agent_name(trace)}", kind="internal", start_ns=start,
                    end_ns=end, attributes=agent_attributes(trace))
    if trace.status == "failed":
        errors = [s for s in trace.steps if s.type == "error"]
        root.error_type = str(errors[-1].detail.get("kind") or "error") if errors else "failed"
        root.error_message = redact_text(errors[-1].error or "") if errors else "the run failed"
        root.attributes["error.type"] = root.error_type
    plans = [root]
    results = {s.tool_call_id: s for s in trace.steps if s.type == "tool_result" and s.tool_call_id}
    ordinal = 0
    for step in trace.steps:
        if step.type == "llm_call":
            ordinal += 1
            plans.append(chat_span(trace, step, ordinal, capture_content=capture_content, now_ns=end))
        elif _is_model_error(step):
            plans.append(chat_span(trace, step, ordinal + 1, capture_content=capture_content, now_ns=end))
        elif step.type == "tool_call":
            result = results.get(step.tool_call_id) if step.tool_call_id else None
            plans.append(tool_span(trace, step, result, capture_content=capture_content, now_ns=end))
        elif step.type == "tool_result" and not step.tool_call_id:
            plans.append(tool_span(trace, None, step, capture_content=capture_content, now_ns=end))
        else:
            event = root_events(step, end)
            if event is not None:
                root.events.append(event)
    return plans
