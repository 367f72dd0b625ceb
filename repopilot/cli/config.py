"""`repopilot config`: the settings in force and where each came from (a flag, a variable, a config file, the
default). Secrets only say whether they are set."""

from __future__ import annotations

import json

import typer

from .console import out
from .context import settings_from

__all__ = ["register"]


def config(as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of a table.")) -> None:
    """Show the settings in force and where each came from."""
    rows = settings_from().shown()
    if as_json:
        typer.echo(json.dumps({name: {"value": value, "from": origin} for name, value, origin in rows}, indent=1))
        return
    widths = [max(len(row[i]) for row in [("setting", "value", "from"), *rows]) for i in range(3)]
    for row in [("setting", "value", "from"), *rows]:
        out.print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip(), markup=False)


def register(app: typer.Typer) -> None:
    app.command("config")(config)
