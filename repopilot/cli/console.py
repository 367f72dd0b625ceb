"""Where output goes: results on stdout, summaries, progress and errors on stderr, colour only on a terminal.

`out` and `err` are rich consoles (cli/rich_console.py: the sanitiser is a net under every write), made on first
use: a command whose output is plain text in a pipe (`repopilot diagnose FILE --format json`, its summary on a
stderr that is no terminal) never imports rich. `plain_stderr()` says when a line may skip rich: it would have
printed the same characters.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, cast

from ..core.sanitize import visible

if TYPE_CHECKING:
    from rich.console import Console
    from rich.syntax import Syntax

__all__ = ["diff_view", "err", "out", "plain_stderr", "shown", "stderr_is_terminal", "stdin_is_terminal",
           "stdout_is_terminal"]


class _Deferred:
    """A rich console made on first use; every attribute is the console's."""

    def __init__(self, **options: Any) -> None:
        object.__setattr__(self, "_options", options)
        object.__setattr__(self, "_made", None)
        object.__setattr__(self, "_before", {})

    def _console(self) -> Console:
        made = object.__getattribute__(self, "_made")
        if made is None:
            from .rich_console import SanitisingConsole

            made = SanitisingConsole(**object.__getattribute__(self, "_options"))
            object.__setattr__(self, "_made", made)
        return cast("Console", made)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._console(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        console = self._console()
        # The value before the first change, which `del` puts back: pytest's monkeypatch undoes a change to an
        # attribute this object does not hold itself by deleting it.
        object.__getattribute__(self, "_before").setdefault(name, getattr(console, name))
        setattr(console, name, value)

    def __delattr__(self, name: str) -> None:
        before = object.__getattribute__(self, "_before")
        if name not in before:
            raise AttributeError(name)
        setattr(self._console(), name, before.pop(name))

    # Special methods are looked up on the type, not through __getattr__: rich's live displays (progress bars,
    # spinners) enter the console as a context.
    def __enter__(self) -> Console:
        return self._console().__enter__()

    def __exit__(self, *exc: Any) -> None:
        self._console().__exit__(*exc)


# No emoji codes: log lines and paths are printed as they are (`/etc/passwd`'s `list:x:38` is not `list❌38`).
out = cast("Console", _Deferred(soft_wrap=True, highlight=False, emoji=False))
err = cast("Console", _Deferred(stderr=True, soft_wrap=True, highlight=False, emoji=False))


def diff_view(diff: str) -> Syntax:
    """A unified diff coloured for the terminal (plain text when piped), the same in every command; every
    character that could hide a line is shown as a visible stand-in (see core/sanitize.py)."""
    from rich.syntax import Syntax  # pygments: only commands that show a diff pay for it

    return Syntax(visible(diff), "diff", theme="ansi_dark", background_color="default")


def shown(text: object, *, newlines: bool = False) -> str:
    """Untrusted text for a rich string with markup on: sanitised, then its `[...]` escaped. One line unless
    `newlines`: a name holding a newline must not be able to print a line of its own."""
    from rich.markup import escape

    return escape(visible(str(text), newlines=newlines))


def stdout_is_terminal() -> bool:
    return sys.stdout.isatty()


def stdin_is_terminal() -> bool:
    return sys.stdin.isatty()


def stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


def plain_stderr() -> bool:
    """Whether `err` would print text without any style: stderr is no terminal and neither FORCE_COLOR nor
    TTY_COMPATIBLE asks rich to treat it as one (rich's own test, read at the edge like every variable)."""
    return not ({"FORCE_COLOR", "TTY_COMPATIBLE"} & os.environ.keys()) and not stderr_is_terminal()
