"""Where output goes: results on stdout, summaries, progress and errors on stderr, colour only on a terminal."""

from __future__ import annotations

import errno
import sys
from typing import TYPE_CHECKING

from rich.console import Console

if TYPE_CHECKING:
    from rich.syntax import Syntax

__all__ = ["diff_view", "err", "out", "stderr_is_terminal", "stdout_is_terminal"]



class _Console(Console):
    def on_broken_pipe(self) -> None:
        # rich's default exits 1 on its own; raise instead, so main.py decides the exit code in its one place.
        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, "the reader closed the pipe")


# No emoji codes: log lines and paths are printed as they are (`/etc/passwd`'s `list:x:38` is not `list❌38`).
out = _Console(soft_wrap=True, highlight=False, emoji=False)
err = _Console(stderr=True, soft_wrap=True, highlight=False, emoji=False)


def diff_view(diff: str) -> Syntax:
    """A unified diff coloured for the terminal (plain text when piped), the same in every command."""
    from rich.syntax import Syntax  # pygments: only commands that show a diff pay for it

    return Syntax(diff, "diff", theme="ansi_dark", background_color="default")


def stdout_is_terminal() -> bool:
    return sys.stdout.isatty()


def stderr_is_terminal() -> bool:
    return sys.stderr.isatty()
