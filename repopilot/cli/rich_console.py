"""The rich console every output goes through, with the sanitiser as a net under every write. Imported by
`console` when output first needs rich (a terminal, colour, a table, markup to render), not before.

Everything printed passes the one sanitiser (`core.sanitize.visible`): strings before rich parses them, and
every rendered segment before it is written. So untrusted text cannot move the cursor, clear the screen, set the
clipboard, make a link, change the title or reorder text, whichever command printed it. Print sites still call
`visible` (and rich's markup `escape` where markup is on) themselves, so layout is measured on the text as shown;
this is the net under them. The colour RepoPilot adds is a style, not text, and stays.
"""

from __future__ import annotations

import errno
from collections.abc import Iterable, Iterator
from typing import Any

from rich.console import Console
from rich.segment import Segment

from ..core.sanitize import UNSAFE, visible

__all__ = ["SanitisingConsole"]


def _sanitised(buffer: Iterable[Segment]) -> Iterator[Segment]:
    """Text segments through the sanitiser; rich's own control segments (a spinner moving the cursor back) and
    styles (the colour RepoPilot adds) are kept as they are."""
    for seg in buffer:
        if seg.control or UNSAFE.search(seg.text) is None:
            yield seg
        else:
            yield Segment(visible(seg.text), seg.style, seg.control)


class SanitisingConsole(Console):
    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        # Every rendered line passes here before it is written or captured: printed renderables, tables, the
        # diff view, progress and status lines (which no render hook sees) alike.
        return super()._render_buffer(_sanitised(buffer))

    def print(self, *objects: Any, **kwargs: Any) -> None:
        # Strings are sanitised before rich parses them: rich would drop some controls (BEL, CR) silently.
        super().print(*(visible(o) if isinstance(o, str) else o for o in objects), **kwargs)

    def on_broken_pipe(self) -> None:
        # rich's default exits 1 on its own; raise instead, so main.py decides the exit code in its one place.
        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, "the reader closed the pipe")
