"""The `repopilot` command: every error becomes an exit code here and nowhere else. The typer app (cli/app.py,
where every command module registers itself) is imported only when the command needs it: the common case of
`repopilot diagnose FILE` runs without it (see cli/diagnose_run.py)."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..core import Redactor, RepoPilotError, RunError, UserError, install_redactor, redact_text
from .console import err
from .context import forget_settings, load_root_settings
from .progress import wait_spinner
from .session import forget_runs, last_run

if TYPE_CHECKING:
    import typer

__all__ = ["EXIT", "app", "exit_code_for", "main", "run"]

# One mapping for the whole tool (see README, "Exit codes").
EXIT = {
    "ok": 0,
    "bug": 1,
    "usage": 2,
    "awaiting_approval": 3,
    "run_failed": 4,
    "interrupted": 5,
}

_DEBUG = [False]  # --debug or REPOPILOT_DEBUG: show tracebacks of unexpected errors
app: typer.Typer  # every command; built on first use (see __getattr__)


@contextmanager
def _reader_gone() -> Iterator[None]:
    """`repopilot … | head -1`: the reader leaving early is not a failure, so the output stops quietly and the
    command exits 0. It must be caught inside the command's context: typer turns EPIPE into exit 1 above it."""
    try:
        yield
    except BrokenPipeError:
        _silence_stdout()


def _silence_stdout() -> None:
    # Python flushes stdout again at exit; pointing it at /dev/null keeps that from failing a second time.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real file descriptor (captured in tests): nothing to flush later
        pass


def _command(argv: list[str]) -> str | None:
    # The root options are flags, so the first word that is not an option names the command.
    return next((a for a in argv if not a.startswith("-")), None)


def __getattr__(name: str) -> Any:
    if name in ("app", "build_app"):
        from .app import build_app

        globals()["build_app"] = build_app
        if name == "app":
            globals()["app"] = build_app()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _invoke(args: list[str]) -> None:
    """Run the command `args` name: the common cases of `diagnose` and `history` directly (see
    cli/diagnose_run.py, cli/history_run.py), anything else through the typer app of that one command."""
    quick: dict[str, Any] | None = None
    command = _command(args)
    if command == "diagnose":
        from .diagnose_run import quick_arguments, run_diagnose

        quick = quick_arguments(args)
    elif command == "history":
        from .history_run import quick_history, show_history

        quick = quick_history(args)
    if quick is None:
        _collect_cycles()
        from .app import build_app

        build_app(command)(args=args, prog_name="repopilot")
        return
    # What the app's root callback does for the typer path.
    debug = quick.pop("debug")
    _DEBUG[0] = debug or _DEBUG[0]
    _DEBUG[0] = load_root_settings(debug=debug or None).debug
    with _reader_gone():
        if command == "history":
            show_history(**quick)
        else:
            run_diagnose(quick.pop("source"), **quick)


def _collect_cycles() -> None:
    """Turn the cycle collector back on (the console script starts without it) for a command that may run long: an
    agent run, the service. Only the common `diagnose` and `history` go without it to the end: their garbage is
    freed by reference counting (a 500 MB log peaks at the same memory either way) and a collection pass walks
    every object the imports made, for nothing (4 ms of a small log's diagnose, 11 ms at 50 MB). What the imports
    made is frozen first, so the collector's walks skip it."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


def exit_code_for(exc: BaseException) -> int:
    if isinstance(exc, KeyboardInterrupt):
        return EXIT["interrupted"]
    if isinstance(exc, UserError):
        return EXIT["usage"]
    if isinstance(exc, RunError):
        return EXIT["run_failed"]
    return EXIT["bug"]


def main(argv: list[str] | None = None) -> int:
    """Entry point: runs the app and turns every outcome into an exit code with one clear line on stderr."""
    _tolerate_undecodable_text()
    # The secrets every output must hide, read once here at the edge (core never reads the environment), before
    # anything can fail; the settings read in the root callback install the same set (app.apply_settings).
    install_redactor(Redactor.from_environ(os.environ))
    # REPOPILOT_DEBUG counts even when the settings cannot be read (a broken config file is what one debugs).
    _DEBUG[0] = bool(os.environ.get("REPOPILOT_DEBUG"))
    forget_settings()
    forget_runs()
    try:
        # Standalone mode lets typer print usage errors (exit 2); our own errors come through as exceptions.
        args = sys.argv[1:] if argv is None else argv
        with wait_spinner():
            _invoke(args)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if code == _TYPER_INTERRUPTED:
            return _interrupted()
        return code
    except KeyboardInterrupt:
        return _interrupted()
    except BrokenPipeError:  # a pipe that closed outside any command, e.g. while printing usage
        _silence_stdout()
        return EXIT["ok"]
    except RepoPilotError as exc:
        # An error can quote what a log or a server said, a token included.
        err.print(f"repopilot: {redact_text(str(exc))}", markup=False)
        return exit_code_for(exc)
    except Exception as exc:
        if _DEBUG[0]:
            import traceback  # only to debug an unexpected error

            traceback.print_exc()
        else:
            err.print(f"repopilot: internal error: {type(exc).__name__}: {exc} (rerun with --debug for the "
                      "traceback; please report it)", markup=False)
        return EXIT["bug"]
    return EXIT["ok"]


def _tolerate_undecodable_text() -> None:
    # A file name that is not UTF-8 reaches us as lone surrogates; printing one must not fail the command.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


# typer turns Ctrl-C inside a command into exit 130; so does the shell's convention for a SIGINT with no run.
_TYPER_INTERRUPTED = 130
_RESUMABLE = ("ask", "fix")


def _interrupted() -> int:
    """Ctrl-C: one line naming the run it stopped (exit 5), or, before any run started, a quiet exit 130."""
    run = last_run()
    if run is None:
        err.print("repopilot: interrupted", markup=False)
        return _TYPER_INTERRUPTED
    run_id, command = run
    if command in _RESUMABLE:
        err.print(f"interrupted; run {run_id} is recorded: `repopilot resume {run_id}` continues it", markup=False)
    else:
        err.print(f"interrupted; run {run_id} is recorded as interrupted", markup=False)
    return EXIT["interrupted"]


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    run()
