"""The configured model and the known providers, for `repopilot models`: where each would connect and whether
its key is set (never the key)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core import ConfigError, redact_text
from ..providers import PROVIDERS, safe_url, split_spec
from .settings import Settings

__all__ = ["model_rows", "models_in"]


def models_in(settings: Settings) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """What `repopilot models` shows, from the settings' model and provider variables."""
    return model_rows({**settings.provider_env, "REPOPILOT_MODEL": settings.model or ""})


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
