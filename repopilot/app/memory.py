"""Memory across runs: each diagnosis is recorded in the failure history (`Settings.history_path()`), and each
failure of a report says what the history knows of it ("seen 4 times since 2026-11-02, first on 1a2b3c4").
Recording also forgets, once a day, rows older than the retention (`history_days`); listing and pruning on
request are app/recurring.py's."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from ..ci import DiagnosisReport, FailureRow, Recurring, RunPlace, RunRecord, RunRef, SeenBefore, parse_run_url
from ..core import InputError
from .recurring import history_store
from .settings import Settings

__all__ = ["context_of", "record_of", "remember"]


def _run_ref(source: str | None) -> RunRef | None:
    try:
        return parse_run_url(source or "")
    except InputError:
        return None


def context_of(report: DiagnosisReport, settings: Settings) -> RunPlace:
    """A report's origin: its run URL (repository, run, attempt, job), else the GitHub Actions job it runs in."""
    ref = _run_ref(report.source)
    if ref is not None:
        return RunPlace(repository=report.repository or ref.slug, job=report.job, branch=report.branch,
                        commit=report.commit, run_id=str(ref.run_id), attempt=ref.attempt, url=ref.url)
    env = settings.actions
    if env.get("GITHUB_ACTIONS") != "true":
        return RunPlace(repository=report.repository, branch=report.branch, commit=report.commit)
    attempt = env.get("GITHUB_RUN_ATTEMPT", "")
    return RunPlace(repository=env.get("GITHUB_REPOSITORY") or None, workflow=env.get("GITHUB_WORKFLOW") or None,
                    job=env.get("GITHUB_JOB") or None,
                    branch=env.get("GITHUB_HEAD_REF") or env.get("GITHUB_REF_NAME") or None,
                    commit=env.get("GITHUB_SHA") or None, run_id=env.get("GITHUB_RUN_ID") or None,
                    attempt=int(attempt) if attempt.isdigit() else None)


def record_of(report: DiagnosisReport, place: RunPlace) -> RunRecord:
    return RunRecord.at(place, job=place.job or report.job, source=report.source, category=report.category,
                        failures=[FailureRow(fingerprint=f.fingerprint, rule=f.rule, category=f.category,
                                             message=f.message) for f in report.identifying_failures()])


def _iso(when: float) -> str:
    return datetime.fromtimestamp(when, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def remember(reports: Sequence[DiagnosisReport], settings: Settings,
             contexts: Sequence[RunPlace] | None = None) -> list[DiagnosisReport]:
    """Record the reports in the history and return them with what the history knows of each failure."""
    store = history_store(settings)
    if store is None or not reports:
        return list(reports)
    ctxs = list(contexts) if contexts is not None else [context_of(r, settings) for r in reports]
    store.record_many([record_of(r, c) for r, c in zip(reports, ctxs, strict=True)])
    store.prune_if_due(settings.history_days)
    known = {r.fingerprint: r for r in store.recurring(fingerprints=sorted(
        {f.fingerprint for report in reports for f in report.failures}))}
    out = []
    for report, ctx in zip(reports, ctxs, strict=True):
        failures = [f.model_copy(update={"history": _seen(known[f.fingerprint])}) if f.fingerprint in known else f
                    for f in report.failures]
        out.append(report.model_copy(update={"failures": failures, "repository": ctx.repository,
                                             "branch": ctx.branch, "commit": ctx.commit}))
    return out


def _seen(r: Recurring) -> SeenBefore:
    return SeenBefore(count=r.count, first_seen=_iso(r.first_seen), last_seen=_iso(r.last_seen),
                      first_commit=r.first_commit, branches=r.branches, flake_rate=r.flake_rate)
