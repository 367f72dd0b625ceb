"""`repopilot github …`: GitHub Actions integration.

- `github logs RUN_URL` downloads the failed jobs' logs of a run (for reading, or for `diagnose FILE` offline).
- `github report [RUN]` is what the GitHub Action runs: it diagnoses a run's failed jobs through the API, appends
  the Markdown report to `$GITHUB_STEP_SUMMARY`, prints `::error` annotations, and can comment on the run's pull
  request. The run's logs are diagnosed once, in process (`app.report_github_run`), and rendered in both formats.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import typer

from ..app import (
    COMMENT_MARKER,
    GitHubRunReport,
    Settings,
    comment_on_pull_request,
    github_logs,
    keep_failure_issues,
    parse_run_url,
    report_github_run,
    resolve_run_url,
)
from ..core import InputError, RepoPilotError, redact_text
from ..core.sanitize import visible
from .console import err, out
from .context import settings_from
from .progress import download_bar
from .session import reporting, summaries

__all__ = ["COMMENT_MARKER", "register", "write_summary"]
_SUMMARY_LIMIT = 1024 * 1024 - 1024  # bytes; GitHub refuses larger step summaries (kept a little margin)

github_app = typer.Typer(help="GitHub Actions integration: fetch run logs, report on a failed run.",
                         no_args_is_help=True, rich_markup_mode=None)


@github_app.command("logs")
def logs(
    run: str = typer.Argument(..., help="Run URL: https://github.com/OWNER/REPO/actions/runs/RUN_ID[/job/JOB_ID]"),
    out_dir: Path = typer.Option(Path("."), "--out", "-o", help="Directory to write one log file per job into."),
) -> None:
    """Download the logs of a run's failed jobs (or of the job in the URL) through the GitHub API."""
    with download_bar() as on_download:
        inputs = github_logs(run, settings_from(), on_download=on_download)
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
    full_lines: bool = typer.Option(False, "--full-lines", help="Causal lines whole in the report and comment "
                                    "(default: cut at 200 characters, marked `… [cut at column 200 of N]`)."),
    failure_issues: bool | None = typer.Option(None, "--failure-issues/--no-failure-issues", show_default=False,
                                               help="On the default branch, keep one issue per failure "
                                                    "(created once, updated when it recurs, reopened if closed); "
                                                    "needs `issues: write`. Default: the failure_issues setting "
                                                    "(REPOPILOT_FAILURE_ISSUES), off."),
) -> None:
    """Diagnose a run's failed jobs for the GitHub Action: job summary, annotations, optional PR comment."""
    with summaries():
        settings = settings_from(model=model or None, failure_issues=failure_issues)
        url = resolve_run_url(run, settings)
        ref = parse_run_url(url)
        err.print(f"repopilot: diagnosing the failed jobs of {ref.slug} run {ref.run_id}", markup=False)
        try:
            # Each log is downloaded and diagnosed once; the formats below are renderings of the same reports.
            with download_bar() as on_download:
                found = report_github_run(url, settings, no_llm=not model, observer=reporting,
                                          on_download=on_download)
        except RepoPilotError as exc:
            # Say it where people look (the summary), then fail the step with the error's own exit code.
            if summary_file is not None:
                write_summary(summary_file, f"### RepoPilot\n\nThe diagnosis failed: {redact_text(str(exc))}\n")
            raise
        if found.nothing_to_diagnose is not None:
            write_summary(summary_file, f"### RepoPilot\n\nNothing to diagnose: {found.nothing_to_diagnose}.\n")
            err.print(f"repopilot: {found.nothing_to_diagnose}; nothing to report", markup=False)
            return
        markdown = found.render("markdown", full_lines=full_lines)
        write_summary(summary_file, markdown)
        if annotations:
            sys.stdout.write(visible(found.render("github")))
            sys.stdout.flush()
        if comment_on_pr:
            done = comment_on_pull_request(found, markdown, settings)
            if done.number is None:
                err.print("repopilot: the run has no pull request (a push, or a fork's PR); no comment posted",
                          markup=False)
            else:
                err.print(f"repopilot: {'updated the comment' if done.updated else 'commented'} on #{done.number}: "
                          f"{done.url}", markup=False)
        if settings.failure_issues:
            _keep_issues(found, settings)


def _keep_issues(found: GitHubRunReport, settings: Settings) -> None:
    kept = keep_failure_issues(found, settings)
    if kept.skipped is not None:
        err.print(f"repopilot: no failure issue kept: {kept.skipped}", markup=False)
    for issue in kept.issues:
        err.print(f"repopilot: failure {issue.fingerprint[:8]}: issue #{issue.number} {issue.action}"
                  f"{': ' + visible(issue.url, newlines=False) if issue.url else ''}", markup=False)
    if kept.left_out:
        err.print(f"repopilot: {kept.left_out} more failures left without an issue (at most "
                  f"{len(kept.issues)} per run)", markup=False)


def write_summary(summary_file: Path | None, markdown: str) -> None:
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


def _file_safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "job"


def register(app: typer.Typer) -> None:
    app.add_typer(github_app, name="github")
