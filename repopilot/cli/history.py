"""`repopilot history [--json]`: the failures that keep coming back, from the local failure history; and
`repopilot history prune [--days N]`."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import typer
from rich.table import Table

from ..app import list_recurring, prune_history
from ..core.sanitize import json_visible, visible
from .console import out, shown, stdout_is_terminal
from .context import settings_from

__all__ = ["register"]

history_app = typer.Typer(help="The failure history: recurring failures, and forgetting old ones.",
                          invoke_without_command=True, rich_markup_mode=None)


def _date(when: float) -> str:
    return datetime.fromtimestamp(when, UTC).strftime("%Y-%m-%d %H:%M")


@history_app.callback()
def history(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print the recurring failures as JSON."),
    limit: int = typer.Option(20, "--limit", "-n", min=1, max=10_000, help="How many fingerprints to list."),
) -> None:
    """List recurring failures, most frequent first: count, first and last seen, first commit, branches, flake
    rate (the share of commits it failed on where the same job also passed)."""
    if ctx.invoked_subcommand is not None:
        return
    listing = list_recurring(settings_from(), limit=limit)
    if as_json:
        data = {"history": str(listing.path), "diagnoses": listing.diagnoses,
                "recurring": [r.model_dump(mode="json") for r in listing.recurring]}
        typer.echo(json_visible(json.dumps(data, ensure_ascii=False, indent=1)))
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
        for row in (columns, *rows):
            out.print("\t".join(visible(cell, newlines=False).replace("\t", " ") for cell in row), markup=False,
                      soft_wrap=True)
        return
    table = Table(title=f"{listing.diagnoses} diagnoses in {shown(str(listing.path))}", box=None)
    for column in columns:
        table.add_column(column, no_wrap=column != "message", overflow="fold")
    for row in rows:
        table.add_row(*(shown(cell) for cell in row))
    out.print(table)


@history_app.command("prune")
def prune(days: int | None = typer.Option(None, "--days", help="Forget diagnoses older than this many days "
                                          "(default: the history_days setting).")) -> None:
    """Forget diagnoses older than the retention."""
    settings = settings_from()
    gone = prune_history(settings, days)
    out.print(f"forgot {gone} diagnoses older than {settings.history_days if days is None else days} days",
              markup=False)


def register(app: typer.Typer) -> None:
    app.add_typer(history_app, name="history")
