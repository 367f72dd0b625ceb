"""GitHub API calls stay within each installation's rate limit: the worker reads `X-RateLimit-Remaining` and
`X-RateLimit-Reset` from every answer and, once an installation is down to its reserve, makes no further call with
its token: the job in hand and the ones after it wait in the queue for the reset (no 403, no hot loop), other
installations carry on, and `/metrics` shows it."""

from __future__ import annotations

import pytest

from repopilot.service import jobs
from tests.service.conftest import Service

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
