"""The one HTTP client every adapter talks through: timeouts, headers, retries and error mapping.

Retries follow what the official SDKs do: 408/409/429/5xx/529 and connection errors are retried with jittered
exponential backoff, the server's `retry-after-ms` / `retry-after` wins when present, a wait longer than
`max_retry_after` is not honoured (the call fails instead), and no wait is started that would end after the
run's deadline, so retries count against the seconds budget. Every retry is recorded for the trace.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

import httpx

from .. import __version__
from ..core import ConfigError, ProviderError, redact_text

__all__ = [
    "RETRYABLE_STATUS",
    "HttpClient",
    "RetryPolicy",
    "parse_retry_after",
    "safe_url",
    "timeout_from_env",
]

_EXHAUSTED = "retries exhausted"
RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
_BODY_CHARS = 300


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 2
    initial_wait: float = 0.5
    max_wait: float = 8.0
    # A server asking for a longer pause than this is treated as a failure, not waited for.
    max_retry_after: float = 120.0

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> RetryPolicy:
        raw = environ.get("REPOPILOT_MAX_RETRIES", "").strip()
        if not raw:
            return cls()
        if not raw.isdigit():
            raise ConfigError(f"REPOPILOT_MAX_RETRIES={raw!r} is not a whole number of retries")
        return cls(max_retries=int(raw))

    def backoff(self, retry_number: int) -> float:
        """The pause before retry `retry_number` (1-based) when the server did not say: 0.5, 1, 2 … capped,
        minus up to 25 % jitter so clients that failed together do not retry together."""
        base = min(self.max_wait, self.initial_wait * 2.0 ** (retry_number - 1))
        return base * (1 - 0.25 * random.random())  # noqa: S311 - jitter, not cryptography


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds the server asked us to wait: `retry-after-ms`, then `retry-after` (seconds or an HTTP date)."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    current = datetime.now(UTC).timestamp() if now is None else now
    return max(0.0, when.timestamp() - current)


class _Retryable(Exception):
    """A failure worth another attempt; becomes a ProviderError when the policy gives up."""

    def __init__(self, message: str, *, status: int | None, body: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.body = body
        self.retry_after = retry_after


@dataclass
class HttpClient:
    """An httpx client bound to one provider's base URL and headers. `retries` of the last call are kept in
    `last_retries` so the adapter can put them on its `ModelResponse`."""

    provider: str
    base_url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    timeout: httpx.Timeout = field(default_factory=lambda: timeout_from_env({}))
    # The environment variable holding the key, named in 401/403 errors so the user knows what to fix.
    key_var: str | None = None
    sleep: Callable[[float], None] = time.sleep
    last_retries: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        _check_endpoint(self.provider, self.base_url)
        self._client = httpx.Client(
            base_url=self.base_url.rstrip("/"),
            headers={"user-agent": f"repopilot/{__version__}", "content-type": "application/json",
                     **self.headers},
            timeout=self.timeout,
            follow_redirects=True,
        )

    def close(self) -> None:
        self._client.close()

    # -- requests -----------------------------------------------------------------------------------------
    def post_json(self, path: str, body: Mapping[str, Any], *, deadline: float | None = None,
                  params: Mapping[str, str] | None = None) -> dict[str, Any]:
        """POST `body`, return the decoded JSON object, retrying as the policy says."""

        def attempt() -> dict[str, Any]:
            try:
                response = self._client.post(path, json=body, params=params)
            except httpx.HTTPError as exc:
                raise self._connection_error(exc) from exc
            self._check(response, response.text)
            return self._decode(response.text)

        result: dict[str, Any] = self._with_retries(attempt, deadline)
        return result

    @contextmanager
    def stream_lines(self, path: str, body: Mapping[str, Any], *, deadline: float | None = None,
                     params: Mapping[str, str] | None = None,
                     accept: str = "text/event-stream") -> Iterator[Iterator[str]]:
        """POST `body` and yield the response's lines as they arrive. Failures before the first byte are
        retried; once the stream has started it is never retried (text may already be on the screen), and a
        connection that drops mid-stream is a ProviderError."""
        def attempt() -> httpx.Response:
            request = self._client.build_request("POST", path, json=body, params=params,
                                                 headers={"accept": accept})
            try:
                response = self._client.send(request, stream=True)
            except httpx.HTTPError as exc:
                raise self._connection_error(exc) from exc
            if response.status_code >= 400:
                try:
                    text = response.read().decode("utf-8", "replace")
                except httpx.HTTPError:
                    text = ""
                finally:
                    response.close()
                self._check(response, text)
            return response

        response: httpx.Response = self._with_retries(attempt, deadline)
        try:
            yield self._lines(response)
        finally:
            response.close()

    # -- internals ----------------------------------------------------------------------------------------
    def _lines(self, response: httpx.Response) -> Iterator[str]:
        try:
            yield from response.iter_lines()
        except httpx.HTTPError as exc:
            raise ProviderError(f"the stream broke off before the reply was complete ({type(exc).__name__})",
                                provider=self.provider) from exc

    def _with_retries(self, attempt: Callable[[], Any], deadline: float | None) -> Any:
        # tenacity's Retrying decides "stop" before computing the wait in the 8.x versions pyproject allows,
        # so it cannot veto a wait that would overrun the deadline; this loop is the whole policy, explicitly.
        self.last_retries = []
        retry_number = 0
        while True:
            try:
                return attempt()
            except _Retryable as exc:
                retry_number += 1
                wait = exc.retry_after if exc.retry_after is not None else self.retry.backoff(retry_number)
                reason = self._give_up_reason(retry_number, wait, deadline)
                if reason is not None:
                    made = retry_number - 1
                    note = f" after {made} retr{'y' if made == 1 else 'ies'}" if made else ""
                    if reason != _EXHAUSTED:
                        note += f" ({reason})"
                    raise ProviderError(exc.message + note, provider=self.provider, status=exc.status,
                                        body=exc.body) from exc
                self.last_retries.append({"attempt": retry_number, "status": exc.status,
                                          "wait_s": round(wait, 3),
                                          "error": f"HTTP {exc.status}" if exc.status else exc.body})
                self.sleep(wait)

    def _give_up_reason(self, retry_number: int, wait: float, deadline: float | None) -> str | None:
        if retry_number > self.retry.max_retries:
            return _EXHAUSTED
        if wait > self.retry.max_retry_after:
            return f"the server asked to wait {wait:.0f}s, over the {self.retry.max_retry_after:.0f}s cap"
        if deadline is not None and time.monotonic() + wait > deadline:
            return "the run's time budget ends before a retry could start"
        return None

    def _connection_error(self, exc: httpx.HTTPError) -> _Retryable:
        kind = "timed out" if isinstance(exc, httpx.TimeoutException) else "connection failed"
        return _Retryable(f"{kind} talking to {safe_url(self.base_url)}", status=None, body=type(exc).__name__)

    def _check(self, response: httpx.Response, text: str) -> None:
        status = response.status_code
        if status < 400:
            return
        body = _short_body(text)
        should = response.headers.get("x-should-retry", "").lower()
        retryable = should == "true" or (status in RETRYABLE_STATUS and should != "false")
        if status in (401, 403) and self.key_var:
            message = f"the request was refused; check {self.key_var}"
        elif status == 404:
            message = "not found; check the model name and the endpoint"
        else:
            message = "the request failed"
        if retryable:
            raise _Retryable(message, status=status, body=body, retry_after=parse_retry_after(response.headers))
        raise ProviderError(message, provider=self.provider, status=status, body=body)

    def _decode(self, text: str) -> dict[str, Any]:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ProviderError("the reply was not JSON", provider=self.provider, body=text) from exc
        if not isinstance(data, dict):
            raise ProviderError("the reply was not a JSON object", provider=self.provider, body=text)
        return data


def _short_body(text: str) -> str:
    """The provider's error message when the body is JSON (`error.message`, `error`), else its start."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return redact_text(text.strip())[:_BODY_CHARS]
    if isinstance(data, list) and data:
        data = data[0]  # Gemini sometimes wraps the error in a list
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            kind = error.get("type") or error.get("status") or ""
            return redact_text(f"{kind}: {error['message']}" if kind else error["message"])[:_BODY_CHARS]
        if isinstance(error, str):
            return redact_text(error)[:_BODY_CHARS]
    return redact_text(text.strip())[:_BODY_CHARS]


def _check_endpoint(provider: str, url: str) -> None:
    """A malformed endpoint is a setting to fix (exit 2), not a connection to retry and then fail (exit 4)."""
    try:
        parts = urlsplit(url)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname) and not any(c.isspace() for c in url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:  # e.g. an unclosed [ in the host
        ok = False
    if not ok:
        raise ConfigError(f"{provider}: the endpoint {_without_userinfo(url)!r} is not an http:// or https:// URL; "
                          "fix the provider's endpoint variable (`repopilot models` lists them)")


def safe_url(url: str) -> str:
    """`url` without any user:password part, for messages and `repopilot models`."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:  # shown anyway (`repopilot models` lists bad settings), minus what may be a password
        return _without_userinfo(url)
    return str(parsed.copy_with(username=None, password=None)) if parsed.userinfo else url


def _without_userinfo(url: str) -> str:
    return re.sub(r"//[^/]*@", "//", url)


def timeout_from_env(environ: Mapping[str, str]) -> httpx.Timeout:
    """Timeouts for model calls; `REPOPILOT_HTTP_TIMEOUT` sets the read timeout in seconds."""
    # Long generations are slow to start; a read timeout measures silence, not total time.
    read = 300.0
    raw = environ.get("REPOPILOT_HTTP_TIMEOUT", "").strip()
    if raw:
        try:
            read = float(raw)
        except ValueError:
            raise ConfigError(f"REPOPILOT_HTTP_TIMEOUT={raw!r} is not a number of seconds") from None
    return httpx.Timeout(read, connect=10.0)

