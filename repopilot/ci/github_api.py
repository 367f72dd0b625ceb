"""A small client for the GitHub REST endpoints RepoPilot uses: run jobs, job logs, runs, issue comments.

Retries follow the shared policy (`core.retry`): 5xx, 408 and connection errors back off a few times (jittered);
rate limits (403/429 with `x-ratelimit-remaining: 0`, or `retry-after`) wait as long as GitHub asks, unless that
(or all such waits of a call together) is longer than `max_wait`, in which case we stop with a message saying
when to try again. The token only ever travels in the
Authorization header of requests to the API host: never to a redirect target (log downloads are redirected to
short-lived storage URLs that carry their own signature), never into an error message.
"""

from __future__ import annotations

import functools
import json
import ssl
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO, TypeVar
from urllib.parse import quote

import httpx

from ..core import (
    REDACTED,
    ConfigError,
    GitHubAPIError,
    InputError,
    RetriesExhausted,
    Retry,
    RetryPolicy,
    parse_retry_after,
    quota_gate,
    redact_text,
    retry_call,
    waiting,
)
from .api_cache import ApiCache, CachedAnswer, is_final
from .runurl import DEFAULT_API_URL, GitHubAccess

__all__ = ["DEFAULT_API_URL", "GitHubAccess", "GitHubClient"]



_API_VERSION = "2022-11-28"
_REDIRECTS = {301, 302, 303, 307, 308}
_MAX_REDIRECTS = 5
_MAX_PAGES = 100  # 10,000 jobs: far beyond GitHub's 256-job matrix limit
_COMMENT_LIMIT = 65_536  # GitHub refuses longer comment bodies
_ERROR_BODY_LIMIT = 4096
_SECONDARY_LIMIT_WAIT = 60.0
_T = TypeVar("_T")

# Looked up at call time so tests can replace it without waiting.
_sleep: Callable[[float], None] = time.sleep


def _pause(seconds: float) -> None:
    _sleep(seconds)


class GitHubClient:
    """Synchronous REST client; use as a context manager or call `close()`."""

    def __init__(
        self,
        token: str | None = None,
        api_url: str | None = None,
        *,
        attempts: int = 4,
        backoff: float = 1.0,
        max_wait: float = 60.0,
        timeout: float = 30.0,
        api_cache: Path | None = None,
    ) -> None:
        raw = token or ""
        self.token = raw.strip() or None  # a token read from a file often ends in a newline
        if self.token is not None and (not self.token.isprintable() or " " in self.token):
            # httpx would refuse the header with the token quoted in its message; say it here, without it.
            raise ConfigError("GITHUB_TOKEN contains spaces or control characters; set it to the token alone")
        self.api_url = (api_url or DEFAULT_API_URL).rstrip("/")
        if not self.api_url.startswith(("https://", "http://")):
            raise ConfigError(f"GITHUB_API_URL must be an http(s) URL, got {self.api_url!r}")
        self.attempts = max(1, attempts)
        self.max_wait = max_wait
        # The shared policy: rate-limit pauses are honoured up to `max_wait`, one at a time and all together.
        self.retry = RetryPolicy(max_retries=self.attempts - 1, initial_wait=backoff, max_wait=8.0,
                                 max_retry_after=max_wait, max_total_wait=max_wait)
        # GET answers kept between processes (ci/api_cache.py): unchanged ones cost a free 304, final ones nothing.
        self.cache = ApiCache(api_cache, f"{self.api_url} {self.token or ''}") if api_cache else None
        self._http = httpx.Client(timeout=timeout, follow_redirects=False, verify=_tls_context(),
                                  headers={"User-Agent": "repopilot", "X-GitHub-Api-Version": _API_VERSION})

    def __enter__(self) -> GitHubClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # -- endpoints -------------------------------------------------------------------------------------------

    def list_jobs(self, owner: str, repo: str, run_id: int, attempt: int | None = None) -> list[dict[str, Any]]:
        """Every job of a run (the latest attempt, or `attempt`), following pagination."""
        base = f"/repos/{owner}/{repo}/actions/runs/{run_id}"
        path = f"{base}/attempts/{attempt}/jobs" if attempt else f"{base}/jobs"
        what = f"run {owner}/{repo}#{run_id}"
        jobs: list[dict[str, Any]] = []
        for page in range(1, _MAX_PAGES + 1):
            response = self._get(path, what, params={"per_page": 100, "page": page})
            data = _json_object(response, what)
            batch = data.get("jobs")
            if not isinstance(batch, list):
                raise GitHubAPIError(f"{what}: unexpected jobs listing (no `jobs` list)")
            jobs.extend(job for job in batch if isinstance(job, dict))
            if not batch or not _has_more(response, len(jobs), data.get("total_count")):
                break
        return jobs

    def list_runs(self, owner: str, repo: str, *, branch: str | None = None, status: str | None = None,
                  workflow: str | None = None) -> list[dict[str, Any]]:
        """The newest runs of a repository (or of one workflow: its file name, id or name), newest first."""
        base = f"/repos/{owner}/{repo}/actions"
        path = f"{base}/runs"
        if workflow:
            path = f"{base}/workflows/{quote(self._workflow_id(owner, repo, workflow), safe='')}/runs"
        params: dict[str, Any] = {"per_page": 20, **({"branch": branch} if branch else {}),
                                  **({"status": status} if status else {})}
        what = f"runs of {owner}/{repo}"
        runs = _json_object(self._get(path, what, params=params), what).get("workflow_runs")
        if not isinstance(runs, list):
            raise GitHubAPIError(f"{what}: unexpected runs listing (no `workflow_runs` list)")
        return [run for run in runs if isinstance(run, dict) and isinstance(run.get("id"), int)]

    def _workflow_id(self, owner: str, repo: str, workflow: str) -> str:
        """A workflow's file name or id as the API takes it; a workflow's name (`CI`) is looked up."""
        name = workflow.strip().rsplit("/", 1)[-1]
        if name.isdigit() or name.endswith((".yml", ".yaml")):
            return name
        what = f"workflows of {owner}/{repo}"
        listed = _json_object(self._get(f"/repos/{owner}/{repo}/actions/workflows", what,
                                        params={"per_page": 100}), what).get("workflows") or []
        for flow in listed:
            if isinstance(flow, dict) and str(flow.get("name", "")).casefold() == workflow.strip().casefold():
                return str(flow.get("id"))
        raise InputError(f"{owner}/{repo} has no workflow named {workflow!r}: pass its file name (ci.yml) or id")

    def get_job(self, owner: str, repo: str, job_id: int) -> dict[str, Any]:
        what = f"job {owner}/{repo}#{job_id}"
        return _json_object(self._get(f"/repos/{owner}/{repo}/actions/jobs/{job_id}", what), what)

    def get_run(self, owner: str, repo: str, run_id: int) -> dict[str, Any]:
        what = f"run {owner}/{repo}#{run_id}"
        return _json_object(self._get(f"/repos/{owner}/{repo}/actions/runs/{run_id}", what), what)

    def get_repo(self, owner: str, repo: str) -> dict[str, Any]:
        what = f"repository {owner}/{repo}"
        return _json_object(self._get(f"/repos/{owner}/{repo}", what), what)

    def list_workflow_runs(self, owner: str, repo: str, workflow_id: int, *, branch: str,
                           per_page: int = 10) -> list[dict[str, Any]]:
        """The newest completed runs of a workflow on a branch (one page: the base branch's latest is enough)."""
        what = f"runs of workflow {workflow_id} on {owner}/{repo} {branch}"
        response = self._get(f"/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs", what,
                             params={"branch": branch, "status": "completed", "per_page": per_page})
        runs = _json_object(response, what).get("workflow_runs")
        if not isinstance(runs, list):
            raise GitHubAPIError(f"{what}: unexpected runs listing (no `workflow_runs` list)")
        return [run for run in runs if isinstance(run, dict)]

    def run_pull_requests(self, owner: str, repo: str, run_id: int) -> list[int]:
        """Numbers of the pull requests a run belongs to (empty for runs from forks: GitHub omits them)."""
        prs = self.get_run(owner, repo, run_id).get("pull_requests") or []
        return [pr["number"] for pr in prs if isinstance(pr, dict) and isinstance(pr.get("number"), int)]

    def post_issue_comment(self, owner: str, repo: str, number: int, body: str) -> str:
        """Comment on an issue or pull request; returns the comment's URL."""
        what = f"comment on {owner}/{repo}#{number}"
        path = f"/repos/{owner}/{repo}/issues/{number}/comments"
        response = self._call(lambda: self._send("POST", self._url(path), what, json={"body": _fit(body)}), what)
        return str(_json_object(response, what).get("html_url", ""))

    def list_issue_comments(self, owner: str, repo: str, number: int) -> list[dict[str, Any]]:
        """Every comment of an issue or pull request, oldest first."""
        what = f"comments of {owner}/{repo}#{number}"
        comments: list[dict[str, Any]] = []
        for page in range(1, _MAX_PAGES + 1):
            response = self._get(f"/repos/{owner}/{repo}/issues/{number}/comments", what,
                                 params={"per_page": 100, "page": page})
            batch = _json(response, what)
            if not isinstance(batch, list):
                raise GitHubAPIError(f"{what}: unexpected comments listing")
            comments.extend(c for c in batch if isinstance(c, dict))
            if not batch or "next" not in response.links:  # GitHub sends a Link header whenever there are more
                break
        return comments

    def update_issue_comment(self, owner: str, repo: str, comment_id: int, body: str) -> str:
        """Replace a comment's body; returns the comment's URL."""
        what = f"comment {owner}/{repo}#{comment_id}"
        path = f"/repos/{owner}/{repo}/issues/comments/{comment_id}"
        response = self._call(lambda: self._send("PATCH", self._url(path), what, json={"body": _fit(body)}), what)
        return str(_json_object(response, what).get("html_url", ""))

    def upsert_issue_comment(self, owner: str, repo: str, number: int, body: str, marker: str) -> tuple[str, bool]:
        """Update the latest comment containing `marker`, or post a new one; returns (URL, updated)."""
        ours = [c for c in self.list_issue_comments(owner, repo, number)
                if marker in str(c.get("body") or "") and isinstance(c.get("id"), int)]
        if ours:
            return self.update_issue_comment(owner, repo, ours[-1]["id"], body), True
        return self.post_issue_comment(owner, repo, number, body), False

    def list_issues(self, owner: str, repo: str, label: str) -> list[dict[str, Any]]:
        """Open and closed issues labelled `label`, pull requests left out, following pagination."""
        what = f"issues of {owner}/{repo} labelled {label}"
        issues: list[dict[str, Any]] = []
        for page in range(1, _MAX_PAGES + 1):
            response = self._get(f"/repos/{owner}/{repo}/issues", what,
                                 params={"labels": label, "state": "all", "per_page": 100, "page": page})
            batch = _json(response, what)
            if not isinstance(batch, list):
                raise GitHubAPIError(f"{what}: unexpected issues listing")
            issues.extend(i for i in batch if isinstance(i, dict) and "pull_request" not in i)
            if not batch or "next" not in response.links:
                break
        return issues

    def create_issue(self, owner: str, repo: str, fields: dict[str, Any]) -> dict[str, Any]:
        """Open an issue (`title`, `body`, `labels`); returns it as GitHub does."""
        return self._post(f"/repos/{owner}/{repo}/issues", f"issue on {owner}/{repo}", _fit_body(fields))

    def update_issue(self, owner: str, repo: str, number: int, fields: dict[str, Any]) -> dict[str, Any]:
        """Change an issue's `body`, `title` or `state`; returns it as GitHub does."""
        what = f"issue {owner}/{repo}#{number}"
        path = f"/repos/{owner}/{repo}/issues/{number}"
        response = self._call(lambda: self._send("PATCH", self._url(path), what, json=_fit_body(fields)), what)
        return _json_object(response, what)

    # -- GitHub App endpoints (the service) ------------------------------------------------------------------

    def create_installation_token(self, installation_id: int) -> tuple[str, str]:
        """An installation access token (this client authenticates with the App's JWT): (token, expires_at)."""
        what = f"token of installation {installation_id}"
        data = self._post(f"/app/installations/{installation_id}/access_tokens", what, {})
        token, expires = data.get("token"), data.get("expires_at")
        if not isinstance(token, str) or not isinstance(expires, str):
            raise GitHubAPIError(f"{what}: unexpected answer (no token or expiry)")
        return token, expires

    def permission(self, owner: str, repo: str, user: str) -> str:
        """A user's permission on a repository: admin, maintain, write, triage, read or none."""
        what = f"permission of {user} on {owner}/{repo}"
        try:
            data = _json_object(self._get(f"/repos/{owner}/{repo}/collaborators/{user}/permission", what), what)
        except GitHubAPIError as exc:
            if exc.status == 404:  # not a collaborator at all
                return "none"
            raise
        role = data.get("role_name") or data.get("permission")
        return str(role) if role else "none"

    def check_runs_for(self, owner: str, repo: str, sha: str, name: str) -> list[dict[str, Any]]:
        """The check runs named `name` on commit `sha` (newest first, as GitHub lists them)."""
        what = f"check runs of {owner}/{repo}@{sha[:12]}"
        data = _json_object(self._get(f"/repos/{owner}/{repo}/commits/{sha}/check-runs", what,
                                      params={"check_name": name, "per_page": 100}), what)
        runs = data.get("check_runs")
        return [r for r in runs if isinstance(r, dict)] if isinstance(runs, list) else []

    def create_check_run(self, owner: str, repo: str, body: dict[str, Any]) -> dict[str, Any]:
        return self._post(f"/repos/{owner}/{repo}/check-runs", f"check run on {owner}/{repo}", body)

    def update_check_run(self, owner: str, repo: str, check_run_id: int, body: dict[str, Any]) -> dict[str, Any]:
        what = f"check run {owner}/{repo}#{check_run_id}"
        path = f"/repos/{owner}/{repo}/check-runs/{check_run_id}"
        return _json_object(self._call(lambda: self._send("PATCH", self._url(path), what, json=body), what), what)

    def pull_requests_from(self, owner: str, repo: str, head: str) -> list[dict[str, Any]]:
        """Open or closed pull requests whose head is `head` (`owner:branch`)."""
        what = f"pull requests of {owner}/{repo} from {head}"
        data = _json(self._get(f"/repos/{owner}/{repo}/pulls", what, params={"head": head, "state": "all"}), what)
        return [p for p in data if isinstance(p, dict)] if isinstance(data, list) else []

    def create_pull_request(self, owner: str, repo: str, body: dict[str, Any]) -> dict[str, Any]:
        return self._post(f"/repos/{owner}/{repo}/pulls", f"pull request on {owner}/{repo}", body)

    def get_pull_request(self, owner: str, repo: str, number: int) -> dict[str, Any]:
        what = f"pull request {owner}/{repo}#{number}"
        return _json_object(self._get(f"/repos/{owner}/{repo}/pulls/{number}", what), what)

    def download_job_log(self, owner: str, repo: str, job_id: int, dest: BinaryIO,
                         on_progress: Callable[[int, int | None], None] | None = None) -> int:
        """Stream a job's plain-text log into `dest`; returns the byte count. Follows the storage redirect."""
        what = f"log of job {owner}/{repo}#{job_id}"
        url = self._url(f"/repos/{owner}/{repo}/actions/jobs/{job_id}/logs")
        return self._call(lambda: self._stream_to(url, what, dest, on_progress), what)

    # -- plumbing --------------------------------------------------------------------------------------------

    def _url(self, path: str) -> str:
        return self.api_url + path

    def _headers(self, *, auth: bool) -> dict[str, str]:
        headers = {"Accept": "application/vnd.github+json"}
        if auth and self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def _get(self, path: str, what: str, params: dict[str, Any] | None = None) -> httpx.Response:
        url = str(httpx.URL(self._url(path), params=params or {}))
        if self.cache is None:
            return self._call(lambda: self._send("GET", url, what), what)
        cached = self.cache.get(url)
        if cached is not None and cached.final:
            return _replayed(url, cached)
        asked = cached.validators() if cached is not None else {}
        response = self._call(lambda: self._send("GET", url, what, headers=asked), what)
        if response.status_code == 304 and cached is not None:
            return _replayed(url, cached)
        self._keep(url, path, response)
        return response

    def _keep(self, url: str, path: str, response: httpx.Response) -> None:
        if response.status_code != 200 or self.cache is None:
            return
        try:
            final = is_final(path, response.json())
        except ValueError:
            return
        etag, modified = response.headers.get("etag"), response.headers.get("last-modified")
        if final or etag or modified:  # an answer that can be neither reused nor revalidated is not kept
            self.cache.put(url, CachedAnswer(body=response.content, etag=etag, last_modified=modified,
                                             link=response.headers.get("link"), final=final))

    def _post(self, path: str, what: str, body: dict[str, Any]) -> dict[str, Any]:
        response = self._call(lambda: self._send("POST", self._url(path), what, json=body), what)
        return _json_object(response, what)

    def _send(self, method: str, url: str, what: str, headers: dict[str, str] | None = None,
              **kwargs: Any) -> httpx.Response:
        self._mind_quota(what)
        try:
            response = self._http.request(method, url, headers={**self._headers(auth=True), **(headers or {})},
                                          **kwargs)
        except httpx.TransportError as exc:
            raise Retry(f"connection failed: {type(exc).__name__}") from None
        self._note_quota(response)
        self._check(response, what)
        return response

    def _mind_quota(self, what: str) -> None:
        """With a quota gate installed (the service), a call that would spend the calls kept in reserve is not
        made: the caller learns how long to wait instead."""
        gate = quota_gate()
        if gate is None or self.token is None:
            return
        wait = gate.wait_before(self.token)
        if wait > 0:
            raise GitHubAPIError(f"{what}: the calls this token has left are kept in reserve until its rate limit "
                                 f"resets in {wait:.0f} s", status=429, retry_after=wait)

    def _note_quota(self, response: httpx.Response) -> None:
        gate = quota_gate()
        if gate is None or self.token is None:
            return
        headers = response.headers
        remaining = _int_or_none(headers.get("x-ratelimit-remaining"))
        reset = _int_or_none(headers.get("x-ratelimit-reset"))
        if remaining is not None and reset is not None:
            gate.seen(self.token, remaining, _int_or_none(headers.get("x-ratelimit-limit")) or 0, float(reset))

    def _stream_to(self, url: str, what: str, dest: BinaryIO,
                   on_progress: Callable[[int, int | None], None] | None) -> int:
        dest.seek(0)
        dest.truncate()
        auth = True
        self._mind_quota(what)
        try:
            for _ in range(_MAX_REDIRECTS + 1):
                with self._http.stream("GET", url, headers=self._headers(auth=auth)) as response:
                    if auth:  # the API's answer (a redirect's target is storage, with no quota of ours)
                        self._note_quota(response)
                    if response.status_code in _REDIRECTS and "location" in response.headers:
                        url = str(response.url.join(response.headers["location"]))
                        if not url.startswith(("https://", "http://")):
                            raise GitHubAPIError(f"{what}: redirected to a non-HTTP location")
                        auth = False  # the target is signed; the token must not travel there
                        continue
                    self._check(response, what)
                    if response.status_code >= 300:
                        raise GitHubAPIError(f"{what}: unexpected redirect without a location",
                                             status=response.status_code)
                    total = _int_or_none(response.headers.get("content-length"))
                    written = 0
                    for chunk in response.iter_bytes(1 << 16):
                        dest.write(chunk)
                        written += len(chunk)
                        if on_progress is not None:
                            on_progress(written, total)
                    return written
        except httpx.TransportError as exc:
            raise Retry(f"connection failed: {type(exc).__name__}") from None
        raise GitHubAPIError(f"{what}: more than {_MAX_REDIRECTS} redirects")

    def _check(self, response: httpx.Response, what: str) -> None:
        """Raise for an unsuccessful response: `Retry` when another attempt may help, else GitHubAPIError."""
        status = response.status_code
        if status < 400:
            return
        headers = response.headers
        if status == 401:
            raise GitHubAPIError("GITHUB_TOKEN missing or invalid", status=status)
        message = self._clean(_error_message(response))
        detail = f": {message}" if message else ""
        if status in (403, 429):
            wait = _rate_limit_wait(headers)
            if wait is None and (status == 429 or "rate limit" in message.lower()):
                # A secondary rate limit without headers: GitHub's docs say to wait at least a minute.
                wait = _SECONDARY_LIMIT_WAIT
            if wait is not None:
                raise Retry("rate limited", status=status, wait=wait)
        if status == 403:
            raise GitHubAPIError(f"{what}: forbidden; the token lacks access (a workflow needs `permissions: "
                                 f"actions: read`){detail}", status=status)
        if status == 404:
            raise GitHubAPIError(f"{what} not found or no access", status=status)
        if status == 410:
            raise GitHubAPIError(f"{what} is gone (logs are deleted after the repository's retention period)",
                                 status=status)
        if status == 408 or status >= 500:
            raise Retry(f"server error{detail}", status=status)
        raise GitHubAPIError(f"{what}: request refused{detail}", status=status)

    def _call(self, fn: Callable[[], _T], what: str) -> _T:
        try:
            with waiting(f"GitHub API: {what}"):
                return retry_call(fn, self.retry, sleep=_pause, label="GitHub API")
        except RetriesExhausted as exc:
            last, stop = exc.last, exc.give_up
            retry_after = None
            if stop.why == "too_long":
                message = (f"GitHub API rate limit exceeded; it resets in {stop.wait:.0f} s, longer than the "
                           f"{self.max_wait:.0f} s RepoPilot waits: try again later")
                retry_after = stop.wait
            elif stop.why == "total":
                message = (f"{what}: still rate limited after waiting {stop.waited:.0f} s; another {stop.wait:.0f} "
                           f"s would pass the {self.max_wait:.0f} s bound: try again later")
                retry_after = stop.wait
            else:
                message = f"{what}: GitHub API {last.reason}, gave up after {stop.retries + 1} attempts"
            raise GitHubAPIError(message, status=last.status, retry_after=retry_after) from None

    def _clean(self, text: str) -> str:
        if self.token:
            text = text.replace(self.token, REDACTED)
        return redact_text(text)[:200]


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One TLS context per process: loading the CA bundle takes ~0.1 s, and a worker opens clients all day."""
    return httpx.create_ssl_context()


def _json(response: httpx.Response, what: str) -> Any:
    try:
        return response.json()
    except ValueError:
        raise GitHubAPIError(f"{what}: the API answered with something other than JSON") from None


def _json_object(response: httpx.Response, what: str) -> dict[str, Any]:
    data = _json(response, what)
    if not isinstance(data, dict):
        raise GitHubAPIError(f"{what}: unexpected JSON from the API")
    return data


def _fit(body: str) -> str:
    if len(body) <= _COMMENT_LIMIT:
        return body
    note = "\n\n_(truncated to fit GitHub's comment limit)_\n"
    return body[: _COMMENT_LIMIT - len(note)] + note


def _replayed(url: str, cached: CachedAnswer) -> httpx.Response:
    """A kept answer as the response it was (its pagination links included)."""
    headers = {"content-type": "application/json"} | ({"link": cached.link} if cached.link else {})
    return httpx.Response(200, headers=headers, content=cached.body, request=httpx.Request("GET", url))


def _fit_body(fields: dict[str, Any]) -> dict[str, Any]:
    body = fields.get("body")
    return {**fields, "body": _fit(body)} if isinstance(body, str) else fields


def _has_more(response: httpx.Response, seen: int, total: Any) -> bool:
    if "link" in response.headers:
        return "next" in response.links
    return isinstance(total, int) and seen < total


def _int_or_none(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _rate_limit_wait(headers: httpx.Headers) -> float | None:
    """Seconds GitHub asks us to wait, or None when the response is not a rate limit."""
    asked = parse_retry_after(headers)
    if asked is not None:
        return asked
    if headers.get("x-ratelimit-remaining") == "0":
        reset = _int_or_none(headers.get("x-ratelimit-reset"))
        if reset is not None:
            return max(0.0, reset - time.time()) + 1.0  # reset is whole seconds; do not wake a moment early
        return 60.0
    return None


def _error_message(response: httpx.Response) -> str:
    """GitHub's `message` field from an error body, read no further than a few KB."""
    try:
        if response.is_closed:
            body = response.content[:_ERROR_BODY_LIMIT]
        else:
            body = b""
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) >= _ERROR_BODY_LIMIT:
                    break
        data = json.loads(body[:_ERROR_BODY_LIMIT])
    except (httpx.HTTPError, ValueError):
        return ""
    message = data.get("message") if isinstance(data, dict) else None
    return message.strip() if isinstance(message, str) else ""

