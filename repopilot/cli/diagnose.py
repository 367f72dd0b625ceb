"""`repopilot diagnose [SOURCE]`: why did this CI run fail? Rules first; one model call only when they are unsure."""

from __future__ import annotations

import io
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..app import DEFAULT_TOKEN_BUDGET, Discovery, LogInput, diagnose, discover_run, open_logs
from ..core import InputError, UsageError
from .console import err, stdin_is_terminal
from .context import settings_from
from .progress import download_bar, scan_bar, spinner
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


NO_DISCOVERY = ("--branch, --workflow and --run look up a run of the GitHub repository checked out here: they need a "
                "git checkout with a GitHub remote and GITHUB_TOKEN")
NO_SOURCE = ("no SOURCE given: pass a log file, '-' for stdin, a run-logs .zip or a run URL, or pipe a log in "
             "(gh run view RUN --log-failed | repopilot diagnose); `repopilot diagnose --example` diagnoses a "
             "failing log bundled with RepoPilot")


def _inputs(source: str | None, example: bool, ask: Discovery, settings: Settings) -> tuple[list[LogInput], str]:
    """The logs to diagnose and what the trace calls them. A piped stdin is read when no SOURCE is given (it is
    what the person meant); on a terminal, inside a GitHub checkout with a token, the latest failed run of the
    current branch (or the one --branch, --workflow, --run choose) is diagnosed."""
    if (example or source is not None) and ask.asked():
        raise UsageError("--branch, --workflow and --run choose a run when no SOURCE is given; drop them or the "
                         f"{'--example' if example else 'SOURCE'}")
    if example:
        if source is not None:
            raise UsageError(f"--example diagnoses the bundled log; drop it or the SOURCE {source!r}")
        return [_example()], f"example:{EXAMPLE_LOG}"
    if source is None:
        if not stdin_is_terminal() and not ask.asked():
            return open_logs("-", settings), "-"
        with spinner("looking up the latest failed run on GitHub"):
            found = discover_run(settings, Path.cwd(), ask)
        if found is None:
            if ask.asked():
                raise UsageError(NO_DISCOVERY)
            raise UsageError(NO_SOURCE)
        err.print(f"repopilot: diagnosing {found.what}: {found.url}", markup=False)
        source = found.url
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
    branch: str | None = typer.Option(None, "--branch", "-b", show_default=False, help="Without SOURCE: the "
                                      "latest failed run of this branch (default: the checked-out branch)."),
    workflow: str | None = typer.Option(None, "--workflow", "-w", show_default=False, help="Without SOURCE: "
                                        "only runs of this workflow (its file name, e.g. ci.yml, or its name)."),
    run: int | None = typer.Option(None, "--run", min=1, show_default=False, help="Without SOURCE: this run "
                                   "id of the repository checked out here."),
) -> None:
    """Diagnose a failing CI log: category, causal lines, hint. Exit 0 when a diagnosis was produced.

    Without SOURCE, a log piped to stdin is read; on a terminal inside a GitHub checkout with GITHUB_TOKEN set,
    the latest failed run of the current branch is fetched and diagnosed (as `gh run view --log-failed` would
    show it)."""
    with summaries(verbose=verbose, quiet=quiet):
        _diagnose(source, example, Discovery(branch, workflow, run), baseline, fmt, no_llm, token_budget, verbose)


def _diagnose(source: str | None, example: bool, ask: Discovery, baseline: str | None, fmt: Format, no_llm: bool,
              token_budget: int | None, verbose: bool) -> None:
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
    typer.echo(renderer(fmt, verbose=verbose)(reports), nl=False)


def register(app: typer.Typer) -> None:
    app.command("diagnose")(diagnose_command)
