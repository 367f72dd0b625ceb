"""Google Gemini: `POST {GEMINI_BASE_URL}/v1beta/models/{model}:generateContent` with `x-goog-api-key`.
Streaming uses `:streamGenerateContent?alt=sse`, whose events are partial generateContent replies."""

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
from .wire import fields_for, is_synthetic_id, iter_sse, new_call_id, parse_arguments, tag

__all__ = ["DEFAULT_BASE_URL", "GeminiModel", "gemini_model", "gemini_schema"]

DEFAULT_BASE_URL = default_endpoint("gemini")
_PLAIN_PART_KEYS = (frozenset({"text"}), frozenset({"functionCall"}))
# JSON Schema keywords the `parameters` field (an OpenAPI subset) accepts.
_SCHEMA_KEYS = frozenset({"type", "format", "description", "nullable", "enum", "items", "properties", "required",
                          "minItems", "maxItems", "minimum", "maximum", "minLength", "maxLength", "pattern",
                          "anyOf", "default", "propertyOrdering", "minProperties", "maxProperties", "title"})


class GeminiModel(HttpModel):
    provider = "gemini"

    # -- request ------------------------------------------------------------------------------------------
    def _request(self, messages: Sequence[Message], tools: Sequence[ToolSpec], *, stream: bool) -> WireRequest:
        system, rest = split_system(messages)
        body: dict[str, Any] = {"contents": _contents(rest)}
        if system:
            body["systemInstruction"] = {"parts": [{"text": system}]}
        if tools:
            body["tools"] = [{"functionDeclarations": [
                {"name": t.name, "description": t.description, "parameters": gemini_schema(t.parameters)}
                for t in tools]}]
        model = self.model.removeprefix("models/")
        if stream:
            return WireRequest(f"/v1beta/models/{model}:streamGenerateContent", body, {"alt": "sse"})
        return WireRequest(f"/v1beta/models/{model}:generateContent", body)

    # -- reply --------------------------------------------------------------------------------------------
    def _parse(self, data: Mapping[str, Any]) -> ModelResponse:
        candidate = self._candidate(data)
        parts = list((candidate.get("content") or {}).get("parts") or [])
        return _response(parts, candidate.get("finishReason"), data)

    def _parse_stream(self, lines: Iterator[str], on_text: TextCallback) -> ModelResponse:
        parts: list[dict[str, Any]] = []
        finish: str | None = None
        last: Mapping[str, Any] = {}
        for event in iter_sse(lines):
            chunk = event.json()
            if "error" in chunk:
                raise ProviderError("the stream reported an error", provider=self.provider,
                                    body=json.dumps(chunk["error"]))
            last = {**last, **chunk}
            candidate = self._candidate(chunk)
            for part in (candidate.get("content") or {}).get("parts") or []:
                if set(part) == {"text"} and parts and set(parts[-1]) == {"text"}:
                    parts[-1] = {"text": parts[-1]["text"] + part["text"]}
                else:
                    parts.append(dict(part))
                if part.get("text") and not part.get("thought"):
                    on_text(part["text"])
            finish = candidate.get("finishReason") or finish
        if finish is None:
            raise self._truncated()
        return _response(parts, finish, last)

    def _candidate(self, data: Mapping[str, Any]) -> Mapping[str, Any]:
        candidates = data.get("candidates") or []
        if candidates:
            first: Mapping[str, Any] = candidates[0]
            return first
        blocked = (data.get("promptFeedback") or {}).get("blockReason")
        if blocked:
            raise ProviderError(f"the prompt was blocked ({blocked})", provider=self.provider)
        if "usageMetadata" in data:
            return {}  # a stream's last chunk may carry only usage
        raise ProviderError("the reply has no candidates", provider=self.provider, body=json.dumps(data))


def _response(parts: list[dict[str, Any]], finish: str | None, data: Mapping[str, Any]) -> ModelResponse:
    text: list[str] = []
    calls: list[ToolCall] = []
    for part in parts:
        if "functionCall" in part:
            fc = part["functionCall"]
            args, error = parse_arguments(fc.get("args"))
            calls.append(ToolCall(id=fc.get("id") or new_call_id(), name=fc.get("name", ""), arguments=args,
                                  arguments_error=error,
                                  provider_data=tag("gemini", {k: v for k, v in part.items()
                                                               if k != "functionCall"})))
        elif "text" in part and not part.get("thought"):
            text.append(part["text"])
    # Parts with fields we do not model (thoughtSignature, thought summaries) make the turn one to echo
    # exactly as received: Gemini refuses a follow-up whose function-call turn lost its signature.
    verbatim = any(frozenset(p) not in _PLAIN_PART_KEYS for p in parts)
    message = AssistantMessage(content="".join(text), tool_calls=calls,
                               provider_data=tag("gemini", {"parts": parts} if verbatim else {}))
    meta = data.get("usageMetadata") or {}
    return ModelResponse(
        message=message, finish_reason=finish or "STOP", model=data.get("modelVersion") or "",
        response_id=data.get("responseId"),
        # Thinking tokens are billed as output.
        usage=Usage(input_tokens=int(meta.get("promptTokenCount") or 0),
                    output_tokens=int(meta.get("candidatesTokenCount") or 0)
                    + int(meta.get("thoughtsTokenCount") or 0),
                    cache_read_tokens=int(meta.get("cachedContentTokenCount") or 0)),
    )


def _contents(messages: Sequence[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def user_parts(parts: list[dict[str, Any]]) -> None:
        if out and out[-1]["role"] == "user":
            out[-1]["parts"].extend(parts)
        else:
            out.append({"role": "user", "parts": parts})

    for m in messages:
        if isinstance(m, UserMessage):
            user_parts([{"text": m.content}])
        elif isinstance(m, ToolResultMessage):
            response: dict[str, Any] = {"name": m.name,
                                        "response": {"error" if m.is_error else "result": m.content}}
            if not is_synthetic_id(m.tool_call_id):
                response["id"] = m.tool_call_id
            user_parts([{"functionResponse": response}])
        elif isinstance(m, AssistantMessage):
            out.append({"role": "model", "parts": _model_parts(m)})
    return out


def _model_parts(m: AssistantMessage) -> list[dict[str, Any]]:
    stored = fields_for("gemini", m.provider_data).get("parts")
    if isinstance(stored, list) and stored:
        return stored
    parts: list[dict[str, Any]] = [{"text": m.content}] if m.content else []
    for c in m.tool_calls:
        call: dict[str, Any] = {"name": c.name, "args": c.arguments}
        if not is_synthetic_id(c.id):
            call["id"] = c.id
        parts.append({"functionCall": call, **fields_for("gemini", c.provider_data)})
    return parts or [{"text": ""}]


def gemini_schema(schema: Any) -> Any:
    """A JSON Schema narrowed to what Gemini's `parameters` accepts: `anyOf [X, null]` becomes X with
    `nullable`, and keywords it rejects (additionalProperties, $schema, $defs…) are dropped."""
    if isinstance(schema, list):
        return [gemini_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    options = schema.get("anyOf")
    if isinstance(options, list):
        non_null = [o for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
        if len(non_null) == 1 and len(non_null) < len(options):
            merged = {**{k: v for k, v in schema.items() if k != "anyOf"}, **non_null[0], "nullable": True}
            return gemini_schema(merged)
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key not in _SCHEMA_KEYS:
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: gemini_schema(sub) for name, sub in value.items()}
        elif key in ("items", "anyOf"):
            out[key] = gemini_schema(value)
        elif key == "default" and value is None:
            continue
        else:
            out[key] = value
    return out


def gemini_model(model: str, environ: Mapping[str, str]) -> GeminiModel:
    key = environ.get("GEMINI_API_KEY", "")
    if not key:
        raise ConfigError("GEMINI_API_KEY is not set: export your Gemini API key")
    base = (environ.get("GEMINI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    http = HttpClient("gemini", base, {"x-goog-api-key": key}, retry=retry_policy_from_env(environ),
                      timeout=timeout_from_env(environ),
                      **reply_bounds_from_env(environ), key_var="GEMINI_API_KEY")
    return GeminiModel(model, http)
