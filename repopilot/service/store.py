"""The service's own tables in PostgreSQL, beside Procrastinate's queue: deliveries seen (the idempotency key of
the receiver), job executions (latency, outcome), traces (service mode keeps them here, not in files), and each
installation's model spend (the budget). One server holds the queue and all of this."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from ..core import RunTrace

__all__ = ["SCHEMA", "Store"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS repopilot_deliveries (
    delivery_id text PRIMARY KEY,
    event text NOT NULL,
    kind text,
    job_id bigint,
    received_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS repopilot_job_runs (
    job_id bigint NOT NULL,
    attempt int NOT NULL,
    kind text NOT NULL,
    repo text NOT NULL,
    worker text,
    queued_s double precision,
    started_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    outcome text,
    PRIMARY KEY (job_id, attempt)
);
CREATE TABLE IF NOT EXISTS repopilot_traces (
    run_id text PRIMARY KEY,
    command text NOT NULL,
    status text NOT NULL,
    started_at text NOT NULL,
    repo text,
    trace jsonb NOT NULL,
    saved_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS repopilot_proposals (
    repo text NOT NULL,
    pull_request int NOT NULL,
    sha256 text NOT NULL,
    run_id text NOT NULL,
    comment_id bigint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (repo, pull_request, sha256)
);
CREATE INDEX IF NOT EXISTS repopilot_proposals_comment ON repopilot_proposals (repo, comment_id);
CREATE TABLE IF NOT EXISTS repopilot_rate_limits (
    installation_id bigint PRIMARY KEY,
    remaining int NOT NULL,
    quota int NOT NULL,
    reset_at double precision NOT NULL,
    observed_at double precision NOT NULL,
    deferred bigint NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS repopilot_model_usage (
    installation_id bigint NOT NULL,
    day date NOT NULL DEFAULT current_date,
    calls int NOT NULL DEFAULT 0,
    input_tokens bigint NOT NULL DEFAULT 0,
    output_tokens bigint NOT NULL DEFAULT 0,
    cost_usd double precision NOT NULL DEFAULT 0,
    PRIMARY KEY (installation_id, day)
);
"""


class Store:
    """Synchronous access for the worker's jobs and the CLI (one short connection per call: jobs are seconds long,
    and a restarted server is simply reconnected to)."""

    def __init__(self, url: str) -> None:
        self.url = url

    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection[Any]]:
        with psycopg.connect(self.url, autocommit=True, connect_timeout=10) as conn:
            yield conn

    def create(self) -> None:
        with self._conn() as conn:
            conn.execute(SCHEMA)

    def job_started(self, job_id: int, attempt: int, kind: str, repo: str, worker: str, queued_s: float) -> None:
        with self._conn() as conn:
            conn.execute("INSERT INTO repopilot_job_runs (job_id, attempt, kind, repo, worker, queued_s) "
                         "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (job_id, attempt) DO UPDATE SET "
                         "started_at = now(), worker = EXCLUDED.worker",
                         (job_id, attempt, kind, repo, worker, queued_s))

    def job_finished(self, job_id: int, attempt: int, outcome: str) -> None:
        with self._conn() as conn:
            conn.execute("UPDATE repopilot_job_runs SET finished_at = now(), outcome = %s "
                         "WHERE job_id = %s AND attempt = %s", (outcome, job_id, attempt))

    def deferrals_before(self, job_id: int, attempt: int) -> int:
        """How many of a job's attempts before `attempt` were put off for a rate limit (not failures)."""
        with self._conn() as conn:
            row = conn.execute("SELECT count(*) FROM repopilot_job_runs WHERE job_id = %s AND attempt < %s AND "
                               "outcome = 'deferred'", (job_id, attempt)).fetchone()
        return int(row[0]) if row else 0

    def save_trace(self, trace: RunTrace) -> None:
        data = trace.model_dump(mode="json")
        with self._conn() as conn:
            conn.execute("INSERT INTO repopilot_traces AS t (run_id, command, status, started_at, repo, trace) "
                         "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (run_id) DO UPDATE SET status = "
                         "EXCLUDED.status, trace = EXCLUDED.trace, saved_at = now() WHERE "
                         # Never back to an earlier state of the run (a copy read while the run was being written).
                         "jsonb_array_length(EXCLUDED.trace->'steps') > jsonb_array_length(t.trace->'steps') OR "
                         "(jsonb_array_length(EXCLUDED.trace->'steps') = jsonb_array_length(t.trace->'steps') AND "
                         "(EXCLUDED.status <> 'running' OR t.status = 'running'))",
                         (trace.run_id, trace.command, trace.status, trace.started_at, trace.repo,
                          json.dumps(data)))

    def load_trace(self, run_id: str) -> RunTrace | None:
        with self._conn() as conn:
            row = conn.execute("SELECT trace FROM repopilot_traces WHERE run_id = %s", (run_id,)).fetchone()
        return RunTrace.model_validate(row[0]) if row else None

    def list_traces(self, limit: int = 1000) -> list[RunTrace]:
        """Newest first, like the files' listing."""
        with self._conn() as conn:
            rows = conn.execute("SELECT trace FROM repopilot_traces ORDER BY started_at DESC, run_id DESC "
                                "LIMIT %s", (limit,)).fetchall()
        return [RunTrace.model_validate(r[0]) for r in rows]

    def add_proposal(self, repo: str, pull_request: int, sha256: str, run_id: str, comment_id: int) -> None:
        with self._conn() as conn:
            conn.execute("INSERT INTO repopilot_proposals (repo, pull_request, sha256, run_id, comment_id) VALUES "
                         "(%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING", (repo, pull_request, sha256, run_id,
                                                                         comment_id))

    def proposal_run(self, repo: str, pull_request: int, sha256: str) -> str | None:
        """The fix run that proposed the diff hashing to `sha256` on this pull request."""
        with self._conn() as conn:
            row = conn.execute("SELECT run_id FROM repopilot_proposals WHERE repo = %s AND pull_request = %s AND "
                               "sha256 = %s", (repo, pull_request, sha256)).fetchone()
        return str(row[0]) if row else None

    def proposal_for_command(self, repo: str, comment_id: int) -> str | None:
        """The fix run a `/repopilot fix` comment already started (a job run twice answers with it)."""
        with self._conn() as conn:
            row = conn.execute("SELECT run_id FROM repopilot_proposals WHERE repo = %s AND comment_id = %s",
                               (repo, comment_id)).fetchone()
        return str(row[0]) if row else None

    def rate_limit(self, installation_id: int) -> tuple[int, int, float, float] | None:
        """The newest (remaining, limit, reset, observed) any worker saw for the installation's GitHub token."""
        with self._conn() as conn:
            row = conn.execute("SELECT remaining, quota, reset_at, observed_at FROM repopilot_rate_limits WHERE "
                               "installation_id = %s", (installation_id,)).fetchone()
        return (int(row[0]), int(row[1]), float(row[2]), float(row[3])) if row else None

    def note_rate_limit(self, installation_id: int, remaining: int, limit: int, reset: float,
                        observed: float) -> None:
        """Keep an observation unless a worker already noted a newer one."""
        with self._conn() as conn:
            conn.execute("INSERT INTO repopilot_rate_limits AS r (installation_id, remaining, quota, reset_at, "
                         "observed_at) VALUES (%s, %s, %s, %s, %s) ON CONFLICT (installation_id) DO UPDATE SET "
                         "remaining = EXCLUDED.remaining, quota = EXCLUDED.quota, reset_at = EXCLUDED.reset_at, "
                         "observed_at = EXCLUDED.observed_at WHERE EXCLUDED.observed_at >= r.observed_at",
                         (installation_id, remaining, limit, reset, observed))

    def rate_deferred(self, installation_id: int) -> None:
        """Count a job put off until the installation's rate limit resets (`/metrics`)."""
        with self._conn() as conn:
            conn.execute("UPDATE repopilot_rate_limits SET deferred = deferred + 1 WHERE installation_id = %s",
                         (installation_id,))

    def spent_today(self, installation_id: int) -> float:
        with self._conn() as conn:
            row = conn.execute("SELECT cost_usd FROM repopilot_model_usage WHERE installation_id = %s AND "
                               "day = current_date", (installation_id,)).fetchone()
        return float(row[0]) if row else 0.0

    def add_usage(self, installation_id: int, calls: int, input_tokens: int, output_tokens: int,
                  cost: float) -> None:
        with self._conn() as conn:
            conn.execute("INSERT INTO repopilot_model_usage AS u (installation_id, calls, input_tokens, "
                         "output_tokens, cost_usd) VALUES (%s, %s, %s, %s, %s) ON CONFLICT (installation_id, day) "
                         "DO UPDATE SET calls = u.calls + EXCLUDED.calls, input_tokens = u.input_tokens + "
                         "EXCLUDED.input_tokens, output_tokens = u.output_tokens + EXCLUDED.output_tokens, "
                         "cost_usd = u.cost_usd + EXCLUDED.cost_usd",
                         (installation_id, calls, input_tokens, output_tokens, cost))

