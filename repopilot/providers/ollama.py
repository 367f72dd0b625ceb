"""Ollama's native API: `POST {OLLAMA_HOST}/api/chat`, `"stream": false` unless streaming (NDJSON then).
No key. For Ollama's OpenAI-compatible /v1, use the openai provider with OPENAI_BASE_URL instead."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..core import (
    AssistantMessage,
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
from .wire import fields_for, iter_ndjson, new_call_id, parse_arguments, tag

__all__ = ["DEFAULT_HOST", "OllamaModel", "ollama_model"]

DEFAULT_HOST = default_endpoint("ollama")
_KNOWN_MESSAGE_KEYS = frozenset({"role", "content", "tool_calls"})
_KNOWN_CALL_KEYS = frozenset({"id", "function"})


class OllamaModel(HttpModel):
    provider = "ollama"
    stream_accept = "application/x-ndjson"

    def _request(self, messages: Sequence[Message], tools: Sequence[ToolSpec], *, stream: bool) -> WireRequest:
        body: dict[str, Any] = {"model": self.model, "messages": [_message(m) for m in messages],
                                "stream": stream}
        if tools:
            body["tools"] = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                               "parameters": t.parameters}} for t in tools]
        return WireRequest("/api/chat", body)

    def _parse(self, data: Mapping[str, Any]) -> ModelResponse:
        if "error" in data:
            raise ProviderError("the reply was an error", provider=self.provider, body=str(data["error"]))
        raw = data.get("message") or {}
        return _response(raw.get("content") or "", list(raw.get("tool_calls") or []), _extra(raw), data)

    def _parse_stream(self, lines: Iterator[str], on_text: TextCallback) -> ModelResponse:
        text: list[str] = []
        calls: list[dict[str, Any]] = []
        extra: dict[str, Any] = {}
        for chunk in iter_ndjson(lines):
            if "error" in chunk:
                raise ProviderError("the stream reported an error", provider=self.provider,
                                    body=str(chunk["error"]))
            raw = chunk.get("message") or {}
            if raw.get("content"):
                text.append(raw["content"])
                on_text(raw["content"])
            calls.extend(raw.get("tool_calls") or [])  # whole calls, never fragments
            for key, value in _extra(raw).items():
                extra[key] = extra.get(key, "") + value if isinstance(value, str) else value
            if chunk.get("done"):
                return _response("".join(text), calls, extra, chunk)
        raise self._truncated()


def _extra(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Message fields we do not interpret (e.g. `thinking`), to send back unchanged."""
    return {k: v for k, v in raw.items() if k not in _KNOWN_MESSAGE_KEYS and v not in (None, "", [], {})}


def _response(content: str, raw_calls: list[dict[str, Any]], extra: dict[str, Any],
              final: Mapping[str, Any]) -> ModelResponse:
    calls = []
    for raw in raw_calls:
        fn = raw.get("function") or {}
        args, error = parse_arguments(fn.get("arguments"))
        calls.append(ToolCall(id=raw.get("id") or new_call_id(), name=fn.get("name", ""), arguments=args,
                              arguments_error=error,
                              provider_data=tag("ollama", {k: v for k, v in raw.items()
                                                           if k not in _KNOWN_CALL_KEYS})))
    return ModelResponse(
        message=AssistantMessage(content=content, tool_calls=calls, provider_data=tag("ollama", extra)),
        finish_reason=final.get("done_reason") or "stop", model=final.get("model") or "",
        usage=Usage(input_tokens=int(final.get("prompt_eval_count") or 0),
                    output_tokens=int(final.get("eval_count") or 0)),
    )


def _message(m: Message) -> dict[str, Any]:
    if isinstance(m, SystemMessage | UserMessage):
        return {"role": m.role, "content": m.content}
    if isinstance(m, ToolResultMessage):
        return {"role": "tool", "content": m.content, "tool_name": m.name}
    out: dict[str, Any] = {"role": "assistant", "content": m.content, **fields_for("ollama", m.provider_data)}
    if m.tool_calls:
        out["tool_calls"] = [{"function": {"name": c.name, "arguments": c.arguments},
                              **fields_for("ollama", c.provider_data)} for c in m.tool_calls]
    return out


def ollama_model(model: str, environ: Mapping[str, str]) -> OllamaModel:
    host = (environ.get("OLLAMA_HOST") or DEFAULT_HOST).strip().rstrip("/")
    if "://" not in host:
        # OLLAMA_HOST is often written as host:port, as the ollama CLI accepts it.
        host = "http://" + (host if ":" in host else host + ":11434")
    http = HttpClient("ollama", host, {}, retry=retry_policy_from_env(environ), timeout=timeout_from_env(environ),
                      **reply_bounds_from_env(environ))
    return OllamaModel(model, http)
