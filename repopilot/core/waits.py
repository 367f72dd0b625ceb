"""What RepoPilot is waiting for, said to whoever shows it. Layers below the CLI never print; around anything
that can take a second or more (a model's reply, a retry's pause, a request to the GitHub API, spans leaving for
an OTLP endpoint) they say `with waiting("…"):`, and the CLI draws a spinner with those words on a terminal.
Nobody listening (a pipe, a test, a Python caller): nothing happens."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["WaitListener", "listen_for_waits", "waiting"]

# Called with what is being waited for, and with None once nothing is.
WaitListener = Callable[[str | None], None]

_LISTENER: list[WaitListener] = []
_WAITS: list[str] = []  # nested waits, innermost last: the innermost is what is shown


def listen_for_waits(listener: WaitListener | None) -> None:
    """Install the one listener (None: remove it)."""
    _LISTENER.clear()
    _WAITS.clear()
    if listener is not None:
        _LISTENER.append(listener)


def _tell(what: str | None) -> None:
    for listener in list(_LISTENER):
        try:
            listener(what)
        except Exception:  # noqa: S112 - a display that cannot draw must never stop the work it describes
            continue


@contextmanager
def waiting(what: str) -> Iterator[None]:
    if not _LISTENER:
        yield
        return
    _WAITS.append(what)
    _tell(what)
    try:
        yield
    finally:
        if _WAITS and _WAITS[-1] == what:
            _WAITS.pop()
        _tell(_WAITS[-1] if _WAITS else None)
