"""Job logs of a GitHub Actions run, fetched through the REST API from a run URL.

`github_log_inputs(URL)` lists the run's jobs, keeps the failed ones (or the one job named in the URL), streams
each log to a temporary file (bounded memory; deleted when the process exits) and returns one `LogInput` per job
with its name and failing step. Set `REPOPILOT_LOG_CACHE` to a directory to keep downloaded logs there and reuse
them (logs of finished jobs never change): the GitHub Action diagnoses the same run twice, once per format.
The cache is bounded (`GitHubAccess.log_cache_mb`; the least recently used logs go first, ci/disk_bound.py).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import tempfile
import time
import weakref
from collections import Counter
from pathlib import Path
from typing import Any, BinaryIO

from ..core import GitHubAPIError, InputError, RunError
from .disk_bound import cache_entries, evict_least_recent, touch
from .github_api import GitHubAccess, GitHubClient
from .runurl import RunRef, parse_run_url
from .sources import DownloadReport, LogInput

__all__ = ["FAILED_CONCLUSIONS", "NoFailedJobs", "failed_jobs", "failed_step", "github_log_inputs", "job_log_inputs"]

# `cancelled` is left out: a cancelled job usually only shows that another one failed first.
FAILED_CONCLUSIONS = frozenset({"failure", "timed_out", "startup_failure"})

_LOG_GONE = (404, 410)  # a job whose log was never uploaded, or is past the retention period
_log = logging.getLogger(__name__)
# The cache's own files: finished logs, and downloads under way (or left by a killed process) beside them.
_CACHED_LOG = re.compile(r"[\w.-]+_\d+\.log")
_DOWNLOADING = re.compile(r"[\w.-]+_\d+\.log\.\w+\.part")
_STALE_PART_S = 3600.0  # a download not renamed into place within an hour was left by a process that died


class NoFailedJobs(InputError):
    """The run has no failed job to diagnose (it passed, or is still running)."""


def failed_jobs(client: GitHubClient, ref: RunRef) -> list[dict[str, Any]]:
    """The jobs to diagnose: the one job of a job URL, else every failed job of the run (InputError if none)."""
    if ref.job_id is not None:
        job = client.get_job(ref.owner, ref.repo, ref.job_id)
        if job.get("run_id") not in (None, ref.run_id):
            raise InputError(f"job {ref.job_id} belongs to run {job.get('run_id')}, not to run {ref.run_id}")
        return [job]
    jobs = client.list_jobs(ref.owner, ref.repo, ref.run_id, ref.attempt)
    failed = [job for job in jobs if job.get("conclusion") in FAILED_CONCLUSIONS]
    if not failed:
        seen = Counter(str(job.get("conclusion") or job.get("status") or "unknown") for job in jobs)
        summary = ", ".join(f"{name} {count}" for name, count in sorted(seen.items())) or "no jobs"
        raise NoFailedJobs(f"{ref.slug} run {ref.run_id} has no failed jobs to diagnose ({summary})")
    return failed


def failed_step(job: dict[str, Any]) -> str | None:
    """The name of the step that failed first, by step number."""
    steps = [step for step in job.get("steps") or [] if isinstance(step, dict)]
    for conclusions in (("failure",), ("timed_out", "cancelled")):
        hits = [step for step in steps if step.get("conclusion") in conclusions]
        if hits:
            first = min(hits, key=_step_number)
            name = first.get("name")
            return name if isinstance(name, str) else None
    return None


def _step_number(step: dict[str, Any]) -> int:
    number = step.get("number")
    return number if isinstance(number, int) else 0


def github_log_inputs(
    url: str,
    access: GitHubAccess | None = None,
    *,
    on_download: DownloadReport | None = None,
    client: GitHubClient | None = None,
) -> list[LogInput]:
    """One `LogInput` per failed job of the run at `url` (or the job the URL names), logs downloaded now;
    `on_download` hears of each download's progress (the CLI draws it; this layer prints nothing)."""
    ref = parse_run_url(url)
    access = access or GitHubAccess()
    own_client = client is None
    if client is None:
        client = GitHubClient(access.token, access.api_url or ref.default_api_url(), api_cache=access.api_cache)
    try:
        jobs = failed_jobs(client, ref)
        inputs, missing = job_log_inputs(client, ref, jobs, access, url, on_download=on_download)
        if not inputs and missing:
            raise missing[0]
        return [log for log, _ in inputs]
    finally:
        if own_client:
            client.close()


def job_log_inputs(client: GitHubClient, ref: RunRef, jobs: list[dict[str, Any]], access: GitHubAccess,
                   source: str, *, on_download: DownloadReport | None = None,
                   ) -> tuple[list[tuple[LogInput, dict[str, Any]]], list[GitHubAPIError]]:
    """The logs of `jobs` (each with its job), downloaded now, and the errors of the logs that are gone."""
    store = _LogStore(access.log_cache, access.log_cache_mb)
    report: DownloadReport = on_download or _quiet
    inputs = []
    missing: list[GitHubAPIError] = []
    for job in jobs:
        try:
            path = store.fetch(client, ref, job, report)
        except GitHubAPIError as exc:
            if exc.status not in _LOG_GONE:
                raise
            # One expired or missing log should not hide the diagnosis of the others.
            _log.warning("repopilot: skipping job %r: %s", job.get("name"), exc)
            missing.append(exc)
            continue
        inputs.append((_log_input(path, ref, job, source, store), job))
    store.bound()
    return inputs, missing


def _log_input(path: Path, ref: RunRef, job: dict[str, Any], source: str, store: _LogStore) -> LogInput:
    def open_log() -> BinaryIO:
        _ = store  # keeps the temporary directory alive as long as the LogInput
        return path.open("rb")

    name = job.get("name")
    job_name = name if isinstance(name, str) and name.strip() else None
    # Named for the job, as the Actions page names it; the job id tells apart jobs named alike.
    label = f"{job_name} ({ref.slug} run {ref.run_id}, job {job.get('id')})" if job_name else \
        f"{ref.slug} run {ref.run_id} job {job.get('id')}"
    return LogInput(name=label, open=open_log, size=path.stat().st_size, source=source, job=job_name,
                    failed_step=failed_step(job))


def _quiet(_key: int, _label: str, _done: int, _total: int | None) -> None:
    return None


class _LogStore:
    """Where downloaded logs live: the cache directory when configured, else a private temporary directory."""

    def __init__(self, cache: Path | None, max_mb: int) -> None:
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.max_bytes = max_mb * 1_000_000
        # The logs this store handed out: their LogInputs open them later, so no bounding removes them while the
        # store (kept alive by those LogInputs) lives.
        self.handed_out: set[Path] = set()
        _LIVE_STORES.add(self)
        if cache:
            self.root = Path(cache)
            try:
                self.root.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise InputError(f"REPOPILOT_LOG_CACHE={cache}: cannot create it ({exc.strerror})") from None
            self.cached = True
        else:
            self._tmp = tempfile.TemporaryDirectory(prefix="repopilot-logs-")
            self.root = Path(self._tmp.name)
            self.cached = False

    def fetch(self, client: GitHubClient, ref: RunRef, job: dict[str, Any], report: DownloadReport) -> Path:
        job_id = job.get("id")
        if not isinstance(job_id, int):
            raise InputError(f"{ref.slug} run {ref.run_id}: the API listed a job without an id")
        target = self.root / f"{ref.owner}_{ref.repo}_{job_id}.log"
        finished = job.get("status") in (None, "completed")
        if self.cached and finished and _readable(target):
            touch(target)  # used: the last to be evicted
            self.handed_out.add(target)
            return target
        label = str(job.get("name") or job_id)
        try:
            # A name of its own, so two processes fetching the same log never write into one file.
            fd, name = tempfile.mkstemp(dir=self.root, prefix=target.name + ".", suffix=".part")
            partial = Path(name)
        except OSError as exc:
            raise RunError(f"cannot save the log of job {label!r} under {self.root}: {exc.strerror}") from None
        try:
            with os.fdopen(fd, "wb") as dest:
                client.download_job_log(ref.owner, ref.repo, job_id, dest,
                                        on_progress=lambda done, total: report(job_id, label, done, total))
            # Renamed only when complete, so an interrupted download is never taken for a cached log.
            partial.replace(target)
        except OSError as exc:
            raise RunError(f"cannot save the log of job {label!r} under {self.root}: {exc.strerror}") from None
        finally:
            partial.unlink(missing_ok=True)
        self.handed_out.add(target)
        return target

    def bound(self) -> None:
        """Keep the cache directory under its size: downloads a dead process left go, then the least recently
        used logs, never one this process handed out. A temporary directory goes with the process anyway."""
        if not self.cached:
            return
        stale = time.time() - _STALE_PART_S
        for part in cache_entries(self.root, lambda name: bool(_DOWNLOADING.fullmatch(name))):
            if part.used < stale:
                with contextlib.suppress(OSError):
                    part.path.unlink()
        entries = cache_entries(self.root, lambda name: bool(_CACHED_LOG.fullmatch(name) or
                                                             _DOWNLOADING.fullmatch(name)))
        in_use = {path for store in list(_LIVE_STORES) for path in store.handed_out}
        downloading = {e.path for e in entries if e.path.name.endswith(".part")}  # in another process: they count
        evict_least_recent(entries, self.max_bytes, keep=in_use | downloading)


_LIVE_STORES: weakref.WeakSet[_LogStore] = weakref.WeakSet()


def _readable(path: Path) -> bool:
    """A cached log to serve: a regular file that can be opened (anything else is fetched again)."""
    try:
        with path.open("rb"):
            return path.is_file() and not path.is_symlink()
    except OSError:
        return False
