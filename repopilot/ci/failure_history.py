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
from .history_records import FailureRow, HistoryRow, Recurring, RunRecord
from .history_sql import HistorySQL

__all__ = ["HistoryStore"]

_SQL = HistorySQL(param="?", diagnoses="diagnoses", failures="failures", summary="summary",
                  branches="summary_branches")
_BUSY_MS = 30_000
_PRUNE_EVERY = 86_400.0  # recording prunes at most once a day
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

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, timeout=_BUSY_MS / 1000, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"cannot open the failure history {self.path}: {exc}") from None
        with closing(db):
            try:
                db.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")
                db.execute("PRAGMA journal_mode = WAL")
                db.execute("PRAGMA foreign_keys = ON")
                db.execute("PRAGMA synchronous = NORMAL")
                db.executescript(_SCHEMA)
            except sqlite3.DatabaseError as exc:
                raise ConfigError(f"{self.path} is not a RepoPilot failure history ({exc}); move it away or "
                                  "set `history` to another file") from None
            yield db

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
            return sum(_insert(db, run) for run in runs)

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
            last = db.execute("SELECT value FROM meta WHERE name = 'pruned_at'").fetchone()
        if last is not None and now - float(last[0]) < _PRUNE_EVERY:
            return 0
        return self.prune(older_than_days, now=now)

    def prune(self, older_than_days: float, *, now: float | None = None) -> int:
        """Forget diagnoses recorded more than `older_than_days` ago; returns how many. The summary is rebuilt
        from what is left."""
        cutoff = (now or time.time()) - older_than_days * 86_400
        with self._write() as db:
            gone = db.execute("DELETE FROM diagnoses WHERE recorded_at < ?", (cutoff,)).rowcount
            db.execute("INSERT OR REPLACE INTO meta VALUES ('pruned_at', ?)", (str(now or time.time()),))
            if gone:
                _rebuild_summary(db)
        return gone


def _insert(db: sqlite3.Connection, run: RunRecord) -> bool:
    cur = db.execute(
        "INSERT OR IGNORE INTO diagnoses (key, recorded_at, repository, workflow, job, branch, commit_sha, "
        "run_id, attempt, url, source, category, conclusion) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
        (run.key(), run.recorded_at, run.repository, run.workflow, run.job, run.branch, run.commit,
         run.run_id, run.attempt, run.url, run.source, run.category, run.conclusion))
    if cur.rowcount == 0:
        return False
    unique = {f.fingerprint: f for f in run.failures}
    db.executemany("INSERT INTO failures (diagnosis_id, fingerprint, rule, category, message) VALUES (?,?,?,?,?)",
                   [(cur.lastrowid, f.fingerprint, f.rule, f.category, f.message[:500]) for f in unique.values()])
    for f in unique.values():
        _summarise(db, f, run)
    if run.conclusion == "success" and run.commit:
        _passed(db, run)
    return True


def _job_key(run: RunRecord) -> tuple[str, str, str]:
    return run.repository or "", run.job or "", run.commit or ""


def _passed(db: sqlite3.Connection, run: RunRecord) -> None:
    # A job passing on a commit makes every fingerprint it failed with on that commit a flake there.
    if db.execute("INSERT OR IGNORE INTO passes VALUES (?,?,?)", _job_key(run)).rowcount:
        db.execute("UPDATE summary SET flaky_commits = flaky_commits + 1 WHERE fingerprint IN (SELECT fingerprint "
                   "FROM fp_commits WHERE repository = ? AND job = ? AND commit_sha = ?)", _job_key(run))


def _summarise(db: sqlite3.Connection, f: FailureRow, run: RunRecord) -> None:
    db.execute(
        "INSERT INTO summary (fingerprint, count, first_seen, last_seen, first_commit, rule, category, message) "
        "VALUES (?,1,?,?,?,?,?,?) ON CONFLICT(fingerprint) DO UPDATE SET count = count + 1, "
        "first_commit = CASE WHEN excluded.first_seen < first_seen OR first_commit IS NULL "
        "  THEN coalesce(excluded.first_commit, first_commit) ELSE first_commit END, "
        "first_seen = min(first_seen, excluded.first_seen), last_seen = max(last_seen, excluded.last_seen), "
        "rule = excluded.rule, category = excluded.category, message = excluded.message",
        (f.fingerprint, run.recorded_at, run.recorded_at, run.commit, f.rule, f.category, f.message[:500]))
    if run.branch:
        db.execute("INSERT OR IGNORE INTO summary_branches VALUES (?, ?)", (f.fingerprint, run.branch))
    if run.commit and db.execute("INSERT OR IGNORE INTO fp_commits VALUES (?,?,?,?)",
                                 (f.fingerprint, *_job_key(run))).rowcount:
        passed = db.execute("SELECT count(*) FROM passes WHERE repository = ? AND job = ? AND commit_sha = ?",
                            _job_key(run)).fetchone()[0]
        db.execute("UPDATE summary SET commits = commits + 1, flaky_commits = flaky_commits + ? "
                   "WHERE fingerprint = ?", (passed, f.fingerprint))


def _rebuild_summary(db: sqlite3.Connection) -> None:
    for statement in ("DELETE FROM summary", "DELETE FROM summary_branches", "DELETE FROM fp_commits",
                      "DELETE FROM passes"):
        db.execute(statement)
    db.execute("INSERT OR IGNORE INTO passes SELECT coalesce(repository, ''), coalesce(job, ''), commit_sha "
               "FROM diagnoses WHERE conclusion = 'success' AND commit_sha IS NOT NULL")
    db.execute("INSERT OR IGNORE INTO fp_commits SELECT f.fingerprint, coalesce(d.repository, ''), "
               "coalesce(d.job, ''), d.commit_sha FROM failures f JOIN diagnoses d ON d.id = f.diagnosis_id "
               "WHERE d.commit_sha IS NOT NULL")
    db.execute(
        "INSERT INTO summary SELECT f.fingerprint, count(*), min(d.recorded_at), max(d.recorded_at), "
        "(SELECT d2.commit_sha FROM failures f2 JOIN diagnoses d2 ON d2.id = f2.diagnosis_id "
        "  WHERE f2.fingerprint = f.fingerprint AND d2.commit_sha IS NOT NULL ORDER BY d2.recorded_at LIMIT 1), "
        "max(f.rule), max(f.category), max(f.message), "
        "(SELECT count(*) FROM fp_commits c WHERE c.fingerprint = f.fingerprint), "
        "(SELECT count(*) FROM fp_commits c JOIN passes p USING (repository, job, commit_sha) "
        "  WHERE c.fingerprint = f.fingerprint) "
        "FROM failures f JOIN diagnoses d ON d.id = f.diagnosis_id GROUP BY f.fingerprint")
    db.execute("INSERT OR IGNORE INTO summary_branches SELECT DISTINCT f.fingerprint, d.branch FROM failures f "
               "JOIN diagnoses d ON d.id = f.diagnosis_id WHERE d.branch IS NOT NULL")
