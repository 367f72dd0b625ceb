"""The optional `failure_issues` mode of `github report`: one issue per failure fingerprint on the default
branch, updated when the failure comes back instead of duplicated.

- Off unless `failure_issues` is set (REPOPILOT_FAILURE_ISSUES, a config file, `--failure-issues`, the Action's
  `failure-issues` input); the token then needs `issues: write`.
- Only for runs of the repository's default branch that are not pull-request runs (a fork's pull request from
  its own `main` has `head_branch` main too).
- The issue is found by the hidden fingerprint marker among the issues labelled `repopilot-failure` (one listing
  per run, not the search API: search lags behind a just-created issue and has a much lower rate limit).
- Two runs failing the same new way at once both find no issue and both open one; GitHub offers no lock to a
  token with `issues: write`, so the issue opened is the marker: after opening, a run looks again, and when an
  older issue carries the same fingerprint it closes its own as a duplicate of that one and counts its run
  there. Every run takes the oldest issue of a fingerprint, and a younger open duplicate that a lagging listing
  let through is closed by the next run that finds both, so one issue stays open per failure.
- A run already counted (a replay, a re-run of the report) changes nothing. A closed issue whose failure comes
  back is reopened with a comment (a body edit notifies nobody); one closed as "not planned" stays closed and
  only its count moves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from ..ci import (
    ISSUE_LABEL,
    GitHubClient,
    IssueState,
    Occurrence,
    RunRef,
    marked_fingerprint,
    next_issue_state,
    read_issue_state,
    render_failure_issue,
)
from ..core import redact_text
from ..core.sanitize import visible
from .github_report import GitHubRunReport
from .settings import Settings

__all__ = ["FailureIssue", "FailureIssues", "keep_failure_issues"]

_MAX_ISSUES = 10  # per run: a run failing in fifty ways should not open fifty issues at once

IssueAction = Literal["created", "updated", "reopened", "kept closed", "unchanged"]
_DUPLICATE_NOTE = ("Duplicate of #{number}: another run opened that issue for the same failure at the same moment; "
                   "RepoPilot counts this failure there.")


@dataclass(frozen=True)
class FailureIssue:
    fingerprint: str
    number: int | None
    url: str | None
    action: IssueAction


@dataclass(frozen=True)
class FailureIssues:
    issues: list[FailureIssue] = field(default_factory=list)
    skipped: str | None = None  # why no issue was touched
    left_out: int = 0  # fingerprints beyond the per-run bound


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def keep_failure_issues(report: GitHubRunReport, settings: Settings, *, now: datetime | None = None) -> FailureIssues:
    """Create, update or reopen the issue of each failure of `report`'s run, if the mode is on and the run is on
    the default branch."""
    if not settings.failure_issues:
        return FailureIssues(skipped="the failure_issues mode is off")
    if not report.reports:
        return FailureIssues(skipped="nothing was diagnosed")
    ref = report.ref
    with GitHubClient(settings.github_token, settings.github_api_url or ref.default_api_url()) as client:
        run = client.get_run(ref.owner, ref.repo, ref.run_id)
        branch, event = _str(run.get("head_branch")), str(run.get("event") or "")
        default = _str(client.get_repo(ref.owner, ref.repo).get("default_branch"))
        if branch is None or branch != default or event.startswith("pull_request"):
            where = f"a {event} run" if event.startswith("pull_request") else f"a run of {branch or '?'}"
            return FailureIssues(skipped=f"{visible(where, newlines=False)}, not of the default branch "
                                         f"{visible(default or '?', newlines=False)}")
        when = (now or datetime.now(UTC)).isoformat(timespec="seconds").replace("+00:00", "Z")
        url = _str(run.get("html_url")) or RunRef(ref.host, ref.owner, ref.repo, ref.run_id).url
        found = _occurrences(report, str(ref.run_id), url, _str(run.get("head_sha")), branch, when)
        if not found:
            return FailureIssues(skipped="no failure with a fingerprint")
        kept = _keep_all(client, ref, found[:_MAX_ISSUES])
    return FailureIssues(issues=kept, left_out=max(0, len(found) - _MAX_ISSUES))


def _keep_all(client: GitHubClient, ref: RunRef, found: list[Occurrence]) -> list[FailureIssue]:
    """Update the issues found; open the missing ones, then look again (one listing for all) and give way to an
    older issue of the same failure that another run opened meanwhile."""
    listed = client.list_issues(ref.owner, ref.repo, ISSUE_LABEL)
    existing = _ours(listed)
    wanted = {occ.failure.fingerprint for occ in found}
    for younger, oldest in _open_duplicates(listed, wanted):
        _close_as_duplicate(client, ref, younger, oldest)
    kept: list[FailureIssue | None] = []
    opened: list[tuple[int, Occurrence, dict[str, Any]]] = []
    for occ in found:
        issue = existing.get(occ.failure.fingerprint)
        if issue is None:
            title, body = render_failure_issue(occ, next_issue_state(None, occ))
            made = client.create_issue(ref.owner, ref.repo, {"title": title, "body": body, "labels": [ISSUE_LABEL]})
            opened.append((len(kept), occ, made))
            kept.append(None)
        else:
            kept.append(_keep(client, ref, occ, issue))
    if opened:
        first = _ours(client.list_issues(ref.owner, ref.repo, ISSUE_LABEL))
        for index, occ, made in opened:
            kept[index] = _opened(client, ref, occ, made, first.get(occ.failure.fingerprint))
    return [k for k in kept if k is not None]


def _opened(client: GitHubClient, ref: RunRef, occ: Occurrence, made: dict[str, Any],
            first: dict[str, Any] | None) -> FailureIssue:
    """The issue this run opened, unless an older one of the same failure exists: then that one, with this run
    counted in it, and this run's own closed as its duplicate."""
    number = made.get("number")
    if not isinstance(number, int) or first is None or int(first["number"]) >= number:
        return FailureIssue(occ.failure.fingerprint, number, _str(made.get("html_url")), "created")
    _close_as_duplicate(client, ref, made, first)
    return _keep(client, ref, occ, first)


def _open_duplicates(issues: list[dict[str, Any]], fingerprints: set[str]) -> list[tuple[dict[str, Any],
                                                                                        dict[str, Any]]]:
    """Open issues of `fingerprints` younger than the oldest issue of the same fingerprint, with that one."""
    oldest = _ours(issues)
    out = []
    for issue in issues:
        fp = marked_fingerprint(str(issue.get("body") or ""))
        first = oldest.get(fp) if fp in fingerprints else None
        if first is not None and issue is not first and issue.get("state") == "open":
            out.append((issue, first))
    return out


def _close_as_duplicate(client: GitHubClient, ref: RunRef, issue: dict[str, Any], first: dict[str, Any]) -> None:
    number = int(issue["number"])
    client.post_issue_comment(ref.owner, ref.repo, number, _DUPLICATE_NOTE.format(number=int(first["number"])))
    client.update_issue(ref.owner, ref.repo, number, {"state": "closed", "state_reason": "not_planned"})


def _occurrences(report: GitHubRunReport, run_id: str, url: str, commit: str | None, branch: str,
                 when: str) -> list[Occurrence]:
    """One occurrence per fingerprint: matrix legs failing alike are one failure, in several jobs."""
    found: dict[str, Occurrence] = {}
    for diagnosis in report.reports:
        job = diagnosis.job or diagnosis.name()
        for failure in diagnosis.identifying_failures():
            occ = found.get(failure.fingerprint)
            if occ is None:
                found[failure.fingerprint] = Occurrence(run_id=run_id, run_url=url, commit=commit, branch=branch,
                                                        at=when, jobs=[job], failure=failure)
            elif job not in occ.jobs:
                occ.jobs.append(job)
    return list(found.values())


def _ours(issues: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Our issues by fingerprint; of two with one fingerprint (two runs raced to create it), the older."""
    by_fp: dict[str, dict[str, Any]] = {}
    numbered = [i for i in issues if isinstance(i.get("number"), int)]
    for issue in sorted(numbered, key=lambda i: int(i["number"])):
        fp = marked_fingerprint(str(issue.get("body") or ""))
        if fp is not None:
            by_fp.setdefault(fp, issue)
    return by_fp


def _keep(client: GitHubClient, ref: RunRef, occ: Occurrence, issue: dict[str, Any]) -> FailureIssue:
    fp = occ.failure.fingerprint
    number, url = int(issue["number"]), _str(issue.get("html_url"))
    state: IssueState | None = read_issue_state(str(issue.get("body") or ""))
    if state is not None and state.counted(occ.run_id):
        return FailureIssue(fp, number, url, "unchanged")
    _, body = render_failure_issue(occ, next_issue_state(state, occ))  # the title stays: a person may have renamed it
    closed = issue.get("state") == "closed"
    reopen = closed and issue.get("state_reason") != "not_planned"
    client.update_issue(ref.owner, ref.repo, number, {"body": body, **({"state": "open"} if reopen else {})})
    if reopen:
        client.post_issue_comment(ref.owner, ref.repo, number, redact_text(visible(
            f"Failed again on `{occ.branch}` in {occ.run_url} (commit `{(occ.commit or '?')[:7]}`): reopened by "
            f"RepoPilot.")))
    return FailureIssue(fp, number, url, "reopened" if reopen else "kept closed" if closed else "updated")
