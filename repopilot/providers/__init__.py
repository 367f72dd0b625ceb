"""Model adapters behind the one `Model` contract of `repopilot.core`, and the registry that picks one.

`REPOPILOT_MODEL=provider:model` selects the adapter; each adapter reads its own ecosystem's variables. The
registry declares the providers as data; the adapters (and the HTTP client) are imported on first use.
"""

from typing import TYPE_CHECKING

from ..core.lazy import lazy_exports
from .registry import PROVIDERS, ProviderInfo, provider_variables, register, resolve_model, split_spec

if TYPE_CHECKING:
    from .anthropic import AnthropicModel
    from .gemini import GeminiModel
    from .http_client import HttpClient, RetryPolicy, safe_url
    from .ollama import OllamaModel
    from .openai import OpenAIModel
    from .prices import cost_of, price_for
    from .scripted import ScriptedModel, ScriptExhausted

__getattr__ = lazy_exports(__name__, {
    "anthropic": ("AnthropicModel",),
    "gemini": ("GeminiModel",),
    "http_client": ("HttpClient", "RetryPolicy", "safe_url"),
    "ollama": ("OllamaModel",),
    "openai": ("OpenAIModel",),
    "prices": ("cost_of", "price_for"),
    "scripted": ("ScriptExhausted", "ScriptedModel"),
})

__all__ = [
    "PROVIDERS",
    "AnthropicModel",
    "GeminiModel",
    "HttpClient",
    "OllamaModel",
    "OpenAIModel",
    "ProviderInfo",
    "RetryPolicy",
    "ScriptExhausted",
    "ScriptedModel",
    "cost_of",
    "price_for",
    "provider_variables",
    "register",
    "resolve_model",
    "safe_url",
    "split_spec",
]
