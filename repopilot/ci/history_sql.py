"""The failure history's queries, reads and writes, built once for both stores: the CLI's SQLite file
(ci/failure_history.py) and the service's PostgreSQL tables (service/failure_history.py) hold the same tables under
other names and take parameters in other styles (`?` against `%s`). A `HistorySQL` is one such dialect; it builds
each query's text and arguments, and turns the rows that come back into the shared models, so a change to what a
query asks, writes or answers is made in one place and holds for both stores. The stores keep what differs: the
schema's types, connecting, and how a write transaction is serialised.

Only SQL both understand is written here: `INSERT ... ON CONFLICT` (SQLite 3.24+), CASE instead of SQLite's
two-argument min/max and PostgreSQL's least/greatest, and no RETURNING (SQLite 3.35+): a new row's id is read back
by its unique key."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from .history_records import FailureRow, HistoryRow, Recurring, RunRecord, storable_text

__all__ = ["HistorySQL"]

_SUMMARY_COLUMNS = ("fingerprint, count, first_seen, last_seen, first_commit, rule, category, message, commits, "
                    "flaky_commits")
_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]*")
_ROW_COLUMNS = "id, recorded_at, repository, workflow, job, branch, commit_sha, run_id, attempt, url, conclusion"
_RECORD_COLUMNS = ("key, recorded_at, repository, workflow, job, branch, commit_sha, run_id, attempt, url, source, "
                   "category, conclusion")
_MESSAGE_CHARS = 500
_PRUNE_EVERY = 86_400.0  # recording prunes at most once a day


# The summary rebuilt from the diagnoses left after a prune; `{name}` is the dialect's table of that name.
_REBUILD = (
    "DELETE FROM {summary}", "DELETE FROM {branches}", "DELETE FROM {fp_commits}", "DELETE FROM {passes}",
    "INSERT INTO {passes} (repository, job, commit_sha) SELECT DISTINCT coalesce(repository, ''), "
    "coalesce(job, ''), commit_sha FROM {diagnoses} WHERE conclusion = 'success' AND commit_sha IS NOT NULL",
    "INSERT INTO {fp_commits} (fingerprint, repository, job, commit_sha) SELECT DISTINCT f.fingerprint, "
    "coalesce(d.repository, ''), coalesce(d.job, ''), d.commit_sha FROM {failures} f "
    "JOIN {diagnoses} d ON d.id = f.diagnosis_id WHERE d.commit_sha IS NOT NULL",
    "INSERT INTO {summary} ({summary_columns}) SELECT f.fingerprint, count(*), min(d.recorded_at), "
    "max(d.recorded_at), (SELECT d2.commit_sha FROM {failures} f2 JOIN {diagnoses} d2 ON d2.id = f2.diagnosis_id "
    "  WHERE f2.fingerprint = f.fingerprint AND d2.commit_sha IS NOT NULL ORDER BY d2.recorded_at LIMIT 1), "
    "max(f.rule), max(f.category), max(f.message), "
    "(SELECT count(*) FROM {fp_commits} c WHERE c.fingerprint = f.fingerprint), "
    "(SELECT count(*) FROM {fp_commits} c JOIN {passes} p USING (repository, job, commit_sha) "
    "  WHERE c.fingerprint = f.fingerprint) "
    "FROM {failures} f JOIN {diagnoses} d ON d.id = f.diagnosis_id GROUP BY f.fingerprint",
    "INSERT INTO {branches} (fingerprint, branch) SELECT DISTINCT f.fingerprint, d.branch FROM {failures} f "
    "JOIN {diagnoses} d ON d.id = f.diagnosis_id WHERE d.branch IS NOT NULL",
)

# A connection's `execute` (sqlite3's and psycopg's both fit): the query and its arguments in, rows out.
Execute = Callable[[str, list[Any]], Iterable[Sequence[Any]]]


class Cursor(Protocol):
    """What a write reads of the cursor its `execute` returns (sqlite3's and psycopg's both have it)."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def __iter__(self) -> Iterator[Any]: ...


# A connection's `execute` inside the store's write transaction.
Write = Callable[[str, list[Any]], Cursor]


def _put(write: Write, sql: str, args: Sequence[object]) -> Cursor:
    # Every value written goes through here: each text made storable, however the record came to hold it.
    return write(sql, [storable_text(a) if isinstance(a, str) else a for a in args])


def _job_key(run: RunRecord) -> list[str]:
    return [run.repository or "", run.job or "", run.commit or ""]


@dataclass(frozen=True)
class HistorySQL:
    """A store's dialect: its parameter marker and its table names (the same tables, prefixed or not). Each read
    takes the connection's `execute`, so the text, the arguments and the reading of the answer are shared."""

    param: str
    diagnoses: str
    failures: str
    summary: str
    branches: str
    fp_commits: str
    passes: str
    meta: str

    def __post_init__(self) -> None:
        # The names are joined into the queries' text: only plain identifiers and the two known markers pass.
        if self.param not in ("?", "%s"):
            raise ValueError(f"unknown parameter marker {self.param!r}")
        names = (self.diagnoses, self.failures, self.summary, self.branches, self.fp_commits, self.passes,
                 self.meta)
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

    # Writes: each runs inside the store's write transaction (`write` is that connection's execute).

    def insert(self, write: Write, run: RunRecord) -> bool:
        """Record one diagnosis; False when the same one was recorded before (nothing is counted twice)."""
        p = self.param
        args = [run.key(), run.recorded_at, run.repository, run.workflow, run.job, run.branch, run.commit,
                run.run_id, run.attempt, run.url, run.source, run.category, run.conclusion]
        if not _put(write, f"INSERT INTO {self.diagnoses} ({_RECORD_COLUMNS}) "  # noqa: S608
                           f"VALUES ({', '.join([p] * len(args))}) ON CONFLICT (key) DO NOTHING", args).rowcount:
            return False
        diagnosis_id = _put(write, f"SELECT id FROM {self.diagnoses} WHERE key = {p}", [args[0]]).fetchone()[0]  # noqa: S608
        unique = {f.fingerprint: f for f in run.failures}
        for f in unique.values():
            _put(write, f"INSERT INTO {self.failures} (diagnosis_id, fingerprint, rule, category, message) "  # noqa: S608
                        f"VALUES ({p}, {p}, {p}, {p}, {p})",
                 [diagnosis_id, f.fingerprint, f.rule, f.category, f.message[:_MESSAGE_CHARS]])
        for f in unique.values():
            self._summarise(write, f, run)
        if run.conclusion == "success" and run.commit:
            self._passed(write, run)
        return True

    def _summarise(self, write: Write, f: FailureRow, run: RunRecord) -> None:
        p = self.param
        _put(write, f"INSERT INTO {self.summary} AS s (fingerprint, count, first_seen, last_seen, first_commit, "  # noqa: S608
                    f"rule, category, message) VALUES ({p}, 1, {p}, {p}, {p}, {p}, {p}, {p}) "
                    "ON CONFLICT (fingerprint) DO UPDATE SET count = s.count + 1, "
                    "first_commit = CASE WHEN excluded.first_seen < s.first_seen OR s.first_commit IS NULL "
                    "  THEN coalesce(excluded.first_commit, s.first_commit) ELSE s.first_commit END, "
                    "first_seen = CASE WHEN excluded.first_seen < s.first_seen "
                    "  THEN excluded.first_seen ELSE s.first_seen END, "
                    "last_seen = CASE WHEN excluded.last_seen > s.last_seen "
                    "  THEN excluded.last_seen ELSE s.last_seen END, "
                    "rule = excluded.rule, category = excluded.category, message = excluded.message",
             [f.fingerprint, run.recorded_at, run.recorded_at, run.commit, f.rule, f.category,
              f.message[:_MESSAGE_CHARS]])
        if run.branch:
            _put(write, f"INSERT INTO {self.branches} (fingerprint, branch) VALUES ({p}, {p}) "  # noqa: S608
                        "ON CONFLICT DO NOTHING", [f.fingerprint, run.branch])
        if run.commit and _put(write, f"INSERT INTO {self.fp_commits} (fingerprint, repository, job, commit_sha) "  # noqa: S608
                                      f"VALUES ({p}, {p}, {p}, {p}) ON CONFLICT DO NOTHING",
                               [f.fingerprint, *_job_key(run)]).rowcount:
            # A commit newly failed on: counted, and flaky there if the same job already passed on it.
            _put(write, f"UPDATE {self.summary} SET commits = commits + 1, flaky_commits = flaky_commits + "  # noqa: S608
                        f"(SELECT count(*) FROM {self.passes} WHERE repository = {p} AND job = {p} AND "
                        f"commit_sha = {p}) WHERE fingerprint = {p}", [*_job_key(run), f.fingerprint])

    def _passed(self, write: Write, run: RunRecord) -> None:
        # A job passing on a commit makes every fingerprint it failed with on that commit a flake there.
        p = self.param
        if _put(write, f"INSERT INTO {self.passes} (repository, job, commit_sha) VALUES ({p}, {p}, {p}) "  # noqa: S608
                       "ON CONFLICT DO NOTHING", _job_key(run)).rowcount:
            _put(write, f"UPDATE {self.summary} SET flaky_commits = flaky_commits + 1 WHERE fingerprint IN "  # noqa: S608
                        f"(SELECT fingerprint FROM {self.fp_commits} WHERE repository = {p} AND job = {p} AND "
                        f"commit_sha = {p})", _job_key(run))

    def prune_due(self, execute: Execute, now: float) -> bool:
        """Whether the last prune is more than a day old (so a store stays bounded without a cron job)."""
        last = [float(r[0]) for r in execute(f"SELECT value FROM {self.meta} "  # noqa: S608
                                             "WHERE name = 'pruned_at'", [])]
        return not last or now - last[0] >= _PRUNE_EVERY

    def prune(self, write: Write, cutoff: float, now: float) -> int:
        """Forget diagnoses recorded before `cutoff`; returns how many. The summary is rebuilt from what is left."""
        gone = _put(write, f"DELETE FROM {self.diagnoses} WHERE recorded_at < {self.param}", [cutoff]).rowcount  # noqa: S608
        _put(write, f"INSERT INTO {self.meta} (name, value) VALUES ('pruned_at', {self.param}) "  # noqa: S608
                    "ON CONFLICT (name) DO UPDATE SET value = excluded.value", [str(now)])
        if gone:
            names = {**asdict(self), "summary_columns": _SUMMARY_COLUMNS}
            for statement in _REBUILD:
                write(statement.format_map(names), [])
        return gone
