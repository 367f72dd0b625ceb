"""Views of recorded runs: the timeline people read, OpenTelemetry spans for the tools teams already use.

Imports `repopilot.core` only; the OpenTelemetry SDK (the `otel` extra) is imported lazily, inside `otlp`
and `live`, when a span is about to be sent."""

from .live import attach_live_exporters
from .otlp import export_trace, traces_url
from .spans import capture_content_from_env, plan_spans
from .timeline import (
    budget_usage,
    format_duration,
    run_span_ms,
    shorten,
    step_outcome,
    step_subject,
    timeline,
)

__all__ = [
    "attach_live_exporters",
    "budget_usage",
    "capture_content_from_env",
    "export_trace",
    "format_duration",
    "plan_spans",
    "run_span_ms",
    "shorten",
    "step_outcome",
    "step_subject",
    "timeline",
    "traces_url",
]
