"""`repopilot github …`: GitHub Actions integration.

- `github logs RUN_URL` downloads the failed jobs' logs of a run (for reading, or for `diagnose FILE` offline).
- `github report [RUN]` is what the GitHub Action runs: it diagnoses a run's failed jobs through the API, appends
  the Markdown report to `$GITHUB_STEP_SUMMARY`, prints `::error` annotations, and can comment on the run's pull
  request. The diagnosis itself is `repopilot diagnose URL --format markdown|github`, run as a subprocess so
  this command depends only on that documented interface.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import typer

from ..ci import parse_run_url
from ..ci.github import NoFailedJobs, failed_jobs, github_log_inputs
from ..ci.github_api import GitHubClient
from ..core import InputError, RunError, UsageError, redact_text
from ..core.sanitize import visible
from .console import err, out

__all__ = ["COMMENT_MARKER", "register", "resolve_run_url"]

COMMENT_MARKER = "<!-- repopilot-report -->"
_SUMMARY_LIMIT = 1024 * 1024 - 1024  # bytes; GitHub refuses larger step summaries (kept a little margin)
_DIAGNOSE_TIMEOUT = 30 * 60  # seconds; a runaway diagnosis must not hold a runner for its whole 6 h

github_app = typer.Typer(help="GitHub Actions integration: fetch run logs, report on a failed run.",
                         no_args_is_help=True, rich_markup_mode=None)


@github_app.command("logs")
def logs(
    run: str = typer.Argument(..., help="Run URL: https://github.com/OWNER/REPO/actions/runs/RUN_ID[/job/JOB_ID]"),
    out_dir: Path = typer.Option(Path("."), "--out", "-o", help="Directory to write one log file per job into."),
) -> None:
    """Download the logs of a run's failed jobs (or of the job in the URL) through the GitHub API."""
    inputs = github_log_inputs(run)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create {out_dir}: {exc.strerror}") from None
    used: set[str] = set()
    for log in inputs:
        stem = base = _file_safe(log.job or log.name)
        while stem in used:  # two jobs can share a name (matrix legs named alike)
            stem = f"{base}-{len(used)}"
        used.add(stem)
        target = out_dir / f"{stem}.log"
        with log.open() as source, target.open("wb") as dest:
            while chunk := source.read(1 << 20):
                dest.write(chunk)
        step = f" (failed step: {log.failed_step})" if log.failed_step else ""
        out.print(f"{target}\t{log.job}{step}", markup=False)


@github_app.command("report")
def report(
    run: str = typer.Argument("", envvar="REPOPILOT_RUN", show_default=False,
                              help="Run URL or run id (with GITHUB_REPOSITORY). Default: the `workflow_run` "
                                   "that triggered this workflow, else the current run."),
    summary_file: Path | None = typer.Option(None, "--summary-file", envvar="GITHUB_STEP_SUMMARY",
                                             help="Markdown file to append the report to (default "
                                                  "$GITHUB_STEP_SUMMARY; stdout when unset)."),
    comment_on_pr: bool = typer.Option(False, "--comment-on-pr/--no-comment-on-pr", envvar="REPOPILOT_COMMENT_ON_PR",
                                       help="Also post the report as a comment on the run's pull request."),
    annotations: bool = typer.Option(True, "--annotations/--no-annotations",
                                     help="Print ::error annotations on stdout (the runner turns them into "
                                          "annotations)."),
    model: str = typer.Option("", "--model", envvar="REPOPILOT_MODEL", show_default=False,
                              help="provider:model to consult when the rules are unsure (default: rules only)."),
) -> None:
    """Diagnose a run's failed jobs for the GitHub Action: job summary, annotations, optional PR comment."""
    url = resolve_run_url(run)
    ref = parse_run_url(url)
    with GitHubClient(api_url=os.environ.get("GITHUB_API_URL") or ref.default_api_url()) as client:
        try:
            jobs = failed_jobs(client, ref)
        except NoFailedJobs as exc:
            _write_summary(summary_file, f"### RepoPilot\n\nNothing to diagnose: {exc}.\n")
            err.print(f"repopilot: {exc}; nothing to report", markup=False)
            return
        err.print(f"repopilot: diagnosing {len(jobs)} failed job(s) of {ref.slug} run {ref.run_id}", markup=False)
        with tempfile.TemporaryDirectory(prefix="repopilot-cache-") as cache:
            # Both formats read the same logs: download once.
            env = {**os.environ, "REPOPILOT_LOG_CACHE": cache}
            if model:
                env["REPOPILOT_MODEL"] = model
            else:
                env.pop("REPOPILOT_MODEL", None)
            try:
                markdown = _run_diagnose(url, "markdown", env)
                _write_summary(summary_file, markdown)
                if annotations:
                    sys.stdout.write(visible(_run_diagnose(url, "github", env)))
                    sys.stdout.flush()
            except _DiagnoseFailed as exc:
                # Say it where people look (the summary), then fail the step with the diagnosis's exit code.
                if summary_file is not None:
                    _write_summary(summary_file, f"### RepoPilot\n\nThe diagnosis failed: {exc.reason}\n")
                raise typer.Exit(exc.code) from None
        if comment_on_pr:
            _comment(client, ref.owner, ref.repo, ref.run_id, markdown)


def resolve_run_url(run: str) -> str:
    """The run to report on: a URL as given, a run id in GITHUB_REPOSITORY, else the triggering run."""
    run = run.strip()
    server = (os.environ.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/")
    repository = os.environ.get("GITHUB_REPOSITORY", "").strip()
    if run and not run.isdigit():
        return run
    if run:
        if not repository:
            raise UsageError("a run id needs GITHUB_REPOSITORY=OWNER/REPO; or pass the run URL")
        return f"{server}/{repository}/actions/runs/{run}"
    triggering = _workflow_run_url(os.environ.get("GITHUB_EVENT_PATH"))
    if triggering:
        return triggering
    current = os.environ.get("GITHUB_RUN_ID", "").strip()
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


def _run_diagnose(url: str, fmt: str, env: dict[str, str]) -> str:
    """`repopilot diagnose URL --format FMT` in a child process; its stdout, or its failure as ours."""
    command = [sys.executable, "-m", "repopilot.cli.main", "diagnose", url, "--format", fmt]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, errors="replace",
                              timeout=_DIAGNOSE_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise RunError(f"diagnose took longer than {_DIAGNOSE_TIMEOUT} s; stopped") from None
    lines = [redact_text(line) for line in done.stderr.splitlines()]
    for line in lines:
        err.print(line, markup=False)
    if done.returncode != 0:
        # The child already said why on stderr (forwarded above); keep its exit code.
        reason = next((line for line in reversed(lines) if line.strip()), f"exit code {done.returncode}")
        raise _DiagnoseFailed(done.returncode, reason.removeprefix("repopilot: "))
    return done.stdout


class _DiagnoseFailed(Exception):
    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


def _write_summary(summary_file: Path | None, markdown: str) -> None:
    markdown = visible(markdown)
    text = markdown if markdown.endswith("\n") else markdown + "\n"
    if len(text.encode()) > _SUMMARY_LIMIT:
        # The runner drops a step summary over 1 MiB entirely; a cut report is better than none.
        note = "\n\n_(report truncated to fit the job summary limit)_\n"
        text = text.encode()[: _SUMMARY_LIMIT - len(note)].decode(errors="ignore") + note
    if summary_file is None:
        sys.stdout.write(text)
        return
    try:
        with summary_file.open("a", encoding="utf-8") as summary:
            summary.write(text + "\n")
    except OSError as exc:
        raise InputError(f"cannot append to the job summary {summary_file}: {exc.strerror}") from None
    err.print(f"repopilot: report appended to {summary_file}", markup=False)


def _comment(client: GitHubClient, owner: str, repo: str, run_id: int, markdown: str) -> None:
    numbers = client.run_pull_requests(owner, repo, run_id)
    if not numbers:
        err.print("repopilot: the run has no pull request (a push, or a fork's PR); no comment posted",
                  markup=False)
        return
    # One comment per pull request, kept current: a PR that fails ten times should not get ten comments.
    url, updated = client.upsert_issue_comment(owner, repo, numbers[0], f"{COMMENT_MARKER}\n{markdown}",
                                               COMMENT_MARKER)
    err.print(f"repopilot: {'updated the comment' if updated else 'commented'} on #{numbers[0]}: {url}",
              markup=False)


def _file_safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "job"


def register(app: typer.Typer) -> None:
    app.add_typer(github_app, name="github")
