"""Recorded runs for their readers (`runs list|show`, `trace export`, the HTML page): the telemetry layer's
timeline and span views, and the OTLP export with the settings' OpenTelemetry variables."""

from __future__ import annotations

from ..core import RunTrace
from ..telemetry import (
    budget_usage,
    export_trace,
    format_duration,
    run_span_ms,
    shorten,
    step_outcome,
    step_subject,
    timeline,
)
from .settings import Settings

__all__ = ["budget_usage", "export_run", "format_duration", "run_span_ms", "shorten", "step_outcome",
           "step_subject", "timeline"]


def export_run(trace: RunTrace, endpoint: str, settings: Settings, *, capture_content: bool = False) -> int:
    """Send a recorded run's spans to an OTLP/HTTP endpoint; returns how many were sent."""
    return export_trace(trace, endpoint, capture_content=capture_content or settings.capture_content(),
                        otel_env=settings.otel_env)
