"""Small pieces every wire translation needs: tool-call ids, argument normalisation, stream framing."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "SYNTHETIC_ID_PREFIX",
    "SseEvent",
    "fields_for",
    "is_synthetic_id",
    "iter_ndjson",
    "iter_sse",
    "new_call_id",
    "parse_arguments",
    "tag",
]

# Ids we make up for providers that send none start with this, so the adapter knows not to send them back as
# if the provider had issued them (Gemini pairs a functionResponse with its call by an id only if it gave one).
SYNTHETIC_ID_PREFIX = "rp_call_"


def new_call_id() -> str:
    """A tool-call id unique per call (never derived from the tool name: parallel calls of one tool collide)."""
    return SYNTHETIC_ID_PREFIX + uuid.uuid4().hex[:24]


def is_synthetic_id(call_id: str) -> bool:
    return call_id.startswith(SYNTHETIC_ID_PREFIX)


def tag(provider: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """`fields` filed under the provider's name for `provider_data`: a conversation resumed with another
    provider then never sends them to an API that does not know them."""
    return {provider: dict(fields)} if fields else {}


def fields_for(provider: str, provider_data: Mapping[str, Any]) -> dict[str, Any]:
    """The fields `tag` filed for `provider`, or none."""
    value = provider_data.get(provider)
    return dict(value) if isinstance(value, dict) else {}


def parse_arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    """Arguments as a dict, or ({}, why) when they cannot be one. Providers send an object, a JSON string, an
    empty string (no arguments) or, from some servers, a JSON string of a JSON string."""
    if raw is None:
        return {}, None
    if isinstance(raw, dict):
        return raw, None
    if isinstance(raw, str):
        if not raw.strip():
            return {}, None
        try:
            # strict=False accepts raw newlines and tabs inside strings, which models emit in code arguments.
            value = json.loads(raw, strict=False)
        except json.JSONDecodeError as exc:
            return {}, f"{exc.msg} at character {exc.pos}"
        if isinstance(value, str):  # double-encoded
            return parse_arguments(value)
        raw = value
    if isinstance(raw, dict):
        return raw, None
    return {}, f"expected a JSON object, got {type(raw).__name__}"


@dataclass
class SseEvent:
    event: str
    data: str

    def json(self) -> Any:
        return json.loads(self.data)


def iter_sse(lines: Iterable[str]) -> Iterator[SseEvent]:
    """Server-sent events from a stream's lines: `event:` and `data:` fields, dispatched at a blank line.
    Comments (`:`) and unknown fields are skipped. A last event without its blank line is still dispatched:
    whether the reply was complete is decided by the adapter from the events, not from the framing."""
    event = ""
    data: list[str] = []
    for line in lines:
        if not line:
            if data:
                yield SseEvent(event or "message", "\n".join(data))
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
    if data:
        yield SseEvent(event or "message", "\n".join(data))


def iter_ndjson(lines: Iterable[str]) -> Iterator[Any]:
    """One JSON value per non-empty line (Ollama's streaming format)."""
    for line in lines:
        if line.strip():
            yield json.loads(line)
