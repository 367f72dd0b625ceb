"""From `REPOPILOT_MODEL=provider:model` to an adapter. Adapters register a factory by provider name."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..core import ConfigError, Model

__all__ = ["PROVIDERS", "ProviderInfo", "provider_variables", "register", "resolve_model", "split_spec"]

# Variables every HTTP adapter reads (see http_client), besides its own endpoint and key.
_COMMON_VARIABLES = ("REPOPILOT_MAX_RETRIES", "REPOPILOT_HTTP_TIMEOUT", "REPOPILOT_MAX_REPLY_BYTES",
                     "REPOPILOT_MAX_REPLY_SECONDS")

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


def provider_variables() -> tuple[str, ...]:
    """The environment variables the adapters declare (endpoints, keys, retries, timeouts): the application
    layer reads them, once, and passes them to `resolve_model`."""
    names = {*_COMMON_VARIABLES}
    for info in PROVIDERS.values():
        names.update(v for v in (info.endpoint_var, info.key_var) if v)
    return tuple(sorted(names))


def resolve_model(spec: str | None, environ: Mapping[str, str]) -> Model:
    """The model `spec` (provider:model) names, configured from `environ` (the variables of
    `provider_variables()`). Raises ConfigError (exit 2) when none is configured or its key is missing."""
    env = environ
    spec = spec or ""
    if not spec:
        raise ConfigError(f"no model configured: {HOWTO}")
    provider, model = split_spec(spec)
    info = PROVIDERS.get(provider)
    if info is None:
        known = ", ".join(sorted(PROVIDERS))
        raise ConfigError(f"unknown provider {_shown(provider)} in REPOPILOT_MODEL; known providers: {known}")
    return info.factory(model, env)
