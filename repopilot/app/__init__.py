"""The application layer: RepoPilot's use cases over `Settings`, returning typed results and printing nothing.
The CLI is one client; a webhook or a Python caller is another (see docs/architecture.md)."""

from ..ci import DiagnosisReport, LogInput, ReportFailure, parse_run_url, read_report
from ..ci.excerpt import DEFAULT_TOKEN_BUDGET
from ..ci.report import ReportLine
from .diagnosing import diagnose, open_logs
from .fix_runs import (
    ApprovalOutcome,
    FixOutcome,
    RejectOutcome,
    approve_run,
    load_proposal,
    reject_run,
    resume_run,
    run_lock,
    start_fix,
    who_am_i,
)
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
from .runtime import Observer, apply_settings, github_access, model_for, observed, scanner_for
from .settings import Settings, load_settings

__all__ = [
    "COMMENT_MARKER",
    "DEFAULT_TOKEN_BUDGET",
    "ApprovalOutcome",
    "CommentOutcome",
    "DiagnosisReport",
    "FixOutcome",
    "GitHubRunReport",
    "LogInput",
    "Observer",
    "RejectOutcome",
    "ReportFailure",
    "ReportLine",
    "Settings",
    "apply_settings",
    "approve_run",
    "comment_on_pull_request",
    "describe_diagnosis",
    "diagnose",
    "github_access",
    "github_logs",
    "load_proposal",
    "load_settings",
    "model_for",
    "observed",
    "open_logs",
    "parse_run_url",
    "read_report",
    "reject_run",
    "report_github_run",
    "resolve_run_url",
    "resume_run",
    "run_lock",
    "scanner_for",
    "seed_messages",
    "start_fix",
    "who_am_i",
]
