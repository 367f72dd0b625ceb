"""Model adapters behind the one `Model` contract of `repopilot.core`, and the registry that picks one.

`REPOPILOT_MODEL=provider:model` selects the adapter; each adapter reads its own ecosystem's variables.
"""

from .anthropic import DEFAULT_BASE_URL as _ANTHROPIC_URL
from .anthropic import AnthropicModel, anthropic_model
from .demo import demo_model
from .gemini import DEFAULT_BASE_URL as _GEMINI_URL
from .gemini import GeminiModel, gemini_model
from .http_client import HttpClient, RetryPolicy, safe_url
from .ollama import DEFAULT_HOST as _OLLAMA_HOST
from .ollama import OllamaModel, ollama_model
from .openai import DEFAULT_BASE_URL as _OPENAI_URL
from .openai import OpenAIModel, openai_model
from .prices import cost_of, price_for
from .registry import PROVIDERS, ProviderInfo, provider_variables, register, resolve_model, split_spec
from .scripted import ScriptedModel, ScriptExhausted

register(ProviderInfo(name="openai", factory=openai_model, endpoint_var="OPENAI_BASE_URL",
                      default_endpoint=_OPENAI_URL, key_var="OPENAI_API_KEY"))
register(ProviderInfo(name="anthropic", factory=anthropic_model, endpoint_var="ANTHROPIC_BASE_URL",
                      default_endpoint=_ANTHROPIC_URL, key_var="ANTHROPIC_API_KEY"))
register(ProviderInfo(name="gemini", factory=gemini_model, endpoint_var="GEMINI_BASE_URL",
                      default_endpoint=_GEMINI_URL, key_var="GEMINI_API_KEY"))
register(ProviderInfo(name="ollama", factory=ollama_model, endpoint_var="OLLAMA_HOST",
                      default_endpoint=_OLLAMA_HOST))
register(ProviderInfo(name="scripted", factory=demo_model))

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
