"""Long output on a terminal goes through a pager (`less -FRX` unless REPOPILOT_PAGER or PAGER say otherwise):
a person can scroll back through a long diagnosis or timeline. Output that fits the screen, a pipe, and a pager
that cannot be started all get the text printed as it is."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from .console import out, stdout_is_terminal

__all__ = ["page", "paged"]


def page(text: str, pager: str | None) -> None:
    """Print `text` (already rendered for this terminal), through `pager` when it is longer than the screen."""
    if not pager or not stdout_is_terminal() or text.count("\n") < out.height - 1 or not _through(pager, text):
        sys.stdout.write(text)
        sys.stdout.flush()


def _through(pager: str, text: str) -> bool:
    """False when the pager is not there (the caller prints instead). pydoc runs it as git runs $PAGER, through
    the shell, and copes with the person quitting early and with Ctrl-C while it shows."""
    try:
        program = shlex.split(pager)[0] if pager.strip() else ""
    except ValueError:
        return False
    import shutil  # only on a terminal, for long text: with tempfile and the compression modules it imports

    if not program or shutil.which(program) is None:
        return False
    import pydoc

    pydoc.pipepager(text, pager)
    return True


@contextmanager
def paged(pager: str | None) -> Iterator[None]:
    """What is printed through `out` inside, paged as one text when it is long (on a terminal only: a pipe gets
    it as it is printed)."""
    if not pager or not stdout_is_terminal():
        yield
        return
    with out.capture() as captured:
        yield
    page(captured.get(), pager)
