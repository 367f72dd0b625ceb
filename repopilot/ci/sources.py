"""Where logs come from. `open_sources(SOURCE)` turns the user's SOURCE argument into one `LogInput` per job log:
a file, `-` for stdin, a GitHub run-logs zip, or a run URL fetched through the API.

Contract shared by the source modules (`ziplogs`, `github`) and the diagnosis: a `LogInput` opens a fresh binary
stream on each call to `open()`, so a log can be scanned without holding it in memory.
"""

from __future__ import annotations

import io
import os
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from ..core import InputError
from .runurl import parse_run_url

if TYPE_CHECKING:  # the HTTP client is imported only when a run URL needs it
    from .runurl import GitHubAccess

__all__ = ["DownloadReport", "LogInput", "check_text", "open_sources"]

# Hears of a log download: job id, label, bytes so far, total bytes (None: not announced). Declared here, not
# beside the downloader, so that naming the type does not import the HTTP client.
DownloadReport = Callable[[int, str, int, int | None], None]

_SNIFF = 8192
_CHUNK = 1 << 20
# stdin is spooled to disk so the log can be read twice; `yes | repopilot diagnose -` must not fill the disk.
MAX_STDIN_BYTES = 1 << 30


@dataclass(frozen=True)
class LogInput:
    """One job's log to diagnose."""

    name: str  # what to call it in output: a path, "stdin", "build / test (zip)", "owner/repo run 1 job 2"
    open: Callable[[], BinaryIO]  # a fresh binary stream positioned at the start, each call
    size: int | None  # bytes, when known
    source: str  # the SOURCE argument this came from
    job: str | None = None  # the job's name, when known (zip, API)
    failed_step: str | None = None  # the failing step's name, when the API said so
    path: Path | None = None  # a regular file's path: a big one may be scanned in parts at once (ci/split.py)


def check_text(head: bytes, name: str) -> None:
    """Refuse empty and binary input with one clear line. `head` is the first few KiB."""
    if not head:
        raise InputError(f"{name} is empty: nothing to diagnose")
    if b"\x00" in head:
        raise InputError(f"{name} looks binary (it contains NUL bytes), not a text log")


def open_sources(spec: str, github: GitHubAccess | None = None, *, max_stdin_bytes: int = MAX_STDIN_BYTES,
                 on_download: DownloadReport | None = None) -> list[LogInput]:
    """The logs SOURCE names. Raises InputError (exit 2) for missing, unreadable, empty, binary or endless input,
    and for anything but a regular file (a FIFO would block the read forever)."""
    spec = spec.strip()
    if not spec:
        raise InputError("no SOURCE given: pass a log file, '-' for stdin, a run-logs .zip or a run URL")
    if spec == "-":
        return _jobs_of(_stdin(spec, max_stdin_bytes))
    if spec.lower().startswith(("http://", "https://")):
        parse_run_url(spec)  # a clear InputError for anything but a run URL
        # Imported here: only a run URL needs the HTTP client.
        from .github import github_log_inputs

        return github_log_inputs(spec, github, on_download=on_download)
    path = Path(spec)
    if not path.exists():
        raise InputError(f"no such file: {spec}")
    if path.is_dir():
        raise InputError(f"{spec} is a directory; pass a log file or a run-logs .zip")
    if not stat.S_ISREG(path.stat().st_mode):
        raise InputError(f"{spec} is not a regular file (a FIFO, device or socket); to read a stream, pipe it: "
                         f"... | repopilot diagnose -")
    try:
        with path.open("rb") as fh:
            head = fh.read(_SNIFF)
    except OSError as exc:
        raise InputError(f"cannot read {spec}: {exc.strerror or exc}") from None
    if head.startswith(b"PK\x03\x04") or (path.suffix.lower() == ".zip" and head):
        from .ziplogs import zip_log_inputs

        return zip_log_inputs(path, spec)
    check_text(head, spec)
    size = path.stat().st_size
    return _jobs_of(LogInput(name=spec, open=lambda: path.open("rb"), size=size, source=spec, path=path))


def _jobs_of(log: LogInput) -> list[LogInput]:
    # `gh run view --log[-failed]` prints several jobs into one log: each gets its own diagnosis.
    from .ghlog import split_gh_log

    return split_gh_log(log)


def _stdin(spec: str, cap: int) -> LogInput:
    """Spool stdin (in bounded memory, at most `cap` bytes) so the log can be read more than once.

    The spool never has a name (O_TMPFILE, or unlinked at once): whatever ends the process, a kill included,
    nothing is left on disk."""
    import tempfile  # only for piped input: it imports shutil, random and the compression modules

    src = sys.stdin.buffer
    spool = tempfile.TemporaryFile(prefix="repopilot-stdin-")  # noqa: SIM115 - lives as long as the LogInput
    try:
        size = 0
        while chunk := src.read(_CHUNK):
            size += len(chunk)
            if size > cap:
                raise InputError(f"stdin is larger than {cap:,} bytes, the cap for piped input; save the log to a "
                                 "file and pass its path")
            spool.write(chunk)
        spool.flush()
        head = os.pread(spool.fileno(), _SNIFF, 0)
        check_text(head, "stdin")
    except BaseException:
        spool.close()
        raise
    _SPOOLS.append(spool)  # open as long as the process: LogInputs read it by position
    fd = spool.fileno()
    return LogInput(name="stdin", open=lambda: io.BufferedReader(_SpoolReader(fd)), size=size, source=spec)


class _SpoolReader(io.RawIOBase):
    """A fresh reader of the spool with its own position (pread), so two readers never share an offset."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        data = os.pread(self._fd, len(buffer), self._pos)
        buffer[: len(data)] = data
        self._pos += len(data)
        return len(data)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: os.fstat(self._fd).st_size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def tell(self) -> int:
        return self._pos


_SPOOLS: list[BinaryIO] = []
