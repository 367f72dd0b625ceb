"""Logs as `gh run view --log` and `--log-failed` print them: every line is `JOB<TAB>STEP<TAB>timestamp text`,
the jobs one after another. Each job becomes its own `LogInput`, named for its job, with the step that failed,
so two failed jobs get two diagnoses instead of one flattened one.

A job's stream is the original log with the other jobs' lines left empty: line numbers still count `\\n` in what
the user passed, as everywhere else. One pass over the log finds the jobs; nothing is held in memory but the
byte ranges of each job's lines.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO, cast

from .sources import LogInput

__all__ = ["is_gh_log", "split_gh_log"]

_BOM = b"\xef\xbb\xbf"
# JOB<TAB>STEP<TAB>, then the runner's timestamp (a step's first line keeps its file's BOM).
_PREFIX = re.compile(rb"([^\t\n]*)\t([^\t\n]*)\t(?:\xef\xbb\xbf)?\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
_EXIT = re.compile(rb"##\[error\]Process completed with exit code \d+")
_ERROR = b"##[error]"
_CHUNK = 1 << 20


def is_gh_log(head: bytes) -> bool:
    """Whether a log's first line carries `gh run view --log`'s JOB<TAB>STEP<TAB> prefix."""
    first = head.split(b"\n", 1)[0]
    return _PREFIX.match(first[3:] if first.startswith(_BOM) else first) is not None


@dataclass
class _Job:
    """One job of a `gh run view --log` file: its pieces of the file, its steps and the one that failed."""

    name: str
    pieces: list[tuple[int, int, int, int]] = field(default_factory=list)  # first line, last line, start, end
    steps: list[str] = field(default_factory=list)
    exit_step: str | None = None  # the step whose runner line says the process exited non-zero
    error_step: str | None = None  # the first step with any `##[error]`

    def failed_step(self) -> str | None:
        # `--log-failed` prints only failed steps: without any error marker, its (first) step failed.
        return self.exit_step or self.error_step or (self.steps[0] if len(self.steps) == 1 else None)


def _jobs(stream: BinaryIO) -> list[_Job]:
    jobs: dict[str, _Job] = {}
    current: _Job | None = None
    offset = 0
    for number, line in enumerate(stream, 1):
        start, offset = offset, offset + len(line)
        m = _PREFIX.match(line[3:] if number == 1 and line.startswith(_BOM) else line)
        if m is not None:
            name = m.group(1).decode("utf-8", "replace")
            step = m.group(2).decode("utf-8", "replace")
            if current is None or current.name != name:
                current = jobs.setdefault(name, _Job(name))
                current.pieces.append((number, number, start, offset))
            if step not in current.steps:
                current.steps.append(step)
            if current.exit_step is None and _EXIT.search(line):
                current.exit_step = step
            if current.error_step is None and _ERROR in line:
                current.error_step = step
        if current is None:
            continue
        first, _, begin, _ = current.pieces[-1]
        current.pieces[-1] = (first, number, begin, offset)  # a line without a prefix continues its job
    return list(jobs.values())


def split_gh_log(log: LogInput) -> list[LogInput]:
    """One `LogInput` per job of a `gh run view --log` log, or `[log]` when it is not one."""
    with log.open() as stream:
        if not is_gh_log(stream.read(8192)):
            return [log]
        stream.seek(0)
        jobs = _jobs(stream)
    if not jobs:
        return [log]
    return [_job_input(log, job) for job in jobs]


def _job_input(log: LogInput, job: _Job) -> LogInput:
    pieces = job.pieces
    size = sum(end - start for _, _, start, end in pieces) + pieces[-1][1] - sum(b - a + 1 for a, b, _, _ in pieces)

    def open_job() -> BinaryIO:
        return cast(BinaryIO, io.BufferedReader(_Chunks(lambda: _job_bytes(log, pieces)), buffer_size=_CHUNK))

    return LogInput(name=f"{job.name} ({log.name})", open=open_job, size=size, source=log.source, job=job.name,
                    failed_step=job.failed_step())


def _job_bytes(log: LogInput, pieces: list[tuple[int, int, int, int]]) -> Iterator[bytes]:
    line = 1
    with log.open() as stream:
        for first, last, start, end in pieces:
            gap = first - line
            while gap > 0:  # the other jobs' lines, left empty so line numbers stay the original ones
                yield b"\n" * min(gap, _CHUNK)
                gap -= _CHUNK
            stream.seek(start)
            left = end - start
            while left > 0 and (data := stream.read(min(left, _CHUNK))):
                left -= len(data)
                yield data
            line = last + 1


class _Chunks(io.RawIOBase):
    """A readable stream over an iterator of byte chunks, started afresh by `make` on each open."""

    def __init__(self, make: Callable[[], Iterator[bytes]]) -> None:
        super().__init__()
        self._it = make()
        self._rest = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        view = memoryview(buffer).cast("B")
        while not self._rest:
            chunk = next(self._it, None)
            if chunk is None:
                return 0
            self._rest = chunk
        n = min(len(view), len(self._rest))
        view[:n] = self._rest[:n]
        self._rest = self._rest[n:]
        return n

    def close(self) -> None:
        close = getattr(self._it, "close", None)
        if close is not None:
            close()  # ends the generator, closing the log it reads
        super().close()
