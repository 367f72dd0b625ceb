"""Model adapters behind the one `Model` contract of `repopilot.core`, and the registry that picks one.

`REPOPILOT_MODEL=provider:model` selects the adapter; each adapter reads its own ecosystem's variables. The
registry is plain data and is imported at once; each adapter, and the HTTP client under it, on first use.
"""

from ..core.lazy import lazy_exports
from .registry import PROVIDERS, ProviderInfo, provider_variables, register, resolve_model, split_spec

__all__ = [
    "PROVIDERS",
    "AnthropicModel",
    "GeminiModel",
    "OllamaModel",
    "OpenAIModel",
    "ProviderInfo",
    "ScriptExhausted",
    "ScriptedModel",
    "provider_variables",
    "register",
    "resolve_model",
    "safe_url",
    "split_spec",
]

__getattr__ = lazy_exports(__name__, {
    "anthropic": ("AnthropicModel",),
    "gemini": ("GeminiModel",),
    "http_client": ("safe_url",),
    "ollama": ("OllamaModel",),
    "openai": ("OpenAIModel",),
    "scripted": ("ScriptExhausted", "ScriptedModel"),
})
