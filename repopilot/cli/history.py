"""`repopilot history [--json]`: the failures that keep coming back, from the local failure history; and
`repopilot history prune [--days N]`."""

from __future__ import annotations

import typer

from ..app import prune_history
from .console import out
from .context import settings_from
from .history_run import MAX_LIMIT, show_history

__all__ = ["register"]

history_app = typer.Typer(help="The failure history: recurring failures, and forgetting old ones.",
                          invoke_without_command=True, rich_markup_mode=None)


@history_app.callback()
def history(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print the recurring failures as JSON."),
    limit: int = typer.Option(20, "--limit", "-n", min=1, max=MAX_LIMIT, help="How many fingerprints to list."),
) -> None:
    """List recurring failures, most frequent first: count, first and last seen, first commit, branches, flake
    rate (the share of commits it failed on where the same job also passed)."""
    if ctx.invoked_subcommand is not None:
        return
    show_history(as_json=as_json, limit=limit)


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
