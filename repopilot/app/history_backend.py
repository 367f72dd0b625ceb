"""Where the failure history lives. The CLI keeps it in its embedded SQLite file (ci/failure_history.py); a
client of the application layer that runs on many machines (the service: PostgreSQL) hands its own store to the
use cases in `Settings.history_backend`. Both answer `FailureHistory`, so recording, "seen before" and attribution
do not care which one they talk to."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..ci import HistoryRow, HistorySQL, Recurring, RunRecord

# HistorySQL: the read queries, for a client that brings its own store (the service's PostgreSQL tables).
__all__ = ["FailureHistory", "HistoryRow", "HistorySQL", "Recurring", "RunRecord"]


class FailureHistory(Protocol):
    """What the use cases ask of a failure history (ci.HistoryStore is the reference implementation: its
    docstrings say what each answer means)."""

    def record_many(self, runs: Sequence[RunRecord]) -> int: ...

    def recurring(self, limit: int = 20, fingerprints: Sequence[str] | None = None) -> list[Recurring]: ...

    def rows(self, fingerprint: str | None = None, *, repository: str | None = None, job: str | None = None,
             commit: str | None = None, branch: str | None = None, limit: int = 50) -> list[HistoryRow]: ...

    def fingerprints_of(self, diagnosis_id: int) -> set[str]: ...

    def count(self) -> int: ...

    def prune_if_due(self, older_than_days: float, *, now: float | None = None) -> int: ...

    def prune(self, older_than_days: float, *, now: float | None = None) -> int: ...
