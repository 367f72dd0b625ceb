"""The one table of diagnosis output formats: `{format: render(reports) -> str}`. JSON, Markdown and GitHub
annotations are the domain's pure renderers; `text` is the terminal view, in rich markup rendered by the
console that prints it (colour only on a terminal)."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from functools import partial
from typing import TYPE_CHECKING

from ..app import (
    LINE_CHARS,
    RENDERERS,
    DiagnosisReport,
    Renderer,
    clip,
    cut_line,
    render_markdown,
    short_fingerprint,
    split_lines,
)
from .console import out
from .console import shown as _t  # untrusted text in markup: sanitised, then `[...]` escaped

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["FORMATS", "Format", "render_text", "renderer"]

_SHOW_LINES = 12
# The change's own failures stand out; the others are someone else's.
_LABEL_COLOUR = {"new": "red", "inherited": "cyan", "flaky": "yellow", "infra": "blue", "unknown": "white"}


class Format(StrEnum):
    text = "text"
    json = "json"
    markdown = "markdown"
    github = "github"


def _text_markup(report: DiagnosisReport, *, verbose: bool, line_chars: int | None) -> list[str]:
    cat = report.category
    colour = "green" if cat == "unknown" else "red"
    head = f"[bold]{_t(report.name())}[/bold]: [{colour} bold]{cat}[/{colour} bold] (decided by {report.decided_by}"
    failures = report.causal_failures()
    if failures and report.decided_by == "rules":
        head += f", rule {_t(failures[0].rule)}"
    # One confidence: the diagnosis's own (how sure the category is), the one that decided it.
    head += f", confidence {report.confidence:.2f}"
    lines = [head + ")"]
    step = report.failing_step
    if step is not None and step.name:
        lines.append(f"  failing step: {_t(clip(step.name, 100))} (line {step.line}, exit {step.exit_code})")
    if report.summary:
        lines.append(f"  model: {_t(report.summary, newlines=True)}")
    if report.model_note:
        lines.append(f"  [yellow]model:[/yellow] {_t(report.model_note, newlines=True)}")
    if not report.failures and not report.error_lines:
        lines.append("  no known error pattern matched; the excerpt below is the best guess")
    shown_failures = failures if verbose else failures[:5]
    hinted: set[str] = set()
    for f in shown_failures:
        where = f.where()
        title = f"  [bold]{_t(f.rule)}[/bold] ({f.category})"
        if where:
            title += f" [cyan]{_t(where)}[/cyan]"
        if f.test:
            title += f" test {_t(f.test)}"
        title += f" [dim]fp {short_fingerprint(f.fingerprint)}[/dim]"
        lines += [title, f"    {_t(clip(f.message, LINE_CHARS))}"]
        if f.attribution is not None:
            colour = _LABEL_COLOUR.get(f.attribution.label, "yellow")
            lines.append(f"    [{colour} bold]{f.attribution.headline()}[/{colour} bold]: {_t(f.attribution.why)}")
            lines += [f"      [dim]evidence:[/dim] {_t(link)}" for link in f.attribution.links()[:3]]
        if f.history is not None and f.history.text():
            lines.append(f"    [magenta]{_t(f.history.text())}[/magenta]")
        shown = f.lines if verbose else f.lines[:_SHOW_LINES]
        lines += [f"    [dim]{item.line:>7} │[/dim] {_t(cut_line(item.text, line_chars))}" for item in shown]
        if len(f.lines) > len(shown):
            lines.append(f"    [dim]        … {len(f.lines) - len(shown)} more lines[/dim]")
        if f.repeats > 1:
            lines.append(f"    [dim](seen {f.repeats} times)[/dim]")
        if f.hint and f.rule not in hinted:
            hinted.add(f.rule)
            lines.append(f"    [yellow]hint:[/yellow] {_t(f.hint, newlines=True)}")
    if len(failures) > len(shown_failures):
        lines.append(f"  … {len(failures) - len(shown_failures)} more failures (--format json for all)")
    if not failures:
        lines.append("[dim]excerpt:[/dim]")
        lines += [f"  {_t(line)}" for line in split_lines(report.excerpt.text)[1:40]]
    if report.hint and report.decided_by == "llm":
        lines.append(f"  [yellow]hint:[/yellow] {_t(report.hint, newlines=True)}")
    if report.error_lines:
        lines.append(f"  [dim]{len(report.error_lines)} causal lines; excerpt {report.excerpt.tokens} tokens[/dim]")
    return lines


def render_text(reports: Sequence[DiagnosisReport], *, verbose: bool = False, console: Console | None = None,
                line_chars: int | None = LINE_CHARS) -> str:
    """The terminal view of the reports, with colour when `console` (default: stdout's) is a terminal; causal
    lines longer than `line_chars` are cut and marked (None: whole)."""
    console = console or out
    with console.capture() as captured:
        for report in reports:
            for line in _text_markup(report, verbose=verbose, line_chars=line_chars):
                console.print(line)
    return captured.get()


FORMATS: dict[Format, Renderer] = {Format.text: render_text, **{Format(k): v for k, v in RENDERERS.items()}}


def renderer(fmt: Format, *, verbose: bool = False, full_lines: bool = False) -> Renderer:
    """The renderer of `fmt`; `full_lines` shows long causal lines whole in text and Markdown."""
    chars = None if full_lines else LINE_CHARS
    if fmt is Format.text:
        return partial(render_text, verbose=verbose, line_chars=chars)
    if fmt is Format.markdown:
        return partial(render_markdown, line_chars=chars)
    return FORMATS[fmt]
