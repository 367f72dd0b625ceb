"""Where logs come from. `open_sources(SOURCE)` turns the user's SOURCE argument into one `LogInput` per job log:
a file, `-` for stdin, a GitHub run-logs zip, or a run URL fetched through the API.

Contract shared by the source modules (`ziplogs`, `github`) and the diagnosis: a `LogInput` opens a fresh binary
stream on each call to `open()`, so a log can be scanned without holding it in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

__all__ = ["LogInput"]


@dataclass(frozen=True)
class LogInput:
    """One job's log to diagnose."""

    name: str  # what to call it in output: a path, "stdin", "build / test (zip)", "owner/repo run 1 job 2"
    open: Callable[[], BinaryIO]  # a fresh binary stream positioned at the start, each call
    size: int | None  # bytes, when known
    source: str  # the SOURCE argument this came from
    job: str | None = None  # the job's name, when known (zip, API)
    failed_step: str | None = None  # the failing step's name, when the API said so
