"""What every HTTP adapter shares: the `Model.chat` contract on top of a request builder and two parsers.

An adapter subclass is pure wire translation: `_request` turns the conversation into the provider's body,
`_parse` turns a JSON reply into a `ModelResponse`, `_parse_stream` does the same from streamed lines. Here:
choosing streaming, retries (through `HttpClient`), cost, and turning a reply we cannot read into a
ProviderError instead of a crash.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core import Message, ModelResponse, ProviderError, SystemMessage, TextCallback, ToolSpec
from .http_client import HttpClient, safe_url
from .prices import cost_of, price_for

__all__ = ["HttpModel", "StreamTruncated", "WireRequest", "split_system"]


class StreamTruncated(ProviderError):
    """A stream that ended before its final event."""


@dataclass
class WireRequest:
    path: str
    body: dict[str, Any]
    params: dict[str, str] = field(default_factory=dict)


def split_system(messages: Sequence[Message]) -> tuple[str, list[Message]]:
    """The system prompt (all system messages joined) and the rest, for APIs that take it apart."""
    system = "\n\n".join(m.content for m in messages if isinstance(m, SystemMessage))
    return system, [m for m in messages if not isinstance(m, SystemMessage)]


class HttpModel:
    """Base of the HTTP adapters. Subclasses set `provider` and implement the three hooks."""

    provider: str = ""
    stream_accept = "text/event-stream"

    def __init__(self, model: str, http: HttpClient) -> None:
        self.model = model
        self.http = http
        # Named in traces and `repopilot models`: never with a user:password part.
        self.endpoint: str | None = safe_url(http.base_url)

    def chat(self, messages: Sequence[Message], tools: Sequence[ToolSpec], *,
             on_text: TextCallback | None = None, deadline: float | None = None) -> ModelResponse:
        resp: ModelResponse | None = None
        retries: list[dict[str, Any]] = []
        if on_text is not None:
            shown: list[str] = []

            def show(fragment: str) -> None:
                shown.append(fragment)
                on_text(fragment)

            try:
                resp = self._stream(messages, tools, show, deadline)
            except StreamTruncated:
                if shown:
                    raise  # part of the answer is on the screen: a half answer must not pass as a whole one
                # Some servers cannot stream every request (llama.cpp refuses to stream with tools) and end the
                # stream at once; nothing was shown, so asking again without streaming loses nothing.
                retries = [*self.http.last_retries, {"attempt": len(self.http.last_retries) + 1, "status": None,
                                                     "wait_s": 0.0, "error": "empty stream; asked again without "
                                                                             "streaming"}]
        if resp is None:
            req = self._request(messages, tools, stream=False)
            data = self.http.post_json(req.path, req.body, deadline=deadline, params=req.params or None)
            resp = self._guarded(lambda: self._parse(data), json.dumps(data)[:300])
            if resp.text and on_text is not None:
                on_text(resp.text)
        resp.retries = retries + list(self.http.last_retries)
        resp.model = resp.model or self.model
        # The reply's model name is the more exact one (a dated snapshot); fall back to what was asked for.
        priced = resp.model if price_for(self.provider, resp.model) else self.model
        resp.cost = cost_of(self.provider, priced, resp.usage)
        return resp

    def _stream(self, messages: Sequence[Message], tools: Sequence[ToolSpec], on_text: TextCallback,
                deadline: float | None) -> ModelResponse:
        req = self._request(messages, tools, stream=True)
        with self.http.stream_lines(req.path, req.body, deadline=deadline, params=req.params or None,
                                    accept=self.stream_accept) as lines:
            return self._guarded(lambda: self._parse_stream(lines, on_text), "")

    def close(self) -> None:
        self.http.close()

    def _guarded(self, parse: Callable[[], ModelResponse], raw: str) -> ModelResponse:
        """`parse()`, with a reply we cannot read (a missing field, a wrong type) turned into a ProviderError."""
        try:
            return parse()
        except ProviderError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise ProviderError(f"unexpected reply shape ({type(exc).__name__}: {exc})", provider=self.provider,
                                body=raw) from exc

    # -- hooks --------------------------------------------------------------------------------------------
    def _request(self, messages: Sequence[Message], tools: Sequence[ToolSpec], *, stream: bool) -> WireRequest:
        raise NotImplementedError

    def _parse(self, data: Mapping[str, Any]) -> ModelResponse:
        raise NotImplementedError

    def _parse_stream(self, lines: Iterator[str], on_text: TextCallback) -> ModelResponse:
        raise NotImplementedError

    def _truncated(self) -> StreamTruncated:
        return StreamTruncated("the stream ended before the reply was complete", provider=self.provider)
