"""Views of recorded runs: the timeline people read, OpenTelemetry spans for the tools teams already use.

Imports `repopilot.core` only; the OpenTelemetry SDK (the `otel` extra) is imported lazily, inside `otlp`
and `live`, when a span is about to be sent. Each name below is imported from its module on first use, so
reading the settings (`capture_content_from_env`) does not import the exporters."""

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports

# `timeline` is both a submodule and a function: bound here, at once (as `repopilot.core` binds `redact`).
from .timeline import (
    budget_usage,
    format_duration,
    run_span_ms,
    shorten,
    step_outcome,
    step_subject,
    timeline,
)

if TYPE_CHECKING:
    from .live import attach_live_exporters
    from .otlp import export_trace, traces_url
    from .spans import capture_content_from_env, plan_spans

__getattr__ = lazy_exports(__name__, {
    "live": ("attach_live_exporters",),
    "otlp": ("export_trace", "traces_url"),
    "spans": ("capture_content_from_env", "plan_spans"),
})

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
