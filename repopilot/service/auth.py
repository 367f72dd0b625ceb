"""GitHub App authentication: a short-lived JWT signed (RS256) with the App's private key, exchanged for an
installation token that is cached until shortly before it expires. Tokens never reach a log or a message: they
live in this cache and in the Authorization header of API calls."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime

import jwt

from ..app import installation_token

__all__ = ["AppAuth"]

_JWT_LIFETIME = 540  # GitHub accepts at most 10 minutes
_CLOCK_SKEW = 60  # issued a minute in the past, as GitHub advises, for clocks that drift
_REFRESH_BEFORE = 300  # a token with less than 5 minutes left is replaced before use


def _epoch(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


class AppAuth:
    """One per worker process; safe to share between threads."""

    def __init__(self, app_id: str, private_key: str, api_url: str, *,
                 clock: Callable[[], float] = time.time) -> None:
        self._app_id = app_id
        self._key = private_key
        self._api_url = api_url
        self._clock = clock
        self._tokens: dict[int, tuple[str, float]] = {}
        self._owners: dict[str, int] = {}  # token -> installation, read without the lock (see installation_of)
        self._lock = threading.Lock()
        self.exchanges = 0  # how many tokens were fetched (the cache's effect is measurable)

    def __repr__(self) -> str:
        return f"AppAuth(app_id={self._app_id!r}, cached={len(self._tokens)})"

    def app_jwt(self) -> str:
        now = int(self._clock())
        claims = {"iat": now - _CLOCK_SKEW, "exp": now + _JWT_LIFETIME, "iss": self._app_id}
        return jwt.encode(claims, self._key, algorithm="RS256")

    def token(self, installation_id: int) -> str:
        with self._lock:
            cached = self._tokens.get(installation_id)
            if cached is not None and cached[1] - self._clock() > _REFRESH_BEFORE:
                return cached[0]
            token, expires_at = installation_token(self._api_url, self.app_jwt(), installation_id)
            self.exchanges += 1
            if cached is not None:  # the old token is not used again (a job holding it may finish unaccounted)
                self._owners.pop(cached[0], None)
            self._tokens[installation_id] = (token, _epoch(expires_at))
            self._owners[token] = installation_id
            return token

    def installation_of(self, token: str) -> int | None:
        """The installation a cached token belongs to (None: not one of ours, e.g. the App's own JWT)."""
        # No lock: the token exchange itself holds it while its API call asks the quota gate about the App's JWT
        # (a dict lookup is atomic).
        return self._owners.get(token)

    def forget(self, installation_id: int) -> None:
        """Drop a token GitHub refused (revoked, or the installation's permissions changed)."""
        with self._lock:
            dropped = self._tokens.pop(installation_id, None)
            if dropped is not None:
                self._owners.pop(dropped[0], None)
