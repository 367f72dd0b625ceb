"""The application layer: RepoPilot's use cases over `Settings`, returning typed results and printing nothing.
The CLI is one client; a webhook or a Python caller is another (see docs/architecture.md)."""

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports

if TYPE_CHECKING:
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
        short_fingerprint,
        split_lines,
    )
    from .asking import ask
    from .diagnosing import diagnose, open_logs
    from .discovery import Discovery, discover_run
    from .early import start_early
    from .failure_issues import keep_failure_issues
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
    from .github_app import (
        WRITE_ROLES,
        Published,
        diagnosed_run_url,
        installation_token,
        permission_of,
        publish_report,
        upsert_comment,
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
    from .handoff import HandOff, HandOffTarget, StaleApproval, hand_off, remote_target
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
    from .history_backend import FailureHistory, HistoryRow, HistorySQL, Recurring, RunRecord
    from .models_info import models_in
    from .pruning import prune_runs
    from .pull_request_fixes import (
        ApprovedPullRequest,
        CheckoutFailed,
        PullRequestHead,
        approve_for_pull_request,
        fix_pull_request,
        pull_request_head,
    )
    from .receipts import receipt_lines, receipt_markdown, receipts_of
    from .recurring import list_recurring, prune_history
    from .runtime import Observer, compile_patterns, github_access, tool_bounds
    from .service_settings import ServiceSettings, load_service_settings
    from .settings import Settings, apply_settings, load_settings

# Each name is imported from its module the first time it is used (start-up stays fast).
__getattr__ = lazy_exports(__name__, {
    # The domain's names the clients use, passed on from the ci face: the settings alone import none of them.
    "..ci": ("DEFAULT_TOKEN_BUDGET", "LINE_CHARS", "RENDERERS", "DiagnosisReport", "DownloadReport", "LogInput",
             "Renderer", "ReportFailure", "ReportLine", "clip", "cut_line", "parse_run_url", "read_report",
             "render_markdown", "short_fingerprint", "split_lines"),
    "asking": ("ask",),
    "diagnosing": ("diagnose", "open_logs"),
    "discovery": ("Discovery", "discover_run"),
    "early": ("start_early",),
    "fix_runs": ("ApprovalOutcome", "FixOutcome", "RejectOutcome", "approve_run", "load_proposal", "reject_run",
                 "resume_run", "start_fix", "who_am_i"),
    "failure_issues": ("keep_failure_issues",),
    "github_app": ("WRITE_ROLES", "Published", "diagnosed_run_url", "installation_token", "permission_of",
                   "publish_report", "upsert_comment"),
    "github_report": (
        "COMMENT_MARKER", "CommentOutcome", "GitHubRunReport", "comment_on_pull_request", "github_logs",
        "report_github_run", "resolve_run_url"
    ),
    "handoff": ("HandOff", "HandOffTarget", "StaleApproval", "hand_off", "remote_target"),
    "history": ("budget_usage", "export_run", "format_duration", "run_span_ms", "shorten", "step_outcome",
                "step_subject", "timeline"),
    "history_backend": ("FailureHistory", "HistoryRow", "HistorySQL", "Recurring", "RunRecord"),
    "recurring": ("list_recurring", "prune_history"),
    "models_info": ("models_in",),
    "pruning": ("prune_runs",),
    "pull_request_fixes": ("ApprovedPullRequest", "CheckoutFailed", "PullRequestHead", "approve_for_pull_request",
                           "fix_pull_request", "pull_request_head"),
    "receipts": ("receipt_lines", "receipt_markdown", "receipts_of"),
    "runtime": ("Observer", "compile_patterns", "github_access", "tool_bounds"),
    "service_settings": ("ServiceSettings", "load_service_settings"),
    "settings": ("Settings", "apply_settings", "load_settings"),
})

__all__ = [
    "COMMENT_MARKER",
    "DEFAULT_TOKEN_BUDGET",
    "LINE_CHARS",
    "RENDERERS",
    "WRITE_ROLES",
    "ApprovalOutcome",
    "ApprovedPullRequest",
    "CheckoutFailed",
    "CommentOutcome",
    "DiagnosisReport",
    "Discovery",
    "DownloadReport",
    "FailureHistory",
    "FixOutcome",
    "GitHubRunReport",
    "HandOff",
    "HandOffTarget",
    "HistoryRow",
    "HistorySQL",
    "LogInput",
    "Observer",
    "Published",
    "PullRequestHead",
    "Recurring",
    "RejectOutcome",
    "Renderer",
    "ReportFailure",
    "ReportLine",
    "RunRecord",
    "ServiceSettings",
    "Settings",
    "StaleApproval",
    "apply_settings",
    "approve_for_pull_request",
    "approve_run",
    "ask",
    "budget_usage",
    "clip",
    "comment_on_pull_request",
    "compile_patterns",
    "cut_line",
    "diagnose",
    "diagnosed_run_url",
    "discover_run",
    "export_run",
    "fix_pull_request",
    "format_duration",
    "github_access",
    "github_logs",
    "hand_off",
    "installation_token",
    "keep_failure_issues",
    "list_recurring",
    "load_proposal",
    "load_service_settings",
    "load_settings",
    "models_in",
    "open_logs",
    "parse_run_url",
    "permission_of",
    "prune_history",
    "prune_runs",
    "publish_report",
    "pull_request_head",
    "read_report",
    "receipt_lines",
    "receipt_markdown",
    "receipts_of",
    "reject_run",
    "remote_target",
    "render_markdown",
    "report_github_run",
    "resolve_run_url",
    "resume_run",
    "run_span_ms",
    "short_fingerprint",
    "shorten",
    "split_lines",
    "start_early",
    "start_fix",
    "step_outcome",
    "step_subject",
    "timeline",
    "tool_bounds",
    "upsert_comment",
    "who_am_i",
]
