"""The failure history's read queries, built once for both stores: the CLI's SQLite file (ci/failure_history.py)
and the service's PostgreSQL tables (service/failure_history.py) hold the same tables under other names and take
parameters in other styles (`?` against `%s`). A `HistorySQL` is one such dialect; it builds each query's text
and arguments, and turns the rows that come back into the shared models, so a change to what a query asks or
answers is made in one place and holds for both stores."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .history_records import HistoryRow, Recurring

__all__ = ["HistorySQL"]

_SUMMARY_COLUMNS = ("fingerprint, count, first_seen, last_seen, first_commit, rule, category, message, commits, "
                    "flaky_commits")
_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]*")
_ROW_COLUMNS = "id, recorded_at, repository, workflow, job, branch, commit_sha, run_id, attempt, url, conclusion"


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
        return [HistoryRow(id=r[0], recorded_at=r[1], repository=r[2], workflow=r[3], job=r[4], branch=r[5],
                           commit=r[6], run_id=r[7], attempt=r[8], url=r[9], conclusion=r[10])
                for r in execute(sql, [*args, limit])]

    def fingerprints_of(self, execute: Execute, diagnosis_id: int) -> set[str]:
        return {str(r[0]) for r in execute(f"SELECT fingerprint FROM {self.failures} "  # noqa: S608
                                           f"WHERE diagnosis_id = {self.param}", [diagnosis_id])}

    def count(self, execute: Execute) -> int:
        return sum(int(r[0]) for r in execute(f"SELECT count(*) FROM {self.diagnoses}", []))  # noqa: S608
