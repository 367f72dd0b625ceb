"""What `repopilot diagnose` does once its arguments are parsed, and the quick parser of its common case.

`repopilot diagnose FILE --format json` is what CI scripts and editors run, many times: its start-up is what
people feel. The quick path reads those arguments without typer (its import and parsing are a good part of the
start-up); whatever it does not know for sure (help, a bad value, an unknown or repeated option, no SOURCE) goes
to the typer command, which parses it again and says what is wrong. Both paths end in `run_diagnose`."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..app import LogInput, diagnose, open_logs
from ..core import InputError, UsageError
from .console import err, stdin_is_terminal
from .context import settings_from
from .pager import page
from .progress import download_bar, scan_bar, spinner
from .render import Format, renderer
from .session import reporting, summaries

if TYPE_CHECKING:
    from ..app import Discovery, Settings

__all__ = ["EXAMPLE_LOG", "NO_SOURCE", "QUICK_FLAGS", "QUICK_VALUES", "quick_arguments", "run_diagnose"]

EXAMPLE_LOG = "go-build-error.log"

# The options the quick path reads (tests/cli/test_quick_diagnose.py holds them to the typer command's).
QUICK_FLAGS = {"--no-llm": "no_llm", "--verbose": "verbose", "-v": "verbose", "--quiet": "quiet", "-q": "quiet",
               "--example": "example", "--full-lines": "full_lines"}
QUICK_VALUES = {"--format": "fmt", "-f": "fmt", "--baseline": "baseline", "--token-budget": "token_budget",
                "--branch": "branch", "-b": "branch", "--workflow": "workflow", "-w": "workflow", "--run": "run"}
# Options that choose a run to discover (only without SOURCE): left to the typer command, which checks them.
_DISCOVERY = frozenset({"branch", "workflow", "run"})
_MIN_TOKEN_BUDGET = 100


def quick_arguments(argv: list[str]) -> dict[str, Any] | None:
    """`run_diagnose`'s keywords (and `debug`) for `[--debug] diagnose SOURCE [options]`, or None when `argv` is
    anything else or anything the typer command would reject."""
    debug = argv[:1] == ["--debug"]
    rest = argv[1:] if debug else argv
    if rest[:1] != ["diagnose"]:
        return None
    found: dict[str, Any] = {"debug": debug}
    words = iter(rest[1:])
    for word in words:
        name, eq, given = word.partition("=") if word.startswith("--") else (word, "", "")
        value: str | bool = given
        if word == "-" or not word.startswith("-"):
            key, value = "source", word
        elif name in QUICK_FLAGS and not eq:
            key, value = QUICK_FLAGS[name], True
        elif name in QUICK_VALUES:
            key, value = QUICK_VALUES[name], given if eq else next(words, "")
            if not value or (value.startswith("-") and value != "-"):
                return None
        else:
            return None  # help, `--`, combined short flags, an unknown option: typer's to explain
        if key in found or key in _DISCOVERY:
            return None  # typer keeps the last; the quick path does not guess
        found[key] = value
    return _checked(found)


def _checked(found: dict[str, Any]) -> dict[str, Any] | None:
    if "source" not in found or found.get("fmt", Format.text.value) not in Format.__members__:
        return None
    budget = found.get("token_budget")
    if budget is not None:
        if not (budget.isascii() and budget.isdigit()) or int(budget) < _MIN_TOKEN_BUDGET:
            return None
        found["token_budget"] = int(budget)
    found["fmt"] = Format(found.get("fmt", Format.text.value))
    return found


def _example() -> LogInput:
    from importlib import resources  # --example only

    data = (resources.files("repopilot.ci") / "examples" / EXAMPLE_LOG).read_bytes()  # small, bundled
    return LogInput(name=f"example: {EXAMPLE_LOG}", open=lambda: io.BytesIO(data), size=len(data),
                    source=f"example:{EXAMPLE_LOG}")


NO_DISCOVERY = ("--branch, --workflow and --run look up a run of the GitHub repository checked out here: they need a "
                "git checkout with a GitHub remote and GITHUB_TOKEN")
NO_SOURCE = ("no SOURCE given: pass a log file, '-' for stdin, a run-logs .zip or a run URL, or pipe a log in "
             "(gh run view RUN --log-failed | repopilot diagnose); `repopilot diagnose --example` diagnoses a "
             "failing log bundled with RepoPilot")


def _inputs(source: str | None, example: bool, ask: Discovery | None,
            settings: Settings) -> tuple[list[LogInput], str]:
    """The logs to diagnose and what the trace calls them. A piped stdin is read when no SOURCE is given (it is
    what the person meant); on a terminal, inside a GitHub checkout with a token, the latest failed run of the
    current branch (or the one --branch, --workflow, --run choose) is diagnosed."""
    asked = ask is not None and ask.asked()
    if (example or source is not None) and asked:
        raise UsageError("--branch, --workflow and --run choose a run when no SOURCE is given; drop them or the "
                         f"{'--example' if example else 'SOURCE'}")
    if example:
        if source is not None:
            raise UsageError(f"--example diagnoses the bundled log; drop it or the SOURCE {source!r}")
        return [_example()], f"example:{EXAMPLE_LOG}"
    if source is None:
        if not stdin_is_terminal() and not asked:
            return open_logs("-", settings), "-"
        source = _discovered(settings, ask)
    with download_bar() as on_download:
        return open_logs(source, settings, on_download=on_download), source


def _discovered(settings: Settings, ask: Discovery | None) -> str:
    """The run URL discovery finds for the checkout here (UsageError when discovery does not apply)."""
    from ..app import Discovery, discover_run  # git and the API: only when no SOURCE is given on a terminal

    ask = ask or Discovery()
    with spinner("looking up the latest failed run on GitHub"):
        found = discover_run(settings, Path.cwd(), ask)
    if found is None:
        raise UsageError(NO_DISCOVERY if ask.asked() else NO_SOURCE)
    err.print(f"repopilot: diagnosing {found.what}: {found.url}", markup=False)
    return found.url


def run_diagnose(source: str | None, *, example: bool = False, baseline: str | None = None,
                 fmt: Format = Format.text, no_llm: bool = False, token_budget: int | None = None,
                 verbose: bool = False, quiet: bool = False, ask: Discovery | None = None,
                 full_lines: bool = False) -> None:
    """Diagnose SOURCE (None: stdin when it is piped, else the latest failed run of the GitHub checkout here, or
    the run `ask` chooses) or the bundled example, print the reports on stdout in `fmt`, then the run summary on
    stderr."""
    with summaries(verbose=verbose, quiet=quiet):
        _diagnose(source, example, ask, baseline, fmt, no_llm, token_budget, verbose, full_lines)


def _diagnose(source: str | None, example: bool, ask: Discovery | None, baseline: str | None, fmt: Format,
              no_llm: bool, token_budget: int | None, verbose: bool, full_lines: bool) -> None:
    settings = settings_from(token_budget=token_budget)
    inputs, named = _inputs(source, example, ask, settings)
    base = None
    if baseline is not None:
        bases = open_logs(baseline, settings)
        if len(bases) != 1:
            raise InputError(f"--baseline must name one log; {baseline} holds {len(bases)}")
        base = bases[0]
    reports = diagnose(inputs, settings, baseline=base, no_llm=no_llm, observer=reporting, progress=scan_bar,
                       goal=f"diagnose {named}")
    rendered = renderer(fmt, verbose=verbose, full_lines=full_lines)(reports)
    if fmt is Format.text:
        page(rendered, settings.pager)  # long text on a terminal goes through the pager
    else:  # a format for machines is never paged
        # What typer.echo did: the text, flushed (no ANSI codes to strip: the renderers style only on a terminal).
        sys.stdout.write(rendered)
        sys.stdout.flush()
