"""The failure history: every diagnosis recorded in a local SQLite file, so a failure is recognised the next time
(`seen 4 times since 2026-11-02, first on 1a2b3c4`), recurring failures can be listed, and flakes and inherited
failures can be told from new ones (ci/attribution.py).

One file, many writers: two CI jobs or two terminals may record at once. The database runs in WAL mode (readers
never block the writer), every write is one `BEGIN IMMEDIATE` transaction, and a writer that finds the file busy
waits (`busy_timeout`) instead of failing, so nothing recorded is lost. A per-fingerprint summary table is kept
in the same transactions, so listing recurring failures reads one row per fingerprint, not every diagnosis.
Standard library only (sqlite3); the application layer says where the file is and how long rows are kept.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path

from ..core import ConfigError
from .history_records import HistoryRow, Recurring, RunRecord
from .history_sql import HistorySQL

__all__ = ["HistoryStore"]

_SQL = HistorySQL(param="?", diagnoses="diagnoses", failures="failures", summary="summary",
                  branches="summary_branches", fp_commits="fp_commits", passes="passes", meta="meta")
_BUSY_MS = 30_000
_SCHEMA = """
CREATE TABLE IF NOT EXISTS diagnoses (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    recorded_at REAL NOT NULL,
    repository TEXT, workflow TEXT, job TEXT, branch TEXT, commit_sha TEXT,
    run_id TEXT, attempt INTEGER, url TEXT, source TEXT, category TEXT,
    conclusion TEXT NOT NULL DEFAULT 'failure'
);
CREATE INDEX IF NOT EXISTS diagnoses_time ON diagnoses(recorded_at);
CREATE INDEX IF NOT EXISTS diagnoses_commit ON diagnoses(commit_sha, job);
CREATE TABLE IF NOT EXISTS failures (
    diagnosis_id INTEGER NOT NULL REFERENCES diagnoses(id) ON DELETE CASCADE,
    fingerprint TEXT NOT NULL, rule TEXT, category TEXT, message TEXT
);
CREATE INDEX IF NOT EXISTS failures_fp ON failures(fingerprint, diagnosis_id);
CREATE INDEX IF NOT EXISTS failures_diag ON failures(diagnosis_id);
CREATE TABLE IF NOT EXISTS summary (
    fingerprint TEXT PRIMARY KEY, count INTEGER NOT NULL, first_seen REAL NOT NULL, last_seen REAL NOT NULL,
    first_commit TEXT, rule TEXT, category TEXT, message TEXT,
    commits INTEGER NOT NULL DEFAULT 0, flaky_commits INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS summary_count ON summary(count DESC, last_seen DESC);
CREATE TABLE IF NOT EXISTS summary_branches (
    fingerprint TEXT NOT NULL, branch TEXT NOT NULL, PRIMARY KEY (fingerprint, branch)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS fp_commits (
    fingerprint TEXT NOT NULL, repository TEXT NOT NULL, job TEXT NOT NULL, commit_sha TEXT NOT NULL,
    PRIMARY KEY (fingerprint, repository, job, commit_sha)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS fp_commits_job ON fp_commits(repository, job, commit_sha);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS passes (
    repository TEXT NOT NULL, job TEXT NOT NULL, commit_sha TEXT NOT NULL,
    PRIMARY KEY (repository, job, commit_sha)
) WITHOUT ROWID;
"""


class HistoryStore:
    """The history file at `path` (created on first use, with its directory)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._holding = False  # inside `held()`: the first call's connection is kept for the next ones
        self._held: sqlite3.Connection | None = None

    @contextmanager
    def held(self) -> Iterator[None]:
        """Every call inside on one connection, opened by the first that needs it and closed on leaving. A diagnose
        reads the history, records and reads it again (five calls or more): opening the file and setting the
        connection up (its pragmas, the schema) each time cost more than the queries did."""
        if self._holding:
            yield
            return
        self._holding = True
        try:
            yield
        finally:
            self._holding = False
            db, self._held = self._held, None
            if db is not None:
                db.close()

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        if self._held is not None:
            yield self._held
            return
        db = self._open()
        if self._holding:
            self._held = db  # closed by `held()`
            yield db
            return
        with closing(db):
            yield db

    def _open(self) -> sqlite3.Connection:
        """A connection to the file, set up (and the schema made) or ConfigError."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=_BUSY_MS / 1000, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"cannot open the failure history {self.path}: {exc}") from None
        try:
            db.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA foreign_keys = ON")
            db.execute("PRAGMA synchronous = NORMAL")
            db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            db.close()
            raise ConfigError(f"{self.path} is not a RepoPilot failure history ({exc}); move it away or "
                              "set `history` to another file") from None
        except BaseException:
            db.close()
            raise
        return db

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")  # take the write lock now: no upgrade deadlock between two writers
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def record(self, run: RunRecord) -> bool:
        """Record one diagnosis; False when the same one was recorded before (nothing is counted twice)."""
        return self.record_many([run]) == 1

    def record_many(self, runs: Sequence[RunRecord]) -> int:
        """Record several diagnoses in one transaction; returns how many were new."""
        with self._write() as db:
            return sum(_SQL.insert(db.execute, run) for run in runs)

    def recurring(self, limit: int = 20, fingerprints: Sequence[str] | None = None) -> list[Recurring]:
        """The most recorded fingerprints (or the given ones), most frequent first."""
        with self._connect() as db:
            return _SQL.recurring(db.execute, limit, fingerprints)

    def rows(self, fingerprint: str | None = None, *, repository: str | None = None, job: str | None = None,
             commit: str | None = None, branch: str | None = None, limit: int = 50) -> list[HistoryRow]:
        """Recorded diagnoses (newest first): those with `fingerprint`, or the passes and failures of `job` at
        `commit` when no fingerprint is given."""
        with self._connect() as db:
            return _SQL.rows(db.execute, fingerprint, repository=repository, job=job, commit=commit,
                             branch=branch, limit=limit)

    def fingerprints_of(self, diagnosis_id: int) -> set[str]:
        with self._connect() as db:
            return _SQL.fingerprints_of(db.execute, diagnosis_id)

    def count(self) -> int:
        with self._connect() as db:
            return _SQL.count(db.execute)

    def prune_if_due(self, older_than_days: float, *, now: float | None = None) -> int:
        """Prune when the last prune is more than a day old (so the file stays bounded without a cron job)."""
        now = now or time.time()
        with self._connect() as db:
            due = _SQL.prune_due(db.execute, now)
        return self.prune(older_than_days, now=now) if due else 0

    def prune(self, older_than_days: float, *, now: float | None = None) -> int:
        """Forget diagnoses recorded more than `older_than_days` ago; returns how many. The summary is rebuilt
        from what is left."""
        now = now or time.time()
        with self._write() as db:
            return _SQL.prune(db.execute, now - older_than_days * 86_400, now)
