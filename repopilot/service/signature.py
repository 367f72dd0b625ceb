"""GitHub's webhook signature: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>` with the App's
webhook secret. Compared in constant time; anything else (missing, another algorithm, bad hex) is a refusal."""

from __future__ import annotations

import hashlib
import hmac

__all__ = ["sign", "verify"]

_PREFIX = "sha256="


def sign(secret: str, body: bytes) -> str:
    """The header value GitHub sends for `body` (tests and the load bench sign with it)."""
    return _PREFIX + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify(secret: str, body: bytes, header: str | None) -> bool:
    if not secret or not header or not header.startswith(_PREFIX):
        return False
    return hmac.compare_digest(sign(secret, body).encode(), header.strip().encode())
