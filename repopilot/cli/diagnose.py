"""`repopilot diagnose [SOURCE]`: why did this CI run fail? Rules first; one model call only when they are unsure."""

from __future__ import annotations

import io
from importlib import resources
from typing import TYPE_CHECKING

import typer

from ..app import DEFAULT_TOKEN_BUDGET, LogInput, diagnose, open_logs
from ..core import InputError, UsageError
from .console import stdin_is_terminal
from .context import settings_from
from .pager import page
from .progress import download_bar, scan_bar
from .render import Format, renderer
from .session import reporting, summaries

if TYPE_CHECKING:
    from ..app import Settings

__all__ = ["EXAMPLE_LOG", "diagnose_command", "register"]

EXAMPLE_LOG = "go-build-error.log"


def _example() -> LogInput:
    data = (resources.files("repopilot.ci") / "examples" / EXAMPLE_LOG).read_bytes()  # small, bundled
    return LogInput(name=f"example: {EXAMPLE_LOG}", open=lambda: io.BytesIO(data), size=len(data),
                    source=f"example:{EXAMPLE_LOG}")


NO_SOURCE = ("no SOURCE given: pass a log file, '-' for stdin, a run-logs .zip or a run URL, or pipe a log in "
             "(gh run view RUN --log-failed | repopilot diagnose); `repopilot diagnose --example` diagnoses a "
             "failing log bundled with RepoPilot")


def _inputs(source: str | None, example: bool, settings: Settings) -> tuple[list[LogInput], str]:
    """The logs to diagnose and what the trace calls them. A piped stdin is read when no SOURCE is given (it is
    what the person meant); a terminal's stdin is not, since nothing is coming."""
    if example:
        if source is not None:
            raise UsageError(f"--example diagnoses the bundled log; drop it or the SOURCE {source!r}")
        return [_example()], f"example:{EXAMPLE_LOG}"
    if source is None:
        if stdin_is_terminal():
            raise UsageError(NO_SOURCE)
        source = "-"
    with download_bar() as on_download:
        return open_logs(source, settings, on_download=on_download), source


def diagnose_command(
    source: str | None = typer.Argument(None, show_default=False,
                                        help="A log file, '-' for stdin, a run-logs .zip, or a run URL. Without "
                                             "it, a log piped to stdin is read."),
    example: bool = typer.Option(False, "--example", help=f"Diagnose a real failing GitHub Actions log bundled "
                                 f"with RepoPilot ({EXAMPLE_LOG}: no network, no model)."),
    baseline: str | None = typer.Option(None, "--baseline", help="The passing log of the same job: lines it "
                                        "also has are not candidates."),
    fmt: Format = typer.Option(Format.text, "--format", "-f", help="Output format."),
    no_llm: bool = typer.Option(False, "--no-llm", help="Never call a model, even when the rules are unsure."),
    token_budget: int | None = typer.Option(None, "--token-budget", min=100, show_default=False,
                                            help=f"Token budget of the excerpt (default {DEFAULT_TOKEN_BUDGET})."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Every failure and all its lines (text format), "
                                 "and the whole run summary."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No run summary after the diagnosis."),
    full_lines: bool = typer.Option(False, "--full-lines", help="Causal lines whole (text and markdown; default: "
                                    "cut at 200 characters, marked `… [cut at column 200 of N]`)."),
) -> None:
    """Diagnose a failing CI log: category, causal lines, hint. Exit 0 when a diagnosis was produced."""
    with summaries(verbose=verbose, quiet=quiet):
        _diagnose(source, example, baseline, fmt, no_llm, token_budget, verbose, full_lines)


def _diagnose(source: str | None, example: bool, baseline: str | None, fmt: Format, no_llm: bool,
              token_budget: int | None, verbose: bool, full_lines: bool) -> None:
    settings = settings_from(token_budget=token_budget)
    inputs, named = _inputs(source, example, settings)
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
        page(rendered, settings.pager)
    else:  # a format for machines is never paged
        typer.echo(rendered, nl=False)


def register(app: typer.Typer) -> None:
    app.command("diagnose")(diagnose_command)
