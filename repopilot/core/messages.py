"""Provider-neutral conversation types: what the loop sends and what every adapter must return."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = [
    "AssistantMessage",
    "Message",
    "ModelResponse",
    "SystemMessage",
    "ToolCall",
    "ToolResultMessage",
    "ToolSpec",
    "Usage",
    "UserMessage",
]


class ToolCall(BaseModel):
    """One call the model asked for. `arguments` is always a dict; when the provider sent a string that is not
    valid JSON, `arguments` is empty and `arguments_error` says why (the loop turns it into an error result)."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    arguments_error: str | None = None
    # Fields the provider attached to the call that we do not interpret but must send back unchanged.
    provider_data: dict[str, Any] = Field(default_factory=dict)


class SystemMessage(BaseModel):
    role: Literal["system"] = "system"
    content: str


class UserMessage(BaseModel):
    role: Literal["user"] = "user"
    content: str


class AssistantMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    # Provider fields on the assistant turn we do not interpret (e.g. Gemini thought signatures,
    # Anthropic thinking blocks): adapters put them here and read them back when echoing the turn.
    provider_data: dict[str, Any] = Field(default_factory=dict)


class ToolResultMessage(BaseModel):
    role: Literal["tool"] = "tool"
    tool_call_id: str
    name: str
    content: str
    is_error: bool = False


Message = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage


class Usage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_creation_tokens=self.cache_creation_tokens + other.cache_creation_tokens,
        )


class ModelResponse(BaseModel):
    """A normalised reply. The loop decides "the model wants tools" from `tool_calls`, never from
    `finish_reason` alone (Gemini says STOP while asking for tools)."""

    message: AssistantMessage
    finish_reason: str = "stop"
    usage: Usage = Field(default_factory=Usage)
    model: str = ""
    response_id: str | None = None
    # None when no price is known for the model: cost is then "unknown", never a guess.
    cost: float | None = None
    # Retries the adapter made before this reply, as {"attempt", "status", "wait_s", "error"} records.
    retries: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def text(self) -> str:
        return self.message.content

    @property
    def tool_calls(self) -> list[ToolCall]:
        return self.message.tool_calls


class ToolSpec(BaseModel):
    """What a model is told about a tool: a name, a description and a JSON Schema for its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]
