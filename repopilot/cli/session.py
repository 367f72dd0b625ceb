"""What every traced command does around its run: live exporters on while it goes; the run summary and any
exporter problem printed after the command's answer (the answer first: a person reads the top of the output).

`reporting` is the observer handed to the application layer; it only remembers the runs that ended. The
command wraps its body in `summaries(...)`, which prints them once the answer is out: one line by default, the
whole summary when a model was used or `-v` was given, nothing with `--quiet` (exporter warnings always)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..core import TraceRecorder, UserError
from .console import err
from .summary import print_summary, print_summary_line

if TYPE_CHECKING:  # the messages' models: built only when a model is asked for
    from ..core import Model

__all__ = ["forget_runs", "last_run", "reporting", "summaries"]

_ENDED: list[TraceRecorder] = []  # the runs this invocation recorded, in order
_STARTED: list[TraceRecorder] = []  # the same, also while still running (for the interrupt message)


def forget_runs() -> None:
    """A new invocation (tests call `main()` many times in one process)."""
    _ENDED.clear()
    _STARTED.clear()


def last_run() -> tuple[str, str] | None:
    """(run id, command) of the run this invocation started last (also one still running), if any."""
    return (_STARTED[-1].trace.run_id, _STARTED[-1].trace.command) if _STARTED else None


@contextmanager
def reporting(rec: TraceRecorder, model: Model | None = None) -> Iterator[None]:
    """The CLI's observer of a traced run (live exporters are attached by the application layer)."""
    _STARTED.append(rec)
    try:
        yield
    finally:
        _ENDED.append(rec)


@contextmanager
def summaries(*, verbose: bool = False, quiet: bool = False) -> Iterator[None]:
    """Around a command's body: the summaries of the runs it recorded, printed after its output, however it
    ends (an error's own line comes after them)."""
    forget_runs()
    try:
        yield
    finally:
        ended = list(_ENDED)
        _ENDED.clear()
        for rec in ended:
            _print_one(rec, verbose=verbose, quiet=quiet)


def _print_one(rec: TraceRecorder, *, verbose: bool, quiet: bool) -> None:
    try:  # as recorded now: an approval or rejection after the agent stopped changed its status
        trace = rec.recorded()
    except (OSError, UserError):
        trace = rec.trace
    if not quiet:
        if verbose or trace.totals.model_calls:  # a model was used: what it cost matters
            print_summary(trace, rec.path)
        else:
            print_summary_line(trace)
    for problem in rec.listener_errors:
        err.print(f"repopilot: warning: {problem}", markup=False)
