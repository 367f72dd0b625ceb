"""The run record: what people read after the fact and the checkpoint a crashed run resumes from. One file per
run, an append-only event log (see `trace_log`): each step is redacted and written once. Everything written has
passed redaction."""

from __future__ import annotations

import copy
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol

from .errors import ConfigError, InputError, UsageError, UserError
from .record import Record
from .redact import Redactor, active_redactor
from .trace_log import FORMAT, VERSION, TraceFile, check_resumable, problem, read_run, remove_stale_temp_files

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
    "now_iso",
    "read_trace",
    "run_lock",
    "runs_dir",
    "trace_path",
    "use_runs_dir",
]

# `verification`: a proposal's receipt (what ran to check it and what it showed; core/receipt.py).
StepType = Literal["llm_call", "tool_call", "tool_result", "error", "decision", "approval", "verification"]
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,80}$")


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_run_id() -> str:
    """Sortable by start time, unique without coordination."""
    # os.urandom is what `secrets.token_hex` reads (secrets' own import costs more than the id).
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + os.urandom(3).hex()


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


@dataclass(slots=True, kw_only=True)
class Step(Record):
    """One step of a run: a model call, a tool call, a decision or an approval."""

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
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class Totals(Record):
    """What a run used: steps, calls, errors, tokens, cost and time."""

    steps: int = 0
    model_calls: int = 0
    tool_calls: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    # None once any call had no known price: an unknown cost is reported as unknown, not as zero.
    cost: float | None = 0.0
    duration_ms: float = 0.0


@dataclass(slots=True, kw_only=True)
class RunTrace(Record):
    """One run as recorded: what was asked, every step, the totals and the outcome."""

    version: int = VERSION
    run_id: str
    command: str
    goal: str
    repo: str | None = None
    model: str | None = None
    provider: str | None = None
    status: str = "running"
    started_at: str = field(default_factory=now_iso)
    finished_at: str | None = None
    budgets: dict[str, Any] = field(default_factory=dict)
    totals: Totals = field(default_factory=Totals)
    steps: list[Step] = field(default_factory=list)
    # The conversation as the model saw it, so `resume` continues without asking answered turns again.
    messages: list[dict[str, Any]] = field(default_factory=list)
    answer: str | None = None
    diagnosis: dict[str, Any] | None = None
    proposal: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

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
    """Records a run: each step, conversation change and changed field is appended to the trace file once.

    Everything written passes through `redactor` (the process's active one unless given). Changes to the run's
    fields (status, proposal, …) are found by comparison and written with the next step or `save()`; the loop
    says which messages changed with `messages_changed` (appends are found by themselves).
    """

    def __init__(self, trace: RunTrace, directory: Path | None = None, *, redactor: Redactor | None = None,
                 _file: TraceFile | None = None) -> None:
        self.trace = trace
        self.path = trace_path(trace.run_id, directory)
        self.redactor = redactor or active_redactor()
        self.file = _file or TraceFile(self.path)
        self._t0 = time.monotonic() - trace.totals.duration_ms / 1000
        self.listeners: list[TraceListener] = []
        self.listener_errors: list[str] = []
        self._written: dict[str, Any] = {}  # the fields as last written (copies), to find what changed
        self._messages_written = len(trace.messages)
        self._messages_dirty_from: int | None = None

    def _notify(self, event: str, *args: Any) -> None:
        for listener in list(self.listeners):
            try:
                getattr(listener, event)(self.trace, *args)
            except Exception as exc:
                self.listeners.remove(listener)
                self.listener_errors.append(f"{type(listener).__name__}: {type(exc).__name__}: {exc}")

    @classmethod
    def start(cls, command: str, goal: str, *, directory: Path | None = None, run_id: str | None = None,
              redactor: Redactor | None = None, **fields: Any) -> TraceRecorder:
        trace = RunTrace(run_id=run_id or new_run_id(), command=command, goal=goal, **fields)
        rec = cls(trace, directory, redactor=redactor)
        rec._rewrite(new=True)
        return rec

    @classmethod
    def resume(cls, run_id: str, directory: Path | None = None, *, redactor: Redactor | None = None
               ) -> TraceRecorder:
        path = trace_path(run_id, directory)
        remove_stale_temp_files(path)
        trace, good_size, legacy = _load(run_id, path, resumable=True)
        rec = cls(trace, directory, redactor=redactor)
        if legacy:
            rec._rewrite()  # converted once; from here on it is appended to
        else:
            rec.file.cut_torn_tail(good_size)
            rec._remember_fields()
        return rec

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
        self._write({"step": self.redactor.value(s.model_dump(mode="json"))})
        self._notify("on_step", s)
        return s

    def finish(self, status: str, **fields: Any) -> None:
        self.trace.status = status
        self.trace.finished_at = now_iso()
        for k, v in fields.items():
            setattr(self.trace, k, v)
        self.save()
        self._notify("on_finish")

    def recorded(self) -> RunTrace:
        """The run as its file holds it now: this recorder's trace when nothing else has written to the file
        since (the common case, read without parsing anything), else the file read again (an approval another
        recorder appended after the agent stopped). Raises like `load_trace` when the file cannot be read."""
        try:
            if self.path.stat().st_size == self.file.size:
                return self.trace
        except OSError:
            pass
        return load_trace(self.trace.run_id, self.path.parent)

    def messages_changed(self, start: int) -> None:
        """The conversation changed from index `start` on (not only appended to): write it again from there."""
        self._messages_dirty_from = start if self._messages_dirty_from is None else min(start,
                                                                                           self._messages_dirty_from)

    def save(self) -> None:
        """Write whatever changed since the last write (fields, conversation); nothing when nothing did."""
        self._write(None)

    # -- writing ------------------------------------------------------------------------------------------
    def _write(self, step: dict[str, Any] | None) -> None:
        """One line, one write: the conversation's change, the changed fields and the step travel together, so
        a writer killed half-way loses all of them (the line is torn and ignored) or none."""
        t = self.trace
        t.totals.duration_ms = round((time.monotonic() - self._t0) * 1000, 1)
        event: dict[str, Any] = {}
        # After a failed write (a full disk) only the run's fields are tried: the short line saying how the run
        # ended may still fit where the conversation did not.
        messages = self._message_event() if self.file.broken is None else None
        if messages is not None:
            event.update(messages)
        changed = self._changed_fields()
        if changed:
            event["set"] = self.redactor.value(changed)
        if step is not None and self.file.broken is None:
            event.update(step)
        if not event:
            return
        event["totals"] = t.totals.model_dump(mode="json")
        # A run's outcome (status, proposal, decision) is worth an fsync; ordinary steps are flushed to the
        # kernel, which is what survives a killed process.
        self.file.append([event], sync=bool(changed.keys() & _DURABLE))
        if messages is not None:
            self._messages_written = len(t.messages)
            self._messages_dirty_from = None
        self._remember_fields(changed)

    def _message_event(self) -> dict[str, Any] | None:
        msgs = self.trace.messages
        at = self._messages_written if self._messages_dirty_from is None else self._messages_dirty_from
        at = min(at, len(msgs))
        if at == len(msgs) and at == self._messages_written:
            return None
        return {"messages": self.redactor.value(msgs[at:]), "at": at}

    def _changed_fields(self) -> dict[str, Any]:
        changed = {}
        for name in _FIELDS:
            value = getattr(self.trace, name)
            if name not in self._written or self._written[name] != value:
                changed[name] = value
        return changed

    def _remember_fields(self, changed: dict[str, Any] | None = None) -> None:
        source = changed if changed is not None else {name: getattr(self.trace, name) for name in _FIELDS}
        for name, value in source.items():
            # A copy: the live values are dicts the loop and tools change in place.
            self._written[name] = _copied(value)

    def _rewrite(self, *, new: bool = False) -> None:
        t = self.trace
        header = t.model_dump(mode="json", exclude={"steps", "messages"})
        events: list[dict[str, Any]] = [{"trace": FORMAT, "version": VERSION, "run": self.redactor.value(header)}]
        events += [{"step": self.redactor.value(s.model_dump(mode="json"))} for s in t.steps]
        if t.messages:
            events.append({"messages": self.redactor.value(t.messages), "at": 0})
        # A new run's header is not fsynced: its outcome is (`_DURABLE`), two fsyncs per `diagnose` were one
        # too many. A converted or restored trace replaces one that exists: that is synced.
        self.file.create(events, sync=not new)
        self._messages_written = len(t.messages)
        self._remember_fields()


def _copied(value: Any) -> Any:
    """A deep copy of a run's field. JSON-like data (a diagnosis report: thousands of values) is copied by
    type, several times faster than `copy.deepcopy`; anything else is left to it. Only compared with the live
    value later, so the one difference (deepcopy keeps an object shared twice shared) does not matter."""
    kind = type(value)
    # The items that are strings, numbers or None are taken as they are, without a call each (most of them).
    if kind is dict:
        return {k: v if type(v) in _IMMUTABLE else _copied(v) for k, v in value.items()}
    if kind is list:
        return [v if type(v) in _IMMUTABLE else _copied(v) for v in value]
    if kind in _IMMUTABLE:
        return value
    return copy.deepcopy(value)


_IMMUTABLE = frozenset({str, int, float, bool, type(None)})
# The run's fields that may change while it runs; `totals` travels with every line.
_FIELDS = ("command", "goal", "repo", "model", "provider", "status", "started_at", "finished_at", "budgets",
           "answer", "diagnosis", "proposal", "extra", "version")
_DURABLE = frozenset({"status", "proposal", "finished_at"})


def _load(run_id: str, path: Path, *, resumable: bool = False) -> tuple[RunTrace, int, bool]:
    try:
        data, good_size, legacy = read_run(path)
    except FileNotFoundError:
        raise InputError(f"no run {run_id!r} in {path.parent}/ (set REPOPILOT_RUNS_DIR?)") from None
    try:
        trace = RunTrace.model_validate(data)
    except ValueError as exc:  # pydantic's ValidationError
        raise InputError(f"{path} is not a RepoPilot trace ({problem(exc)})") from None
    if trace.run_id != run_id:
        # Acting on it would write to the other run's file: a copied or edited trace is refused, not followed.
        raise InputError(f"{path} holds run {trace.run_id!r}, not {run_id!r}; refusing a renamed or edited trace")
    if resumable:
        check_resumable(path, data)
    return trace, good_size, legacy


def load_trace(run_id: str, directory: Path | None = None) -> RunTrace:
    return _load(run_id, trace_path(run_id, directory))[0]


def restore_trace(trace: RunTrace, directory: Path | None = None) -> None:
    """Write a run kept elsewhere (the service's database) as this machine's trace file, replacing any older
    copy, so it can be resumed or approved here."""
    TraceRecorder(trace, directory)._rewrite()


def read_trace(path: Path) -> RunTrace:
    """The run recorded in the trace file `path` (any format RepoPilot wrote)."""
    return _load(path.stem, path)[0]


def list_traces(directory: Path | None = None) -> Iterator[RunTrace]:
    """Every readable trace in the runs directory, newest first; unreadable files are skipped."""
    d = directory or runs_dir()
    if not d.is_dir():
        return
    # Run ids sort by the second they began; two runs begun in one second are ordered by their ids' random part,
    # so the id alone cannot say which is newer. The newest is the one whose id's second is latest, then the one
    # written last.
    def newest_first(path: Path) -> tuple[str, int, str]:
        try:
            written = path.stat().st_mtime_ns
        except OSError:
            written = 0
        return path.stem[:15], written, path.stem

    for path in sorted(d.glob("*.json"), key=newest_first, reverse=True):
        try:
            yield _load(path.stem, path)[0]
        except (OSError, UserError):
            continue


_HELD: set[str] = set()


@contextmanager
def run_lock(run_id: str, directory: Path | None = None) -> Iterator[None]:
    """One process at a time per run, so a run is never driven twice at once (two `resume`s, or a `resume` of a
    live `ask`, would ask the model twice). The OS drops the lock when its holder dies, even by SIGKILL; nested
    use in one process is allowed."""
    if run_id in _HELD:
        yield
        return
    try:
        import fcntl
    except ImportError:  # no flock on this platform: no lock, as before
        yield
        return
    path = trace_path(run_id, directory).with_suffix(".lock")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fh = path.open("a")
    except OSError as exc:
        raise ConfigError(f"cannot write traces to {path.parent}/: {exc.strerror or exc}; set "
                          "REPOPILOT_RUNS_DIR to a writable directory") from None
    with fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(f"run {run_id} is in use by another repopilot process; try again when it ends") from None
        _HELD.add(run_id)
        try:
            yield
        finally:
            _HELD.discard(run_id)
