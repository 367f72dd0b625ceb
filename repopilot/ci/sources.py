"""Where logs come from. `open_sources(SOURCE)` turns the user's SOURCE argument into one `LogInput` per job log:
a file, `-` for stdin, a GitHub run-logs zip, or a run URL fetched through the API.

Contract shared by the source modules (`ziplogs`, `github`) and the diagnosis: a `LogInput` opens a fresh binary
stream on each call to `open()`, so a log can be scanned without holding it in memory.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from ..core import InputError
from .runurl import parse_run_url

if TYPE_CHECKING:  # the HTTP client is imported only when a run URL needs it
    from .github_api import GitHubAccess

__all__ = ["LogInput", "check_text", "open_sources"]

_SNIFF = 8192


@dataclass(frozen=True)
class LogInput:
    """One job's log to diagnose."""

    name: str  # what to call it in output: a path, "stdin", "build / test (zip)", "owner/repo run 1 job 2"
    open: Callable[[], BinaryIO]  # a fresh binary stream positioned at the start, each call
    size: int | None  # bytes, when known
    source: str  # the SOURCE argument this came from
    job: str | None = None  # the job's name, when known (zip, API)
    failed_step: str | None = None  # the failing step's name, when the API said so


def check_text(head: bytes, name: str) -> None:
    """Refuse empty and binary input with one clear line. `head` is the first few KiB."""
    if not head:
        raise InputError(f"{name} is empty: nothing to diagnose")
    if b"\x00" in head:
        raise InputError(f"{name} looks binary (it contains NUL bytes), not a text log")


def open_sources(spec: str, github: GitHubAccess | None = None) -> list[LogInput]:
    """The logs SOURCE names. Raises InputError (exit 2) for missing, unreadable, empty or binary input."""
    spec = spec.strip()
    if not spec:
        raise InputError("no SOURCE given: pass a log file, '-' for stdin, a run-logs .zip or a run URL")
    if spec == "-":
        return [_stdin(spec)]
    if spec.lower().startswith(("http://", "https://")):
        parse_run_url(spec)  # a clear InputError for anything but a run URL
        # Imported here: only a run URL needs the HTTP client.
        from .github import github_log_inputs

        return github_log_inputs(spec, github)
    path = Path(spec)
    if not path.exists():
        raise InputError(f"no such file: {spec}")
    if path.is_dir():
        raise InputError(f"{spec} is a directory; pass a log file or a run-logs .zip")
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
    return [LogInput(name=spec, open=lambda: path.open("rb"), size=size, source=spec)]


def _stdin(spec: str) -> LogInput:
    """Spool stdin to a temporary file (in bounded memory) so the log can be read more than once."""
    src = sys.stdin.buffer
    spool = tempfile.NamedTemporaryFile(prefix="repopilot-stdin-", suffix=".log", delete=False)  # noqa: SIM115
    try:
        with spool:
            shutil.copyfileobj(src, spool, 1024 * 1024)
        path = Path(spool.name)
        with path.open("rb") as fh:
            head = fh.read(_SNIFF)
        check_text(head, "stdin")
    except BaseException:
        Path(spool.name).unlink(missing_ok=True)
        raise
    _TEMPS.append(path)
    return LogInput(name="stdin", open=lambda: path.open("rb"), size=path.stat().st_size, source=spec)


_TEMPS: list[Path] = []


def _cleanup() -> None:
    for p in _TEMPS:
        with contextlib.suppress(OSError):
            os.unlink(p)


import atexit  # noqa: E402

atexit.register(_cleanup)
