"""The one contract every provider adapter implements."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

from .messages import Message, ModelResponse, ToolSpec

__all__ = ["Model", "TextCallback"]

TextCallback = Callable[[str], None]


@runtime_checkable
class Model(Protocol):
    """A chat model. `provider` and `model` name it in traces (`openai`, `gpt-4o-mini`); `endpoint` is the
    resolved base URL (no credentials) or None for in-process models.

    `chat` sends the whole conversation and the tools (empty: answer in text) and returns one normalised
    reply. When `on_text` is given the adapter may stream and call it with each text fragment. Retries are the
    adapter's business, but it must not start a wait that ends after `deadline` (a `time.monotonic()` value):
    retries count against the run's seconds budget. Failures raise `ProviderError`.
    """

    provider: str
    model: str
    endpoint: str | None

    def chat(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        on_text: TextCallback | None = None,
        deadline: float | None = None,
    ) -> ModelResponse: ...
