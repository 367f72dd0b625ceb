"""Where output goes: results on stdout, summaries, progress and errors on stderr, colour only on a terminal.

Everything printed through `out` and `err` passes the one sanitiser (`core.sanitize.visible`): strings before
rich parses them, and every rendered segment before it is written. So untrusted text cannot move the cursor,
clear the screen, set the clipboard, make a link, change the title or reorder text, whichever command printed
it. Print sites still call `visible` (and rich's markup `escape` where markup is on) themselves, so layout is
measured on the text as shown; this is the net under them. The colour RepoPilot adds is a style, not text, and
stays.
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.segment import Segment

if TYPE_CHECKING:
    from rich.syntax import Syntax

from ..core.sanitize import UNSAFE, visible

__all__ = ["diff_view", "err", "out", "shown", "stderr_is_terminal", "stdin_is_terminal",
           "stdout_is_terminal"]


def _sanitised(buffer: Iterable[Segment]) -> Iterator[Segment]:
    """Text segments through the sanitiser; rich's own control segments (a spinner moving the cursor back) and
    styles (the colour RepoPilot adds) are kept as they are."""
    for seg in buffer:
        if seg.control or UNSAFE.search(seg.text) is None:
            yield seg
        else:
            yield Segment(visible(seg.text), seg.style, seg.control)


class _Console(Console):
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


# No emoji codes: log lines and paths are printed as they are (`/etc/passwd`'s `list:x:38` is not `list❌38`).
out = _Console(soft_wrap=True, highlight=False, emoji=False)
err = _Console(stderr=True, soft_wrap=True, highlight=False, emoji=False)


def diff_view(diff: str) -> Syntax:
    """A unified diff coloured for the terminal (plain text when piped), the same in every command; every
    character that could hide a line is shown as a visible stand-in (see core/sanitize.py)."""
    from rich.syntax import Syntax  # pygments: only commands that show a diff pay for it

    return Syntax(visible(diff), "diff", theme="ansi_dark", background_color="default")


def shown(text: object, *, newlines: bool = False) -> str:
    """Untrusted text for a rich string with markup on: sanitised, then its `[...]` escaped. One line unless
    `newlines`: a name holding a newline must not be able to print a line of its own."""
    return escape(visible(str(text), newlines=newlines))


def stdout_is_terminal() -> bool:
    return sys.stdout.isatty()


def stdin_is_terminal() -> bool:
    return sys.stdin.isatty()


def stderr_is_terminal() -> bool:
    return sys.stderr.isatty()
