"""The diagnose use case: one `DiagnosisReport` per log, the whole diagnosis recorded as one trace."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING

from ..ci import DiagnosisReport, LogInput, diagnose_input, open_sources
from ..core import InputError, RepoPilotError, TraceRecorder
from .attributing import attribute
from .memory import remember
from .recurring import history_held

if TYPE_CHECKING:
    from ..ci import DownloadReport
from .runtime import Observer, github_access, model_for, observed, scanner_for
from .settings import Settings

__all__ = ["ProgressFor", "diagnose", "open_logs"]

# Given a log about to be scanned, a context manager yielding a callback for bytes scanned (or None).
ProgressFor = Callable[[LogInput], AbstractContextManager[Callable[[int], None] | None]]


def open_logs(source: str, settings: Settings, *, on_download: DownloadReport | None = None) -> list[LogInput]:
    """The logs SOURCE names (a file, '-', a run-logs zip, a run URL) with the settings' GitHub access;
    `on_download` hears how a run's logs download."""
    return open_sources(source, github_access(settings), max_stdin_bytes=settings.max_stdin_bytes,
                        on_download=on_download)


def _no_progress(log: LogInput) -> AbstractContextManager[Callable[[int], None] | None]:
    return nullcontext(None)


def diagnose(sources: Sequence[LogInput], settings: Settings, *, baseline: LogInput | None = None,
             no_llm: bool = False, goal: str | None = None, observer: Observer | None = None,
             progress: ProgressFor | None = None, remember_runs: bool = True) -> list[DiagnosisReport]:
    """Diagnose each log once: rules first, one model call only when they are unsure and a model is configured
    (and `no_llm` is not set). Every report names the trace that recorded the diagnosis (`trace_run_id`), and is
    recorded in the failure history (unless `remember_runs` is off or the history is), its failures saying how
    often they were seen before."""
    if not sources:
        raise InputError("no logs to diagnose")
    model = None if no_llm else model_for(settings, required=False)
    # The largest log decides whether hyperscan's database is worth compiling on a fresh machine.
    sizes = [log.size for log in sources]
    scanner = scanner_for(settings, size=None if None in sizes else max(s or 0 for s in sizes))
    rec = TraceRecorder.start("diagnose", goal or f"diagnose {sources[0].source}",
                              model=model.model if model else None,
                              provider=getattr(model, "provider", None) if model else None)
    reports: list[DiagnosisReport] = []
    with observed(rec, model, settings, observer):
        try:
            for log in sources:
                with (progress or _no_progress)(log) as on_bytes:
                    result = diagnose_input(log, baseline=baseline, model=model, recorder=rec, scanner=scanner,
                                            token_budget=settings.token_budget, progress=on_bytes,
                                            workers=settings.scan_workers, ahead=settings.scan_ahead,
                                            workspace=settings.actions.get("GITHUB_WORKSPACE"))
                # `run_id` is the CI run (from a run URL); `trace_run_id` names this diagnosis's own trace.
                reports.append(result.report().model_copy(update={"trace_run_id": rec.trace.run_id}))
        except KeyboardInterrupt:
            rec.finish("interrupted")
            raise
        except BaseException:
            rec.finish("failed")
            raise
        if remember_runs:
            reports = _remembered(reports, settings, rec)
        rec.trace.set_reports([r.contract() for r in reports])
        rec.finish("completed")
    return reports


def _remembered(reports: list[DiagnosisReport], settings: Settings, rec: TraceRecorder) -> list[DiagnosisReport]:
    """The reports recorded in the failure history. A history that cannot be written (a read-only home, a
    corrupt file) costs the memory, not the diagnosis: the trace says why."""
    try:
        # Attributed first: the history must not hold this very diagnosis when it is asked for evidence. Both on
        # one connection to the history file.
        with history_held(settings) as held:
            remembered = remember(attribute(reports, held), held)
    except RepoPilotError as exc:
        rec.step("decision", result="not recorded in the failure history",
                 detail={"decision": "history", "why": str(exc)})
        return reports
    rec.step("decision", result=f"recorded {len(reports)} diagnoses in the failure history", detail={
        "decision": "history", "fingerprints": [{"fingerprint": f.fingerprint, "seen": f.history.count if f.history
                                                 else 1} for r in remembered for f in r.identifying_failures()]})
    return remembered
