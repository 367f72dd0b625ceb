"""What every HTTP adapter shares: the `Model.chat` contract on top of a request builder and two parsers.

An adapter subclass is pure wire translation: `_request` turns the conversation into the provider's body,
`_parse` turns a JSON reply into a `ModelResponse`, `_parse_stream` does the same from streamed lines. Here:
choosing streaming, retries (through `HttpClient`), cost, and turning a reply we cannot read into a
ProviderError instead of a crash.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core import ModelResponse, ProviderError, TextCallback, ToolSpec
from ..core.messages import Message, SystemMessage
from .http_client import HttpClient
from .prices import cost_of, price_for

__all__ = ["HttpModel", "WireRequest", "split_system"]


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
        self.endpoint: str | None = http.base_url

    def chat(self, messages: Sequence[Message], tools: Sequence[ToolSpec], *,
             on_text: TextCallback | None = None, deadline: float | None = None) -> ModelResponse:
        stream = on_text is not None
        req = self._request(messages, tools, stream=stream)
        if stream:
            assert on_text is not None
            with self.http.stream_lines(req.path, req.body, deadline=deadline, params=req.params or None,
                                        accept=self.stream_accept) as lines:
                resp = self._guarded(lambda: self._parse_stream(lines, on_text), "")
        else:
            data = self.http.post_json(req.path, req.body, deadline=deadline, params=req.params or None)
            resp = self._guarded(lambda: self._parse(data), json.dumps(data)[:300])
        resp.retries = list(self.http.last_retries)
        resp.model = resp.model or self.model
        # The reply's model name is the more exact one (a dated snapshot); fall back to what was asked for.
        priced = resp.model if price_for(self.provider, resp.model) else self.model
        resp.cost = cost_of(self.provider, priced, resp.usage)
        return resp

    def close(self) -> None:
        self.http.close()

    def _guarded(self, parse: Any, raw: str) -> ModelResponse:
        try:
            result: ModelResponse = parse()
        except ProviderError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise ProviderError(f"unexpected reply shape ({type(exc).__name__}: {exc})", provider=self.provider,
                                body=raw) from exc
        return result

    # -- hooks --------------------------------------------------------------------------------------------
    def _request(self, messages: Sequence[Message], tools: Sequence[ToolSpec], *, stream: bool) -> WireRequest:
        raise NotImplementedError

    def _parse(self, data: Mapping[str, Any]) -> ModelResponse:
        raise NotImplementedError

    def _parse_stream(self, lines: Iterator[str], on_text: TextCallback) -> ModelResponse:
        raise NotImplementedError

    def _truncated(self) -> ProviderError:
        return ProviderError("the stream ended before the reply was complete", provider=self.provider)
