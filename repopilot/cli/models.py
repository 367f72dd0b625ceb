"""`repopilot models`: which providers exist, which one is configured, where each would connect, and whether
its key is set. Keys are never shown, not even in part."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import typer

from ..core import ConfigError, redact_text
from ..core.sanitize import json_visible
from ..providers import PROVIDERS, split_spec
from ..providers.http_client import safe_url
from .console import out

__all__ = ["model_rows", "register"]


def model_rows(environ: Mapping[str, str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """What `repopilot models` shows: the configured model (or why it is unusable) and one row per provider."""
    spec = environ.get("REPOPILOT_MODEL", "").strip()
    # Shown back to the person, so a key pasted into the wrong variable is masked like everywhere else.
    configured: dict[str, Any] = {"REPOPILOT_MODEL": redact_text(spec) or None, "provider": None, "model": None,
                                  "problem": None}
    if spec:
        try:
            provider, model = split_spec(spec)
            configured.update(provider=provider, model=model)
            if provider not in PROVIDERS:
                configured["problem"] = f"unknown provider {provider!r}"
        except ConfigError as exc:
            configured["problem"] = str(exc)
    else:
        configured["problem"] = "REPOPILOT_MODEL is not set"
    rows = []
    for name, info in sorted(PROVIDERS.items()):
        endpoint = None
        if info.endpoint_var:
            # A key in the query string (`?api-key=…`) is masked like any other.
            endpoint = redact_text(safe_url(environ.get(info.endpoint_var) or info.default_endpoint or "")) or None
        key = "not needed" if info.key_var is None else "set" if environ.get(info.key_var) else "not set"
        rows.append({"provider": name, "configured": configured["provider"] == name,
                     "endpoint": endpoint, "endpoint_var": info.endpoint_var,
                     "endpoint_from": "env" if info.endpoint_var and environ.get(info.endpoint_var) else "default",
                     "key_var": info.key_var, "key": key})
    return configured, rows


def models(as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of a table.")) -> None:
    """List the model providers, which one REPOPILOT_MODEL selects, their endpoints and whether keys are set."""
    configured, rows = model_rows(os.environ)
    if as_json:
        typer.echo(json_visible(json.dumps({"configured": configured, "providers": rows}, indent=1)))
        return
    lines = [("", "provider", "endpoint", "set by", "key")]
    for row in rows:
        endpoint = "(in process)" if row["endpoint"] is None else row["endpoint"]
        source = "" if not row["endpoint_var"] else (
            row["endpoint_var"] if row["endpoint_from"] == "env" else f"default ({row['endpoint_var']} unset)")
        key = row["key"] if row["key_var"] is None else f"{row['key_var']} {row['key']}"
        lines.append(("*" if row["configured"] else "", row["provider"], endpoint, source, key))
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    for line in lines:
        out.print("  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip(), markup=False)
    problem = configured["problem"]
    if problem:
        hint = "" if "provider:model" in problem else "; set REPOPILOT_MODEL=provider:model, e.g. openai:gpt-4o-mini"
        out.print(f"model: {problem}{hint}", markup=False)
    else:
        out.print(f"model: {configured['REPOPILOT_MODEL']} (provider {configured['provider']})", markup=False)


def register(app: typer.Typer) -> None:
    app.command("models")(models)
