"""Live export: spans leave while the run goes on, when `OTEL_EXPORTER_OTLP_ENDPOINT` (or the traces-only
`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set. The exporter reads the standard OTEL_* variables itself
(headers, timeout, compression, service name), so RepoPilot is configured like any instrumented program.

Telemetry never breaks a run: a listener that cannot start, or whose exports fail, is reported in
`recorder.listener_errors` for the command to show as a warning, and the run goes on."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from .. import __version__
from ..core import ConfigError, Model, RunTrace, Step, TraceRecorder, redact_text, waiting
from .otlp import INSTALL_HINT, make_tracer_provider, require_sdk, start_span, traces_url
from .spans import (
    SpanPlan,
    agent_attributes,
    agent_name,
    capture_content_from_env,
    chat_span,
    root_events,
    tool_span,
)
from .timeline import parse_time

__all__ = ["LiveSpanExporter", "attach_live_exporters", "live_export_enabled"]

_ENDPOINT_VARS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
_FLUSH_TIMEOUT_MS = 10_000


def live_export_enabled(env: Mapping[str, str]) -> bool:
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    return any(env.get(name, "").strip() for name in _ENDPOINT_VARS)


class LiveSpanExporter:
    """A TraceListener that turns each recorded step into its span as soon as it is recorded: the root
    `invoke_agent` span opens when the listener is attached and closes when the run finishes."""

    def __init__(self, trace: RunTrace, *, exporter: Any | None = None, capture_content: bool = False,
                 otel_env: Mapping[str, str] | None = None) -> None:
        require_sdk()
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

        self.failures: list[str] = []
        failures = self.failures
        inner = exporter if exporter is not None else OTLPSpanExporter()

        class _Watched(SpanExporter):  # type: ignore[misc,unused-ignore]
            """Remembers failed exports: the batch processor drops them silently."""

            def export(self, spans: Any) -> Any:
                try:
                    result = inner.export(spans)
                except Exception as exc:
                    failures.append(f"{type(exc).__name__}: {exc}")
                    return SpanExportResult.FAILURE
                if result is not SpanExportResult.SUCCESS:
                    failures.append(f"{len(spans)} spans not accepted")
                return result

            def shutdown(self) -> None:
                inner.shutdown()

            def force_flush(self, timeout_millis: int = 30_000) -> bool:
                return bool(inner.force_flush(timeout_millis))

        self.capture_content = capture_content
        self._provider = make_tracer_provider(trace.run_id, BatchSpanProcessor(_Watched()), otel_env or {})
        self._tracer = self._provider.get_tracer("repopilot", __version__)
        # A resumed run already has steps: its root covers the resumed part, from now on.
        started = parse_time(trace.started_at)
        start_ns = time.time_ns() if trace.steps or started is None else int(started.timestamp() * 1e6) * 1000
        self._root = start_span(self._tracer, SpanPlan(
            key="run", name=f"invoke_agent {agent_name(trace)}", kind="internal", start_ns=start_ns, end_ns=0,
            attributes=agent_attributes(trace)), None)
        self._ordinal = sum(1 for s in trace.steps if s.type == "llm_call")
        self._open_calls: dict[str, Step] = {}
        self._closed = False

    def _emit(self, plan: SpanPlan) -> None:
        span = start_span(self._tracer, plan, self._root)
        span.end(end_time=max(plan.end_ns, plan.start_ns))

    def on_step(self, trace: RunTrace, step: Step) -> None:
        now = time.time_ns()
        if step.type == "llm_call":
            self._ordinal += 1
            self._emit(chat_span(trace, step, self._ordinal, capture_content=self.capture_content, now_ns=now))
        elif step.type == "error" and step.detail.get("during") == "llm_call":
            self._emit(chat_span(trace, step, self._ordinal + 1, capture_content=self.capture_content,
                                 now_ns=now))
        elif step.type == "tool_call" and step.tool_call_id:
            self._open_calls[step.tool_call_id] = step
        elif step.type == "tool_result":
            call = self._open_calls.pop(step.tool_call_id, None) if step.tool_call_id else None
            self._emit(tool_span(trace, call, step, capture_content=self.capture_content, now_ns=now))
        else:
            event = root_events(step, now)
            if event is not None:
                self._root.add_event(event.name, event.attributes, timestamp=event.time_ns)

    def on_finish(self, trace: RunTrace) -> None:
        if self._closed:
            return
        from opentelemetry import trace as otel

        now = time.time_ns()
        for call in self._open_calls.values():
            self._emit(tool_span(trace, call, None, capture_content=self.capture_content, now_ns=now))
        self._open_calls.clear()
        self._root.set_attributes(agent_attributes(trace))
        if trace.status == "failed":
            errors = [s for s in trace.steps if s.type == "error"]
            kind = str(errors[-1].detail.get("kind") or "error") if errors else "failed"
            self._root.set_attribute("error.type", kind)
            self._root.set_status(otel.Status(otel.StatusCode.ERROR, kind))
        self._root.end(end_time=now)
        self._closed = True
        with waiting("sending the run's spans to the OTLP endpoint"):
            flushed = self._provider.force_flush(_FLUSH_TIMEOUT_MS)
            self._provider.shutdown()
        if self.failures or not flushed:
            problem = "; ".join(self.failures[:3]) or "timed out flushing spans"
            raise RuntimeError(f"OTLP live export failed: {problem}")


def attach_live_exporters(recorder: TraceRecorder, model: Model | None, environ: Mapping[str, str]) -> None:
    """Call once a command has its recorder (and its Agent, which names the model in the trace). Records
    the model's endpoint (a base URL without credentials) for the spans' `server.*` attributes, and adds a
    live OTLP listener when the OTEL_* variables ask for one. Problems are appended to
    `recorder.listener_errors`; they never stop the run. `environ` holds the OTEL_* variables the caller read."""
    env = environ
    if model is not None and model.endpoint:
        recorder.trace.extra.setdefault("model_endpoint", model.endpoint)
    if not live_export_enabled(env):
        return
    protocol = env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or env.get("OTEL_EXPORTER_OTLP_PROTOCOL") or ""
    if protocol.strip() and protocol.strip() != "http/protobuf":
        recorder.listener_errors.append(
            f"live OTLP export disabled: RepoPilot sends http/protobuf only, not {protocol.strip()!r} (point "
            "OTEL_EXPORTER_OTLP_ENDPOINT at the collector's HTTP port, usually 4318)")
        return
    try:
        for name in _ENDPOINT_VARS:
            if env.get(name, "").strip():
                traces_url(env[name])  # a clear message for a malformed endpoint, before any run
        recorder.listeners.append(LiveSpanExporter(recorder.trace, capture_content=capture_content_from_env(env),
                                                   otel_env=env))
    except ConfigError:
        recorder.listener_errors.append(f"OTEL_EXPORTER_OTLP_ENDPOINT is set but the otel extra is missing: "
                                        f"{INSTALL_HINT}")
    except Exception as exc:  # a bad OTEL_* setting must not stop the run it would have observed
        recorder.listener_errors.append(redact_text(f"live OTLP export disabled: {exc}"))
