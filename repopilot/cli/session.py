"""What every traced command does around its run: live exporters on while it goes, and however it ends, the
summary and any exporter problem printed (a broken exporter warns; it never stops the run)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..core import Model, TraceRecorder
from .console import err
from .summary import print_summary

__all__ = ["reporting"]


@contextmanager
def reporting(rec: TraceRecorder, model: Model | None = None, *, summary: bool = True) -> Iterator[None]:
    """The CLI's observer of a traced run (live exporters are attached by the application layer)."""
    try:
        yield
    finally:
        if summary:
            print_summary(rec.trace, rec.path)
        for problem in rec.listener_errors:
            err.print(f"repopilot: warning: {problem}", markup=False)
