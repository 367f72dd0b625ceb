"""What the GitHub App does on GitHub, as use cases the service drives: exchange the App's JWT for an
installation token, publish a run's diagnosis (one check run and one PR comment, kept current), ask whether a
user may write to a repository, open the draft pull request of an approved fix.

Every publication is idempotent against GitHub's own state, not a local note: a job that died after posting and
is run again finds its check run (by `external_id`) and its comment (by marker) and updates them."""

from __future__ import annotations

from dataclasses import dataclass

from ..ci import GitHubClient
from .github_report import COMMENT_MARKER, GitHubRunReport
from .settings import Settings

__all__ = ["WRITE_ROLES", "Published", "diagnosed_run_url", "installation_token", "open_draft_pull_request",
           "permission_of", "publish_report", "upsert_comment"]

# The roles that may start a fix run or approve one (GitHub's `role_name`; `permission` says write for maintain).
WRITE_ROLES = frozenset({"admin", "maintain", "write"})
_SUMMARY_LIMIT = 65_000  # check-run output fields are limited to 65,535 characters


@dataclass(frozen=True)
class Published:
    check_run_id: int | None
    check_run_created: bool
    pull_request: int | None
    comment_url: str | None
    comment_updated: bool


def installation_token(api_url: str, app_jwt: str, installation_id: int) -> tuple[str, str]:
    """An installation access token and its expiry (ISO 8601), for the App authenticated by `app_jwt`."""
    with GitHubClient(app_jwt, api_url) as client:
        return client.create_installation_token(installation_id)


def upsert_comment(settings: Settings, owner: str, repo: str, number: int, body: str, marker: str) -> str:
    """The comment holding `marker` on issue or PR `number`, created or updated to `body`; returns its URL."""
    with GitHubClient(settings.github_token, settings.github_api_url) as client:
        return client.upsert_issue_comment(owner, repo, number, f"{marker}\n{body}", marker)[0]


def permission_of(settings: Settings, owner: str, repo: str, user: str) -> str:
    with GitHubClient(settings.github_token, settings.github_api_url) as client:
        return client.permission(owner, repo, user)


def _check_run_body(report: GitHubRunReport, name: str, head_sha: str, markdown: str) -> dict[str, object]:
    failures = sum(len(r.failures) for r in report.reports)
    title = report.nothing_to_diagnose or f"{failures} failure(s) diagnosed in {len(report.reports)} job(s)"
    return {"name": name, "head_sha": head_sha, "external_id": str(report.ref.run_id), "status": "completed",
            "conclusion": "neutral", "details_url": report.url,
            "output": {"title": title[:200], "summary": markdown[:_SUMMARY_LIMIT]}}


def publish_report(report: GitHubRunReport, settings: Settings, *, head_sha: str, check_name: str,
                   pull_request: int | None) -> Published:
    """The diagnosis as a check run on `head_sha` and as the one RepoPilot comment on `pull_request`."""
    ref = report.ref
    markdown = report.render("markdown") if report.reports else f"RepoPilot: {report.nothing_to_diagnose}"
    body = _check_run_body(report, check_name, head_sha, markdown)
    with GitHubClient(settings.github_token, settings.github_api_url) as client:
        ours = [c for c in client.check_runs_for(ref.owner, ref.repo, head_sha, check_name)
                if c.get("external_id") == body["external_id"] and isinstance(c.get("id"), int)]
        if ours:
            check = client.update_check_run(ref.owner, ref.repo, ours[0]["id"], body)
        else:
            check = client.create_check_run(ref.owner, ref.repo, body)
        url, updated = None, False
        if pull_request is not None:
            url, updated = client.upsert_issue_comment(ref.owner, ref.repo, pull_request,
                                                       f"{COMMENT_MARKER}\n{markdown}", COMMENT_MARKER)
    check_id = check.get("id")
    return Published(check_id if isinstance(check_id, int) else None, not ours, pull_request, url, updated)


def diagnosed_run_url(settings: Settings, owner: str, repo: str, sha: str, check_name: str) -> str | None:
    """The failed run RepoPilot last diagnosed on commit `sha` (its check run's details URL), if any."""
    with GitHubClient(settings.github_token, settings.github_api_url) as client:
        for check in client.check_runs_for(owner, repo, sha, check_name):
            url = check.get("details_url")
            if isinstance(url, str) and "/actions/runs/" in url:
                return url
    return None


def open_draft_pull_request(settings: Settings, owner: str, repo: str, *, branch: str, base: str, title: str,
                            body: str) -> tuple[int, str, bool]:
    """The draft pull request from `branch` into `base`: (number, URL, already existed)."""
    with GitHubClient(settings.github_token, settings.github_api_url) as client:
        existing = client.pull_requests_from(owner, repo, f"{owner}:{branch}")
        if existing:
            return int(existing[0]["number"]), str(existing[0].get("html_url", "")), True
        created = client.create_pull_request(owner, repo, {"title": title, "head": branch, "base": base,
                                                           "body": body, "draft": True})
    return int(created["number"]), str(created.get("html_url", "")), False
