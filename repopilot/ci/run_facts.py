"""The facts around a failed run, from the GitHub REST API, for attribution (ci/attribution.py).

For the run a URL names: the run itself (commit, branch, workflow, attempts, pull request), the jobs of its
other attempts (a job that passed there is a flake), the base branch (the pull request's base, else the
repository's default branch) and that branch's latest completed run of the same workflow before this one,
with the logs of its failed jobs (diagnosed by the caller to compare fingerprints). A handful of calls per run,
each through the client's one retry policy (rate limits honoured); finished jobs' logs go through the log cache.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core import GitHubAPIError
from .github import FAILED_CONCLUSIONS, job_log_inputs
from .github_api import GitHubClient
from .report import Evidence
from .runurl import GitHubAccess, RunRef
from .sources import LogInput

__all__ = ["BaseRun", "RunFacts", "gather_run_facts"]

_MAX_BASE_JOBS = 10  # a base run failing in more jobs than this is read in part (and said to be)
_BASE_RUNS = 10  # how many of the base branch's newest completed runs are looked through


@dataclass
class BaseRun:
    branch: str
    run_id: int
    url: str
    passed: bool
    commit: str | None = None
    logs: list[tuple[LogInput, Evidence]] = field(default_factory=list)  # failed jobs' logs, with their URLs
    complete: bool = True
    passing_jobs: list[str] = field(default_factory=list)


@dataclass
class RunFacts:
    ref: RunRef
    commit: str | None = None
    branch: str | None = None
    workflow: str | None = None
    attempt: int = 1
    base_branch: str | None = None
    own: dict[str, Evidence] = field(default_factory=dict)  # failing job name -> the job
    passed_elsewhere: dict[str, list[Evidence]] = field(default_factory=dict)  # job name -> its passes
    base: BaseRun | None = None
    why_no_base: str = "no completed run of the workflow on the base branch was found"


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _job_url(ref: RunRef, job: dict[str, Any], attempt: int | None = None) -> str:
    url = _str(job.get("html_url"))
    if url:
        return url
    return RunRef(ref.host, ref.owner, ref.repo, ref.run_id, job_id=job.get("id"), attempt=attempt).url


def gather_run_facts(client: GitHubClient, ref: RunRef, access: GitHubAccess) -> RunFacts:
    """Everything attribution needs to know about the run at `ref` (GitHubAPIError when the API cannot say)."""
    run = client.get_run(ref.owner, ref.repo, ref.run_id)
    attempt = run.get("run_attempt")
    latest = attempt if isinstance(attempt, int) and attempt > 0 else 1
    this = ref.attempt or latest
    facts = RunFacts(ref=ref, commit=_str(run.get("head_sha")), branch=_str(run.get("head_branch")),
                     workflow=_str(run.get("name")), attempt=this)
    for n in range(1, latest + 1):
        # Each attempt by its number: a finished attempt's jobs never change, so they are kept (ci/api_cache.py).
        jobs = client.list_jobs(ref.owner, ref.repo, ref.run_id, n)
        for job in jobs:
            name = _str(job.get("name"))
            if name is None:
                continue
            if n == this and job.get("conclusion") in FAILED_CONCLUSIONS:
                facts.own[name] = Evidence(kind="run", text=f"job {name!r} failed on attempt {n}",
                                           url=_job_url(ref, job, n))
            elif n != this and job.get("conclusion") == "success":
                facts.passed_elsewhere.setdefault(name, []).append(Evidence(
                    kind="run", text=f"job {name!r} passed on attempt {n} of the same run (same commit)",
                    url=_job_url(ref, job, n)))
    facts.base_branch = _base_branch(client, ref, run)
    workflow_id = run.get("workflow_id")
    if facts.base_branch and isinstance(workflow_id, int):
        facts.base, why = _base_run(client, ref, run, workflow_id, facts.base_branch, access)
        facts.why_no_base = why or facts.why_no_base
    return facts


def _base_branch(client: GitHubClient, ref: RunRef, run: dict[str, Any]) -> str | None:
    for pr in run.get("pull_requests") or []:
        base = pr.get("base") if isinstance(pr, dict) else None
        if isinstance(base, dict) and _str(base.get("ref")):
            return str(base["ref"])
    # A push, or a fork's pull request (GitHub lists no pull requests then): the default branch.
    return _str(client.get_repo(ref.owner, ref.repo).get("default_branch"))


def _base_run(client: GitHubClient, ref: RunRef, run: dict[str, Any], workflow_id: int, branch: str,
              access: GitHubAccess) -> tuple[BaseRun | None, str | None]:
    created = str(run.get("created_at") or "")
    candidates = [r for r in client.list_workflow_runs(ref.owner, ref.repo, workflow_id, branch=branch,
                                                       per_page=_BASE_RUNS)
                  if r.get("id") != ref.run_id and str(r.get("created_at") or "") <= (created or "~")
                  and r.get("conclusion") in ("success", *FAILED_CONCLUSIONS)]
    if not candidates:
        return None, f"no completed run of the workflow on {branch} before this one"
    newest = max(candidates, key=lambda r: str(r.get("created_at") or ""))
    base_ref = RunRef(ref.host, ref.owner, ref.repo, int(newest["id"]))
    url = _str(newest.get("html_url")) or base_ref.url
    commit = _str(newest.get("head_sha"))
    if newest.get("conclusion") == "success":
        return BaseRun(branch=branch, run_id=base_ref.run_id, url=url, passed=True, commit=commit), None
    jobs = client.list_jobs(ref.owner, ref.repo, base_ref.run_id)
    failed = [j for j in jobs if j.get("conclusion") in FAILED_CONCLUSIONS]
    base = BaseRun(branch=branch, run_id=base_ref.run_id, url=url, passed=False, commit=commit,
                   passing_jobs=[str(j["name"]) for j in jobs if j.get("conclusion") == "success" and
                                 _str(j.get("name"))])
    try:
        inputs, missing = job_log_inputs(client, base_ref, failed[:_MAX_BASE_JOBS], access, url)
    except GitHubAPIError:
        return BaseRun(branch=branch, run_id=base_ref.run_id, url=url, passed=False, complete=False), None
    base.logs = [(log, Evidence(kind="run", text=f"{branch} run {base_ref.run_id}: job {job.get('name')!r} "
                                f"failed with it", url=_job_url(base_ref, job))) for log, job in inputs]
    base.complete = not missing and len(failed) <= _MAX_BASE_JOBS
    return base, None
