"""GitHub API calls within each installation's rate limit. Every answer's `X-RateLimit-Remaining` and
`X-RateLimit-Reset` are noted per installation, in this worker and in PostgreSQL (for the other workers and
`/metrics`). Once an installation is down to its reserve, no call is made with its token until the reset: the job
in hand stops with `RateLimited`, and the queue runs it again at the reset; jobs not started yet look at what every
worker knows first and wait in the queue without spending a call. Nothing polls or loops: a deferred job is
scheduled for the reset."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from .auth import AppAuth
from .store import Store

__all__ = ["InstallationQuota", "Quota"]


@dataclass(frozen=True)
class Quota:
    remaining: int
    limit: int
    reset: float  # epoch seconds
    observed: float


class InstallationQuota:
    """The worker's quota gate (`core.use_quota_gate`); safe to share between the worker's threads."""

    def __init__(self, store: Store, auth: AppAuth, reserve: int, *,
                 clock: Callable[[], float] = time.time) -> None:
        self.store, self.auth, self.reserve, self.clock = store, auth, reserve, clock
        self._known: dict[int, Quota] = {}
        self._unsaved: set[int] = set()
        self._lock = threading.Lock()

    def seen(self, credential: str, remaining: int, limit: int, reset: float) -> None:
        installation = self.auth.installation_of(credential)
        if installation is None:  # the App's own JWT: its calls do not count against an installation
            return
        with self._lock:
            self._known[installation] = Quota(remaining, limit, reset, self.clock())
            self._unsaved.add(installation)
        if remaining <= self.reserve:  # the other workers should stop starting this installation's jobs now
            self.save(installation)

    def wait_before(self, credential: str) -> float:
        installation = self.auth.installation_of(credential)
        return 0.0 if installation is None else self.wait_for(installation)

    def wait_for(self, installation: int) -> float:
        """Seconds until `installation` may be called again (0: now), from what this worker knows."""
        with self._lock:
            quota = self._known.get(installation)
        now = self.clock()
        if quota is None or quota.remaining > self.reserve or quota.reset <= now:
            return 0.0
        return quota.reset - now + 1.0  # the reset is in whole seconds: do not wake a moment early

    def before_job(self, installation: int) -> float:
        """`wait_for` after learning what the other workers saw last (PostgreSQL)."""
        row = self.store.rate_limit(installation)
        if row is not None:
            shared = Quota(*row)
            with self._lock:
                mine = self._known.get(installation)
                if mine is None or shared.observed > mine.observed:
                    self._known[installation] = shared
        return self.wait_for(installation)

    def save(self, installation: int | None = None) -> None:
        """Write this worker's newest observations (of `installation`, or all unsaved) to PostgreSQL."""
        with self._lock:
            which = [installation] if installation is not None else sorted(self._unsaved)
            rows = [(i, self._known[i]) for i in which if i in self._known]
            self._unsaved.difference_update(which)
        for i, q in rows:
            self.store.note_rate_limit(i, q.remaining, q.limit, q.reset, q.observed)
