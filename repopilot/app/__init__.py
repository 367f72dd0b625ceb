"""The application layer: RepoPilot's use cases over `Settings`, returning typed results and printing nothing.
The CLI is one client; a webhook or a Python caller is another (see docs/architecture.md)."""

from typing import TYPE_CHECKING

from ..ci import DiagnosisReport, LogInput, ReportFailure, parse_run_url, read_report
from ..ci.excerpt import DEFAULT_TOKEN_BUDGET
from ..ci.report import ReportLine
from ..core.lazy import lazy_exports

if TYPE_CHECKING:
    from .diagnosing import diagnose, open_logs
    from .fix_seed import describe_diagnosis, seed_messages
    from .github_report import (
        COMMENT_MARKER,
        CommentOutcome,
        GitHubRunReport,
        comment_on_pull_request,
        github_logs,
        report_github_run,
        resolve_run_url,
    )
    from .runtime import Observer, apply_settings, github_access, model_for, observed, scanner_for, tool_bounds
    from .settings import Settings, load_settings

# Each name is imported from its module the first time it is used.
__getattr__ = lazy_exports(__name__, {
    "diagnosing": ("diagnose", "open_logs"),
    "fix_seed": ("describe_diagnosis", "seed_messages"),
    "github_report": (
        "COMMENT_MARKER", "CommentOutcome", "GitHubRunReport", "comment_on_pull_request", "github_logs",
        "report_github_run", "resolve_run_url"
    ),
    "runtime": ("Observer", "apply_settings", "github_access", "model_for", "observed", "scanner_for",
                "tool_bounds"),
    "settings": ("Settings", "load_settings"),
})

__all__ = [
    "COMMENT_MARKER",
    "DEFAULT_TOKEN_BUDGET",
    "CommentOutcome",
    "DiagnosisReport",
    "GitHubRunReport",
    "LogInput",
    "Observer",
    "ReportFailure",
    "ReportLine",
    "Settings",
    "apply_settings",
    "comment_on_pull_request",
    "describe_diagnosis",
    "diagnose",
    "github_access",
    "github_logs",
    "load_settings",
    "model_for",
    "observed",
    "open_logs",
    "parse_run_url",
    "read_report",
    "report_github_run",
    "resolve_run_url",
    "scanner_for",
    "seed_messages",
    "tool_bounds",
]
