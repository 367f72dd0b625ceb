"""The typer app of `repopilot`: every command module registers itself here. Built per invocation with only the
module of the command that runs (`main` imports this module only when its quick path does not apply)."""

from __future__ import annotations

import importlib

import typer

from .. import __version__
from .context import load_root_settings
from .helptext import plain_help
from .main import _DEBUG, _reader_gone

__all__ = ["COMMANDS", "build_app"]

# Command -> the module that registers it. `main` imports only the module of the command it runs (a `diagnose`
# never imports the providers, the repository tools or the trace viewers); help and unknown commands get all.
COMMANDS = {"ask": "ask", "config": "config", "diagnose": "diagnose", "fix": "fix", "approve": "fix",
            "reject": "fix", "resume": "fix", "github": "github", "history": "history", "models": "models",
            "runs": "runs", "trace": "runs", "serve": "service", "worker": "service"}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"repopilot {__version__}")
        raise typer.Exit()


def _root(
    ctx: typer.Context,
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for unexpected errors."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    ctx.with_resource(_reader_gone())
    _DEBUG[0] = debug or _DEBUG[0]
    _DEBUG[0] = load_root_settings(debug=debug or None).debug


def build_app(command: str | None = None) -> typer.Typer:
    """The `repopilot` app with `command`'s module registered, or every module when it names none."""
    plain_help()
    built = typer.Typer(
        name="repopilot",
        help="Diagnose failing CI runs and propose fixes a human approves.",
        no_args_is_help=True,
        add_completion=True,  # --install-completion / --show-completion (README, "Configuration")
        pretty_exceptions_enable=False,
        # Help is plain text: with rich markup, help text such as `…/runs/RUN_ID[/job/JOB_ID]` was read as a
        # closing tag (MarkupError), and flags were listed with a `<bool>` placeholder. Every sub-app says the same.
        rich_markup_mode=None,
    )
    built.callback()(_root)
    modules = [COMMANDS[command]] if command in COMMANDS else sorted(set(COMMANDS.values()))
    for name in modules:
        importlib.import_module(f"{__package__}.{name}").register(built)
    return built
