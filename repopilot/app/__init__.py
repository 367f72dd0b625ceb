"""The application layer: RepoPilot's use cases over `Settings`, returning typed results and printing nothing.
The CLI is one client; a webhook or a Python caller is another."""

from ..ci import DiagnosisReport, ReportFailure, read_report
from ..ci.report import ReportLine
from .fix_seed import describe_diagnosis, seed_messages

__all__ = ["DiagnosisReport", "ReportFailure", "ReportLine", "describe_diagnosis", "read_report", "seed_messages"]
