"""The jobs on Procrastinate (PostgreSQL): which queue each kind of work goes to, its lock, its retries, and the
recovery of jobs whose worker died.

- `github` queue: diagnose a failed run, approve a proposal. `model` queue: fix runs (they call the model); the
  worker bounds how many run at once across every machine (see `jobs.model_slot`).
- Lock: one job at a time per (repository, pull request); Procrastinate runs jobs that share a lock in order.
- Retries: a `Transient` fault (GitHub 5xx or rate limit after the client's own retries, a database
  restart) is retried later with exponential backoff, or at the time GitHub asked; anything else fails the job.
- A worker killed mid-job stops sending heartbeats; any other worker puts its jobs back in the queue
  (`recover_stalled`), and the job runs again elsewhere (jobs are idempotent against GitHub's state).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from typing import Any

import procrastinate
from procrastinate.retry import BaseRetryStrategy, RetryDecision

from .events import Work

__all__ = ["DEFER_SQL", "QUEUES", "TASKS", "RateLimited", "Transient", "defer_params", "make_queue", "recover_stalled"]

_log = logging.getLogger(__name__)
QUEUES = ("github", "model")
TASKS = {"diagnose": "github", "approve": "github", "fix": "model"}
NAMESPACE = "repopilot"
_LONGEST_WINDOW = 7200  # GitHub's rate-limit windows are an hour: a reset further off than this is not believed


class Transient(Exception):
    """A fault worth retrying later; `wait` is how long GitHub asked us to wait (0: our own backoff); `deferred`,
    how many of the job's earlier attempts were put off for a rate limit (they failed nothing: see `Backoff`)."""

    def __init__(self, message: str, wait: float = 0.0, *, deferred: int = 0) -> None:
        super().__init__(message)
        self.wait = wait
        self.deferred = deferred


class RateLimited(Transient):
    """The installation's GitHub API calls are spent down to the reserve: run the job again at the reset."""


class Backoff(BaseRetryStrategy):
    """2, 4, 8 … seconds (capped), or as long as GitHub asked, for at most `attempts` failed tries. A job put off
    for a rate limit runs again exactly at the reset, up to `deferrals` times (a window is an hour at most); a
    deferral is not a failed try, so a job that waited out a rate limit still has all its retries."""

    def __init__(self, attempts: int = 8, base: float = 2.0, cap: float = 300.0, deferrals: int = 48) -> None:
        self.attempts, self.base, self.cap, self.deferrals = attempts, base, cap, deferrals

    def get_retry_decision(self, *, exception: BaseException, job: procrastinate.jobs.Job) -> RetryDecision | None:
        if not isinstance(exception, Transient):
            return None
        deferred = max(0, min(exception.deferred, job.attempts))
        if isinstance(exception, RateLimited) and deferred + 1 < self.deferrals:
            return RetryDecision(retry_in={"seconds": max(1, min(_LONGEST_WINDOW, math.ceil(exception.wait)))})
        failed = job.attempts - deferred  # the earlier attempts that failed; this one fails too
        if failed + 1 >= self.attempts:
            return None
        wait = min(self.cap, max(exception.wait, self.base * 2 ** failed))
        return RetryDecision(retry_in={"seconds": int(wait) or 1})


def _run(kind: str, context: procrastinate.JobContext, work: dict[str, Any], received: float) -> None:
    from .jobs import run_job  # the worker's runtime (GitHub App, store); the receiver never imports it

    job = context.job
    run_job(kind, work, received=received, job_id=job.id or 0, attempt=job.attempts,
            worker=context.worker_name or "worker")


def _task(kind: str) -> Any:
    def task(context: procrastinate.JobContext, work: dict[str, Any], received: float) -> None:
        _run(kind, context, work, received)

    task.__name__ = kind
    return task


def make_queue(database_url: str) -> procrastinate.App:
    """The Procrastinate app with RepoPilot's tasks (one per process, or several in tests)."""
    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=database_url))
    for kind, queue in TASKS.items():
        app.task(name=f"{NAMESPACE}:{kind}", queue=queue, pass_context=True, retry=Backoff())(_task(kind))
    return app


# Queue the job and record its delivery id in ONE statement (one round trip, one transaction): the job and the
# delivery row exist together or not at all. A replayed delivery id violates the primary key and the whole
# statement, the queued job included, is rolled back. `procrastinate_defer_jobs_v1` is the versioned SQL function
# Procrastinate's own `defer` calls (its schema keeps old versions while jobs may use them).
DEFER_SQL = """
WITH job AS (
    SELECT unnest(procrastinate_defer_jobs_v1(ARRAY[
        ROW(%(queue)s, %(task)s, 0, %(lock)s, NULL, %(args)s::jsonb, NULL)::procrastinate_job_to_defer_v1])) AS id
)
INSERT INTO repopilot_deliveries (delivery_id, event, kind, job_id)
SELECT %(delivery)s, %(event)s, %(kind)s, id FROM job RETURNING job_id
"""


def defer_params(work: Work, *, delivery: str, event: str) -> dict[str, Any]:
    """The parameters of DEFER_SQL for `work`."""
    args = {"work": work.model_dump(mode="json"), "received": time.time()}
    return {"queue": TASKS[work.kind], "task": f"{NAMESPACE}:{work.kind}", "lock": work.lock(),
            "args": json.dumps(args), "delivery": delivery, "event": event, "kind": work.kind}


async def recover_stalled(app: procrastinate.App, *, after: float) -> int:
    """Put back in the queue the jobs of workers silent for `after` seconds; returns how many."""
    stalled = list(await app.job_manager.get_stalled_jobs(seconds_since_heartbeat=after))
    for job in stalled:
        await app.job_manager.retry_job(job)
    return len(stalled)


async def recover_forever(app: procrastinate.App, *, after: float, every: float) -> None:
    while True:
        await asyncio.sleep(every)
        try:
            await recover_stalled(app, after=after)
        except Exception as exc:  # the database restarting: the next round tries again
            _log.warning("stalled-job recovery failed (%s); trying again in %.0f s", type(exc).__name__, every)
