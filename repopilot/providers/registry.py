"""From `REPOPILOT_MODEL=provider:model` to an adapter. Adapters register a factory by provider name."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core import ConfigError

if TYPE_CHECKING:  # the messages' models: built only when a model is asked for (`diagnose FILE` needs none)
    from ..core import Model

__all__ = ["PROVIDERS", "ProviderInfo", "default_endpoint", "provider_variables", "register", "resolve_model",
           "split_spec"]

# Variables every HTTP adapter reads (see http_client), besides its own endpoint and key.
_COMMON_VARIABLES = ("REPOPILOT_MAX_RETRIES", "REPOPILOT_HTTP_TIMEOUT", "REPOPILOT_MAX_REPLY_BYTES",
                     "REPOPILOT_MAX_REPLY_SECONDS")

HOWTO = ("set REPOPILOT_MODEL=provider:model, e.g. openai:gpt-4o-mini, anthropic:claude-3-5-haiku-latest, "
         "gemini:gemini-2.0-flash, ollama:llama3.2 (or scripted:demo for an offline demo)")


@dataclass(frozen=True)
class ProviderInfo:
    """A model provider: how to make its adapter and the variables it reads."""

    name: str
    factory: Callable[[str, Mapping[str, str]], Model]
    # Environment variables the provider reads: (endpoint variable, default endpoint, key variable or None).
    endpoint_var: str | None = None
    default_endpoint: str | None = None
    key_var: str | None = None


def _adapter(module: str, function: str) -> Callable[[str, Mapping[str, str]], Model]:
    """A factory that imports its adapter (and with it the HTTP client) only when a model is asked for: reading
    the settings, or diagnosing without a model, needs the providers' names and variables, not their code."""

    def factory(model: str, environ: Mapping[str, str]) -> Model:
        made: Model = getattr(importlib.import_module(f"{__package__}.{module}"), function)(model, environ)
        return made

    return factory


# The built-in adapters, declared once each: name, where the factory lives, and what it reads.
PROVIDERS: dict[str, ProviderInfo] = {info.name: info for info in (
    ProviderInfo(name="openai", factory=_adapter("openai", "openai_model"), endpoint_var="OPENAI_BASE_URL",
                 default_endpoint="https://api.openai.com/v1", key_var="OPENAI_API_KEY"),
    ProviderInfo(name="anthropic", factory=_adapter("anthropic", "anthropic_model"),
                 endpoint_var="ANTHROPIC_BASE_URL", default_endpoint="https://api.anthropic.com",
                 key_var="ANTHROPIC_API_KEY"),
    ProviderInfo(name="gemini", factory=_adapter("gemini", "gemini_model"), endpoint_var="GEMINI_BASE_URL",
                 default_endpoint="https://generativelanguage.googleapis.com", key_var="GEMINI_API_KEY"),
    ProviderInfo(name="ollama", factory=_adapter("ollama", "ollama_model"), endpoint_var="OLLAMA_HOST",
                 default_endpoint="http://localhost:11434"),
    ProviderInfo(name="scripted", factory=_adapter("demo", "demo_model")),
)}


def default_endpoint(name: str) -> str:
    """The built-in default endpoint of provider `name` (the adapters read it from here: one place)."""
    endpoint = PROVIDERS[name].default_endpoint
    assert endpoint is not None, name
    return endpoint


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
