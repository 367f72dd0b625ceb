"""The one HTTP client every adapter talks through: timeouts, headers, retries, bounds and error mapping.

Retries follow the shared policy (`core.retry`, as the official SDKs do): 408/409/429/5xx/529 and connection
errors are retried with jittered exponential backoff, the server's `retry-after-ms` / `retry-after` wins when
present, a wait longer than `max_retry_after` is not honoured (the call fails instead), and no wait is started
that would end after the run's deadline, so retries count against the seconds budget. Every retry is recorded for
the trace.

A reply is bounded as a whole, not only by silence: a server trickling a byte at a time is cut off at the run's
deadline (`DeadlineExceeded`) or after `max_reply_seconds`, and a reply larger than `max_reply_bytes` is refused
while it is read. The read happens on a worker thread; when time is up the socket is shut down under it.
"""

from __future__ import annotations

import codecs
import json
import queue
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx

from .. import __version__
from ..core import (
    RETRYABLE_STATUS,
    ConfigError,
    DeadlineExceeded,
    ProviderError,
    RetriesExhausted,
    Retry,
    RetryPolicy,
    parse_retry_after,
    redact_text,
    retry_call,
)

__all__ = [
    "MAX_REPLY_BYTES",
    "MAX_REPLY_SECONDS",
    "HttpClient",
    "RetryPolicy",
    "reply_bounds_from_env",
    "retry_policy_from_env",
    "safe_url",
    "timeout_from_env",
]

_BODY_CHARS = 300
_ERROR_BODY_BYTES = 64 * 1024
# A model's reply is text and tool calls: a few hundred KB at most. Far more is a broken or hostile server.
MAX_REPLY_BYTES = 8_000_000
# The longest one reply may take in all, however steadily it trickles (the run's deadline may end it sooner).
MAX_REPLY_SECONDS = 600.0
_T = TypeVar("_T")
_NEWLINE = re.compile(r"\r\n|\r|\n")
_END = object()  # the end of a streamed reply, on the queue between the reader thread and the caller


def retry_policy_from_env(environ: Mapping[str, str]) -> RetryPolicy:
    """The retry policy, with `REPOPILOT_MAX_RETRIES` when set."""
    raw = environ.get("REPOPILOT_MAX_RETRIES", "").strip()
    if not raw:
        return RetryPolicy()
    if not raw.isdigit():
        raise ConfigError(f"REPOPILOT_MAX_RETRIES={raw!r} is not a whole number of retries")
    return RetryPolicy(max_retries=int(raw))


def reply_bounds_from_env(environ: Mapping[str, str]) -> dict[str, Any]:
    """`max_reply_bytes` / `max_reply_seconds` from `REPOPILOT_MAX_REPLY_BYTES` / `_SECONDS` when set."""
    bounds: dict[str, Any] = {}
    for name, key, kind in (("REPOPILOT_MAX_REPLY_BYTES", "max_reply_bytes", int),
                            ("REPOPILOT_MAX_REPLY_SECONDS", "max_reply_seconds", float)):
        raw = environ.get(name, "").strip()
        if not raw:
            continue
        try:
            value = kind(raw)
        except ValueError:
            value = 0
        if not 0 < value < float("inf"):
            raise ConfigError(f"{name}={raw[:40]!r} is not a positive number")
        bounds[key] = value
    return bounds


class _TimeUp(Exception):
    """The bounded wait ended before the worker did."""


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
    max_reply_bytes: int = MAX_REPLY_BYTES
    max_reply_seconds: float = MAX_REPLY_SECONDS

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
            end, by_deadline = self._attempt_end(deadline)
            opened: list[httpx.Response] = []

            def fetch() -> str:
                response = self._send(path, body, params, None, end, opened)
                try:
                    return self._read_capped(response, self.max_reply_bytes)
                finally:
                    response.close()

            try:
                text = _bounded(fetch, end)
            except _TimeUp:
                _abandon(opened)
                raise self._time_up(by_deadline, before_reply=True) from None
            return self._decode(text)

        result: dict[str, Any] = self._with_retries(attempt, deadline)
        return result

    @contextmanager
    def stream_lines(self, path: str, body: Mapping[str, Any], *, deadline: float | None = None,
                     params: Mapping[str, str] | None = None,
                     accept: str = "text/event-stream") -> Iterator[Iterator[str]]:
        """POST `body` and yield the response's lines as they arrive. Failures before the first byte are
        retried; once the stream has started it is never retried (text may already be on the screen), and a
        connection that drops mid-stream, or a reply past its time or size bound, is a ProviderError."""
        bounds: list[tuple[float, bool]] = []

        def attempt() -> httpx.Response:
            end, by_deadline = self._attempt_end(deadline)
            bounds[:] = [(end, by_deadline)]
            opened: list[httpx.Response] = []
            try:
                return _bounded(lambda: self._send(path, body, params, accept, end, opened), end)
            except _TimeUp:
                _abandon(opened)
                raise self._time_up(by_deadline, before_reply=True) from None

        response: httpx.Response = self._with_retries(attempt, deadline)
        end, by_deadline = bounds[0]
        reader = _LineReader(response, self.max_reply_bytes, self._too_large, self.provider)
        try:
            yield reader.lines(end, lambda: self._time_up(by_deadline, before_reply=False))
        finally:
            reader.stop()

    # -- internals ----------------------------------------------------------------------------------------
    def _attempt_end(self, deadline: float | None) -> tuple[float, bool]:
        """When this attempt must be over, and whether that is the run's deadline (else the reply bound)."""
        own = time.monotonic() + self.max_reply_seconds
        if deadline is not None and deadline <= own:
            return deadline, True
        return own, False

    def _time_up(self, by_deadline: bool, *, before_reply: bool) -> Exception:
        if by_deadline:
            return DeadlineExceeded("no complete reply before the run's time budget ran out; the read was "
                                    "abandoned", provider=self.provider)
        message = f"no complete reply within {self.max_reply_seconds:.0f}s"
        if before_reply:  # nothing was shown yet: worth another attempt
            return Retry(f"timed out talking to {safe_url(self.base_url)} ({message})", detail="ReplyTimeout")
        return ProviderError(message, provider=self.provider)

    def _too_large(self) -> ProviderError:
        return ProviderError(f"the reply is larger than {self.max_reply_bytes:,} bytes; stopped reading it "
                             "(a model's reply is far smaller: check the endpoint)", provider=self.provider)

    def _send(self, path: str, body: Mapping[str, Any], params: Mapping[str, str] | None, accept: str | None,
              end: float, opened: list[httpx.Response]) -> httpx.Response:
        """Send the request and check its status; the response is open for reading (streamed)."""
        left = max(0.01, end - time.monotonic())
        # Each wait of the socket is bounded by what is left, so an abandoned worker ends soon after.
        timeout = httpx.Timeout(min(self.timeout.read or left, left), connect=min(self.timeout.connect or left,
                                                                                 left))
        request = self._client.build_request("POST", path, json=body, params=params, timeout=timeout,
                                             headers={"accept": accept} if accept else None)
        try:
            response = self._client.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise self._connection_error(exc) from exc
        opened.append(response)
        if response.status_code >= 400:
            try:
                text = self._read_capped(response, _ERROR_BODY_BYTES, cut=True)
            except (Retry, ProviderError):
                text = ""
            finally:
                response.close()
            self._check(response, text)
        return response

    def _read_capped(self, response: httpx.Response, cap: int, *, cut: bool = False) -> str:
        data = bytearray()
        try:
            for chunk in response.iter_bytes():
                data += chunk
                if len(data) > cap:
                    if cut:
                        break
                    raise self._too_large()
        except httpx.HTTPError as exc:
            raise self._connection_error(exc) from exc
        return bytes(data[:cap]).decode(response.encoding or "utf-8", "replace")

    def _with_retries(self, attempt: Callable[[], _T], deadline: float | None) -> _T:
        self.last_retries = []

        def record(number: int, exc: Retry, wait: float) -> None:
            self.last_retries.append({"attempt": number, "status": exc.status, "wait_s": round(wait, 3),
                                      "error": f"HTTP {exc.status}" if exc.status else exc.detail})

        try:
            return retry_call(attempt, self.retry, deadline=deadline, sleep=self.sleep, on_retry=record,
                              label=self.provider)
        except RetriesExhausted as exc:
            last, stop = exc.last, exc.give_up
            note = f" after {stop.retries} retr{'y' if stop.retries == 1 else 'ies'}" if stop.retries else ""
            if stop.why == "too_long":
                note += (f" (the server asked to wait {stop.wait:.0f}s, over the "
                         f"{self.retry.max_retry_after:.0f}s cap)")
            elif stop.why == "deadline":
                note += " (the run's time budget ends before a retry could start)"
            raise ProviderError(last.reason + note, provider=self.provider, status=last.status,
                                body=last.detail) from exc

    def _connection_error(self, exc: httpx.HTTPError) -> Retry:
        kind = "timed out" if isinstance(exc, httpx.TimeoutException) else "connection failed"
        return Retry(f"{kind} talking to {safe_url(self.base_url)}", detail=type(exc).__name__)

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
            raise Retry(message, status=status, wait=parse_retry_after(response.headers), detail=body)
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



def _bounded(work: Callable[[], _T], end: float) -> _T:
    """`work()` on a worker thread, waited for until `end` at most (then _TimeUp; the worker is abandoned)."""
    box: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # handed to the caller's thread as it is
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, daemon=True, name="repopilot-http").start()
    if not done.wait(max(0.0, end - time.monotonic())):
        raise _TimeUp
    if "error" in box:
        raise box["error"]
    value: _T = box["value"]
    return value


def _shutdown(response: httpx.Response) -> None:
    """Wake a read blocked on `response`'s socket: the connection is shut down under it."""
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if isinstance(sock, socket.socket):
        with suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _abandon(opened: list[httpx.Response]) -> None:
    for response in opened:
        _shutdown(response)


class _LineReader:
    """Reads a streamed reply's lines on a worker thread, so the caller can stop waiting at a deadline, and
    counts its bytes against the cap. The worker owns the response and closes it."""

    def __init__(self, response: httpx.Response, cap: int, too_large: Callable[[], ProviderError],
                 provider: str) -> None:
        self._response = response
        self._cap = cap
        self._too_large = too_large
        self._provider = provider
        self._queue: queue.Queue[object] = queue.Queue()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._pump, daemon=True, name="repopilot-stream")
        self._thread.start()

    def _pump(self) -> None:
        # Bytes are counted as they arrive (a line is never buffered past the cap, however long it is); lines are
        # split on \n, \r\n or \r, as httpx does.
        size = 0
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        pending = ""
        try:
            for chunk in self._response.iter_bytes():
                if self._stopped.is_set():
                    return
                size += len(chunk)
                if size > self._cap:
                    self._queue.put(self._too_large())
                    return
                text = pending + decoder.decode(chunk)
                held = "\r" if text.endswith("\r") else ""  # its \n may come in the next chunk
                *lines, pending = _NEWLINE.split(text[:-1] if held else text)
                pending += held
                for line in lines:
                    self._queue.put(line)
            tail = (pending + decoder.decode(b"", final=True)).rstrip("\r")
            if tail:
                self._queue.put(tail)
            self._queue.put(_END)
        except httpx.HTTPError as exc:
            if not self._stopped.is_set():
                self._queue.put(ProviderError("the stream broke off before the reply was complete "
                                              f"({type(exc).__name__})", provider=self._provider))
        finally:
            self._response.close()

    def lines(self, end: float, time_up: Callable[[], Exception]) -> Iterator[str]:
        while True:
            try:
                item = self._queue.get(timeout=max(0.0, end - time.monotonic()))
            except queue.Empty:
                raise time_up() from None
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            assert isinstance(item, str)
            yield item

    def stop(self) -> None:
        self._stopped.set()
        if self._thread.is_alive():
            _shutdown(self._response)
