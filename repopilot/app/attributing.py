"""Attribution for the diagnose use case: each failure labelled NEW, INHERITED, FLAKY, INFRA or "not enough
evidence", with the evidence. For a run URL the facts come from the GitHub API (ci/run_facts.py: the run, its
attempts, the base branch's latest completed run and its failed jobs' logs, diagnosed here); when the API cannot
be reached, and for logs diagnosed inside GitHub Actions, from the local failure history."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress
from dataclasses import replace
from typing import TYPE_CHECKING

from ..ci import (
    BaseFacts,
    DiagnosisReport,
    Evidence,
    JobFacts,
    RunPlace,
    RunRecord,
    RunRef,
    attribute_report,
    diagnose_input,
    parse_run_url,
)
from ..core import InputError, RepoPilotError
from .history_backend import FailureHistory
from .memory import context_of, record_of
from .recurring import history_store
from .runtime import github_access, scanner_for
from .settings import Settings

if TYPE_CHECKING:  # the HTTP client is imported only when a run URL needs it (`diagnose FILE` stays light)
    from ..ci import RunFacts

__all__ = ["attribute"]

_FALLBACK_BASES = ("main", "master")


def _run_ref(source: str | None) -> RunRef | None:
    try:
        return parse_run_url(source or "")
    except InputError:
        return None


def attribute(reports: Sequence[DiagnosisReport], settings: Settings) -> list[DiagnosisReport]:
    """The reports with every failure attributed, and with their commit and branch when the API says."""
    by_run: dict[tuple[str, int, int | None], RunFacts | str] = {}
    bases: dict[int, BaseFacts] = {}  # the base run's logs are diagnosed once, however many jobs failed
    out = []
    for report in reports:
        ref = _run_ref(report.source)
        if ref is None:
            out.append(_from_history(report, settings, why="the log is not from a run URL"))
            continue
        key = (ref.slug, ref.run_id, ref.attempt)
        if key not in by_run:
            by_run[key] = _facts(ref, settings)
        facts = by_run[key]
        if isinstance(facts, str):  # offline, or the API refused: the history is all there is
            out.append(_from_history(report, settings, why=facts))
            continue
        placed = report.model_copy(update={"repository": ref.slug, "branch": facts.branch, "commit": facts.commit})
        job = report.job or ""
        out.append(attribute_report(placed, JobFacts(
            passed_elsewhere=facts.passed_elsewhere.get(job, []), base=_base_facts(facts, settings, bases),
            why_no_base=facts.why_no_base, own=facts.own.get(job))))
    return out


def _facts(ref: RunRef, settings: Settings) -> RunFacts | str:
    from ..ci import GitHubClient, gather_run_facts

    access = github_access(settings)
    # Base runs are finished: their logs never change, so they are kept in the cache between runs.
    access = replace(access, log_cache=access.log_cache or settings.scanner_cache_dir() / "logs")
    try:
        with GitHubClient(access.token, access.api_url or ref.default_api_url(), api_cache=access.api_cache) as client:
            facts = gather_run_facts(client, ref, access)
    except RepoPilotError as exc:
        return f"the GitHub API could not be asked ({exc})"
    _record_facts(facts, settings)
    return facts


def _base_facts(facts: RunFacts, settings: Settings, done: dict[int, BaseFacts]) -> BaseFacts | None:
    base = facts.base
    if base is None:
        return None
    if base.run_id in done:
        return done[base.run_id]
    verdict = "passed" if base.passed else "failed"
    found = BaseFacts(branch=base.branch, passed=base.passed, complete=base.complete,
                      evidence=Evidence(kind="run", text=f"{base.branch} run {base.run_id} {verdict}", url=base.url))
    reports = []
    for log, evidence in base.logs:
        report = diagnose_input(log, scanner=scanner_for(settings, size=log.size),
                                token_budget=settings.token_budget).report()
        reports.append(report)
        for failure in report.causal_failures():
            found.fingerprints.setdefault(failure.fingerprint, evidence)
    _record_base(facts, reports, settings)
    done[base.run_id] = found
    return found


def _record_facts(facts: RunFacts, settings: Settings) -> None:
    """Passes learnt from the API go into the history: flake rates are computed from them."""
    store = history_store(settings)
    if store is None:
        return
    passes = [RunRecord(repository=facts.ref.slug, workflow=facts.workflow, job=job, branch=facts.branch,
                        commit=facts.commit, run_id=str(facts.ref.run_id), url=e.url, conclusion="success",
                        attempt=_attempt_of(e))
              for job, evidence in facts.passed_elsewhere.items() for e in evidence]
    _safely(store, passes)


def _record_base(facts: RunFacts, reports: list[DiagnosisReport], settings: Settings) -> None:
    store = history_store(settings)
    base = facts.base
    if store is None or base is None:
        return
    where = RunPlace(repository=facts.ref.slug, workflow=facts.workflow, branch=base.branch, commit=base.commit,
                     run_id=str(base.run_id), url=base.url)
    records = [record_of(r, where.model_copy(update={"job": r.job})) for r in reports]
    records += [RunRecord.at(where, job=job, conclusion="success") for job in base.passing_jobs]
    _safely(store, records)


def _safely(store: FailureHistory, records: list[RunRecord]) -> None:
    # The memory is lost, not the diagnosis (the diagnose trace says when the history is unusable).
    with suppress(RepoPilotError):
        store.record_many(records)


def _attempt_of(evidence: Evidence) -> int | None:
    url = evidence.url or ""
    ref = _run_ref(url.split("/job/")[0]) if "/attempts/" in url else None
    return ref.attempt if ref else None


def _from_history(report: DiagnosisReport, settings: Settings, *, why: str) -> DiagnosisReport:
    """Facts from the local history: a pass of the same job on the same commit, and the newest recorded run of
    the job on the base branch."""
    store = history_store(settings)
    ctx = context_of(report, settings)
    if store is None:
        return attribute_report(report, JobFacts(why_no_base=f"{why}, and the failure history is off"))
    try:
        facts = _history_facts(store, ctx.repository, ctx.job or report.job, ctx.commit, ctx.run_id, settings)
    except RepoPilotError as exc:
        return attribute_report(report, JobFacts(why_no_base=f"{why}, and the history is unreadable ({exc})"))
    if facts.base is None:
        facts.why_no_base = f"{why}, and the history holds no run of this job on the base branch"
    return attribute_report(report, facts)


def _history_facts(store: FailureHistory, repository: str | None, job: str | None, commit: str | None,
                   run_id: str | None, settings: Settings) -> JobFacts:
    facts = JobFacts()
    if job and commit:
        facts.passed_elsewhere = [
            Evidence(kind="history", row=row.id, url=row.url,
                     text=f"history row {row.id}: job {job!r} passed on {commit[:7]}")
            for row in store.rows(repository=repository, job=job, commit=commit) if row.conclusion == "success"]
    bases = [settings.actions.get("GITHUB_BASE_REF") or ""] if settings.actions.get("GITHUB_BASE_REF") else \
        list(_FALLBACK_BASES)
    for branch in bases:
        rows = [r for r in store.rows(repository=repository, job=job, branch=branch, limit=5)
                if r.run_id != run_id]
        if job and rows:
            row = rows[0]
            fps = store.fingerprints_of(row.id)
            evidence = Evidence(kind="history", row=row.id, url=row.url,
                                text=f"history row {row.id}: {branch} at {(row.commit or '?')[:7]} "
                                     f"{'passed' if row.conclusion == 'success' else 'failed'}")
            facts.base = BaseFacts(branch=branch, evidence=evidence, passed=row.conclusion == "success",
                                   fingerprints={fp: evidence for fp in fps})
            break
    return facts
