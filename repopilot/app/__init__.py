"""The application layer: RepoPilot's use cases over `Settings`, returning typed results and printing nothing.
The CLI is one client; a webhook or a Python caller is another (see docs/architecture.md)."""

from typing import TYPE_CHECKING

from ..ci import (
    DEFAULT_TOKEN_BUDGET,
    LINE_CHARS,
    RENDERERS,
    DiagnosisReport,
    DownloadReport,
    LogInput,
    Renderer,
    ReportFailure,
    ReportLine,
    clip,
    cut_line,
    parse_run_url,
    read_report,
    render_markdown,
    split_lines,
)
from ..core.lazy import lazy_exports

if TYPE_CHECKING:
    from .asking import ask
    from .diagnosing import diagnose, open_logs
    from .fix_runs import (
        ApprovalOutcome,
        FixOutcome,
        RejectOutcome,
        approve_run,
        load_proposal,
        reject_run,
        resume_run,
        start_fix,
        who_am_i,
    )
    from .github_report import (
        COMMENT_MARKER,
        CommentOutcome,
        GitHubRunReport,
        comment_on_pull_request,
        github_logs,
        report_github_run,
        resolve_run_url,
    )
    from .history import (
        budget_usage,
        export_run,
        format_duration,
        run_span_ms,
        shorten,
        step_outcome,
        step_subject,
        timeline,
    )
    from .models_info import models_in
    from .pruning import prune_runs
    from .runtime import Observer, apply_settings, tool_bounds
    from .settings import Settings, load_settings

# Each name is imported from its module the first time it is used (start-up stays fast).
__getattr__ = lazy_exports(__name__, {
    "asking": ("ask",),
    "diagnosing": ("diagnose", "open_logs"),
    "fix_runs": ("ApprovalOutcome", "FixOutcome", "RejectOutcome", "approve_run", "load_proposal", "reject_run",
                 "resume_run", "start_fix", "who_am_i"),
    "github_report": (
        "COMMENT_MARKER", "CommentOutcome", "GitHubRunReport", "comment_on_pull_request", "github_logs",
        "report_github_run", "resolve_run_url"
    ),
    "history": ("budget_usage", "export_run", "format_duration", "run_span_ms", "shorten", "step_outcome",
                "step_subject", "timeline"),
    "models_info": ("models_in",),
    "pruning": ("prune_runs",),
    "runtime": ("Observer", "apply_settings", "tool_bounds"),
    "settings": ("Settings", "load_settings"),
})

__all__ = [
    "COMMENT_MARKER",
    "DEFAULT_TOKEN_BUDGET",
    "LINE_CHARS",
    "RENDERERS",
    "ApprovalOutcome",
    "CommentOutcome",
    "DiagnosisReport",
    "DownloadReport",
    "FixOutcome",
    "GitHubRunReport",
    "LogInput",
    "Observer",
    "RejectOutcome",
    "Renderer",
    "ReportFailure",
    "ReportLine",
    "Settings",
    "apply_settings",
    "approve_run",
    "ask",
    "budget_usage",
    "clip",
    "comment_on_pull_request",
    "cut_line",
    "diagnose",
    "export_run",
    "format_duration",
    "github_logs",
    "load_proposal",
    "load_settings",
    "models_in",
    "open_logs",
    "parse_run_url",
    "prune_runs",
    "read_report",
    "reject_run",
    "render_markdown",
    "report_github_run",
    "resolve_run_url",
    "resume_run",
    "run_span_ms",
    "shorten",
    "split_lines",
    "start_fix",
    "step_outcome",
    "step_subject",
    "timeline",
    "tool_bounds",
    "who_am_i",
]
