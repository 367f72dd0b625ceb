"""`repopilot diagnose [SOURCE]`: why did this CI run fail? Rules first; one model call only when they are unsure."""

from __future__ import annotations

import io
from importlib import resources

import typer

from ..app import DEFAULT_TOKEN_BUDGET, LogInput, diagnose, open_logs
from ..core import InputError
from .console import err
from .context import settings_from
from .progress import download_bar, scan_bar
from .render import Format, renderer
from .session import reporting

__all__ = ["EXAMPLE_LOG", "diagnose_command", "register"]

EXAMPLE_LOG = "go-build-error.log"


def _example() -> LogInput:
    data = (resources.files("repopilot.ci") / "examples" / EXAMPLE_LOG).read_bytes()  # small, bundled
    return LogInput(name=f"example: {EXAMPLE_LOG}", open=lambda: io.BytesIO(data), size=len(data),
                    source=f"example:{EXAMPLE_LOG}")


def diagnose_command(
    source: str | None = typer.Argument(None, help="A log file, '-' for stdin, a run-logs .zip, or a run URL. "
                                        "Without it, a bundled example log is diagnosed."),
    baseline: str | None = typer.Option(None, "--baseline", help="The passing log of the same job: lines it "
                                        "also has are not candidates."),
    fmt: Format = typer.Option(Format.text, "--format", "-f", help="Output format."),
    no_llm: bool = typer.Option(False, "--no-llm", help="Never call a model, even when the rules are unsure."),
    token_budget: int | None = typer.Option(None, "--token-budget", min=100, show_default=False,
                                            help=f"Token budget of the excerpt (default {DEFAULT_TOKEN_BUDGET})."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Text format: every failure and all its lines."),
) -> None:
    """Diagnose a failing CI log: category, causal lines, hint. Exit 0 when a diagnosis was produced."""
    settings = settings_from(token_budget=token_budget)
    if source is None:
        err.print(f"repopilot: no SOURCE given; diagnosing the bundled example log {EXAMPLE_LOG} "
                  "(pass a log file, '-', a .zip or a run URL)", markup=False)
        inputs = [_example()]
    else:
        with download_bar() as on_download:
            inputs = open_logs(source, settings, on_download=on_download)
    base = None
    if baseline is not None:
        bases = open_logs(baseline, settings)
        if len(bases) != 1:
            raise InputError(f"--baseline must name one log; {baseline} holds {len(bases)}")
        base = bases[0]
    reports = diagnose(inputs, settings, baseline=base, no_llm=no_llm, observer=reporting, progress=scan_bar,
                       goal=f"diagnose {source or 'example:' + EXAMPLE_LOG}")
    typer.echo(renderer(fmt, verbose=verbose)(reports), nl=False)


def register(app: typer.Typer) -> None:
    app.command("diagnose")(diagnose_command)
