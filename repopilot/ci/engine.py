"""The diagnosis pipeline for other layers: `diagnose_source()` returns one JSON-contract dict per job log;
`diagnose_input()` returns the richer objects (diagnosis and excerpt) for one log."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..core import InputError, TraceRecorder, redact_record
from .baseline import seen_in_baseline
from .catalog import Catalog, load_catalog
from .diagnosis import CONFIDENT, Diagnosis, build_diagnosis
from .excerpt import DEFAULT_TOKEN_BUDGET, Excerpt, build_excerpt
from .located import apply_locator
from .locator import LocatorModel, candidates, default_model
from .paths import repo_relative
from .report import DiagnosisReport, ExcerptInfo, FailingStep, ReportFailure, ReportLine
from .runurl import run_id_of
from .scanner import Scanner
from .sources import LogInput, open_sources
from .split import scan_file
from .verdict import decide_category

if TYPE_CHECKING:  # the HTTP client is imported only when a run URL needs it; the messages' models when a model is
    from ..core import Model
    from .report import Category, DecidedBy
    from .runurl import GitHubAccess

__all__ = ["Result", "default_scanner", "diagnose_input", "diagnose_source", "to_report"]


@dataclass
class Result:
    """One log's diagnosis, the excerpt a model would get, and what the model said, if it was asked."""

    diagnosis: Diagnosis
    excerpt: Excerpt
    escalation: dict[str, Any] | None = None

    def report(self) -> DiagnosisReport:
        # Reports quote log lines, and a log can echo a token: every caller gets them redacted.
        return redact_record(to_report(self))


# On a fresh machine (nothing in the cache yet) a log below this size is scanned with `re`: it scans 1 MB in about
# the time hyperscan takes to compile the catalog. From the next run on, hyperscan's database is compiled once
# and cached.
_COMPILE_FROM = 1024 * 1024


@lru_cache(maxsize=4)
def _scanner(engine: str | None, rules: tuple[Path, ...], cache_dir: Path | None, compile_hyperscan: bool) -> Scanner:
    return Scanner(load_catalog(list(rules), cache_dir=cache_dir), engine=engine, cache_dir=cache_dir,
                   compile_hyperscan=compile_hyperscan)


def default_scanner(engine: str | None = None, rules: tuple[Path, ...] = (), cache_dir: Path | None = None, *,
                    size: int | None = None) -> Scanner:
    """The bundled catalog plus the user's rule folders `rules`, compiled once per process (and kept in
    `cache_dir` between processes), for logs of about `size` bytes (None: unknown, maybe big)."""
    small = size is not None and size < _COMPILE_FROM
    fresh = small and (cache_dir is None or not any(cache_dir.glob("catalog-*")))
    return _scanner(engine, rules, cache_dir, not fresh)


def diagnose_input(log: LogInput, *, baseline: LogInput | None = None, model: Model | None = None,
                   recorder: TraceRecorder | None = None, token_budget: int = DEFAULT_TOKEN_BUDGET,
                   scanner: Scanner | None = None, progress: Callable[[int], None] | None = None,
                   locator: LocatorModel | None = None, workspace: str | None = None, workers: int = 1,
                   ahead: bool = True) -> Result:
    """Diagnose one log. `workspace` is the job's GITHUB_WORKSPACE, when known: files under it are reported
    relative to the repository, as are files under any runner's usual workspace. `workers`: processes a big log
    file may be scanned in at once (ci/split.py; 0 or 1: one pass in this process, the default; N > 1: up to N
    forked processes: faster on a big file, but each worker adds its own memory). `ahead`: a big file scanned in one
    pass is scanned by a helper process ahead of this process's work on the lines (ci/ahead.py; the same result)."""
    if token_budget < 100:
        raise InputError(f"token budget {token_budget} is too small: use at least 100")
    sc = scanner or default_scanner(size=log.size)
    # One pass by default: its memory is flat in the log's size, while forked workers each add about what the
    # pass itself holds plus the parent's pages they copy (README, "Scanning a big log").
    if workers > 1 and log.path is not None and log.size is not None:
        res = scan_file(sc, log.path, log.size, workers, progress)
    else:
        with log.open() as fh:
            res = sc.scan(fh, progress=progress, ahead=ahead)
    if res.size == 0:
        raise InputError(f"{log.name} is empty: nothing to diagnose")
    dropped: set[int] = set()
    if baseline is not None:
        dropped = seen_in_baseline(baseline, candidates(res))
    diag = build_diagnosis(res, name=log.name, source=log.source, run_id=run_id_of(log.source), job=log.job,
                           catalog_version=_catalog(sc).version, dropped=dropped)
    diag.step_name = log.failed_step
    apply_locator(diag, res, locator or default_model(), dropped)
    decide_category(diag, res)
    for f in diag.failures:
        f.file = repo_relative(f.file, workspace)
    excerpt = build_excerpt(diag, token_budget)
    outcome: dict[str, Any] | None = None
    if recorder is not None:
        _record(recorder, log, res.engine, diag)
    if not diag.confident and model is not None:
        rec = recorder or TraceRecorder.start("diagnose", f"diagnose {log.name}", model=model.model,
                                              provider=getattr(model, "provider", None))
        from .escalate import escalate  # its prompt and schema: only when a model is asked

        outcome = escalate(diag, excerpt, model, rec)
    elif not diag.confident:
        diag.decisions.append({"decision": "not escalated", "why": (diag.escalation_reason or "") +
                               "; no model configured (or --no-llm)"})
        if diag.decided_by not in ("rules", "locator", "command"):
            diag.category = "unknown"
            diag.decided_by = "none"
        if recorder is not None:
            recorder.step("decision", result="not_escalated",
                          detail={"decision": "not escalated", "why": diag.escalation_reason,
                                  "confidence": diag.confidence, "model": None})
    return Result(diagnosis=diag, excerpt=excerpt, escalation=outcome)


def _record(recorder: TraceRecorder, log: LogInput, engine: str, diag: Diagnosis) -> None:
    """The rules' decisions as trace steps, each with the rule and the one confidence (the category's)."""
    top = next((f for f in diag.failures if f.causal), diag.failures[0] if diag.failures else None)
    verdict = (f"category {diag.category}, confidence {diag.confidence:.2f}"
               + ("" if diag.confident else f" (below {CONFIDENT})")
               + (f", decided by {diag.decided_by}" + (f" ({top.rule})" if top else "")))
    recorder.step("decision", result=verdict, detail={
        "decision": "rules", "log": log.name, "engine": engine, "lines": diag.lines, "rule": top.rule if top else None,
        "category": diag.category, "decided_by": diag.decided_by, "confident": diag.confident,
        "confidence": diag.confidence,
        "fired": [{"rule": f.rule, "line": f.trigger, "confidence": f.confidence, "score": round(f.score, 3),
                   "causal": f.causal} for f in diag.failures[:30]],
        "decisions": diag.decisions[:100]})
    located = next((d for d in diag.decisions if d.get("decision") == "locator"), None)
    if located is not None:
        recorder.step("decision", result=f"locator chose {len(diag.error_lines)} lines",
                      detail={"rule": "locator", "confidence": diag.confidence, **located})
    category = next((d for d in diag.decisions if d.get("decision") == "category"), None)
    if category is not None:
        recorder.step("decision", result=f"category {diag.category} (confidence {diag.confidence:.2f})",
                      detail={"rule": top.rule if top else None, **category})


def _catalog(sc: Scanner) -> Catalog:
    return sc.catalog


def diagnose_source(source: str, *, baseline: str | None = None, model: Model | None = None,
                    recorder: TraceRecorder | None = None, token_budget: int = DEFAULT_TOKEN_BUDGET,
                    scanner: Scanner | None = None, github: GitHubAccess | None = None,
                    on_log: Callable[[LogInput, DiagnosisReport], None] | None = None) -> list[DiagnosisReport]:
    """One report per job log that SOURCE names (see README "diagnose" for the fields). `on_log` sees each log
    beside its report (the fix run reads the failing command from it)."""
    inputs = open_sources(source, github)
    base: LogInput | None = None
    if baseline is not None:
        bases = open_sources(baseline, github)
        if len(bases) != 1:
            raise InputError(f"--baseline must name one log, {baseline} holds {len(bases)}")
        base = bases[0]
    reports = []
    for i in inputs:
        report = diagnose_input(i, baseline=base, model=model, recorder=recorder, token_budget=token_budget,
                                scanner=scanner).report()
        if on_log is not None:
            on_log(i, report)
        reports.append(report)
    return reports


def to_report(result: Result) -> DiagnosisReport:
    """The report of one diagnosed log (checked: a category the contract does not allow fails here)."""
    d = result.diagnosis
    texts = d.texts
    failures = [ReportFailure(
        rule=f.rule, category=cast("Category", f.category), confidence=round(f.confidence, 3), message=f.message,
        lines=[ReportLine(line=n, text=texts.get(n, "")) for a, b in f.ranges() for n in range(a, b + 1)][:200],
        causal=f.causal, score=round(f.score, 3), subcategory=f.subcategory, tool=f.tool, file=f.file, line=f.line,
        column=f.column, test=f.test, package=f.package, hint=f.hint, repeats=f.repeats, note=f.note)
        for f in d.failures]
    ex = result.excerpt
    # The step's name as GitHub shows it (from the API or `gh run view`), else the command its header ran.
    step = None if d.step is None else FailingStep(name=d.step_name or d.step.name, line=d.step.header_line or None,
                                                   error_line=d.step.error_line, exit_code=d.step.exit_code)
    if step is None and d.step_name:
        step = FailingStep(name=d.step_name)
    return DiagnosisReport(
        # Checked by the report itself (`__post_init__`): a category the contract does not allow fails here.
        category=cast("Category", d.category), decided_by=cast("DecidedBy", d.decided_by),
        error_lines=list(d.error_lines), failures=failures,
        excerpt=ExcerptInfo(ranges=[(a, b) for a, b in ex.ranges], tokens=ex.tokens, text=ex.text,
                            folded=[(a, b) for a, b in ex.folded]),
        source=d.source, run_id=d.run_id, log=d.name, job=d.job, lines=d.lines, bytes=d.size, engine=d.engine,
        catalog_version=d.catalog_version, confident=d.confidence >= CONFIDENT, confidence=round(d.confidence, 3),
        failing_step=step, escalation_reason=(d.escalation_reason or None) if d.confidence < CONFIDENT else None,
        summary=d.llm_summary or None, hint=d.llm_hint or None, model_note=d.model_note,
        baseline_dropped=d.baseline_dropped)
