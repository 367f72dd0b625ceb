"""OpenAI Chat Completions, and every server that speaks it (vLLM, llama.cpp's server, LM Studio, Ollama /v1):
`POST {OPENAI_BASE_URL}/chat/completions` with `Authorization: Bearer OPENAI_API_KEY`."""

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
    SystemMessage,
    TextCallback,
    ToolCall,
    ToolResultMessage,
    ToolSpec,
    Usage,
    UserMessage,
)
from .base import HttpModel, WireRequest
from .http_client import HttpClient, reply_bounds_from_env, retry_policy_from_env, timeout_from_env
from .registry import default_endpoint
from .wire import fields_for, iter_sse, new_call_id, parse_arguments, tag

__all__ = ["DEFAULT_BASE_URL", "OpenAIModel", "openai_model"]

DEFAULT_BASE_URL = default_endpoint("openai")
_KNOWN_MESSAGE_KEYS = frozenset({"role", "content", "tool_calls", "function_call"})
# Reply-only fields the API does not accept back on an input message.
_REPLY_ONLY = frozenset({"annotations", "refusal", "audio"})
_KNOWN_CALL_KEYS = frozenset({"id", "type", "function", "index"})


class OpenAIModel(HttpModel):
    provider = "openai"

    # -- request ------------------------------------------------------------------------------------------
    def _request(self, messages: Sequence[Message], tools: Sequence[ToolSpec], *, stream: bool) -> WireRequest:
        body: dict[str, Any] = {"model": self.model, "messages": [_message(m) for m in messages]}
        if tools:
            body["tools"] = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                               "parameters": t.parameters}} for t in tools]
            # OpenAI defaults to "auto" when tools are given, but llama.cpp's server treats a missing
            # tool_choice as "none" and never calls a tool; saying it is harmless everywhere else.
            body["tool_choice"] = "auto"
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return WireRequest("/chat/completions", body)

    # -- reply --------------------------------------------------------------------------------------------
    def _parse(self, data: Mapping[str, Any]) -> ModelResponse:
        choices = data.get("choices") or []
        if not choices:
            raise ProviderError("the reply has no choices", provider=self.provider, body=json.dumps(data))
        choice = choices[0]
        raw = choice.get("message") or {}
        calls = [_tool_call(c) for c in raw.get("tool_calls") or []]
        extra = {k: v for k, v in raw.items()
                 if k not in _KNOWN_MESSAGE_KEYS and k not in _REPLY_ONLY and v not in (None, "", [], {})}
        message = AssistantMessage(content=raw.get("content") or "", tool_calls=calls,
                                   provider_data=tag(self.provider, extra))
        return ModelResponse(message=message, finish_reason=choice.get("finish_reason") or "stop",
                             usage=_usage(data.get("usage")), model=data.get("model") or "",
                             response_id=data.get("id"))

    def _parse_stream(self, lines: Iterator[str], on_text: TextCallback) -> ModelResponse:
        text: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        extra: dict[str, Any] = {}
        finish: str | None = None
        usage: Mapping[str, Any] | None = None
        model = ""
        response_id: str | None = None
        done = False
        for event in iter_sse(lines):
            if event.data.strip() == "[DONE]":
                done = True
                break
            chunk = event.json()
            if "error" in chunk:
                raise ProviderError("the stream reported an error", provider=self.provider,
                                    body=json.dumps(chunk["error"]))
            model = chunk.get("model") or model
            response_id = chunk.get("id") or response_id
            usage = chunk.get("usage") or usage
            for choice in chunk.get("choices") or []:
                delta = choice.get("delta") or {}
                if delta.get("content"):
                    text.append(delta["content"])
                    on_text(delta["content"])
                for key, value in delta.items():
                    if key not in _KNOWN_MESSAGE_KEYS and key not in _REPLY_ONLY and isinstance(value, str):
                        extra[key] = extra.get(key, "") + value  # e.g. reasoning_content, streamed in pieces
                # `id` and `name` come once per index, then argument fragments; parallel calls interleave.
                for frag in delta.get("tool_calls") or []:
                    slot = calls.setdefault(frag.get("index", len(calls)), {"id": None, "name": "", "args": "",
                                                                             "extra": {}})
                    slot["id"] = frag.get("id") or slot["id"]
                    fn = frag.get("function") or {}
                    slot["name"] += fn.get("name") or ""
                    slot["args"] += fn.get("arguments") or ""
                    slot["extra"].update({k: v for k, v in frag.items() if k not in _KNOWN_CALL_KEYS})
                finish = choice.get("finish_reason") or finish
        if not done and finish is None:
            raise self._truncated()
        tool_calls = []
        for _, slot in sorted(calls.items()):
            args, error = parse_arguments(slot["args"])
            tool_calls.append(ToolCall(id=slot["id"] or new_call_id(), name=slot["name"], arguments=args,
                                       arguments_error=error, provider_data=tag(self.provider, slot["extra"])))
        message = AssistantMessage(content="".join(text), tool_calls=tool_calls,
                                   provider_data=tag(self.provider, extra))
        return ModelResponse(message=message, finish_reason=finish or "stop", usage=_usage(usage), model=model,
                             response_id=response_id)


def _message(m: Message) -> dict[str, Any]:
    if isinstance(m, SystemMessage | UserMessage):
        return {"role": m.role, "content": m.content}
    if isinstance(m, ToolResultMessage):
        return {"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content}
    # Some compatible servers refuse `content: null` next to tool calls; "" is accepted everywhere.
    out: dict[str, Any] = {"role": "assistant", "content": m.content, **fields_for("openai", m.provider_data)}
    if m.tool_calls:
        out["tool_calls"] = [{"id": c.id, "type": "function",
                              "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                              **fields_for("openai", c.provider_data)} for c in m.tool_calls]
    return out


def _tool_call(raw: Mapping[str, Any]) -> ToolCall:
    fn = raw.get("function") or {}
    args, error = parse_arguments(fn.get("arguments"))
    return ToolCall(id=raw.get("id") or new_call_id(), name=fn.get("name") or "", arguments=args,
                    arguments_error=error,
                    provider_data=tag("openai", {k: v for k, v in raw.items() if k not in _KNOWN_CALL_KEYS}))


def _usage(raw: Mapping[str, Any] | None) -> Usage:
    if not raw:
        return Usage()
    details = raw.get("prompt_tokens_details") or {}
    return Usage(input_tokens=raw.get("prompt_tokens") or 0, output_tokens=raw.get("completion_tokens") or 0,
                 cache_read_tokens=details.get("cached_tokens") or 0)


def openai_model(model: str, environ: Mapping[str, str]) -> OpenAIModel:
    base = (environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    key = environ.get("OPENAI_API_KEY", "")
    # Local compatible servers (llama.cpp, vLLM, Ollama /v1) usually need no key; the public API always does.
    if not key and base == DEFAULT_BASE_URL:
        raise ConfigError("OPENAI_API_KEY is not set: export your OpenAI API key (or set OPENAI_BASE_URL "
                          "to an OpenAI-compatible server)")
    headers = {"authorization": f"Bearer {key}"} if key else {}
    http = HttpClient("openai", base, headers, retry=retry_policy_from_env(environ),
                      timeout=timeout_from_env(environ),
                      **reply_bounds_from_env(environ), key_var="OPENAI_API_KEY")
    return OpenAIModel(model, http)
