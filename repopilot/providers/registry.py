"""From `REPOPILOT_MODEL=provider:model` to an adapter. Adapters register a factory by provider name."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..core import ConfigError, Model

__all__ = ["PROVIDERS", "ProviderInfo", "register", "resolve_model", "split_spec"]

HOWTO = ("set REPOPILOT_MODEL=provider:model, e.g. openai:gpt-4o-mini, anthropic:claude-3-5-haiku-latest, "
         "gemini:gemini-2.0-flash, ollama:llama3.2 (or scripted:demo for an offline demo)")


@dataclass(frozen=True)
class ProviderInfo:
    name: str
    factory: Callable[[str, Mapping[str, str]], Model]
    # Environment variables the provider reads: (endpoint variable, default endpoint, key variable or None).
    endpoint_var: str | None = None
    default_endpoint: str | None = None
    key_var: str | None = None


PROVIDERS: dict[str, ProviderInfo] = {}


def register(info: ProviderInfo) -> None:
    PROVIDERS[info.name] = info


def _shown(text: str) -> str:
    # A setting can be anything pasted by mistake, a whole file even: quote a prefix, not all of it.
    return repr(text) if len(text) <= 60 else f"{text[:40]!r}… ({len(text)} characters)"


def split_spec(spec: str) -> tuple[str, str]:
    provider, sep, model = spec.strip().partition(":")
    if not sep or not provider or not model:
        raise ConfigError(f"REPOPILOT_MODEL={_shown(spec)} is not provider:model; {HOWTO}")
    return provider.lower(), model


def resolve_model(spec: str | None = None, environ: Mapping[str, str] | None = None) -> Model:
    """The configured model. Raises ConfigError (exit 2) when none is configured or its key is missing."""
    env = os.environ if environ is None else environ
    spec = spec or env.get("REPOPILOT_MODEL", "")
    if not spec:
        raise ConfigError(f"no model configured: {HOWTO}")
    provider, model = split_spec(spec)
    info = PROVIDERS.get(provider)
    if info is None:
        known = ", ".join(sorted(PROVIDERS))
        raise ConfigError(f"unknown provider {_shown(provider)} in REPOPILOT_MODEL; known providers: {known}")
    return info.factory(model, env)
