"""The failure history in PostgreSQL, for the service: every worker on every machine records into, and reads from,
the one history (fingerprints, counts, flake rates, attribution's evidence rows), where the CLI keeps a SQLite
file (ci/failure_history.py). Same tables and meaning as that file, so the use cases do not care which they get
(`app.FailureHistory`).

Concurrent workers lose nothing: each `record_many` is one transaction that first takes a transaction-scoped
advisory lock, so writers queue for a few milliseconds instead of racing on the summary's counters (the flake
counts join two tables that a concurrent writer could be filling at the same moment). Readers never wait."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg

from ..app import FailureRow, HistoryRow, HistorySQL, Recurring, RunRecord

__all__ = ["HISTORY_SCHEMA", "PostgresHistory"]

_WRITE_LOCK = 0x68697374  # "hist": the advisory lock every writer of the history takes
_PRUNE_EVERY = 86_400.0
# The reads are the SQLite file's (ci/history_sql.py), on these tables with psycopg's parameter marker.
_SQL = HistorySQL(param="%s", diagnoses="repopilot_history_diagnoses", failures="repopilot_history_failures",
                  summary="repopilot_history_summary", branches="repopilot_history_branches")
HISTORY_SCHEMA = """
CREATE TABLE IF NOT EXISTS repopilot_history_diagnoses (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    key text NOT NULL UNIQUE,
    recorded_at double precision NOT NULL,
    repository text, workflow text, job text, branch text, commit_sha text,
    run_id text, attempt int, url text, source text, category text,
    conclusion text NOT NULL DEFAULT 'failure'
);
CREATE INDEX IF NOT EXISTS repopilot_history_diagnoses_time ON repopilot_history_diagnoses (recorded_at);
CREATE INDEX IF NOT EXISTS repopilot_history_diagnoses_job ON repopilot_history_diagnoses (repository, job, commit_sha);
CREATE TABLE IF NOT EXISTS repopilot_history_failures (
    diagnosis_id bigint NOT NULL REFERENCES repopilot_history_diagnoses (id) ON DELETE CASCADE,
    fingerprint text NOT NULL, rule text, category text, message text
);
CREATE INDEX IF NOT EXISTS repopilot_history_failures_fp ON repopilot_history_failures (fingerprint, diagnosis_id);
CREATE INDEX IF NOT EXISTS repopilot_history_failures_diag ON repopilot_history_failures (diagnosis_id);
CREATE TABLE IF NOT EXISTS repopilot_history_summary (
    fingerprint text PRIMARY KEY, count int NOT NULL, first_seen double precision NOT NULL,
    last_seen double precision NOT NULL, first_commit text, rule text, category text, message text,
    commits int NOT NULL DEFAULT 0, flaky_commits int NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS repopilot_history_summary_count ON repopilot_history_summary (count DESC, last_seen DESC);
CREATE TABLE IF NOT EXISTS repopilot_history_branches (
    fingerprint text NOT NULL, branch text NOT NULL, PRIMARY KEY (fingerprint, branch)
);
CREATE TABLE IF NOT EXISTS repopilot_history_fp_commits (
    fingerprint text NOT NULL, repository text NOT NULL, job text NOT NULL, commit_sha text NOT NULL,
    PRIMARY KEY (fingerprint, repository, job, commit_sha)
);
CREATE INDEX IF NOT EXISTS repopilot_history_fp_commits_job
    ON repopilot_history_fp_commits (repository, job, commit_sha);
CREATE TABLE IF NOT EXISTS repopilot_history_passes (
    repository text NOT NULL, job text NOT NULL, commit_sha text NOT NULL,
    PRIMARY KEY (repository, job, commit_sha)
);
CREATE TABLE IF NOT EXISTS repopilot_history_meta (name text PRIMARY KEY, value text NOT NULL);
"""


class PostgresHistory:
    """The history in the database at `url` (its tables are created by `prepare_database`)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def __repr__(self) -> str:
        return "PostgresHistory()"  # the URL may hold a password

    @contextmanager
    def _connect(self) -> Iterator[psycopg.Connection[Any]]:
        with psycopg.connect(self.url, autocommit=True, connect_timeout=10) as conn:
            yield conn

    @contextmanager
    def _write(self) -> Iterator[psycopg.Connection[Any]]:
        with self._connect() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_WRITE_LOCK,))
            yield conn

    def record(self, run: RunRecord) -> bool:
        return self.record_many([run]) == 1

    def record_many(self, runs: Sequence[RunRecord]) -> int:
        if not runs:
            return 0
        with self._write() as conn:
            return sum(_insert(conn, run) for run in runs)

    def recurring(self, limit: int = 20, fingerprints: Sequence[str] | None = None) -> list[Recurring]:
        with self._connect() as conn:
            return _SQL.recurring(conn.execute, limit, fingerprints)

    def rows(self, fingerprint: str | None = None, *, repository: str | None = None, job: str | None = None,
             commit: str | None = None, branch: str | None = None, limit: int = 50) -> list[HistoryRow]:
        with self._connect() as conn:
            return _SQL.rows(conn.execute, fingerprint, repository=repository, job=job, commit=commit,
                             branch=branch, limit=limit)

    def fingerprints_of(self, diagnosis_id: int) -> set[str]:
        with self._connect() as conn:
            return _SQL.fingerprints_of(conn.execute, diagnosis_id)

    def count(self) -> int:
        with self._connect() as conn:
            return _SQL.count(conn.execute)

    def prune_if_due(self, older_than_days: float, *, now: float | None = None) -> int:
        now = now or time.time()
        with self._connect() as conn:
            last = conn.execute("SELECT value FROM repopilot_history_meta WHERE name = 'pruned_at'").fetchone()
        if last is not None and now - float(last[0]) < _PRUNE_EVERY:
            return 0
        return self.prune(older_than_days, now=now)

    def prune(self, older_than_days: float, *, now: float | None = None) -> int:
        now = now or time.time()
        with self._write() as conn:
            gone = conn.execute("DELETE FROM repopilot_history_diagnoses WHERE recorded_at < %s",
                                (now - older_than_days * 86_400,)).rowcount
            conn.execute("INSERT INTO repopilot_history_meta VALUES ('pruned_at', %s) ON CONFLICT (name) DO UPDATE "
                         "SET value = EXCLUDED.value", (str(now),))
            if gone:
                _rebuild_summary(conn)
        return gone


def _insert(conn: psycopg.Connection[Any], run: RunRecord) -> bool:
    row = conn.execute(
        "INSERT INTO repopilot_history_diagnoses (key, recorded_at, repository, workflow, job, branch, commit_sha, "
        "run_id, attempt, url, source, category, conclusion) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) "
        "ON CONFLICT (key) DO NOTHING RETURNING id",
        (run.key(), run.recorded_at, run.repository, run.workflow, run.job, run.branch, run.commit,
         run.run_id, run.attempt, run.url, run.source, run.category, run.conclusion)).fetchone()
    if row is None:
        return False
    unique = {f.fingerprint: f for f in run.failures}
    with conn.cursor() as cur:
        cur.executemany("INSERT INTO repopilot_history_failures (diagnosis_id, fingerprint, rule, category, message) "
                        "VALUES (%s,%s,%s,%s,%s)",
                        [(row[0], f.fingerprint, f.rule, f.category, f.message[:500]) for f in unique.values()])
    for f in unique.values():
        _summarise(conn, f, run)
    if run.conclusion == "success" and run.commit:
        _passed(conn, run)
    return True


def _job_key(run: RunRecord) -> tuple[str, str, str]:
    return run.repository or "", run.job or "", run.commit or ""


def _passed(conn: psycopg.Connection[Any], run: RunRecord) -> None:
    # A job passing on a commit makes every fingerprint it failed with on that commit a flake there.
    if conn.execute("INSERT INTO repopilot_history_passes VALUES (%s,%s,%s) ON CONFLICT DO NOTHING",
                    _job_key(run)).rowcount:
        conn.execute("UPDATE repopilot_history_summary SET flaky_commits = flaky_commits + 1 WHERE fingerprint IN "
                     "(SELECT fingerprint FROM repopilot_history_fp_commits WHERE repository = %s AND job = %s AND "
                     "commit_sha = %s)", _job_key(run))


def _summarise(conn: psycopg.Connection[Any], f: FailureRow, run: RunRecord) -> None:
    conn.execute(
        "INSERT INTO repopilot_history_summary AS s (fingerprint, count, first_seen, last_seen, first_commit, rule, "
        "category, message) VALUES (%s,1,%s,%s,%s,%s,%s,%s) ON CONFLICT (fingerprint) DO UPDATE SET "
        "count = s.count + 1, first_commit = CASE WHEN EXCLUDED.first_seen < s.first_seen OR s.first_commit IS "
        "NULL THEN coalesce(EXCLUDED.first_commit, s.first_commit) ELSE s.first_commit END, "
        "first_seen = least(s.first_seen, EXCLUDED.first_seen), last_seen = greatest(s.last_seen, "
        "EXCLUDED.last_seen), rule = EXCLUDED.rule, category = EXCLUDED.category, message = EXCLUDED.message",
        (f.fingerprint, run.recorded_at, run.recorded_at, run.commit, f.rule, f.category, f.message[:500]))
    if run.branch:
        conn.execute("INSERT INTO repopilot_history_branches VALUES (%s, %s) ON CONFLICT DO NOTHING",
                     (f.fingerprint, run.branch))
    if run.commit and conn.execute("INSERT INTO repopilot_history_fp_commits VALUES (%s,%s,%s,%s) "
                                   "ON CONFLICT DO NOTHING", (f.fingerprint, *_job_key(run))).rowcount:
        conn.execute("UPDATE repopilot_history_summary SET commits = commits + 1, flaky_commits = flaky_commits + "
                     "(SELECT count(*) FROM repopilot_history_passes WHERE repository = %s AND job = %s AND "
                     "commit_sha = %s) "
                     "WHERE fingerprint = %s", (*_job_key(run), f.fingerprint))


_REBUILD = (
    "DELETE FROM repopilot_history_summary", "DELETE FROM repopilot_history_branches",
    "DELETE FROM repopilot_history_fp_commits", "DELETE FROM repopilot_history_passes",
    "INSERT INTO repopilot_history_passes SELECT DISTINCT coalesce(repository, ''), coalesce(job, ''), commit_sha "
    "FROM repopilot_history_diagnoses WHERE conclusion = 'success' AND commit_sha IS NOT NULL",
    "INSERT INTO repopilot_history_fp_commits SELECT DISTINCT f.fingerprint, coalesce(d.repository, ''), "
    "coalesce(d.job, ''), d.commit_sha FROM repopilot_history_failures f "
    "JOIN repopilot_history_diagnoses d ON d.id = f.diagnosis_id WHERE d.commit_sha IS NOT NULL",
    "INSERT INTO repopilot_history_summary (fingerprint, count, first_seen, last_seen, first_commit, rule, "
    "category, message, commits, flaky_commits) SELECT f.fingerprint, count(*), min(d.recorded_at), "
    "max(d.recorded_at), (SELECT d2.commit_sha FROM repopilot_history_failures f2 "
    "JOIN repopilot_history_diagnoses d2 ON d2.id = f2.diagnosis_id "
    "WHERE f2.fingerprint = f.fingerprint AND d2.commit_sha IS NOT NULL "
    "ORDER BY d2.recorded_at LIMIT 1), max(f.rule), max(f.category), max(f.message), "
    "(SELECT count(*) FROM repopilot_history_fp_commits c WHERE c.fingerprint = f.fingerprint), "
    "(SELECT count(*) FROM repopilot_history_fp_commits c JOIN repopilot_history_passes p "
    "USING (repository, job, commit_sha) WHERE c.fingerprint = f.fingerprint) "
    "FROM repopilot_history_failures f JOIN repopilot_history_diagnoses d ON d.id = f.diagnosis_id "
    "GROUP BY f.fingerprint",
    "INSERT INTO repopilot_history_branches SELECT DISTINCT f.fingerprint, d.branch FROM repopilot_history_failures f "
    "JOIN repopilot_history_diagnoses d ON d.id = f.diagnosis_id WHERE d.branch IS NOT NULL",
)


def _rebuild_summary(conn: psycopg.Connection[Any]) -> None:
    for statement in _REBUILD:
        conn.execute(statement.encode())
