"""An API quota gate: how many calls each credential has left (GitHub's `X-RateLimit-*` headers, reported by the
client after every answer) and whether a call may be made now. A process that runs many jobs on the same
credentials (the service's workers) installs one so they stop before a credential's last calls and wait for its
reset instead of running into 403s; the CLI installs none, and the client then only asks GitHub."""

from __future__ import annotations

from typing import Protocol

__all__ = ["QuotaGate", "quota_gate", "use_quota_gate"]


class QuotaGate(Protocol):
    def seen(self, credential: str, remaining: int, limit: int, reset: float) -> None:
        """An answer said `credential` has `remaining` of `limit` calls until `reset` (epoch seconds)."""

    def wait_before(self, credential: str) -> float:
        """Seconds until a call with `credential` may be made (0: now)."""


_GATE: list[QuotaGate | None] = [None]


def use_quota_gate(gate: QuotaGate | None) -> None:
    """Installed once per process by the client that runs the jobs (None: no gate)."""
    _GATE[0] = gate


def quota_gate() -> QuotaGate | None:
    return _GATE[0]
