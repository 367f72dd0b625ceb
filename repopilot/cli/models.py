"""`repopilot models`: which providers exist, which one is configured, where each would connect, and whether
its key is set. Keys are never shown, not even in part."""

from __future__ import annotations

import json

import typer

from ..app import models_in
from ..core.sanitize import json_visible
from .console import out
from .context import settings_from
from .table import Column, print_table

__all__ = ["register"]


# At 80 columns the endpoint folds (it must be read whole) and "set by" makes room for it.
_COLUMNS = (Column(""), Column("provider"), Column("endpoint", fold=True), Column("set by", drop=1), Column("key"))


def models(as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of a table.")) -> None:
    """List the model providers, which one REPOPILOT_MODEL selects, their endpoints and whether keys are set."""
    configured, rows = models_in(settings_from())
    if as_json:
        typer.echo(json_visible(json.dumps({"configured": configured, "providers": rows}, indent=1)))
        return
    lines = []
    for row in rows:
        endpoint = "(in process)" if row["endpoint"] is None else row["endpoint"]
        source = "" if not row["endpoint_var"] else (
            row["endpoint_var"] if row["endpoint_from"] == "env" else f"default ({row['endpoint_var']} unset)")
        key = row["key"] if row["key_var"] is None else f"{row['key_var']} {row['key']}"
        lines.append(("*" if row["configured"] else "", row["provider"], endpoint, source, key))
    print_table(_COLUMNS, lines)
    problem = configured["problem"]
    if problem:
        hint = "" if "provider:model" in problem else "; set REPOPILOT_MODEL=provider:model, e.g. openai:gpt-4o-mini"
        out.print(f"model: {problem}{hint}", markup=False)
    else:
        out.print(f"model: {configured['REPOPILOT_MODEL']} (provider {configured['provider']})", markup=False)


def register(app: typer.Typer) -> None:
    app.command("models")(models)
