"""Job logs inside a GitHub run-logs zip, read in place.

The zip GitHub serves for a run holds one text file per job at the top level (`0_build.txt`) and a folder per
job with one file per step (`build/1_Set up job.txt`). Members are streamed straight out of the archive: nothing
is extracted to disk, so hostile member names (`../x`, absolute paths) cannot escape anywhere; they are still
skipped because no real run zip has them. Sizes are checked against the central directory before reading, and
`zipfile` never yields more bytes than a member's declared size, which bounds what a zip bomb can produce.
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, BinaryIO, cast

from ..core import InputError
from .sources import LogInput

__all__ = ["MAX_MEMBERS", "MAX_TOTAL_BYTES", "zip_log_inputs"]

# Far above any real run (GitHub caps a job log well below this) yet small enough to refuse a bomb.
MAX_TOTAL_BYTES = 2 * 1024**3
MAX_MEMBERS = 20_000

_NUMBERED = re.compile(r"^(\d+)_(.*)$")
_ENCRYPTED_FLAG = 0x1
_READ_SIZE = 1 << 20  # per read from a member: larger reads only grow zipfile's internal buffers


@dataclass
class _Job:
    name: str
    order: int
    job_file: zipfile.ZipInfo | None = None
    steps: list[tuple[int, str, zipfile.ZipInfo]] = field(default_factory=list)


def zip_log_inputs(path: Path | str, source: str) -> list[LogInput]:
    """One `LogInput` per job in the run-logs zip at `path`; `source` is the user's SOURCE argument."""
    path = Path(path)
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise InputError(f"{path}: not a readable zip file ({_reason(exc)})") from None
    if len(infos) > MAX_MEMBERS:
        raise InputError(f"{path}: {len(infos)} members is more than a run-logs zip holds (limit {MAX_MEMBERS})")

    jobs = _group_jobs(infos)
    if not jobs:
        raise InputError(f"{path}: the zip holds no job logs (expected `0_job.txt` files or `job/1_step.txt` folders)")
    members = [info for job in jobs for info in _members(job)]
    for info in members:
        if info.flag_bits & _ENCRYPTED_FLAG:
            raise InputError(f"{path}: member {info.filename!r} is encrypted; encrypted zips are not supported")
    total = sum(info.file_size for info in members)
    if total > MAX_TOTAL_BYTES:
        raise InputError(f"{path}: the logs would expand to {total:,} bytes, over the {MAX_TOTAL_BYTES:,} limit")
    return [_log_input(path, source, job) for job in jobs]


def _reason(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _safe_parts(name: str) -> tuple[str, ...] | None:
    """The path components of a member name, or None when it is not a plain relative path."""
    if "\\" in name or "\x00" in name or name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        return None
    parts = PurePosixPath(name).parts
    if not parts or any(part in ("..", ".") for part in parts):
        return None
    return parts


def _split_number(stem: str) -> tuple[int, str]:
    match = _NUMBERED.match(stem)
    if match:
        return int(match.group(1)), match.group(2)
    # Unnumbered files (e.g. `system.txt`) go after the numbered steps, in name order.
    return 1 << 30, stem


def _group_jobs(infos: list[zipfile.ZipInfo]) -> list[_Job]:
    by_name: dict[str, _Job] = {}
    for info in infos:
        if info.is_dir():
            continue
        parts = _safe_parts(info.filename)
        if parts is None or len(parts) > 2:
            continue
        stem = PurePosixPath(parts[-1]).stem if parts[-1].endswith(".txt") else parts[-1]
        number, title = _split_number(stem)
        if len(parts) == 1:
            job = by_name.setdefault(title, _Job(title, number))
            job.job_file = info
            job.order = min(job.order, number)
        else:
            job = by_name.setdefault(parts[0], _Job(parts[0], 1 << 30))
            job.steps.append((number, title, info))
    for job in by_name.values():
        job.steps.sort(key=lambda step: (step[0], step[1]))
    return sorted(by_name.values(), key=lambda job: (job.order, job.name))


def _members(job: _Job) -> list[zipfile.ZipInfo]:
    # The job file already holds every step; the folder is only a fallback.
    if job.job_file is not None:
        return [job.job_file]
    return [info for _, _, info in job.steps]


def _log_input(path: Path, source: str, job: _Job) -> LogInput:
    members = [info.filename for info in _members(job)]
    size = sum(info.file_size for info in _members(job))

    def open_stream() -> BinaryIO:
        return cast(BinaryIO, io.BufferedReader(_MembersStream(path, members), buffer_size=1 << 20))

    return LogInput(name=f"{job.name} ({path.name})", open=open_stream, size=size, source=source, job=job.name)


class _MembersStream(io.RawIOBase):
    """The named members of one zip read back to back, a newline added where a member lacks its last one."""

    def __init__(self, path: Path, members: list[str]) -> None:
        super().__init__()
        try:
            self._archive = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise InputError(f"{path}: not a readable zip file ({_reason(exc)})") from None
        self._path = path
        self._pending = list(members)
        self._current: IO[bytes] | None = None
        self._last_byte = b"\n"
        self._owe_newline = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview | bytearray) -> int:  # type: ignore[override]
        view = memoryview(buffer).cast("B")
        while True:
            if self._owe_newline:
                self._owe_newline = False
                view[0:1] = b"\n"
                self._last_byte = b"\n"
                return 1
            if self._current is None:
                if not self._pending:
                    return 0
                name = self._pending.pop(0)
                try:
                    self._current = self._archive.open(name)
                except (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError) as exc:
                    raise InputError(f"{self._path}: cannot read {name!r} ({_reason(exc)})") from None
            current = self._current
            try:
                chunk = current.read(min(len(view), _READ_SIZE))
            except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
                raise InputError(f"{self._path}: corrupt member ({_reason(exc)})") from None
            if chunk:
                view[: len(chunk)] = chunk
                self._last_byte = chunk[-1:]
                return len(chunk)
            current.close()
            self._current = None
            # Step files are joined; a missing final newline would glue two lines together.
            if self._pending and self._last_byte != b"\n":
                self._owe_newline = True

    def close(self) -> None:
        if self._current is not None:
            self._current.close()
            self._current = None
        self._archive.close()
        super().close()
