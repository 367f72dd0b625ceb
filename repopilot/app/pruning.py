"""`runs prune`: delete recorded runs that are done with, oldest first. A run still waiting for a person
(`awaiting_approval`) or in use by another process is never deleted, whatever its age."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from ..core import RunTrace, UsageError, list_traces, run_lock, trace_path

__all__ = ["KEPT_STATUSES", "PruneOutcome", "prune_runs"]

# A proposal nobody has decided on yet is a person's pending decision, not history.
KEPT_STATUSES = frozenset({"awaiting_approval"})


@dataclass(frozen=True)
class PruneOutcome:
    deleted: list[RunTrace]  # newest first
    kept_pending: int  # old enough, but awaiting approval or in use
    dry_run: bool


def _started(trace: RunTrace) -> datetime | None:
    try:
        return datetime.fromisoformat((trace.started_at or "").replace("Z", "+00:00"))
    except ValueError:
        return None


def prune_runs(*, older_than: timedelta | None, keep: int | None, dry_run: bool = False,
               now: datetime | None = None) -> PruneOutcome:
    """Delete runs started more than `older_than` ago and/or all but the newest `keep` (both: either removes)."""
    if older_than is None and keep is None:
        raise UsageError("say which runs to prune: --older-than AGE and/or --keep N")
    cutoff = (now or datetime.now(UTC)) - older_than if older_than is not None else None
    doomed: list[RunTrace] = []
    pending = 0
    for index, trace in enumerate(list_traces()):  # newest first
        started = _started(trace)
        old = cutoff is not None and started is not None and started < cutoff
        surplus = keep is not None and index >= keep
        if not (old or surplus):
            continue
        if trace.status in KEPT_STATUSES or (trace.status == "running" and not _free(trace.run_id)):
            pending += 1
            continue
        doomed.append(trace)
    if not dry_run:
        for trace in doomed:
            _delete(trace.run_id)
    return PruneOutcome(deleted=doomed, kept_pending=pending, dry_run=dry_run)


def _free(run_id: str) -> bool:
    """Whether no process holds the run (a `running` run whose process died is history)."""
    try:
        with run_lock(run_id):
            return True
    except UsageError:
        return False


def _delete(run_id: str) -> None:
    path = trace_path(run_id)
    for leftover in (path, path.with_suffix(".lock")):
        leftover.unlink(missing_ok=True)
