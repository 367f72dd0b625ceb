"""Every progress display of the CLI, in one place: a bar while a big log is scanned, a bar per job while a run's
logs download, a spinner while something else slow happens. Each is drawn only when stderr is a terminal, so pipes
and CI logs get none of it; the layers below only report progress through callbacks and never print."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from .console import err, shown, stderr_is_terminal

if TYPE_CHECKING:
    from rich.status import Status

    from ..app import DownloadReport, LogInput

__all__ = ["SCAN_BAR_BYTES", "download_bar", "scan_bar", "spinner", "wait_spinner"]

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


class _WaitSpinner:
    """Draws what the layers below wait for (`core.waits`) as a spinner on stderr, once a wait has lasted a
    second (shorter ones would only flicker). Called from the working thread; draws from a timer thread."""

    DELAY = 1.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._status: Status | None = None
        self._timer: threading.Timer | None = None
        self._text = ""

    def __call__(self, what: str | None) -> None:
        with self._lock:
            if what is None:
                self._stop()
                return
            self._text = shown(what, newlines=False)
            if self._status is not None:
                self._status.update(self._text)
            elif self._timer is None:
                self._timer = threading.Timer(self.DELAY, self._show)
                self._timer.daemon = True
                self._timer.start()

    def _show(self) -> None:
        with self._lock:
            if self._timer is None:  # the wait ended meanwhile
                return
            self._timer = None
            status = err.status(self._text)
            try:
                status.start()
            except Exception:  # another live display (a download bar) holds the terminal: no spinner
                return
            self._status = status

    def _stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._status is not None:
            self._status.stop()
            self._status = None


@contextmanager
def wait_spinner() -> Iterator[None]:
    """While a command runs on a terminal: any wait of a second or more shows a spinner saying what for."""
    if not stderr_is_terminal():
        yield
        return
    from ..core import listen_for_waits

    spinner = _WaitSpinner()
    listen_for_waits(spinner)
    try:
        yield
    finally:
        listen_for_waits(None)
        spinner(None)
