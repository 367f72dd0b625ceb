"""`repopilot runs list|show` and `repopilot trace export`: recorded runs, read by a person or sent to the
tools a team already uses. Tables on a terminal, plain columns when piped; `--json` for scripts."""

from __future__ import annotations

import json
import os
import re
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

import typer

from ..app import (
    budget_usage,
    export_run,
    format_duration,
    prune_runs,
    read_report,
    shorten,
    step_outcome,
    step_subject,
    timeline,
)
from ..core import ConfigError, InputError, RunTrace, Step, UsageError, list_traces, load_trace, redact, runs_dir
from ..core.sanitize import json_visible
from .console import diff_view, err, out, shown, stdout_is_terminal
from .context import settings_from
from .pager import paged
from .progress import spinner
from .summary import format_cost, summary_lines
from .table import Column, print_table

__all__ = ["register"]

LATEST = "latest"
_TYPE_STYLE = {"llm_call": "magenta", "tool_call": "blue", "tool_result": "cyan", "decision": "yellow",
               "error": "bold red", "approval": "green"}
_STATUS_STYLE = {"completed": "green", "approved": "green", "failed": "red", "rejected": "red"}


# -- shared helpers -------------------------------------------------------------------------------------------
_DB_HELP = ("Read the runs a RepoPilot service keeps in PostgreSQL (its REPOPILOT_DATABASE_URL) instead of the "
            "local trace files.")


def _service_runs(db: str, limit: int) -> list[RunTrace]:
    """The runs the service keeps in its database, for `--db` (it needs the `service` extra)."""
    try:
        from ..service import service_runs
    except ImportError:
        raise ConfigError("--db needs the service extra: pip install 'repopilot[service]'") from None
    return service_runs(db, limit)


def _service_run(db: str, run_id: str) -> RunTrace:
    try:
        from ..service import service_run
    except ImportError:
        raise ConfigError("--db needs the service extra: pip install 'repopilot[service]'") from None
    return service_run(db, run_id)


def _resolve(run_id: str, db: str | None = None) -> RunTrace:
    """The trace of `run_id`, or of the newest run for `latest`. Bad or unknown ids are InputErrors (exit 2)."""
    if db:
        return _service_run(db, run_id)
    if run_id == LATEST:
        newest = next(iter(list_traces()), None)
        if newest is None:
            raise InputError(_no_runs())
        return newest
    return load_trace(run_id)


def _no_runs() -> str:
    # Earlier versions recorded runs in `.runs/` of the directory they ran in; say where they are.
    legacy = Path(".runs")
    old = (f" (runs recorded by earlier versions are in ./{legacy}: REPOPILOT_RUNS_DIR={legacy} repopilot runs "
           "list)") if legacy.is_dir() and legacy.resolve() != runs_dir().resolve() else ""
    return f"no runs recorded in {runs_dir()}/ yet{old}"


def _status(status: str) -> str:
    """Statuses short enough for a table at 80 columns (the whole status is in `runs show`)."""
    return status.replace("budget_exhausted:", "budget:").replace("awaiting_approval", "awaiting")


def _tokens(trace: RunTrace) -> str:
    return f"{trace.totals.input_tokens}/{trace.totals.output_tokens}"


def _cost(trace: RunTrace) -> str:
    return format_cost(trace.totals.cost) if trace.totals.model_calls else "$0"


# -- runs list ------------------------------------------------------------------------------------------------
def runs_list(
    limit: int = typer.Option(20, "--limit", "-n", min=1, help="Show at most this many runs."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON array instead of a table."),
    db: str | None = typer.Option(None, "--db", metavar="URL", help=_DB_HELP),
) -> None:
    """List recorded runs, newest first."""
    with spinner("reading traces…"):
        traces: list[RunTrace] = []
        for trace in (_service_runs(db, limit) if db else list_traces()):
            traces.append(trace)
            if len(traces) >= limit:
                break
    if as_json:
        typer.echo(json_visible(json.dumps([redact({
            "run_id": t.run_id, "started_at": t.started_at, "finished_at": t.finished_at, "command": t.command,
            "goal": t.goal, "status": t.status, "model": t.model, "steps": t.totals.steps,
            "input_tokens": t.totals.input_tokens, "output_tokens": t.totals.output_tokens,
            "cost": t.totals.cost if t.totals.model_calls else 0.0, "duration_ms": t.totals.duration_ms,
        }) for t in traces], indent=1)))
        return
    if not traces:
        err.print("no runs recorded in the service database yet" if db else _no_runs(), markup=False)
        return
    rows, styles = [], []
    for t in traces:
        started = (t.started_at or "").replace("T", " ").rstrip("Z")[5:16]  # MM-DD HH:MM, the year is noise
        rows.append([t.run_id, started, t.command, shorten(redact(t.goal), 48), t.status, t.model or "-",
                     str(t.totals.steps), _tokens(t), _cost(t), format_duration(t.totals.duration_ms)])
        styles.append(["bold", "", "", "", _STATUS_STYLE.get(t.status, "yellow"), "", "", "", "", ""])
    print_table(_RUN_COLUMNS, rows, styles=styles)


# At 80 columns: id, command, goal and status; the run id already says when it started.
_RUN_COLUMNS = (Column("run id"), Column("started", drop=1), Column("command"), Column("goal", flexible=True),
                Column("status", cap=16, short=_status), Column("model", drop=3, cap=24),
                Column("steps", right=True, drop=4),
                Column("tokens", right=True, drop=6), Column("cost", right=True, drop=5),
                Column("duration", right=True, drop=2))
_STEP_COLUMNS = (Column("#", right=True), Column("start", right=True, drop=2), Column("type"),
                 Column("tool / model", cap=24), Column("took", right=True, drop=1),
                 Column("tokens", right=True, drop=3), Column("result or error", flexible=True))


# -- runs show ------------------------------------------------------------------------------------------------
def _step_row(step: Step, start_ms: float) -> list[str]:
    tokens = "" if step.input_tokens is None and step.output_tokens is None else \
        f"{step.input_tokens or 0}/{step.output_tokens or 0}"
    return [str(step.step_number), f"+{format_duration(start_ms)}", step.type, step_subject(step) or "-",
            format_duration(step.duration_ms) if step.duration_ms is not None else "", tokens,
            step_outcome(step, 90)]


def _print_section(title: str) -> None:
    _print_bold(f"\n{title}")


def _print_bold(text: str) -> None:
    if stdout_is_terminal():
        out.print(f"[bold]{shown(text, newlines=True)}[/bold]")
    else:
        out.print(text, markup=False)


def _show_diagnosis(trace: RunTrace) -> None:
    for diag in trace.reports():
        _show_report(diag)


def _show_report(recorded: Any) -> None:
    diag = read_report(recorded)
    if diag is None:
        _print_section("diagnosis")
        out.print("(recorded in a form this version cannot read)", markup=False)
        return
    _print_section("diagnosis" + (f" of {diag.source}" if diag.source else ""))
    out.print(f"category {diag.category} (decided by {diag.decided_by}, confidence {diag.confidence:.2f})",
              markup=False)
    if diag.model_note:
        out.print(f"model: {diag.model_note}", markup=False)
    for failure in diag.failures:
        where = failure.where()
        # A failure's own number is its rule's confidence; the diagnosis's confidence is the one above.
        out.print(f"- {failure.rule} ({failure.category}, rule confidence {failure.confidence:.2f})"
                  f"{' at ' + where if where else ''}: {failure.message} [fingerprint {failure.fingerprint}]",
                  markup=False)
        for line in failure.lines:
            out.print(f"  {str(line.line).rjust(6)} | {line.text}", markup=False)
        if failure.hint:
            out.print(f"  hint: {failure.hint}", markup=False)


def runs_show(
    run_id: str = typer.Argument(..., help="A run id from `repopilot runs list`, or `latest`."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole trace as JSON."),
    db: str | None = typer.Option(None, "--db", metavar="URL", help=_DB_HELP),
) -> None:
    """Show one run as a timeline: every step, its duration, tokens and outcome, then the totals."""
    trace = RunTrace.model_validate(redact(_resolve(run_id, db).model_dump(mode="json")))
    if as_json:
        typer.echo(json_visible(trace.model_dump_json(indent=1)))
        return
    with paged(settings_from().pager):
        _show_run(trace)


def _show_run(trace: RunTrace) -> None:
    head = f"run {trace.run_id} · {trace.command} · {trace.status}"
    _print_bold(head)
    out.print(f"goal: {trace.goal}", markup=False)
    placed = timeline(trace)
    if placed:
        _print_section("timeline")
        rows = [_step_row(p.step, p.start_ms) for p in placed]
        styles = [["", "", _TYPE_STYLE.get(p.step.type, ""), "", "", "", "red" if p.step.error else ""]
                  for p in placed]
        print_table(_STEP_COLUMNS, rows, styles=styles)
    else:
        out.print("(no steps recorded)", markup=False)
    decisions = [s for s in trace.steps if s.type in ("decision", "approval")]
    if decisions:
        _print_section("decisions and approvals")
        for s in decisions:
            out.print(f"- step {s.step_number} {s.type} {step_subject(s)}: {step_outcome(s, 200)}", markup=False)
    if trace.diagnosis:
        _show_diagnosis(trace)
    if trace.proposal:
        _print_section("proposed fix")
        out.print(str(trace.proposal.get("explanation") or ""), markup=False)
        out.print(f"sha256 {trace.proposal.get('sha256')}", markup=False)
        out.print(diff_view(str(trace.proposal.get("diff") or "")))
    if trace.answer:
        _print_section("answer")
        out.print(trace.answer, markup=False)
    _print_section("totals")
    lines = summary_lines(trace, runs_dir() / f"{trace.run_id}.json")
    if budget_usage(trace):
        lines.append(("budgets", budget_usage(trace)))
    width = max(len(k) for k, _ in lines)
    for key, value in lines:
        out.print(f"{key.rjust(width)}  {value}", markup=False)


# -- runs prune -----------------------------------------------------------------------------------------------
_UNITS = {"m": timedelta(minutes=1), "h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}


def _age(text: str) -> timedelta:
    match = re.fullmatch(r"(\d{1,5})([mhdw])", text.strip())
    if match is None:
        raise UsageError(f"--older-than {text!r}: give an age such as 30d, 12h, 2w or 90m")
    return int(match[1]) * _UNITS[match[2]]


def runs_prune(
    older_than: str | None = typer.Option(None, "--older-than", metavar="AGE",
                                          help="Delete runs started longer ago than AGE: 90m, 12h, 30d, 2w."),
    keep: int | None = typer.Option(None, "--keep", min=0, metavar="N", help="Keep only the newest N runs."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Say what would be deleted; delete nothing."),
) -> None:
    """Delete old recorded runs. Runs awaiting approval or in use are always kept."""
    done = prune_runs(older_than=_age(older_than) if older_than is not None else None, keep=keep,
                      dry_run=dry_run)
    verb = "would delete" if dry_run else "deleted"
    for trace in done.deleted:
        out.print(f"{verb} {trace.run_id}  {trace.command}  {trace.status}", markup=False)
    kept = f"; kept {done.kept_pending} awaiting approval or in use" if done.kept_pending else ""
    err.print(f"{verb} {len(done.deleted)} runs in {runs_dir()}/{kept}", markup=False)


# -- trace export ---------------------------------------------------------------------------------------------
def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        # mkstemp makes the file private; a page is meant to be shared, so give it the usual permissions.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def trace_export(
    run_id: str = typer.Argument(..., help="A run id from `repopilot runs list`, or `latest`."),
    html: str | None = typer.Option(None, "--html", metavar="FILE",
                                    help="Write a self-contained HTML page of the run (`-` for stdout)."),
    otlp: str | None = typer.Option(None, "--otlp", metavar="ENDPOINT",
                                    help="Send the run's spans over OTLP/HTTP, e.g. http://127.0.0.1:4318."),
    capture_content: bool = typer.Option(
        False, "--capture-content",
        help="Include messages and tool arguments/results in the spans (also set by "
             "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true)."),
) -> None:
    """Export a recorded run as an HTML page and/or OpenTelemetry spans."""
    if not html and not otlp:
        raise UsageError("say where to export: --html FILE and/or --otlp ENDPOINT")
    settings = settings_from()
    trace = _resolve(run_id)
    if html:
        from .trace_page import render_trace_page

        with spinner("rendering the page…"):
            page = render_trace_page(trace)
        if html == "-":
            typer.echo(page)
        else:
            target = Path(html)
            if target.is_dir():
                raise InputError(f"--html {html} is a directory; give a file name, e.g. {target / 'run.html'}")
            try:
                _write_atomically(target, page)
            except OSError as exc:
                raise InputError(f"cannot write {html}: {exc.strerror}") from None
            err.print(f"wrote {html} ({len(trace.steps)} steps)", markup=False)
    if otlp:
        with spinner(f"sending spans to {otlp}…"):
            sent = export_run(trace, otlp, settings, capture_content=capture_content)
        err.print(f"sent {sent} spans of run {trace.run_id} to {otlp}", markup=False)


def register(app: typer.Typer) -> None:
    runs_app = typer.Typer(help="Recorded runs: list them, show one as a timeline, prune old ones.",
                           no_args_is_help=True, rich_markup_mode=None)
    runs_app.command("list")(runs_list)
    runs_app.command("show")(runs_show)
    runs_app.command("prune")(runs_prune)
    app.add_typer(runs_app, name="runs")
    trace_app = typer.Typer(help="Export a recorded run: an HTML page, OpenTelemetry spans.", no_args_is_help=True,
                            rich_markup_mode=None)
    trace_app.command("export")(trace_export)
    app.add_typer(trace_app, name="trace")
