"""What a worker does with each job, on the application layer: act as the GitHub App installation, run the use
case, publish the outcome, and keep the traces in PostgreSQL. Jobs are safe to run twice: every publication is
found-or-created against GitHub's own state (`app.publish_report`, `app.open_draft_pull_request`)."""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import psycopg

from ..app import ServiceSettings, Settings, apply_settings, publish_report, report_github_run
from ..core import GitHubAPIError, UserError, load_trace, read_trace, runs_dir, use_quota_gate
from .auth import AppAuth
from .events import ApproveCommand, DiagnoseRun, FixCommand
from .failure_history import PostgresHistory
from .model_gate import GatedModel, record_usage
from .queue import RateLimited, Transient
from .rate_limits import InstallationQuota
from .store import Store

__all__ = ["Runtime", "install_runtime", "run_job", "runtime"]


@dataclass
class Runtime:
    settings: ServiceSettings
    auth: AppAuth
    store: Store
    history: PostgresHistory
    quota: InstallationQuota

    def as_installation(self, installation_id: int) -> Settings:
        """The application settings with this installation's token, the configured API, and the one failure
        history every worker shares."""
        return replace(self.settings.base, github_token=self.auth.token(installation_id),
                       github_api_url=self.settings.api_url, history_backend=self.history,
                       model_gate=partial(GatedModel, store=self.store, installation_id=installation_id,
                                          slots=self.settings.model_concurrency,
                                          budget_usd=self.settings.installation_budget_usd))


_RUNTIME: list[Runtime] = []


def install_runtime(settings: ServiceSettings) -> Runtime:
    """The worker process's runtime (one GitHub App token cache, one store), kept while the settings stay."""
    assert settings.app_id is not None and settings.private_key is not None
    apply_settings(settings.base)
    if _RUNTIME and _RUNTIME[0].settings == settings:
        return _RUNTIME[0]
    auth, store = AppAuth(settings.app_id, settings.private_key, settings.api_url), Store(settings.database_url)
    rt = Runtime(settings, auth, store, PostgresHistory(settings.database_url),
                 InstallationQuota(store, auth, settings.github_reserve))
    use_quota_gate(rt.quota)  # every GitHub call of this process now minds the installation's reserve
    _RUNTIME[:] = [rt]
    return rt


def runtime() -> Runtime:
    if not _RUNTIME:
        raise RuntimeError("the worker runtime is not installed (install_runtime)")
    return _RUNTIME[0]


def _transient(exc: GitHubAPIError) -> bool:
    status = exc.status
    return status is None or status >= 500 or status in (401, 408, 429) or \
        (status == 403 and "rate limit" in str(exc).lower())


def run_job(kind: str, work: dict[str, Any], *, received: float, job_id: int, attempt: int, worker: str) -> None:
    """Run one job; faults worth another try become `Transient` (the queue retries them with backoff)."""
    rt = runtime()
    handler, model = _HANDLERS[kind]
    parsed = model.model_validate(work)
    installation = parsed.installation_id
    try:
        rt.store.job_started(job_id, attempt, kind, parsed.full_name, f"{socket.gethostname()}/{worker}",
                             max(0.0, time.time() - received))
        wait = rt.quota.before_job(installation)  # what every worker saw of this installation's rate limit
    except psycopg.OperationalError as exc:
        raise Transient(f"database unavailable: {type(exc).__name__}") from None
    outcome, began = "failed", time.time() - 1.0  # a second's slack for file systems with coarse times
    try:
        if wait > 0:  # not one call: the reserve is kept, the job waits in the queue for the reset
            raise GitHubAPIError(f"installation {installation} is down to its reserve of GitHub API calls",
                                 status=429, retry_after=wait)
        handler(rt, parsed)
        outcome = "succeeded"
    except GitHubAPIError as exc:
        if not _transient(exc):
            raise
        if exc.status == 401:  # a revoked or expired installation token: fetch a new one next time
            rt.auth.forget(installation)
        deferred = _deferrals(rt, job_id, attempt)
        if exc.retry_after is not None and exc.status in (403, 429):
            outcome = "deferred"
            raise RateLimited(str(exc), exc.retry_after, deferred=deferred) from None
        outcome = "retry"
        raise Transient(str(exc), deferred=deferred) from None
    except psycopg.OperationalError as exc:
        outcome = "retry"
        raise Transient(f"database unavailable: {type(exc).__name__}", deferred=_deferrals(rt, job_id, attempt)) \
            from None
    finally:
        # The outcome row is statistics; the queue itself records the job's state.
        with contextlib.suppress(psycopg.OperationalError):
            _keep_traces_since(rt, began)
            rt.quota.save()
            if outcome == "deferred":
                rt.store.rate_deferred(installation)
            rt.store.job_finished(job_id, attempt, outcome)


def _deferrals(rt: Runtime, job_id: int, attempt: int) -> int:
    """The job's earlier attempts put off for a rate limit (the queue does not count them as failed tries); 0
    when the database cannot say, so a job never gets more tries than it is owed."""
    try:
        return rt.store.deferrals_before(job_id, attempt)
    except psycopg.OperationalError:
        return 0


def _keep_traces_since(rt: Runtime, since: float) -> None:
    """Every trace this worker wrote since `since` goes to PostgreSQL, a failed job's too, so `repopilot runs
    --db` shows every run whichever worker ran it. A trace another job is still writing may be saved part-way;
    the store never replaces a longer trace with a shorter one, and that job saves its own when it ends."""
    directory = runs_dir()
    for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
        with contextlib.suppress(OSError, UserError, psycopg.DataError):  # one bad trace, not the rest
            if path.stat().st_mtime >= since:
                rt.store.save_trace(read_trace(path))


def diagnose(rt: Runtime, work: DiagnoseRun) -> None:
    settings = rt.as_installation(work.installation_id)
    report = report_github_run(work.run_url, settings, no_llm=not settings.model)
    # A diagnosis the rules were unsure of asked the model (through the gate): its spend counts too.
    record_usage(rt.store, work.installation_id,
                 [load_trace(r) for r in {x.trace_run_id for x in report.reports if x.trace_run_id}])
    publish_report(report, settings, head_sha=work.head_sha, check_name=rt.settings.check_name,
                   pull_request=work.pull_request)


def fix(rt: Runtime, work: FixCommand) -> None:
    from .commands import fix_command

    fix_command(rt, work)


def approve(rt: Runtime, work: ApproveCommand) -> None:
    from .commands import approve_command

    approve_command(rt, work)


_HANDLERS: dict[str, tuple[Callable[[Runtime, Any], None], Any]] = {
    "diagnose": (diagnose, DiagnoseRun),
    "fix": (fix, FixCommand),
    "approve": (approve, ApproveCommand),
}
