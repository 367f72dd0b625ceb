"""CI failure diagnosis: log sources, the rule catalog, the one-pass scanner, extraction, excerpts, escalation.

Other layers use `diagnose_source()` (one JSON-contract dict per job log) or `diagnose_input()` (richer objects).
"""

from .catalog import CATEGORIES, Catalog, Rule, load_catalog
from .engine import Result, diagnose_input, diagnose_source, to_contract
from .runurl import RunRef, is_run_url, parse_run_url
from .sources import LogInput, open_sources

__all__ = [
    "CATEGORIES",
    "Catalog",
    "LogInput",
    "Result",
    "Rule",
    "RunRef",
    "diagnose_input",
    "diagnose_source",
    "is_run_url",
    "load_catalog",
    "open_sources",
    "parse_run_url",
    "to_contract",
]
