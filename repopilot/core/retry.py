"""The one retry policy for RepoPilot's HTTP clients (model providers, the GitHub API), with no I/O of its own.

Which statuses are worth another attempt, how long the server asked us to wait (`retry-after-ms`, then
`retry-after` as seconds or an HTTP date), jittered exponential backoff otherwise, and when to give up instead: out
of retries, a server asking for a longer pause than we accept (one wait, or all waits of a call together), or a
wait that would end after the run's deadline (no wait is started that cannot finish in time). Each domain raises
`Retry` from its attempt and maps `RetriesExhausted` to its own error with its own words.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Literal, TypeVar

from .waits import waiting

__all__ = ["RETRYABLE_STATUS", "GiveUp", "RetriesExhausted", "Retry", "RetryPolicy", "parse_retry_after",
           "retry_call"]

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
_T = TypeVar("_T")


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


class Retry(Exception):
    """Raised by an attempt that may succeed if tried again; `wait` is what the server asked for, if anything."""

    def __init__(self, reason: str, *, status: int | None = None, wait: float | None = None,
                 detail: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.wait = wait
        self.detail = detail


@dataclass(frozen=True)
class GiveUp:
    """Why no further attempt is made: `why` is `exhausted`, `too_long` (one asked wait over the cap), `total`
    (asked waits together over the cap) or `deadline`; `wait` is the pause that was refused."""

    why: Literal["exhausted", "too_long", "total", "deadline"]
    retries: int
    wait: float
    waited: float


class RetriesExhausted(Exception):
    def __init__(self, last: Retry, give_up: GiveUp) -> None:
        super().__init__(last.reason)
        self.last = last
        self.give_up = give_up


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 2
    initial_wait: float = 0.5
    max_wait: float = 8.0  # the longest backoff pause we choose ourselves
    jitter: float = 0.25  # up to this share is taken off each backoff, so clients that failed together spread out
    max_retry_after: float = 120.0  # a server asking for a longer pause than this is a failure, not waited for
    max_total_wait: float | None = None  # all server-asked pauses of one call together

    def backoff(self, retry_number: int) -> float:
        """The pause before retry `retry_number` (1-based) when the server did not say: 0.5, 1, 2 … capped."""
        base = min(self.max_wait, self.initial_wait * 2.0 ** (retry_number - 1))
        return base * (1 - self.jitter * random.random())  # noqa: S311 - jitter, not cryptography

    def give_up(self, retry_number: int, wait: float, *, asked: bool, waited: float, deadline: float | None,
                now: float) -> GiveUp | None:
        """None to wait `wait` and try again; else why not."""
        made = retry_number - 1
        if retry_number > self.max_retries:
            return GiveUp("exhausted", made, wait, waited)
        if asked and wait > self.max_retry_after:
            return GiveUp("too_long", made, wait, waited)
        if asked and self.max_total_wait is not None and waited + wait > self.max_total_wait:
            return GiveUp("total", made, wait, waited)
        if deadline is not None and now + wait > deadline:
            return GiveUp("deadline", made, wait, waited)
        return None


def retry_call(attempt: Callable[[], _T], policy: RetryPolicy, *, deadline: float | None = None,
               sleep: Callable[[float], None] = time.sleep,
               on_retry: Callable[[int, Retry, float], Any] | None = None,
               clock: Callable[[], float] = time.monotonic, label: str = "") -> _T:
    """`attempt()` until it returns, retrying on `Retry` as `policy` says; RetriesExhausted when it gives up.
    Each pause is announced (`core.waits`) with `label`, what is being retried."""
    retry_number = 0
    waited = 0.0  # server-asked seconds already waited in this call
    while True:
        try:
            return attempt()
        except Retry as exc:
            retry_number += 1
            asked = exc.wait is not None
            wait = exc.wait if exc.wait is not None else policy.backoff(retry_number)
            stop = policy.give_up(retry_number, wait, asked=asked, waited=waited, deadline=deadline, now=clock())
            if stop is not None:
                raise RetriesExhausted(exc, stop) from exc
            if on_retry is not None:
                on_retry(retry_number, exc, wait)
            if asked:
                waited += wait
            with waiting(f"{label + ': ' if label else ''}{exc.reason}{f' (HTTP {exc.status})' if exc.status else ''}"
                         f"; retry {retry_number} of {policy.max_retries} in {wait:.0f}s"):
                sleep(wait)
