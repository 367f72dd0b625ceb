"""What the failure history holds, as records shared by both stores (the CLI's SQLite file and the service's
PostgreSQL tables): where a diagnosis comes from (`RunPlace`), what was found there (`RunRecord`, `FailureRow`),
and what a read gives back (`HistoryRow`, a place with its row id; `Recurring`, one fingerprint's summary).

Every text that goes into a store is made storable first (`storable_text`): once when a record is made, and again
by the query builder (ci/history_sql.py) on every write, so a field set after construction cannot slip past."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

from ..core import Record
from .digest import sha256

__all__ = ["FailureRow", "HistoryRow", "Recurring", "RunPlace", "RunRecord", "storable_text"]


def storable_text(value: str | None) -> str | None:
    """`value` as both stores can hold it: a file name that is not UTF-8 arrives with lone surrogates, which neither
    SQLite nor PostgreSQL can store, and PostgreSQL refuses NUL in text (a log line may hold one); each becomes
    U+FFFD, in both stores alike."""
    if value is None:
        return None
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace").replace("\x00", "\ufffd")


def _make_storable(record: object, names: tuple[str, ...]) -> None:
    for name in names:
        setattr(record, name, storable_text(getattr(record, name)))


@dataclass(slots=True, kw_only=True)
class FailureRow(Record):
    """One failure of a diagnosis as the history stores it."""

    fingerprint: str
    rule: str = ""
    category: str = "unknown"
    message: str = ""

    def __post_init__(self) -> None:
        _make_storable(self, ("rule", "message"))


_PLACE_TEXTS = ("repository", "workflow", "job", "branch", "commit", "run_id", "url")
_PLACE_FIELDS = (*_PLACE_TEXTS, "attempt")


@dataclass(slots=True, kw_only=True)
class RunPlace(Record):
    """Where a diagnosis comes from, as far as it is known (a run URL, the GitHub Actions job it runs in, the API's
    answers): each field None when unknown. A `RunRecord` is a place and what was found there; a `HistoryRow` is a
    place as recorded."""

    repository: str | None = None
    workflow: str | None = None
    job: str | None = None
    branch: str | None = None
    commit: str | None = None
    run_id: str | None = None
    attempt: int | None = None
    url: str | None = None

    def __post_init__(self) -> None:
        _make_storable(self, _PLACE_TEXTS)


@dataclass(slots=True, kw_only=True)
class RunRecord(RunPlace):
    """One diagnosed job (or one passing job, `conclusion="success"`, which has no failures), as recorded."""

    source: str | None = None
    category: str | None = None
    conclusion: Literal["failure", "success"] = "failure"
    recorded_at: float = field(default_factory=time.time)
    failures: list[FailureRow] = field(default_factory=list)

    def __post_init__(self) -> None:
        # Named, not `super()`: a slots dataclass is a new class, which zero-argument super() does not know.
        RunPlace.__post_init__(self)
        _make_storable(self, ("source", "category"))

    @classmethod
    def at(cls, place: RunPlace, **found: Any) -> RunRecord:
        """The record of what was found (`source`, `failures`, ... and any field of the place to override) at
        `place`."""
        return cls(**{**{name: getattr(place, name) for name in _PLACE_FIELDS}, **found})

    def key(self) -> str:
        """What makes two records the same diagnosis: a job of a run attempt, else the log and what was found
        (diagnosing the same file twice records it once)."""
        if self.run_id and self.job:
            return f"run:{self.repository}:{self.run_id}:{self.attempt or 1}:{self.job}"
        digest = sha256("\x1f".join([self.source or "", self.commit or "", self.conclusion,
                                             *sorted(f.fingerprint for f in self.failures)]).encode())
        return f"log:{digest.hexdigest()[:32]}"


@dataclass(slots=True, kw_only=True)
class HistoryRow(RunPlace):
    """A recorded diagnosis, as evidence: `history row 12: run 123 attempt 1 on main at 1a2b3c4 (2026-11-02)`."""

    id: int
    recorded_at: float
    conclusion: str = "failure"


@dataclass(slots=True, kw_only=True)
class Recurring(Record):
    """One fingerprint's record: how often, since when, where it first appeared, on which branches, how flaky."""

    fingerprint: str
    count: int
    first_seen: float
    last_seen: float
    first_commit: str | None = None
    rule: str = ""
    category: str = "unknown"
    message: str = ""
    branches: list[str] = field(default_factory=list)
    # Of the commits (per job) it failed on, the share on which the same job also passed: None when unknown.
    flake_rate: float | None = None
    commits: int = 0
    flaky_commits: int = 0
