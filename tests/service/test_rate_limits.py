"""GitHub API calls stay within each installation's rate limit: the worker reads `X-RateLimit-Remaining` and
`X-RateLimit-Reset` from every answer and, once an installation is down to its reserve, makes no further call with
its token: the job in hand and the ones after it wait in the queue for the reset (no 403, no hot loop), other
installations carry on, and `/metrics` shows it."""

from __future__ import annotations

import time
from typing import Any

import pytest

from repopilot.service import jobs
from tests.service.conftest import Service

procrastinate = pytest.importorskip("procrastinate")
from repopilot.service.queue import Backoff, RateLimited, Transient  # noqa: E402

REPO, OTHER = "octo/demo", "elsewhere/tool"


def _deliver(service: Service, repo: str, run_id: int) -> None:
    payload = service.github.add_run(repo, run_id, head_sha=f"{run_id:x}" * 40, pull_request=run_id)
    assert service.deliver("workflow_run", payload).status_code == 202


def test_an_installation_down_to_its_reserve_waits_for_the_reset(service: Service,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    gh, reserve = service.github, service.settings.github_reserve
    gh.add_repo(REPO, 7)
    gh.add_repo(OTHER, 8)
    gh.limit_rate(7, remaining=reserve + 3, reset_in=3600)  # three calls to spend, fewer than one job needs
    for run_id in (1, 2, 3):
        _deliver(service, REPO, run_id)
    service.work()
    spent = [c for c in gh.calls if c.path.startswith(f"/repos/{REPO}/")]
    assert len(spent) == 3 and gh.rate_limits[7][0] == reserve  # the reserve is untouched
    assert all(c.status != 403 for c in gh.calls)  # never ran into the limit
    # Every job waits for the reset (an hour away), scheduled once, not retried in a loop.
    assert service.sql("SELECT count(*) FROM procrastinate_jobs WHERE status = 'todo' AND attempts = 1 AND "
                       "scheduled_at > now() + interval '3500 seconds'") == [(3,)]
    assert service.sql("SELECT outcome, count(*) FROM repopilot_job_runs GROUP BY 1") == [("deferred", 3)]
    # Another installation's work goes on meanwhile.
    _deliver(service, OTHER, 4)
    service.work()
    assert [c["repo"] for c in gh.check_runs] == [OTHER]
    metrics = service.client.get("/metrics").text
    assert f'repopilot_github_rate_remaining{{installation="7"}} {reserve}' in metrics
    assert 'repopilot_github_rate_deferrals_total{installation="7"} 3' in metrics
    # The window resets: the jobs run, each once.
    gh.limit_rate(7, remaining=5000)
    rt = jobs.runtime()
    monkeypatch.setattr(rt.quota, "clock", lambda: 1e10)  # this worker's notion of now: past the reset
    service.sql("UPDATE procrastinate_jobs SET scheduled_at = now()")
    service.work()
    assert service.sql("SELECT status::text, count(*) FROM procrastinate_jobs GROUP BY 1") == [("succeeded", 4)]
    assert sorted(c["repo"] for c in gh.check_runs) == [OTHER, REPO, REPO, REPO]
    assert all(c.status != 403 for c in gh.calls)


def _job(attempts: int) -> Any:
    return procrastinate.jobs.Job(queue="github", lock=None, queueing_lock=None, task_name="repopilot:diagnose",
                                  attempts=attempts)


def _seconds(decision: Any) -> float | None:
    return None if decision is None else decision.retry_at.timestamp() - time.time()


def test_a_deferral_for_a_rate_limit_is_not_a_failed_attempt() -> None:
    backoff = Backoff(attempts=3, base=2.0)
    # Seven runs so far, all put off for a rate limit: a first real fault still gets the first backoff.
    first = _seconds(backoff.get_retry_decision(exception=Transient("502", deferred=7), job=_job(7)))
    assert first is not None and 0 < first <= 2.5
    # Two of three runs failed (one was put off): the third failure is the last.
    assert backoff.get_retry_decision(exception=Transient("502", deferred=1), job=_job(2)) is not None
    assert backoff.get_retry_decision(exception=Transient("502", deferred=1), job=_job(3)) is None
    # The deferrals have their own bound; past it a rate limit counts as a failure like any other.
    capped = Backoff(attempts=3, deferrals=4)
    assert _seconds(capped.get_retry_decision(exception=RateLimited("429", 600, deferred=2), job=_job(2))) > 500
    assert capped.get_retry_decision(exception=RateLimited("429", 600, deferred=3), job=_job(3)) is not None
    assert capped.get_retry_decision(exception=RateLimited("429", 600, deferred=3), job=_job(5)) is None


def test_a_job_that_waited_out_rate_limits_keeps_its_retries(service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    """Put off nine times (more than the eight tries a job has), then a GitHub outage: still retried, then done."""
    gh, reserve = service.github, service.settings.github_reserve
    gh.add_repo(REPO, 7)
    gh.limit_rate(7, remaining=reserve + 3, reset_in=3600)
    _deliver(service, REPO, 1)
    for _ in range(9):
        service.work()
        service.sql("UPDATE procrastinate_jobs SET scheduled_at = now()")
    assert service.sql("SELECT outcome, count(*) FROM repopilot_job_runs GROUP BY 1") == [("deferred", 9)]
    gh.limit_rate(7, remaining=5000)
    monkeypatch.setattr(jobs.runtime().quota, "clock", lambda: 1e10)  # past the reset
    gh.fail(rf"/repos/{REPO}/", 502, times=50)  # beyond the client's own retries
    service.work()
    assert service.sql("SELECT status::text, attempts FROM procrastinate_jobs") == [("todo", 10)]
    gh.faults.clear()
    service.sql("UPDATE procrastinate_jobs SET scheduled_at = now()")
    service.work()
    assert service.sql("SELECT status::text FROM procrastinate_jobs") == [("succeeded",)]
    assert [c["repo"] for c in gh.check_runs] == [REPO]
