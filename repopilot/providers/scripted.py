"""A model that follows a script, shipped in the library for tests and demos (no network, no keys).

Each reply is taken from a list in order, or computed by a function of the conversation. A reply may be a
`ModelResponse`, an `AssistantMessage`, a string (a final text answer), a dict
`{"content": ..., "tool_calls": [{"name": ..., "arguments": {...}, "id"?: ...}]}`, or an exception to raise.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..core import (
    AssistantMessage,
    Message,
    ModelResponse,
    ProviderError,
    TextCallback,
    ToolCall,
    ToolSpec,
    Usage,
)
from .wire import parse_arguments

__all__ = ["ScriptExhausted", "ScriptedModel"]

Reply = ModelResponse | AssistantMessage | str | dict[str, Any] | BaseException
ReplyFunction = Callable[[Sequence[Message], Sequence[ToolSpec]], Reply]


class ScriptExhausted(ProviderError):
    def __init__(self) -> None:
        super().__init__("the script has no more replies", provider="scripted")


class ScriptedModel:
    provider = "scripted"
    endpoint: str | None = None

    def __init__(self, replies: Iterable[Reply] | ReplyFunction, *, model: str = "script",
                 price_per_mtok: tuple[float, float] | None = None) -> None:
        self.model = model
        self._fn: ReplyFunction | None = replies if callable(replies) else None
        self._replies: list[Reply] = [] if callable(replies) else list(replies)
        self._price = price_per_mtok
        self.calls: list[dict[str, Any]] = []  # what each call received, for assertions in tests

    def chat(self, messages: Sequence[Message], tools: Sequence[ToolSpec], *,
             on_text: TextCallback | None = None, deadline: float | None = None) -> ModelResponse:
        self.calls.append({"messages": list(messages), "tools": [t.name for t in tools]})
        if self._fn is not None:
            reply = self._fn(messages, tools)
        elif self._replies:
            reply = self._replies.pop(0)
        else:
            raise ScriptExhausted()
        if isinstance(reply, BaseException):
            raise reply
        resp = self._normalise(reply, messages)
        if on_text and resp.message.content:
            on_text(resp.message.content)
        return resp

    def _normalise(self, reply: Reply, messages: Sequence[Message]) -> ModelResponse:
        if isinstance(reply, ModelResponse):
            return reply
        if isinstance(reply, str):
            msg = AssistantMessage(content=reply)
        elif isinstance(reply, AssistantMessage):
            msg = reply
        elif isinstance(reply, dict):
            calls = []
            # Ids unique within the conversation, also across a resume in another process: the turn number
            # comes from the conversation, not from this object.
            turn = sum(isinstance(m, AssistantMessage) for m in messages) + 1
            for index, raw in enumerate(reply.get("tool_calls", []), 1):
                # Parsed like a real provider's arguments, so a script can replay what a misbehaving model sends
                # (a string, a list, broken JSON, no name) and the loop answers it with an error result.
                arguments, error = parse_arguments(raw.get("arguments"))
                calls.append(ToolCall(id=raw.get("id") or f"call_{turn}_{index}", name=str(raw.get("name") or ""),
                                      arguments=arguments, arguments_error=raw.get("arguments_error") or error))
            msg = AssistantMessage(content=reply.get("content", ""), tool_calls=calls)
        else:  # pragma: no cover - guarded by the Reply type
            raise TypeError(f"unsupported scripted reply {type(reply).__name__}")
        # Token counts are estimates (4 characters a token), enough for budgets to behave as with real models.
        sent = sum(len(json.dumps(m.model_dump(mode="json"))) for m in messages) // 4
        out = (len(msg.content) + sum(len(json.dumps(c.arguments)) for c in msg.tool_calls)) // 4 + 1
        cost = None
        if self._price is not None:
            cost = (sent * self._price[0] + out * self._price[1]) / 1_000_000
        return ModelResponse(message=msg, finish_reason="tool_calls" if msg.tool_calls else "stop",
                             usage=Usage(input_tokens=sent, output_tokens=out), model=self.model, cost=cost)
