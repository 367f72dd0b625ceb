"""The run record: one JSON file per run, replaced atomically after every step. It is what people read after
the fact and the checkpoint a crashed run resumes from. Everything written has passed redaction."""

from __future__ import annotations

import json
import os
import re
import secrets
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field, ValidationError

from .errors import ConfigError, InputError
from .redact import redact

__all__ = [
    "RunTrace",
    "Step",
    "StepType",
    "Totals",
    "TraceListener",
    "TraceRecorder",
    "list_traces",
    "load_trace",
    "new_run_id",
    "runs_dir",
    "trace_path",
    "use_runs_dir",
]

StepType = Literal["llm_call", "tool_call", "tool_result", "error", "decision", "approval"]
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,80}$")


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_run_id() -> str:
    """Sortable by start time, unique without coordination."""
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


_RUNS_DIR = [Path(".runs")]


def use_runs_dir(directory: Path) -> None:
    """Where runs are recorded in this process: set once by the application layer from its Settings (core never
    reads the environment); functions that take a `directory` use it when none is given."""
    _RUNS_DIR[0] = Path(directory)


def runs_dir() -> Path:
    return _RUNS_DIR[0]


def trace_path(run_id: str, directory: Path | None = None) -> Path:
    if not _RUN_ID.match(run_id) or ".." in run_id:
        # Echo at most a prefix: a megabyte of pasted text is not "one clear line".
        shown = repr(run_id) if len(run_id) <= 100 else f"{run_id[:60]!r}… ({len(run_id)} characters)"
        raise InputError(f"not a run id: {shown}")
    return (directory or runs_dir()) / f"{run_id}.json"


class Step(BaseModel):
    step_number: int
    timestamp: str
    type: StepType
    model: str | None = None
    tool_name: str | None = None
    tool_call_id: str | None = None
    arguments: Any = None
    result: Any = None
    error: str | None = None
    duration_ms: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None
    # Anything a step type adds: finish_reason, retries, truncated, decision name and reasons, approval fields.
    detail: dict[str, Any] = Field(default_factory=dict)


class Totals(BaseModel):
    steps: int = 0
    model_calls: int = 0
    tool_calls: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    # None once any call had no known price: an unknown cost is reported as unknown, not as zero.
    cost: float | None = 0.0
    duration_ms: float = 0.0


class RunTrace(BaseModel):
    version: int = 1
    run_id: str
    command: str
    goal: str
    repo: str | None = None
    model: str | None = None
    provider: str | None = None
    status: str = "running"
    started_at: str = Field(default_factory=now_iso)
    finished_at: str | None = None
    budgets: dict[str, Any] = Field(default_factory=dict)
    totals: Totals = Field(default_factory=Totals)
    steps: list[Step] = Field(default_factory=list)
    # The conversation as the model saw it, so `resume` continues without asking answered turns again.
    messages: list[dict[str, Any]] = Field(default_factory=list)
    answer: str | None = None
    diagnosis: dict[str, Any] | None = None
    proposal: dict[str, Any] | None = None
    extra: dict[str, Any] = Field(default_factory=dict)

    def set_reports(self, reports: list[dict[str, Any]]) -> None:
        """Record the diagnosis: one log's report as it is, several as `{"logs": [...]}`."""
        self.diagnosis = reports[0] if len(reports) == 1 else {"logs": reports}

    def reports(self) -> list[dict[str, Any]]:
        """The diagnosis reports, one per log, whichever way they were recorded."""
        d = self.diagnosis
        if not d:
            return []
        many = d.get("logs", d.get("reports"))  # "reports": how early fix runs recorded them
        if isinstance(many, list):
            return [r for r in many if isinstance(r, dict)]
        return [d]


class TraceListener(Protocol):
    """Told about each step as it is recorded and about the run's end (e.g. a live OpenTelemetry exporter).
    A listener that fails is dropped for the rest of the run; it never breaks the run or the trace file."""

    def on_step(self, trace: RunTrace, step: Step) -> None: ...

    def on_finish(self, trace: RunTrace) -> None: ...


class TraceRecorder:
    """Appends steps to a RunTrace and rewrites its file atomically after each one."""

    def __init__(self, trace: RunTrace, directory: Path | None = None) -> None:
        self.trace = trace
        self.path = trace_path(trace.run_id, directory)
        self._t0 = time.monotonic() - trace.totals.duration_ms / 1000
        self.listeners: list[TraceListener] = []
        self.listener_errors: list[str] = []

    def _notify(self, event: str, *args: Any) -> None:
        for listener in list(self.listeners):
            try:
                getattr(listener, event)(self.trace, *args)
            except Exception as exc:
                self.listeners.remove(listener)
                self.listener_errors.append(f"{type(listener).__name__}: {type(exc).__name__}: {exc}")

    @classmethod
    def start(cls, command: str, goal: str, *, directory: Path | None = None, run_id: str | None = None,
              **fields: Any) -> TraceRecorder:
        rec = cls(RunTrace(run_id=run_id or new_run_id(), command=command, goal=goal, **fields), directory)
        rec.save()
        return rec

    @classmethod
    def resume(cls, run_id: str, directory: Path | None = None) -> TraceRecorder:
        return cls(load_trace(run_id, directory), directory)

    def step(self, type: StepType, **fields: Any) -> Step:
        t = self.trace
        s = Step(step_number=len(t.steps) + 1, timestamp=now_iso(), type=type, **fields)
        t.steps.append(s)
        totals = t.totals
        totals.steps = len(t.steps)
        if type == "llm_call":
            totals.model_calls += 1
            totals.input_tokens += s.input_tokens or 0
            totals.output_tokens += s.output_tokens or 0
            if totals.cost is not None:
                totals.cost = None if s.cost is None else round(totals.cost + s.cost, 8)
        elif type == "tool_call":
            totals.tool_calls += 1
        if s.error is not None:
            totals.errors += 1
        self.save()
        self._notify("on_step", s)
        return s

    def finish(self, status: str, **fields: Any) -> None:
        self.trace.status = status
        self.trace.finished_at = now_iso()
        for k, v in fields.items():
            setattr(self.trace, k, v)
        self.save()
        self._notify("on_finish")

    def save(self) -> None:
        t = self.trace
        t.totals.duration_ms = round((time.monotonic() - self._t0) * 1000, 1)
        data = redact(t.model_dump(mode="json"))
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{t.run_id}.", suffix=".tmp", dir=self.path.parent)
        except OSError as exc:
            raise ConfigError(f"cannot write traces to {self.path.parent}/: {exc.strerror or exc}; set "
                              "REPOPILOT_RUNS_DIR to a writable directory") from None
        try:
            # A lone surrogate (a file name that is not UTF-8) is written as "?": the trace stays readable JSON.
            with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as fh:
                json.dump(data, fh, ensure_ascii=False, indent=1)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def load_trace(run_id: str, directory: Path | None = None) -> RunTrace:
    path = trace_path(run_id, directory)
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"no run {run_id!r} in {path.parent}/ (set REPOPILOT_RUNS_DIR?)") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path} is not a RepoPilot trace (not UTF-8 text)") from None
    try:
        trace = RunTrace.model_validate_json(raw)
    except ValidationError as exc:
        raise InputError(f"{path} is not a RepoPilot trace ({exc.error_count()} problems)") from None
    if trace.run_id != run_id:
        # Acting on it would write to the other run's file: a copied or edited trace is refused, not followed.
        raise InputError(f"{path} holds run {trace.run_id!r}, not {run_id!r}; refusing a renamed or edited trace")
    return trace


def list_traces(directory: Path | None = None) -> Iterator[RunTrace]:
    """Every readable trace in the runs directory, newest first; unreadable files are skipped."""
    d = directory or runs_dir()
    if not d.is_dir():
        return
    for path in sorted(d.glob("*.json"), reverse=True):
        try:
            yield RunTrace.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValidationError):
            continue
