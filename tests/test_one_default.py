"""Defaults and helpers that live in one place (issue 10): the token budget, the max steps, the category list,
the failure's "where" and the report's fields. This fails if a second copy returns."""

import re
from pathlib import Path

import repopilot

ROOT = Path(repopilot.__file__).parent
SOURCES = {p.relative_to(ROOT).as_posix(): p.read_text() for p in ROOT.rglob("*.py")}


def _where(pattern: str) -> set[str]:
    return {name for name, text in SOURCES.items() if re.search(pattern, text, re.M)}


def test_one_default_token_budget_and_max_steps() -> None:
    assert _where(r"^DEFAULT_TOKEN_BUDGET = ") == {"ci/excerpt.py"}
    assert _where(r"^DEFAULT_MAX_STEPS = ") == {"core/budgets.py"}
    # No literal default next to the options or the budgets.
    assert not _where(r"token_budget: int = \d|typer\.Option\(1500|max_steps: int(?: \| None)? = \d"
                      r"|typer\.Option\(20, \"--max-steps\"")


def test_one_category_list() -> None:
    assert _where(r"\"typecheck\", \"lint\", \"dependency\"") == {"ci/report.py"}


def test_one_where_helper() -> None:
    assert not _where(r"def _where\(")  # ReportFailure.where() is the one


def test_no_string_key_reads_of_reports_in_renderers_and_readers() -> None:
    for name in ("ci/render.py", "cli/render.py", "cli/runs.py", "cli/trace_page.py", "app/fix_seed.py"):
        text = SOURCES[name]
        reads = re.findall(r"""(?:report|failure|diag|f|item|excerpt)(?:\.get\(|\[)["'](\w+)["']""", text)
        assert not reads, f"{name} reads report fields by string key: {reads}"
