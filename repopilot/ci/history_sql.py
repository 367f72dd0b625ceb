"""The failure history's read queries, built once for both stores: the CLI's SQLite file (ci/failure_history.py)
and the service's PostgreSQL tables (service/failure_history.py) hold the same tables under other names and take
parameters in other styles (`?` against `%s`). A `HistorySQL` is one such dialect; it builds each query's text
and arguments, and turns the rows that come back into the shared models, so a change to what a query asks or
answers is made in one place and holds for both stores."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core import Record

__all__ = ["HistoryRow", "HistorySQL", "Recurring"]

_SUMMARY_COLUMNS = ("fingerprint, count, first_seen, last_seen, first_commit, rule, category, message, commits, "
                    "flaky_commits")
_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]*")
_ROW_COLUMNS = "id, recorded_at, repository, job, branch, commit_sha, run_id, attempt, url, conclusion"


@dataclass(slots=True, kw_only=True)
class HistoryRow(Record):
    """A recorded diagnosis, as evidence: `history row 12: run 123 attempt 1 on main at 1a2b3c4 (2026-11-02)`."""

    id: int
    recorded_at: float
    repository: str | None = None
    job: str | None = None
    branch: str | None = None
    commit: str | None = None
    run_id: str | None = None
    attempt: int | None = None
    url: str | None = None
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


# A connection's `execute` (sqlite3's and psycopg's both fit): the query and its arguments in, rows out.
Execute = Callable[[str, list[Any]], Iterable[Sequence[Any]]]


@dataclass(frozen=True)
class HistorySQL:
    """A store's dialect: its parameter marker and its table names (the same tables, prefixed or not). Each read
    takes the connection's `execute`, so the text, the arguments and the reading of the answer are shared."""

    param: str
    diagnoses: str
    failures: str
    summary: str
    branches: str

    def __post_init__(self) -> None:
        # The names are joined into the queries' text: only plain identifiers and the two known markers pass.
        if self.param not in ("?", "%s"):
            raise ValueError(f"unknown parameter marker {self.param!r}")
        names = (self.diagnoses, self.failures, self.summary, self.branches)
        if not all(_IDENTIFIER.fullmatch(name) for name in names):
            raise ValueError(f"table names must be plain identifiers: {names}")

    def recurring(self, execute: Execute, limit: int = 20,
                  fingerprints: Sequence[str] | None = None) -> list[Recurring]:
        """The most recorded fingerprints (or the given ones, in the order given), most frequent first."""
        if fingerprints is None:
            rows = list(execute(f"SELECT {_SUMMARY_COLUMNS} FROM {self.summary} "  # noqa: S608
                                f"ORDER BY count DESC, last_seen DESC LIMIT {self.param}", [limit]))
        else:
            wanted = list(dict.fromkeys(fingerprints))
            if not wanted:
                return []
            marks = ", ".join([self.param] * len(wanted))
            found = {str(r[0]): r for r in execute(f"SELECT {_SUMMARY_COLUMNS} FROM {self.summary} "  # noqa: S608
                                                   f"WHERE fingerprint IN ({marks})", wanted)}
            rows = [found[fp] for fp in wanted if fp in found]
        return [self._recurring(execute, row) for row in rows]

    def _recurring(self, execute: Execute, row: Sequence[Any]) -> Recurring:
        fp = str(row[0])
        branches = [str(r[0]) for r in execute(f"SELECT branch FROM {self.branches} "  # noqa: S608
                                               f"WHERE fingerprint = {self.param} ORDER BY branch LIMIT 20", [fp])]
        commits, flaky = int(row[8]), int(row[9])
        return Recurring(fingerprint=fp, count=int(row[1]), first_seen=float(row[2]), last_seen=float(row[3]),
                         first_commit=row[4] if isinstance(row[4], str) else None, rule=str(row[5] or ""),
                         category=str(row[6] or "unknown"), message=str(row[7] or ""), branches=branches,
                         commits=commits, flaky_commits=flaky, flake_rate=flaky / commits if commits else None)

    def rows(self, execute: Execute, fingerprint: str | None = None, *, repository: str | None = None,
             job: str | None = None, commit: str | None = None, branch: str | None = None,
             limit: int = 50) -> list[HistoryRow]:
        """Recorded diagnoses (newest first): those with `fingerprint`, and of the given place."""
        where, args = [], []
        if fingerprint is not None:
            where.append(f"d.id IN (SELECT diagnosis_id FROM {self.failures} WHERE fingerprint = {self.param})")  # noqa: S608
            args.append(fingerprint)
        for column, value in (("repository", repository), ("job", job), ("commit_sha", commit),
                              ("branch", branch)):
            if value is not None:
                where.append(f"d.{column} = {self.param}")
                args.append(value)
        # Only the fixed conditions above and the dialect's own names are joined in; every value is a parameter.
        sql = (f"SELECT {_ROW_COLUMNS} FROM {self.diagnoses} d "  # noqa: S608
               f"{'WHERE ' + ' AND '.join(where) if where else ''} "
               f"ORDER BY recorded_at DESC, id DESC LIMIT {self.param}")
        return [HistoryRow(id=r[0], recorded_at=r[1], repository=r[2], job=r[3], branch=r[4], commit=r[5],
                           run_id=r[6], attempt=r[7], url=r[8], conclusion=r[9])
                for r in execute(sql, [*args, limit])]

    def fingerprints_of(self, execute: Execute, diagnosis_id: int) -> set[str]:
        return {str(r[0]) for r in execute(f"SELECT fingerprint FROM {self.failures} "  # noqa: S608
                                           f"WHERE diagnosis_id = {self.param}", [diagnosis_id])}

    def count(self, execute: Execute) -> int:
        return sum(int(r[0]) for r in execute(f"SELECT count(*) FROM {self.diagnoses}", []))  # noqa: S608
