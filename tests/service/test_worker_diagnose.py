"""`repopilot worker` on a failed run: diagnosed once, published as one check run and one PR comment, kept
current (never duplicated) when the job runs again, with the App's token fetched once and never logged."""

from __future__ import annotations

import logging

import pytest

from repopilot.app import COMMENT_MARKER
from repopilot.service import Store
from tests.service.conftest import Service

REPO = "octo/demo"


def _deliver_failed_run(service: Service, run_id: int = 1, delivery: str = "d-1", pr: int | None = 12) -> None:
    service.github.add_repo(REPO, 7)
    payload = service.github.add_run(REPO, run_id, head_sha="ab" * 20, pull_request=pr)
    assert service.deliver("workflow_run", payload, delivery=delivery).status_code == 202


def test_a_failed_run_gets_one_check_run_and_one_comment(service: Service, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    _deliver_failed_run(service)
    service.work()
    gh = service.github
    assert [(c["name"], c["external_id"], c["conclusion"]) for c in gh.check_runs] == [("RepoPilot", "1", "neutral")]
    assert "assert -1 == 5" in gh.check_runs[0]["output"]["summary"]
    comments = gh.comments_on(REPO, 12)
    assert len(comments) == 1 and comments[0]["body"].startswith(COMMENT_MARKER)
    assert "tests/test_calc.py" in comments[0]["body"]
    assert service.sql("SELECT status::text FROM procrastinate_jobs") == [("succeeded",)]
    assert service.sql("SELECT kind, outcome FROM repopilot_job_runs") == [("diagnose", "succeeded")]
    # The App authenticated with its JWT once; every other call used the installation token.
    exchanges = gh.made("POST", r"^/app/installations/7/access_tokens$")
    assert len(exchanges) == 1
    token = next(iter(gh.tokens))
    assert all(c.auth == f"Bearer {token}" for c in gh.calls if c.path.startswith("/repos/"))
    assert token not in caplog.text and service.settings.private_key not in caplog.text
    # The diagnosis's trace is kept in PostgreSQL.
    traces = Store(service.settings.database_url).list_traces()
    assert [t.command for t in traces] == ["diagnose"] and traces[0].status == "completed"


def test_running_the_job_again_updates_instead_of_duplicating(service: Service) -> None:
    _deliver_failed_run(service)
    service.work()
    # The same work again (a retried job, a worker that died after publishing, a re-run of the workflow).
    _deliver_failed_run(service, delivery="d-2")
    service.work()
    gh = service.github
    assert len(gh.check_runs) == 1 and gh.check_runs[0]["updates"] == 1
    comments = gh.comments_on(REPO, 12)
    assert len(comments) == 1 and comments[0]["edits"] == 1
    assert len(gh.made("POST", r"/access_tokens$")) == 1  # the token was cached by the worker runtime


def test_a_run_without_pull_request_gets_a_check_run_only(service: Service) -> None:
    _deliver_failed_run(service, pr=None)
    service.work()
    assert len(service.github.check_runs) == 1 and service.github.comments == []


def test_github_server_errors_are_retried_with_backoff_not_lost(service: Service) -> None:
    # More 5xx answers than the client's own retries: the job fails once and the queue retries it later.
    service.github.fail(r"/check-runs$", 502, times=6)
    _deliver_failed_run(service)
    service.work()
    rows = service.sql("SELECT status::text, attempts, scheduled_at > now() FROM procrastinate_jobs")
    assert rows == [("todo", 1, True)]  # scheduled later: backoff, not a hot loop
    service.sql("UPDATE procrastinate_jobs SET scheduled_at = now()")  # time passes
    service.work()
    assert service.sql("SELECT status::text FROM procrastinate_jobs") == [("succeeded",)]
    assert len(service.github.check_runs) == 1 and len(service.github.comments_on(REPO, 12)) == 1


def test_a_rate_limit_is_waited_out_not_hammered(service: Service) -> None:
    service.github.fail(r"/actions/runs/1/jobs$", 403, {"x-ratelimit-remaining": "0",
                                                         "x-ratelimit-reset": "9999999999"}, times=50)
    _deliver_failed_run(service)
    service.work()
    calls = service.github.made("GET", r"/actions/runs/1/jobs$")
    assert len(calls) == 1  # a reset far away: no retry now, the job waits in the queue
    assert service.sql("SELECT status::text, scheduled_at > now() FROM procrastinate_jobs") == [("todo", True)]


def test_repopilot_runs_reads_the_service_database(service: Service, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from repopilot.cli.main import main

    _deliver_failed_run(service)
    service.work()
    url = service.settings.database_url
    assert main(["runs", "list", "--db", url, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(r["command"], r["status"]) for r in listed] == [("diagnose", "completed")]
    assert main(["runs", "show", listed[0]["run_id"], "--db", url, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["run_id"] == listed[0]["run_id"]
    assert main(["runs", "show", "nope", "--db", url]) == 2


def test_a_job_that_fails_still_leaves_its_trace_in_postgresql(service: Service) -> None:
    service.github.fail(r"/check-runs$", 422, times=5)  # GitHub refuses the check run: not worth a retry
    _deliver_failed_run(service)
    service.work()
    assert service.sql("SELECT status::text FROM procrastinate_jobs") == [("failed",)]
    traces = Store(service.settings.database_url).list_traces()
    assert [(t.command, t.status) for t in traces] == [("diagnose", "completed")]


def test_a_trace_is_never_replaced_by_an_earlier_state_of_its_run(service: Service) -> None:
    from repopilot.core import RunTrace, Step

    store = Store(service.settings.database_url)
    done = RunTrace(run_id="r1", command="fix", goal="g", status="completed",
                    steps=[Step(step_number=1, timestamp="t", type="decision")])
    store.save_trace(done)
    store.save_trace(done.model_copy(update={"status": "running", "steps": []}))  # read while being written
    assert store.load_trace("r1") == done
    store.save_trace(done.model_copy(update={"status": "approved"}))  # a later state is kept
    loaded = store.load_trace("r1")
    assert loaded is not None and loaded.status == "approved"
