"""`repopilot diagnose [SOURCE]`: why did this CI run fail? Rules first; one model call only when they are unsure.

The typer command; what it runs is `diagnose_run.run_diagnose`, which the quick path of `main` calls directly."""

from __future__ import annotations

import typer

from ..app import DEFAULT_TOKEN_BUDGET, Discovery
from .diagnose_run import EXAMPLE_LOG, NO_SOURCE, run_diagnose
from .render import Format

__all__ = ["EXAMPLE_LOG", "NO_SOURCE", "diagnose_command", "register"]


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
    run_diagnose(source, example=example, baseline=baseline, fmt=fmt, no_llm=no_llm, token_budget=token_budget,
                 verbose=verbose, quiet=quiet, ask=Discovery(branch, workflow, run), full_lines=full_lines)


def register(app: typer.Typer) -> None:
    app.command("diagnose")(diagnose_command)
