"""What `repopilot history` does once its arguments are parsed, and the quick parser of its common case.

`repopilot history [--json] [-n N]` must answer in well under 200 ms on a history of 100,000 diagnoses; the query
takes about a millisecond (a summary row per fingerprint), so the time is start-up: typer, and rich for a pipe.
The quick path reads those arguments without typer and prints JSON or tab-separated text without rich (a table on
a terminal still uses rich); anything else (help, `prune`, a bad value) goes to the typer command, which parses it
again and says what is wrong. Both paths end in `show_history`."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from typing import Any

from ..app import list_recurring
from ..core.sanitize import json_visible, visible
from .console import out, shown, stdout_is_terminal
from .context import settings_from

__all__ = ["MAX_LIMIT", "QUICK_HISTORY", "quick_history", "show_history"]

MAX_LIMIT = 10_000
# The options the quick path reads (tests/cli/test_history_cli.py holds them to the typer command's).
QUICK_HISTORY = {"--json": "as_json", "--limit": "limit", "-n": "limit"}


def quick_history(argv: list[str]) -> dict[str, Any] | None:
    """`show_history`'s keywords (and `debug`) for `[--debug] history [--json] [-n N]`, or None when `argv` is
    anything else or anything the typer command would reject."""
    debug = argv[:1] == ["--debug"]
    rest = argv[1:] if debug else argv
    if rest[:1] != ["history"]:
        return None
    found: dict[str, Any] = {"debug": debug}
    words = iter(rest[1:])
    for word in words:
        name, eq, given = word.partition("=") if word.startswith("--") else (word, "", "")
        key = QUICK_HISTORY.get(name)
        if key is None or key in found:
            return None  # a subcommand, help, an unknown or repeated option: typer's to explain
        if key == "as_json":
            if eq:
                return None
            found[key] = True
            continue
        value = given if eq else next(words, "")
        if not (value.isascii() and value.isdigit()) or not 1 <= int(value) <= MAX_LIMIT:
            return None
        found[key] = int(value)
    return found


def _date(when: float) -> str:
    return datetime.fromtimestamp(when, UTC).strftime("%Y-%m-%d %H:%M")


def show_history(*, as_json: bool = False, limit: int = 20) -> None:
    """Print the recurring failures: JSON, tab-separated columns for a pipe, or a table on a terminal."""
    listing = list_recurring(settings_from(), limit=limit)
    if as_json:
        data = {"history": str(listing.path), "diagnoses": listing.diagnoses,
                "recurring": [r.model_dump(mode="json") for r in listing.recurring]}
        sys.stdout.write(json_visible(json.dumps(data, ensure_ascii=False, indent=1)) + "\n")
        sys.stdout.flush()
        return
    if not listing.recurring:
        out.print(f"no failures recorded in {listing.path} yet", markup=False)
        return
    columns = ("fingerprint", "count", "first seen", "last seen", "first commit", "branches", "flaky", "rule",
               "message")
    rows = [(r.fingerprint[:8], str(r.count), _date(r.first_seen), _date(r.last_seen), (r.first_commit or "-")[:7],
             ", ".join(r.branches[:4]) or "-", "-" if r.flake_rate is None else f"{r.flake_rate:.0%}", r.rule,
             r.message[:100]) for r in listing.recurring]
    if not stdout_is_terminal():  # plain tab-separated columns for a pipe
        sys.stdout.write("".join("\t".join(visible(cell, newlines=False).replace("\t", " ") for cell in row) + "\n"
                                 for row in (columns, *rows)))
        sys.stdout.flush()
        return
    from rich.table import Table  # a person at a terminal: the one case that needs rich

    table = Table(title=f"{listing.diagnoses} diagnoses in {shown(str(listing.path))}", box=None)
    for column in columns:
        table.add_column(column, no_wrap=column != "message", overflow="fold")
    for row in rows:
        table.add_row(*(shown(cell) for cell in row))
    out.print(table)
