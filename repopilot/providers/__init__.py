"""Model adapters behind the one `Model` contract of `repopilot.core`, and the registry that picks one."""

from .demo import demo_model
from .registry import PROVIDERS, ProviderInfo, register, resolve_model, split_spec
from .scripted import ScriptedModel, ScriptExhausted

register(ProviderInfo(name="scripted", factory=demo_model))

__all__ = [
    "PROVIDERS",
    "ProviderInfo",
    "ScriptExhausted",
    "ScriptedModel",
    "register",
    "resolve_model",
    "split_spec",
]
