"""`repopilot diagnose [SOURCE]`: why did this CI run fail? Rules first; one model call only when they are unsure."""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import resources

import typer

from ..ci import DiagnosisReport, LogInput, diagnose_input, open_sources
from ..ci.excerpt import DEFAULT_TOKEN_BUDGET
from ..core import InputError, Model, TraceRecorder
from .console import err, shown, stderr_is_terminal
from .render import Format, renderer
from .session import reporting

__all__ = ["EXAMPLE_LOG", "diagnose", "register"]

EXAMPLE_LOG = "go-build-error.log"
_PROGRESS_BYTES = 20 * 1024 * 1024  # show a bar for logs at least this big, on a terminal


def _example() -> LogInput:
    data = (resources.files("repopilot.ci") / "examples" / EXAMPLE_LOG).read_bytes()  # small, bundled
    return LogInput(name=f"example: {EXAMPLE_LOG}", open=lambda: io.BytesIO(data), size=len(data),
                    source=f"example:{EXAMPLE_LOG}")


def _model(no_llm: bool) -> Model | None:
    if no_llm or not os.environ.get("REPOPILOT_MODEL"):
        return None
    from ..providers import resolve_model  # the HTTP client and the adapters: only when a model is configured

    return resolve_model()


@contextmanager
def _progress(log: LogInput) -> Iterator[Callable[[int], None] | None]:
    if not stderr_is_terminal() or (log.size or 0) < _PROGRESS_BYTES:
        yield None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TransferSpeedColumn

    with Progress("[progress.description]{task.description}", BarColumn(), DownloadColumn(),
                  TransferSpeedColumn(), console=err, transient=True) as bar:
        task = bar.add_task(f"scanning {shown(log.name, newlines=False)}", total=log.size)
        yield lambda done: bar.update(task, completed=done)


def diagnose(
    source: str | None = typer.Argument(None, help="A log file, '-' for stdin, a run-logs .zip, or a run URL. "
                                        "Without it, a bundled example log is diagnosed."),
    baseline: str | None = typer.Option(None, "--baseline", help="The passing log of the same job: lines it "
                                        "also has are not candidates."),
    fmt: Format = typer.Option(Format.text, "--format", "-f", help="Output format."),
    no_llm: bool = typer.Option(False, "--no-llm", help="Never call a model, even when the rules are unsure."),
    token_budget: int = typer.Option(DEFAULT_TOKEN_BUDGET, "--token-budget", min=100,
                                     help="Token budget of the excerpt."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Text format: every failure and all its lines."),
) -> None:
    """Diagnose a failing CI log: category, causal lines, hint. Exit 0 when a diagnosis was produced."""
    if source is None:
        err.print(f"repopilot: no SOURCE given; diagnosing the bundled example log {EXAMPLE_LOG} "
                  "(pass a log file, '-', a .zip or a run URL)", markup=False)
        inputs = [_example()]
    else:
        inputs = open_sources(source)
    base = None
    if baseline is not None:
        bases = open_sources(baseline)
        if len(bases) != 1:
            raise InputError(f"--baseline must name one log; {baseline} holds {len(bases)}")
        base = bases[0]
    model = _model(no_llm)
    rec = TraceRecorder.start("diagnose", f"diagnose {source or 'example:' + EXAMPLE_LOG}",
                              model=model.model if model else None,
                              provider=getattr(model, "provider", None) if model else None)
    reports: list[DiagnosisReport] = []
    with reporting(rec, model):
        try:
            for log in inputs:
                with _progress(log) as progress:
                    result = diagnose_input(log, baseline=base, model=model, recorder=rec,
                                            token_budget=token_budget, progress=progress)
                # `run_id` is the CI run (from a run URL); `trace_run_id` names this diagnosis's own trace.
                reports.append(result.report().model_copy(update={"trace_run_id": rec.trace.run_id}))
        except BaseException:
            rec.finish("failed")
            raise
        rec.trace.set_reports([r.contract() for r in reports])
        rec.finish("completed")
    typer.echo(renderer(fmt, verbose=verbose)(reports), nl=False)


def register(app: typer.Typer) -> None:
    app.command("diagnose")(diagnose)
