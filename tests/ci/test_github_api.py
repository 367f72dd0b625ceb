"""The run-URL source and the REST client, against a loopback server speaking GitHub's endpoints."""

from __future__ import annotations

import os
import re
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from repopilot.ci import LogInput, RunRef, is_run_url, parse_run_url
from repopilot.ci.github import github_log_inputs
from repopilot.ci.github_api import GitHubAccess, GitHubClient
from repopilot.core import ConfigError, GitHubAPIError, InputError
from tests.fixtures.github.fake_github import (
    LINT_LOG,
    OWNER,
    REPO,
    RUN_ID,
    TEST_LOG,
    TOKEN,
    FakeGitHub,
    github,
)

__all__ = ["github"]  # the fixture, imported for pytest


def _access() -> GitHubAccess:
    # What the application layer reads from the environment (the fixture sets GITHUB_TOKEN and GITHUB_API_URL).
    cache = os.environ.get("REPOPILOT_LOG_CACHE")
    return GitHubAccess(token=os.environ.get("GITHUB_TOKEN"), api_url=os.environ.get("GITHUB_API_URL"),
                        log_cache=Path(cache) if cache else None)


def _inputs(url: str, token: str | None = None, api_url: str | None = None, **kwargs: Any) -> list[LogInput]:
    access = _access()
    access = GitHubAccess(token=token if token is not None else access.token, api_url=api_url or access.api_url,
                          log_cache=access.log_cache)
    return github_log_inputs(url, access, **kwargs)


def _client(token: str | None = None, api_url: str | None = None, **kwargs: Any) -> GitHubClient:
    access = _access()
    return GitHubClient(token if token is not None else access.token, api_url or access.api_url, **kwargs)

JOBS = f"/repos/{OWNER}/{REPO}/actions/runs/{RUN_ID}/jobs"


# -- URLs ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("url", "expected"), [
    ("https://github.com/octo/demo/actions/runs/42", RunRef("github.com", "octo", "demo", 42)),
    ("https://github.com/octo/demo/actions/runs/42/", RunRef("github.com", "octo", "demo", 42)),
    ("https://github.com/octo/demo/actions/runs/42/job/7?pr=3", RunRef("github.com", "octo", "demo", 42, job_id=7)),
    ("https://github.com/octo/my.repo-x/actions/runs/42/attempts/2",
     RunRef("github.com", "octo", "my.repo-x", 42, attempt=2)),
    ("  https://ghe.example.com/team/app/actions/runs/9/job/8  ",
     RunRef("ghe.example.com", "team", "app", 9, job_id=8)),
])
def test_parse_run_url(url: str, expected: RunRef) -> None:
    assert parse_run_url(url) == expected
    assert is_run_url(url)


@pytest.mark.parametrize("url", [
    "https://github.com/octo/demo/actions/runs/",
    "https://github.com/octo/demo/actions/runs/abc",
    "https://github.com/octo/demo/pull/3",
    "https://github.com/octo/demo/actions/runs/42/job/x",
    "ftp://github.com/octo/demo/actions/runs/42",
    "github.com/octo/demo/actions/runs/42",
    "https://github.com/../demo/actions/runs/42",
])
def test_bad_urls_are_input_errors(url: str) -> None:
    with pytest.raises(InputError, match="not a GitHub Actions run URL"):
        parse_run_url(url)


def test_run_ref_round_trips_and_knows_its_api() -> None:
    ref = parse_run_url("https://github.com/octo/demo/actions/runs/42/attempts/3/job/7")
    assert parse_run_url(ref.url) == ref
    assert ref.default_api_url() == "https://api.github.com"



def test_the_token_never_goes_to_a_host_only_the_url_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run URL on another host must not make RepoPilot send GITHUB_TOKEN there: only api.github.com or the API
    the user configured in GITHUB_API_URL get it."""
    with pytest.raises(ConfigError, match=re.escape("GITHUB_API_URL=https://evil.example/api/v3")):
        parse_run_url("https://evil.example/o/r/actions/runs/1").default_api_url()
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_" + "x" * 36)
    with pytest.raises(ConfigError):
        _inputs("https://evil.example/o/r/actions/runs/1")


def test_a_long_bad_url_is_not_echoed_whole() -> None:
    with pytest.raises(InputError) as info:
        parse_run_url("https://github.com/" + "a" * 3000)
    assert len(str(info.value)) < 400


# -- downloading failed jobs -------------------------------------------------------------------------------------

def test_failed_jobs_are_downloaded_across_pages(github: FakeGitHub) -> None:
    inputs = _inputs(github.run_url)

    assert [i.job for i in inputs] == ["test (3.12)", "lint"]
    assert [i.failed_step for i in inputs] == ["Run tests", "Ruff"]
    assert inputs[0].name == f"test (3.12) ({OWNER}/{REPO} run {RUN_ID}, job 102)"  # the job's name first
    assert inputs[0].source == github.run_url
    with inputs[0].open() as stream:
        assert stream.read() == TEST_LOG
    with inputs[1].open() as stream:  # a fresh stream each time, from the start
        assert stream.read() == LINT_LOG
    assert inputs[1].open().read(10) == LINT_LOG[:10]
    assert inputs[1].size == len(LINT_LOG)

    listing = [r for r in github.requests if r.path == JOBS]
    assert [r.query["page"] for r in listing] == [["1"], ["2"]]  # the third job is on page 2
    # The successful job's log is never fetched.
    assert not any(p.endswith("/jobs/101/logs") for p in github.paths())


def test_token_goes_to_the_api_but_not_to_the_redirect_target(github: FakeGitHub) -> None:
    _inputs(github.run_url)

    api_calls = [r for r in github.requests if r.path.startswith("/repos/")]
    blob_calls = [r for r in github.requests if r.path.startswith("/blob/")]
    assert api_calls and len(blob_calls) == 2
    for r in api_calls:
        assert r.headers["authorization"] == f"Bearer {TOKEN}"
        assert r.headers["accept"] == "application/vnd.github+json"
        assert r.headers["x-github-api-version"] == "2022-11-28"
    for r in blob_calls:
        assert "authorization" not in r.headers
        assert r.query["sig"] == ["SignedBlobUrl"]


def test_job_url_fetches_only_that_job(github: FakeGitHub) -> None:
    inputs = _inputs(f"{github.run_url}/job/103")

    assert [(i.job, i.failed_step) for i in inputs] == [("lint", "Ruff")]
    assert JOBS not in github.paths()
    assert f"/repos/{OWNER}/{REPO}/actions/jobs/103/logs" in github.paths()


def test_job_of_another_run_is_refused(github: FakeGitHub) -> None:
    github.jobs[2]["run_id"] = 1
    with pytest.raises(InputError, match="belongs to run 1"):
        _inputs(f"{github.run_url}/job/103")


def test_attempt_url_lists_that_attempt(github: FakeGitHub) -> None:
    _inputs(f"{github.run_url}/attempts/2")
    assert f"/repos/{OWNER}/{REPO}/actions/runs/{RUN_ID}/attempts/2/jobs" in github.paths()


def test_run_without_failed_jobs_says_so(github: FakeGitHub) -> None:
    for job in github.jobs:
        job["conclusion"] = "success"
    with pytest.raises(InputError, match=r"has no failed jobs to diagnose \(success 3\)"):
        _inputs(github.run_url)


def test_pagination_without_link_header_uses_total_count(github: FakeGitHub) -> None:
    github.page_size = 1
    github.link_header = False
    with _client(api_url=github.url) as client:
        jobs = client.list_jobs(OWNER, REPO, RUN_ID)
    assert [j["id"] for j in jobs] == [101, 102, 103]
    assert len([p for p in github.paths() if p == JOBS]) == 3


def test_cache_directory_avoids_a_second_download(github: FakeGitHub, monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    monkeypatch.setenv("REPOPILOT_LOG_CACHE", str(tmp_path / "cache"))
    first = _inputs(github.run_url)
    second = _inputs(github.run_url)

    assert len([p for p in github.paths() if p.startswith("/blob/")]) == 2
    assert [i.open().read() for i in second] == [i.open().read() for i in first] == [TEST_LOG, LINT_LOG]
    assert not list((tmp_path / "cache").glob("*.part"))


def test_a_failed_download_leaves_nothing_in_the_cache(github: FakeGitHub, monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    monkeypatch.setenv("REPOPILOT_LOG_CACHE", str(tmp_path / "cache"))
    github.fail(r"/blob/103", 500, times=99)
    with pytest.raises(GitHubAPIError, match="log of job octo/demo#103"):
        _inputs(github.run_url)
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["octo_demo_102.log"]


def test_unusable_cache_directory_is_an_input_error(github: FakeGitHub, monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("REPOPILOT_LOG_CACHE", str(tmp_path / "file" / "cache"))
    with pytest.raises(InputError, match=r"REPOPILOT_LOG_CACHE=.*cannot create it"):
        _inputs(github.run_url)


def test_logs_are_stored_in_a_temporary_file_not_memory(github: FakeGitHub) -> None:
    inputs = _inputs(github.run_url)
    stream = inputs[0].open()
    try:
        assert Path(stream.name).is_file()  # type: ignore[attr-defined]
    finally:
        stream.close()


# -- rate limits, retries, refusals ----------------------------------------------------------------------------

def test_429_waits_per_retry_after_then_succeeds(github: FakeGitHub) -> None:
    github.fail(JOBS, 429, {"retry-after": "3"}, {"message": "You have exceeded a secondary rate limit."})
    inputs = _inputs(github.run_url)
    assert len(inputs) == 2
    assert github.sleeps == [3.0]


def test_403_rate_limit_waits_until_reset(github: FakeGitHub) -> None:
    reset = int(time.time()) + 5
    github.fail(r"/jobs/102/logs$", 403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset),
                                          "x-ratelimit-limit": "5000"},
                {"message": "API rate limit exceeded for installation ID 1."})
    inputs = _inputs(github.run_url)
    assert inputs[0].open().read() == TEST_LOG
    assert len(github.sleeps) == 1 and 4.0 <= github.sleeps[0] <= 7.0


def test_rate_limit_longer_than_the_bound_gives_up_with_a_clear_message(github: FakeGitHub) -> None:
    github.fail(JOBS, 403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(time.time()) + 3600)})
    with pytest.raises(GitHubAPIError, match=r"rate limit exceeded; it resets in 360\d s.*try again later") as info:
        _inputs(github.run_url)
    assert info.value.status == 403
    assert github.sleeps == []


def test_secondary_rate_limit_without_headers_waits_a_minute(github: FakeGitHub) -> None:
    github.fail(JOBS, 403, body={"message": "You have exceeded a secondary rate limit. Please wait a few minutes."})
    assert len(_inputs(github.run_url)) == 2
    assert github.sleeps == [60.0]


def test_retry_after_as_an_http_date(github: FakeGitHub) -> None:
    from email.utils import formatdate

    github.fail(JOBS, 429, {"retry-after": formatdate(time.time() + 10, usegmt=True)})
    _inputs(github.run_url)
    assert len(github.sleeps) == 1 and 8.0 <= github.sleeps[0] <= 10.0


def test_rate_limit_waits_add_up_to_the_bound(github: FakeGitHub) -> None:
    github.fail(JOBS, 429, {"retry-after": "40"}, times=2)
    with pytest.raises(GitHubAPIError, match=r"still rate limited after waiting 40 s; another 40 s would pass the "
                                             r"60 s bound: try again later \(HTTP 429\)"):
        _inputs(github.run_url)
    assert github.sleeps == [40.0]


def test_401_says_the_token_is_missing_or_invalid(github: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = "ghp_WrongToken000000000000000000000000"
    monkeypatch.setenv("GITHUB_TOKEN", wrong)
    with pytest.raises(GitHubAPIError) as info:
        _inputs(github.run_url)
    assert str(info.value) == "GITHUB_TOKEN missing or invalid (HTTP 401)"
    assert wrong not in repr(info.value.details)
    assert github.sleeps == []  # refusals are not retried


def test_missing_token_is_401_too(github: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_TOKEN")
    with pytest.raises(GitHubAPIError, match="GITHUB_TOKEN missing or invalid"):
        _inputs(github.run_url)
    assert all("authorization" not in r.headers for r in github.requests)


def test_404_says_not_found_or_no_access(github: FakeGitHub) -> None:
    url = f"https://github.com/{OWNER}/{REPO}/actions/runs/999"
    with pytest.raises(GitHubAPIError, match=r"run octo/demo#999 not found or no access \(HTTP 404\)"):
        _inputs(url)


def test_an_expired_log_is_skipped_and_the_others_kept(github: FakeGitHub, caplog: pytest.LogCaptureFixture) -> None:
    github.fail(r"/jobs/102/logs$", 410, body={"message": "Gone"})
    inputs = _inputs(github.run_url)
    assert [i.job for i in inputs] == ["lint"]
    assert "skipping job 'test (3.12)'" in caplog.text and "retention period" in caplog.text


def test_when_every_log_is_missing_the_error_is_raised(github: FakeGitHub) -> None:
    del github.logs[102], github.logs[103]
    with pytest.raises(GitHubAPIError, match=r"log of job octo/demo#102 not found or no access \(HTTP 404\)"):
        _inputs(github.run_url)


def test_403_without_rate_limit_is_a_permission_error(github: FakeGitHub) -> None:
    github.fail(JOBS, 403, body={"message": "Resource not accessible by integration"})
    with pytest.raises(GitHubAPIError, match=r"forbidden.*actions: read.*Resource not accessible by integration"):
        _inputs(github.run_url)


def test_500_is_retried_with_backoff_then_gives_up(github: FakeGitHub) -> None:
    github.fail(JOBS, 500, times=10)
    with pytest.raises(GitHubAPIError, match=r"server error.*gave up after 4 attempts \(HTTP 500\)"):
        _inputs(github.run_url)
    _assert_backoff(github.sleeps, [1.0, 2.0, 4.0])
    assert len([p for p in github.paths() if p == JOBS]) == 4


def test_a_passing_5xx_recovers(github: FakeGitHub) -> None:
    github.fail(r"/blob/", 502, times=1)
    github.fail(JOBS, 503, times=2)
    inputs = _inputs(github.run_url)
    assert inputs[0].open().read() == TEST_LOG
    _assert_backoff(github.sleeps, [1.0, 2.0, 1.0])


def _assert_backoff(sleeps: list[float], full: list[float]) -> None:
    """Exponential backoff with up to 25 % jitter taken off (the shared retry policy)."""
    assert len(sleeps) == len(full)
    assert all(0.75 * f <= s <= f for s, f in zip(sleeps, full, strict=True)), sleeps


def test_connection_errors_are_retried_then_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    sleeps: list[float] = []
    from repopilot.ci import github_api

    monkeypatch.setattr(github_api, "_sleep", sleeps.append)
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(GitHubAPIError, match=r"connection failed.*gave up after 4 attempts"):
        _inputs("https://github.com/o/r/actions/runs/1", api_url=f"http://127.0.0.1:{port}", token=TOKEN)
    assert len(sleeps) == 3


def test_the_token_never_appears_in_errors(github: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    # A server that echoes the token back (a proxy, a misconfigured GHES) must not leak it through our message;
    # the token is passed explicitly here, so only the client itself knows it.
    monkeypatch.delenv("GITHUB_TOKEN")
    github.fail(JOBS, 422, body={"message": f"bad header: token {TOKEN} rejected"})
    with pytest.raises(GitHubAPIError) as info:
        _inputs(github.run_url, token=TOKEN)
    assert TOKEN not in str(info.value) and TOKEN not in repr(info.value.details)
    assert "request refused" in str(info.value)


def test_bad_api_url_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="GITHUB_API_URL must be an http"):
        _client(api_url="api.github.com")


def test_token_is_trimmed_and_a_mangled_token_refused_without_showing_it(github: FakeGitHub,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", f"  {TOKEN}\n")
    assert len(_inputs(github.run_url)) == 2
    monkeypatch.setenv("GITHUB_TOKEN", f"{TOKEN}\n{TOKEN}")
    with pytest.raises(ConfigError) as info:
        _inputs(github.run_url)
    assert TOKEN not in str(info.value) and "control characters" in str(info.value)


def test_redirect_without_location_is_an_error(github: FakeGitHub) -> None:
    github.fail(r"/jobs/102/logs$", 302, body={"message": "moved"})
    with pytest.raises(GitHubAPIError, match="redirect without a location"):
        _inputs(github.run_url)


# -- the endpoints the action uses -----------------------------------------------------------------------------

def test_pull_requests_of_a_run_and_posting_a_comment(github: FakeGitHub) -> None:
    github.pull_requests = [7]
    with _client() as client:
        assert client.run_pull_requests(OWNER, REPO, RUN_ID) == [7]
        url = client.post_issue_comment(OWNER, REPO, 7, "**build failed**")
    assert url.endswith("/pull/7#issuecomment-1")
    assert github.comments == [{"id": 1, "number": 7, "body": "**build failed**"}]
    post = next(r for r in github.requests if r.method == "POST")
    assert post.headers["authorization"] == f"Bearer {TOKEN}"


def test_upsert_updates_the_latest_marked_comment_across_pages(github: FakeGitHub) -> None:
    github.comments = [{"id": i, "number": 7, "body": body} for i, body in
                       enumerate(["first!", "<!-- mark --> old", "lgtm", "<!-- mark --> newer", "ping"], 1)]
    github.comments.append({"id": 6, "number": 8, "body": "<!-- mark --> other PR"})
    with _client() as client:
        url, updated = client.upsert_issue_comment(OWNER, REPO, 7, "<!-- mark --> fresh", "<!-- mark -->")
        assert updated and url.endswith("/pull/7#issuecomment-4")
        url, updated = client.upsert_issue_comment(OWNER, REPO, 9, "<!-- mark --> new PR", "<!-- mark -->")
        assert not updated and url.endswith("/pull/9#issuecomment-7")
    assert [c["body"] for c in github.comments if c["number"] == 7][1:4] == [
        "<!-- mark --> old", "lgtm", "<!-- mark --> fresh"]
    pages = [r.query["page"] for r in github.requests if r.path.endswith("/issues/7/comments")]
    assert pages == [["1"], ["2"], ["3"]]  # five comments, two per page


def test_overlong_comment_is_truncated_to_githubs_limit(github: FakeGitHub) -> None:
    with _client() as client:
        client.post_issue_comment(OWNER, REPO, 1, "x" * 70_000)
    body = github.comments[0]["body"]
    assert len(body) <= 65_536 and body.endswith("_(truncated to fit GitHub's comment limit)_\n")


def test_downloads_report_progress_and_print_nothing(github: FakeGitHub,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    heard: list[tuple[int, str, int, int | None]] = []
    inputs = _inputs(github.run_url, on_download=lambda *event: heard.append(event))
    assert capsys.readouterr() == ("", "")  # this layer prints nothing: the CLI draws the bars
    jobs = {event[0] for event in heard}
    assert len(jobs) == len(inputs) >= 1
    # Each job's last report is its whole log.
    finals = sorted([event for event in heard if event[0] == job][-1][2] for job in jobs)
    assert finals == sorted(log.size for log in inputs) and all(finals)
