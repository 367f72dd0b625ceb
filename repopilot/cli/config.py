"""`repopilot config`: the settings in force and where each came from (a flag, a variable, a config file, the
default). Secrets only say whether they are set."""

from __future__ import annotations

import json

import typer

from .context import settings_from
from .table import Column, print_table

__all__ = ["register"]


def config(as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of a table.")) -> None:
    """Show the settings in force and where each came from."""
    rows = settings_from().shown()
    if as_json:
        typer.echo(json.dumps({name: {"value": value, "from": origin} for name, value, origin in rows}, indent=1))
        return
    # Values and origins are paths a person must read whole: on a narrow terminal they fold, never cut.
    print_table((Column("setting"), Column("value", fold=True), Column("from", fold=True)), rows)


def register(app: typer.Typer) -> None:
    app.command("config")(config)
