"""Anthropic Messages: `POST {ANTHROPIC_BASE_URL}/v1/messages` with `x-api-key` and `anthropic-version`."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..core import (
    AssistantMessage,
    ConfigError,
    Message,
    ModelResponse,
    ProviderError,
    TextCallback,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from .base import HttpModel, WireRequest, split_system
from .http_client import HttpClient, reply_bounds_from_env, retry_policy_from_env, timeout_from_env
from .registry import default_endpoint
from .wire import fields_for, iter_sse, new_call_id, parse_arguments, tag

__all__ = ["API_VERSION", "DEFAULT_BASE_URL", "AnthropicModel", "anthropic_model"]

DEFAULT_BASE_URL = default_endpoint("anthropic")
API_VERSION = "2023-06-01"
# The API requires a cap on the reply; large enough for a diagnosis or a diff.
DEFAULT_MAX_TOKENS = 4096
_PLAIN_TEXT = frozenset({"type", "text"})
_PLAIN_TOOL_USE = frozenset({"type", "id", "name", "input"})


class AnthropicModel(HttpModel):
    provider = "anthropic"

    def __init__(self, model: str, http: HttpClient, *, max_tokens: int = DEFAULT_MAX_TOKENS) -> None:
        super().__init__(model, http)
        self.max_tokens = max_tokens

    # -- request ------------------------------------------------------------------------------------------
    def _request(self, messages: Sequence[Message], tools: Sequence[ToolSpec], *, stream: bool) -> WireRequest:
        system, rest = split_system(messages)
        body: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens,
                                "messages": _messages(rest, keep_tool_blocks=bool(tools))}
        if system:
            body["system"] = system
        if tools:
            body["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.parameters}
                             for t in tools]
        if stream:
            body["stream"] = True
        return WireRequest("/v1/messages", body)

    # -- reply --------------------------------------------------------------------------------------------
    def _parse(self, data: Mapping[str, Any]) -> ModelResponse:
        if data.get("type") == "error":
            raise ProviderError("the reply was an error", provider=self.provider, body=json.dumps(data))
        return _response(list(data.get("content") or []), data.get("stop_reason"), data.get("usage") or {},
                         data.get("model") or "", data.get("id"))

    def _parse_stream(self, lines: Iterator[str], on_text: TextCallback) -> ModelResponse:
        blocks: dict[int, dict[str, Any]] = {}
        partial_json: dict[int, list[str]] = {}
        usage: dict[str, Any] = {}
        stop_reason: str | None = None
        model = ""
        response_id: str | None = None
        complete = False
        for event in iter_sse(lines):
            data = event.json()
            kind = data.get("type") or event.event
            if kind == "ping":
                continue
            if kind == "error":
                err = data.get("error") or {}
                raise ProviderError("the stream reported an error", provider=self.provider,
                                    status=529 if err.get("type") == "overloaded_error" else None,
                                    body=json.dumps(err))
            if kind == "message_start":
                msg = data.get("message") or {}
                model = msg.get("model") or ""
                response_id = msg.get("id")
                usage.update(msg.get("usage") or {})
            elif kind == "content_block_start":
                block = dict(data["content_block"])
                blocks[data["index"]] = block
                if block.get("type") == "tool_use":
                    partial_json[data["index"]] = []
            elif kind == "content_block_delta":
                _apply_delta(blocks[data["index"]], data["delta"], partial_json.get(data["index"]), on_text)
            elif kind == "content_block_stop":
                idx = data["index"]
                if idx in partial_json:
                    # Kept as the raw string: parsing happens once, where a bad fragment becomes arguments_error.
                    blocks[idx]["input"] = "".join(partial_json.pop(idx))
            elif kind == "message_delta":
                stop_reason = (data.get("delta") or {}).get("stop_reason") or stop_reason
                # output_tokens here is cumulative: it replaces, not adds to, the count from message_start.
                usage.update(data.get("usage") or {})
            elif kind == "message_stop":
                complete = True
                break
        if not complete:
            raise self._truncated()
        return _response([blocks[i] for i in sorted(blocks)], stop_reason, usage, model, response_id)


def _apply_delta(block: dict[str, Any], delta: Mapping[str, Any], json_parts: list[str] | None,
                 on_text: TextCallback) -> None:
    kind = delta.get("type")
    if kind == "text_delta":
        block["text"] = block.get("text", "") + delta["text"]
        on_text(delta["text"])
    elif kind == "input_json_delta" and json_parts is not None:
        json_parts.append(delta.get("partial_json", ""))
    elif kind == "thinking_delta":
        block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
    elif kind == "signature_delta":
        block["signature"] = block.get("signature", "") + delta.get("signature", "")
    elif kind == "citations_delta":
        block.setdefault("citations", []).append(delta.get("citation"))


def _response(blocks: list[dict[str, Any]], stop_reason: str | None, usage: Mapping[str, Any], model: str,
              response_id: str | None) -> ModelResponse:
    text: list[str] = []
    calls: list[ToolCall] = []
    verbatim = False
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            text.append(block.get("text", ""))
            verbatim |= not set(block) <= _PLAIN_TEXT
        elif kind == "tool_use":
            args, error = parse_arguments(block.get("input"))
            calls.append(ToolCall(id=block.get("id") or new_call_id(), name=block.get("name", ""),
                                  arguments=args, arguments_error=error,
                                  provider_data=tag("anthropic", {k: v for k, v in block.items()
                                                                  if k not in _PLAIN_TOOL_USE})))
            if isinstance(block.get("input"), str):
                block["input"] = args  # echo an object, whatever the stream assembled
        else:
            verbatim = True  # thinking, redacted_thinking, server tool blocks: the API wants them back as sent
    # Only turns carrying something we do not model are stored whole, to be echoed exactly as received.
    extra = {"content": blocks} if verbatim else {}
    message = AssistantMessage(content="".join(text), tool_calls=calls, provider_data=tag("anthropic", extra))
    read = int(usage.get("cache_read_input_tokens") or 0)
    write = int(usage.get("cache_creation_input_tokens") or 0)
    return ModelResponse(
        message=message, finish_reason=stop_reason or "end_turn", model=model, response_id=response_id,
        # input_tokens excludes cached tokens here; Usage.input_tokens is the whole prompt for every provider.
        usage=Usage(input_tokens=int(usage.get("input_tokens") or 0) + read + write,
                    output_tokens=int(usage.get("output_tokens") or 0),
                    cache_read_tokens=read, cache_creation_tokens=write),
    )


def _messages(messages: Sequence[Message], *, keep_tool_blocks: bool) -> list[dict[str, Any]]:
    """Wire messages. All results of one assistant turn go into ONE user message, results first (the API pairs
    every tool_result with a tool_use of the turn before). A request without tools (the loop's forced final
    answer) tells past calls and results as text: Bedrock and gateways in front of it refuse tool blocks
    when no tools are defined, and text is accepted everywhere."""
    out: list[dict[str, Any]] = []

    def user_blocks(blocks: list[dict[str, Any]]) -> None:
        if out and out[-1]["role"] == "user":
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": "user", "content": blocks})

    for m in messages:
        if isinstance(m, UserMessage):
            user_blocks([{"type": "text", "text": m.content}])
        elif isinstance(m, ToolResultMessage):
            if keep_tool_blocks:
                block: dict[str, Any] = {"type": "tool_result", "tool_use_id": m.tool_call_id,
                                         "content": m.content}
                if m.is_error:
                    block["is_error"] = True
            else:
                block = {"type": "text", "text": f"[result of {m.name}{' (error)' if m.is_error else ''}]\n"
                                                 f"{m.content}"}
            user_blocks([block])
        elif isinstance(m, AssistantMessage):
            out.append({"role": "assistant", "content": _assistant_blocks(m, keep_tool_blocks)})
    return out


def _assistant_blocks(m: AssistantMessage, keep_tool_blocks: bool) -> list[dict[str, Any]]:
    stored = fields_for("anthropic", m.provider_data).get("content")
    if isinstance(stored, list) and keep_tool_blocks:
        return stored
    blocks: list[dict[str, Any]] = []
    if isinstance(stored, list):
        # Keep what we do not model (e.g. thinking), but tool blocks become text below.
        blocks = [b for b in stored if b.get("type") not in ("text", "tool_use")]
    if m.content:
        blocks.append({"type": "text", "text": m.content})
    for c in m.tool_calls:
        if keep_tool_blocks:
            blocks.append({"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments,
                           **fields_for("anthropic", c.provider_data)})
        else:
            blocks.append({"type": "text", "text": f"[called {c.name} with {json.dumps(c.arguments)}]"})
    # The API rejects an assistant turn with no content at all.
    return blocks or [{"type": "text", "text": "(no text)"}]


def anthropic_model(model: str, environ: Mapping[str, str]) -> AnthropicModel:
    key = environ.get("ANTHROPIC_API_KEY", "")
    if not key:
        raise ConfigError("ANTHROPIC_API_KEY is not set: export your Anthropic API key")
    base = (environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    http = HttpClient("anthropic", base, {"x-api-key": key, "anthropic-version": API_VERSION},
                      retry=retry_policy_from_env(environ), timeout=timeout_from_env(environ),
                      **reply_bounds_from_env(environ),
                      key_var="ANTHROPIC_API_KEY")
    return AnthropicModel(model, http)
