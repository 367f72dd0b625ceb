"""CI failure diagnosis: log sources, the rule catalog, the one-pass scanner, extraction, excerpts, escalation.

Other layers use `diagnose_source()` (one `DiagnosisReport` per job log) or `diagnose_input()` (richer objects),
and the pure renderers in `RENDERERS`.
"""

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports

if TYPE_CHECKING:
    from .ahead import prestart_helper
    from .attribution import BaseFacts, JobFacts, attribute_report
    from .command import find_command, log_lines
    from .engine import default_scanner, diagnose_input, diagnose_source
    from .excerpt import DEFAULT_TOKEN_BUDGET
    from .failure_history import HistoryStore
    from .failure_issue import (
        ISSUE_LABEL,
        IssueState,
        Occurrence,
        marked_fingerprint,
        next_issue_state,
        read_issue_state,
        render_failure_issue,
    )
    from .fingerprint import short_fingerprint
    from .github import NoFailedJobs, failed_jobs, github_log_inputs
    from .github_api import GitHubClient
    from .history_records import FailureRow, HistoryRow, Recurring, RunPlace, RunRecord
    from .history_sql import HistorySQL
    from .native import use_native
    from .prebuild import compile_patterns, write_prebuilt
    from .render import LINE_CHARS, RENDERERS, Renderer, clip, cut_line, render_markdown, split_lines
    from .report import DiagnosisReport, Evidence, ReportFailure, ReportLine, SeenBefore, read_report, report_schema
    from .run_facts import RunFacts, gather_run_facts
    from .runurl import DEFAULT_API_URL, DEFAULT_LOG_CACHE_MB, GitHubAccess, RunRef, is_run_url, parse_run_url
    from .scanner import Scanner
    from .sources import MAX_STDIN_BYTES, DownloadReport, LogInput, open_sources

# Each name is imported from its module the first time it is used.
__getattr__ = lazy_exports(__name__, {
    "ahead": ("prestart_helper",),
    "command": ("find_command", "log_lines"),
    "attribution": ("BaseFacts", "JobFacts", "attribute_report"),
    "run_facts": ("RunFacts", "gather_run_facts"),
    "engine": ("default_scanner", "diagnose_input", "diagnose_source"),
    "excerpt": ("DEFAULT_TOKEN_BUDGET",),
    "failure_issue": ("ISSUE_LABEL", "IssueState", "Occurrence", "marked_fingerprint", "next_issue_state",
                      "read_issue_state", "render_failure_issue"),
    "failure_history": ("HistoryStore",),
    "fingerprint": ("short_fingerprint",),
    # The HTTP client comes with these two modules only: a name from them is imported when a run URL needs it.
    "github": ("NoFailedJobs", "failed_jobs", "github_log_inputs"),
    "github_api": ("GitHubClient",),
    "history_records": ("FailureRow", "HistoryRow", "Recurring", "RunPlace", "RunRecord"),
    "history_sql": ("HistorySQL",),
    "prebuild": ("compile_patterns", "write_prebuilt"),
    "render": ("LINE_CHARS", "RENDERERS", "Renderer", "clip", "cut_line", "render_markdown", "split_lines"),
    "report": ("DiagnosisReport", "Evidence", "ReportFailure", "ReportLine", "SeenBefore", "read_report",
               "report_schema"),
    "runurl": ("DEFAULT_API_URL", "DEFAULT_LOG_CACHE_MB", "GitHubAccess", "RunRef", "is_run_url", "parse_run_url"),
    "native": ("use_native",),
    "scanner": ("Scanner",),
    "sources": ("MAX_STDIN_BYTES", "DownloadReport", "LogInput", "open_sources"),
})

__all__ = [
    "DEFAULT_API_URL",
    "DEFAULT_LOG_CACHE_MB",
    "DEFAULT_TOKEN_BUDGET",
    "ISSUE_LABEL",
    "LINE_CHARS",
    "MAX_STDIN_BYTES",
    "RENDERERS",
    "BaseFacts",
    "DiagnosisReport",
    "DownloadReport",
    "Evidence",
    "FailureRow",
    "GitHubAccess",
    "GitHubClient",
    "HistoryRow",
    "HistorySQL",
    "HistoryStore",
    "IssueState",
    "JobFacts",
    "LogInput",
    "NoFailedJobs",
    "Occurrence",
    "Recurring",
    "Renderer",
    "ReportFailure",
    "ReportLine",
    "RunFacts",
    "RunPlace",
    "RunRecord",
    "RunRef",
    "Scanner",
    "SeenBefore",
    "attribute_report",
    "clip",
    "compile_patterns",
    "cut_line",
    "default_scanner",
    "diagnose_input",
    "diagnose_source",
    "failed_jobs",
    "find_command",
    "gather_run_facts",
    "github_log_inputs",
    "is_run_url",
    "log_lines",
    "marked_fingerprint",
    "next_issue_state",
    "open_sources",
    "parse_run_url",
    "prestart_helper",
    "read_issue_state",
    "read_report",
    "render_failure_issue",
    "render_markdown",
    "report_schema",
    "short_fingerprint",
    "split_lines",
    "use_native",
    "write_prebuilt",
]
