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

from ..app import HistoryRow, HistorySQL, Recurring, RunRecord

__all__ = ["HISTORY_SCHEMA", "PostgresHistory"]

_WRITE_LOCK = 0x68697374  # "hist": the advisory lock every writer of the history takes
# The queries are the SQLite file's (ci/history_sql.py), on these tables with psycopg's parameter marker.
_SQL = HistorySQL(param="%s", diagnoses="repopilot_history_diagnoses", failures="repopilot_history_failures",
                  summary="repopilot_history_summary", branches="repopilot_history_branches",
                  fp_commits="repopilot_history_fp_commits", passes="repopilot_history_passes",
                  meta="repopilot_history_meta")
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
            return sum(_SQL.insert(conn.execute, run) for run in runs)

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
            due = _SQL.prune_due(conn.execute, now)
        return self.prune(older_than_days, now=now) if due else 0

    def prune(self, older_than_days: float, *, now: float | None = None) -> int:
        now = now or time.time()
        with self._write() as conn:
            return _SQL.prune(conn.execute, now - older_than_days * 86_400, now)
