"""Where output goes: results on stdout, summaries, progress and errors on stderr, colour only on a terminal."""

from __future__ import annotations

import sys

from rich.console import Console

__all__ = ["err", "out", "stderr_is_terminal", "stdout_is_terminal"]

out = Console(soft_wrap=True, highlight=False)
err = Console(stderr=True, soft_wrap=True, highlight=False)


def stdout_is_terminal() -> bool:
    return sys.stdout.isatty()


def stderr_is_terminal() -> bool:
    return sys.stderr.isatty()
