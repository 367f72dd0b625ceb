"""Send a run's spans to an OTLP/HTTP endpoint (protobuf) with the OpenTelemetry SDK, the `otel` extra.

The SDK is imported here and only when a span is about to be sent, so RepoPilot without the extra works
unchanged. A past run's spans carry the times recorded in its trace, not the time of the export. Each run's
trace id is derived from its run id, so a run resumed later, or exported again, lands in the same trace."""

from __future__ import annotations

import hashlib
import logging
import random
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from .. import __version__
from ..core import ConfigError, RunError, RunTrace, UsageError
from .spans import SpanPlan, plan_spans

__all__ = [
    "INSTALL_HINT",
    "emit_spans",
    "export_trace",
    "make_tracer_provider",
    "require_sdk",
    "start_span",
    "traces_url",
]

INSTALL_HINT = "pip install 'repopilot[otel]'"
_TRACES_PATH = "/v1/traces"


def require_sdk() -> None:
    """Raise a ConfigError naming the extra to install when the OpenTelemetry SDK or exporter is missing."""
    try:
        import opentelemetry.exporter.otlp.proto.http.trace_exporter
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError:
        raise ConfigError(f"OpenTelemetry export needs the otel extra: {INSTALL_HINT}") from None
    # The exporter logs failed exports itself; RepoPilot reports them in its own words instead, and the
    # logging module's last-resort handler would otherwise print them as raw log lines on stderr.
    logger = logging.getLogger("opentelemetry")
    if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
        logger.addHandler(logging.NullHandler())


def traces_url(endpoint: str) -> str:
    """The traces URL for an OTLP/HTTP endpoint given as a base (`http://host:4318`) or in full."""
    parts = urlsplit(endpoint.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"not an OTLP/HTTP endpoint: {endpoint!r} (expected e.g. http://127.0.0.1:4318)")
    path = parts.path.rstrip("/")
    if not path.endswith(_TRACES_PATH):
        path += _TRACES_PATH
    return parts._replace(path=path).geturl()


def _trace_id(run_id: str) -> int:
    return int.from_bytes(hashlib.sha256(run_id.encode()).digest()[:16], "big") or 1


def make_tracer_provider(run_id: str, processor: Any, otel_env: Mapping[str, str]) -> Any:
    """A private TracerProvider (never the global one: the host application may have its own) whose spans all
    belong to the trace of `run_id`."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.id_generator import IdGenerator

    class _RunIds(IdGenerator):  # type: ignore[misc,unused-ignore]
        def generate_trace_id(self) -> int:
            return _trace_id(run_id)

        def generate_span_id(self) -> int:
            return random.getrandbits(64) or 1

    attributes: dict[str, str] = {"service.version": __version__}
    if not otel_env.get("OTEL_SERVICE_NAME"):  # the SDK reads it itself; ours is only the fallback
        attributes["service.name"] = "repopilot"
    provider = TracerProvider(resource=Resource.create(attributes), id_generator=_RunIds())
    provider.add_span_processor(processor)
    return provider


def start_span(tracer: Any, plan: SpanPlan, parent: Any | None) -> Any:
    """Start the SDK span for `plan` under `parent` (an SDK span, or None for a root)."""
    from opentelemetry import trace as otel
    from opentelemetry.context import Context

    kind = otel.SpanKind.CLIENT if plan.kind == "client" else otel.SpanKind.INTERNAL
    context = otel.set_span_in_context(parent) if parent is not None else Context()
    span = tracer.start_span(plan.name, context=context, kind=kind, attributes=plan.attributes,
                             start_time=plan.start_ns)
    for event in plan.events:
        span.add_event(event.name, event.attributes, timestamp=event.time_ns)
    if plan.error_type:
        span.set_status(otel.Status(otel.StatusCode.ERROR, plan.error_message or plan.error_type))
    return span


def emit_spans(tracer: Any, plans: Sequence[SpanPlan]) -> None:
    """Create and end the spans of `plans` (parents before children, as `plan_spans` orders them)."""
    started: dict[str, Any] = {}
    for plan in plans:
        started[plan.key] = start_span(tracer, plan, started.get(plan.parent) if plan.parent else None)
    for plan in reversed(plans):
        started[plan.key].end(end_time=max(plan.end_ns, plan.start_ns))


def export_trace(trace: RunTrace, endpoint: str, *, capture_content: bool = False,
                 headers: dict[str, str] | None = None, timeout: float = 10.0,
                 otel_env: Mapping[str, str] | None = None) -> int:
    """Send the spans of a recorded run to `endpoint` in one OTLP request; returns how many were sent.
    Raises RunError when the endpoint cannot be reached or refuses them."""
    url = traces_url(endpoint)
    require_sdk()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
    from opentelemetry.sdk.trace.export import SpanExportResult

    class _Collect(SpanProcessor):  # type: ignore[misc,unused-ignore]
        def __init__(self) -> None:
            self.spans: list[ReadableSpan] = []

        def on_end(self, span: ReadableSpan) -> None:
            self.spans.append(span)

    collect = _Collect()
    provider = make_tracer_provider(trace.run_id, collect, otel_env or {})
    emit_spans(provider.get_tracer("repopilot", __version__), plan_spans(trace, capture_content=capture_content))
    exporter = OTLPSpanExporter(endpoint=url, headers=headers, timeout=timeout)
    try:
        result = exporter.export(collect.spans)
    except Exception as exc:  # the exporter's HTTP stack may raise on malformed URLs or TLS problems
        raise RunError(f"OTLP export to {url} failed: {type(exc).__name__}: {exc}") from None
    finally:
        exporter.shutdown()  # type: ignore[no-untyped-call,unused-ignore]
        provider.shutdown()
    if result is not SpanExportResult.SUCCESS:
        raise RunError(f"OTLP export to {url} failed (endpoint unreachable or it refused the spans)")
    return len(collect.spans)
