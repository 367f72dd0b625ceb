"""The `github report` use case: diagnose a run's failed jobs ONCE, in this process, then render the result as
often as the caller needs (Markdown for the job summary and the PR comment, annotations for the runner)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..ci import (
    RENDERERS,
    DiagnosisReport,
    DownloadReport,
    GitHubClient,
    LogInput,
    NoFailedJobs,
    RunRef,
    failed_jobs,
    github_log_inputs,
    parse_run_url,
    render_markdown,
)
from ..core import InputError, UsageError
from .diagnosing import diagnose
from .runtime import Observer, github_access
from .settings import Settings

__all__ = ["COMMENT_MARKER", "CommentOutcome", "GitHubRunReport", "comment_on_pull_request", "github_logs",
           "report_github_run", "resolve_run_url"]

COMMENT_MARKER = "<!-- repopilot-report -->"


@dataclass
class GitHubRunReport:
    """What `report_github_run` found: the reports (one per failed job), or why there was nothing to diagnose."""

    url: str
    ref: RunRef
    reports: list[DiagnosisReport] = field(default_factory=list)
    nothing_to_diagnose: str | None = None
    jobs: int = 0

    def render(self, fmt: str, *, full_lines: bool = False) -> str:
        """The reports in one of the domain's formats (`markdown`, `github`, `json`); in Markdown long causal
        lines are cut and marked (`render_markdown`'s default) unless `full_lines`."""
        if fmt == "markdown" and full_lines:
            return render_markdown(self.reports, line_chars=None)
        return RENDERERS[fmt](self.reports)


@dataclass(frozen=True)
class CommentOutcome:
    number: int | None  # the pull request, None when the run has none
    url: str | None = None
    updated: bool = False


def _api_url(settings: Settings, ref: RunRef) -> str:
    return settings.github_api_url or ref.default_api_url()


def github_logs(url: str, settings: Settings, *, on_download: DownloadReport | None = None) -> list[LogInput]:
    """The logs of the run's failed jobs (or of the job the URL names), downloaded now."""
    return github_log_inputs(url, github_access(settings), on_download=on_download)


def report_github_run(url: str, settings: Settings, *, no_llm: bool = False, observer: Observer | None = None,
                      on_download: DownloadReport | None = None) -> GitHubRunReport:
    """Diagnose every failed job of the run at `url` (or the job it names): each log downloaded and scanned once."""
    ref = parse_run_url(url)
    access = github_access(settings)
    with GitHubClient(settings.github_token, _api_url(settings, ref), api_cache=access.api_cache) as client:
        try:
            jobs = failed_jobs(client, ref)
        except NoFailedJobs as exc:
            return GitHubRunReport(url=url, ref=ref, nothing_to_diagnose=str(exc))
        inputs = github_log_inputs(url, access, client=client, on_download=on_download)
    reports = diagnose(inputs, settings, no_llm=no_llm, observer=observer, goal=f"diagnose {url}")
    return GitHubRunReport(url=url, ref=ref, reports=reports, jobs=len(jobs))


def comment_on_pull_request(report: GitHubRunReport, markdown: str, settings: Settings) -> CommentOutcome:
    """One comment per pull request, kept current: a PR that fails ten times should not get ten comments."""
    ref = report.ref
    with GitHubClient(settings.github_token, _api_url(settings, ref)) as client:
        numbers = client.run_pull_requests(ref.owner, ref.repo, ref.run_id)
        if not numbers:
            return CommentOutcome(number=None)
        url, updated = client.upsert_issue_comment(ref.owner, ref.repo, numbers[0], f"{COMMENT_MARKER}\n{markdown}",
                                                   COMMENT_MARKER)
    return CommentOutcome(number=numbers[0], url=url, updated=updated)


def resolve_run_url(run: str, settings: Settings) -> str:
    """The run to report on: a URL as given, a run id in GITHUB_REPOSITORY, else the triggering run."""
    run = run.strip()
    actions = settings.actions
    server = settings.github_server_url.rstrip("/")
    repository = actions.get("GITHUB_REPOSITORY", "").strip()
    if run and not run.isdigit():
        return run
    if run:
        if not repository:
            raise UsageError("a run id needs GITHUB_REPOSITORY=OWNER/REPO; or pass the run URL")
        return f"{server}/{repository}/actions/runs/{run}"
    triggering = _workflow_run_url(actions.get("GITHUB_EVENT_PATH"))
    if triggering:
        return triggering
    current = actions.get("GITHUB_RUN_ID", "").strip()
    if current.isdigit() and repository:
        return f"{server}/{repository}/actions/runs/{current}"
    raise UsageError("no run to report on: pass a run URL or id (or run inside GitHub Actions)")


def _workflow_run_url(event_path: str | None) -> str | None:
    if not event_path:
        return None
    try:
        event = json.loads(Path(event_path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"GITHUB_EVENT_PATH {event_path}: unreadable event payload ({exc})") from None
    run = event.get("workflow_run") if isinstance(event, dict) else None
    url = run.get("html_url") if isinstance(run, dict) else None
    return url if isinstance(url, str) and url else None
