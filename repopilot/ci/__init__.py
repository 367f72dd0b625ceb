"""CI failure diagnosis: log sources, the rule catalog, the one-pass scanner, extraction, excerpts, escalation.

Other layers use `diagnose_source()` (one `DiagnosisReport` per job log) or `diagnose_input()` (richer objects),
and the pure renderers in `RENDERERS`.
"""

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports

if TYPE_CHECKING:
    from .catalog import CATEGORIES, Catalog, Rule, load_catalog
    from .command import find_command, log_lines
    from .engine import Result, diagnose_input, diagnose_source, to_report
    from .render import RENDERERS, render_github, render_json, render_markdown
    from .report import DiagnosisReport, ReportFailure, read_report, report_schema
    from .runurl import RunRef, is_run_url, parse_run_url
    from .sources import MAX_STDIN_BYTES, LogInput, open_sources

# Each name is imported from its module the first time it is used.
__getattr__ = lazy_exports(__name__, {
    "catalog": ("CATEGORIES", "Catalog", "Rule", "load_catalog"),
    "command": ("find_command", "log_lines"),
    "engine": ("Result", "diagnose_input", "diagnose_source", "to_report"),
    "render": ("RENDERERS", "render_github", "render_json", "render_markdown"),
    "report": ("DiagnosisReport", "ReportFailure", "read_report", "report_schema"),
    "runurl": ("RunRef", "is_run_url", "parse_run_url"),
    "sources": ("MAX_STDIN_BYTES", "LogInput", "open_sources"),
})

__all__ = [
    "CATEGORIES",
    "MAX_STDIN_BYTES",
    "RENDERERS",
    "Catalog",
    "DiagnosisReport",
    "LogInput",
    "ReportFailure",
    "Result",
    "Rule",
    "RunRef",
    "diagnose_input",
    "diagnose_source",
    "find_command",
    "is_run_url",
    "load_catalog",
    "log_lines",
    "open_sources",
    "parse_run_url",
    "read_report",
    "render_github",
    "render_json",
    "render_markdown",
    "report_schema",
    "to_report",
]
