"""The trace on disk: an append-only event log, one JSON object per line, in `<run_id>.json`.

    {"trace": "repopilot", "version": 2, "run": {…the run's fields, without steps and messages…}}
    {"step": {…}, "messages": [{…}, …], "at": 7, "set": {"status": …}, "totals": {…}}

After the first line, each line is one event and may hold: a recorded `step`; the conversation from index `at`
on (`messages`: appended, or replaced after old results were elided); the run's fields that changed (`set`); and
the `totals` after it. Each line is redacted once, when it is recorded, and written with one `write` call, so a
step costs the same whether it is the 10th or the 1,000th, and a torn line loses all of its parts or none.
Reading replays the lines in order. A process killed in the middle of a write leaves at most one incomplete last
line: readers ignore it and the next writer cuts it off before appending. Traces written before this format (one
JSON object) are still read, and converted on their next write.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .atomic import new_temp_file
from .errors import ConfigError, InputError

if TYPE_CHECKING:  # pydantic validates what is read back; writing a trace (every `diagnose`) never imports it
    from pydantic import TypeAdapter

    from .messages import Message

__all__ = ["FORMAT", "VERSION", "TraceFile", "read_run", "remove_stale_temp_files"]

FORMAT = "repopilot"
VERSION = 2


@cache
def _messages() -> TypeAdapter[list[Message]]:
    # Built when a run is resumed, not on import: writing a trace (every `diagnose`) never validates messages.
    from pydantic import TypeAdapter

    from .messages import Message

    return TypeAdapter(list[Message])


def encode(event: dict[str, Any]) -> bytes:
    # A lone surrogate (a file name that is not UTF-8) is written as "?": the trace stays readable JSON.
    return (json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8", "replace")


def _write_error(path: Path, exc: OSError) -> ConfigError:
    what = exc.strerror or str(exc)
    hint = "free some space" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else "check its permissions"
    return ConfigError(f"cannot write the trace {path}: {what}; {hint}, or set REPOPILOT_RUNS_DIR to another "
                       "directory")


class TraceFile:
    """Appends lines to one run's trace file; never rewrites what is there (except to convert an old trace)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.size = 0  # bytes known to end with a complete line
        self.broken: ConfigError | None = None

    def create(self, events: Iterable[dict[str, Any]], *, sync: bool = True) -> None:
        """The file anew (see `replace_with`); `sync=False` for a new run's first lines, which the run's outcome
        is fsynced with later (a run lost before that was not finished anyway)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot write traces to {self.path.parent}/: {exc.strerror or exc}; set "
                              "REPOPILOT_RUNS_DIR to a writable directory") from None
        self.replace_with(events, sync=sync)

    def replace_with(self, events: Iterable[dict[str, Any]], *, sync: bool = True) -> None:
        """Write the whole file anew, atomically (a new run, or an old-format trace converted)."""
        data = b"".join(encode(e) for e in events)
        tmp = None
        try:
            fd, tmp = new_temp_file(self.path.parent, f".{self.path.stem}.", ".tmp")
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                if sync:
                    fh.flush()
                    os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except OSError as exc:
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)
            raise _write_error(self.path, exc) from None
        self.size = len(data)

    def append(self, events: list[dict[str, Any]], *, sync: bool = False) -> None:
        """One write of complete lines. On failure the partial line is cut off again, so the file stays a
        readable trace of what came before, and the error says what to do."""
        if not events:
            return
        data = b"".join(encode(e) for e in events)
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        except OSError as exc:
            raise _write_error(self.path, exc) from None
        try:
            written = 0
            while written < len(data):
                written += os.write(fd, data[written:])
            if sync:
                os.fsync(fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, self.size)
            self.broken = _write_error(self.path, exc)
            raise self.broken from None
        finally:
            os.close(fd)
        self.size += len(data)

    def cut_torn_tail(self, good_size: int) -> None:
        """Drop an incomplete last line left by a killed writer, so the next line starts on its own."""
        self.size = good_size
        try:
            if self.path.stat().st_size > good_size:
                os.truncate(self.path, good_size)
        except OSError as exc:
            raise _write_error(self.path, exc) from None


def remove_stale_temp_files(path: Path) -> None:
    """Temporary files of this run left by a process killed while converting or creating its trace."""
    for tmp in path.parent.glob(f".{path.stem}.*.tmp"):
        tmp.unlink(missing_ok=True)


def _problem(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)  # pydantic's ValidationError; a record's own check is a ValueError
    if not callable(errors):
        return str(exc)
    first = errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "top level"
    return f"{len(errors())} problem(s), first at {where}: {first.get('msg', 'invalid')}"


def read_run(path: Path) -> tuple[dict[str, Any], int, bool]:
    """The run recorded in `path` as plain data, the size of its complete lines, and whether it is in the old
    one-object format. Raises InputError for anything that is not a readable trace."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path} is not a RepoPilot trace (not UTF-8 text)") from None
    first, _, _ = text.partition("\n")
    try:
        head = json.loads(first)
    except ValueError:
        head = None
    if not (isinstance(head, dict) and head.get("trace") == FORMAT):
        return _legacy(path, text), len(raw), True
    return _replay(path, text)


def _legacy(path: Path, text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError:
        raise InputError(f"{path} is not a RepoPilot trace (not JSON)") from None
    if not isinstance(data, dict):
        raise InputError(f"{path} is not a RepoPilot trace (not a JSON object)")
    return data


def _replay(path: Path, text: str) -> tuple[dict[str, Any], int, bool]:
    lines = text.split("\n")
    complete = len(lines) - 1  # the text after the last newline is an incomplete line (or empty)
    run: dict[str, Any] = {}
    steps: list[Any] = []
    messages: list[Any] = []
    good = 0
    for number, line in enumerate(lines[:complete], start=1):
        try:
            event = json.loads(line)
        except ValueError:
            if number == complete:  # a torn last line that happened to end in a newline: the writer died here
                break
            raise InputError(f"{path} is damaged: line {number} is not JSON") from None
        if not isinstance(event, dict):
            raise InputError(f"{path} is damaged: line {number} is not a JSON object")
        _apply(event, run, steps, messages, path, number)
        good += len(line.encode("utf-8")) + 1
    run["steps"], run["messages"] = steps, messages
    return run, good, False


def _apply(event: dict[str, Any], run: dict[str, Any], steps: list[Any], messages: list[Any], path: Path,
           number: int) -> None:
    if "run" in event and number == 1:
        if event.get("version", 0) > VERSION:
            raise InputError(f"{path} was written by a newer RepoPilot (trace version {event['version']})")
        if not isinstance(event["run"], dict):
            raise InputError(f"{path} is damaged: its first line holds no run")
        run.update(event["run"])
        return
    if "step" in event:
        steps.append(event["step"])
    if "messages" in event:
        at = event.get("at", len(messages))
        if not isinstance(at, int) or not isinstance(event["messages"], list) or not 0 <= at <= len(messages):
            raise InputError(f"{path} is damaged: line {number} holds messages out of order")
        messages[at:] = event["messages"]
    if "set" in event:
        if not isinstance(event["set"], dict):
            raise InputError(f"{path} is damaged: line {number} sets no fields")
        run.update(event["set"])
    if "totals" in event:
        run["totals"] = event["totals"]


def check_resumable(path: Path, data: dict[str, Any]) -> None:
    """The parts a resumed run acts on, validated here so an edited trace is refused with a clear message rather
    than failing deep inside the loop."""
    from .budgets import Budgets

    try:
        _messages().validate_python(data.get("messages") or [])
        budgets = data.get("budgets") or {}
        if isinstance(budgets, dict):
            Budgets.model_validate(budgets.get("limits") or {})
    except ValueError as exc:  # pydantic's ValidationError
        raise InputError(f"{path} is not a valid RepoPilot trace ({_problem(exc)})") from None


def problem(exc: ValueError) -> str:
    return _problem(exc)
