"""Every progress display of the CLI, in one place: a bar while a big log is scanned, a bar per job while a run's
logs download, a spinner while something else slow happens. Each is drawn only when stderr is a terminal, so pipes
and CI logs get none of it; the layers below only report progress through callbacks and never print."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from .console import err, shown, stderr_is_terminal

if TYPE_CHECKING:
    from ..app import DownloadReport, LogInput

__all__ = ["SCAN_BAR_BYTES", "download_bar", "scan_bar", "spinner"]

SCAN_BAR_BYTES = 20 * 1024 * 1024  # a scan of a smaller log is over before a bar would help


@contextmanager
def scan_bar(log: LogInput) -> Iterator[Callable[[int], None] | None]:
    """A callback for bytes scanned, drawing a bar for a big log on a terminal (None otherwise)."""
    if not stderr_is_terminal() or (log.size or 0) < SCAN_BAR_BYTES:
        yield None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TransferSpeedColumn

    with Progress("[progress.description]{task.description}", BarColumn(), DownloadColumn(),
                  TransferSpeedColumn(), console=err, transient=True) as bar:
        task = bar.add_task(f"scanning {shown(log.name, newlines=False)}", total=log.size)
        yield lambda done: bar.update(task, completed=done)


@contextmanager
def download_bar() -> Iterator[DownloadReport | None]:
    """A callback for the GitHub log downloads, drawing one bar per job on a terminal (None otherwise)."""
    if not stderr_is_terminal():
        yield None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TaskID, TextColumn, TransferSpeedColumn

    columns = (TextColumn("downloading {task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn())
    with Progress(*columns, console=err, transient=True) as bar:
        tasks: dict[int, TaskID] = {}

        def report(key: int, label: str, done: int, total: int | None) -> None:
            if key not in tasks:
                # The job's name comes from the API: untrusted, shown through the one sanitiser.
                tasks[key] = bar.add_task(shown(label, newlines=False), total=total)
            bar.update(tasks[key], completed=done, total=total)

        yield report


@contextmanager
def spinner(message: str) -> Iterator[None]:
    """A spinner on stderr saying what we wait for, only when stderr is a terminal."""
    if stderr_is_terminal():
        with err.status(message):
            yield
    else:
        yield
